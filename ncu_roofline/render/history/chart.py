"""The trend chart of `history -o DIR`: one line per top kernel (time over runs, runs on x in run order), with
the noise band the gates judge against drawn behind each line over the window it was taken from. Times are drawn
in one unit chosen from the data (ns, µs, ms or s: `numbers.time_scale`), the axis, tooltips and bands alike. A
Vega-Lite spec written as plain data, like every chart here (render/chart/vegalite.py says why)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..chart import vegalite as vl
from ..text.numbers import time_scale
from .console import summary_labels

CHART_STEM = "history"
FAILED_COLOUR = "#b00020"  # as compare.html marks what failed the job
WIDTH_PX = 640
HEIGHT_PX = 360


def run_names(runs: pd.DataFrame, label_key: str | None) -> dict[str, str]:
    """run_id -> what the chart calls the run: its `--label` value under `label_key` (a commit sha: the first 8
    characters), else its id; a name two runs share carries the id too, so every run keeps its own place."""
    names = {}
    for run_id, labels in zip(runs["run_id"].astype(str), runs["labels"] if "labels" in runs else [None] * len(runs)):
        try:
            value = json.loads(labels).get(label_key) if label_key and isinstance(labels, str) else None
        except (ValueError, AttributeError):
            value = None
        names[run_id] = (str(value)[:8] if label_key == "sha" else str(value)) if value not in (None, "") else run_id
    counts = pd.Series(list(names.values())).value_counts()
    return {r: n if counts[n] == 1 or n == r else f"{n} ({r})" for r, n in names.items()}


def failing_series(summary: pd.DataFrame, gates: list) -> dict[object, list[str]]:
    """series_id -> the gates its kernel failed in the newest run (matched on name, grid and block)."""
    by_identity = {(str(n), str(g), str(b)): sid for sid, n, g, b in
                   zip(summary["series_id"], summary["kernel_name"], summary["grid"], summary["block"])}
    failed: dict[object, list[str]] = {}
    for result in gates or []:
        for failure in result.failures:
            sid = by_identity.get((str(failure.get("kernel_name")), str(failure.get("grid")),
                                   str(failure.get("block"))))
            if sid is not None:
                failed.setdefault(sid, []).append(result.gate.text)
    return failed


def history_chart(summary: pd.DataFrame, series: pd.DataFrame, runs: pd.DataFrame, *, top: int = 10,
                  window: int = 10, band_name: str = "mad", gates: list | None = None,
                  label_key: str | None = None) -> vl.Spec:
    """`summary` (ordered, with `band_low`/`band_high`), `series` (long rows), `runs` (oldest first); `gates`
    (GateResults) marks the newest run of each kernel that failed one; `label_key` names the runs on the x axis by
    that `--label` (`sha`)."""
    failed = failing_series(summary, gates)
    ids = summary["series_id"].tolist()
    # the failing kernels first: a top-N cut never hides what failed the job
    picked = [i for i, sid in enumerate(ids) if sid in failed] + [i for i, sid in enumerate(ids) if sid not in failed]
    picked = picked[:max(top, sum(sid in failed for sid in ids))]
    labels = summary_labels(summary)  # the terminal's name: two groups never share one
    shown = summary.iloc[picked].copy()
    shown["label"] = [labels[i] for i in picked]
    names = run_names(runs, label_key)
    run_order = [names[r] for r in runs["run_id"].astype(str)]
    points = series[series["series_id"].isin(shown["series_id"])].merge(
        shown[["series_id", "label"]], on="series_id")
    newest_id = str(runs["run_id"].iat[-1]) if len(runs) else None
    points = points.assign(kernel=points["kernel_name"].astype(str),
                           failed=[sid in failed and str(r) == newest_id
                                   for sid, r in zip(points["series_id"], points["run_id"])],
                           gates=[", ".join(failed.get(sid, [])) if str(r) == newest_id else ""
                                  for sid, r in zip(points["series_id"], points["run_id"])],
                           run=points["run_id"].astype(str),
                           run_id=points["run_id"].astype(str).map(names))[
        ["label", "kernel", "run", "run_id", "run_index", "time_s", "roofline_fraction", "bound", "failed",
         "gates"]]
    points = points[points["time_s"] > 0]
    newest = len(run_order) - 1
    band_runs = list(range(max(0, newest - window), newest + 1))
    bands = pd.DataFrame([{"label": row.label, "run_id": run_order[i], "band_low": row.band_low,
                           "band_high": row.band_high} for row in shown.itertuples(index=False)
                          for i in band_runs if np.isfinite(row.band_low) and np.isfinite(row.band_high)
                          and row.band_low > 0],
                         columns=["label", "run_id", "band_low", "band_high"])
    # One unit for everything on the y axis, from the largest value drawn (a line's or a band's top).
    unit, factor = time_scale([*points["time_s"], *bands["band_high"]])
    points = points.assign(time_scaled=points["time_s"] * factor)  # `_s` columns stay in seconds
    bands = bands.assign(band_low_scaled=bands["band_low"] * factor, band_high_scaled=bands["band_high"] * factor)
    x = vl.channel("run_id:O", sort=run_order, title=f"run by {label_key} (oldest → newest)" if label_key
                   else "run (oldest → newest)",
                   axis={"labelAngle": -45, "labelOverlap": True})
    # one legend for both layers, drawn opaque (the band's opacity would otherwise fade its symbols)
    colour = vl.channel("label:N", title="kernel", sort=shown["label"].tolist(),
                        legend={"symbolOpacity": 1, "symbolType": "stroke", "symbolStrokeWidth": 3})
    y_scale = vl.log_scale(None, nice=False, padding=12)  # fit the drawn times, not whole decades
    band_title = "min–max" if band_name == "minmax" else "median ± k·MAD"
    band = {
        "data": {"name": "bands"}, "mark": {"type": "area", "opacity": 0.15},
        "encoding": {"x": x, "y": vl.channel("band_low_scaled:Q", scale=y_scale), "y2": {"field": "band_high_scaled"},
                     "color": colour,
                     "tooltip": vl.tooltip([("label:N", "kernel"), ("band_low_scaled:Q", f"band low ({unit})"),
                                            ("band_high_scaled:Q", f"band high ({unit})")],
                                           band_low_scaled=".3~g", band_high_scaled=".3~g")},
    }
    # The band's edges as lines too: a band of zero spread (every run in the window the same) is a line, not
    # nothing.
    edges = [{"data": {"name": "bands"}, "mark": {"type": "line", "strokeDash": [4, 3], "opacity": 0.6,
                                                  "strokeWidth": 1},
              "encoding": {"x": x, "y": vl.channel(f"{edge}:Q", scale=y_scale), "color": colour}}
             for edge in ("band_low_scaled", "band_high_scaled")]
    marks = {  # the newest run of a kernel that failed a gate: a red cross on its point
        "data": {"name": "times"}, "transform": [{"filter": "datum.failed"}],
        "mark": {"type": "point", "shape": "cross", "size": 220, "filled": True, "color": FAILED_COLOUR,
                 "angle": 45},
        "encoding": {"x": x, "y": vl.channel("time_scaled:Q", scale=y_scale),
                     "tooltip": vl.tooltip([("kernel:N", "kernel"), ("run:N", "run id"), ("gates:N", "failed"),
                                            ("time_scaled:Q", f"time ({unit})")], time_scaled=".3~g")},
    }
    lines = {
        "data": {"name": "times"},
        "mark": {"type": "line", "point": len(run_order) <= 60},  # markers while they stay apart
        "encoding": {
            "x": x, "y": vl.channel("time_scaled:Q", scale=y_scale, title=f"GPU time per run ({unit}, log)",
                                    axis={"format": "~g"}),
            "color": colour,
            "tooltip": vl.tooltip([("kernel:N", "kernel"), ("run_id:N", "run"), ("run:N", "run id"),
                                   ("time_scaled:Q", f"time ({unit})"),
                                   ("roofline_fraction:Q", "of roof"), ("bound:N", "bound")],
                                  time_scaled=".3~g", roofline_fraction=".1%"),
        },
    }
    text = [f"Kernel time over {len(run_order)} runs — top {len(shown)} by change"]
    failing = [f"{row.label} ({', '.join(failed[row.series_id])})" for row in shown.itertuples(index=False)
               if row.series_id in failed]
    if failing:  # what failed the job, in the title's own lines: above the fold in the page and in every image
        text.append(f"✗ gate failed in run {run_order[-1]}: " + "; ".join(failing[:3])
                    + (f"; and {len(failing) - 3} more" if len(failing) > 3 else ""))
    title = {"text": text, "subtitle": f"band: {band_title} of the {min(window, newest)} runs before the newest"
                                       " (dashed: its edges; one line where the runs did not vary)",
             **({"color": FAILED_COLOUR} if failing else {})}
    return vl.top_level({"layer": [band, *edges, lines, marks], "width": WIDTH_PX, "height": HEIGHT_PX,
                         "title": title}, {"bands": bands, "times": points})
