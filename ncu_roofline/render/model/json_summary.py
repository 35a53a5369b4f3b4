"""JSON of analytic points: `{"points": [{"name", "gpu", "flop", "bytes", "ai", ...}]}` (docs/json-schema.md)."""

from __future__ import annotations

import json

import pandas as pd

from ...core.vocabulary import PEAK_OFF_CHIP, bytes_column, flop_column
from ..text.json_values import JSON_SCHEMA_VERSION, records

POINT_FIELDS = ("name", "gpu", "flop", "bytes", "ai", "roof", "peak_flop_per_s", PEAK_OFF_CHIP,
                "attainable_flop_per_s", "t_min_s", "ridge_ai", "bound", "status", "kernel", "formula")


def model_json(points: pd.DataFrame, metadata: dict[str, object]) -> str:
    """Deterministic JSON for `model ... --json`: the placed points, plus any byte/FLOP parts of the workloads."""
    parts = tuple(c for c in points.columns if c.startswith((bytes_column(""), flop_column(""))))
    payload = {"schema_version": JSON_SCHEMA_VERSION, "kind": "model", "metadata": metadata,
               "points": records(points, POINT_FIELDS + parts)}
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"


def compare_json(compare: pd.DataFrame) -> str:
    """`ceilings compare --json`: {"gpus": [{"name", "peaks": {...}, "ridge_ai": {"tensor_fp16/dram": ...}}]}."""
    gpus = []
    roofs, ridges = compare[compare["kind"] != "ridge"], compare[compare["kind"] == "ridge"]
    for gpu in [c for c in compare.columns if c not in ("key", "kind", "label")]:
        gpus.append({
            "name": gpu,
            "peaks": {k: v for k, v in zip(roofs["key"], roofs[gpu]) if pd.notna(v)},
            "ridge_ai": {k: v for k, v in zip(ridges["key"], ridges[gpu]) if pd.notna(v)},
        })
    return json.dumps({"schema_version": JSON_SCHEMA_VERSION, "kind": "ceilings_compare", "gpus": gpus},
                      indent=1, sort_keys=True, allow_nan=False) + "\n"
