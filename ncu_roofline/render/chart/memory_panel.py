"""The memory panel under the roofline: the ranked kernels that move bytes but have no FLOP count.

A copy, a padding or slicing kernel (or any kernel of a capture without FLOP counters) has an intensity of 0 or
unknown, which no log axis can show; leaving it off the roofline must not leave it off the chart. The panel draws
each such kernel in a column of its own, labelled with its rank on the x axis, at its achieved bytes/s per memory
level (bytes_<level> / time_s, from the group's sums) against each level's roof as a horizontal line: the same
colours and shapes per level as the roofline, the DRAM, L2 and L1 points side by side in the column, so "how close
to the DRAM roof" reads at a glance, as it does on the roofline's diagonals. It sits under the roofline, as wide
as the plot (so it costs the page no width beside the bars), and follows the plot's width on the page.

Geometry here is plain data (the x is a linear slot per kernel, the y log, like the roofline's): roof labels go
through `render/chart/placement.py`, clear of every point and of each other, once per plot width the page may show. The
compare chart draws its own panel from the same pieces (`panel_frame`, `panel_roofs`, `panel_labels`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.vocabulary import LEVELS, bytes_column, display, peak_bytes_column
from . import vegalite as vl
from .layout import MARGIN, ROOF_FONT, decade_above, decade_below
from ..text.numbers import format_si, pct
from .placement import Board, Plot, place_roof_label

PANEL_VIEW = "memory"  # the panel's points: where hovering picks a kernel, as on the roofline
PANEL_NAME = "memory_panel"  # the layered view, under the roofline
PANEL_HEIGHT_PX = 240
PANEL_MIN_SLOTS = 8  # the x axis spans at least this many columns: a few kernels do not spread across the plot
PANEL_MIN_SLOT_PX = 16  # narrowest column: room for a 2-digit rank and three marks; a plot size leaving less is
                        # not offered by the page, and the panel is wider than the plot where even 640 px is short
PANEL_POINT_SIZE = 50  # fixed: the panel compares bandwidths, the roofline's sizes carry the time shares
# Within a kernel's column: DRAM left, L2 centre, L1 right (in slots), so three equal bandwidths stay three marks.
LEVEL_OFFSETS = {level: 0.3 * (2 * i / (len(LEVELS) - 1) - 1) if len(LEVELS) > 1 else 0.0
                 for i, level in enumerate(LEVELS)}
PANEL_TITLE = "Memory only (no FLOPs)"
PANEL_Y_TITLE = "achieved bandwidth (B/s)"
PANEL_X_TITLE = "rank"
ROOF_COLUMNS = ["roof", "peak", "label", "x", "y", "colour"]
LABEL_COLUMNS = ["roof", "label", "x", "y", "colour"]


@dataclass(frozen=True)
class MemoryPanel:
    """What the panel draws: points per (kernel, level), roofs, their labels, and the rank of each column."""

    points: pd.DataFrame  # rank, slot, x, level, bytes_per_s, bandwidth, of_roof
    roofs: pd.DataFrame  # two rows (ends) per memory roof
    roof_labels: pd.DataFrame  # one row per labelled roof, placed at the default width
    ranks: tuple[int, ...]  # the rank of each column, left to right
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    width: int
    partial: int  # kernels drawn at fewer than all levels (a byte count missing)
    peaks: dict[str, float]  # the memory roofs drawn, by level key


def bandwidths(table: pd.DataFrame) -> pd.DataFrame:
    """Achieved bytes/s per level (one column per level), from the summed bytes over the summed time; NaN where
    either is unknown or the time is not positive."""
    time_s = pd.to_numeric(table["time_s"], errors="coerce").astype(float).to_numpy()
    out = {}
    for level in LEVELS:
        traffic = (pd.to_numeric(table[bytes_column(level)], errors="coerce").astype(float).to_numpy()
                   if bytes_column(level) in table else np.full(len(table), np.nan))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[level] = np.where(time_s > 0, traffic / time_s, np.nan)  # in numpy: a few rows, three levels
    return pd.DataFrame(out, index=table.index)


def panel_kernels(table: pd.DataFrame) -> pd.Series:
    """Kernels the panel can draw: a positive bytes/s at one level at least."""
    rates = bandwidths(table)
    return pd.Series((np.isfinite(rates) & (rates > 0)).any(axis=1).to_numpy(), index=table.index)


def panel_frame(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (kernel, level) with a positive bytes/s: rank, slot (the kernel's column, in table order), x
    (the slot plus the level's offset), level (display name), bytes_per_s, and the tooltip texts `bandwidth` and
    `of_roof` (the bandwidth over the kernel's own roof at that level)."""
    rates = bandwidths(table)
    rank, slots = table["rank"].astype(int).to_numpy(), np.arange(len(table))
    parts: dict[str, list] = {"rank": [], "slot": [], "x": [], "level": [], "bytes_per_s": [], "share": []}
    for level in LEVELS:  # in arrays, one frame at the end: a frame per level, concatenated and sorted, cost more
        value = rates[level].to_numpy()
        peak = (pd.to_numeric(table[peak_bytes_column(level)], errors="coerce").astype(float).to_numpy()
                if peak_bytes_column(level) in table else np.full(len(table), np.nan))
        with np.errstate(divide="ignore", invalid="ignore"):
            share = value / np.where(peak > 0, peak, np.nan)
        kept = np.isfinite(value) & (value > 0)
        for name, column in (("rank", rank), ("slot", slots), ("x", slots + LEVEL_OFFSETS[level]),
                             ("level", np.full(len(table), display(level), dtype=object)), ("bytes_per_s", value),
                             ("share", share)):
            parts[name].append(column[kept])
    rows = {name: np.concatenate(columns) for name, columns in parts.items()}
    order = np.lexsort((rows["x"], rows["slot"]))  # by slot, then x (a stable sort)
    rows = {name: column[order] for name, column in rows.items()}
    return pd.DataFrame({
        "rank": rows["rank"], "slot": rows["slot"], "x": rows["x"].astype(float),
        "level": pd.array(rows["level"], dtype="str"), "bytes_per_s": rows["bytes_per_s"],
        "bandwidth": pd.array([format_si(v, "B/s") for v in rows["bytes_per_s"].tolist()], dtype="str"),
        "of_roof": pd.array([pct(v) for v in rows["share"].tolist()], dtype="str"),
    })


