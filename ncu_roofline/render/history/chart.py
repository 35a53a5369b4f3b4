"""The trend chart of `history -o DIR`: one line per top kernel (time over runs, runs on x in run order), with
the noise band the gates judge against drawn behind each line over the window it was taken from. Times are drawn
in one unit chosen from the data (ns, µs, ms or s: `numbers.time_scale`), the axis, tooltips and bands alike. A
Vega-Lite spec written as plain data, like every chart here (render/vegalite.py says why)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import vegalite as vl
from ..numbers import time_scale
from .console import summary_labels

CHART_STEM = "history"
WIDTH_PX = 640
HEIGHT_PX = 360


def history_chart(summary: pd.DataFrame, series: pd.DataFrame, runs: pd.DataFrame, *, top: int = 10,
                  window: int = 10, band_name: str = "mad") -> vl.Spec:
    """`summary` (ordered, with `band_low`/`band_high`), `series` (long rows), `runs` (oldest first)."""
    shown = summary.head(top).copy()
    shown["label"] = summary_labels(summary)[:len(shown)]  # the terminal's name: two groups never share one
    run_order = runs["run_id"].astype(str).tolist()
    points = series[series["series_id"].isin(shown["series_id"])].merge(
        shown[["series_id", "label"]], on="series_id")
    points = points.assign(run_id=points["run_id"].astype(str), kernel=points["kernel_name"].astype(str))[
        ["label", "kernel", "run_id", "run_index", "time_s", "roofline_fraction", "bound"]]
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
    x = vl.channel("run_id:O", sort=run_order, title="run (oldest → newest)",
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
    lines = {
        "data": {"name": "times"},
        "mark": {"type": "line", "point": len(run_order) <= 60},  # markers while they stay apart
        "encoding": {
            "x": x, "y": vl.channel("time_scaled:Q", scale=y_scale, title=f"GPU time per run ({unit}, log)",
                                    axis={"format": "~g"}),
            "color": colour,
            "tooltip": vl.tooltip([("kernel:N", "kernel"), ("run_id:N", "run"), ("time_scaled:Q", f"time ({unit})"),
                                   ("roofline_fraction:Q", "of roof"), ("bound:N", "bound")],
                                  time_scaled=".3~g", roofline_fraction=".1%"),
        },
    }
    title = {"text": f"Kernel time over {len(run_order)} runs — top {len(shown)} by change",
             "subtitle": f"band: {band_title} of the {min(window, newest)} runs before the newest"}
    return vl.top_level({"layer": [band, lines], "width": WIDTH_PX, "height": HEIGHT_PX, "title": title},
                        {"bands": bands, "times": points})
