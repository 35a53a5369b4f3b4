"""Everything `analyze -o DIR` writes, in one place: Parquet tables, then the chart files, staged as one set
(render/output_set.py) so that a reader sees the previous run's files or this run's, never a mix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .files import prepare_outdir
from .output_set import OutputSet
from .parquet import parquet_bytes

if TYPE_CHECKING:
    from ..analysis import Analysis

CHART_FORMATS = ("vl.json", "html", "svg", "png")
EXTRA_FORMATS = ("svg", "png")  # what --format may ask for; vl.json and html are always written
OUTPUT_NAMES = ("launches.parquet", "kernels.parquet", *(f"roofline.{fmt}" for fmt in CHART_FORMATS))


def write_outputs(analysis: "Analysis", outdir: Path, *, formats: Iterable[str] = (), top: int = 20) -> list[Path]:
    """`launches.parquet`, `kernels.parquet`, `roofline.vl.json`, `roofline.html`, and any extra chart formats."""
    with OutputSet([Path(f.path) for f in analysis.inputs]) as outputs:
        stage_outputs(analysis, outdir, outputs, formats=formats, top=top)
        return outputs.commit()


def stage_outputs(analysis: "Analysis", outdir: Path, outputs: OutputSet, *, formats: Iterable[str] = (),
                  top: int = 20) -> None:
    """Render every file first (a failing chart export writes nothing), then stage them in `outputs`; a file of
    an earlier run that this one does not write (`roofline.png` without --format png) goes at commit."""
    from ..errors import InputError
    from .chart import chart_payloads, roofline_chart

    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in EXTRA_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from {', '.join(EXTRA_FORMATS)}")
    metadata = analysis.metadata()
    payloads = {"launches.parquet": parquet_bytes(analysis.launches, metadata),
                "kernels.parquet": parquet_bytes(analysis.kernels, metadata)}
    chart = roofline_chart(analysis.kernels, analysis.chart_context(top))
    payloads.update(chart_payloads(chart, ["vl.json", "html", *extra]))
    prepare_outdir(outdir, [Path(f.path) for f in analysis.inputs])
    for name, payload in payloads.items():
        outputs.stage(outdir / name, payload)
    outputs.replace_stale(outdir / name for name in OUTPUT_NAMES if (outdir / name).exists())
