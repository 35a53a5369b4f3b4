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
from ..text.numbers import cell as _cell
from ..text.numbers import format_si as fmt_si
from ..text.numbers import incomplete, lower_bound, unproven, upper_bound
from ..text.numbers import pct as _pct
from ..text.numbers import signed_pct
from ..text.safe_text import for_markdown_code, for_terminal

VERDICT_MARKS = {"regression": "🔴 regression", "improvement": "🟢 improvement", "neutral": "⚪ neutral",
                 "added": "🆕 added", "removed": "➖ removed"}
# (total metric, label, unit): how each headline total is written; None means a fraction shown in percent.
_TOTAL_ROWS = (("time_s", "GPU time", "s"), ("headroom_s", "headroom (recoverable)", "s"),
               ("flop_total", "FLOPs", "FLOP"), ("flop_per_s", "FLOP/s", "FLOP/s"),
               ("roofline_fraction", "of roof (Σt_sol / Σtime)", None), ("kernels", "kernels", ""),
               ("launches", "launches", ""))


_BOUNDED_TOTALS = {"headroom_s": upper_bound, "roofline_fraction": lower_bound}


def _bounded_total(cells: tuple[str, ...], metric: str, partial: pd.Series) -> tuple[str, ...]:
    """A run's headroom total '≤ …' and its fraction '≥ …' where some of its kernels' speed of light lacks terms;
    the change between such totals is unproven ('?')."""
    mark = _BOUNDED_TOTALS[metric]
    base, head = (mark(text, not value) for text, value in zip(cells[:2], (partial["base"], partial["head"])))
    change = cells[2] + ("?" if (partial["base"] or partial["head"]) and cells[2] != "—" else "")
    return base, head, change


def capture_text(settings: dict) -> str:
    """'clock control base → base, cache control all → none' ('unknown' where a run does not record it)."""
    parts = [f"{name.replace('_', ' ')} {sides['base']}"
             + ("" if sides["base"] == sides["head"] else f" → {sides['head']}") for name, sides in settings.items()]
    return ", ".join(parts) or "unknown"


def compared_labels(kernels: pd.DataFrame, max_len: int | None = None) -> pd.Series:
    """The one label of each compared kernel (core.kernel_labels), over the whole comparison so the terminal, the
    Markdown and compare.html print the same name; a removed kernel is told apart by its base shape."""
    from ...core.kernel_labels import LABEL_LEN, display_name, kernel_labels

    sides = ["base" if str(v) == "removed" else "head" for v in kernels["verdict"]]
    grids = [short_dims(kernels[f"grid_{s}"].iat[i]) for i, s in enumerate(sides)]
    blocks = [short_dims(kernels[f"block_{s}"].iat[i]) for i, s in enumerate(sides)]
    return pd.Series(kernel_labels([display_name(str(n)) for n in kernels["kernel_name"]], grids, blocks,
                                   max_len or LABEL_LEN),
                     index=kernels.index, dtype=object)


