"""`ncu-roofline show OUT_DIR KERNEL`: one kernel group's drill-down, read back from the written Parquet files.

Its launches, every derived number with the catalogue definition it came from (its definition id), its roofs
with their source, and its status in full. Reads only the tables `analyze -o` wrote: no ncu input needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...core.errors import InputError
from ...core.kernel_labels import display_name
from ...core.patterns import compile_regex
from ...core.status import status_in_words
from ...core.vocabulary import (
    ALL_TERMS,
    INSTRUCTION_LEVELS,
    LEVELS,
    ai_column,
    bytes_column,
    def_column,
    display,
    ii_column,
)
from ...pipeline.limiter import NOT_COLLECTED, agrees_with_ncu, ncu_findings, next_step
from ...pipeline.run_notes import collect_command
from ...pipeline.select import kernel_launches, name_mask
from ..text.fit import Col, fit_table
from ..text.numbers import format_number, format_si, pct
from ..text.safe_text import for_terminal

_LAUNCH_COLUMNS = ("launch_id", "source_file", "grid", "block", "time_s", "flop_per_s", "bound", "roofline_fraction",
                   "headroom_s", "limiter")
# Which launch columns a narrow terminal gives up first (render/fit.py); the id, time and bound always stay.
_LAUNCH_DROP = {"source_file": 1, "grid": 3, "block": 2, "flop_per_s": 4, "headroom_s": 5, "limiter": 6,
                "roofline_fraction": 7}


def find_kernel(kernels: pd.DataFrame, key: str) -> pd.Series:
    """The kernel group `key` names: a rank number, or a regex matching exactly one group's name."""
    if key.isdigit():
        hit = kernels[kernels["rank"] == int(key)]
    else:
        pattern = compile_regex(key, f"KERNEL {key!r} is neither a rank nor a regular expression:")
        hit = kernels[name_mask(kernels, pattern)]
    if hit.empty:
        raise InputError(None, f"no kernel group matches {key!r} (ranks 1..{len(kernels)})")
    if len(hit) > 1:
        ranks = ", ".join(map(str, hit["rank"].head(8)))
        raise InputError(None, f"{key!r} matches {len(hit)} kernel groups (ranks {ranks}…): give a rank")
    return hit.iloc[0]


# How each derived column is computed from the summed amounts (sum first, then divide: DESIGN.md).
DERIVED = {
    "flop_total": "sum of the FLOP columns", **{ai_column(lv): f"flop_total / {bytes_column(lv)}" for lv in LEVELS},
    "flop_per_s": "flop_total / time_s", "t_sol_s": "max over roofs of amount / peak",
    "bound": "the roof whose amount / peak is t_sol_s", "roofline_fraction": "t_sol_s / time_s",
    "headroom_s": "time_s − t_sol_s", "time_share": "time_s / the run's GPU time",
}


# FLOP or bytes: the unit of each amount column, from the vocabulary's terms.
_AMOUNT_UNITS = {t.amount: "FLOP" if t.kind == "compute" else "B" for t in ALL_TERMS} | {"flop_total": "FLOP"}


def _definition(row: pd.Series, quantity: str) -> str:
    value = row.get(def_column(quantity))
    return str(value) if isinstance(value, str) else "—"


def _value(column: str, value: object) -> str:
    if column == "flop_per_s":
        return format_si(value, "FLOP/s")
    if column.startswith("peak_flop"):
        return format_si(value, "FLOP/s")
    if column.startswith("peak_bytes"):
        return format_si(value, "B/s")
    if column in _AMOUNT_UNITS:
        return format_si(value, _AMOUNT_UNITS[column])
    if column.endswith("_s"):
        return format_si(value, "s")
    return format_number(value) if isinstance(value, float) else _known(value)


def _say(console: Console):
    """One line of the drill-down: every name and status from the tables through `for_terminal`, no markup."""
    return lambda line: console.print(for_terminal(line), markup=False, highlight=False, soft_wrap=True)


