"""The hierarchical roofline chart (Altair / Vega-Lite) and its files.

Takes the ranked kernel table and nothing else: no ncu metric names here. The chart is built in two steps so each
can be checked on its own: `chart_data` trims and reshapes the table into the few small frames the chart draws
(so a 5,000-kernel run with 2,000-character names still gives a spec under 100 kB), and `roofline_chart` lays marks over them.
`write_chart` writes the spec, a self-contained offline HTML page and, on request, SVG/PNG through vl-convert.
"""

from __future__ import annotations

import html
import io
import json
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from .files import write_atomic
from ..vocabulary import (FALLBACK_PRECISION, LEVELS, PRECISIONS, TENSOR_TERMS, TERMS, UNKNOWN_BOUND, ai_column, display,
                          flop_column)
from .chart_layout import RANK_FONT, ROOF_FONT, SIZE_RANGE, domains, ridge_frame, size_of
from .chart_tooltips import TOOLTIP_FIELDS, main_precision, time_unit, tooltip_columns
from .labels import display_name, distinct_labels, fold_inputs
from .roof_labels import Plot
from .chart_layout import place_texts, roof_segments
from .numbers import format_si, positive as _positive  # noqa: F401 (format_si: re-exported)
from .safe_text import for_chart


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
BARS_WIDTH_PX = 300
BAR_STEP_PX = 18
LABEL_MAX_LEN = 40
PNG_SCALE = 2.0  # sharp on a high-density screen
FORMATS = ("vl.json", "html", "svg", "png")
DEFAULT_FORMATS = ("vl.json", "html")
# Vega-Embed options for the HTML page: SVG keeps zoomed text crisp and each mark a DOM node (what tests count);
# the action menu offers image export only ("open in editor" would post the data to an online editor).
EMBED_OPTIONS: dict[str, Any] = {"renderer": "svg", "actions": {"export": True, "source": False, "compiled": False,
                                                                 "editor": False}}


@dataclass(frozen=True)
class ChartContext:
    """What the chart says about where its numbers come from; the kernels table carries the numbers."""

    gpu: str
    ceiling_source: str
    clock: str  # "measured" or "max": which SM clock the ceilings assume
    inputs: list[str]
    top: int = 20
    precision: str | None = None  # one precision's chart (`--precision`): its FLOP/s and its roof only


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


# ---------------------------------------------------------------------------------------------------- formatting

def _format_percent(value: float) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:.1f} %"


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


def _decade_below(value: float) -> float:  # model_chart's axes use the same whole decades
    return float(10 ** math.floor(math.log10(value)))


def _decade_above(value: float) -> float:
    return float(10 ** math.ceil(math.log10(value)))


