"""The comparison as JSON (schema in docs/json-schema.md): what a bot or a later CI step reads instead of parsing
the Markdown. Deterministic: sorted keys, rows in the comparison's order, floats as Python writes them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .jsonout import JSON_SCHEMA_VERSION, clean, records

if TYPE_CHECKING:
    from ..compare import Comparison
    from ..gates import GateResult

COMPARE_KIND = "comparison"


def comparison_payload(comparison: "Comparison", *, top: int | None = None) -> dict[str, Any]:
    """The JSON document as Python data; `top` keeps only the first rows (largest changes)."""
    kernels = comparison.kernels if top is None else comparison.kernels.head(top)
    base_label, head_label = comparison.labels
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": COMPARE_KIND,
        "base": {"label": base_label, "metadata": comparison.base.metadata()},
        "head": {"label": head_label, "metadata": comparison.head.metadata()},
        "options": comparison.options,
        "warnings": list(comparison.warnings),
        "passed": comparison.passed,
        "counts": comparison.counts(),
        "totals": {metric: {k: clean(v) for k, v in row.items()}
                   for metric, row in comparison.totals.to_dict(orient="index").items()},
        "gates": [gate_record(result) for result in comparison.gates],
        "kernels": records(kernels, tuple(kernels.columns)),
    }


def gate_record(result: "GateResult") -> dict[str, Any]:
    gate = result.gate
    return {
        "expression": gate.text, "scope": gate.scope, "metric": gate.metric, "op": gate.op,
        "threshold": gate.threshold, "relative": gate.relative, "passed": result.passed,
        "checked": result.checked, "skipped": result.skipped,
        "failures": [{k: clean(v) for k, v in failure.items()} for failure in result.failures],
    }


def comparison_json(comparison: "Comparison", *, top: int | None = None) -> str:
    return json.dumps(comparison_payload(comparison, top=top), indent=1, sort_keys=True, allow_nan=False) + "\n"
