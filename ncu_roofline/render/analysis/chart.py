"""The hierarchical roofline chart, as a Vega-Lite spec (render/vegalite.py says why plain data, not Altair).

Takes the ranked kernel table and nothing else: no ncu metric names here. The chart is built in two steps so each
can be checked on its own: `chart_data` trims and reshapes the table into the few small frames the chart draws
(so a 5,000-kernel run with 2,000-character names still gives a spec under 100 kB), and `roofline_spec` lays marks
over them. `chart_files` turns the spec into files: the spec, an offline HTML page and, on request, SVG/PNG.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...core.kernel_labels import LABEL_LEN, display_name, fold_inputs, table_labels
from ...core.vocabulary import (
    FALLBACK_PRECISION,
    LEVELS,
    PRECISIONS,
    SOL_COMPLETE,
    TENSOR_TERMS,
    TERMS,
    UNKNOWN_BOUND,
    ai_column,
    counted,
    display,
    flop_column,
)
from .. import vegalite as vl
from ..layout import (
    RANK_FONT,
    ROOF_FONT,
    SIZE_RANGE,
    TextLayout,
    domains,
    layout_texts,
    ridge_frame,
    roof_segments,
    size_of,
)
from ..numbers import format_si
from ..numbers import positive as _positive
from ..placement import Plot
from ..safe_text import for_chart
from . import crowding
from .context import ChartContext
from .memory_panel import (
    PANEL_NAME,
    PANEL_VIEW,
    MemoryPanel,
    fits_under,
    labels_at,
    memory_panel,
    panel_kernels,
    panel_view,
    with_panel,
)
from .subtitle import chart_subtitle
from .tooltips import TOOLTIP_FIELDS, main_precision, time_unit, tooltip_columns

# Memory roofs share their level's colour so a point reads against its own diagonal; compute roofs stay neutral.
LEVEL_COLOURS = {"DRAM": "#4c78a8", "L2": "#f58518", "L1": "#54a24b"}
LEVEL_SHAPES = {"DRAM": "circle", "L2": "square", "L1": "triangle-up"}
LEVEL_DRAW_ORDER = ("l2", "dram", "l1")  # squares under circles under triangles
COMPUTE_ROOF_COLOUR = "#444444"
# Tensor input types share the tensor pipe's gold, in shades, so a type-split capture still reads as tensor-bound.
_TENSOR_SHADES = ("#f2cf5b", "#eeca3b", "#d4a21c", "#b8860b", "#9c6f0a", "#806000")
BOUND_COLOURS = {
    "FP64": "#b279a2", "FP32": "#e45756", "FP16": "#72b7b2", "Tensor": "#eeca3b",
    **{display(t.key): shade for t, shade in zip(TENSOR_TERMS, _TENSOR_SHADES)},
    **LEVEL_COLOURS, UNKNOWN_BOUND: "#9d9d9d",
}

ROOFLINE_WIDTH_PX = 640
ROOFLINE_HEIGHT_PX = 480
# The HTML page fills the window with the widest of these plot widths that fits beside the bars; each gets its own
# label layout (placed here, so no texts overlap at any of them). Heights grow more slowly, up to FIT_MAX_HEIGHT_PX.
FIT_WIDTHS_PX = (480, 560, 640, 760, 880, 1000, 1120, 1240, 1360, 1480, 1600, 1760, 1920)
FIT_MAX_HEIGHT_PX = 720
BARS_WIDTH_PX = 300
BAR_STEP_PX = 18
LABEL_MAX_LEN = LABEL_LEN  # the one label of each kernel (core.kernel_labels)


@dataclass(frozen=True)
class ChartData:
    """The small frames the chart draws, cut down from the kernel table before any mark is built."""

    points: pd.DataFrame  # one row per (drawn kernel, memory level): rank, level, ai, flop_per_s, time_share
    kernels: pd.DataFrame  # one row per drawn or barred kernel: labels and formatted tooltip fields
    roofs: pd.DataFrame  # two rows (ends) per roof: roof, kind, peak, label, x, y, colour
    roof_labels: pd.DataFrame  # one row per roof: where and at what angle its label sits
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    subtitle: list[str]
    ridges: pd.DataFrame | None = None  # one row per (drawn compute roof, memory roof): x = ridge intensity, y
    rank_labels: pd.DataFrame | None = None  # rank numbers placed clear of points and other texts: rank, text, x, y
    off_scale: tuple[int, ...] = ()  # ranks of drawn kernels left off the axes (far from all the others)
    headroom_unit: tuple[str, float] = ("s", 1.0)  # the bars' unit and its factor from seconds
    fits: tuple[dict, ...] = ()  # per plot size of the page (FIT_WIDTHS_PX): width, height, its label rows
    panel: MemoryPanel | None = None  # the drawn kernels with bytes and no FLOPs (render/analysis/memory_panel.py)
    leaders: pd.DataFrame | None = None  # a line from a displaced rank number's point to it: rank, x, y, x2, y2
    static_subtitle: list[str] | None = None  # the subtitle of the images (no hover there), where it differs


# --------------------------------------------------------------------------------------------------------- roofs


def shared_peaks(kernels: pd.DataFrame) -> dict[str, float]:
    """One value per roof (precision or memory level) for the whole run: the median of the kernels' known peaks.

    Ceilings are per launch in the table, but a chart has one set of roofs. The caller normally has one GPU and one
    clock, so the values agree and the median is that value; where they differ (clock changes between launches)
    the median is the typical roof and stays robust to a stray launch. Non-positive peaks count as unknown.
    """
    peaks: dict[str, float] = {}
    for term in TERMS:
        key, column = term.key, term.peak
        if column not in kernels:
            continue
        values = pd.to_numeric(kernels[column], errors="coerce")
        values = values[np.isfinite(values) & (values > 0)]
        if len(values):
            peaks[key] = float(values.median())
    return peaks


def used_precisions(kernels: pd.DataFrame) -> list[str]:
    """Precisions the run executes (summed `flop_<p>` > 0), in PRECISIONS order."""
    return [p for p in PRECISIONS
            if flop_column(p) in kernels and pd.to_numeric(kernels[flop_column(p)]).sum() > 0]


def _compute_roofs(kernels: pd.DataFrame, peaks: dict[str, float]) -> list[str]:
    """Precision roofs to draw: those with a known peak that the run uses; FP32 alone when none is known to be used."""
    drawn = [p for p in used_precisions(kernels) if p in peaks]
    if not drawn and FALLBACK_PRECISION in peaks:
        drawn = [FALLBACK_PRECISION]
    return drawn


def roof_text(key: str, kind: str, peak: float) -> str:
    """A roof's label: its name and value. The tooltips' binding roof says the value the same way."""
    return f"{display(key)} {format_si(peak, 'FLOP/s' if kind == 'compute' else 'B/s')}"


def _roof_rows(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: pd.DataFrame,
               sizes: np.ndarray) -> tuple[list[dict], list[dict], TextLayout]:
    """Line ends of each roof, its label placed clear of every point and other label, and the rank numbers."""
    segments = roof_segments(compute, memory, plot.x_domain, plot.y_domain)
    texts = [roof_text(s["key"], s["kind"], s["peak"]) for s in segments]
    layout = layout_texts(plot, segments, texts, points, sizes)
    spots = layout.roof_spots
    rows, labels = [], []
    for segment, text, spot in zip(segments, texts, spots):
        name = display(segment["key"])
        colour = COMPUTE_ROOF_COLOUR if segment["kind"] == "compute" else LEVEL_COLOURS[name]
        for end in ("0", "1"):
            rows.append({"roof": name, "kind": segment["kind"], "peak": segment["peak"], "label": text,
                         "x": segment["x" + end], "y": segment["y" + end], "colour": colour})
        if spot is not None:
            labels.append({"roof": name, "kind": segment["kind"], "label": text, "x": spot[0], "y": spot[1],
                           "angle": spot[2], "colour": colour, "peak": segment["peak"]})
    return rows, labels, layout


ROOF_COLUMNS = ["roof", "kind", "peak", "label", "x", "y", "colour"]
ROOF_LABEL_COLUMNS = ["roof", "kind", "label", "x", "y", "angle", "colour", "peak"]
RANK_LABEL_COLUMNS = ["rank", "text", "x", "y"]


# ------------------------------------------------------------------------------------------------------ kernels


def chart_data(kernels: pd.DataFrame, ctx: ChartContext, extra: pd.DataFrame | None = None, *,
               panel: bool = True) -> ChartData:
    """Trim the kernel table to what the chart shows and reshape it for the marks.

    The first `ctx.top` kernels by rank that can be drawn are: on the roofline when a kernel has FLOPs, a
    positive FLOP/s and at least one positive intensity (log axes cannot show zero or missing values), else in
    the memory panel when it has a positive bytes/s at one level at least (a copy, or a capture without FLOP
    counters). No panel in one precision's chart (`ctx.precision`: a kernel without that precision's work is not
    memory-only) nor with `panel=False` (compare draws its own). The bars show the first `ctx.top` kernels by rank
    that have a headroom. The rest stays out of the spec and is counted in the subtitle. `extra` (columns ai,
    flop_per_s) are further points the axes must show: analytic points drawn beside the kernels.
    """
    table = kernels.sort_values("rank", kind="stable").reset_index(drop=True)
    flop_total = pd.to_numeric(table["flop_total"], errors="coerce")
    has_level = pd.DataFrame({level: _positive(table[ai_column(level)]) for level in LEVELS})
    zero_flops = flop_total == 0
    missing = ~zero_flops & ~(_positive(flop_total) & _positive(table["flop_per_s"]) & has_level.any(axis=1))
    drawable = ~zero_flops & ~missing
    memory_only = ~drawable & (False if ctx.precision or not panel else panel_kernels(table))
    chosen = drawable | memory_only
    chosen &= chosen.cumsum() <= ctx.top
    on_roofline, in_panel = chosen & drawable, chosen & memory_only
    bar = ctx.bars if ctx.bars in table else "headroom_s"  # app_headroom_s where the table is ranked by it
    has_headroom = np.isfinite(pd.to_numeric(table[bar], errors="coerce").astype(float))
    in_bars = has_headroom & (has_headroom.cumsum() <= ctx.top)

    kept = table[chosen | in_bars]
    names = [for_chart(display_name(n, d))
             for n, d in zip(kept["kernel_name"], kept.get("kernel_demangled", kept["kernel_name"]))]
    every = table_labels(table)  # the one label of each kernel, over the whole table as the terminal prints it
    short = [for_chart(every[i]) for i in np.flatnonzero((chosen | in_bars).to_numpy())]
    unit = time_unit(kept.loc[in_bars[kept.index].to_numpy(), bar])
    peaks = shared_peaks(table)
    compute = {p: peaks[p] for p in _compute_roofs(table, peaks)}
    memory = {level: peaks[level] for level in LEVELS if level in peaks}
    kernel_rows = pd.DataFrame({
        "rank": kept["rank"].astype(int),
        "label": [f"{rank}. {name}" for rank, name in zip(kept["rank"], short)],
        "kernel_name": names,
        **tooltip_columns(kept, {**compute, **memory}),
        "precision": main_precision(kept).to_numpy(),
        "headroom_s": kept[bar].astype(float), "headroom_scaled": kept[bar].astype(float) * unit[1],
        "flop_per_s": kept["flop_per_s"].astype(float),
        "on_roofline": on_roofline[kept.index].to_numpy(),
        **({"in_panel": in_panel[kept.index].to_numpy()} if in_panel.any() else {}),
        "in_bars": in_bars[kept.index].to_numpy(),
        # headroom from a speed of light that lacks terms: an upper bound, drawn pale with a dashed outline
        "upper_bound": ~kept[SOL_COMPLETE].astype(bool).to_numpy() if SOL_COMPLETE in kept
        else np.zeros(len(kept), dtype=bool),
    }).reset_index(drop=True)

    drawn = table[on_roofline]
    points = pd.concat(
        [
            pd.DataFrame({
                "rank": drawn["rank"].astype(int), "level": display(level), "ai": drawn[ai_column(level)].astype(float),
                "flop_per_s": drawn["flop_per_s"].astype(float),
                "time_share": drawn["time_share"].astype(float).fillna(0.0),  # unknown share: smallest mark
            })[has_level.loc[drawn.index, level].to_numpy()]
            for level in LEVELS
        ],
        ignore_index=True,
    )
    # Draw order: big marks first, and within one kernel squares, then circles, then triangles, so a small mark
    # is never hidden under a larger one at the same place.
    layer = points["level"].map({display(level): i for i, level in enumerate(LEVEL_DRAW_ORDER)})
    points = points.assign(_layer=layer).sort_values(["time_share", "_layer", "rank"], ascending=[False, True, True],
                                                     kind="stable").drop(columns="_layer").reset_index(drop=True)

    x_domain, y_domain, off_scale = domains(points, compute, memory, extra)
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, x_domain, y_domain)
    on_scale = points[~points["rank"].isin(off_scale)]
    sizes = size_of(on_scale["time_share"], float(points["time_share"].max()) if len(points) else 0.0)
    roof_rows, label_rows, texts = _roof_rows(compute, memory, plot, on_scale, sizes)
    roofs = pd.DataFrame(roof_rows, columns=ROOF_COLUMNS)
    roof_labels = pd.DataFrame(label_rows, columns=ROOF_LABEL_COLUMNS)
    rank_labels = pd.DataFrame(texts.rank_rows, columns=RANK_LABEL_COLUMNS)
    points = crowding.with_same_spot(points, on_scale, plot, sizes, kernel_rows)
    drawn_panel = memory_panel(table[in_panel], peaks, LEVEL_COLOURS, ROOFLINE_WIDTH_PX) if in_panel.any() else None
    fits = _fits(compute, memory, plot, on_scale, sizes, {row["roof"] for row in label_rows}, drawn_panel)
    ridges = ridge_frame(peaks, compute, memory, x_domain)

    partial = int((has_level[on_roofline].sum(axis=1) < len(LEVELS)).sum())
    subtitle = chart_subtitle(ctx, total=len(table), drawn=int(on_roofline.sum()), panel=int(in_panel.sum()),
                         zero_flops=int((zero_flops & ~memory_only).sum()), missing=int((missing & ~memory_only).sum()),
                         beyond=int(((drawable | memory_only) & ~chosen).sum()), partial=partial,
                         panel_partial=drawn_panel.partial if drawn_panel is not None else 0)
    if off_scale:
        subtitle.append(f"Off the axes (far from all other kernels, see the bars and tooltips): "
                        f"{', '.join(map(str, off_scale))}")
    unnumbered = sorted(set(on_scale["rank"].astype(int)) - texts.labelled)  # no room, even with a leader
    subtitle, static = crowding.crowded_subtitles(subtitle, unnumbered)
    leaders = pd.DataFrame(texts.leader_rows, columns=crowding.LEADER_COLUMNS)
    fits = crowding.fits_with_leaders(fits, leaders)
    return ChartData(points, kernel_rows, roofs, roof_labels, x_domain, y_domain, subtitle, ridges, rank_labels,
                     tuple(off_scale), unit, fits, drawn_panel, leaders, static)


def fit_height(width: float) -> int:
    """The plot height that goes with a plot width on the page: 3:4 up to the default, flatter when wider."""
    if width <= ROOFLINE_WIDTH_PX:
        return int(round(width * ROOFLINE_HEIGHT_PX / ROOFLINE_WIDTH_PX))
    return int(min(FIT_MAX_HEIGHT_PX, max(ROOFLINE_HEIGHT_PX, round(0.6 * width))))


def _fits(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: pd.DataFrame, sizes: np.ndarray,
          labelled: set[str], panel: MemoryPanel | None = None) -> tuple[dict, ...]:
    """The page's plot sizes (FIT_WIDTHS_PX), each with its own label layout. A size where a roof labelled at the
    default size finds no room, or too narrow for the memory panel's columns, is not offered: the page never trades
    a roof's name or a rank for width."""
    fits = (_fit(compute, memory, replace(plot, width=width, height=fit_height(width)), points, sizes, panel)
            for width in FIT_WIDTHS_PX if panel is None or fits_under(panel, width))
    return tuple(fit for fit in fits if labelled <= {row["roof"] for row in fit["datasets"]["roof_labels"]})


