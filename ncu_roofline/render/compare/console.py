"""The terminal view of a comparison: the kernels that moved most, with verdicts, then the gates."""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ...core.kernel_names import short_kernel_name
from ...pipeline.gates import GateResult
from ..numbers import format_si as fmt_si
from ..safe_text import for_terminal
from .markdown import (
    change_text,
    launch_shape,
    match_text,
    per_launch_sentence,
    signed_pct,
    signed_points,
    signed_si,
)

VERDICT_STYLES = {"regression": "bold red", "improvement": "green", "neutral": "dim", "added": "cyan",
                  "removed": "magenta"}


def comparison_table(kernels: pd.DataFrame, totals: pd.DataFrame, labels: tuple[str, str], *,
                     top: int = 10) -> Table:
    base_label, head_label = labels
    time = totals.loc["time_s"]
    title = (f"{base_label} → {head_label}: GPU time {fmt_si(time['base'], 's')} → {fmt_si(time['head'], 's')} "
             f"({signed_pct(time['change_pct'])}) — top {min(top, len(kernels))} by time change")
    table = Table(title=escape(for_terminal(title)), header_style="bold")
    for name, justify in (("kernel", "left"), ("grid×block", "left"), ("verdict", "left"), ("base", "right"),
                          ("head", "right"), ("Δ time", "right"), ("Δ FLOP/s", "right"), ("Δ of roof", "right"),
                          ("bound", "left"), ("match", "left")):
        # the match cell may say how launch counts that differ were compared: it wraps, the numbers never do
        table.add_column(name, justify=justify, no_wrap=name != "match",
                         max_width=40 if name == "kernel" else 24 if name == "match" else None)
    for row in kernels.head(top).itertuples(index=False):
        side = "base" if row.verdict == "removed" else "head"
        shape = launch_shape(getattr(row, f"grid_{side}"), getattr(row, f"block_{side}"))
        bound = change_text(row.bound_base, row.bound_head)
        if row.verdict in ("added", "removed"):
            bound = change_text(getattr(row, f"bound_{side}"), getattr(row, f"bound_{side}"))
        elif row.match == "name_only":
            shape = f"{launch_shape(row.grid_base, row.block_base)} → {shape}"
        verdict = str(row.verdict)
        table.add_row(
            Text(for_terminal(short_kernel_name(str(row.kernel_name)))), Text(for_terminal(shape)),
            f"[{VERDICT_STYLES.get(verdict, '')}]{verdict}[/]" + (" [red]✗ gate[/]" if row.gates_failed else ""),
            fmt_si(row.time_s_base, "s"), fmt_si(row.time_s_head, "s"),
            f"{signed_pct(row.time_s_change_pct)}" if not pd.isna(row.time_s_change) else "—",
            signed_pct(row.flop_per_s_change_pct), signed_points(row.roofline_fraction_change),
            Text(bound), Text(match_text(row)))
    return table


def gate_lines(gates: list[GateResult]) -> list[str]:
    """One rich-markup line per gate, then the overall outcome."""
    lines = []
    for result in gates:
        gate = result.gate
        mark = "[bold red]NOT CHECKED[/]" if not result.judged else "[green]PASS[/]" if result.passed \
            else "[bold red]FAIL[/]"
        scope = "totals" if gate.scope == "total" else f"{result.checked} kernels checked"
        detail = ""
        if result.failures:
            names = [("total" if gate.scope == "total" else for_terminal(short_kernel_name(str(f["kernel_name"]))))
                     + f" {signed_pct(f['change_pct']) if gate.relative else signed_si(f['change'], '')}"
                     for f in result.failures[:3]]
            detail = ": " + ", ".join(names) + (f" and {len(result.failures) - 3} more"
                                                if len(result.failures) > 3 else "")
        lines.append(f"{mark} {escape(for_terminal(gate.text))} ({scope}){escape(detail)}")
    if gates:
        failed = sum(not (r.passed and r.judged) for r in gates)
        lines.append("[bold red]gates failed[/]" if failed else "[green]all gates passed[/]")
    return lines


def print_comparison(kernels: pd.DataFrame, totals: pd.DataFrame, info: dict[str, Any], *, top: int = 10,
                     console: Console | None = None) -> None:
    """The table of the kernels that moved most, then one line per gate; `info` is `Comparison.info()`."""
    console = console or Console()
    for side, sentence in zip(("base", "head"), info.get("timelines", ())):  # --nsys
        console.print(f"{side}: {sentence or 'no --nsys timeline'}.", markup=False, highlight=False, soft_wrap=True)
    if top:
        console.print(comparison_table(kernels, totals, info["labels"], top=top))
    per_launch = per_launch_sentence(kernels)
    if per_launch:
        console.print(per_launch.replace("`", ""), markup=False, highlight=False)
    for line in gate_lines(info["gates"]):
        console.print(line, highlight=False)
