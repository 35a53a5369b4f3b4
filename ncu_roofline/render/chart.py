"""The hierarchical roofline chart (Altair / Vega-Lite) and its files.

Takes the ranked kernel table and nothing else: no ncu metric names here. The chart is built in two steps so each
can be checked on its own: `chart_data` trims and reshapes the table into the few small frames the chart draws
(so a 5,000-kernel run with 2,000-character names still gives a spec under 100 kB), and `roofline_chart` lays marks over them.
`write_chart` writes the spec, a self-contained offline HTML page and, on request, SVG/PNG through vl-convert.
"""

from __future__ import annotations

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
from ..vocabulary import (DISPLAY, FALLBACK_PRECISION, LEVELS, PRECISIONS, TERMS, UNKNOWN_BOUND, ai_column, display,
                          flop_column)
from .names import short_kernel_name
from .numbers import format_number, format_si, positive as _positive  # noqa: F401 (format_si: re-exported)
from .safe_text import for_chart


# Memory roofs share their level's colour so a point reads against its own diagonal; compute roofs stay neutral.
LEVEL_COLOURS = {"DRAM": "#4c78a8", "L2": "#f58518", "L1": "#54a24b"}
LEVEL_SHAPES = {"DRAM": "circle", "L2": "square", "L1": "triangle-up"}
COMPUTE_ROOF_COLOUR = "#444444"
BOUND_COLOURS = {
    "FP64": "#b279a2", "FP32": "#e45756", "FP16": "#72b7b2", "Tensor": "#eeca3b",
    **LEVEL_COLOURS, UNKNOWN_BOUND: "#9d9d9d",
}

ROOFLINE_WIDTH_PX = 560
ROOFLINE_HEIGHT_PX = 420
BARS_WIDTH_PX = 300
BAR_STEP_PX = 18
LABEL_MAX_LEN = 40
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


def _decade_below(value: float) -> float:
    return float(10 ** math.floor(math.log10(value)))


def _decade_above(value: float) -> float:
    return float(10 ** math.ceil(math.log10(value)))


