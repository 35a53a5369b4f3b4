"""Everything `compare -o DIR` writes: `compare.parquet`, `compare.json`, then the before → after chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .chart import ChartContext
from .compare_chart import compare_chart, write_compare_chart
from .compare_json import comparison_json
from .files import prepare_outdir, write_atomic
from .parquet import parquet_bytes


def write_comparison(outdir: Path, *, kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any],
                     base_kernels: pd.DataFrame, head_kernels: pd.DataFrame, ctx: ChartContext,
                     inputs: list[Path]) -> list[Path]:
    """Write the comparison's files into `outdir` and return their paths, in the order written.

    `info` is `Comparison.info()`; `ctx.inputs` names the two runs; `inputs` are never written over.
    """
    prepare_outdir(outdir, inputs)
    written = [
        write_atomic(outdir / "compare.parquet", parquet_bytes(kernels, info["metadata"]), inputs=inputs),
        write_atomic(outdir / "compare.json", comparison_json(kernels, totals, info).encode(), inputs=inputs),
    ]
    chart = compare_chart(kernels, base_kernels=base_kernels, head_kernels=head_kernels, ctx=ctx)
    return written + write_compare_chart(chart, outdir)
