"""The before → after roofline: per kernel and memory level, an arrow from its base point to its head point.

All three levels, as the analyze chart draws them (DRAM circle, L2 square, L1 triangle for the base point, the
arrowhead at the head point); the roofs are the head run's, drawn by the analyze chart's own helpers
(`chart_data` computes roofs, labels and domains; only the marks are new here), so both charts agree on where a
roof is. Added kernels are a lone head point, removed ones a lone base point. A level's intensity comes from the
comparison table (DRAM) or from each run's kernel table by rank (L2, L1). The kernels drawn are the first `top` by
time change and every kernel that failed a gate, wherever it ranks. A drawn kernel with no FLOPs (no intensity on
the log axes) but bytes goes in the memory panel beside the roofline (render/compare/memory_panel.py); one with
neither is counted in the subtitle. Like roofline.html, compare.html takes the window's width (roof label layouts
per size from `chart_data`; arrowheads turned by Vega from the size drawn).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...compare.changes import COMPARED_PER_LAUNCH
from ...core.vocabulary import LEVELS, PEAK_COLUMNS, ai_column, bytes_column, display
from ..chart import vegalite as vl
from ..chart.context import ChartContext
from ..chart.roofline import LEVEL_COLOURS, LEVEL_SHAPES, ROOFLINE_HEIGHT_PX, ROOFLINE_WIDTH_PX, chart_data, roofline_xy
from ..chart.memory_panel import PANEL_NAME, with_panel
from ..text.numbers import format_number, format_si, pct, signed_pct
from ..text.safe_text import for_chart
from .markdown import compared_labels, match_text
from .memory_panel import PANEL_HEADS_VIEW, panel_layout, panel_rows, panel_view

CHART_STEM = "compare"
HEADS_VIEW = "heads"  # the head points: where hovering picks a kernel and dragging zooms
VERDICT_COLOURS = {"regression": "#d62728", "improvement": "#2ca02c", "neutral": "#7f7f7f", "added": "#1f77b4",
                   "removed": "#9467bd"}
FAILED_COLOUR = "#b00020"  # what failed the job: its title lines and its labels
_TOOLTIP_FIELDS = (("kernel_name", "kernel"), ("shape", "grid × block"), ("verdict", "verdict"),
                   ("match", "match"), ("time", "time"), ("time_change", "time change"), ("performance", "FLOP/s"),
                   ("level", "level"), ("ai", "AI at this level (FLOP/B)"), ("fraction", "of roof"), ("bound", "bound"))


def _roof_frame(base_kernels: pd.DataFrame, head_kernels: pd.DataFrame) -> pd.DataFrame:
    """A kernel table `chart_data` can read: head rows carry the roofs, base rows only widen the domain.

    Base rows lose their peaks, so the shared roofs are the head run's alone; every level's intensity stays, so
    the domain fits all the points this chart draws.
    """
    base = base_kernels.copy()
    for column in PEAK_COLUMNS:
        if column in base:
            base[column] = np.nan
    frame = pd.concat([head_kernels, base], ignore_index=True)
    frame["rank"] = np.arange(1, len(frame) + 1)
    return frame


def _by_rank(rows: pd.DataFrame, column: str, side: str, kernels: pd.DataFrame | None, *,
             own_first: bool = True) -> pd.Series:
    """A column of one side: the comparison's own (`<column>_<side>`), else the run's kernel table by rank."""
    own = f"{column}_{side}"
    if own_first and own in rows:
        return pd.to_numeric(rows[own], errors="coerce").astype(float)
    if kernels is None or column not in kernels:
        return pd.Series(np.nan, index=rows.index, dtype=float)
    by_rank = kernels.set_index("rank")[column]
    return pd.to_numeric(rows[f"rank_{side}"].map(by_rank), errors="coerce").astype(float)


def _failed(kernels: pd.DataFrame) -> np.ndarray:
    """Which kernels failed a gate (their `gates_failed` names one or more)."""
    if "gates_failed" not in kernels:
        return np.zeros(len(kernels), dtype=bool)
    return (kernels["gates_failed"].fillna("").astype(str) != "").to_numpy()


def failure_lines(comparison_kernels: pd.DataFrame, most: int = 3) -> list[str]:
    """'✗ gate failed: gemm_tile(…) [32×128], regression +20.0% (time_s>+5%)', the kernels that failed the job,
    for the top of compare.html and its images (where a reader looks first, above the fold)."""
    failed = comparison_kernels[_failed(comparison_kernels)]
    if failed.empty:
        return []
    labels = compared_labels(comparison_kernels)
    parts = [f"{labels[i]}, {row['verdict']} {signed_pct(row['time_s_change_pct'])} ({row['gates_failed']})"
             for i, row in failed.head(most).iterrows()]
    more = f"; and {len(failed) - most} more" if len(failed) > most else ""
    return [for_chart(f"✗ gate failed: {'; '.join(parts)}{more}")]


def chosen_kernels(comparison_kernels: pd.DataFrame, top: int) -> pd.DataFrame:
    """The kernels the chart draws, in the comparison's order: the first `top` (largest time change first) and
    every kernel that failed a gate, however far down it is: what a gate judged failing is always drawn."""
    failed = (comparison_kernels["gates_failed"].fillna("").astype(str) != "").to_numpy() \
        if "gates_failed" in comparison_kernels else np.zeros(len(comparison_kernels), dtype=bool)
    labelled = comparison_kernels.assign(_label=compared_labels(comparison_kernels).to_numpy())
    return labelled[(np.arange(len(comparison_kernels)) < top) | failed].reset_index(drop=True)


def arrow_rows(comparison_kernels: pd.DataFrame, top: int, base_kernels: pd.DataFrame | None = None,
               head_kernels: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per drawn kernel (`chosen_kernels`) and level."""
    rows = chosen_kernels(comparison_kernels, top)
    frames = [_arrow_rows(rows, level, base_kernels, head_kernels) for level in LEVELS]
    return pd.concat(frames, ignore_index=True)


