"""The projection chart: each kernel's measured point on the profiled GPU's roofs and its projected points on every
target's roofs, one colour per GPU (as the model chart draws GPUs), an arrow from now to each projection.

The work is the same on every GPU (the projection's assumption), so a kernel keeps its DRAM intensity and moves
only in FLOP/s: flop_total / time on each target, once at the roof and once at the same roofline fraction. The
roofs, their labels and the points come from the chart kit's several-GPU roofline (render/chart/gpu_chart.py, the model chart's); this adds the arrows.
Kernels that did no FLOPs have no place on a roofline: the subtitle counts them (their numbers are in the table).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ...core.vocabulary import (AI_OFF_CHIP, BOUND_TARGET, COMPUTE_TERMS, TARGET, TENSOR_TERMS, TIME_AT_ROOF,
                                 TIME_SAME_EFFICIENCY, counted)
from ..chart import vegalite as vl
from ..chart.gpu_chart import model_chart

MODELS = {"time_s": "now", TIME_AT_ROOF: "at roof", TIME_SAME_EFFICIENCY: "same efficiency"}


def _compute_roof(measured: pd.DataFrame) -> pd.Series:
    """Per kernel group, the compute roof its FLOPs mostly run on: the precision with the most FLOPs, and where the
    capture splits tensor work by input type, that type's roof (FP8 work sits under the FP8 roof)."""
    terms = [t for t in (*COMPUTE_TERMS, *TENSOR_TERMS) if t.amount in measured.columns]
    flops = measured[[t.amount for t in terms]].fillna(0.0).to_numpy(dtype="float64")
    typed = np.array([t in TENSOR_TERMS for t in terms])
    split = flops[:, typed].sum(axis=1) > 0
    flops[:, [t.key == "tensor" for t in terms]] *= ~split[:, None]  # the pipe steps aside for its types
    keys = np.array([t.key for t in terms], dtype=object)
    return pd.Series(keys[flops.argmax(axis=1)], index=measured.index)


def chart_points(projected: pd.DataFrame, measured: pd.DataFrame, source_gpu: str, *, top: int = 20
                 ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """The points (model chart shape: name, gpu, ai, attainable_flop_per_s, ...), the arrows, and how many of the
    top kernel groups have no FLOPs to draw."""
    ranks = list(measured["rank"])[:top]
    kernels = measured[measured["rank"].isin(ranks)]
    drawable = kernels[(kernels["flop_total"] > 0) & (kernels[AI_OFF_CHIP] > 0)]
    roof = _compute_roof(drawable)
    info = drawable.assign(roof=roof)[["rank", "flop_total", AI_OFF_CHIP, "roof", "bound"]]
    now = info.assign(gpu=source_gpu, time=drawable["time_s"], model=MODELS["time_s"])
    moves = []
    for column in (TIME_AT_ROOF, TIME_SAME_EFFICIENCY):
        part = projected[["rank", TARGET, column, BOUND_TARGET]].rename(
            columns={TARGET: "gpu", column: "time", BOUND_TARGET: "bound"})
        part = part.merge(info.drop(columns="bound"), on="rank").assign(model=MODELS[column])
        moves.append(part[part["time"] > 0])
    points = pd.concat([now, *moves], ignore_index=True)
    points = points.assign(
        name=points["model"], ai=points[AI_OFF_CHIP], flop=points["flop_total"], bytes=points["flop_total"]
        / points[AI_OFF_CHIP], t_min_s=points["time"], attainable_flop_per_s=points["flop_total"] / points["time"],
        ridge_ai=np.nan, bound=points["bound"].astype(object))  # the tooltip's bound: on that GPU
    start = now[["rank", "flop_total", "time"]].rename(columns={"time": "time_now"})
    arrows = pd.concat(moves, ignore_index=True).merge(start, on=["rank", "flop_total"])
    arrows = pd.DataFrame({"x": arrows[AI_OFF_CHIP], "y": arrows["flop_total"] / arrows["time_now"],
                           "y2": arrows["flop_total"] / arrows["time"], "gpu": arrows["gpu"],
                           "model": arrows["model"], "label": "#" + arrows["rank"].astype(str)})
    # Side by side, a few pixels apart: every target's arrow starts at the same measured point and would hide the
    # shorter ones under the longest.
    order = {gpu: i for i, gpu in enumerate(dict.fromkeys(arrows["gpu"]))}
    arrows["dodge_px"] = (arrows["gpu"].map(order) - (len(order) - 1) / 2) * ARROW_GAP_PX
    return points, arrows, int(len(kernels) - len(drawable))


ARROW_GAP_PX = 5


def projection_chart(projected: pd.DataFrame, measured: pd.DataFrame, source_gpu: str,
                     source_peaks: Mapping[str, float], peaks_by_gpu: Mapping[str, Mapping[str, float]], *,
                     top: int = 20) -> vl.Spec:
    """Roofs of the profiled GPU and every target, the measured and projected points, arrows between them."""
    points, arrows, no_flop = chart_points(projected, measured, source_gpu, top=top)
    gpus = {source_gpu: dict(source_peaks), **{k: dict(v) for k, v in peaks_by_gpu.items() if k != source_gpu}}
    subtitle = [f"Measured on {source_gpu}, projected onto {', '.join(g for g in peaks_by_gpu)}",
                "the same FLOPs and bytes, at the roof and at the roofline fraction measured"]
    if no_flop:
        subtitle.append(f"{counted(no_flop, 'kernel group')} of the top {top} did no FLOPs: not drawn "
                        "(see the table)")
    spec = model_chart(points, gpus, title="Projection onto other GPUs", subtitle=subtitle)
    xy = spec["layer"][-1]["encoding"]
    xy["shape"]["title"] = "model"
    rule = {"data": {"name": "arrows"}, "mark": {"type": "rule", "clip": True, "strokeWidth": 1.5,
                                                "strokeDash": [4, 2], "opacity": 0.8,
                                                "xOffset": {"expr": "datum.dodge_px"}},
            "encoding": {"x": xy["x"], "y": xy["y"], "y2": {"field": "y2"}, "color": xy["color"],
                         "tooltip": vl.tooltip([("label:N", "kernel"), ("gpu:N", "GPU"), ("model:N", "model")])}}
    labels = {"data": {"name": "arrows"}, "transform": [{"filter": "datum.model == 'at roof'"}],
              "mark": {"type": "text", "clip": True, "align": "left", "dx": 7, "fontSize": 10},
              "encoding": {"x": xy["x"], "y": {**xy["y"], "field": "y2"}, "text": vl.channel("label:N"),
                           "color": xy["color"]}}
    spec["layer"] = [*spec["layer"][:-1], rule, spec["layer"][-1], labels]
    spec["datasets"]["arrows"] = vl.records(arrows)
    return spec
