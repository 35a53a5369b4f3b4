"""JSON-safe values every JSON summary shares (analysis, compare, history, model): the schema version, the one
cleaner for NaN/inf/numpy values (`clean`, core/values.py's `plain_value`), records of chosen fields."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.values import plain_value as clean
from ...pipeline.gates import GateResult

JSON_SCHEMA_VERSION = 1


def records(frame: pd.DataFrame, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    present = [f for f in fields if f in frame.columns]
    return [{f: clean(v) for f, v in zip(present, row)} for row in frame[present].itertuples(index=False)]


def gate_record(result: GateResult, *, must_judge: bool = True) -> dict[str, Any]:
    """One gate's outcome. `must_judge`: a gate that judged nothing did not pass (compare); history gates over a
    single run judge nothing by design and pass."""
    gate = result.gate
    return {
        "expression": gate.text, "scope": gate.scope, "metric": gate.metric, "op": gate.op,
        "threshold": gate.threshold, "relative": gate.relative, "unit": gate.unit,
        "passed": result.passed and (result.judged or not must_judge),
        "checked": result.checked, "skipped": result.skipped,
        "failures": [{k: clean(v) for k, v in failure.items()} for failure in result.failures],
    }
