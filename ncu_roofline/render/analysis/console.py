"""The terminal summary: the top kernels by recoverable time, as a rich table."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ...core.kernel_labels import table_labels
from ...core.vocabulary import APP_HEADROOM, APP_TIME, SOL_COMPLETE, ai_column
from ...pipeline.totals import sol_complete
from ..text.fit import Col, fit_table
from ..text.numbers import (
    INCOMPLETE_LEGEND,
    format_number,
    incomplete,
    lower_bound,
    pct,
    unproven,
    upper_bound,
)
from ..text.numbers import format_si as fmt_si
from ..text.safe_text import for_terminal
from ..text.limiters import limiter_word
from ..text.console import print_table

if TYPE_CHECKING:  # pandas is imported by the kernel table only: `ncu-roofline ceilings` starts without it
    import pandas as pd

    from ...pipeline.app_weight import AppWeighting


# Each column with the order it gives way in (lowest `drop` first) and its legend; the rank, the name and the sort
# key are never dropped (see render/text/fit.py).
_COLUMNS = (Col("#", drop=None), Col("kernel", "left", drop=None), Col("calls", drop=1, legend="calls: launches"),
            Col("time", drop=7), Col("share", drop=4), Col("FLOP/s", drop=3),
            Col("AI", drop=2, legend="AI: FLOP per DRAM byte"), Col("bound", "left", drop=8),
            Col("of roof", drop=9, legend="of roof: roofline fraction"),
            Col("headroom", drop=10, legend="headroom: time a kernel at its roof saves"))
_WHY_COLUMN = (Col("why", "left", drop=6, legend="why: the limiter (`show RANK` gives its evidence; ≠: NCU's own "
                                                 "verdict differs)"),)
# With --nsys: the kernel's time over the whole run, and the part of it reaching the roof would save.
_APP_COLUMNS = (Col("app time", drop=5), Col("app headroom", drop=6.5,
                                             legend="app: over the whole run (Nsight Systems timeline)"))
# --sort names the column that is never dropped
SORT_COLUMNS = {"headroom": "headroom", "time": "time", "fraction": "of roof", "app_headroom_s": "app headroom"}


def _rows(kernels: pd.DataFrame, top: int) -> list[list[str]]:
    import pandas as pd  # noqa: F811 - imported here so `ncu-roofline ceilings` starts without pandas

    from ...pipeline.limiter import ncu_mark

    # the columns read below, taken before the first rows: `itertuples` of the whole kernel table would build a
    # tuple of every column, and its `head` costs more than the narrow one's
    read = ("rank", "kernel_name", "launches", "time_s", "time_share", "flop_per_s", ai_column("dram"), "bound",
            "roofline_fraction", "headroom_s", APP_TIME, APP_HEADROOM, "limiter", "limiter_ncu", SOL_COMPLETE)
    shown = kernels[[column for column in dict.fromkeys(read) if column in kernels]].head(top)
    complete = sol_complete(shown).tolist()
    return [[
        str(row.rank), str(row.kernel_name), str(row.launches), fmt_si(row.time_s, "s"),
        pct(row.time_share), fmt_si(row.flop_per_s, "FLOP/s"),
        format_number(row.ai_dram), "—" if pd.isna(row.bound) else unproven(str(row.bound), done),
        "—" if pd.isna(row.roofline_fraction) else lower_bound(pct(row.roofline_fraction), done),
        upper_bound(fmt_si(row.headroom_s, "s"), done),
        *((fmt_si(getattr(row, APP_TIME), "s"), upper_bound(fmt_si(getattr(row, APP_HEADROOM), "s"), done))
          if APP_HEADROOM in kernels
          else ()),
        limiter_word(getattr(row, "limiter", None)) + ncu_mark(getattr(row, "limiter", None),
                                                               getattr(row, "limiter_ncu", None)),
    ] for row, done in zip(shown.itertuples(index=False), complete)]


def kernel_summary_table(kernels: pd.DataFrame, *, top: int = 10, title: str = "", width: int = 120,
                         sort: str = "headroom", wide: bool = False) -> Table:
    """The ranked kernels in `width` columns: the rank, a name that tells rows apart and the sort key whole;
    the other columns drop in `_COLUMNS`' order, and the caption says which (statuses go under the table, see
    `status_notes`)."""
    rows = _rows(kernels, top)
    columns = (*_COLUMNS, *(_APP_COLUMNS if APP_HEADROOM in kernels else ()), *_WHY_COLUMN)
    key = SORT_COLUMNS.get(sort, "headroom")
    columns = tuple(replace(c, drop=None) if c.header == key else c for c in columns)
    shown = kernels[[c for c in (SOL_COMPLETE,) if c in kernels]].head(top)  # what the legend reads
    def names(max_len: int) -> list[str]:
        # The one label of each kernel over the whole table (core.kernel_labels): its distinguishing part is the
        # same at every width, in the chart and in the Markdown.
        return [for_terminal(n) for n in table_labels(kernels, max_len)[:len(rows)]]

    legend = INCOMPLETE_LEGEND if any(map(incomplete, sol_complete(shown).tolist())) else ""
    return fit_table(columns, rows, width, title=title, name_index=1, names=names, footer=legend, wide=wide,
                     hint="`--wide` prints every column; `-o DIR` then `ncu-roofline show DIR RANK` one kernel's "
                          "numbers").table


def status_notes(kernels: pd.DataFrame, *, top: int = 10, verbose: bool = False) -> list[str]:
    """The listed kernels' statuses other than `ok` in words, one line per distinct note naming its ranks (all of
    them: 'every listed kernel'): a note under the table, never a cut cell. `verbose`: the codes as Parquet holds
    them, one line per distinct status."""
    from ...core.status import note_in_words

    from ...core.values import STRING

    shown = kernels[["rank", "status"]].head(top)  # the two columns read: a mask over every column costs more
    flagged = shown[shown["status"].astype(STRING).fillna("ok") != "ok"]
    if verbose:
        return [f"status of #{', #'.join(map(str, group['rank']))}: {status}"
                for status, group in flagged.groupby("status", sort=False, observed=True)]
    ranks: dict[str, list[int]] = {}
    for rank, status in zip(flagged["rank"], flagged["status"].astype(str)):
        for note in status.split("; "):
            ranks.setdefault(note_in_words(note), [])
            if int(rank) not in ranks[note_in_words(note)]:
                ranks[note_in_words(note)].append(int(rank))
    every = len(shown) > 1
    return [f"status of {'every listed kernel' if every and len(r) == len(shown) else '#' + ', #'.join(map(str, r))}"
            f": {words}" for words, r in ranks.items()]


def print_summary(kernels: pd.DataFrame, *, top: int = 10, title: str = "", console: Console | None = None,
                  app: AppWeighting | None = None, sort: str = "headroom", wide: bool = False,
                  verbose: bool = False) -> None:
    """The table and its status notes; with `app` (--nsys) how much of the run the profile covers first, and the
    largest kernels it never reached after."""
    console = console or Console(emoji=False)
    if app is not None:
        from .timeline import coverage_sentence

        console.print(for_terminal(coverage_sentence(app) + "."), markup=False, highlight=False)  # wrapped to width
    print_table(console, kernel_summary_table(kernels, top=top, title=title, width=console.width, sort=sort,
                                              wide=wide), wide=wide)
    for line in status_notes(kernels, top=top, verbose=verbose):
        console.print(for_terminal(line), markup=False, highlight=False)
    if app is not None:
        from .timeline import unprofiled_lines

        for line in unprofiled_lines(app):
            console.print(for_terminal(line), markup=False, highlight=False)


# The ncu command a note carries (hundreds of characters of metric names): the terminal points to it instead.
_COMMAND = re.compile(r"(?:profile with `ncu --set full` \(or [^)]*\), or )?ncu --metrics \S+(?: -o report| --csv)? \.\.\."
                      r"(?: \(`ncu-roofline metrics` lists them\))?")
VERBOSE_HINT = " … (--verbose)"
# The long notes of run_notes.py said in a few words for the terminal (the full text: --verbose, JSON, docs).
_SHORT_NOTES = (
    (re.compile(r"^(?:[^:]*/)?([^/:\s]+): "), r"\1: "),  # a capture by its file name
    (re.compile(r"the limiter \(why a kernel is slow\) is unknown on (.*?): its counters were not collected; "
                r"to collect them: "), r"limiter unknown on \1, not collected: "),
    (re.compile(r"the capture holds no counters for (.*?) \(unknown on .*?\); to count it: "),
     r"not collected: \1 (unknown, never 0): "),
    (re.compile(r"(\d+) metric-split parts of (\d+) launches each, aligned on .*"),
     r"\1 metric-split parts of \2 launches, aligned by kernel name"),
    (re.compile(r"(\d+) kernel\(s\) \((\d+) launches\) cannot be told apart launch by launch across the parts.*"),
     r"\1 kernel(s) (\2 launches) analysed from their sums by name"),
)


def _once_per_run(notes: list[str]) -> list[str]:
    """What several captures did not collect, said once for the run: 'not collected: FP16 ..., in 4 captures (...)'."""
    by_rest: dict[str, list[str]] = {}
    for note in notes:
        source, _, rest = note.partition(": not collected: ")
        if rest and " " not in source:
            by_rest.setdefault(rest, []).append(source)
    out, said = [], set()
    for note in notes:
        source, _, rest = note.partition(": not collected: ")
        sources = by_rest.get(rest, []) if rest and " " not in source else []
        if len(sources) < 2:
            out.append(note)
        elif rest not in said:
            said.add(rest)
            out.append(f"not collected: {rest}, in {len(sources)} captures ({', '.join(sources)})")
    return out


def note_lines(notes: list[str], *, width: int, verbose: bool = False) -> list[str]:
    """The run notes as the terminal prints them: one line each, the ncu command replaced by where to find it
    (`ncu-roofline metrics`, or `--verbose` for every note in full, as the JSON and Parquet metadata hold it)."""
    if verbose:
        return [f"note: {note}" for note in notes]
    lines = []
    shortened = []
    for note in notes:
        for pattern, short in _SHORT_NOTES:
            note = pattern.sub(short, note)
        shortened.append(_COMMAND.sub("`ncu-roofline metrics`", note))
    shortened = _once_per_run(shortened)
    prefix = shortened[0].split(": ", 1)[0] + ": " if shortened and ": " in shortened[0] else ""
    shared = len(shortened) > 1 and prefix and all(n.startswith(prefix) for n in shortened)
    if shared:  # one capture: named once, not on every line
        lines.append(f"notes on {prefix[:-2]}:")
        shortened = [n[len(prefix):] for n in shortened]
    for note in shortened:
        line = ("  " if shared else "note: ") + note
        if len(line) > width:
            cut = line[: max(20, width - len(VERBOSE_HINT)) + 1]
            line = (cut[: cut.rfind(" ")] if " " in cut[20:] else cut[:-1]).rstrip(" ,;:") + VERBOSE_HINT
        lines.append(line)
    return lines


