"""Everything `compare -o DIR` writes: `compare.parquet`, `compare.json`, then the before → after chart, staged as
one set (render/output_set.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .files import prepare_outdir
from .output_set import OutputSet
from .parquet import parquet_bytes

if TYPE_CHECKING:
    from ..compare import Comparison

OUTPUT_NAMES = ("compare.parquet", "compare.json", "compare.vl.json", "compare.html")


def write_comparison(comparison: "Comparison", outdir: Path, *, top: int = 20) -> list[Path]:
    """Write the comparison's files into `outdir` and return their paths, in the order written."""
    inputs = [Path(f.path) for f in (*comparison.base.inputs, *comparison.head.inputs)]
    with OutputSet(inputs) as outputs:
        stage_comparison(comparison, outdir, outputs, top=top)
        return outputs.commit()


def stage_comparison(comparison: "Comparison", outdir: Path, outputs: OutputSet, *, top: int = 20) -> None:
    from .chart import ChartContext, chart_payloads
    from .compare_chart import CHART_STEM, compare_chart
    from .compare_json import comparison_json

    payloads = {"compare.parquet": parquet_bytes(comparison.kernels, comparison.metadata()),
                "compare.json": comparison_json(comparison).encode()}
    head_ctx = comparison.head.chart_context(top)
    ctx = ChartContext(gpu=head_ctx.gpu, ceiling_source=head_ctx.ceiling_source, clock=head_ctx.clock,
                       inputs=[Path(label).name or label for label in comparison.labels], top=top)
    chart = compare_chart(comparison.kernels, base_kernels=comparison.base.kernels,
                          head_kernels=comparison.head.kernels, ctx=ctx)
    payloads.update(chart_payloads(chart, ("vl.json", "html"), stem=CHART_STEM))
    prepare_outdir(outdir, [Path(f.path) for f in (*comparison.base.inputs, *comparison.head.inputs)])
    for name, payload in payloads.items():
        outputs.stage(outdir / name, payload)
