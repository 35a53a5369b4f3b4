"""The history as JSON: runs, per-kernel summary with its series, and gate results. Deterministic for the same
dataset (run times are the dataset's own)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from ...core.vocabulary import AI_COLUMNS, SOL_COMPLETE
from ...pipeline.gates import GateResult
from ..text.json_values import JSON_SCHEMA_VERSION, clean, gate_record, records
from .console import summary_labels

HISTORY_KIND = "history"
SERIES_FIELDS = ("run_id", "time_s", "roofline_fraction", "headroom_s", "bound", *AI_COLUMNS, "flop_per_s",
                 "launches", SOL_COMPLETE)


def history_payload(runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame, gates: list[GateResult], *,
                    metadata: dict[str, str], top: int | None = None) -> dict[str, Any]:
    shown = summary if top is None else summary.head(top)
    by_series = {sid: rows for sid, rows in series.groupby("series_id", sort=False)}
    kernels = []
    labels = summary_labels(summary)  # the name the terminal and history.html print
    for record, sid, label in zip(records(shown, tuple(c for c in shown.columns if c != "series_id")),
                                  shown["series_id"], labels):
        record["kernel_label"] = label
        record["series"] = records(by_series[sid], SERIES_FIELDS) if sid in by_series else []
        kernels.append(record)
    run_rows = runs.assign(run_time=runs["run_time"].map(lambda t: None if pd.isna(t) else
                                                         pd.Timestamp(t).isoformat()))
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": HISTORY_KIND,
        "metadata": metadata,
        "passed": all(r.passed for r in gates),
        "runs": records(run_rows, ("run_id", "run_time", "labels", "gpu")),
        "gates": [gate_record(result, must_judge=False) for result in gates],
        "kernels": kernels,
    }


def history_json(*args, **kwargs) -> str:
    return json.dumps(history_payload(*args, **kwargs), indent=1, sort_keys=True, allow_nan=False,
                      default=clean) + "\n"


def frame_json(frame: pd.DataFrame) -> str:
    """Any result table (`--sql --json`) as a list of records."""
    return json.dumps(records(frame, tuple(frame.columns)), indent=1, allow_nan=False, default=str) + "\n"
