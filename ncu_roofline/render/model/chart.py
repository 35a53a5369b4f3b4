"""The analytic roofline: model points on one or several GPUs' roofs, one colour per GPU.

Takes the placed points (model.place) and each GPU's peaks as plain data; knows nothing of ncu. Each GPU gets
its DRAM diagonal and the compute roofs its points run on; each point sits on its GPU's roofline at
(ai, attainable FLOP/s), shaped by workload, so "the same decode step on A100, H100, H200" is one picture.
The chart is a Vega-Lite spec written as plain data (render/vegalite.py says why); files go through
`chart_files.write_chart` (spec, offline HTML, SVG/PNG).
"""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ...core.vocabulary import display
from ...roofs.peaks import compute_peak, memory_peak
from .. import vegalite as vl
from ..analysis.chart import ROOFLINE_HEIGHT_PX, ROOFLINE_WIDTH_PX, format_si, roofline_xy
from ..layout import decade_above, decade_below

GPU_COLOURS = ("#4c78a8", "#e45756", "#54a24b", "#b279a2", "#f58518", "#72b7b2", "#9d755d", "#eeca3b")
POINT_SHAPES = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-left",
                "triangle-right", "wedge", "stroke")


def model_roof_frames(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]]
                      ) -> tuple[pd.DataFrame, tuple[float, float], tuple[float, float]]:
    """Line ends of every GPU's DRAM diagonal and of the compute roofs its points use, and the axis domains."""
    drawn = points[points["attainable_flop_per_s"].notna() & (points["ai"] > 0)]
    roofs_used = {gpu: sorted(set(drawn.loc[drawn["gpu"] == gpu, "roof"])) for gpu in peaks_by_gpu}
    tops = {gpu: [p for p in (compute_peak(peaks, k) for k in roofs_used[gpu]) if p] for gpu, peaks in
            peaks_by_gpu.items()}
    drams = {gpu: memory_peak(peaks, "dram") for gpu, peaks in peaks_by_gpu.items()}
    xs = [*drawn["ai"]] + [max(t) / d for gpu, t in tops.items() if t and (d := drams[gpu])]
    ys = [*drawn["attainable_flop_per_s"]] + [p for t in tops.values() for p in t]
    xs, ys = xs or [1.0], ys or [1e12]
    x_domain = (decade_below(min(xs) / 3), decade_above(max(xs) * 3))
    y_domain = (decade_below(min(ys) / 3), decade_above(max(ys) * 3))
    rows = []
    for gpu, peaks in peaks_by_gpu.items():
        dram, top = drams[gpu], max(tops[gpu], default=None)
        if dram and top:
            label = f"{gpu} DRAM {format_si(dram, 'B/s')}"
            for x in (max(x_domain[0], y_domain[0] / dram), top / dram):
                rows.append({"gpu": gpu, "roof": label, "x": x, "y": dram * x, "label": label})
        for key in roofs_used[gpu]:
            peak = compute_peak(peaks, key)
            if not peak:
                continue
            label = f"{display(key)} {format_si(peak, 'FLOP/s')}"
            start = peak / dram if dram else x_domain[0]
            for x in (start, x_domain[1]):
                rows.append({"gpu": gpu, "roof": f"{gpu} {label}", "x": x, "y": peak, "label": label})
    return pd.DataFrame(rows, columns=["gpu", "roof", "x", "y", "label"]), x_domain, y_domain


LABEL_HEIGHT_PX = 12


def stacked_labels(roofs: pd.DataFrame, x_domain: tuple[float, float], y_domain: tuple[float, float]) -> pd.DataFrame:
    """Compute-roof labels at the right edge, each just above its roof unless that would overlap the label above
    it; then it moves down just enough. Several GPUs have roofs a few percent apart (H100 FP32 66.9, B200 FP32 75,
    A100 FP16 78 TFLOP/s): the labels then read as a column, each in its GPU's colour."""
    labels = roofs[(roofs["x"] == x_domain[1]) & ~roofs["roof"].str.contains(" DRAM ")]
    labels = labels.sort_values("y", ascending=False, kind="stable").reset_index(drop=True)
    px_per_decade = ROOFLINE_HEIGHT_PX / math.log10(y_domain[1] / y_domain[0])
    heights = []
    floor = math.inf  # bottom (in px above the plot's floor) of the label placed last
    for y in labels["y"]:
        height = min(math.log10(y / y_domain[0]) * px_per_decade, floor - LABEL_HEIGHT_PX)
        heights.append(height)
        floor = height
    return labels.assign(y=[y_domain[0] * 10 ** (h / px_per_decade) for h in heights])


