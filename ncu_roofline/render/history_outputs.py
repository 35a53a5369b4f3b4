"""Everything `history -o DIR` writes: `history.parquet` (the series, one row per kernel and run),
`history.json`, then the trend chart (`history.vl.json`, `history.html`, and svg/png on request)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ..gates import GateResult
from .files import prepare_outdir, write_atomic
from .parquet import parquet_bytes

CHART_FORMATS = ("svg", "png")


def write_history(outdir: Path, *, runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame,
                  gates: list[GateResult], metadata: dict[str, str], formats: Iterable[str] = (), top: int = 10,
                  window: int = 10, band_name: str = "minmax") -> list[Path]:
    from ..errors import InputError
    from .history_chart import history_chart, write_history_chart
    from .history_json import history_json

    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in CHART_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from svg, png")
    prepare_outdir(outdir, [])
    written = [
        write_atomic(outdir / "history.parquet", parquet_bytes(series, metadata)),
        write_atomic(outdir / "history.json", history_json(runs, summary, series, gates, metadata=metadata)
                     .encode()),
    ]
    spec = history_chart(summary, series, runs, top=top, window=window, band_name=band_name)
    return written + write_history_chart(spec, outdir, extra)
