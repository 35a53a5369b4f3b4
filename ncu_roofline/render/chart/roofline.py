"""The roofline kit: level colours, shapes and draw order, plot sizes, roof rows and the frames a roofline draws
(`chart_data`), and the axes every roofline chart here shares (`roofline_xy`). The analysis, compare and model
charts build on it; it knows nothing of which subject draws."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...core.kernel_labels import LABEL_LEN, display_name, table_labels
from ...core.vocabulary import (
    FALLBACK_PRECISION,
    LEVELS,
    PRECISIONS,
    TENSOR_TERMS,
    TERMS,
    UNKNOWN_BOUND,
    ai_column,
    display,
    flop_column,
)
from . import vegalite as vl
from .layout import TextLayout, domains, layout_texts, point_columns, ridge_frame, roof_segments, size_of
from ...pipeline.totals import sol_complete
from ...roofs.peaks import run_peaks
from ..text.numbers import format_si
from ..text.numbers import positive as _positive
from .placement import Plot
from ..text.safe_text import for_chart
from . import crowding
from .context import ChartContext
from .memory_panel import PANEL_NAME, MemoryPanel, fits_under, labels_at, memory_panel, panel_kernels, panel_xy
from .subtitle import chart_subtitle
from .tooltips import main_precision, time_unit, tooltip_columns

# Memory roofs share their level's colour so a point reads against its own diagonal; compute roofs stay neutral.
# The one table of level styles: the vocabulary's levels in order take these colours and shapes, so a new level
# (core/vocabulary.py MEMORY_LEVELS) is drawn without a change here.
_LEVEL_PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#9c755f", "#ff9da6", "#bab0ac")
_LEVEL_MARKS = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down")
LEVEL_COLOURS = {display(lv): colour for lv, colour in zip(LEVELS, _LEVEL_PALETTE)}
LEVEL_SHAPES = {display(lv): shape for lv, shape in zip(LEVELS, _LEVEL_MARKS)}
# squares under circles under triangles, then any further level
LEVEL_DRAW_ORDER = ("l2", "dram", "l1", *(lv for lv in LEVELS if lv not in ("l2", "dram", "l1")))
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
    panel: MemoryPanel | None = None  # the drawn kernels with bytes and no FLOPs (render/chart/memory_panel.py)
    leaders: pd.DataFrame | None = None  # a line from a displaced rank number's point to it: rank, x, y, x2, y2
    static_subtitle: list[str] | None = None  # the subtitle of the images (no hover there), where it differs


# --------------------------------------------------------------------------------------------------------- roofs


def shared_peaks(kernels: pd.DataFrame) -> dict[str, float]:
    """One value per roof (precision or memory level) for the whole run, by term key: roofs.peaks.run_peaks."""
    peaks = run_peaks(kernels, [term.peak for term in TERMS])
    return {term.key: peaks[term.peak] for term in TERMS if term.peak in peaks}


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
               sizes: np.ndarray, only: frozenset[int] | None = None,
               roofs: tuple[list[dict], list[str]] | None = None) -> tuple[list[dict], list[dict], TextLayout]:
    """Line ends of each roof, its label placed clear of every point and other label, and the rank numbers.
    `roofs`: the roofs' segments and texts (`_roof_texts`), where the caller has them for these axes already."""
    segments, texts = roofs if roofs is not None else _roof_texts(compute, memory, plot)
    layout = layout_texts(plot, segments, texts, points, sizes, only)
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


def _roof_texts(compute: dict[str, float], memory: dict[str, float], plot: Plot) -> tuple[list[dict], list[str]]:
    """Each roof's segment across the plot's axes and its label: the same for every plot size of one chart."""
    segments = roof_segments(compute, memory, plot.x_domain, plot.y_domain)
    return segments, [roof_text(s["key"], s["kind"], s["peak"]) for s in segments]


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
        "upper_bound": ~sol_complete(kept).to_numpy(),
    }).reset_index(drop=True)

    points = _points(table[on_roofline], has_level[on_roofline])

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
    fits = _fits(compute, memory, plot, on_scale, sizes, (label_rows, texts), drawn_panel)
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


