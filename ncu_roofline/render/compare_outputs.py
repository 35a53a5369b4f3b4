"""Everything `compare -o DIR` writes: `compare.parquet`, `compare.json`, then the before → after chart."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .files import prepare_outdir, write_atomic
from .parquet import parquet_bytes

if TYPE_CHECKING:
    from ..compare import Comparison


def write_comparison(comparison: "Comparison", outdir: Path, *, top: int = 20) -> list[Path]:
    """Write the comparison's files into `outdir` and return their paths, in the order written."""
    from .chart import ChartContext
    from .compare_chart import compare_chart, write_compare_chart
    from .compare_json import comparison_json

    inputs = [Path(f.path) for f in (*comparison.base.inputs, *comparison.head.inputs)]
    prepare_outdir(outdir, inputs)
    written = [
        write_atomic(outdir / "compare.parquet", parquet_bytes(comparison.kernels, comparison.metadata()),
                     inputs=inputs),
        write_atomic(outdir / "compare.json", comparison_json(comparison).encode(), inputs=inputs),
    ]
    head_ctx = comparison.head.chart_context(top)
    ctx = ChartContext(gpu=head_ctx.gpu, ceiling_source=head_ctx.ceiling_source, clock=head_ctx.clock,
                       inputs=[Path(label).name or label for label in comparison.labels], top=top)
    chart = compare_chart(comparison.kernels, base_kernels=comparison.base.kernels,
                          head_kernels=comparison.head.kernels, ctx=ctx)
    return written + write_compare_chart(chart, outdir)
