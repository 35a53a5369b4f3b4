"""Everything `analyze -o DIR` writes, in one place: Parquet tables, then the chart files."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ..errors import InputError
from .chart import ChartContext, roofline_chart, write_chart
from .files import prepare_outdir, write_atomic
from .parquet import parquet_bytes

CHART_FORMATS = ("vl.json", "html", "svg", "png")


def write_outputs(outdir: Path, *, launches: pd.DataFrame, kernels: pd.DataFrame, metadata: dict[str, str],
                  ctx: ChartContext, inputs: list[Path], formats: Iterable[str] = (),
                  model_points: pd.DataFrame | None = None, model_pairs: pd.DataFrame | None = None) -> list[Path]:
    """`launches.parquet`, `kernels.parquet`, `roofline.vl.json`, `roofline.html`, and any extra chart formats.

    `inputs` are never written over; `metadata` goes into every file that can carry it.
    """
    prepare_outdir(outdir, inputs)
    written = [
        write_atomic(outdir / "launches.parquet", parquet_bytes(launches, metadata), inputs=inputs),
        write_atomic(outdir / "kernels.parquet", parquet_bytes(kernels, metadata), inputs=inputs),
    ]
    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in CHART_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from svg, png")
    chart = roofline_chart(kernels, ctx, model_points=model_points, model_pairs=model_pairs)
    written += write_chart(chart, outdir, ["vl.json", "html", *extra])
    return written
