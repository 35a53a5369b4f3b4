"""The hierarchical roofline chart, as a Vega-Lite spec (render/chart/vegalite.py says why plain data, not Altair).

Takes the ranked kernel table and nothing else: no ncu metric names here. The chart is built in two steps so each
can be checked on its own: `chart_data` trims and reshapes the table into the few small frames the chart draws
(so a 5,000-kernel run with 2,000-character names still gives a spec under 100 kB), and `roofline_spec` lays marks
over them. `chart_files` turns the spec into files: the spec, an offline HTML page and, on request, SVG/PNG.
"""

from __future__ import annotations

import pandas as pd

from ...core.kernel_labels import fold_inputs
from ...core.vocabulary import counted, display
from ..chart import vegalite as vl
from ..chart.layout import RANK_FONT, ROOF_FONT, SIZE_RANGE
from ..text.safe_text import for_chart
from ..chart import crowding
from ..chart.context import ChartContext
from ..chart.memory_panel import PANEL_VIEW, panel_view, with_panel
from ..chart.tooltips import TOOLTIP_FIELDS
from ..chart.roofline import (
    BARS_WIDTH_PX,
    BAR_STEP_PX,
    BOUND_COLOURS,
    COMPUTE_ROOF_COLOUR,
    LEVEL_COLOURS,
    LEVEL_SHAPES,
    ROOFLINE_HEIGHT_PX,
    ROOFLINE_WIDTH_PX,
    chart_data,
    roofline_xy,
)

_VISIBLE = ("zoom && zoom.ai && zoom.flop_per_s", "pow(zoom.ai[1] / zoom.ai[0], 1 / 6)")
ZOOMED_LABEL = {
    "lo": f"{_VISIBLE[0]} ? (datum.kind === 'memory' ? max(zoom.ai[0], zoom.flop_per_s[0] / datum.peak) "
          f": zoom.ai[0]) * {_VISIBLE[1]} : datum.x",
    "hi": f"{_VISIBLE[0]} ? (datum.kind === 'memory' ? min(zoom.ai[1], zoom.flop_per_s[1] / datum.peak) "
          f": zoom.ai[1]) / {_VISIBLE[1]} : datum.x",
    "zx": "datum.lo <= datum.hi ? clamp(datum.x, datum.lo, datum.hi) : datum.x",
    "zy": "datum.kind === 'memory' ? datum.y * datum.zx / datum.x : datum.y",
}
# Every value is a preformatted string except the launch count.
_BAR_TITLES = (("Headroom (recoverable time)", "headroom"), ("App headroom (over the whole run)", "app headroom"))
_TOOLTIP = vl.tooltip([(f"{field}:{'Q' if field == 'launches' else 'N'}", title) for field, title in TOOLTIP_FIELDS])


