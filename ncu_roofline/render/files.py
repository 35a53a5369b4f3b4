"""Writing artifacts safely: to a temporary name beside the target, then an atomic rename.

An interrupted run leaves no half-written Parquet or HTML, and an input file is never overwritten.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from ..errors import InputError
from .output_set import refuse_non_regular_target, refuse_special_folder


# What `analyze -o DIR`, `compare -o DIR` and `model -o DIR` may write into DIR (render/outputs.py,
# render/compare_outputs.py, render/model_outputs.py): an
# input of one of these names there is refused before anything is written.
OUTPUT_NAMES = ("launches.parquet", "kernels.parquet", "roofline.vl.json", "roofline.html", "roofline.svg",
                "roofline.png", "compare.parquet", "compare.json", "compare.vl.json", "compare.html",
                "model.parquet", "model.vl.json", "model.html", "model.svg", "model.png")


def prepare_outdir(outdir: Path, inputs: list[Path]) -> Path:
    """Create `outdir` or fail with one line; refuse an output folder that is an input file, or one where an output
    would replace an input (checked before anything is written, so a refused run changes nothing)."""
    refuse_special_folder(outdir)
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        if outdir.exists() and not outdir.is_dir():
            raise InputError(outdir, "the output path exists and is not a folder") from None
        raise InputError(outdir, "cannot create the output folder: part of the path is a file, not a folder") \
            from None
    except OSError as exc:
        raise InputError(outdir, f"cannot create the output folder: {exc.strerror or exc}") from None
    if not os.access(outdir, os.W_OK | os.X_OK):
        raise InputError(outdir, "the output folder is not writable")
    resolved = {Path(p).resolve() for p in inputs}
    for name in OUTPUT_NAMES:
        if (outdir / name).resolve() in resolved:
            raise InputError(outdir / name, f"refusing to write {name} over an input file of the same name; "
                                            "choose another -o folder")
    return outdir


def write_atomic(path: Path, payload: bytes, *, inputs: list[Path] = (),
                 before_replace: Callable[[Path], None] | None = None) -> Path:
    """Write `payload` to `path` via a temporary file and os.replace; never over an input file.

    The temporary file is hidden (`.NAME.<random>.tmp`), so globs for NAME's pattern never see it; `before_replace`
    (given the temporary path) runs between the write and the rename (a test hook for killed writers)."""
    resolved = path.resolve()
    if any(resolved == Path(p).resolve() for p in inputs):
        raise InputError(path, "refusing to overwrite an input file with an output")
    refuse_non_regular_target(path)  # never rename over /dev/stdout, a link or a pipe
    try:
        handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
        if before_replace is not None:
            before_replace(Path(tmp))
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
