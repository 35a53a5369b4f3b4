"""The comparison as JSON (schema in docs/json-schema.md): what a bot or a later CI step reads instead of parsing
the Markdown. Deterministic: sorted keys, rows in the comparison's order, floats as Python writes them."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from ..text.json_values import JSON_SCHEMA_VERSION, clean, gate_record, records
from .markdown import compared_labels

COMPARE_KIND = "comparison"


def comparison_payload(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *,
                       top: int | None = None) -> dict[str, Any]:
    """The JSON document as Python data; `top` keeps only the first rows (largest changes).

    `info` is `Comparison.info()`: labels, both runs' metadata, options, warnings, gates, passed, counts.
    """
    shown = kernels if top is None else kernels.head(top)
    base_label, head_label = info["labels"]
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": COMPARE_KIND,
        "base": {"label": base_label, "metadata": info["base_metadata"]},
        "head": {"label": head_label, "metadata": info["head_metadata"]},
        "options": info["options"],
        "warnings": list(info["warnings"]),
        "capture_settings": info.get("capture_settings", {}),  # clock/cache control per run, 'unknown' unrecorded
        "passed": info["passed"],
        "counts": info["counts"],
        "totals": {metric: {k: clean(v) for k, v in row.items()}
                   for metric, row in totals.to_dict(orient="index").items()},
        "gates": [gate_record(result) for result in info["gates"]],
        "kernels": [{**entry, "kernel_label": label}  # the name the terminal, Markdown and chart print
                    for entry, label in zip(records(shown, tuple(shown.columns)), compared_labels(kernels))],
    }


def comparison_json(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *,
                    top: int | None = None) -> str:
    payload = comparison_payload(kernels, totals, info, top=top)
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"
