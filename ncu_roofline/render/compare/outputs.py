"""Everything `compare -o DIR` writes: `compare.parquet`, `compare.json`, then the before → after chart, staged as
one set (render/output_set.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ...core.parquet import parquet_bytes
from ..analysis.chart import ChartContext
from ..bundle import OutputSet, prepare_outdir
from ..chart_files import chart_payloads
from .chart import CHART_STEM, compare_chart
from .json_summary import comparison_json

OUTPUT_NAMES = ("compare.parquet", "compare.json", "compare.vl.json", "compare.html")


def write_comparison(outdir: Path, *, kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any],
                     base_kernels: pd.DataFrame, head_kernels: pd.DataFrame, ctx: ChartContext,
                     inputs: list[Path], formats: Iterable[str] = ()) -> list[Path]:
    """Write the comparison's files into `outdir` and return their paths, in the order written.

    `info` is `Comparison.info()`; `ctx.inputs` names the two runs; `inputs` are never written over.
    """
    with OutputSet(inputs) as outputs:
        stage_comparison(outdir, outputs, kernels=kernels, totals=totals, info=info, base_kernels=base_kernels,
                         head_kernels=head_kernels, ctx=ctx, inputs=inputs, formats=formats)
        return outputs.commit()


def stage_comparison(outdir: Path, outputs: OutputSet, *, kernels: pd.DataFrame, totals: pd.DataFrame,
                     info: dict[str, Any], base_kernels: pd.DataFrame, head_kernels: pd.DataFrame, ctx: ChartContext,
                     inputs: list[Path], formats: Iterable[str] = ()) -> None:
    """Render the comparison's files, then stage them in `outputs` (nothing is in place before its commit)."""
    payloads = {"compare.parquet": parquet_bytes(kernels, info["metadata"]),
                "compare.json": comparison_json(kernels, totals, info).encode()}
    spec = compare_chart(kernels, base_kernels=base_kernels, head_kernels=head_kernels, ctx=ctx)
    chart_formats = ("vl.json", "html", *(f for f in formats if f not in ("vl.json", "html")))
    payloads.update(chart_payloads(spec, chart_formats, stem=CHART_STEM))
    prepare_outdir(outdir, inputs)
    for name, payload in payloads.items():
        outputs.stage(outdir / name, payload)