def _arrow_rows(rows: pd.DataFrame, level: str, base_kernels: pd.DataFrame | None,
                head_kernels: pd.DataFrame | None) -> pd.DataFrame:
    kernels = {"base": base_kernels, "head": head_kernels}
    ai = {side: _by_rank(rows, ai_column(level), side, kernels[side]) for side in kernels}
    # bytes/s at this level for the memory panel: the group's summed bytes over its summed time, both from the
    # run's own kernel table
    with np.errstate(divide="ignore", invalid="ignore"):
        bandwidth = {side: (_by_rank(rows, bytes_column(level), side, kernels[side], own_first=False)
                            / _by_rank(rows, "time_s", side, kernels[side], own_first=False).where(lambda t: t > 0))
                     for side in kernels}

    def drawable(side: str) -> pd.Series:
        ai_side = ai[side]
        perf = pd.to_numeric(rows[f"flop_per_s_{side}"], errors="coerce").astype(float)
        return (np.isfinite(ai_side) & (ai_side > 0) & np.isfinite(perf) & (perf > 0)).astype(bool)

    def both(column: str, fmt) -> list[str]:
        return [f"{fmt(b)} → {fmt(h)}" for b, h in zip(rows[f"{column}_base"], rows[f"{column}_head"])]

    side = np.where(rows["verdict"] == "removed", "base", "head")
    failed = _failed(rows)
    frame = pd.DataFrame({
        "key": np.arange(len(rows)),
        # the terminal's and the Markdown's name; a kernel that failed a gate says so, with its verdict
        "label": [for_chart(f"✗ {label} ({verdict})" if bad else label)
                  for label, verdict, bad in zip(rows["_label"], rows["verdict"].astype(str), failed)],
        "failed": failed,
        "kernel_name": rows["kernel_name"].astype(str).map(for_chart),
        "shape": [for_chart(f"{rows.at[i, f'grid_{s}']} × {rows.at[i, f'block_{s}']}") for i, s in enumerate(side)],
        "verdict": rows["verdict"].astype(str),
        "match": [match_text(row) for row in rows.itertuples(index=False)],
        # per launch where the launch counts differ (the match says so)
        "time": [t + (" per launch" if not pd.isna(c) and c == COMPARED_PER_LAUNCH else "") for t, c in
                 zip(both("time_s", lambda v: format_si(v, "s")),
                     rows["compared"] if "compared" in rows else [None] * len(rows))],
        "time_change": [signed_pct(p) for p in rows["time_s_change_pct"]],
        "performance": both("flop_per_s", lambda v: format_si(v, "FLOP/s")),
        "level": display(level),
        "ai": [f"{format_number(b)} → {format_number(h)}"
               for b, h in zip(ai["base"], ai["head"])],
        "fraction": both("roofline_fraction", pct),
        "bound": both("bound", lambda v: "—" if pd.isna(v) else str(v)),
        "x_base": ai["base"], "y_base": rows["flop_per_s_base"].astype(float),
        "x_head": ai["head"], "y_head": rows["flop_per_s_head"].astype(float),
        "has_base": drawable("base").to_numpy(), "has_head": drawable("head").to_numpy(),
        "bw_base": bandwidth["base"].to_numpy(), "bw_head": bandwidth["head"].to_numpy(),
    })
    return frame