def panel_domains(values: np.ndarray, peaks: dict[str, float], slots: int) -> tuple[tuple[float, float],
                                                                                   tuple[float, float]]:
    """x: the columns centred, one slot each, over at least PANEL_MIN_SLOTS slots; y: whole decades around the
    bandwidths and the roofs."""
    ys = [float(v) for v in values if np.isfinite(v) and v > 0] + list(peaks.values())
    ys = ys or [1e12]
    centre, half = (slots - 1) / 2, max(slots, PANEL_MIN_SLOTS) / 2
    return (centre - half, centre + half), (decade_below(min(ys) / MARGIN), decade_above(max(ys) * MARGIN))


def panel_width(slots: int, plot_width: float, min_slot_px: float = PANEL_MIN_SLOT_PX) -> int:
    """The plot's width, or wider where that leaves a column narrower than `min_slot_px`."""
    return int(max(plot_width, np.ceil(slots * min_slot_px)))


def roof_text(level: str, peak: float) -> str:
    return f"{display(level)} {format_si(peak, 'B/s')}"


def panel_roofs(peaks: dict[str, float], x_domain: tuple[float, float], colours: dict[str, str]) -> pd.DataFrame:
    """Each memory roof as a horizontal line across the panel: two rows (its ends)."""
    rows = [{"roof": display(level), "peak": peak, "label": roof_text(level, peak), "x": x, "y": peak,
             "colour": colours[display(level)]}
            for level, peak in peaks.items() for x in x_domain]
    return pd.DataFrame(rows, columns=ROOF_COLUMNS)


def panel_labels(plot: Plot, peaks: dict[str, float], colours: dict[str, str], xs: np.ndarray, ys: np.ndarray,
                 size: float = PANEL_POINT_SIZE) -> pd.DataFrame:
    """Roof labels placed on `plot` just above (else below) their line, clear of the points (xs, ys in data
    coordinates, all of area `size`) and of each other; a roof with no free place goes unlabelled."""
    return pd.DataFrame(panel_label_rows(plot, peaks, colours, xs, ys, size), columns=LABEL_COLUMNS)