def _cells(*values: object) -> list[Text]:
    """Table cells as plain text (rich would read `[...]` in a name as markup), terminal-safe."""
    return [Text(for_terminal(value)) for value in values]


def print_drilldown(outdir: Path, key: str, console: Console, *, verbose: bool = False) -> None:
    kernels_path, launches_path = Path(outdir) / "kernels.parquet", Path(outdir) / "launches.parquet"
    for path in (kernels_path, launches_path):
        if not path.exists():
            raise InputError(str(path), "not found: write it with `ncu-roofline analyze … -o DIR`")
    kernels = pd.read_parquet(kernels_path)
    row = find_kernel(kernels, key)
    say = _say(console)
    say(f"#{row['rank']} {display_name(str(row['kernel_name']))}")
    say(f"recorded as {row['kernel_name']}; grid {_known(row.get('grid'))} × block {_known(row.get('block'))}; "
        f"{row['launches']} launch{'' if row['launches'] == 1 else 'es'}")
    launches = pd.read_parquet(launches_path)
    mine = kernel_launches(launches, row)
    for line in [*_why_lines(row, mine, verbose=verbose), *_instruction_lines(row)]:
        say(line)

    numbers = Table(title="derived numbers", header_style="bold", box=None, pad_edge=False)
    for name in ("column", "value", "definition"):
        numbers.add_column(name, overflow="fold")
    for term in ALL_TERMS:
        if term.amount in row and pd.notna(row[term.amount]) and (not term.key.startswith("tensor_")
                                                                  or row[term.amount]):
            numbers.add_row(*_cells(term.amount, _value(term.amount, row[term.amount]),
                                    _definition(row, term.amount)))
    numbers.add_row(*_cells("time_s", _value("time_s", row["time_s"]), _definition(row, "time_s")))
    for column, formula in DERIVED.items():
        if column in row:
            numbers.add_row(*_cells(column, _value(column, row[column]), formula))
    console.print(numbers)

    say(f"roofs from {row.get('ceiling_source', '—')}:")
    roofs = Table(header_style="bold", box=None, pad_edge=False)
    roofs.add_column("roof")
    roofs.add_column("value", justify="right")
    for term in ALL_TERMS:
        if term.peak in row and pd.notna(row[term.peak]):
            roofs.add_row(*_cells(display(term.key), _value(term.peak, row[term.peak])))
    console.print(roofs)

    present = [c for c in _LAUNCH_COLUMNS if c in mine]
    cells = [[for_terminal(Path(str(v)).name if c == "source_file" else _value(c, v)) for c, v in zip(present, launch)]
             for launch in mine[present].head(50).itertuples(index=False)]
    # Whole values only: a narrow terminal drops columns (and says which) rather than fold a file name or a number.
    columns = [Col(c, "left" if c in ("source_file", "bound", "limiter") else "right", drop=_LAUNCH_DROP.get(c))
               for c in present]
    console.print(fit_table(columns, cells, console.width, title=f"{len(mine)} launch rows",
                            hint="launches.parquet in that folder holds every column").table)
    if len(mine) > 50:
        say(f"… {len(mine) - 50} more in {launches_path}")
    say(f"status: {status_in_words(row.get('status'))} (code: {row.get('status')})")
    others = sorted(set(mine["status"].astype(str)) - {str(row.get("status")), "ok"}) if "status" in mine else []
    for status in others:
        say(f"some launches: {status_in_words(status)} (code: {status})")


def _known(value: object) -> str:
    """A launch dimension, '—' where it is unknown (never '<NA>')."""
    return "—" if value is None or pd.isna(value) or str(value) in ("", "<NA>", "nan") else str(value)


