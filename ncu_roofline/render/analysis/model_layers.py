"""Analytic points on the measured roofline (`analyze --points`): the layers `chart.roofline_spec` adds.

Hollow markers at each point's (model AI, attainable FLOP/s on the run's roofs), one shape per point, and a dashed
segment from each to the DRAM point of every drawn kernel group its `kernel` regex matched.
"""

from __future__ import annotations

import pandas as pd

from ...core.vocabulary import DISPLAY, UNKNOWN_BOUND
from ..chart import vegalite as vl
from ..text.numbers import format_number as _format_number
from ..text.numbers import format_si
from ..text.numbers import positive as _positive

# Hollow, in shapes the memory levels (circle, square, triangle-up) do not use.
MODEL_SHAPES = ("diamond", "cross", "triangle-down", "triangle-left", "triangle-right", "wedge")


def drawable_model(model_points: pd.DataFrame | None) -> pd.DataFrame | None:
    """Analytic points (`analyze --points`) that a log-log chart can show: positive intensity and attainable."""
    if model_points is None or not len(model_points):
        return None
    frame = model_points.assign(flop_per_s=model_points["attainable_flop_per_s"])
    frame = frame[_positive(frame["ai"]) & _positive(frame["flop_per_s"])]
    return frame.reset_index() if len(frame) else None


def model_layers(model: pd.DataFrame, pairs: pd.DataFrame | None, drawn: pd.DataFrame, x_scale: vl.Spec,
                 y_scale: vl.Spec) -> tuple[list[vl.Spec], dict[str, pd.DataFrame]]:
    """Hollow markers at each point's (model AI, attainable FLOP/s) and a dashed segment to the DRAM point of
    every drawn kernel group its `kernel` regex matched: the gap between the paper and the profile.

    Returns the two layers and the datasets they read (`model_segments`, `model_points`)."""
    dram = drawn[drawn["level"] == DISPLAY["dram"]][["rank", "ai", "flop_per_s"]]
    ends = []
    if pairs is not None and len(pairs):
        joined = pairs.merge(model[["index", "ai", "flop_per_s"]], left_on="point", right_on="index").merge(
            dram, on="rank", suffixes=("_model", "_kernel"))
        for pair, row in enumerate(joined.itertuples(index=False)):
            ends += [{"pair": pair, "ai": row.ai_model, "flop_per_s": row.flop_per_s_model},
                     {"pair": pair, "ai": row.ai_kernel, "flop_per_s": row.flop_per_s_kernel}]
    xy = {"x": vl.channel("ai:Q", scale=x_scale), "y": vl.channel("flop_per_s:Q", scale=y_scale)}
    segments = {"data": {"name": "model_segments"},
                "mark": {"type": "line", "clip": True, "strokeWidth": 1.2, "strokeDash": [4, 3], "color": "#555555"},
                "encoding": {**xy, "detail": vl.channel("pair:N")}}
    shown = model.assign(ai_text=[_format_number(v) for v in model["ai"]],
                         attainable=[format_si(v, "FLOP/s") for v in model["flop_per_s"]],
                         bound_text=[DISPLAY.get(b, b) if isinstance(b, str) else UNKNOWN_BOUND
                                     for b in model["bound"]])[
        ["name", "ai", "flop_per_s", "ai_text", "attainable", "bound_text"]]
    names = list(dict.fromkeys(shown["name"]))
    markers = {
        "data": {"name": "model_points"},
        "mark": {"type": "point", "clip": True, "filled": False, "size": 120, "strokeWidth": 2, "color": "#222222"},
        "encoding": {
            **xy,
            "shape": vl.channel("name:N", title="model point (hollow)", sort=names,
                                scale=vl.ordinal_scale(names, [MODEL_SHAPES[i % len(MODEL_SHAPES)]
                                                               for i in range(len(names))])),
            "tooltip": vl.tooltip([("name:N", "model point"), ("ai_text:N", "model AI (FLOP/B)"),
                                   ("attainable:N", "attainable"), ("bound_text:N", "bound")]),
        },
    }
    return [segments, markers], {"model_segments": pd.DataFrame(ends, columns=["pair", "ai", "flop_per_s"]),
                                 "model_points": shown}
