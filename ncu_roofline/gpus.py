"""The built-in GPU ceiling table as `ncu-roofline ceilings` shows it: the façade of that command (list, show,
template, compare), so the command parses, calls one function here and prints.

The work is in `roofs/gpu_table.py` (the table, matching a name, describing a row), `pipeline/evaluate.py` (a
report's own peaks for a template) and `model/compare_gpus.py` (roofs and ridge points side by side).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import pandas as pd


def gpu_rows() -> list[dict]:
    """Every GPU of the table, one row each (name, aliases, compute capability, roofs)."""
    from .roofs.gpu_table import list_gpus, load_gpu_table

    return list_gpus(load_gpu_table())


def describe(name: str) -> dict:
    """One GPU's roofs and how each was derived, its sources and caveats (a name or alias of the table)."""
    from .roofs.gpu_table import describe_gpu, match_gpu

    return describe_gpu(match_gpu(name))


def template(name: str, source: str | Path | None = None) -> str:
    """A `--ceilings` TOML file for a GPU the table lacks, to fill in; prefilled from a report's own peaks."""
    from .pipeline.evaluate import report_peaks
    from .render.ceilings.template import ceilings_template_text

    peaks, origin = report_peaks(source) if source else ({}, None)
    return ceilings_template_text(name, peaks, origin)


@dataclass(frozen=True)
class GpuRoofs:
    """Several GPUs' roofs and ridge points side by side (model/compare_gpus.py): one row per roof or ridge."""

    frame: pd.DataFrame

    def json(self) -> str:
        from .render.model.json_summary import compare_json

        return compare_json(self.frame)


def compare_gpus(names: Iterable[str]) -> GpuRoofs:
    """`ceilings compare`: the table's GPUs named (names or aliases), their roofs and ridge points."""
    from .model.compare_gpus import compare_roofs
    from .model.place import gpu_roofs

    return GpuRoofs(compare_roofs(gpu_roofs(list(names))))
