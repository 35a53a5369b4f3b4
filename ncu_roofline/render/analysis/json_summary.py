"""JSON summaries with a documented schema (docs/json-schema.md); deterministic for the same inputs."""

from __future__ import annotations

import json

import pandas as pd

from ...core.vocabulary import AI_COLUMNS, APP_COLUMNS, LIMITER_COLUMNS, SOL_COMPLETE
from ...pipeline.totals import run_totals
from ..text.json_values import JSON_SCHEMA_VERSION, clean, records

KERNEL_FIELDS = ("rank", "kernel_name", "grid", "block", "device_name", "launches", "time_s", "time_share",
                 "flop_total", "flop_per_s", *AI_COLUMNS, "bound", "roofline_fraction", "t_sol_s",
                 "headroom_s", SOL_COMPLETE, "ceiling_source", "status", *LIMITER_COLUMNS,
                 # present with `analyze --points` only
                 "model_flop", "model_bytes", "model_ai", "flop_over_model", "dram_bytes_over_model", "model_points",
                 # present with `analyze --nsys` only
                 *APP_COLUMNS)

MODEL_POINT_FIELDS = ("name", "flop", "bytes", "ai", "kernel", "roof", "attainable_flop_per_s", "t_min_s", "ridge_ai",
                      "bound", "status", "matched_kernels")


# The run totals an analysis summary carries (docs/json-schema.md).
TOTAL_FIELDS = ("kernels", "launches", "time_s", "time_s_known", "kernels_unknown_time", "headroom_s",
                "headroom_s_known", "kernels_unknown_headroom", "headroom_s_upper_bound_only", "kernels_upper_bound",
                "unknown_reasons")


def _labelled(entries: list[dict], kernels: pd.DataFrame) -> list[dict]:
    """Each entry with `kernel_label`, the one short name the terminal, the Markdown and the chart print."""
    from ...core.kernel_labels import table_labels

    return [{**entry, "kernel_label": label} for entry, label in zip(entries, table_labels(kernels))]


def analysis_json(kernels: pd.DataFrame, launches: pd.DataFrame, metadata: dict[str, str], *,
                  top: int | None = None, model_points: pd.DataFrame | None = None, app: dict | None = None) -> str:
    """The analysis summary: run notes, totals over all kernels (null where any kernel's value is unknown, with
    the count and the reasons), then the first `top` ranked kernels."""
    shown = kernels if top is None else kernels.head(top)
    summed = run_totals(kernels, launches)
    totals = {k: summed[k] if k == "unknown_reasons" else clean(summed[k]) for k in TOTAL_FIELDS}
    payload = {
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": "analysis",
        "metadata": metadata,
        "notes": json.loads(metadata.get("ncu_roofline.notes", "[]")),
        "totals": totals,
        "kernels": _labelled(records(shown, KERNEL_FIELDS), kernels),
    }
    if model_points is not None:  # `analyze --points`: the points on the run's roofs
        payload["model_points"] = records(model_points, MODEL_POINT_FIELDS)
    if app is not None:  # `analyze --nsys`: the run's GPU time, the share profiled, the largest unprofiled kernels
        payload["timeline"] = {k: clean(v) if not isinstance(v, list) else v for k, v in app.items()}
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"