def panel_label_rows(plot: Plot, peaks: dict[str, float], colours: dict[str, str], xs: np.ndarray, ys: np.ndarray,
                     size: float = PANEL_POINT_SIZE) -> list[dict]:
    """`panel_labels` as JSON rows (plain strings and floats): what the page's other plot sizes carry, without a
    frame made and taken apart again for each."""
    px, py = plot.to_px(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    radius = 0.62 * np.sqrt(size) + 1.5
    board = Board(plot, [(x, y, radius) for x, y in zip(px, py)])
    rows = []
    for level, peak in sorted(peaks.items(), key=lambda item: -item[1]):  # top roof first: its label sits highest
        (x0, x1), (y0, y1) = plot.to_px(np.array(plot.x_domain), np.array([peak, peak]))
        spot = place_roof_label(board, roof_text(level, peak), (float(x0), float(y0)), (float(x1), float(y1)),
                                ROOF_FONT, prefer_end=True)
        if spot is not None:
            x, y = plot.to_data(spot[0], spot[1])
            rows.append({"roof": display(level), "label": roof_text(level, peak), "x": x, "y": y,
                         "colour": colours[display(level)]})
    return rows


def memory_panel(table: pd.DataFrame, peaks: dict[str, float], colours: dict[str, str],
                 plot_width: int) -> MemoryPanel:
    """The panel for `table` (the kernels it draws, in rank order) against the memory roofs `peaks`, under a plot
    `plot_width` wide."""
    points = panel_frame(table)
    memory = {level: peaks[level] for level in LEVELS if level in peaks}
    x_domain, y_domain = panel_domains(points["bytes_per_s"].to_numpy(), memory, len(table))
    width = panel_width(len(table), plot_width)
    plot = Plot(width, PANEL_HEIGHT_PX, x_domain, y_domain, x_log=False)
    labels = panel_labels(plot, memory, colours, points["x"].to_numpy(), points["bytes_per_s"].to_numpy())
    partial = int((points.groupby("slot").size() < len(LEVELS)).sum())
    return MemoryPanel(points, panel_roofs(memory, x_domain, colours), labels, tuple(int(r) for r in table["rank"]),
                       x_domain, y_domain, width, partial, memory)


def fits_under(panel: MemoryPanel, plot_width: int) -> bool:
    """Whether the panel can be as wide as a plot of `plot_width` (columns no narrower than PANEL_MIN_SLOT_PX)."""
    return panel_width(len(panel.ranks), plot_width) == plot_width


def labels_at(panel: MemoryPanel, colours: dict[str, str], width: int,
              xy: tuple[np.ndarray, np.ndarray] | None = None) -> list[dict]:
    """The panel's roof labels placed for another width (the page's plot sizes): JSON rows. `xy`: the points' x
    and bytes/s (`panel_xy`), where the caller has taken them already for another width."""
    plot = Plot(width, PANEL_HEIGHT_PX, panel.x_domain, panel.y_domain, x_log=False)
    return panel_label_rows(plot, panel.peaks, colours, *(xy if xy is not None else panel_xy(panel)))


def panel_xy(panel: MemoryPanel) -> tuple[np.ndarray, np.ndarray]:
    """The panel's points as arrays: x (the column's place) and bytes/s."""
    return panel.points["x"].to_numpy(), panel.points["bytes_per_s"].to_numpy()


def slot_axis(ticks: list[str], title: str | None, **more: object) -> dict:
    """An x axis with one tick per column, labelled `ticks[slot]` (rank numbers, or kernel names in compare)."""
    return {"values": list(range(len(ticks))), "labelExpr": f"{json.dumps(ticks)}[datum.value] || ''",
            "grid": False, "labelOverlap": False, "title": title, **more}


def panel_scales(panel_x: tuple[float, float], panel_y: tuple[float, float]) -> tuple[vl.Spec, vl.Spec]:
    return {"type": "linear", "domain": list(panel_x), "nice": False, "zero": False}, vl.log_scale(panel_y)


def panel_roof_layers(x_scale: vl.Spec, y_scale: vl.Spec, axis_x: dict, *, roofs: str, labels: str) -> list[vl.Spec]:
    """The roofs (horizontal lines in their level's colour, titled axes) and their labels, reading the datasets
    named `roofs` and `labels`."""
    lines = {
        "data": {"name": roofs}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
        "encoding": {"x": vl.channel("x:Q", scale=x_scale, axis=axis_x),
                     "y": vl.channel("y:Q", scale=y_scale, title=PANEL_Y_TITLE, axis={"format": "~s"}),
                     "detail": vl.channel("roof:N"), "color": vl.channel("colour:N", scale=None),
                     "tooltip": vl.tooltip([("label:N", "roof")])},
    }
    text = {
        "data": {"name": labels},
        "mark": {"type": "text", "clip": True, "align": "center", "baseline": "middle", "fontSize": ROOF_FONT,
                 "fontWeight": "bold"},
        "encoding": {"x": vl.channel("x:Q", scale=x_scale, axis=axis_x),
                     "y": vl.channel("y:Q", scale=y_scale, title=PANEL_Y_TITLE, axis={"format": "~s"}),
                     "text": vl.channel("label:N"), "color": vl.channel("colour:N", scale=None)},
    }
    return [lines, text]


def panel_view(panel: MemoryPanel, *, colour: vl.Spec, shape: vl.Spec, opacity: vl.Spec, lookup: list[str],
               tooltip: list[vl.Spec]) -> vl.Spec:
    """The panel as a layered view reading the datasets `memory_roofs`, `memory_roof_labels`, `memory_points`.

    `colour` and `shape` are the roofline's level channels (legend left to the roofline), `lookup` the kernel
    fields the tooltip reads from the `kernels` dataset, `tooltip` its lines after the panel's own.
    """
    x_scale, y_scale = panel_scales(panel.x_domain, panel.y_domain)
    axis_x = slot_axis([str(r) for r in panel.ranks], PANEL_X_TITLE, labelAngle=0, labelFontWeight="bold")
    # Every layer carries the same axes: layered views merge them, and a layer without would thin the rank ticks.
    x = vl.channel("x:Q", scale=x_scale, axis=axis_x)
    y = vl.channel("bytes_per_s:Q", scale=y_scale, title=PANEL_Y_TITLE, axis={"format": "~s"})
    joins = {
        "data": {"name": "memory_points"}, "mark": {"type": "line", "clip": True, "strokeWidth": 1,
                                                      "color": "#888888"},
        "encoding": {"x": x, "y": y, "detail": vl.channel("rank:N"), "order": vl.channel("x:Q"),
                     "opacity": vl.when("kernel", 0.6, 0.2)},
    }
    points = {
        "name": PANEL_VIEW, "data": {"name": "memory_points"},
        "transform": [{"lookup": "rank", "from": {"data": {"name": "kernels"}, "key": "rank", "fields": lookup}}],
        "mark": {"type": "point", "clip": True, "filled": True, "size": PANEL_POINT_SIZE, "strokeWidth": 1},
        "encoding": {
            "x": x, "y": y, "color": {**colour, "legend": None}, "shape": {**shape, "legend": None},
            "opacity": opacity,
            "tooltip": [*vl.tooltip([("level:N", "level"), ("label:N", "rank"),
                                     ("bandwidth:N", "achieved at this level"),
                                     ("of_roof:N", "of this level's roof")]), *tooltip],
        },
    }
    return {"name": PANEL_NAME, "title": PANEL_TITLE, "width": panel.width, "height": PANEL_HEIGHT_PX,
            "layer": [*panel_roof_layers(x_scale, y_scale, axis_x, roofs="memory_roofs",
                                         labels="memory_roof_labels"), joins, points]}


def with_panel(roofline: vl.Spec, panels: list[vl.Spec]) -> vl.Spec:
    """The roofline, with the memory panel under it when there is one: a column of its own, scales and legends
    independent like the whole chart's (the roofline's level legend stands for both)."""
    if not panels:
        return roofline
    independent = {channel: "independent" for channel in ("color", "opacity", "shape", "size", "stroke")}
    return {"vconcat": [roofline, *panels], "spacing": 24, "resolve": {"scale": independent}}
