"""The terminal view of a comparison: the kernels that moved most, with verdicts, then the gates."""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ...core.kernel_names import short_kernel_name
from ...pipeline.gates import GateResult
from ..text.console import print_table
from ..text.fit import Col, fit_table
from ..text.numbers import format_si as fmt_si
from ..text.safe_text import for_terminal
from .markdown import (
    app_lines,
    bound_text,
    compared_labels,
    failure_label,
    labels_by_identity,
    match_text,
    partial_legend,
    per_launch_sentence,
    points_change_text,
    signed_pct,
    signed_value,
)

VERDICT_STYLES = {"regression": "bold red", "improvement": "green", "neutral": "dim", "added": "cyan",
                  "removed": "magenta"}


# The rank, the name, the verdict, Δ time (the sort key, in %) and Δ of roof are never dropped; the others give way
# lowest `drop` first (render/text/fit.py).
COLUMNS = (Col("#"), Col("kernel", "left"), Col("verdict", "left", style="markup"), Col("Δ time"),
           Col("Δ of roof", legend="Δ of roof: change of the roofline fraction, in points"),
           Col("base", drop=4), Col("head", drop=5), Col("Δ FLOP/s", drop=2), Col("bound", "left", drop=3),
           Col("match", "left", drop=1))


def comparison_table(kernels: pd.DataFrame, totals: pd.DataFrame, labels: tuple[str, str], *,
                     top: int = 10, width: int = 120, wide: bool = False) -> Table:
    """The kernels that moved most in `width` columns; a name repeated in the table (other launch shapes) carries
    its shape, grid×block, and only there."""
    base_label, head_label = labels
    time = totals.loc["time_s"]
    per_launch = " (per launch where launch counts differ)" if (kernels["compared"] == "per_launch").any() else ""
    title = (f"{base_label} → {head_label}: GPU time{per_launch} {fmt_si(time['base'], 's')} → "
             f"{fmt_si(time['head'], 's')} "
             f"({signed_pct(time['change_pct'])}) — top {min(top, len(kernels))} by time change")
    rows = []
    for rank, row in enumerate(kernels.head(top).itertuples(index=False), start=1):
        bound = bound_text(row)
        verdict = str(row.verdict)
        rows.append([
            str(rank), "", f"[{VERDICT_STYLES.get(verdict, '')}]{verdict}[/]"
            + (" [red]✗ gate[/]" if row.gates_failed else ""),
            f"{signed_pct(row.time_s_change_pct)}" if not pd.isna(row.time_s_change) else "—",
            points_change_text(row), fmt_si(row.time_s_base, "s"), fmt_si(row.time_s_head, "s"),
            signed_pct(row.flop_per_s_change_pct), bound, match_text(row)])
    def names(max_len: int) -> list[str]:  # one name per kernel at every width, in the Markdown and the chart
        return [for_terminal(n) for n in compared_labels(kernels, max_len).iloc[:top]]

    return fit_table(COLUMNS, rows, width, title=escape(for_terminal(title)), name_index=1, names=names,
                     wide=wide, hint="`--wide` prints every column; `-o DIR` writes them all to compare.parquet"
                     ).table


def gate_lines(gates: list[GateResult], labels: dict | None = None) -> list[str]:
    """One rich-markup line per gate, then the overall outcome; `labels` (`labels_by_identity`) names a failing
    kernel as the table does."""
    lines = []
    for result in gates:
        gate = result.gate
        mark = "[bold red]NOT CHECKED[/]" if not result.judged else "[green]PASS[/]" if result.passed \
            else "[bold red]FAIL[/]"
        scope = "totals" if gate.scope == "total" else f"{result.checked} kernels checked"
        detail = ""
        if result.failures:
            names = [("total" if gate.scope == "total" else for_terminal(failure_label(f, labels)
                                                                       or short_kernel_name(str(f["kernel_name"]))))
                     + f" {signed_pct(f['change_pct']) if gate.relative else signed_value(gate.metric, f['change'])}"
                     for f in result.failures[:3]]
            detail = ": " + ", ".join(names) + (f" and {len(result.failures) - 3} more"
                                                if len(result.failures) > 3 else "")
        lines.append(f"{mark} {escape(for_terminal(gate.text))} ({scope}){escape(detail)}")
    if gates:
        failed = sum(not (r.passed and r.judged) for r in gates)
        lines.append("[bold red]gates failed[/]" if failed else "[green]all gates passed[/]")
    return lines


def print_comparison(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *, top: int = 10,
                     console: Console | None = None, wide: bool = False) -> None:
    """The table of the kernels that moved most, then one line per gate; `info` is `Comparison.info()`."""
    console = console or Console(emoji=False)
    for side, sentence in zip(("base", "head"), info.get("timelines", ())):  # --nsys
        console.print(f"{side}: {sentence or 'no --nsys timeline'}.", markup=False, highlight=False, soft_wrap=True)
    if top:
        print_table(console, comparison_table(kernels, totals, info["labels"], top=top, width=console.width,
                                              wide=wide), wide=wide)
    legend = partial_legend(kernels.head(top))
    if legend:
        console.print(legend, markup=False, highlight=False)
    for line in app_lines(kernels, totals, top=top):  # --nsys on both sides: the change over the whole run
        console.print(for_terminal(line), markup=False, highlight=False)
    per_launch = per_launch_sentence(kernels)
    if per_launch:
        console.print(per_launch.replace("`", ""), markup=False, highlight=False)
    for line in gate_lines(info["gates"], labels_by_identity(kernels)):
        console.print(line, highlight=False)
