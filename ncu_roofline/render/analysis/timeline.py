"""What `--nsys` adds to the terminal, the Markdown and the chart: the profile's share of the run, said first, and
the kernels Nsight Systems saw that the profile never reached (pipeline/app_weight.py computes both)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from ...core.vocabulary import APP_LAUNCHES, APP_MATCH, APP_TIME, APP_TIME_SHARE, counted
from ...pipeline.app_weight import AppWeighting
from ..text.numbers import format_si, pct


def coverage_sentence(app: AppWeighting) -> str:
    """'The profile covers 75.0% of the run's GPU time (…); ranked by app_headroom_s, …'."""
    share = pct(app.profiled_share) if pd.notna(app.profiled_share) or pd.isna(app.profiled_share_low) else \
        f"between {pct(app.profiled_share_low)} and {pct(app.profiled_share_high)} (ambiguous names)"
    return (f"The profile covers {share} of the run's GPU time ({format_si(app.app_gpu_time_s, 's')} of kernels in "
            "the Nsight Systems timeline)" + ("; ranked by app_headroom_s, the time recoverable over the whole run"
                                              if app.ranked else ""))


def match_line(app: AppWeighting, *, top: int = 10) -> str | None:
    """How the groups' names were found in the timeline where not character for character, by outcome, citing
    the table's ranks: 'Timeline names: normalised #1, #2; ambiguous #5 (see notes)'; None when all exact."""
    kernels = app.kernels.sort_values("rank")
    parts = []
    for outcome, frame in kernels.groupby(kernels[APP_MATCH].astype("object"), sort=False):
        if outcome == "exact":
            continue
        ranks = [f"#{r}" for r in frame["rank"].tolist()]
        parts.append(f"{outcome} {', '.join(ranks[:top])}" + (f" and {len(ranks) - top} more" if len(ranks) > top
                                                             else ""))
    return "Timeline names matched other than exactly: " + "; ".join(parts) + " (see notes)" if parts else None


def unprofiled_lines(app: AppWeighting, *, top: int = 5, name: Callable[[str], str] = str) -> list[str]:
    """The largest kernels the profile never reached, one line each: time, share of the run, launches, name (as
    `name` writes it: Markdown puts it in code)."""
    matched = [line] if (line := match_line(app)) else []
    if not len(app.unprofiled):
        return [*matched, "Every kernel of the timeline was profiled."
                + ("" if pd.notna(app.profiled_share) else " or is a candidate of an ambiguous name")]
    rows = app.unprofiled.head(top)
    lines = [*matched, f"Not profiled: {counted(len(app.unprofiled), 'kernel')} of the timeline, largest first"
             + (f" (top {len(rows)})" if len(rows) < len(app.unprofiled) else "") + ":"]
    lines += [f"  {format_si(getattr(r, APP_TIME), 's')}  {_share(getattr(r, APP_TIME_SHARE))}  "
              f"{counted(int(getattr(r, APP_LAUNCHES)), 'launch', 'launches')}  {name(str(r.name))}"
              + ("" if r.grid is pd.NA or r.grid is None else f"  grid {r.grid} block {r.block}")
              for r in rows.itertuples(index=False)]
    return lines


def _share(value: float) -> str:
    """A share of the run's GPU time, '—' where it is unknown (a timeline whose kernels total no time)."""
    return pct(value)
