"""The comparison as Markdown for `$GITHUB_STEP_SUMMARY` and pull-request comments.

Read top down by a reviewer: the outcome of the gates first, the totals base → head, what is not like for like,
then the kernels that moved most, then what appeared or disappeared. Same helpers and look as the analyze summary.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...compare.changes import COMPARED_PER_LAUNCH
from ...core.kernel_names import short_kernel_name
from ...pipeline.gates import GateResult
from ..text.numbers import cell as _cell
from ..text.numbers import format_si as fmt_si
from ..text.numbers import pct as _pct
from ..text.numbers import signed_pct
from ..text.safe_text import for_markdown_code, for_terminal
from ..text.changes import (
    change_text,
    gate_outcome,
    kernel_label,
    launch_shape,
    short_dims,
    signed_points,
    signed_si,
    signed_value,
)

VERDICT_MARKS = {"regression": "🔴 regression", "improvement": "🟢 improvement", "neutral": "⚪ neutral",
                 "added": "🆕 added", "removed": "➖ removed"}
# (total metric, label, unit): how each headline total is written; None means a fraction shown in percent.
_TOTAL_ROWS = (("time_s", "GPU time", "s"), ("headroom_s", "headroom (recoverable)", "s"),
               ("flop_total", "FLOPs", "FLOP"), ("flop_per_s", "FLOP/s", "FLOP/s"),
               ("roofline_fraction", "of roof (Σt_sol / Σtime)", None), ("kernels", "kernels", ""),
               ("launches", "launches", ""))


def comparison_markdown(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *, top: int = 10) -> str:
    """The comparison summary; `info` is `Comparison.info()` (labels, options, warnings, gates, counts...)."""
    base_label, head_label = info["labels"]
    lines = ["## ncu-roofline compare", "", _headline(totals, info), "",
             f"Base: {for_markdown_code(base_label)} → head: {for_markdown_code(head_label)}. "
             f"Ceilings: {for_terminal(', '.join(info['ceiling_sources']) or 'none')}. "
             f"Min time: {fmt_si(float(info['options'].get('min_time_s', 0)), 's')}.",
             "", "| total | base | head | change |", "|---|---:|---:|---:|"]
    for metric, label, unit in _TOTAL_ROWS:
        row = totals.loc[metric]
        if unit is None:
            cells = (_pct(row["base"]), _pct(row["head"]), signed_points(row["change"]))
        elif metric in ("kernels", "launches"):
            cells = (f"{row['base']:.0f}", f"{row['head']:.0f}", f"{row['change']:+.0f}")
        else:
            cells = (fmt_si(row["base"], unit), fmt_si(row["head"], unit),
                     f"{signed_si(row['change'], unit)} ({signed_pct(row['change_pct'])})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    if info["warnings"]:
        lines += ["", "### ⚠️ Not like for like", ""] + [f"- {_cell(for_terminal(w))}" for w in info["warnings"]]
    lines += _gate_section(info["gates"])
    per_launch = per_launch_sentence(kernels)
    if per_launch:
        lines += ["", per_launch]
    lines += _kernel_section(kernels, top)
    lines += _added_removed_section(kernels)
    return "\n".join(lines) + "\n"


def _headline(totals: pd.DataFrame, info: dict[str, Any]) -> str:
    counts = info["counts"]
    tally = ", ".join(f"{counts[v]} {v}" for v in ("regression", "improvement", "neutral", "added", "removed")
                      if counts[v])
    gates = info["gates"]
    if not gates:
        outcome = "No gates set"
    elif info["passed"]:
        outcome = f"✅ **All {len(gates)} gates passed**"
    else:
        failed = sum(not (r.passed and r.judged) for r in gates)
        outcome = f"❌ **{failed} of {len(gates)} gates failed**"
    time = totals.loc["time_s"]
    return (f"{outcome}. GPU time {fmt_si(time['base'], 's')} → {fmt_si(time['head'], 's')} "
            f"({signed_pct(time['change_pct'])}). Kernels: {tally or 'none'}.")


def _gate_section(gates: list[GateResult]) -> list[str]:
    if not gates:
        return []
    lines = ["", "### Gates", "", "| gate | scope | result | checked | failing |", "|---|---|---|---:|---|"]
    for result in gates:
        gate = result.gate
        failing = []
        for failure in result.failures[:5]:
            value = signed_pct(failure["change_pct"]) if gate.relative else signed_value(gate.metric,
                                                                                          failure["change"])
            where = "total" if gate.scope == "total" else kernel_label(failure["kernel_name"], failure["grid"],
                                                                        failure["block"])
            failing.append(f"{where} {value}")
        if len(result.failures) > 5:
            failing.append(f"and {len(result.failures) - 5} more")
        lines.append(f"| {for_markdown_code(gate.text, table_cell=True)} | "
                     f"{'per kernel' if gate.scope == 'kernel' else 'totals'} | "
                     f"{gate_outcome(result)} | {result.checked} | {'; '.join(failing) or '—'} |")
    return lines


def _kernel_section(kernels: pd.DataFrame, top: int) -> list[str]:
    matched = kernels[kernels["match"].notna()].head(top)
    if not len(matched):
        return []
    lines = ["", f"### Top {len(matched)} kernels by time change", "", *_compact_kernels(matched), "",
             "<details>", "<summary>Every column (time change in seconds, FLOP/s, bound, match)</summary>", "",
             "| kernel | verdict | time base → head | change | FLOP/s change | of roof base → head | bound | match |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for row in matched.itertuples(index=False):
        shape = launch_shape(row.grid_head, row.block_head)
        if row.match == "name_only":
            shape = f"{launch_shape(row.grid_base, row.block_base)} → {shape}"
        bound = change_text(row.bound_base, row.bound_head)
        verdict = VERDICT_MARKS.get(str(row.verdict), str(row.verdict))
        if row.gates_failed:
            verdict += f" (fails {for_markdown_code(row.gates_failed, table_cell=True)})"
        lines.append(
            f"| {for_markdown_code(short_kernel_name(str(row.kernel_name)), table_cell=True)} "
            f"{_cell(for_terminal(shape))} | {verdict} | "
            f"{fmt_si(row.time_s_base, 's')} → {fmt_si(row.time_s_head, 's')} | "
            f"{signed_si(row.time_s_change, 's')} ({signed_pct(row.time_s_change_pct)}) | "
            f"{signed_pct(row.flop_per_s_change_pct)} | {_pct(row.roofline_fraction_base)} → "
            f"{_pct(row.roofline_fraction_head)} | {_cell(bound)} | {_cell(match_text(row))} |")
    return [*lines, "", "</details>"]


def _compact_kernels(matched: pd.DataFrame) -> list[str]:
    """What fits GitHub's ~1,000 px column: the verdict, Δ time %, Δ of roof and the times; a name repeated in the
    table (other launch shapes) carries its short shape ('64×128'), and only there."""
    from ...core.kernel_labels import distinct_labels

    names = distinct_labels([str(n) for n in matched["kernel_name"]],
                            [short_dims(g) for g in matched["grid_head"]],
                            [short_dims(b) for b in matched["block_head"]], 36)
    lines = ["| # | kernel | verdict | Δ time | Δ of roof | time base → head |", "|---:|---|---|---:|---:|---:|"]
    for rank, (row, name) in enumerate(zip(matched.itertuples(index=False), names), start=1):
        verdict = VERDICT_MARKS.get(str(row.verdict), str(row.verdict)) + (" ✗ gate" if row.gates_failed else "")
        lines.append(f"| {rank} | {for_markdown_code(name, table_cell=True)} | {verdict} | "
                     f"{signed_pct(row.time_s_change_pct)} | {signed_points(row.roofline_fraction_change)} | "
                     f"{fmt_si(row.time_s_base, 's')} → {fmt_si(row.time_s_head, 's')} |")
    return lines


def match_text(row: Any) -> str:
    """The match kind, and where the launch counts differ how the kernel was compared:
    'exact; launches 6 → 10, compared per launch' (or '..., compared in total' under `compare --totals`)."""
    match = "—" if pd.isna(row.match) else str(row.match)
    before, after = getattr(row, "launches_base", None), getattr(row, "launches_head", None)
    if pd.isna(row.match) or pd.isna(before) or pd.isna(after) or before == after:
        return match
    compared = getattr(row, "compared", None)
    how = "per launch" if not pd.isna(compared) and compared == COMPARED_PER_LAUNCH else "in total"
    return f"{match}; launches {before} → {after}, compared {how}"


def per_launch_sentence(kernels: pd.DataFrame) -> str:
    """'Launch counts differ for 1 kernel: its time, FLOPs and headroom are compared per launch (...)', or ''."""
    if "compared" not in kernels:
        return ""
    count = int((kernels["compared"] == COMPARED_PER_LAUNCH).sum())
    if not count:
        return ""
    noun = "1 kernel: its" if count == 1 else f"{count} kernels: their"
    return (f"Launch counts differ for {noun} time, FLOPs, speed of light and headroom are compared and gated per "
            "launch (`--totals` judges summed time).")


def _added_removed_section(kernels: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    for verdict, side in (("added", "head"), ("removed", "base")):
        rows = kernels[kernels["verdict"] == verdict]
        if not len(rows):
            continue
        lines += ["", f"### {verdict.capitalize()} ({len(rows)})", ""]
        for row in rows.itertuples(index=False):
            lines.append(f"- {kernel_label(row.kernel_name, getattr(row, f'grid_{side}'), getattr(row, f'block_{side}'))}"
                         f": {fmt_si(getattr(row, f'time_s_{side}'), 's')}, "
                         f"launches: {getattr(row, f'launches_{side}')}")
    return lines
