"""`load_history(DIR) -> History`: the library half of `ncu-roofline history`.

read (DuckDB over the dataset) -> filter runs (labels, last N) -> match kernels into series -> summarise ->
noise-aware gates. Nothing here prints; `render/history_*.py` turn a History into a table, Markdown, JSON or a
chart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.patterns import Pattern, compile_regex
from ..pipeline.gates import Gate, GateResult, parse_gate
from ..pipeline.select import name_mask
from .bands import BandOptions, bands, judge
from .series import IDENTITY, VALUES, assign_series, summarise, wide_values
from .views import connect, read_kernel_rows, read_runs


@dataclass
class History:
    """Runs (oldest first), the per-kernel series, their summary and the gate results.

    `series`: one row per (kernel series, run) with `series_id`, `run_index`, `run_id`, the kernel's identity and
    VALUES. `summary`: one row per series (see `history_series.summarise`), with `band_low`/`band_high` of
    `time_s` over the window before the newest run. `gate_tables`: per gate text, one row per judged series.
    """

    runs: pd.DataFrame
    series: pd.DataFrame
    summary: pd.DataFrame
    gates: list[GateResult]
    gate_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    options: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # runs left out of the history (damaged, ambiguous), one line each

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.gates)

    @property
    def newest_run_id(self) -> str | None:
        return str(self.runs["run_id"].iloc[-1]) if len(self.runs) else None

    def metadata(self) -> dict[str, str]:
        """Plain metadata for the renderers: the options and the runs shown; no clock time."""
        from ..core.version import __version__

        return {"ncu_roofline.tool_version": __version__,
                "ncu_roofline.history.options": json.dumps(self.options, sort_keys=True, default=str),
                "ncu_roofline.history.runs": json.dumps([str(r) for r in self.runs["run_id"]])}


def load_history(directory: str | Path, *, kernel: str | None = None, last: int | None = None,
                 labels: Mapping[str, str] | None = None, gates: Iterable[Gate | str] = (),
                 band: BandOptions | None = None, min_time_s: float = 0.0) -> History:
    """Read the dataset in `directory` and build the History (see the module docstring).

    `kernel` (a regular expression searched in the recorded and the display name, as `analyze --kernel`) keeps matching series; `last` keeps the
    newest N runs; `labels` keeps runs carrying all the given label values. Gates judge the newest run shown.
    """
    band = band or BandOptions()
    parsed = [g if isinstance(g, Gate) else parse_gate(g) for g in gates]
    pattern = _regex(kernel)
    if last is not None and last < 1:
        raise InputError(None, f"--last must be at least 1, not {last}")
    notes: list[str] = []
    con = connect(directory, notes=notes, tables=("kernels",))  # the launches are not needed here
    try:
        runs = read_runs(con, labels=labels, last=last)
        if runs.empty:
            raise InputError(directory, "no run matches the --label filter" if labels else "holds no runs")
        rows = read_kernel_rows(con, runs["run_id"].tolist(), (*IDENTITY, *VALUES))
    finally:
        con.close()
    series = assign_series(rows, runs)
    # run totals (before the --kernel filter: a total is the whole run's), only when a total gate needs them
    totals = _totals(series, runs) if any(g.scope == "total" for g in parsed) else None
    if pattern is not None:
        series = series[name_mask(series, pattern)].reset_index(drop=True)
        if series.empty:  # a typo must not pass a gate with nothing checked
            raise InputError(directory, f"no kernel name matches --kernel {kernel!r}")
    summary = summarise(series, runs)
    run_ids = runs["run_id"].astype(str).tolist()
    time_wide = wide_values(series, "time_s", len(runs))
    window = time_wide.to_numpy(dtype="float64")[:, max(0, len(runs) - 1 - band.window):len(runs) - 1]
    low, high = bands(window, band)
    time_bands = pd.DataFrame({"band_low": low, "band_high": high}, index=time_wide.index)
    summary = summary.join(time_bands, on="series_id") if len(summary) else summary
    identity = summary.set_index("series_id") if len(summary) else pd.DataFrame()
    results, tables = [], {}
    for gate in parsed:
        if gate.scope == "total":
            wide = pd.DataFrame([totals[gate.metric].to_numpy()], index=pd.Index([-1], name="series_id"))
            result, table = judge(gate, wide, pd.DataFrame(), run_ids, band)
        else:
            wide = wide_values(series, gate.metric, len(runs))
            newest_time = time_wide.iloc[:, -1] if len(time_wide) else pd.Series(dtype="float64")
            wide = wide[(newest_time.reindex(wide.index) >= min_time_s).to_numpy() | (min_time_s <= 0)]
            result, table = judge(gate, wide, identity, run_ids, band)
        results.append(result)
        tables[gate.text] = table
    options = {"kernel": kernel, "last": last, "labels": dict(labels or {}), "window": band.window,
               "band": band.band, "k": band.k, "min_time_s": float(min_time_s), "gates": [g.text for g in parsed]}
    return History(runs=runs, series=series, summary=summary, gates=results, gate_tables=tables, options=options,
                   notes=notes)


def _totals(series: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`pipeline.totals.run_totals` of each run (one row per run, oldest first): what `total:` gates judge.
    Imported here: only a total gate needs it, and it brings the analysis pipeline's modules."""
    from ..pipeline.totals import run_totals

    per_run = {index: run_totals(rows) for index, rows in series.groupby("run_index", sort=True)}
    return pd.DataFrame.from_dict(per_run, orient="index", dtype="float64").reindex(range(len(runs))).assign(
        ai_dram=np.nan)  # no run-wide intensity: a total:ai_dram gate is skipped


def _regex(text: str | None) -> Pattern | None:
    return compile_regex(text, f"--kernel {text!r}") if text else None
