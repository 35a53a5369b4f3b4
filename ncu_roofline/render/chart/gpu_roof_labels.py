"""The model chart's roofs and where their labels go, placed as the roofline's are (render/chart/placement.py).

Each GPU has its DRAM diagonal (from the plot's lower or left edge up to its highest drawn compute roof) and the
compute roofs its points run on (from that GPU's ridge to the right edge). Every roof gets a label naming its GPU,
roof and value ("H100 DRAM 3.35 TB/s", "H200 Tensor FP16 989 TFLOP/s"), in the GPU's colour, lying along its
roof (a diagonal's label turned with it) where its box meets no point and no other label: the same `Board` and
`place_roof_label` the roofline's labels use, so two GPUs whose roofs coincide (H100 and H200 share FP32 66.9
TFLOP/s) get two labels side by side on the one line rather than one on top of the other. The line's tooltip
reads the label's own text: one formatter, one number.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.vocabulary import display
from ...roofs.peaks import compute_peak, memory_peak
from .layout import ROOF_FONT, decade_above, decade_below, roof_segments
from ..text.numbers import format_si
from .placement import Board, Plot, box, place_roof_label, text_size

POINT_SIZE = 90  # the points' symbol area (px²), as the chart draws them
# A symbol's disc on the board, reckoned as layout.place_texts reckons the roofline's (area → radius, plus a rim).
POINT_RADIUS_PX = 0.62 * math.sqrt(POINT_SIZE) + 1.5
LINE_STEP_PX, LINE_RADIUS_PX = 1.5, 1.0  # roof lines as obstacles: see _line_discs
_VENDOR = re.compile(r"^(?:NVIDIA\s+)?(?:Tesla\s+|GeForce\s+|Quadro\s+)?", re.IGNORECASE)

ROOF_COLUMNS = ["gpu", "roof", "kind", "peak", "x", "y", "label"]
LABEL_COLUMNS = ["gpu", "roof", "kind", "peak", "x", "y", "angle", "label"]


def short_gpu_names(names: Sequence[str]) -> dict[str, str]:
    """Short names for roof labels, distinct among the GPUs drawn: the model word ("NVIDIA H100 80GB HBM3" →
    "H100", "NVIDIA A100-SXM4-80GB" → "A100"); GPUs that share it (A100 40GB and 80GB) get the name without the
    vendor ("A100-SXM4-40GB"), the others keep theirs; where that is still ambiguous, the full names. The legend
    gives every name whole."""
    stripped = {name: _VENDOR.sub("", name).strip() or name for name in names}
    word = {name: re.split(r"[\s\-]", short, maxsplit=1)[0] or short for name, short in stripped.items()}
    shared = Counter(word.values())
    short = {name: stripped[name] if shared[word[name]] > 1 else word[name] for name in names}
    return short if len(set(short.values())) == len(short) else {name: name for name in names}


def model_roof_segments(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]]
                        ) -> tuple[list[dict[str, Any]], tuple[float, float], tuple[float, float]]:
    """Every GPU's DRAM diagonal and the compute roofs its points use (ends in data coordinates, with the label's
    text), compute roofs first; and the axis domains, in whole decades around the points and every ridge."""
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
    short = short_gpu_names(list(peaks_by_gpu))
    compute, memory = [], []
    for gpu, peaks in peaks_by_gpu.items():  # each GPU's roofs cut to the axes as the roofline cuts its own
        dram = drams[gpu]
        roofs = {key: peak for key in roofs_used[gpu] if (peak := compute_peak(peaks, key))}
        for segment in roof_segments(roofs, {"dram": dram} if dram and roofs else {}, x_domain, y_domain):
            key = segment.pop("key")
            unit = "FLOP/s" if segment["kind"] == "compute" else "B/s"
            row = {"gpu": gpu, "roof": key, **segment,
                   "label": f"{short[gpu]} {display(key)} {format_si(segment['peak'], unit)}"}
            (compute if segment["kind"] == "compute" else memory).append(row)
    return [*compute, *memory], x_domain, y_domain


def roof_lines(segments: list[dict[str, Any]]) -> pd.DataFrame:
    """Two rows (the ends) per roof, each carrying the roof's label for its tooltip."""
    rows = [{"gpu": s["gpu"], "roof": f"{s['gpu']} {s['roof']}", "kind": s["kind"], "peak": s["peak"],
             "x": s["x" + end], "y": s["y" + end], "label": s["label"]} for s in segments for end in ("0", "1")]
    return pd.DataFrame(rows, columns=ROOF_COLUMNS)