def _roof_frames(
    compute: dict[str, float], memory: dict[str, float], x_domain: tuple[float, float], y_domain: tuple[float, float]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Line ends and labels for each roof.

    A memory diagonal is y = peak_bytes_per_s × x; it starts at the bottom (or left) edge of the plot and stops
    where it meets the highest compute roof drawn. A compute roof starts where it meets the steepest diagonal and
    runs to the right edge.
    """
    x_lo, x_hi = x_domain
    y_lo, y_hi = y_domain
    top_flop = max(compute.values(), default=y_hi)
    steepest = max(memory.values(), default=None)
    # Text angle of a slope-1 line on the log-log plot, in screen degrees (Vega's angles run clockwise, 0..360).
    px_per_decade_x = ROOFLINE_WIDTH_PX / math.log10(x_hi / x_lo)
    px_per_decade_y = ROOFLINE_HEIGHT_PX / math.log10(y_hi / y_lo)
    diagonal_angle = 360 - math.degrees(math.atan2(px_per_decade_y, px_per_decade_x))

    rows: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    for key, peak in compute.items():
        name = display(key)
        label = f"{name} {format_si(peak, 'FLOP/s')}"
        x_start = max(x_lo, peak / steepest) if steepest else x_lo
        for x in (x_start, x_hi):
            rows.append({"roof": name, "kind": "compute", "peak": peak, "label": label, "x": x, "y": peak,
                         "colour": COMPUTE_ROOF_COLOUR})
        labels.append({"roof": name, "kind": "compute", "label": label, "x": x_hi, "y": peak, "angle": 0.0,
                       "colour": COMPUTE_ROOF_COLOUR})
    for key, bandwidth in memory.items():
        name = display(key)
        label = f"{name} {format_si(bandwidth, 'B/s')}"
        x_start = max(x_lo, y_lo / bandwidth)
        x_end = min(x_hi, top_flop / bandwidth)
        for x in (x_start, x_end):
            rows.append({"roof": name, "kind": "memory", "peak": bandwidth, "label": label, "x": x, "y": bandwidth * x,
                         "colour": LEVEL_COLOURS[name]})
        # A quarter of the way up the diagonal (in log space): clear of the compute roofs' labels at the right.
        x_label = x_start * (x_end / x_start) ** 0.25
        labels.append({"roof": name, "kind": "memory", "label": label, "x": x_label, "y": bandwidth * x_label,
                       "angle": diagonal_angle, "colour": LEVEL_COLOURS[name]})
    columns = ["roof", "kind", "peak", "label", "x", "y", "colour"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(labels, columns=[*columns[:2], *columns[3:6], "angle",
                                                                                 "colour"])


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
    short = [short_kernel_name(for_chart(name), LABEL_MAX_LEN) for name in kept["kernel_name"]]
    bound = kept["bound"].map(lambda b: DISPLAY.get(b, UNKNOWN_BOUND) if isinstance(b, str) else UNKNOWN_BOUND)
    label_x = kept[[ai_column(level) for level in LEVELS]].where(has_level[on_roofline | in_bars].to_numpy()).max(axis=1)
    kernel_rows = pd.DataFrame({
        "rank": kept["rank"].astype(int),
        "label": [f"{rank}. {name}" for rank, name in zip(kept["rank"], short)],
        "kernel_name": kept["kernel_name"].astype(str).map(for_chart),
        "grid_block": (kept["grid"].astype(str) + " × " + kept["block"].astype(str)).map(for_chart),
        "launches": kept["launches"].astype(int),
        "time": [format_si(v, "s") for v in kept["time_s"]],
        "share": [_format_percent(v) for v in kept["time_share"]],
        "performance": [format_si(v, "FLOP/s") for v in kept["flop_per_s"]],
        **{ai_column(level): [format_number(v) for v in kept[ai_column(level)]] for level in LEVELS},
        "bound": bound,
        "fraction": [_format_percent(v) for v in kept["roofline_fraction"]],
        "headroom": [format_si(v, "s") for v in kept["headroom_s"]],
        "headroom_s": kept["headroom_s"].astype(float),
        "flop_per_s": kept["flop_per_s"].astype(float),
        "label_x": label_x.astype(float),
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
    ).sort_values(["rank", "level"], kind="stable").reset_index(drop=True)

    peaks = shared_peaks(table)
    compute = {p: peaks[p] for p in _compute_roofs(table, peaks)}
    memory = {level: peaks[level] for level in LEVELS if level in peaks}
    x_domain, y_domain = _domains(points if extra is None else pd.concat([points, extra]), compute, memory)
    roofs, roof_labels = _roof_frames(compute, memory, x_domain, y_domain)

    partial = int((has_level[on_roofline].sum(axis=1) < len(LEVELS)).sum())
    subtitle = _subtitle(ctx, total=len(table), drawn=int(on_roofline.sum()), zero_flops=int(zero_flops.sum()),
                         missing=int(missing.sum()), beyond=int((drawable & ~on_roofline).sum()), partial=partial)
    return ChartData(points, kernel_rows, roofs, roof_labels, x_domain, y_domain, subtitle)


def _domains(
    points: pd.DataFrame, compute: dict[str, float], memory: dict[str, float]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Whole decades around the points and the roofs' corners, so every roof meets its neighbours in view.

    Without a compute roof the diagonals are still kept in view up to the fastest kernel (or 1 TFLOP/s).
    """
    ys = [*points["flop_per_s"], *compute.values()] or [1e12]
    top_flop = max(compute.values(), default=max(ys))
    xs = [*points["ai"], *(top_flop / bandwidth for bandwidth in memory.values())] or [1.0]
    x_domain = (_decade_below(min(xs) / 3), _decade_above(max(xs) * 3))
    y_domain = (_decade_below(min(ys) / 3), _decade_above(max(ys) * 3))
    return x_domain, y_domain


def _subtitle(ctx: ChartContext, *, total: int, drawn: int, zero_flops: int, missing: int, beyond: int,
              partial: int) -> list[str]:
    inputs = ", ".join(ctx.inputs[:3]) + (f" and {len(ctx.inputs) - 3} more" if len(ctx.inputs) > 3 else "")
    lines = [for_chart(f"Ceilings: {ctx.ceiling_source} · clock: {ctx.clock} · input: {inputs or '—'}")]
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

# (field, title) of each tooltip line; values are preformatted strings except launches.
_TOOLTIP_FIELDS = (
    ("kernel_name", "kernel"), ("grid_block", "grid × block"), ("launches", "launches"), ("time", "time"),
    ("share", "time share"), ("performance", "achieved"),
    *((ai_column(level), f"AI {display(level)} (FLOP/B)") for level in LEVELS), ("bound", "bound"), ("fraction", "roofline fraction"),
    ("headroom", "headroom"),
)
_TOOLTIP = [alt.Tooltip(field, type="quantitative" if field == "launches" else "nominal", title=title)
            for field, title in _TOOLTIP_FIELDS]


def roofline_chart(kernels: pd.DataFrame, ctx: ChartContext, *, model_points: pd.DataFrame | None = None,
                   model_pairs: pd.DataFrame | None = None) -> alt.HConcatChart:
    """The roofline (roofs, kernel points per memory level, labels) beside a headroom bar chart, linked by kernel.

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

    x_scale = alt.Scale(type="log", domain=list(data.x_domain))
    y_scale = alt.Scale(type="log", domain=list(data.y_domain))
    x_title, y_title = "arithmetic intensity (FLOP/byte)", "performance (FLOP/s)"
    x = alt.X("x:Q", title=x_title, scale=x_scale, axis=alt.Axis(format="~g"))
    y = alt.Y("y:Q", title=y_title, scale=y_scale, axis=alt.Axis(format="~s"))

    roof_lines = alt.Chart(data.roofs).mark_line(clip=True, strokeWidth=2).encode(
        x=x, y=y, detail="roof:N", color=alt.Color("colour:N", scale=None),
        tooltip=[alt.Tooltip("label:N", title="roof")],
    )
    roof_text = alt.Chart(data.roof_labels).mark_text(
        clip=True, align="right", baseline="bottom", dx=-4, dy=-3, fontSize=11, fontWeight="bold"
    ).encode(x=x, y=y, text="label:N", color=alt.Color("colour:N", scale=None),
             angle=alt.Angle("angle:Q", scale=None))
    # Memory labels sit at the start of their text, compute labels at the end: two text layers, one `align` each.
    roof_text_memory = roof_text.transform_filter("datum.kind === 'memory'").mark_text(
        clip=True, align="left", baseline="bottom", dy=-3, fontSize=11, fontWeight="bold")
    roof_text_compute = roof_text.transform_filter("datum.kind === 'compute'")

    # Legends list what is there, in a fixed order, with fixed colours: a level or bound keeps its colour across runs.
    levels = [level for level in LEVEL_COLOURS if level in set(data.points["level"])]
    bar_rows = data.kernels[data.kernels["in_bars"]]
    bounds = [bound for bound in BOUND_COLOURS if bound in set(bar_rows["bound"])]
    lookup = alt.LookupData(data=data.kernels, key="rank", fields=["label", *(field for field, _ in _TOOLTIP_FIELDS)])
    points_base = alt.Chart(data.points).transform_lookup(lookup="rank", from_=lookup)
    joins = alt.Chart(data.points).mark_line(clip=True, strokeWidth=1, color="#888888").encode(
        x=alt.X("ai:Q", scale=x_scale), y=alt.Y("flop_per_s:Q", scale=y_scale), detail="rank:N", order="ai:Q",
        opacity=alt.when(kernel_pick).then(alt.value(0.6)).otherwise(alt.value(0.12)),
    )
    points = points_base.mark_point(clip=True, filled=True, strokeWidth=0.5, stroke="white").encode(
        x=alt.X("ai:Q", scale=x_scale, title=x_title), y=alt.Y("flop_per_s:Q", scale=y_scale, title=y_title),
        color=alt.Color("level:N", title="memory level",
                        scale=alt.Scale(domain=levels, range=[LEVEL_COLOURS[level] for level in levels])),
        shape=alt.Shape("level:N", scale=alt.Scale(domain=levels, range=[LEVEL_SHAPES[level] for level in levels])),
        size=alt.Size("time_share:Q", title="time share", scale=alt.Scale(range=[30, 400], zero=True),
                      legend=alt.Legend(format=".2~%")),
        opacity=alt.when(level_pick & kernel_pick).then(alt.value(0.95))
        .when(level_pick).then(alt.value(0.2)).otherwise(alt.value(0.03)),
        tooltip=[alt.Tooltip("level:N", title="level"), *_TOOLTIP],
    ).add_params(level_pick, kernel_pick, zoom).properties(name="points")
    labels = alt.Chart(data.kernels).transform_filter("datum.on_roofline").mark_text(
        clip=True, align="left", baseline="middle", dx=9, fontSize=9
    ).encode(
        x=alt.X("label_x:Q", scale=x_scale), y=alt.Y("flop_per_s:Q", scale=y_scale), text="label:N",
        opacity=alt.when(kernel_pick).then(alt.value(1.0)).otherwise(alt.value(0.25)),
    )
    extra = [] if model is None else model_layers(model, model_pairs, data.points, x_scale, y_scale)
    roofline = alt.layer(roof_lines, roof_text_memory, roof_text_compute, joins, points, labels, *extra).properties(
        name="roofline", width=ROOFLINE_WIDTH_PX, height=ROOFLINE_HEIGHT_PX,
    )
    if extra:  # model points keep their own shape legend beside the memory levels'
        roofline = roofline.resolve_scale(shape="independent", color="independent")

    bars = alt.Chart(data.kernels).transform_filter("datum.in_bars").mark_bar().encode(
        x=alt.X("headroom_s:Q", title="headroom (s)", axis=alt.Axis(format="~s")),
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
        color="independent", shape="independent", size="independent", opacity="independent"
    ).properties(
        title=alt.TitleParams(for_chart(f"Hierarchical roofline — {ctx.gpu}"), subtitle=data.subtitle,
                              anchor="start"),
    )


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
    if fmt == "html" and spec is not None:
        from altair.utils.mimebundle import spec_to_mimebundle

        from .vega_bundle import InlineTemplate

        # What chart.save(format="html", inline=True) writes, from the spec already built, with the Vega bundle
        # from the cache instead of rebuilt (render/vega_bundle.py).
        page = spec_to_mimebundle(spec, format="html", mode="vega-lite", vega_version=alt.VEGA_VERSION,
                                  vegalite_version=alt.VEGALITE_VERSION, vegaembed_version=alt.VEGAEMBED_VERSION,
                                  embed_options=dict(EMBED_OPTIONS), template=InlineTemplate(),
                                  json_kwds={"cls": _ScriptSafeEncoder, "sort_keys": True})
        return page["text/html"].encode("utf-8")
    if fmt == "png":
        binary = io.BytesIO()
        chart.save(binary, format="png", scale_factor=1.0)
        return binary.getvalue()
    text = io.StringIO()
    if fmt == "html":
        from .vega_bundle import InlineTemplate

        # Altair's inline=True page, with the Vega bundle from the cache instead of rebuilt (render/vega_bundle.py).
        chart.save(text, format="html", template=InlineTemplate(), embed_options=dict(EMBED_OPTIONS),
                   json_kwds={"cls": _ScriptSafeEncoder, "sort_keys": True})
    else:
        chart.save(text, format="svg")
    return text.getvalue().encode("utf-8")


def chart_payloads(chart: alt.TopLevelMixin, formats: Iterable[str], *, stem: str = "roofline") -> dict[str, bytes]:
    """`{"<stem>.<format>": bytes}` for each of `formats`, in the order asked; rendered, not written."""
    wanted: list[str] = []
    for fmt in formats:
        fmt = "vl.json" if fmt == "json" else fmt
        if fmt not in FORMATS:
            raise ValueError(f"unknown chart format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if fmt not in wanted:
            wanted.append(fmt)
    return {f"{stem}.{fmt}": _render(chart, fmt) for fmt in wanted}


def write_chart(chart: alt.TopLevelMixin, outdir: Path, formats: Iterable[str] = DEFAULT_FORMATS, *,
                stem: str = "roofline") -> list[Path]:
    """Write `<stem>.<format>` (default `roofline.<format>`) into `outdir` for each of `formats` ("vl.json", "html", "svg", "png"; "json" is
    taken for "vl.json"), and return the paths written, in the order asked.

    Every format is rendered before any file is written, so a failing export (vl-convert, say) leaves the
    directory as it was.
    """
    wanted: list[str] = []
    for fmt in formats:
        fmt = "vl.json" if fmt == "json" else fmt
        if fmt not in FORMATS:
            raise ValueError(f"unknown chart format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if fmt not in wanted:
            wanted.append(fmt)
    spec = _spec(chart) if {"vl.json", "html"} & set(wanted) else None
    payloads = {fmt: _render(chart, fmt, spec) for fmt in wanted}
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, payload in payloads.items():
        path = outdir / f"{stem}.{fmt}"
        write_atomic(path, payload)
        paths.append(path)
    return paths
