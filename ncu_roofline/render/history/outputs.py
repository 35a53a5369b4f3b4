"""Everything `history -o DIR` writes: `history.parquet` (the series, one row per kernel and run),
`history.json`, then the trend chart (`history.vl.json`, `history.html`, and svg/png on request), staged as one set
(render/output_set.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ...core.parquet import parquet_bytes
from ...pipeline.gates import GateResult
from ..bundle import OutputSet, prepare_outdir

CHART_FORMATS = ("svg", "png")


def write_history(outdir: Path, *, runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame,
                  gates: list[GateResult], metadata: dict[str, str], formats: Iterable[str] = (), top: int = 10,
                  window: int = 10, band_name: str = "mad") -> list[Path]:
    from ...core.errors import InputError
    from ..chart_files import chart_payloads
    from .chart import CHART_STEM, history_chart
    from .json_summary import history_json

    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in CHART_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from svg, png")
    spec = history_chart(summary, series, runs, top=top, window=window, band_name=band_name)
    payloads = {"history.parquet": parquet_bytes(series, metadata),
                "history.json": history_json(runs, summary, series, gates, metadata=metadata).encode(),
                **chart_payloads(spec, ["vl.json", "html", *extra], stem=CHART_STEM)}
    prepare_outdir(outdir, [])
    with OutputSet() as outputs:
        for name, payload in payloads.items():
            outputs.stage(outdir / name, payload)
        return outputs.commit()
