"""The instruction roofline (Ding & Williams 2019): warp GIPS against warp instructions per transaction.

One point per kernel group and level (L1 global/local sectors, L2 sectors, DRAM sectors, shared-memory wavefronts)
at the group's warp GIPS; the roof is the peak warp GIPS (SMs x warp schedulers x clock), each memory wall a
diagonal at that level's peak transactions per second (bytes per second / 32 B per sector; shared memory: one
wavefront per SM per clock) that stops where it meets the roof. On the shared level a dashed segment runs from
the kernel's point to its bank-conflict wall: where the point would be without bank conflicts (warp instructions
per conflict-free wavefront). Built from the kernel table only (the `ii_*`, `gips` and `peak_*` columns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.kernel_labels import display_name
from ...core.vocabulary import II_SHARED_IDEAL, INSTRUCTION_LEVELS, LEVELS, display, ii_column, peak_bytes_column
from ...pipeline.limiter import transaction_peaks
from ..chart import vegalite as vl
from ..chart.layout import marker_radius
from ..text.numbers import format_number, format_si
from ..chart.placement import Board, Plot, box, place_rank, text_size
from ..chart.roofline import LEVEL_COLOURS, LEVEL_SHAPES
from ..text.limiters import limiter_text

# The roofline's colour and shape per memory level (render/analysis/chart.py), and one more for shared memory.
COLOURS = {**{lv: LEVEL_COLOURS[display(lv)] for lv in LEVELS if display(lv) in LEVEL_COLOURS}, "shared": "#b279a2"}
SHAPES = {**{lv: LEVEL_SHAPES[display(lv)] for lv in LEVELS if display(lv) in LEVEL_SHAPES}, "shared": "diamond"}
WIDTH, HEIGHT = 640, 420
POINT_SIZE = 90  # px² of a kernel's point
RANK_FONT = 10
ROOF_FONT = 11
# A kernel's points (one per level, all at its warp GIPS) closer than this share one rank number: "1" beside an L2
# and a DRAM point 3 px apart, not "1" twice, which reads as "11".
SHARED_LABEL_PX = 16.0


def level_name(level: str) -> str:
    return "shared memory" if level == "shared" else display(level)


@dataclass
class InstructionChartData:
    """The small frames the instruction roofline draws, cut down from the kernel table."""

    points: pd.DataFrame
    labels: pd.DataFrame  # rank numbers placed beside the points (x, y: the text's centre), none overlapping
    unnumbered: int  # a kernel's spots left without a number: no free place beside them
    walls: pd.DataFrame  # two rows (x, y) per diagonal or roof line, by `wall`
    conflicts: pd.DataFrame  # two rows per kernel: its shared point and its conflict-free point
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    peak_gips: float | None


def _finite(values: pd.Series) -> np.ndarray:
    array = pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64")
    return array[np.isfinite(array) & (array > 0)]


def _median(table: pd.DataFrame, column: str) -> float | None:
    values = _finite(table[column]) if column in table else np.zeros(0)
    return float(np.median(values)) if len(values) else None


def _narrow(shown: pd.DataFrame) -> pd.DataFrame:
    """The columns the chart reads (`itertuples` of the whole kernel table builds a tuple of every column, and a
    row mask over it copies every column)."""
    wanted = ("rank", "kernel_name", "gips", "launches", "warp_inst", "int_ops", "limiter", "limiter_evidence",
              *(ii_column(level) for level in INSTRUCTION_LEVELS), ii_column("shared"), II_SHARED_IDEAL,
              "peak_warp_gips", *(peak_bytes_column(level) for level in LEVELS))
    return shown[[column for column in dict.fromkeys(wanted) if column in shown]]


def instruction_chart_data(kernels: pd.DataFrame, top: int = 20) -> InstructionChartData:
    shown = _narrow(kernels)[pd.to_numeric(kernels.get("gips"), errors="coerce").fillna(0) > 0].head(top)
    rows = []
    for row in shown.itertuples(index=False):
        base = {"rank": int(row.rank), "kernel": str(row.kernel_name), "label": display_name(str(row.kernel_name)),
                "gips": float(row.gips), "launches": int(row.launches),
                "warp_inst_text": format_si(row.warp_inst, ""), "gips_text": format_number(row.gips),
                "int_ops_text": format_si(getattr(row, "int_ops", None), "op"),
                "why": limiter_text(getattr(row, "limiter", None), getattr(row, "limiter_evidence", None))}
        for level in INSTRUCTION_LEVELS:
            x = getattr(row, ii_column(level), None)
            if x is not None and pd.notna(x) and x > 0:
                rows.append({**base, "level": level_name(level), "ii": float(x), "ii_text": format_number(x)})
    points = pd.DataFrame(rows, columns=["rank", "kernel", "label", "gips", "launches", "warp_inst_text",
                                         "gips_text", "int_ops_text", "why", "level", "ii", "ii_text"])
    peak = _median(shown, "peak_warp_gips")
    txn_peaks = transaction_peaks({lv: _median(shown, peak_bytes_column(lv)) for lv in LEVELS}, peak)
    conflicts = []
    if II_SHARED_IDEAL in shown:
        for row in shown.itertuples(index=False):
            ideal, measured = getattr(row, II_SHARED_IDEAL), getattr(row, ii_column("shared"))
            if pd.notna(ideal) and pd.notna(measured) and ideal > measured * (1 + 1e-9):
                for x in (measured, ideal):
                    conflicts.append({"rank": int(row.rank), "ii": float(x), "gips": float(row.gips),
                                      "text": f"#{int(row.rank)}: {format_number(ideal)} without bank conflicts"})
    conflicts_frame = pd.DataFrame(conflicts, columns=["rank", "ii", "gips", "text"])
    xs = [*points["ii"], *conflicts_frame["ii"], *((peak / t) for t in txn_peaks.values() if t and peak)]
    ys = [*points["gips"], *([peak] if peak else [])]
    x_domain = (min(xs) / 4, max(xs) * 4) if xs else (0.01, 100.0)
    y_domain = (min(ys) / 4, max(ys) * 2) if ys else (0.1, 1000.0)
    walls = []
    for level, txn in txn_peaks.items():
        if txn and peak:
            ridge = peak / txn
            name = f"{level_name(level)} {format_number(txn)} G txn/s"
            walls += [{"wall": name, "level": level_name(level), "x": x_domain[0], "y": x_domain[0] * txn},
                      {"wall": name, "level": level_name(level), "x": ridge, "y": peak}]
    if peak:
        name = f"peak {format_number(peak)} warp GIPS"
        walls += [{"wall": name, "level": "roof", "x": x_domain[0], "y": peak},
                  {"wall": name, "level": "roof", "x": x_domain[1], "y": peak}]
    plot = Plot(WIDTH, HEIGHT, x_domain, y_domain)
    labels, unnumbered = rank_labels(points, conflicts_frame, plot, f"peak {format_number(peak)} warp GIPS"
                                     if peak else None, peak)
    return InstructionChartData(points, labels, unnumbered, pd.DataFrame(walls, columns=["wall", "level", "x", "y"]),
                                conflicts_frame, x_domain, y_domain, peak)


def rank_labels(points: pd.DataFrame, conflicts: pd.DataFrame, plot: Plot, roof_text: str | None,
                peak: float | None) -> tuple[pd.DataFrame, int]:
    """Rank numbers placed as the roofline places its own (render/chart/placement.py): beside a point, on no point,
    no bank-conflict mark, the roof's label or another number. A kernel's points within SHARED_LABEL_PX of each
    other share one number; a spot with no free place beside it stays unnumbered (its tooltip names the kernel)."""
    columns = ["rank", "text", "level", "x", "y"]
    if points.empty:
        return pd.DataFrame(columns=columns), 0
    radius = float(marker_radius(np.array([POINT_SIZE]))[0])
    px, py = plot.to_px(points["ii"].to_numpy(dtype="float64"), points["gips"].to_numpy(dtype="float64"))
    discs = [(x, y, radius) for x, y in zip(px.tolist(), py.tolist())]
    if len(conflicts):
        cx, cy = plot.to_px(conflicts["ii"].to_numpy(dtype="float64"), conflicts["gips"].to_numpy(dtype="float64"))
        discs += [(x, y, radius) for x, y in zip(cx.tolist(), cy.tolist())]
    board = Board(plot, discs)
    if roof_text and peak:  # drawn at the roof's right end, right-aligned 4 px in and 7 px above (the spec's)
        w, h = text_size(roof_text, ROOF_FONT)
        board.take(box(plot.width - 4 - w / 2, float(plot.to_px(plot.x_domain[0], peak)[1]) - 7 - h / 2, w, h))
    rows, unnumbered = [], 0
    ranks = points["rank"].to_numpy()
    for rank in dict.fromkeys(ranks.tolist()):  # rank order: the first kernels get the first choice of spots
        spots: list[list[int]] = []
        for i in sorted(np.flatnonzero(ranks == rank).tolist(), key=lambda k: px[k]):
            if spots and px[i] - px[spots[-1][0]] < SHARED_LABEL_PX and abs(py[i] - py[spots[-1][0]]) < 1.0:
                spots[-1].append(i)
            else:
                spots.append([i])
        for spot in spots:
            centre = place_rank(board, str(rank), [discs[i] for i in spot], RANK_FONT)
            if centre is None:
                unnumbered += 1
                continue
            x, y = plot.to_data(*centre)
            rows.append({"rank": int(rank), "text": str(rank), "level": points["level"].iloc[spot[0]], "x": x, "y": y})
    return pd.DataFrame(rows, columns=columns), unnumbered


def instruction_roofline_spec(kernels: pd.DataFrame, *, title: str, top: int = 20) -> vl.Spec:
    """The instruction roofline as a Vega-Lite spec: walls, the roof, bank-conflict walls, kernel points (hover:
    every number; click the legend: one level; drag and wheel: zoom and pan)."""
    data = instruction_chart_data(kernels, top)
    x_scale, y_scale = vl.log_scale(list(data.x_domain)), vl.log_scale(list(data.y_domain))
    x = vl.channel("x:Q", scale=x_scale, title="instruction intensity (warp instructions per transaction)")
    y = vl.channel("y:Q", scale=y_scale, title="performance (warp GIPS)")
    levels = [level_name(lv) for lv in INSTRUCTION_LEVELS]
    colour = vl.channel("level:N", scale=vl.ordinal_scale([*levels, "roof"],
                                                          {**{level_name(k): v for k, v in COLOURS.items()},
                                                           "roof": "#333333"}), title="level")
    walls = {"data": {"name": "walls"}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
             "encoding": {"x": x, "y": y, "detail": vl.channel("wall:N"), "color": colour,
                          "tooltip": vl.tooltip([("wall:N", "wall")])}}
    # one label, the roof's, at its right end; the walls' rates go in the subtitle (diagonals meet the roof close
    # together, where labels would collide)
    roof_label = {"data": {"name": "walls"}, "transform": [{"filter": "datum.level == 'roof'"},
                                                           {"window": [{"op": "rank", "as": "end"}]},
                                                           {"filter": "datum.end == 2"}],
                  "mark": {"type": "text", "clip": True, "align": "right", "dx": -4, "dy": -7, "fontSize": 11},
                  "encoding": {"x": x, "y": y, "text": vl.channel("wall:N"), "color": {"value": "#333333"}}}
    ii = vl.channel("ii:Q", scale=x_scale, title=x["title"])
    gips = vl.channel("gips:Q", scale=y_scale, title=y["title"])
    conflicts = {"data": {"name": "conflicts"}, "mark": {"type": "line", "strokeDash": [4, 3], "clip": True,
                                                         "point": {"shape": "stroke", "size": 80}},
                 "encoding": {"x": ii, "y": gips, "detail": vl.channel("rank:N"),
                              "color": {"value": COLOURS["shared"]},
                              "tooltip": vl.tooltip([("text:N", "bank-conflict wall")])}}
    tooltip = vl.tooltip([("kernel:N", "kernel"), ("launches:Q", "launches"), ("level:N", "level"),
                          ("ii_text:N", "warp instructions per transaction"), ("gips_text:N", "warp GIPS"),
                          ("warp_inst_text:N", "warp instructions"), ("int_ops_text:N", "integer operations"),
                          ("why:N", "why (limiter)")])
    points = {"data": {"name": "points"}, "name": "points",
              "params": [{"name": "level_pick", "select": {"type": "point", "fields": ["level"]}, "bind": "legend"},
                         {"name": "zoom", "select": "interval", "bind": "scales"}],
              "mark": {"type": "point", "filled": True, "size": 90, "clip": True},
              "encoding": {"x": ii, "y": gips, "color": colour,
                           "shape": vl.channel("level:N", scale=vl.ordinal_scale(
                               levels, {level_name(k): v for k, v in SHAPES.items()}), legend=None),
                           "opacity": vl.when("level_pick", 1.0, 0.15), "tooltip": tooltip}}
    # centred where rank_labels placed them (bold, as the roofline's: the size the placement measured)
    ranks = {"data": {"name": "labels"},
             "mark": {"type": "text", "align": "center", "baseline": "middle", "fontSize": RANK_FONT,
                      "fontWeight": "bold", "color": "#222222", "clip": True},
             "encoding": {"x": x, "y": y, "text": vl.channel("text:N"), "opacity": vl.when("level_pick", 1.0, 0.15)}}
    rates = list(dict.fromkeys(data.walls.loc[data.walls["level"] != "roof", "wall"].str.removesuffix(" G txn/s")))
    subtitle = [title, "walls (G transactions/s): " + ", ".join(rates) if rates else "no memory walls known",
                "dashed: the shared-memory point without bank conflicts"]
    if data.unnumbered:
        subtitle.append(f"{data.unnumbered} crowded point{'s' if data.unnumbered > 1 else ''} without a rank "
                        "number: the tooltip names the kernel")
    body = {"title": {"text": "Instruction roofline", "subtitle": subtitle},
            "width": WIDTH, "height": HEIGHT, "layer": [walls, roof_label, conflicts, points, ranks]}
    return vl.top_level(body, {"walls": data.walls, "conflicts": data.conflicts, "points": data.points,
                               "labels": data.labels})


def has_instruction_data(kernels: pd.DataFrame) -> bool:
    """Whether any kernel group counted warp instructions (else no instruction roofline is written)."""
    return "gips" in kernels and bool((pd.to_numeric(kernels["gips"], errors="coerce") > 0).any())
