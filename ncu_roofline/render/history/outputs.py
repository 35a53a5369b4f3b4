"""Everything `history -o DIR` writes, as one bundle (render/bundle.py): `history.parquet` (the series, one row
per kernel and run), `history.json`, then the trend chart (`history.vl.json`, `history.html`, svg/png on request)."""

from __future__ import annotations

import pandas as pd

from ...core.parquet import parquet_bytes
from ...pipeline.gates import GateResult
from ..bundle import Bundle
from ..outputs import chart_set, names


def history_bundle(*, runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame, gates: list[GateResult],
                   metadata: dict[str, str], formats: tuple[str, ...] = (), top: int = 10, window: int = 10,
                   band_name: str = "mad", label_key: str | None = None) -> Bundle:
    from ..chart.chart_files import chart_payloads
    from .chart import CHART_STEM, history_chart
    from .json_summary import history_json

    charts = chart_set("history", formats)
    spec = history_chart(summary, series, runs, top=top, window=window, band_name=band_name, gates=gates,
                         label_key=label_key)
    files = {"history.parquet": parquet_bytes(series, metadata),
             "history.json": history_json(runs, summary, series, gates, metadata=metadata).encode(),
             **chart_payloads(spec, charts, stem=CHART_STEM)}
    return Bundle(files, names=names("history"))
