"""compare.html's memory panel: the drawn kernels with bytes and no FLOPs, before → after, against the memory roofs.

A kernel whose FLOP/s is zero or unknown on both sides has no point on the log-log roofline, yet its time can be
what a gate judged (a copy or a halo exchange getting slower). Like the analyze chart's panel
(render/chart/memory_panel.py, whose geometry this reuses), each such kernel gets a column, named on the x
axis, and per memory level an arrow from its base bytes/s to its head bytes/s (hollow base mark, filled head
mark, coloured by verdict), with the head run's memory roofs as horizontal lines. Under the roofline, as wide.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.kernel_names import short_kernel_name
from ...core.vocabulary import LEVELS, display
from ..chart import vegalite as vl
from ..chart.memory_panel import (
    LEVEL_OFFSETS,
    PANEL_HEIGHT_PX,
    PANEL_NAME,
    PANEL_TITLE,
    PANEL_Y_TITLE,
    panel_domains,
    panel_label_rows,
    panel_roof_layers,
    panel_roofs,
    panel_scales,
    panel_width,
    slot_axis,
)
from ..text.numbers import format_si, pct
from ..chart.placement import Plot

PANEL_HEADS_VIEW = "memory_heads"
NAME_LEN = 32  # column names on the x axis, turned: short enough to leave the plot its height
MIN_SLOT_PX = 20  # names turned 45°: 20 px apart leaves 14 px between two, room for a 9 px line
_LEVEL_KEYS = {display(level): level for level in LEVELS}


def _positive(values: pd.Series) -> pd.Series:
    values = pd.to_numeric(values, errors="coerce").astype(float)
    return np.isfinite(values) & (values > 0)


def panel_rows(arrows: pd.DataFrame, peaks: dict[str, float]) -> pd.DataFrame:
    """The arrow rows (render/compare/chart.py `arrow_rows`) of the kernels the panel draws: no level on the
    roofline on either side, a positive bytes/s on one side at least; one row per (kernel, level) that has one,
    with its column (`slot`, in the comparison's order), `x`, `has_bw_base`/`has_bw_head` and the tooltip texts
    `bandwidth` (base → head) and `of_roof` (of the head run's roof at that level)."""
    on_roofline = (arrows["has_base"] | arrows["has_head"]).groupby(arrows["key"]).transform("any")
    has_base, has_head = _positive(arrows["bw_base"]), _positive(arrows["bw_head"])
    rows = arrows[~on_roofline & (has_base | has_head)].copy()
    slots = {key: i for i, key in enumerate(dict.fromkeys(rows["key"]))}
    rows["slot"] = rows["key"].map(slots).astype(int)
    levels = rows["level"].map(_LEVEL_KEYS)
    rows["x"] = rows["slot"] + levels.map(LEVEL_OFFSETS)
    rows["has_bw_base"], rows["has_bw_head"] = has_base[rows.index], has_head[rows.index]
    rows["bandwidth"] = [f"{format_si(b, 'B/s')} → {format_si(h, 'B/s')}" for b, h in zip(rows["bw_base"],
                                                                                         rows["bw_head"])]
    peak = levels.map(peaks).astype(float)
    rows["of_roof"] = [" → ".join(pct(v / p) if p > 0 else "—" for v in (b, h))
                       for b, h, p in zip(rows["bw_base"], rows["bw_head"], peak)]
    moved = rows["has_bw_base"] & rows["has_bw_head"] & (rows["bw_base"] != rows["bw_head"])
    rows["head_shape"] = np.where(moved, "triangle-up", "circle")
    rows["angle"] = np.where(moved & (rows["bw_head"] < rows["bw_base"]), 180, 0)
    return rows.sort_values(["slot", "x"], kind="stable").reset_index(drop=True)


def _marks(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Data coordinates of every mark the panel draws (base and head ends): what its roof labels must avoid."""
    base, head = rows[rows["has_bw_base"]], rows[rows["has_bw_head"]]
    return (np.concatenate([base["x"].to_numpy(float), head["x"].to_numpy(float)]),
            np.concatenate([base["bw_base"].to_numpy(float), head["bw_head"].to_numpy(float)]))


def panel_layout(rows: pd.DataFrame, peaks: dict[str, float], colours: dict[str, str], widths: list[int]) -> dict:
    """Domains, the panel's width under a plot of each of `widths` (the first is the spec's own), the roofs, and
    the roof labels placed for each of those widths (JSON rows); `fits`: the widths the panel can follow exactly."""
    slots = int(rows["slot"].max()) + 1
    values = np.concatenate([rows["bw_base"].to_numpy(float), rows["bw_head"].to_numpy(float)])
    x_domain, y_domain = panel_domains(values, peaks, slots)
    xs, ys = _marks(rows)
    sizes = {width: panel_width(slots, width, MIN_SLOT_PX) for width in dict.fromkeys(widths)}
    labels = {width: panel_label_rows(Plot(size, PANEL_HEIGHT_PX, x_domain, y_domain, x_log=False), peaks, colours,
                                      xs, ys, size=110)
              for width, size in sizes.items()}
    names = rows.drop_duplicates("slot").sort_values("slot")["kernel_name"]
    return {"x_domain": x_domain, "y_domain": y_domain, "width": sizes[widths[0]], "labels": labels,
            "fits": {width for width, size in sizes.items() if size == width},
            "roofs": panel_roofs(peaks, x_domain, colours),
            "ticks": [short_kernel_name(name, NAME_LEN) for name in names]}


def panel_view(layout: dict, *, colour: vl.Spec, shape_title: str, shapes: dict[str, str], levels: list[str],
               emphasis: vl.Spec, tooltip: list[vl.Spec]) -> vl.Spec:
    """The panel as a layered view over the datasets `memory_roofs`, `memory_roof_labels`, `memory_arrows`."""
    x_scale, y_scale = panel_scales(layout["x_domain"], layout["y_domain"])
    axis_x = slot_axis(layout["ticks"], None, labelAngle=-45, labelFontSize=9, labelLimit=0)
    y_axis = {"title": PANEL_Y_TITLE, "axis": {"format": "~s"}}
    data = {"name": "memory_arrows"}
    tips = [*vl.tooltip([("bandwidth:N", "bytes/s at this level"), ("of_roof:N", "of the head run's roof")]),
            *tooltip]

    def xy(y_field: str) -> vl.Spec:
        return {"x": vl.channel("x:Q", scale=x_scale, axis=axis_x),
                "y": vl.channel(f"{y_field}:Q", scale=y_scale, **y_axis)}

    rules = {
        "data": data, "transform": [{"filter": "datum.has_bw_base && datum.has_bw_head"}],
        "mark": {"type": "rule", "clip": True, "strokeWidth": 2},
        "encoding": {**xy("bw_base"), "y2": {"field": "bw_head"}, "color": colour, "opacity": emphasis,
                     "tooltip": tips},
    }
    base_points = {
        "data": data, "transform": [{"filter": "datum.has_bw_base"}],
        "mark": {"type": "point", "clip": True, "filled": False, "size": 60, "strokeWidth": 1.5},
        "encoding": {**xy("bw_base"), "color": colour, "opacity": emphasis, "tooltip": tips,
                     "shape": vl.channel("level:N", title=shape_title, legend=None,
                                         scale=vl.ordinal_scale(levels, shapes))},
    }
    head_points = {
        "name": PANEL_HEADS_VIEW, "data": data, "transform": [{"filter": "datum.has_bw_head"}],
        "mark": {"type": "point", "clip": True, "filled": True, "size": 110},
        "encoding": {**xy("bw_head"), "color": colour, "shape": vl.channel("head_shape:N", scale=None),
                     "angle": vl.channel("angle:Q", scale=None), "opacity": emphasis, "tooltip": tips},
    }
    return {"name": PANEL_NAME, "title": PANEL_TITLE, "width": layout["width"], "height": PANEL_HEIGHT_PX,
            "layer": [*panel_roof_layers(x_scale, y_scale, axis_x, roofs="memory_roofs",
                                         labels="memory_roof_labels"), rules, base_points, head_points]}
