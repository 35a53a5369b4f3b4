"""Everything `project ... -o DIR` writes, as one bundle (render/bundle.py): `projection.parquet` (every kernel
group on every target) and the chart files (`projection.*`)."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...core.parquet import parquet_bytes
from ..bundle import Bundle
from ..outputs import chart_set, names

OUTPUT_NAMES = names("projection")


def projection_bundle(kernels: pd.DataFrame, measured: pd.DataFrame, source_gpu: str,
                      source_peaks: Mapping[str, float], peaks_by_gpu: Mapping[str, Mapping[str, float]], *,
                      metadata: dict[str, str], formats: tuple[str, ...] = (), top: int = 20) -> Bundle:
    from ..chart.chart_files import chart_payloads
    from .chart import projection_chart

    charts = chart_set("projection", formats)
    spec = projection_chart(kernels, measured, source_gpu, source_peaks, peaks_by_gpu, top=top)
    files = {"projection.parquet": parquet_bytes(kernels, metadata), **chart_payloads(spec, charts, stem="projection")}
    return Bundle(files, names=OUTPUT_NAMES)