def _roof_frames(compute: dict[str, float], memory: dict[str, float], plot: Plot, points: pd.DataFrame,
                 sizes: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Line ends of each roof, its label placed clear of every point and other label, and the rank numbers."""
    segments = roof_segments(compute, memory, plot.x_domain, plot.y_domain)
    texts = [f"{display(s['key'])} {format_si(s['peak'], 'FLOP/s' if s['kind'] == 'compute' else 'B/s')}"
             for s in segments]
    spots, ranks = place_texts(plot, segments, texts, points, sizes)
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
    columns = ["roof", "kind", "peak", "label", "x", "y", "colour"]
    return (pd.DataFrame(rows, columns=columns),
            pd.DataFrame(labels, columns=["roof", "kind", "label", "x", "y", "angle", "colour", "peak"]), ranks)


# ------------------------------------------------------------------------------------------------------ kernels


def chart_data(kernels: pd.DataFrame, ctx: ChartContext, extra: pd.DataFrame | None = None) -> ChartData:
    """Trim the kernel table to what the chart shows and reshape it for the marks.

    Only the first `ctx.top` drawable kernels by rank go on the roofline; a kernel is drawable when it has FLOPs,
    a positive FLOP/s and at least one positive intensity (log axes cannot show zero or missing values). The bar
    chart shows the first `ctx.top` kernels by rank that have a headroom, drawable or not: a copy can hold
    recoverable time too. Everything else stays out of the spec and is counted in the subtitle. `extra` (columns
    ai, flop_per_s) are further points the axes must show: analytic points drawn beside the kernels.
    """
    table = kernels.sort_values("rank", kind="stable").reset_index(drop=True)
    flop_total = pd.to_numeric(table["flop_total"], errors="coerce")
    has_level = pd.DataFrame({level: _positive(table[ai_column(level)]) for level in LEVELS})
    zero_flops = flop_total == 0
    missing = ~zero_flops & ~(_positive(flop_total) & _positive(table["flop_per_s"]) & has_level.any(axis=1))
    drawable = ~zero_flops & ~missing
    on_roofline = drawable & (drawable.cumsum() <= ctx.top)
    has_headroom = np.isfinite(pd.to_numeric(table["headroom_s"], errors="coerce").astype(float))
    in_bars = has_headroom & (has_headroom.cumsum() <= ctx.top)

    kept = table[on_roofline | in_bars]
    names = [for_chart(display_name(n, d))
             for n, d in zip(kept["kernel_name"], kept.get("kernel_demangled", kept["kernel_name"]))]
    short = distinct_labels(names, kept["grid"].astype("string").tolist(), kept["block"].astype("string").tolist(),
                            LABEL_MAX_LEN)
    unit = time_unit(kept.loc[in_bars[kept.index].to_numpy(), "headroom_s"])
    kernel_rows = pd.DataFrame({
        "rank": kept["rank"].astype(int),
        "label": [f"{rank}. {name}" for rank, name in zip(kept["rank"], short)],
        "kernel_name": names,
        **tooltip_columns(kept),
        "precision": main_precision(kept).to_numpy(),
        "headroom_s": kept["headroom_s"].astype(float),
        "headroom_scaled": kept["headroom_s"].astype(float) * unit[1],
        "flop_per_s": kept["flop_per_s"].astype(float),
        "on_roofline": on_roofline[kept.index].to_numpy(),
        "in_bars": in_bars[kept.index].to_numpy(),
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

    peaks = shared_peaks(table)
    compute = {p: peaks[p] for p in _compute_roofs(table, peaks)}
    memory = {level: peaks[level] for level in LEVELS if level in peaks}
    x_domain, y_domain, off_scale = domains(points, compute, memory, extra)
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, x_domain, y_domain)
    on_scale = points[~points["rank"].isin(off_scale)]
    sizes = size_of(on_scale["time_share"], float(points["time_share"].max()) if len(points) else 0.0)
    roofs, roof_labels, rank_labels = _roof_frames(compute, memory, plot, on_scale, sizes)
    ridges = ridge_frame(peaks, compute, memory, x_domain)

    partial = int((has_level[on_roofline].sum(axis=1) < len(LEVELS)).sum())
    subtitle = _subtitle(ctx, total=len(table), drawn=int(on_roofline.sum()), zero_flops=int(zero_flops.sum()),
                         missing=int(missing.sum()), beyond=int((drawable & ~on_roofline).sum()), partial=partial)
    if off_scale:
        subtitle.append(f"Off the axes (far from all other kernels, see the bars and tooltips): "
                        f"{', '.join(map(str, off_scale))}")
    unlabelled = len(set(on_scale["rank"])) - len(rank_labels)
    if unlabelled:
        subtitle.append(f"{unlabelled} crowded point{'s' if unlabelled > 1 else ''} without a rank number: "
                        "hover or zoom to read them")
    return ChartData(points, kernel_rows, roofs, roof_labels, x_domain, y_domain, subtitle, ridges, rank_labels,
                     tuple(off_scale), unit)


def _subtitle(ctx: ChartContext, *, total: int, drawn: int, zero_flops: int, missing: int, beyond: int,
              partial: int) -> list[str]:
    lines = [for_chart(f"Ceilings: {ctx.ceiling_source} · clock: {ctx.clock} · input: {fold_inputs(ctx.inputs)}")]
    reasons = [
        f"{count} {why}"
        for count, why in ((zero_flops, "with zero FLOPs"), (missing, "with missing data"),
                           (beyond, f"beyond the top {ctx.top}"))
        if count
    ]
    kernels_word = "kernel" if total == 1 else "kernels"
    if not total:
        lines.append("No kernels to draw")
    elif reasons:
        lines.append(f"{drawn} of {total} {kernels_word} drawn; left out: " + ", ".join(reasons))
    else:
        lines.append(f"All {total} {kernels_word} drawn")
    if partial:
        lines[-1] += f"; {partial} drawn at fewer than {len(LEVELS)} levels (missing intensity)"
    return lines


# --------------------------------------------------------------------------------------------------------- chart

_TOOLTIP_FIELDS = TOOLTIP_FIELDS
# Roof labels follow a zoom: while `zoom` (the scale-bound interval) holds a domain, a label whose spot left the
# view slides along its own roof back inside it, a sixth of the visible decades from the edges (room for its text).
_VISIBLE = ("zoom && zoom.ai && zoom.flop_per_s", "pow(zoom.ai[1] / zoom.ai[0], 1 / 6)")
ZOOMED_LABEL = {
    "lo": f"{_VISIBLE[0]} ? (datum.kind === 'memory' ? max(zoom.ai[0], zoom.flop_per_s[0] / datum.peak) "
          f": zoom.ai[0]) * {_VISIBLE[1]} : datum.x",
    "hi": f"{_VISIBLE[0]} ? (datum.kind === 'memory' ? min(zoom.ai[1], zoom.flop_per_s[1] / datum.peak) "
          f": zoom.ai[1]) / {_VISIBLE[1]} : datum.x",
    "zx": "datum.lo <= datum.hi ? clamp(datum.x, datum.lo, datum.hi) : datum.x",
    "zy": "datum.kind === 'memory' ? datum.y * datum.zx / datum.x : datum.y",
}
# Typed in the shorthand: an empty table's columns would otherwise have Altair guess (and warn) from no data.
_TOOLTIP = [alt.Tooltip(f"{field}:{'Q' if field == 'launches' else 'N'}", title=title)
            for field, title in _TOOLTIP_FIELDS]


def roofline_chart(kernels: pd.DataFrame, ctx: ChartContext, *, model_points: pd.DataFrame | None = None,
                   model_pairs: pd.DataFrame | None = None) -> alt.HConcatChart:
    """The roofline (roofs, ridge points, kernel points per memory level, rank numbers) beside a headroom bar
    chart that names each rank, linked by kernel.

    Parameters are named, not numbered, so the spec is the same on every call in a process (Altair numbers
    anonymous ones from a global counter). Three selections live on the points layer: `level` (bound to the
    legend), `kernel` (hover, shared with the bars) and `zoom` (interval bound to the scales).
    """
    from .model_layers import drawable_model, model_layers  # analytic points (`analyze --points`), when given

    model = drawable_model(model_points)
    data = chart_data(kernels, ctx, None if model is None else model[["ai", "flop_per_s"]])
    level_pick = alt.selection_point(name="level", fields=["level"], bind="legend")
    kernel_pick = alt.selection_point(name="kernel", fields=["rank"], on="pointerover", clear="pointerout")
    zoom = alt.selection_interval(name="zoom", bind="scales")

    x_scale = alt.Scale(type="log", domain=list(data.x_domain), nice=False)
    y_scale = alt.Scale(type="log", domain=list(data.y_domain), nice=False)
    x_title, y_title = "arithmetic intensity (FLOP/byte)", "performance (FLOP/s)"
    x = alt.X("x:Q", title=x_title, scale=x_scale, axis=alt.Axis(format="~g"))
    y = alt.Y("y:Q", title=y_title, scale=y_scale, axis=alt.Axis(format="~s"))

    roof_lines = alt.Chart(data.roofs).mark_line(clip=True, strokeWidth=2).encode(
        x=x, y=y, detail="roof:N", color=alt.Color("colour:N", scale=None),
        tooltip=[alt.Tooltip("label:N", title="roof")],
    )
    # Each label is centred on the spot `chart_layout` found for it: the box it was placed by is the box drawn.
    roof_text = alt.Chart(data.roof_labels).transform_calculate(**ZOOMED_LABEL).mark_text(
        clip=True, align="center", baseline="middle", fontSize=ROOF_FONT, fontWeight="bold"
    ).encode(x=alt.X("zx:Q", scale=x_scale), y=alt.Y("zy:Q", scale=y_scale), text="label:N",
             color=alt.Color("colour:N", scale=None), angle=alt.Angle("angle:Q", scale=None))
    ridges = alt.Chart(data.ridges).mark_point(clip=True, shape="diamond", size=45, filled=True, color="white",
                                               stroke=COMPUTE_ROOF_COLOUR, strokeWidth=1.2).encode(
        x=x, y=y, tooltip=[alt.Tooltip("ridge:N", title="ridge point"), alt.Tooltip("intensity:N", title="intensity"),
                           alt.Tooltip("roofs:N", title="compute roof ÷ memory roof")],
    )

    # Legends list what is there, in a fixed order, with fixed colours: a level or bound keeps its colour across runs.
    levels = [level for level in LEVEL_COLOURS if level in set(data.points["level"])]
    bar_rows = data.kernels[data.kernels["in_bars"]]
    bounds = [bound for bound in BOUND_COLOURS if bound in set(bar_rows["bound"])]
    drawn_rows = data.kernels[data.kernels["on_roofline"]]
    mixes = [p for p in BOUND_COLOURS if p in set(drawn_rows["precision"])]
    lookup = alt.LookupData(data=data.kernels, key="rank",
                            fields=["label", "precision", *(field for field, _ in _TOOLTIP_FIELDS)])
    points_base = alt.Chart(data.points).transform_lookup(lookup="rank", from_=lookup)
    joins = alt.Chart(data.points).mark_line(clip=True, strokeWidth=1, color="#888888").encode(
        x=alt.X("ai:Q", scale=x_scale), y=alt.Y("flop_per_s:Q", scale=y_scale), detail="rank:N", order="ai:Q",
        opacity=alt.when(kernel_pick).then(alt.value(0.6)).otherwise(alt.value(0.12)),
    )
    points = points_base.mark_point(clip=True, filled=True, strokeWidth=1.5).encode(
        x=alt.X("ai:Q", scale=x_scale, title=x_title), y=alt.Y("flop_per_s:Q", scale=y_scale, title=y_title),
        color=alt.Color("level:N", title="memory level",
                        scale=alt.Scale(domain=levels, range=[LEVEL_COLOURS[level] for level in levels])),
        shape=alt.Shape("level:N", scale=alt.Scale(domain=levels, range=[LEVEL_SHAPES[level] for level in levels])),
        # The outline says which precision does most of the kernel's FLOPs: its y is the total of all of them.
        stroke=alt.Stroke("precision:N", title="main precision (outline)",
                          scale=alt.Scale(domain=mixes, range=[BOUND_COLOURS[p] for p in mixes])),
        size=alt.Size("time_share:Q", title="time share", scale=alt.Scale(range=list(SIZE_RANGE), zero=True),
                      legend=alt.Legend(format=".2~%")),
        opacity=alt.when(level_pick & kernel_pick).then(alt.value(0.95))
        .when(level_pick).then(alt.value(0.2)).otherwise(alt.value(0.03)),
        order=alt.Order("time_share:Q", sort="descending"),
        tooltip=[alt.Tooltip("level:N", title="level"), alt.Tooltip("label:N", title="rank"), *_TOOLTIP],
    ).add_params(level_pick, kernel_pick, zoom).properties(name="points")
    ranks = alt.Chart(data.rank_labels).mark_text(
        clip=True, align="center", baseline="middle", fontSize=RANK_FONT, fontWeight="bold", color="#222222"
    ).encode(x=alt.X("x:Q", scale=x_scale), y=alt.Y("y:Q", scale=y_scale), text="text:N",
             opacity=alt.when(kernel_pick).then(alt.value(1.0)).otherwise(alt.value(0.45)))
    extra = [] if model is None else model_layers(model, model_pairs, data.points, x_scale, y_scale)
    roofline = alt.layer(roof_lines, roof_text, joins, points, ridges, ranks, *extra).properties(
        name="roofline", width=ROOFLINE_WIDTH_PX, height=ROOFLINE_HEIGHT_PX,
    )
    if extra:  # model points keep their own shape legend beside the memory levels'
        roofline = roofline.resolve_scale(shape="independent", color="independent")

    unit, _ = data.headroom_unit
    bars = alt.Chart(data.kernels).transform_filter("datum.in_bars").mark_bar().encode(
        x=alt.X("headroom_scaled:Q", title=f"headroom ({unit})", axis=alt.Axis(format=",.3~r")),
        y=alt.Y("label:N", title=None, sort=alt.EncodingSortField(field="rank", order="ascending"),
                axis=alt.Axis(labelLimit=320)),
        color=alt.Color("bound:N", title="bound",
                        scale=alt.Scale(domain=bounds, range=[BOUND_COLOURS[bound] for bound in bounds])),
        opacity=alt.when(kernel_pick).then(alt.value(1.0)).otherwise(alt.value(0.35)),
        tooltip=_TOOLTIP,
    ).add_params(kernel_pick).properties(
        name="headroom", width=BARS_WIDTH_PX, height=alt.Step(BAR_STEP_PX),
        title=f"Headroom (recoverable time), top {len(bar_rows)} kernels",
    )

    with warnings.catch_warnings():
        # Sharing `kernel` between the two views is the point; Altair warns whenever it merges a shared param.
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        combined = alt.hconcat(roofline, bars, spacing=30)
    return combined.resolve_scale(
        color="independent", shape="independent", size="independent", opacity="independent", stroke="independent"
    ).properties(
        title=alt.TitleParams(for_chart(f"Hierarchical roofline — {ctx.gpu}"
                                        + (f" — {display(ctx.precision)} work only" if ctx.precision else "")),
                              subtitle=data.subtitle, anchor="start"),
        usermeta={"title": page_title(ctx)},
        # Room at the right: vl-convert measures legend text with its own font, a browser may draw it wider.
        padding={"left": 5, "top": 5, "right": 40, "bottom": 5},
    )


def page_title(ctx: ChartContext) -> str:
    """The HTML page's <title>: the GPU and what was read."""
    precision = f" {display(ctx.precision)}" if ctx.precision else ""
    return f"Roofline{precision} — {ctx.gpu} — {fold_inputs(ctx.inputs)}"


# --------------------------------------------------------------------------------------------------------- files


class _ScriptSafeEncoder(json.JSONEncoder):
    """JSON that can sit inside an HTML <script>: `<` is escaped, so a name or file name holding `</script>`
    cannot end the script early."""

    def encode(self, o: Any) -> str:
        return super().encode(o).replace("<", "\\u003c")


def chart_spec_json(chart: alt.TopLevelMixin) -> str:
    """The Vega-Lite spec as stable text: sorted keys, shortest round-trip floats, nothing time-dependent."""
    return _spec_text(chart.to_dict())


def _spec_text(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _spec(chart: alt.TopLevelMixin) -> dict:
    """The spec as Altair's save() builds it (data inlined, no row limit), built and validated once for every
    format that is text: the spec file and the HTML page."""
    with alt.data_transformers.enable("default"), alt.data_transformers.disable_max_rows():
        return chart.to_dict(context={"pre_transform": False})


def _render(chart: alt.TopLevelMixin, fmt: str, spec: dict | None = None) -> bytes:
    if fmt == "vl.json":
        return _spec_text(spec if spec is not None else chart.to_dict()).encode("utf-8")
    if fmt == "html":
        from altair.utils.mimebundle import spec_to_mimebundle

        from .vega_bundle import InlineTemplate

        # What chart.save(format="html", inline=True) writes, from the spec already built, with the Vega bundle
        # from the cache instead of rebuilt (render/vega_bundle.py).
        page = spec_to_mimebundle(spec, format="html", mode="vega-lite", vega_version=alt.VEGA_VERSION,
                                  vegalite_version=alt.VEGALITE_VERSION, vegaembed_version=alt.VEGAEMBED_VERSION,
                                  embed_options=dict(EMBED_OPTIONS), template=InlineTemplate(),
                                  json_kwds={"cls": _ScriptSafeEncoder, "sort_keys": True})
        return _with_title(page["text/html"], spec).encode("utf-8")
    if fmt == "png":
        binary = io.BytesIO()
        chart.save(binary, format="png", scale_factor=PNG_SCALE)
        return binary.getvalue()
    text = io.StringIO()  # svg; "vl.json" and "html" come from the spec built once by `chart_payloads`
    chart.save(text, format="svg")
    return text.getvalue().encode("utf-8")


def _with_title(page: str, spec: dict) -> str:
    """The page with a <title> naming the GPU and input (escaped: names and file names are not markup)."""
    meta = spec.get("usermeta") or {}
    title = meta.get("title") if isinstance(meta, dict) else None
    if not title or "<head>" not in page:
        return page
    return page.replace("<head>", f"<head>\n  <title>{html.escape(str(title))}</title>", 1)


def chart_payloads(chart: alt.TopLevelMixin, formats: Iterable[str], *, stem: str = "roofline") -> dict[str, bytes]:
    """`{"<stem>.<format>": bytes}` for each of `formats` ("vl.json", "html", "svg", "png"; "json" is taken for
    "vl.json"), in the order asked: rendered, not written, so a failing export (vl-convert, say) writes nothing."""
    wanted: list[str] = []
    for fmt in formats:
        fmt = "vl.json" if fmt == "json" else fmt
        if fmt not in FORMATS:
            raise ValueError(f"unknown chart format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if fmt not in wanted:
            wanted.append(fmt)
    spec = _spec(chart) if {"vl.json", "html"} & set(wanted) else None
    return {f"{stem}.{fmt}": _render(chart, fmt, spec) for fmt in wanted}


def write_chart(chart: alt.TopLevelMixin, outdir: Path, formats: Iterable[str] = DEFAULT_FORMATS, *,
                stem: str = "roofline") -> list[Path]:
    """Write `chart_payloads` into `outdir`, every format rendered before any file is written; the paths written,
    in the order asked."""
    payloads = chart_payloads(chart, formats, stem=stem)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    return [write_atomic(outdir / name, payload) for name, payload in payloads.items()]
