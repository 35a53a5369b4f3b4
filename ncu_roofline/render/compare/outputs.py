"""Everything `compare -o DIR` writes, as one bundle (render/bundle.py): `compare.parquet`, `compare.json`, then
the before → after chart."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.parquet import parquet_bytes
from ..chart.context import ChartContext
from ..bundle import Bundle
from ..chart.chart_files import chart_payloads
from .chart import CHART_STEM, compare_chart
from ..outputs import chart_set, names
from .json_summary import comparison_json

OUTPUT_NAMES = names("compare")


def comparison_bundle(*, kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any],
                      base_kernels: pd.DataFrame, head_kernels: pd.DataFrame, ctx: ChartContext,
                      formats: tuple[str, ...] = ()) -> Bundle:
    """The comparison's files; `info` is `Comparison.info()`, `ctx.inputs` names the two runs."""
    files = {"compare.parquet": parquet_bytes(kernels, info["metadata"]),
             "compare.json": comparison_json(kernels, totals, info).encode()}
    spec = compare_chart(kernels, base_kernels=base_kernels, head_kernels=head_kernels, ctx=ctx)
    files.update(chart_payloads(spec, chart_set("compare", formats), stem=CHART_STEM))
    return Bundle(files, names=OUTPUT_NAMES)