def _points(drawn: pd.DataFrame, has_level: pd.DataFrame) -> pd.DataFrame:
    """One row per (drawn kernel, level it has an intensity at): rank, level, ai, flop_per_s, time_share (unknown:
    0, the smallest mark). Draw order: big marks first, and within one kernel squares, then circles, then triangles,
    so a small mark is never hidden under a larger one at the same place. Built from arrays: a frame per level,
    concatenated and sorted, cost more than the few rows it holds."""
    rank = drawn["rank"].astype(int).to_numpy()
    flop_per_s = drawn["flop_per_s"].astype(float).to_numpy()
    share = drawn["time_share"].astype(float).fillna(0.0).to_numpy()
    keep = [has_level[level].to_numpy(bool) for level in LEVELS]
    layer_of = {level: i for i, level in enumerate(LEVEL_DRAW_ORDER)}
    ranks = np.concatenate([rank[k] for k in keep])
    shares = np.concatenate([share[k] for k in keep])
    layers = np.concatenate([np.full(int(k.sum()), layer_of[level]) for level, k in zip(LEVELS, keep)])
    order = np.lexsort((ranks, layers, -shares))  # time share falling, then layer, then rank (a stable sort)
    return pd.DataFrame({
        "rank": ranks[order],
        "level": pd.array(np.repeat(np.array([display(level) for level in LEVELS], dtype=object),
                                    [int(k.sum()) for k in keep])[order], dtype="str"),  # pandas' own text dtype
        "ai": np.concatenate([drawn[ai_column(level)].astype(float).to_numpy()[k]
                              for level, k in zip(LEVELS, keep)])[order],
        "flop_per_s": np.concatenate([flop_per_s[k] for k in keep])[order],
        "time_share": shares[order],
    })


def fit_height(width: float) -> int:
    """The plot height that goes with a plot width on the page: 3:4 up to the default, flatter when wider."""
    if width <= ROOFLINE_WIDTH_PX:
        return int(round(width * ROOFLINE_HEIGHT_PX / ROOFLINE_WIDTH_PX))
    return int(min(FIT_MAX_HEIGHT_PX, max(ROOFLINE_HEIGHT_PX, round(0.6 * width))))


def _fits(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: pd.DataFrame, sizes: np.ndarray,
          default: tuple[list[dict], TextLayout], panel: MemoryPanel | None = None) -> tuple[dict, ...]:
    """The page's sizes (FIT_WIDTHS_PX), laid out numbering only `default`'s ranks (its own size keeps it), less
    those where a roof `default` labels has no room or too narrow for the memory panel: no roof's name is lost."""
    # what every size shares, taken once: the roofs' segments and texts (the axes are the same), the points' columns
    roofs, columns = _roof_texts(compute, memory, plot), point_columns(points)
    shared = (roofs, panel_xy(panel) if panel is not None else None)
    fits = (_fit(compute, memory, replace(plot, width=width, height=fit_height(width)), columns, sizes, panel, default,
                 shared) for width in FIT_WIDTHS_PX if panel is None or fits_under(panel, width))
    labelled = {row["roof"] for row in default[0]}
    return tuple(fit for fit in fits if labelled <= {row["roof"] for row in fit["datasets"]["roof_labels"]})


def _fit(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: dict[str, np.ndarray],
         sizes: np.ndarray, panel: MemoryPanel | None, default: tuple[list[dict], TextLayout],
         shared: tuple[tuple[list[dict], list[str]], tuple[np.ndarray, np.ndarray] | None]) -> dict:
    """One plot size: width, height, roof and rank labels (JSON rows), the memory panel as wide (`views`).
    `shared`: what every size takes alike, the roofs (`_roof_texts`) and the panel's points (`panel_xy`)."""
    roofs, panel_points = shared
    roof_labels, texts = default if (plot.width, plot.height) == (ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX) \
        else _roof_rows(compute, memory, plot, points, sizes, default[1].labelled, roofs)[1:]
    fit = {"width": int(plot.width), "height": int(plot.height),
           "datasets": {"roof_labels": roof_labels, "rank_labels": texts.rank_rows,
                        "rank_leaders": texts.leader_rows}}
    if panel is not None:
        fit["datasets"]["memory_roof_labels"] = labels_at(panel, LEVEL_COLOURS, int(plot.width), panel_points)
        fit["views"] = {PANEL_NAME: {"width": int(plot.width)}}
    return fit


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


