"""Everything `analyze -o DIR` writes, in one place: Parquet tables, then the chart files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .files import prepare_outdir, write_atomic
from .parquet import parquet_bytes

if TYPE_CHECKING:
    from ..analysis import Analysis

CHART_FORMATS = ("vl.json", "html", "svg", "png")
EXTRA_FORMATS = ("svg", "png")  # what --format may ask for; vl.json and html are always written


def write_outputs(analysis: "Analysis", outdir: Path, *, formats: Iterable[str] = (), top: int = 20) -> list[Path]:
    """`launches.parquet`, `kernels.parquet`, `roofline.vl.json`, `roofline.html`, and any extra chart formats."""
    from .chart import roofline_chart, write_chart

    inputs = [Path(f.path) for f in analysis.inputs]
    prepare_outdir(outdir, inputs)
    metadata = analysis.metadata()
    written = [
        write_atomic(outdir / "launches.parquet", parquet_bytes(analysis.launches, metadata), inputs=inputs),
        write_atomic(outdir / "kernels.parquet", parquet_bytes(analysis.kernels, metadata), inputs=inputs),
    ]
    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in CHART_FORMATS]
    if unknown:
        from ..errors import InputError

        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from svg, png")
    chart = roofline_chart(analysis.kernels, analysis.chart_context(top))
    written += write_chart(chart, outdir, ["vl.json", "html", *extra])
    return written