def arrowhead_angle(x_domain: tuple[float, float], y_domain: tuple[float, float]) -> str:
    """Vega expression: the screen angle (degrees clockwise from up, Vega's convention) of a base → head move on the
    log-log plot, from the view's own `width` and `height`, so it holds at whatever size the page draws the chart
    (a zoom scales both log axes alike and keeps it). A point with no move, or no base, points up."""
    per_x = f"width / {math.log(x_domain[1] / x_domain[0])!r}"  # pixels per unit of natural log
    per_y = f"height / {math.log(y_domain[1] / y_domain[0])!r}"
    angle = (f"atan2({per_x} * log(datum.x_head / datum.x_base), {per_y} * log(datum.y_head / datum.y_base))"
             " * 180 / PI")
    return f"isFinite({angle}) ? ({angle} + 360) % 360 : 0"


def compare_chart(comparison_kernels: pd.DataFrame, *, base_kernels: pd.DataFrame, head_kernels: pd.DataFrame,
                  ctx: ChartContext) -> vl.Spec:
    """Roofs of the head run, and per kernel a rule + arrowhead from its base point to its head point.

    `comparison_kernels` is the comparison table (largest change first); the first `ctx.top` rows are drawn, and
    every row that failed a gate; those without FLOPs but with bytes in the memory panel beside the roofline.
    `ctx.inputs` names the two runs, base then head.
    """
    roofs = chart_data(_roof_frame(base_kernels, head_kernels), ChartContext(
        gpu=ctx.gpu, ceiling_source=ctx.ceiling_source, clock=ctx.clock, inputs=ctx.inputs,
        top=len(base_kernels) + len(head_kernels) or 1), panel=False)
    arrows = arrow_rows(comparison_kernels, ctx.top, base_kernels, head_kernels)
    moved = arrows["has_base"] & arrows["has_head"] & ((arrows["x_base"] != arrows["x_head"])
                                                       | (arrows["y_base"] != arrows["y_head"]))
    arrows["head_shape"] = np.where(moved, "triangle-up", "circle")

    x_scale, y_scale = vl.log_scale(roofs.x_domain, nice=None), vl.log_scale(roofs.y_domain, nice=None)

    def xy(x: str, y: str, *, titled: bool = True, formatted: bool = False) -> vl.Spec:
        return roofline_xy(x, y, x_scale, y_scale, titled=titled, formatted=formatted)

    peaks = {level: float(row.peak) for row in roofs.roofs.itertuples() if row.kind == "memory"
             for level in LEVELS if display(level) == row.roof}
    panel = panel_rows(arrows, peaks)
    drawn_rows = arrows["has_base"] | arrows["has_head"]
    verdicts = [v for v in VERDICT_COLOURS if v in set(arrows.loc[drawn_rows, "verdict"]) | set(panel["verdict"])]
    colour = vl.channel("verdict:N", title="verdict", scale=vl.ordinal_scale(verdicts, VERDICT_COLOURS))
    emphasis = vl.when("kernel", 1.0, 0.35)
    tooltip = vl.tooltip([(f"{field}:N", title) for field, title in _TOOLTIP_FIELDS])
    arrow_data = {"name": "arrows"}

    roof_lines = {
        "data": {"name": "roofs"}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
        "encoding": {**xy("x", "y", formatted=True), "detail": vl.channel("roof:N"),
                     "color": vl.channel("colour:N", scale=None), "tooltip": vl.tooltip([("label:N", "roof")])},
    }
    roof_labels = {  # centred where chart_layout placed them
        "data": {"name": "roof_labels"},
        "mark": {"type": "text", "clip": True, "align": "center", "baseline": "middle", "fontSize": 11,
                 "fontWeight": "bold"},
        "encoding": {**xy("x", "y", titled=False), "text": vl.channel("label:N"),
                     "color": vl.channel("colour:N", scale=None), "angle": vl.channel("angle:Q", scale=None)},
    }
    rules = {
        "data": arrow_data, "transform": [{"filter": "datum.has_base && datum.has_head"}],
        "mark": {"type": "rule", "clip": True, "strokeWidth": 2},
        "encoding": {**xy("x_base", "y_base"), "x2": {"field": "x_head"}, "y2": {"field": "y_head"},
                     "color": colour, "opacity": emphasis, "tooltip": tooltip},
    }
    shown = set(arrows.loc[drawn_rows, "level"]) | set(panel["level"])
    levels = [display(level) for level in LEVELS if display(level) in shown] or [display(LEVELS[0])]
    base_points = {
        "data": arrow_data, "transform": [{"filter": "datum.has_base"}],
        "mark": {"type": "point", "clip": True, "filled": False, "size": 60, "strokeWidth": 1.5},
        "encoding": {**xy("x_base", "y_base"), "color": colour, "opacity": emphasis, "tooltip": tooltip,
                     "shape": vl.channel("level:N", title="level (base point)",
                                         scale=vl.ordinal_scale(levels, LEVEL_SHAPES))},
    }
    head_points = {
        "name": HEADS_VIEW, "data": arrow_data,
        "transform": [{"filter": "datum.has_head"},
                      {"calculate": arrowhead_angle(roofs.x_domain, roofs.y_domain), "as": "angle"}],
        "mark": {"type": "point", "clip": True, "filled": True, "size": 110},
        "encoding": {**xy("x_head", "y_head"), "color": colour, "shape": vl.channel("head_shape:N", scale=None),
                     "angle": vl.channel("angle:Q", scale=None), "opacity": emphasis, "tooltip": tooltip},
    }
    labels = {
        "data": arrow_data, "transform": [{"filter": f"datum.has_head && datum.level === '{display(LEVELS[0])}'"}],
        "mark": {"type": "text", "clip": True, "align": "left", "baseline": "middle", "dx": 8, "fontSize": 9},
        "encoding": {**xy("x_head", "y_head"), "text": vl.channel("label:N"), "opacity": emphasis,
                     "color": {"condition": {"test": "datum.failed", "value": FAILED_COLOUR}, "value": "black"}},
    }

    drawn = int(drawn_rows.groupby(arrows["key"]).any().sum())
    in_panel = int(panel["key"].nunique())
    chosen = int(arrows["key"].nunique())
    beyond = len(comparison_kernels) - chosen
    extra = chosen - min(ctx.top, len(comparison_kernels))  # failed a gate, beyond the top
    order = "largest time change first" + (f", and {extra} more that failed a gate" if extra else "")
    placed = (f"{drawn} of {len(comparison_kernels)} kernels on the roofline, {in_panel} in the memory panel "
              f"(bytes, no FLOPs), {order}" if in_panel else
              f"{drawn} of {len(comparison_kernels)} kernels drawn ({order})")
    if panel.empty:  # as before the panel: "zero FLOPs, no intensity" covers the kernels left out unseen
        reasons = f"zero FLOPs, no intensity, or beyond the top {ctx.top}"
    else:
        reasons = ", ".join(part for count, part in ((chosen - drawn - in_panel, "no FLOP/s and no bytes/s"),
                                                     (beyond, f"beyond the top {ctx.top}")) if count)
    left_out = len(comparison_kernels) - drawn - in_panel
    subtitle = [for_chart(f"Roofs of the head run: {ctx.ceiling_source} · clock: {ctx.clock}"),
                for_chart(" → ".join(ctx.inputs)) or "—",
                placed + (f"; {left_out} left out ({reasons})" if left_out else "")]
    title = for_chart(f"Roofline before → after — {ctx.gpu}")
    fits = [{**fit, "datasets": {"roof_labels": fit["datasets"]["roof_labels"]}} for fit in roofs.fits]
    layers = [roof_lines, roof_labels, rules, base_points, head_points, labels]
    datasets = {"roofs": roofs.roofs, "roof_labels": roofs.roof_labels, "arrows": arrows}
    body: vl.Spec = {"layer": layers, "width": ROOFLINE_WIDTH_PX, "height": ROOFLINE_HEIGHT_PX,
                     "resolve": {"scale": {"shape": "independent"}}}
    # The page's <title>, and the roof label layout per plot size so the page fills the window (chart_files).
    fit: vl.Spec = {"sizes": fits}
    heads = [HEADS_VIEW]
    if not panel.empty:  # under the roofline, as wide: a plot size too narrow for its columns is not offered
        layout = panel_layout(panel, peaks, LEVEL_COLOURS, [ROOFLINE_WIDTH_PX, *(f["width"] for f in fits)])
        view = panel_view(layout, colour={**colour, "legend": None}, shape_title="level (base point)",
                          shapes=LEVEL_SHAPES, levels=levels, emphasis=emphasis, tooltip=tooltip)
        body = with_panel({"name": "roofline", **body}, [view])
        fit = {"view": "roofline", "sizes": [
            {**f, "datasets": {**f["datasets"], "memory_roof_labels": layout["labels"][f["width"]]},
             "views": {PANEL_NAME: {"width": f["width"]}}} for f in fits if f["width"] in layout["fits"]]}
        datasets.update({"memory_roofs": layout["roofs"], "memory_roof_labels": layout["labels"][ROOFLINE_WIDTH_PX],
                         "memory_arrows": panel})
        heads.append(PANEL_HEADS_VIEW)
    return vl.top_level({
        **body,
        "usermeta": {"title": title + " — " + for_chart(" → ".join(ctx.inputs)), "fit": fit},
        "params": [
            {"name": "kernel", "select": {"type": "point", "fields": ["key"], "on": "pointerover",
                                          "clear": "pointerout"}, "views": heads},
            {"name": "zoom", "select": {"type": "interval"}, "bind": "scales", "views": [HEADS_VIEW]},
        ],
        # the gate's failures first, in the title's own lines: above the fold in the page and in every image
        "title": {"text": [title, *failure_lines(comparison_kernels)], "subtitle": subtitle, "anchor": "start",
                  **({"color": FAILED_COLOUR} if _failed(comparison_kernels).any() else {})},
    }, datasets)
