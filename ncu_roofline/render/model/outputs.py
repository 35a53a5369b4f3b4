"""Everything `model ... -o DIR` writes, as one bundle (render/bundle.py): `model.parquet` (the placed points) and
the chart files (`model.*`)."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...core.parquet import parquet_bytes
from ..bundle import Bundle
from ..outputs import chart_set, names

OUTPUT_NAMES = names("model")


def model_bundle(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]], *,
                 metadata: dict[str, str], formats: tuple[str, ...] = (), title: str = "Analytic roofline") -> Bundle:
    from ..chart.chart_files import chart_payloads
    from .chart import model_chart

    charts = chart_set("model", formats)
    spec = model_chart(points, peaks_by_gpu, title=title,
                       subtitle=[f"Roofs: {', '.join(metadata.get('ncu_roofline.roofs', '').split(';'))}"])
    files = {"model.parquet": parquet_bytes(points, metadata), **chart_payloads(spec, charts, stem="model")}
    return Bundle(files, names=OUTPUT_NAMES)
