"""Nsight Compute's own rule results of one report action (`IAction.rule_results_as_dicts()`, ncu-report 2023+),
kept in NCU's words as the launch table's `ncu_rules` column: a JSON list, one object per finding, ordered by
NCU's estimated speedup (largest first):

    {"rule": "CPIStall", "section": "WarpStateStats", "title": "Drain Stalls", "message": "On average, ...",
     "type": 2, "speedup_pct": 44.0, "speedup_type": 2}

`type` is NCU's message type, `speedup_pct` the estimated reduction of the launch's time in % NCU attaches (null
where it gives none), `speedup_type` NCU's kind of estimate (local to the unit or global), as stored. Findings
without a message are left out; an action or wheel without rule results gives null (never an empty claim)."""

from __future__ import annotations

import json


def rule_results(action) -> str | None:
    """The action's rule results as the `ncu_rules` JSON text, or None where the report (or wheel) holds none."""
    reader = getattr(action, "rule_results_as_dicts", None)
    if reader is None:
        return None
    try:
        results = reader()
    except Exception:  # noqa: BLE001  (a wheel that cannot evaluate them: no findings, the metrics still load)
        return None
    findings = [f for f in (_finding(r) for r in results or ()) if f is not None]
    if not findings:
        return None
    findings.sort(key=lambda f: -(f["speedup_pct"] if f["speedup_pct"] is not None else -1.0))
    return json.dumps(findings, ensure_ascii=False)


def _finding(result: dict) -> dict | None:
    message = result.get("rule_message")
    if not isinstance(message, dict) or not str(message.get("message", "")).strip():
        return None
    speedup = result.get("speedup_estimation")
    value = speedup.get("speedup") if isinstance(speedup, dict) else None
    return {"rule": str(result.get("rule_identifier", "")), "section": str(result.get("section_identifier", "")),
            "title": str(message.get("title", "")), "message": str(message["message"]),
            "type": message.get("type"), "speedup_pct": float(value) if isinstance(value, (int, float)) else None,
            "speedup_type": speedup.get("type") if isinstance(speedup, dict) else None}
