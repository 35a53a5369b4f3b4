"""JSON of a projection: `{"kernels": [{"kernel_name", "target", "t_sol_s", ...}], "runs": [{"target", ...}]}`
(docs/json-schema.md); deterministic for the same inputs."""

from __future__ import annotations

import json

import pandas as pd

from ...core.vocabulary import APP_TIME, PROJECTION_COLUMNS, PROJECTION_RUN_COLUMNS
from ..text.json_values import JSON_SCHEMA_VERSION, records

KERNEL_FIELDS = ("rank", "kernel_name", "grid", "block", "device_name", "launches", *PROJECTION_COLUMNS, APP_TIME)


def projection_json(kernels: pd.DataFrame, runs: pd.DataFrame, metadata: dict[str, str], *,
                    top: int | None = None) -> str:
    """Every target's run, then the first `top` kernel groups (rank order) on every target."""
    shown = kernels
    if top is not None:
        ranks = list(dict.fromkeys(kernels["rank"]))[:top]
        shown = kernels[kernels["rank"].isin(ranks)]
    payload = {"schema_version": JSON_SCHEMA_VERSION, "kind": "projection", "metadata": metadata,
               "runs": records(runs, PROJECTION_RUN_COLUMNS), "kernels": records(shown, KERNEL_FIELDS)}
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"