def _fit(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: pd.DataFrame,
         sizes: np.ndarray, panel: MemoryPanel | None) -> dict:
    """One plot size of the page: its width, height and the roof and rank labels placed for it (JSON rows); the
    memory panel, as wide as the plot (`views`), has its roof labels placed for that width too."""
    _, roof_labels, texts = _roof_rows(compute, memory, plot, points, sizes)
    fit = {"width": int(plot.width), "height": int(plot.height),
           "datasets": {"roof_labels": roof_labels, "rank_labels": texts.rank_rows,
                        "rank_leaders": texts.leader_rows}}
    if panel is not None:
        fit["datasets"]["memory_roof_labels"] = labels_at(panel, LEVEL_COLOURS, int(plot.width))
        fit["views"] = {PANEL_NAME: {"width": int(plot.width)}}
    return fit


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
X_TITLE, Y_TITLE = "arithmetic intensity (FLOP/byte)", "performance (FLOP/s)"


def roofline_xy(x_field: str, y_field: str, x_scale: vl.Spec, y_scale: vl.Spec, *, titled: bool = False,
                formatted: bool = False) -> vl.Spec:
    """x (intensity) and y (FLOP/s) channels of a roofline layer on the given log scales: every roofline chart
    here (this one, compare's, model's) draws its axes this way. `titled` and `formatted` for the layers whose
    titles and tick formats the axes take."""
    x = vl.channel(f"{x_field}:Q", scale=x_scale)
    y = vl.channel(f"{y_field}:Q", scale=y_scale)
    if formatted:
        x["axis"], y["axis"] = {"format": "~g"}, {"format": "~s"}
    if titled:
        x["title"], y["title"] = X_TITLE, Y_TITLE
    return {"x": x, "y": y}


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
        # show so the chart fills the window (render/chart_files.py).
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