def model_chart(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]], *,
                title: str = "Analytic roofline", subtitle: list[str] | None = None) -> vl.Spec:
    """Roofs coloured by GPU, each point at its attainable FLOP/s on each GPU, shaped by workload."""
    roofs, x_domain, y_domain = model_roof_frames(points, peaks_by_gpu)
    gpus = list(peaks_by_gpu)
    names = list(dict.fromkeys(points["name"]))
    colour = vl.channel("gpu:N", title="GPU",
                        scale=vl.ordinal_scale(gpus, list(GPU_COLOURS[:len(gpus)]) or [GPU_COLOURS[0]]))
    xy = roofline_xy("x", "y", vl.log_scale(x_domain, nice=None), vl.log_scale(y_domain, nice=None), titled=True,
                     formatted=True)
    lines = {
        "data": {"name": "roofs"}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
        "encoding": {**xy, "detail": vl.channel("roof:N"), "color": colour,
                     "tooltip": vl.tooltip([("roof:N", "roof")])},
    }
    text_style = {"type": "text", "clip": True, "align": "right", "baseline": "bottom", "dx": -4, "dy": -2,
                  "fontSize": 10}
    halo = {  # keeps a label legible where it crosses another GPU's roof
        "data": {"name": "roof_labels"}, "mark": {**text_style, "stroke": "white", "strokeWidth": 3,
                                                  "strokeOpacity": 0.9},
        "encoding": {**xy, "text": vl.channel("label:N")},
    }
    roof_text = {"data": {"name": "roof_labels"}, "mark": text_style,
                 "encoding": {**xy, "text": vl.channel("label:N"), "color": colour}}
    shown = points[points["attainable_flop_per_s"].notna() & (points["ai"] > 0)].assign(
        x=lambda f: f["ai"], y=lambda f: f["attainable_flop_per_s"],
        attainable=lambda f: [format_si(v, "FLOP/s") for v in f["attainable_flop_per_s"]],
        time=lambda f: [format_si(v, "s") for v in f["t_min_s"]],
        flop_text=lambda f: [format_si(v, "FLOP") for v in f["flop"]],
        bytes_text=lambda f: [format_si(v, "B") for v in f["bytes"]],
        bound_text=lambda f: [display(b) for b in f["bound"]],
    )[["name", "gpu", "x", "y", "attainable", "time", "flop_text", "bytes_text", "ridge_ai", "bound_text"]]
    marks = {
        "data": {"name": "points"},
        "mark": {"type": "point", "clip": True, "filled": True, "size": 90, "stroke": "white", "strokeWidth": 0.5},
        "encoding": {
            **xy, "color": colour,
            "shape": vl.channel("name:N", title="workload",
                                scale=vl.ordinal_scale(names, [POINT_SHAPES[i % len(POINT_SHAPES)]
                                                               for i in range(len(names))])),
            "tooltip": vl.tooltip([("name:N", "workload"), ("gpu:N", "GPU"), ("flop_text:N", "FLOP"),
                                   ("bytes_text:N", "bytes"), ("x:Q", "AI (FLOP/B)"), ("attainable:N", "attainable"),
                                   ("time:N", "minimum time"), ("ridge_ai:Q", "ridge (FLOP/B)"),
                                   ("bound_text:N", "bound")], x=".3~g", ridge_ai=".3~g"),
        },
    }
    return vl.top_level({
        "layer": [lines, halo, roof_text, marks], "width": ROOFLINE_WIDTH_PX, "height": ROOFLINE_HEIGHT_PX,
        "title": {"text": title, "subtitle": subtitle or [], "anchor": "start"},
        "resolve": {"scale": {"shape": "independent"}},
    }, {"roofs": roofs, "roof_labels": stacked_labels(roofs, x_domain, y_domain), "points": shown})