def labels_by_identity(kernels: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """(kernel_name, grid, block) -> `compared_labels`' name, for the gate failures (which carry the head's
    shape) to name a kernel as the tables do."""
    labels = compared_labels(kernels)
    return {(str(name), str(grid), str(block)): labels[index]
            for index, name, grid, block in zip(kernels.index, kernels["kernel_name"], kernels["grid_head"],
                                                kernels["block_head"])}


def failure_label(failure: dict, labels: dict | None) -> str | None:
    """The tables' name of a failing kernel, None where `labels` does not know it."""
    key = (str(failure.get("kernel_name")), str(failure.get("grid")), str(failure.get("block")))
    return (labels or {}).get(key)


def comparison_markdown(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *, top: int = 10,
                        chart: str | None = None) -> str:
    """The comparison summary; `info` is `Comparison.info()` (labels, options, warnings, gates, counts...).
    `chart`: the chart's address (`--chart-url`, or a path relative to the summary), shown right under the gates,
    inline when it is an image."""
    base_label, head_label = info["labels"]
    lines = ["## ncu-roofline compare", "", _headline(totals, info), "",
             f"Base: {for_markdown_code(base_label)} → head: {for_markdown_code(head_label)}. "
             f"Ceilings: {for_terminal(', '.join(info['ceiling_sources']) or 'none')}. "
             f"Min time: {fmt_si(float(info['options'].get('min_time_s', 0)), 's')}. "
             f"Capture: {capture_text(info.get('capture_settings', {}))}.",
             "", "| total | base | head | change |", "|---|---:|---:|---:|"]
    partial = totals.loc["kernels_upper_bound"] if "kernels_upper_bound" in totals.index else None
    for metric, label, unit in _TOTAL_ROWS:
        row = totals.loc[metric]
        if unit is None:
            cells = (_pct(row["base"]), _pct(row["head"]), signed_points(row["change"]))
        elif metric in ("kernels", "launches"):
            cells = (f"{row['base']:.0f}", f"{row['head']:.0f}", f"{row['change']:+.0f}")
        else:
            cells = (fmt_si(row["base"], unit), fmt_si(row["head"], unit),
                     f"{signed_si(row['change'], unit)} ({signed_pct(row['change_pct'])})")
        if partial is not None and metric in _BOUNDED_TOTALS:
            cells = _bounded_total(cells, metric, partial)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    if info["warnings"]:
        lines += ["", "### ⚠️ Not like for like", ""] + [f"- {_cell(for_terminal(w))}" for w in info["warnings"]]
    lines += _gate_section(info["gates"], labels_by_identity(kernels))
    if chart and chart.startswith(("http://", "https://")):
        image = chart.lower().split("?", 1)[0].endswith((".png", ".svg"))
        lines += ["", f"![before → after roofline]({chart})" if image else f"Chart: [{chart}]({chart})"]
    per_launch = per_launch_sentence(kernels)
    if per_launch:
        lines += ["", per_launch]
    app = app_lines(kernels, totals, top=top)  # --nsys on both sides
    if app:
        lines += ["", for_terminal(app[0]) + ("; app time by kernel:" if app[1:] else
                                              "."), ""] + [f"- {for_terminal(line.strip().split('  ', 1)[1])}" for line in app[1:]]
    lines += _kernel_section(kernels, top)
    if not (chart and chart.startswith(("http://", "https://"))):  # a local path: a broken link in a step summary
        lines += _chart_table(kernels, top, chart)
    lines += _added_removed_section(kernels)
    return "\n".join(lines) + "\n"


def app_lines(kernels: pd.DataFrame, totals: pd.DataFrame, *, top: int = 10) -> list[str]:
    """The run's GPU time over both timelines and each listed kernel's app time, base → head, numbered as the table:
    the profiled launches alone can say "+0.0%" of a run whose kernels went from 25.8 s to 1.26 s."""
    if "app_gpu_time_s" not in totals.index:
        return []
    run = totals.loc["app_gpu_time_s"]
    lines = [f"Over the whole run (Nsight Systems): GPU time {fmt_si(run['base'], 's')} → {fmt_si(run['head'], 's')} "
             f"({signed_pct(run['change_pct'])})"]
    if "app_time_s_change" not in kernels:
        return lines
    for rank, row in enumerate(kernels.head(top).itertuples(index=False), start=1):
        before, after = row.app_time_s_base, row.app_time_s_head
        if pd.isna(before) and pd.isna(after):
            continue
        lines.append(f"  {rank}  {short_kernel_name(str(row.kernel_name))}: app time {fmt_si(before, 's')} → "
                     f"{fmt_si(after, 's')} "
                     f"({signed_pct(row.app_time_s_change_pct)}), app headroom {fmt_si(row.app_headroom_s_base, 's')}"
                     f" → {fmt_si(row.app_headroom_s_head, 's')}")
    return lines


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


def _gate_section(gates: list[GateResult], labels: dict | None = None) -> list[str]:
    if not gates:
        return []
    lines = ["", "### Gates", "", "| gate | scope | result | checked | failing |", "|---|---|---|---:|---|"]
    for result in gates:
        gate = result.gate
        failing = []
        for failure in result.failures[:5]:
            value = signed_pct(failure["change_pct"]) if gate.relative else signed_value(gate.metric,
                                                                                          failure["change"])
            known = failure_label(failure, labels)  # the tables' name, else the name and its shape
            where = "total" if gate.scope == "total" else for_markdown_code(known, table_cell=True) if known \
                else kernel_label(failure["kernel_name"], failure["grid"], failure["block"])
            failing.append(f"{where} {value}")
        if len(result.failures) > 5:
            failing.append(f"and {len(result.failures) - 5} more")
        lines.append(f"| {for_markdown_code(gate.text, table_cell=True)} | "
                     f"{'per kernel' if gate.scope == 'kernel' else 'totals'} | "
                     f"{gate_outcome(result)} | {result.checked} | {'; '.join(failing) or '—'} |")
    return lines


def _kernel_section(kernels: pd.DataFrame, top: int) -> list[str]:
    labels = compared_labels(kernels)
    matched = kernels[kernels["match"].notna()]
    failed = matched["gates_failed"].fillna("").astype(str) != ""
    matched = pd.concat([matched[failed], matched[~failed]]).head(top)  # what failed the job first
    if not len(matched):
        return []
    lines = ["", f"### Top {len(matched)} kernels by time change", "",
             *_compact_kernels(matched, labels.loc[matched.index].tolist()), "",
             "<details>", "<summary>Every column (time change in seconds, FLOP/s, bound, match)</summary>", "",
             "| kernel | verdict | time base → head | change | FLOP/s change | of roof base → head | bound | match |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for row in matched.itertuples(index=False):
        shape = launch_shape(row.grid_head, row.block_head)
        if row.match == "name_only":
            shape = f"{launch_shape(row.grid_base, row.block_base)} → {shape}"
        bound = bound_text(row)
        verdict = VERDICT_MARKS.get(str(row.verdict), str(row.verdict))
        if row.gates_failed:
            verdict += f" (fails {for_markdown_code(row.gates_failed, table_cell=True)})"
        lines.append(
            f"| {for_markdown_code(short_kernel_name(str(row.kernel_name)), table_cell=True)} "
            f"{_cell(for_terminal(shape))} | {verdict} | "
            f"{fmt_si(row.time_s_base, 's')} → {fmt_si(row.time_s_head, 's')} | "
            f"{signed_si(row.time_s_change, 's')} ({signed_pct(row.time_s_change_pct)}) | "
            f"{signed_pct(row.flop_per_s_change_pct)} | {fraction_text(row, 'base')} → "
            f"{fraction_text(row, 'head')} | {_cell(bound)} | {_cell(match_text(row))} |")
    legend = partial_legend(matched)
    return [*lines, "", "</details>", *(["", legend] if legend else [])]


def _chart_table(kernels: pd.DataFrame, top: int, chart: str | None) -> list[str]:
    """What compare.html draws, for a summary without its image: each kernel's move on the roofline (intensity
    at DRAM and FLOP/s, base → head), the gate's failures first; `chart`, a local file, named as text."""
    labels = compared_labels(kernels)
    failed = kernels["gates_failed"].fillna("").astype(str) != ""
    shown = pd.concat([kernels[failed], kernels[~failed]]).head(top)
    if not len(shown):
        return []
    body = ["| # | kernel | verdict | AI DRAM base → head | FLOP/s base → head | of roof base → head |",
            "|---:|---|---|---:|---:|---:|"]
    for rank, (index, row) in enumerate(shown.iterrows(), start=1):
        verdict = VERDICT_MARKS.get(str(row["verdict"]), str(row["verdict"])) + (" ✗ gate" if failed[index] else "")
        body.append(f"| {rank} | {for_markdown_code(labels[index], table_cell=True)} | {verdict} | "
                    f"{_number(row['ai_dram_base'])} → {_number(row['ai_dram_head'])} | "
                    f"{fmt_si(row['flop_per_s_base'], 'FLOP/s')} → {fmt_si(row['flop_per_s_head'], 'FLOP/s')} | "
                    f"{fraction_text(row, 'base')} → {fraction_text(row, 'head')} |")
    if chart:
        body += ["", f"The chart itself: {for_markdown_code(chart)} beside this summary (upload it as an artifact "
                     "and pass its address as `--chart-url`)."]
    return ["", "<details>", f"<summary>Roofline chart as a table (top {len(shown)}; `--chart-url` links the image)"
            "</summary>", "", *body, "", "</details>"]


def _number(value: object) -> str:
    from ..text.numbers import format_number

    return format_number(value)


def _compact_kernels(matched: pd.DataFrame, names: list[str]) -> list[str]:
    """What fits GitHub's ~1,000 px column: the verdict, Δ time %, Δ of roof and the times; a name repeated in the
    table (other launch shapes) carries its short shape ('64×128'), and only there."""
    lines = ["| # | kernel | verdict | Δ time | Δ of roof | time base → head |", "|---:|---|---|---:|---:|---:|"]
    for rank, (row, name) in enumerate(zip(matched.itertuples(index=False), names), start=1):
        verdict = VERDICT_MARKS.get(str(row.verdict), str(row.verdict)) + (" ✗ gate" if row.gates_failed else "")
        lines.append(f"| {rank} | {for_markdown_code(name, table_cell=True)} | {verdict} | "
                     f"{signed_pct(row.time_s_change_pct)} | {points_change_text(row)} | "
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


def side_complete(row: Any, side: str) -> object:
    """A side's `sol_complete` (None where the table predates the column: read as complete)."""
    return getattr(row, f"sol_complete_{side}", None)


def fraction_text(row: Any, side: str) -> str:
    """One side's roofline fraction, '≥ 32.5%' where that side's speed of light lacks terms (as analyze prints)."""
    return lower_bound(_pct(getattr(row, f"roofline_fraction_{side}")), side_complete(row, side))


def points_change_text(row: Any) -> str:
    """Δ of roof in points, '-3.0 pt?' where either side's fraction is only a lower bound (the change is unproven)."""
    text = signed_points(row.roofline_fraction_change)
    either = incomplete(side_complete(row, "base")) or incomplete(side_complete(row, "head"))
    return text + "?" if either and text != "—" else text


def partial_legend(kernels: pd.DataFrame) -> str:
    """What `≥` and `?` mean, where a listed kernel's speed of light lacks terms on either side; else ''."""
    sides = [kernels[c] for c in ("sol_complete_base", "sol_complete_head") if c in kernels]
    if not any(incomplete(v) for side in sides for v in side.tolist()):
        return ""
    return ("≥ of roof, bound?, Δ of roof?: that run's speed of light lacks terms that were not counted, so its "
            "roofline fraction is a lower bound and its bound unproven (see status)")


def bound_text(row: Any) -> str:
    """'dram', 'l2? → dram': each side's bound, unproven ('?') where its speed of light lacks terms; an added or
    removed kernel shows its one side."""
    sides = {side: "—" if pd.isna(getattr(row, f"bound_{side}")) else
             unproven(str(getattr(row, f"bound_{side}")), side_complete(row, side)) for side in ("base", "head")}
    if row.verdict in ("added", "removed"):
        return sides["base" if row.verdict == "removed" else "head"]
    return change_text(sides["base"], sides["head"])


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