def _why_lines(row: pd.Series, launches: pd.DataFrame, *, verbose: bool = False) -> list[str]:
    """The limiter with its evidence in full, the time a fix would save, one next step, and NCU's own findings
    in its words ordered by its estimated speedup (none for older tables or a CSV export)."""
    if "limiter" not in row:
        return []
    word = str(row["limiter"]).replace("_", " ")
    evidence = row.get("limiter_evidence")
    if word == "unknown":
        return _unknown_lines(evidence, launches, verbose=verbose)
    lines = [f"why: {word}" + (f": {evidence}" if pd.notna(evidence) else "")]
    if pd.notna(row.get("limiter_gain_s")):
        lines.append(f"gain if fixed: up to {format_si(row['limiter_gain_s'], 's')} of {format_si(row['time_s'], 's')}")
    step = next_step(row["limiter"])
    if step:
        lines.append(f"next step: {step}")
    verdict = row.get("limiter_ncu")
    agrees = agrees_with_ncu(row["limiter"], verdict)
    if agrees is not None:
        said = "agrees" if agrees else "differs; docs/limiters.md says where our order differs"
        lines.append(f"NCU's SpeedOfLight verdict: {verdict} ({said})")
    lines.extend(_ncu_lines(launches))
    return lines


def _unknown_lines(evidence: object, launches: pd.DataFrame, *, verbose: bool) -> list[str]:
    """`unknown`: the one ncu command that collects exactly the missing counters (the run note's, built by
    pipeline/run_notes.collect_command); the counters themselves only with --verbose."""
    needs = str(evidence).removeprefix(NOT_COLLECTED).split(", ") if pd.notna(evidence) else []
    sources = launches["source_file"].astype(str) if "source_file" in launches else pd.Series([], dtype=str)
    report = bool(len(sources)) and sources.str.contains(r"\.(?:ncu-repz?|nsight-cuprof-report)$").all()
    lines = ["why: unknown (its counters were not collected)"]
    if needs:
        lines.append(f"next step: collect them: {collect_command(needs, report=report)}")
        if verbose:
            lines.append("missing counters: " + ", ".join(needs))
    return lines


_NCU_MARKUP = ((re.compile(r"@section:[^:@]*:([^@]*)@"), r"\1"), (re.compile(r"@url:([^:@]*):[^@]*@"), r"\1"),
               (re.compile(r"@[a-z]+:[^:@]*:([^@]*)@"), r"\1"))


def _ncu_lines(launches: pd.DataFrame) -> list[str]:
    """NCU's findings for the group's longest launch, in NCU's words, largest estimated speedup first."""
    if "ncu_rules" not in launches or launches["ncu_rules"].isna().all():
        return []
    held = launches[launches["ncu_rules"].notna()]
    launch = held.loc[held["time_s"].astype("float64").fillna(0).idxmax()] if "time_s" in held else held.iloc[0]
    lines = [f"NCU's findings (launch {launch.get('launch_id')}, by NCU's estimated speedup):"]
    for finding in ncu_findings(launch["ncu_rules"]):
        message = finding["message"]
        for pattern, repl in _NCU_MARKUP:
            message = pattern.sub(repl, message)
        speedup = pct(finding["speedup_pct"] / 100) if finding["speedup_pct"] is not None else "—"
        title = f"{finding['title']}: " if finding["title"] else ""
        lines.append(f"  {speedup:>6} {finding['rule']} ({finding['section']}): {title}{' '.join(message.split())}")
    return lines


def _instruction_lines(row: pd.Series) -> list[str]:
    """The instruction roofline's numbers (none for older tables)."""
    lines = []
    if pd.notna(row.get("warp_inst")):
        per = ", ".join(f"{display(lv) if lv != 'shared' else 'shared'} {format_number(row.get(ii_column(lv)))}"
                        for lv in INSTRUCTION_LEVELS)
        lines.append(f"instructions: {format_si(row['warp_inst'], '')} warp instructions, "
                     f"{format_number(row.get('gips'))} warp GIPS of {format_number(row.get('peak_warp_gips'))} "
                     f"peak; warp instructions per transaction: {per}")
    if pd.notna(row.get("int_ops")):
        lines.append(f"integer operations: {format_si(row['int_ops'], 'op')}")
    return lines