def place_model_labels(plot: Plot, segments: list[dict[str, Any]], points_xy: np.ndarray
                       ) -> tuple[pd.DataFrame, list[str]]:
    """One label per roof where there is room (data x, y of its centre and its Vega angle), and the labels that
    found none. `points_xy` (n×2, data coordinates) are the drawn points: no label covers one.

    A label first looks for a spot that crosses no other roof line either (H100's and H200's DRAM diagonals run
    15 px apart: H100's label then goes under its line rather than across H200's); where the lines leave no such
    spot, one that only misses the points and labels (the halo keeps it legible). A compute roof's label lies
    along its drawn segment; where that is shorter than the text (a ridge near the right edge), over part of it
    at least, reaching left of the ridge; only where that finds no room, anywhere along the line extended left."""
    px, py = plot.to_px(points_xy[:, 0], points_xy[:, 1]) if len(points_xy) else (np.array([]), np.array([]))
    discs = [(x, y, POINT_RADIUS_PX) for x, y in zip(px, py)]
    ends_px = [_ends_px(plot, segment) for segment in segments]
    loose = Board(plot, discs)  # points and labels
    strict = Board(plot, discs + [disc for ends in ends_px for disc in _line_discs(*ends)])  # and the lines
    rows, missing = [], []
    for segment, ends in zip(segments, ends_px):
        size = text_size(segment["label"], ROOF_FONT, "bold")
        tries = [ends]
        if segment["kind"] == "compute":  # over part of the drawn roof at least, then anywhere along its line
            tries += [((max(0.0, ends[0][0] - size[0]), ends[0][1]), ends[1]), ((0.0, ends[0][1]), ends[1])]
        spot = None
        for start, end in tries:
            for board, other in ((strict, loose), (loose, strict)):
                spot = place_roof_label(board, segment["label"], start, end, ROOF_FONT,
                                        prefer_end=segment["kind"] == "compute")
                if spot is not None:
                    other.take(box(spot[0], spot[1], *size, spot[2]))
                    break
            if spot is not None:
                break
        if spot is None:
            missing.append(segment["label"])
            continue
        x, y = plot.to_data(spot[0], spot[1])
        rows.append({"gpu": segment["gpu"], "roof": f"{segment['gpu']} {segment['roof']}", "kind": segment["kind"],
                     "peak": segment["peak"], "x": x, "y": y, "angle": round((360.0 - spot[2]) % 360.0, 3),
                     "label": segment["label"]})
    return pd.DataFrame(rows, columns=LABEL_COLUMNS), missing


def _ends_px(plot: Plot, segment: dict[str, Any]) -> tuple[tuple[float, float], tuple[float, float]]:
    (x0, x1), (y0, y1) = plot.to_px(np.array([segment["x0"], segment["x1"]]), np.array([segment["y0"], segment["y1"]]))
    return (float(x0), float(y0)), (float(x1), float(y1))


def _line_discs(start: tuple[float, float], end: tuple[float, float]) -> list[tuple[float, float, float]]:
    """A drawn line as a chain of small discs, LINE_STEP_PX apart. Their boxes reach LINE_RADIUS_PX·√2 = 1.4 px from
    the line at most (a diagonal), short of the 2 px a label keeps from its own line, so a label never blocks on
    its own roof."""
    length = math.hypot(end[0] - start[0], end[1] - start[1])
    steps = np.linspace(0.0, 1.0, max(2, int(length / LINE_STEP_PX) + 1))
    return [(start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]), LINE_RADIUS_PX) for t in steps]