def roofline_spec(kernels: pd.DataFrame, ctx: ChartContext, *, model_points: pd.DataFrame | None = None,
                  model_pairs: pd.DataFrame | None = None) -> vl.Spec:
    """The roofline (roofs, ridge points, kernel points per memory level, rank numbers) beside a headroom bar
    chart that names each rank, linked by kernel: a Vega-Lite spec.

    Three selections live on the points view: `level` (bound to the legend), `kernel` (hover, shared with the
    bars) and `zoom` (interval bound to the scales). The views read named datasets: `roofs`, `roof_labels`,
    `ridges`, `points`, `kernels` and `rank_labels` (and `model_points`, `model_segments` with `--points`).
    """
    from .model_layers import (  # analytic points (`analyze --points`), when given
        drawable_model,
        model_layers,
    )

    model = drawable_model(model_points)
    data = chart_data(kernels, ctx, None if model is None else model[["ai", "flop_per_s"]])
    x_scale, y_scale = vl.log_scale(data.x_domain), vl.log_scale(data.y_domain)

    def xy(x_field: str, y_field: str, *, titled: bool = False, formatted: bool = False) -> vl.Spec:
        return roofline_xy(x_field, y_field, x_scale, y_scale, titled=titled, formatted=formatted)

    roof_lines = {
        "data": {"name": "roofs"}, "mark": {"type": "line", "clip": True, "strokeWidth": 2},
        "encoding": {**xy("x", "y", titled=True, formatted=True), "detail": vl.channel("roof:N"),
                     "color": vl.channel("colour:N", scale=None), "tooltip": vl.tooltip([("label:N", "roof")])},
    }
    # Each label is centred on the spot `chart_layout` found for it: the box it was placed by is the box drawn.
    roof_text = {
        "data": {"name": "roof_labels"},
        "transform": [{"calculate": expr, "as": name} for name, expr in ZOOMED_LABEL.items()],
        "mark": {"type": "text", "clip": True, "align": "center", "baseline": "middle", "fontSize": ROOF_FONT,
                 "fontWeight": "bold"},
        "encoding": {**xy("zx", "zy"), "text": vl.channel("label:N"), "color": vl.channel("colour:N", scale=None),
                     "angle": vl.channel("angle:Q", scale=None)},
    }
    ridges = {
        "data": {"name": "ridges"},
        "mark": {"type": "point", "clip": True, "shape": "diamond", "size": 45, "filled": True, "color": "white",
                 "stroke": COMPUTE_ROOF_COLOUR, "strokeWidth": 1.2},
        "encoding": {**xy("x", "y", titled=True, formatted=True),
                     "tooltip": vl.tooltip([("ridge:N", "ridge point"), ("intensity:N", "intensity"),
                                            ("roofs:N", "compute roof ÷ memory roof")])},
    }

    # Legends list what is there, in a fixed order, with fixed colours: a level or bound keeps its colour across runs.
    # The level legend stands for the panel's points too, and is there even when the roofline has no point.
    shown = set(data.points["level"]) | (set(data.panel.points["level"]) if data.panel is not None else set())
    levels = [level for level in LEVEL_COLOURS if level in shown]
    bar_rows = data.kernels[data.kernels["in_bars"]]
    bounds = [bound for bound in BOUND_COLOURS if bound in set(bar_rows["bound"])]
    drawn_rows = data.kernels[data.kernels["on_roofline"]]
    mixes = [p for p in BOUND_COLOURS if p in set(drawn_rows["precision"])]
    joins = {
        "data": {"name": "points"}, "mark": {"type": "line", "clip": True, "strokeWidth": 1, "color": "#888888"},
        "encoding": {**xy("ai", "flop_per_s"), "detail": vl.channel("rank:N"), "order": vl.channel("ai:Q"),
                     "opacity": vl.when("kernel", 0.6, 0.12)},
    }
    lookup = ["label", "precision", *(f for f, _ in TOOLTIP_FIELDS)]
    colour = vl.channel("level:N", title="memory level", scale=vl.ordinal_scale(levels, LEVEL_COLOURS))
    shape = vl.channel("level:N", scale=vl.ordinal_scale(levels, LEVEL_SHAPES))
    opacity = vl.when({"and": [{"param": "level"}, {"param": "kernel"}]}, 0.95, 0.03, ("level", 0.2))
    # A legend with nothing to list (no point on the roofline) is left out rather than drawn as a title alone.
    points = {
        "name": "points", "data": {"name": "points"},
        "transform": [{"lookup": "rank", "from": {"data": {"name": "kernels"}, "key": "rank", "fields": lookup}}],
        "mark": {"type": "point", "clip": True, "filled": True, "strokeWidth": 1.5},
        "encoding": {
            **xy("ai", "flop_per_s", titled=True), "color": colour, "shape": shape,
            # The outline says which precision does most of the kernel's FLOPs: its y is the total of all of them.
            "stroke": vl.channel("precision:N", title="main precision (outline)",
                                 scale=vl.ordinal_scale(mixes, BOUND_COLOURS), **({} if mixes else {"legend": None})),
            "size": vl.channel("time_share:Q", title="time share", scale={"range": list(SIZE_RANGE), "zero": True},
                               legend={"format": ".2~%"} if len(data.points) else None),
            "opacity": opacity,
            "order": vl.channel("time_share:Q", sort="descending"),
            "tooltip": [*vl.tooltip([("level:N", "level"), ("label:N", "rank"),
                                     *([("same_spot:N", "on the same spot")] if "same_spot" in data.points else [])]),
                        *_TOOLTIP],
        },
    }
    # A rank number set off from its point is joined to it by a thin line (only where some layout needs one).
    with_leaders = len(data.leaders) > 0 or any("rank_leaders" in fit["datasets"] for fit in data.fits)
    leaders = crowding.leader_layer(xy("x", "y"))
    ranks = {
        "data": {"name": "rank_labels"},
        "mark": {"type": "text", "clip": True, "align": "center", "baseline": "middle", "fontSize": RANK_FONT,
                 "fontWeight": "bold", "color": "#222222"},
        "encoding": {**xy("x", "y"), "text": vl.channel("text:N"), "opacity": vl.when("kernel", 1.0, 0.45)},
    }
    datasets: dict[str, pd.DataFrame] = {
        "roofs": data.roofs, "roof_labels": data.roof_labels, "ridges": data.ridges, "points": data.points,
        "kernels": data.kernels, "rank_labels": data.rank_labels,
        **({"rank_leaders": data.leaders} if with_leaders else {}),
    }
    panels: list[vl.Spec] = []
    if data.panel is not None:
        panels.append(panel_view(data.panel, colour=colour, shape=shape, opacity=opacity, lookup=lookup,
                                 tooltip=_TOOLTIP))
        datasets.update({"memory_roofs": data.panel.roofs, "memory_roof_labels": data.panel.roof_labels,
                         "memory_points": data.panel.points})
    extra: list[vl.Spec] = []
    if model is not None:
        extra, model_data = model_layers(model, model_pairs, data.points, x_scale, y_scale)
        datasets.update(model_data)
    roofline: vl.Spec = {"name": "roofline", "width": ROOFLINE_WIDTH_PX, "height": ROOFLINE_HEIGHT_PX,
                         "layer": [roof_lines, roof_text, joins, points, ridges,
                                   *([leaders] if with_leaders else []), ranks, *extra]}
    if extra:  # model points keep their own shape legend beside the memory levels'
        roofline["resolve"] = {"scale": {"shape": "independent", "color": "independent"}}

    unit, (what, axis) = data.headroom_unit[0], _BAR_TITLES[ctx.bars == "app_headroom_s"]
    bars = {
        "name": "headroom", "data": {"name": "kernels"}, "transform": [{"filter": "datum.in_bars"}],
        "title": f"{what}, top {counted(len(bar_rows), 'kernel')}" if not
        bar_rows["upper_bound"].any() else {
            "text": f"{what}, top {counted(len(bar_rows), 'kernel')}",
            "subtitle": "pale, dashed: ≤, an upper bound (the speed of light lacks terms)"},
        "width": BARS_WIDTH_PX, "height": {"step": BAR_STEP_PX},
        "mark": {"type": "bar", "strokeWidth": 1.5},
        "encoding": {
            "x": vl.channel("headroom_scaled:Q", title=f"{axis} ({unit})", axis={"format": ",.3~r"}),
            "y": vl.channel("label:N", title=None, sort={"field": "rank", "order": "ascending"},
                            axis={"labelLimit": 320}),
            "color": vl.channel("bound:N", title="bound", scale=vl.ordinal_scale(bounds, BOUND_COLOURS)),
            "opacity": vl.when("kernel", 1.0, 0.35),
            "fillOpacity": {"condition": {"test": "datum.upper_bound", "value": 0.4}, "value": 1.0},
            "strokeDash": {"condition": {"test": "datum.upper_bound", "value": [4, 2]}, "value": [1, 0]},
            "stroke": {"condition": {"test": "datum.upper_bound", "value": "#444444"}, "value": None},
            "tooltip": _TOOLTIP,
        },
    }
    title = for_chart(f"Hierarchical roofline — {ctx.gpu}"
                      + (f" — {display(ctx.precision)} work only" if ctx.precision else ""))
    return vl.top_level({
        "hconcat": [with_panel(roofline, panels), bars], "spacing": 30,
        "params": [
            {"name": "level", "select": {"type": "point", "fields": ["level"]}, "bind": "legend", "views": ["points"]},
            {"name": "kernel", "select": {"type": "point", "fields": ["rank"], "on": "pointerover",
                                          "clear": "pointerout"},
             "views": ["points", *([PANEL_VIEW] if panels else []), "headroom"]},
            {"name": "zoom", "select": {"type": "interval"}, "bind": "scales", "views": ["points"]},
        ],
        "resolve": {"scale": {channel: "independent" for channel in ("color", "opacity", "shape", "size", "stroke")}},
        "title": {"text": title, "subtitle": data.subtitle, "anchor": "start"},
        # What the HTML page needs beyond Vega-Lite: its <title>, and the label layout for each plot size it may
        # show so the chart fills the window (render/chart/chart_files.py).
        # Stacked under a narrow plot, the bars name their kernels on the right: names on the left would set the
        # column's left edge and push the plot right by their width.
        "usermeta": {"title": page_title(ctx), "fit": {"view": "roofline", "sizes": list(data.fits), "stacked": {
            "headroom": {"encoding": {"y": {"axis": {"orient": "right"}}}}}, "narrow": crowding.NARROW_BARS},
            # The images cannot be hovered: their subtitle says where the unnumbered points are named instead.
            **({"static": {"title": {"subtitle": data.static_subtitle}}} if data.static_subtitle else {})},
        # Room at the right: vl-convert measures legend text with its own font, a browser may draw it wider.
        "padding": {"left": 5, "top": 5, "right": 40, "bottom": 5},
    }, datasets)


def roofline_chart(kernels: pd.DataFrame, ctx: ChartContext, *, model_points: pd.DataFrame | None = None,
                   model_pairs: pd.DataFrame | None = None):
    """`roofline_spec` as an Altair chart, for notebooks."""
    return vl.as_altair(roofline_spec(kernels, ctx, model_points=model_points, model_pairs=model_pairs))


def page_title(ctx: ChartContext) -> str:
    """The HTML page's <title>: the GPU and what was read."""
    precision = f" {display(ctx.precision)}" if ctx.precision else ""
    return f"Roofline{precision} — {ctx.gpu} — {fold_inputs(ctx.inputs)}"
