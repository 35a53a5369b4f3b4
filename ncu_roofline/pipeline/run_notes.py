"""What the run as a whole has to say, once, instead of on every launch.

- what a capture lacks: quantities no launch of a source file could derive (`derive.Gap`), with the exact ncu
  command that collects them, spelled in the metric family the capture already uses (a NERSC-style capture that
  collected `lts__t_bytes` is told to collect the other NERSC metrics, never sent to another L2 metric);
- why kernels have no speed of light: no counters (collect them) or no roofs (the export names no GPU: pass
  `--gpu`), counted. A run where no kernel can be placed on a roofline is refused with that text unless the caller
  allows an empty analysis.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import pandas as pd

from ..core.status import is_by_name
from ..core.vocabulary import COUNTED_COLUMNS, TERMS, UNKNOWN_LIMITER, WORK_COLUMNS, counted, display
from .codes import sorted_codes
from .derive import Gap

_TERM_KEY = {term.amount: term.key for term in TERMS}  # "flop_fp16" -> "fp16"
REPORT_COLLECT = "profile with `ncu --set roofline` (ncu 2023+) or `ncu --set full`"


def collect_command(needs: list[str], *, report: bool) -> str:
    """`ncu --metrics a,b,c ...` for metric names and globs (globs become ncu `regex:` entries)."""
    names = [n if "*" not in n else "regex:^" + re.escape(n).replace(r"\*", ".*") + "$" for n in needs]
    tail = " -o report ..." if report else " --csv ..."
    return "ncu --metrics " + ",".join(dict.fromkeys(names)) + tail


def gap_notes(gaps: list[Gap], reports: set[str]) -> list[str]:
    """One note per source file: what it lacks for the roofline, and the command that collects it."""
    by_source: dict[str, list[Gap]] = defaultdict(list)
    for gap in gaps:
        by_source[gap.source].append(gap)
    notes = []
    for source in sorted(by_source):
        found = [g for g in by_source[source] if g.quantity in COUNTED_COLUMNS]
        if not found:
            continue
        needs = [name for g in found for name in g.needs]
        report = source in reports
        command = collect_command(needs, report=report) if needs else REPORT_COLLECT
        if len(found) == len(COUNTED_COLUMNS):
            how = f"{REPORT_COLLECT}, or {command}" if report else command
            notes.append(f"{source}: no FLOP or byte counters in the capture ({counted(found[0].launches, 'launch', 'launches')}): {how}")
            continue
        names = ", ".join(display(_TERM_KEY[g.quantity]) for g in found)
        work = [g for g in found if g.quantity in WORK_COLUMNS]
        # A kernel whose counted precisions are all zero keeps an unknown total: zero would claim no work at all.
        effect = ("FLOP totals add up the precisions counted, and stay unknown where those are all zero; the speed "
                  "of light leaves it out") if work else "the speed of light leaves it out"
        notes.append(f"{source}: the capture holds no counters for {names} (unknown on "
                     f"{'its one launch' if found[0].launches == 1 else f'all {found[0].launches} launches'}; {effect}); to count it: {command}")
    return notes


def unplaced_kernels(kernels: pd.DataFrame, launches: pd.DataFrame,
                     max_clock_hz: float | None = None) -> tuple[int, list[str]]:
    """How many kernels have no speed of light, and why: the launches without one, counted per cause (a kernel's
    headroom is unknown as soon as one of its launches' is)."""
    unknown = unplaced(kernels) if len(kernels) else np.zeros(0, dtype=bool)
    if not unknown.any():
        return 0, []
    rows = launches[unplaced(launches)]
    counted = rows[list(COUNTED_COLUMNS)].notna().any(axis=1).to_numpy()
    # a launch row aligned by name holds no values of its own: its kernel's sums tell the cause
    placeholder = is_by_name(rows["status"]) & ~counted
    rows, counted = rows[~placeholder], counted[~placeholder]
    reasons = []
    untimed = rows["time_s"].isna().to_numpy()
    if untimed.any():  # one part of a split capture (one metric per file) has counters and roofs but no duration
        reasons.append(f"{int(rows['launches'].to_numpy(dtype=np.int64)[untimed].sum())} launch(es) have no kernel "
                       "duration: the capture lacks the time counter (one part of a split capture? analyze the "
                       "folder holding all its parts)")
        timed = ~untimed & rows["t_sol_s"].isna().to_numpy()
        rows, counted = rows[timed], counted[timed]
    weight = rows["launches"].to_numpy(dtype=np.int64)
    if (~counted).any():
        reasons.append(f"{int(weight[~counted].sum())} launch(es) have no FLOP or byte counters (collect them: "
                       f"{REPORT_COLLECT}, or see `ncu-roofline metrics`)")
    source = rows["ceiling_source"].astype("object").fillna("none").astype(str).to_numpy()
    no_gpu = counted & (source == "none") & rows["device_name"].isna().to_numpy()
    if no_gpu.any():
        reasons.append(f"{int(weight[no_gpu].sum())} launch(es) have counters but no roofs: the export names no GPU "
                       f"(pass --gpu NAME{_candidates(rows['compute_capability'][no_gpu], max_clock_hz)}, "
                       "see `ncu-roofline ceilings`)")
    other = counted & ~no_gpu
    if other.any():
        where = sorted(set(rows["device_name"].astype("object").where(rows["device_name"].notna(), source)[other]
                           .astype(str)))
        reasons.append(f"{int(weight[other].sum())} launch(es) have counters but no roof for them ({', '.join(where)}:"
                       " pass --gpu NAME or --ceilings FILE.toml)")
    return int(unknown.sum()), reasons


def unplaced(rows: pd.DataFrame) -> np.ndarray:
    """Rows (kernels or launches) that cannot be placed on a roofline: no speed of light, or no time to set it
    against (then the roofline fraction and headroom are unknown too)."""
    return (rows["t_sol_s"].isna() | rows["time_s"].isna()).to_numpy()


def _candidates(capabilities: pd.Series, max_clock_hz: float | None = None) -> str:
    """'; CC 8.0: NVIDIA A100-SXM4-40GB, NVIDIA A100-SXM4-80GB, ...': the table's GPUs of each compute capability
    the export gives (a details-page export names only a device index and the CC); where one GPU has it, which."""
    from ..roofs.gpu_table import (
        load_gpu_table,  # the table is data; loaded only for this message
    )

    known = sorted({float(c) for c in pd.to_numeric(capabilities, errors="coerce").dropna()})
    if not known:
        return ""
    table = load_gpu_table()
    parts = []
    for cc in known:
        names = [g.name for g in table if g.compute_capability == cc]
        if len(names) == 1:
            parts.append(f"CC {cc:.1f}: only {names[0]!r} in the table has it")
        else:
            parts.append(f"CC {cc:.1f}: " + (", ".join(names) if names else "no GPU of the table")
                         + _by_clock([g for g in table if g.compute_capability == cc], max_clock_hz))
    return "; " + "; ".join(parts)


def _by_clock(gpus: list, max_clock_hz: float | None) -> str:
    """" (the export's maximum SM clock, 1440 MHz, narrows it to 'NVIDIA A30')": the GPUs whose table boost clock
    is the export's clock attribute (within 1 %), where that is fewer than all the candidates."""
    if not max_clock_hz or len(gpus) < 2:
        return ""
    match = [g.name for g in gpus if g.boost_clock_hz and abs(g.boost_clock_hz / max_clock_hz - 1) < 0.01]
    if not match or len(match) == len(gpus):
        return ""
    which = repr(match[0]) if len(match) == 1 else ", ".join(match)
    return f" (the export's maximum SM clock, {max_clock_hz / 1e6:.0f} MHz, narrows it to {which})"


def unplaced_note(kernels: pd.DataFrame, launches: pd.DataFrame, max_clock_hz: float | None = None) -> str | None:
    count, reasons = unplaced_kernels(kernels, launches, max_clock_hz)
    if not count:
        return None
    return f"{count} of {len(kernels)} kernels have no speed of light (headroom unknown): " + "; ".join(reasons)


def nothing_placed_message(kernels: pd.DataFrame, launches: pd.DataFrame, max_clock_hz: float | None = None) -> str:
    count, reasons = unplaced_kernels(kernels, launches, max_clock_hz)
    return (f"no kernel can be placed on a roofline ({count} kernel(s)): " + "; ".join(reasons)
            + " (--allow-empty writes the outputs anyway)")


def limiter_notes(launches: pd.DataFrame, reports: set[str], sections: tuple[str, ...]) -> list[str]:
    """One note per source file whose launches have an `unknown` limiter: the counters it lacks and the command that
    collects them (said once for the run, not on every launch)."""
    from .limiter import NOT_COLLECTED

    if "limiter" not in launches or not len(launches):
        return []
    # each launch's source file as a code (sorted, a null as ''): no text per launch, no copy of the frame
    codes, sources = sorted_codes(launches["source_file"])
    unknown = (launches["limiter"] == UNKNOWN_LIMITER).to_numpy(dtype=bool, na_value=False)
    totals = np.bincount(codes, minlength=len(sources))
    counts = np.bincount(codes[unknown], minlength=len(sources))
    notes = []
    for code in np.flatnonzero(counts):
        source = sources[code]
        needs: list[str] = []
        evidence = launches["limiter_evidence"][unknown & (codes == code)]  # a Categorical: its few texts
        texts = evidence.cat.remove_unused_categories().cat.categories if isinstance(
            evidence.dtype, pd.CategoricalDtype) else pd.unique(evidence.astype("object").dropna())
        for text in texts:
            needs.extend(str(text).removeprefix(NOT_COLLECTED).split(", "))
        needs = list(dict.fromkeys(needs))
        total, rows = int(totals[code]), int(counts[code])
        report = source in reports
        how = (f"profile with `ncu --set full` (or {' '.join(f'--section {s}' for s in sections)}), or "
               f"{collect_command(needs, report=True)}" if report else collect_command(needs, report=False))
        notes.append(f"{source}: the limiter (why a kernel is slow) is unknown on {rows} of "
                     f"{counted(total, 'launch', 'launches')}: its counters were not collected; to collect them: "
                     f"{how} (`ncu-roofline metrics` lists them)")
    return notes


def ncu_agreement_note(kernels: pd.DataFrame) -> list[str]:
    """Where the reports hold NCU's own SpeedOfLight verdicts: on how many kernel groups our limiter agrees (the
    terminal marks the others with ≠)."""
    from .limiter import NCU_DIFFERS, agrees_with_ncu

    if "limiter_ncu" not in kernels or kernels["limiter_ncu"].isna().all():
        return []
    verdicts = [agrees_with_ncu(w, v) for w, v in zip(kernels["limiter"].astype("object"),
                                                      kernels["limiter_ncu"].astype("object"))]
    judged = [v for v in verdicts if v is not None]
    if not judged:
        return []
    differ = "" if all(judged) else f" (the others marked{NCU_DIFFERS}; `show RANK` gives NCU's findings)"
    return [f"the limiter agrees with Nsight Compute's own SpeedOfLight verdict on {sum(judged)} of "
            f"{counted(len(judged), 'kernel group', 'kernel groups')}{differ}"]
