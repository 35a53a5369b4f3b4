"""Markdown summaries for `$GITHUB_STEP_SUMMARY` and pull-request comments."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ...core.kernel_labels import fold_inputs, table_labels
from ...core.vocabulary import APP_HEADROOM, APP_TIME, LEVELS, ai_column, counted, display
from ...pipeline.totals import run_totals, sol_complete
from ..text.numbers import (
    INCOMPLETE_LEGEND,
    format_number,
    incomplete,
    lower_bound,
    unproven,
    upper_bound,
)
from ..text.limiters import limiter_text, limiter_word
from ..text.numbers import cell as _cell
from ..text.numbers import format_si as fmt_si
from ..text.numbers import pct as _pct
from ..text.safe_text import for_markdown_code, for_markdown_text, for_terminal

if TYPE_CHECKING:  # the timeline's weighting is loaded only by a run with --nsys
    from ...pipeline.app_weight import AppWeighting


def totals_sentence(totals: dict) -> str:
    """'GPU time 1 ms, recoverable at the roofs 0.2 ms (20.0%)', with unknown totals shown as unknown, and why."""
    time_s, headroom = totals["time_s"], totals["headroom_s"]
    time_text = fmt_si(time_s, "s")
    if time_s is None and totals["time_s_known"] is not None:
        time_text += f" (unknown for {totals['kernels_unknown_time']} kernels; {fmt_si(totals['time_s_known'], 's')}" \
                     " over the others)"
    text = f"GPU time {time_text}, recoverable at the roofs "
    if headroom is not None:
        share = _pct(headroom / time_s) if time_s else ""
        return text + _upper_bound_part(totals, fmt_si(headroom, "s"), share, totals["kernels"])
    text += f"— (unknown for {totals['kernels_unknown_headroom']} of {totals['kernels']} kernels: " \
            + "; ".join(totals["unknown_reasons"]) + ")"
    if totals["headroom_s_known"] is not None:
        text += "; " + _upper_bound_part(totals, fmt_si(totals["headroom_s_known"], "s"), "",
                                         totals["kernels"] - totals["kernels_unknown_headroom"]) \
            + " over the kernels with roofs"
    return text


def _upper_bound_part(totals: dict, amount: str, share: str, known: int) -> str:
    """'299 ms (33.0%)', '≤ 299 ms (33.0%; an upper bound: ...)' where every kernel's speed of light lacks terms,
    or '... , of which ≤ 221 ms on 2 kernels is an upper bound ...' where some do."""
    partial = totals.get("kernels_upper_bound", 0)
    shown = amount + (f" ({share})" if share else "")
    if not partial:
        return shown
    if partial >= known:
        return f"≤ {shown}, an upper bound: no kernel's speed of light counted every term (see status)"
    return (f"{shown}, of which ≤ {fmt_si(totals['headroom_s_upper_bound_only'], 's')} is an upper bound only "
            f"({counted(partial, 'kernel')} whose speed of light lacks terms, see status)")


def analysis_markdown(kernels: pd.DataFrame, launches: pd.DataFrame, inputs: list[str], *, top: int = 10,
                      gpu: str | None = None, chart: str | None = None, notes: list[str] = (),
                      app: AppWeighting | None = None) -> str:
    """The summary: totals (unknown where any kernel's is), the GPU and its ceiling source, inputs by file name, a
    link to the chart (`chart`: a path relative to the summary, an image when it is a PNG), the first `top` ranked
    kernels with their intensity at every level and their bound, then the run-level notes. With `app` (--nsys):
    how much of the run the profile covers, first; the app columns; the largest kernels never profiled."""
    from .timeline import coverage_sentence, unprofiled_lines

    coverage = coverage_sentence(app) if app is not None else None
    unprofiled = unprofiled_lines(app, name=for_markdown_code) if app is not None else []
    totals = run_totals(kernels, launches)
    not_ok = int((launches["status"].astype("object").fillna("ok") != "ok").sum())
    lines = [
        "## ncu-roofline",
        "",
        f"**{counted(totals['kernels'], 'kernel')}**, {counted(totals['launches'], 'launch', 'launches')}, "
        f"{totals_sentence(totals)}.",
        "",
        *([f"**{coverage}.**", ""] if coverage else []),
        f"GPU: **{for_markdown_text(gpu or 'unknown')}**, ceilings from "
        f"{for_terminal(', '.join(sorted(set(kernels['ceiling_source'].dropna().astype(str)))) or 'none')}. "
        f"Inputs: {for_markdown_code(fold_inputs(inputs))}.",
        "",
    ]
    app = APP_HEADROOM in kernels
    shown = kernels.head(top).copy()
    shown.attrs["labels"] = table_labels(kernels)[:len(shown)]
    complete = sol_complete(shown).tolist()
    lines += compact_table(shown, complete, app=app)
    if any(map(incomplete, complete)):
        lines += ["", INCOMPLETE_LEGEND + "."]
    lines += ["", *headroom_bars(shown, complete)]
    if unprofiled:
        lines += ["", *(f"- {line.strip()}" if line.startswith("  ") else line for line in unprofiled)]
    if not_ok:
        lines += ["", statuses_sentence(launches)]
    if notes:
        from .console import note_lines

        short = note_lines(list(notes), width=160)
        heading = "Notes:"
        if short[0].startswith("notes on "):  # one capture: named once
            heading = f"Notes on {for_markdown_code(short[0].removeprefix('notes on ').rstrip(':'))}:"
            short = short[1:]
        lines += ["", heading, ""] + [f"- {_cell(for_terminal(line.removeprefix('note: ').strip()))}"
                                      for line in short]
    lines += ["", *_details("Every column (launches, share, FLOP/s, intensity per level, the limiter's evidence)",
                            full_table(shown, complete, app=app))]
    if is_url(chart):
        lines += ["", *_details("Chart", [f"![roofline]({chart})" if is_image(chart)
                                          else f"Chart: [{chart}]({chart})"])]
    else:  # a local path is a broken link in a step summary: the chart's points as a table instead
        lines += ["", *_details(f"Roofline chart as a table (top {len(shown)}; `--chart-url` links the image)",
                                chart_table(shown, complete, chart))]
    if notes:
        lines += ["", *_details("Notes in full (with the ncu commands)",
                                [f"- {_cell(for_terminal(note))}" for note in notes])]
    return "\n".join(lines) + "\n"


# The compact table is sized for GitHub's ~1,000 px step-summary column: short names, the numbers that rank.
COMPACT_NAME = 36
BAR_CELLS = 24


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsed block; the blank lines let GitHub render the Markdown inside it."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _names(shown: pd.DataFrame) -> list[str]:
    # The one label of each kernel (core.kernel_labels), as the terminal and the chart print it; `shown` carries
    # it from `analysis_markdown`, which computed it over the whole table.
    return shown.attrs.get("labels") or table_labels(shown)


def compact_table(shown: pd.DataFrame, complete: list, *, app: bool) -> list[str]:
    """rank, kernel, time, bound, of roof, headroom (app headroom with --nsys), why: what fits 1,000 px."""
    lines = ["| # | kernel | time | bound | of roof | headroom |" + (" app headroom |" if app else "") + " why |",
             "|---:|---|---:|---|---:|---:|" + ("---:|" if app else "") + "---|"]
    for row, name, done in zip(shown.itertuples(index=False), _names(shown), complete):
        lines.append(
            f"| {row.rank} | {for_markdown_code(name, table_cell=True)} | {fmt_si(row.time_s, 's')} | "
            f"{'—' if pd.isna(row.bound) else unproven(str(row.bound), done)} | "
            f"{lower_bound(_pct(row.roofline_fraction), done)} | {upper_bound(fmt_si(row.headroom_s, 's'), done)} |"
            + (f" {upper_bound(fmt_si(getattr(row, APP_HEADROOM), 's'), done)} |" if app else "")
            + f" {_cell(limiter_word(getattr(row, 'limiter', None)))} |")
    return lines


def full_table(shown: pd.DataFrame, complete: list, *, app: bool) -> list[str]:
    lines = [
        "| # | kernel | launches | time | share | FLOP/s | "
        + " | ".join(f"AI {display(level)}" for level in LEVELS) + " | bound | of roof | headroom |"
        + (" app time | app headroom |" if app else "") + " why |",
        "|---:|---|---:|---:|---:|---:|" + "---:|" * len(LEVELS) + "---|---:|---:|" + ("---:|---:|" if app else "")
        + "---|",
    ]
    for row, name, done in zip(shown.itertuples(index=False), _names(shown), complete):
        lines.append(
            f"| {row.rank} | {for_markdown_code(name, table_cell=True)} | "
            f"{row.launches} | "
            f"{fmt_si(row.time_s, 's')} | {_pct(row.time_share)} | {fmt_si(row.flop_per_s, 'FLOP/s')} | "
            + "".join(f"{format_number(getattr(row, ai_column(level)))} | " for level in LEVELS) +
            f"{'—' if pd.isna(row.bound) else unproven(str(row.bound), done)} | "
            f"{lower_bound(_pct(row.roofline_fraction), done)} | {upper_bound(fmt_si(row.headroom_s, 's'), done)} |"
            + (f" {fmt_si(getattr(row, APP_TIME), 's')} | "
               f"{upper_bound(fmt_si(getattr(row, APP_HEADROOM), 's'), done)} |" if app else "")
            + f" {_cell(for_terminal(_why(row)))} |")
    return lines


def is_url(chart: str | None) -> bool:
    return bool(chart) and str(chart).startswith(("http://", "https://"))


def is_image(chart: str) -> bool:
    return chart.lower().split("?", 1)[0].endswith((".png", ".svg"))


def chart_table(shown: pd.DataFrame, complete: list, chart: str | None) -> list[str]:
    """What the roofline chart draws, for a summary without its image: each kernel's point (FLOP/s over its
    intensity at each level) and where it sits under its roof; `chart`, a local file, named as text."""
    lines = ["| # | kernel | FLOP/s | " + " | ".join(f"AI {display(level)}" for level in LEVELS)
             + " | bound | of roof |",
             "|---:|---|---:|" + "---:|" * len(LEVELS) + "---|---:|"]
    for row, name, done in zip(shown.itertuples(index=False), _names(shown), complete):
        lines.append(f"| {row.rank} | {for_markdown_code(name, table_cell=True)} | "
                     f"{fmt_si(row.flop_per_s, 'FLOP/s')} | "
                     + "".join(f"{format_number(getattr(row, ai_column(level)))} | " for level in LEVELS)
                     + f"{'—' if pd.isna(row.bound) else unproven(str(row.bound), done)} | "
                     f"{lower_bound(_pct(row.roofline_fraction), done)} |")
    if chart:
        lines += ["", f"The chart itself: {for_markdown_code(chart)} beside this summary (upload it as an artifact "
                      "and pass its address as `--chart-url`)."]
    return lines


def _why(row) -> str:
    """The why cell: the limiter with its evidence, then its one next step (metrics/limiters.toml)."""
    from ...pipeline.limiter import next_step

    limiter = getattr(row, "limiter", None)
    step = next_step(limiter)
    text = limiter_text(limiter, getattr(row, "limiter_evidence", None))
    return f"{text}. Next: {step}" if step else text


def headroom_bars(shown: pd.DataFrame, complete: list) -> list[str]:
    """The headroom of each listed kernel as a text bar (readable at any width, unlike a scaled chart image)."""
    values = pd.to_numeric(shown["headroom_s"], errors="coerce")
    top = values.max()
    if not len(values) or pd.isna(top) or top <= 0:
        return []
    lines = ["Headroom (time each kernel at its roof would save):", "", "```"]
    for row, value, done in zip(shown.itertuples(index=False), values, complete):
        cells = 0 if pd.isna(value) else max(1, round(float(value) / top * BAR_CELLS)) if value > 0 else 0
        lines.append(f"#{row.rank:<3} {'█' * cells:<{BAR_CELLS}} {upper_bound(fmt_si(value, 's'), done):>11}")
    return [*lines, "```"]


def statuses_sentence(launches: pd.DataFrame) -> str:
    """'471 of 559 launch rows carry a status: L1 moved fewer bytes than L2 (205), ... and 3 more': counted in
    words, the top two named (the codes are in `launches.parquet`, the meanings in docs/status.md)."""
    from ...core.status import note_in_words

    counts = launches["status"].astype("object").fillna("ok").value_counts()
    by_words: dict[str, int] = {}
    for status, n in counts.items():
        if status == "ok":
            continue
        for words in dict.fromkeys(note_in_words(note) for note in str(status).split("; ")):
            by_words[words] = by_words.get(words, 0) + int(n)
    flagged = int(counts.drop("ok", errors="ignore").sum())
    ranked = sorted(by_words.items(), key=lambda item: -item[1])
    named = "; ".join(f"{words} ({n})" for words, n in ranked[:2])
    more = f"; and {counted(len(ranked) - 2, 'other status', 'other statuses')}" if len(ranked) > 2 else ""
    return (f"{flagged} of {counted(len(launches), 'launch row')} carry a status: {_cell(for_terminal(named))}"
            f"{more} (codes in `launches.parquet`, meanings in docs/status.md).")
