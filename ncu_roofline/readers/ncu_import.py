"""Reports without NVIDIA's `ncu-report` wheel: `ncu --import FILE --csv --page raw` and the CSV reader."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

import pandas as pd

from ..core.errors import InputError

MISSING_WHEEL = ("reading .ncu-rep files needs NVIDIA's ncu-report package: "
                 "pip install 'ncu-roofline[ncu-rep]' (or put ncu on PATH)")
NCU_IMPORT_TIMEOUT_S = 1800


def read_with_ncu_import(path: Path, wanted: Callable[[str], bool] | None) -> pd.DataFrame:
    """The report as `ncu --import` exports it (raw page, base units), read by the CSV reader."""
    ncu = shutil.which("ncu")
    if ncu is None:
        raise InputError(path, MISSING_WHEEL)
    from .csv_export import read_csv_export

    with tempfile.TemporaryDirectory(prefix="ncu-roofline-") as tmp:
        export = Path(tmp) / "export.csv"
        try:
            with open(export, "wb") as out:
                proc = subprocess.run([ncu, "--import", str(path), "--csv", "--page", "raw",
                                       "--print-units", "base"], stdout=out, stderr=subprocess.PIPE,
                                      timeout=NCU_IMPORT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise InputError(path, f"ncu --import took longer than {NCU_IMPORT_TIMEOUT_S} s") from None
        except OSError as exc:
            raise InputError(path, f"could not run ncu --import: {exc.strerror or exc}") from None
        if proc.returncode != 0:
            lines = proc.stderr.decode(errors="replace").strip().splitlines()
            raise InputError(path, f"ncu --import failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
        try:
            params = inspect.signature(read_csv_export).parameters
            table = read_csv_export(export, wanted=wanted) if "wanted" in params else read_csv_export(export)
        except InputError as exc:
            raise InputError(path, f"ncu --import output: {exc.message}") from None
    table["source_file"] = pd.Series([str(path)] * len(table), index=table.index, dtype="string")
    return table


# ---------------------------------------------------------------------------------------------------------------
# Sections
