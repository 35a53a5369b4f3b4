"""JSON summaries with a documented schema (docs/json-schema.md); deterministic for the same inputs."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from ..analysis import Analysis

JSON_SCHEMA_VERSION = 1
KERNEL_FIELDS = ("rank", "kernel_name", "grid", "block", "device_name", "launches", "time_s", "time_share",
                 "flop_total", "flop_per_s", "ai_dram", "ai_l2", "ai_l1", "bound", "roofline_fraction", "t_sol_s",
                 "headroom_s", "ceiling_source", "status")


def clean(value: Any) -> Any:
    """JSON-safe scalars: NaN/NA -> null, numpy -> Python."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    present = [f for f in fields if f in frame.columns]
    return [{f: clean(v) for f, v in zip(present, row)} for row in frame[present].itertuples(index=False)]


def analysis_json(analysis: "Analysis", *, top: int | None = None) -> str:
    from ..totals import run_totals

    kernels = analysis.kernels if top is None else analysis.kernels.head(top)
    totals = {k: clean(v) if not isinstance(v, list) else v
              for k, v in run_totals(analysis.kernels, analysis.launches).items()}
    payload = {
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": "analysis",
        "metadata": analysis.metadata(),
        "notes": list(analysis.notes),
        "totals": totals,
        "kernels": records(kernels, KERNEL_FIELDS),
    }
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"
