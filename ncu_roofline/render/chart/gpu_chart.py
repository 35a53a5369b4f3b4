"""The analytic roofline: model points on one or several GPUs' roofs, one colour per GPU.

Takes the placed points (model.place) and each GPU's peaks as plain data; knows nothing of ncu. Each GPU gets
its DRAM diagonal and the compute roofs its points run on; each point sits on its GPU's roofline at
(ai, attainable FLOP/s), shaped by workload, so "the same decode step on A100, H100, H200" is one picture.
The chart is a Vega-Lite spec written as plain data (render/chart/vegalite.py says why); files go through
`chart_files.write_chart` (spec, offline HTML, SVG/PNG).
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...core.vocabulary import display
from . import vegalite as vl
from .roofline import ROOFLINE_HEIGHT_PX, ROOFLINE_WIDTH_PX, roofline_xy
from ..text.numbers import format_si
from .layout import ROOF_FONT
from .placement import Plot
from .gpu_roof_labels import POINT_SIZE, model_roof_segments, place_model_labels, roof_lines

GPU_COLOURS = ("#4c78a8", "#e45756", "#54a24b", "#b279a2", "#f58518", "#72b7b2", "#9d755d", "#eeca3b")
POINT_SHAPES = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-left",
                "triangle-right", "wedge", "stroke")


def model_chart(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]], *,
                title: str = "Analytic roofline", subtitle: list[str] | None = None) -> vl.Spec:
    """Roofs coloured by GPU, each labelled along its line with its GPU and value; each point at its attainable
    FLOP/s on each GPU, shaped by workload."""
    segments, x_domain, y_domain = model_roof_segments(points, peaks_by_gpu)
    roofs = roof_lines(segments)
    gpus = list(peaks_by_gpu)
    names = list(dict.fromkeys(points["name"]))
    colour = vl.channel("gpu:N", title="GPU",
                        scale=vl.ordinal_scale(gpus, list(GPU_COLOURS[:len(gpus)]) or [GPU_COLOURS[0]]))
    # nice=False: the drawn domain is the one the labels were placed on
    xy = roofline_xy("x", "y", vl.log_scale(x_domain), vl.log_scale(y_domain), titled=True, formatted=True)
    lines = {
        "data": {"name": "roofs"}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
        "encoding": {**xy, "detail": vl.channel("roof:N"), "color": colour,
                     "tooltip": vl.tooltip([("label:N", "roof"), ("gpu:N", "GPU")])},
    }
    # Centred on the spot placed for it (roof_labels.py), turned along a diagonal: the box placed is the box drawn.
    text_style = {"type": "text", "clip": True, "align": "center", "baseline": "middle", "fontSize": ROOF_FONT,
                  "fontWeight": "bold"}
    text = {**xy, "text": vl.channel("label:N"), "angle": vl.channel("angle:Q", scale=None)}
    # A white halo keeps a label legible where it crosses another GPU's roof; round joins, since mitred ones spike
    # out of sharp glyph corners (the M of "DRAM") and cut the label's own line.
    halo = {"data": {"name": "roof_labels"}, "encoding": text,
            "mark": {**text_style, "color": "white", "stroke": "white", "strokeJoin": "round", "strokeWidth": 3,
                     "strokeOpacity": 0.9}}
    roof_text = {"data": {"name": "roof_labels"}, "mark": text_style, "encoding": {**text, "color": colour}}
    labels_by_roof = {(seg["gpu"], seg["roof"]): seg["label"] for seg in segments}
    shown = points[points["attainable_flop_per_s"].notna() & (points["ai"] > 0)].assign(
        x=lambda f: f["ai"], y=lambda f: f["attainable_flop_per_s"],
        attainable=lambda f: [format_si(v, "FLOP/s") for v in f["attainable_flop_per_s"]],
        time=lambda f: [format_si(v, "s") for v in f["t_min_s"]],
        flop_text=lambda f: [format_si(v, "FLOP") for v in f["flop"]],
        bytes_text=lambda f: [format_si(v, "B") for v in f["bytes"]],
        bound_text=lambda f: [display(b) for b in f["bound"]],
        on_roof=lambda f: [_roof_of(labels_by_roof, gpu, "dram" if bound == "dram" else roof)
                           for gpu, bound, roof in zip(f["gpu"], f["bound"], f["roof"])],
    )[["name", "gpu", "x", "y", "attainable", "time", "flop_text", "bytes_text", "ridge_ai", "bound_text", "on_roof"]]
    marks = {
        "data": {"name": "points"},
        "mark": {"type": "point", "clip": True, "filled": True, "size": POINT_SIZE, "stroke": "white", "strokeWidth": 0.5},
        "encoding": {
            **xy, "color": colour,
            "shape": vl.channel("name:N", title="workload",
                                scale=vl.ordinal_scale(names, [POINT_SHAPES[i % len(POINT_SHAPES)]
                                                               for i in range(len(names))])),
            "tooltip": vl.tooltip([("name:N", "workload"), ("gpu:N", "GPU"), ("flop_text:N", "FLOP"),
                                   ("bytes_text:N", "bytes"), ("x:Q", "AI (FLOP/B)"), ("attainable:N", "attainable"),
                                   ("time:N", "minimum time"), ("ridge_ai:Q", "ridge (FLOP/B)"),
                                   ("bound_text:N", "bound"), ("on_roof:N", "roof")], x=".3~g", ridge_ai=".3~g"),
        },
    }
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, x_domain, y_domain)
    roof_labels, unlabelled = place_model_labels(plot, segments, shown[["x", "y"]].to_numpy(dtype=float))
    notes = [f"No room for the label of {', '.join(unlabelled)} (see the line's tooltip)"] if unlabelled else []
    return vl.top_level({
        "layer": [lines, halo, roof_text, marks], "width": ROOFLINE_WIDTH_PX, "height": ROOFLINE_HEIGHT_PX,
        "title": {"text": title, "subtitle": [*(subtitle or []), *notes], "anchor": "start"},
        "resolve": {"scale": {"shape": "independent"}},
    }, {"roofs": roofs, "roof_labels": roof_labels, "points": shown})


def _roof_of(labels: Mapping[tuple[str, str], str], gpu: str, roof: object) -> str:
    """The drawn label of the roof a point sits under (its DRAM diagonal when DRAM-bound), or '—'."""
    return labels.get((gpu, str(roof)), "—")
