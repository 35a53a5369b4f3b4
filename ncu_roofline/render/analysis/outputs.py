"""Everything `analyze -o DIR` writes, as one bundle (render/bundle.py): the Parquet tables, then the chart files,
rendered before any is written and put in place together."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..bundle import Bundle
from ..outputs import INSTRUCTION_STEM, chart_set, names, requested, stem

if TYPE_CHECKING:  # pandas and the charts are imported when the files are made: the CLI reads the names below first
    import pandas as pd

    from ..chart.context import ChartContext

OUTPUT_NAMES = names("analysis")


@dataclass(frozen=True)
class AnalysisTables:
    """What an analysis' files are made of: its two tables, their file metadata, the chart's context, and the
    analytic points drawn beside the kernels (`analyze --points`)."""

    launches: pd.DataFrame
    kernels: pd.DataFrame
    metadata: dict[str, str]
    ctx: ChartContext
    model_points: pd.DataFrame | None = None
    model_pairs: pd.DataFrame | None = None


def analysis_bundle(tables: AnalysisTables, *, formats: tuple[str, ...] = (),
                    precisions: tuple[str, ...] = ()) -> Bundle:
    """`launches.parquet`, `kernels.parquet`, `roofline.vl.json`, `roofline.html`, any extra chart formats, the
    instruction roofline where the capture counts warp instructions, and per precision asked for
    `roofline_<precision>.*`: that precision's work over its own roof (precision_view.py)."""
    from ...core.parquet import table_bytes
    from ..chart.chart_files import chart_payloads
    from ..chart.vega_bundle import javascript_bundle
    from .chart import roofline_spec
    from .instruction_chart import has_instruction_data, instruction_roofline_spec
    from .precision_view import precision_view

    views = {p: precision_view(tables.kernels, p) for p in precisions}  # a bad --precision fails before writing
    charts = chart_set("analysis", formats)
    frames = {"launches": tables.launches, "kernels": tables.kernels}
    files = {o.name: table_bytes(o.format, frames[stem(o)], tables.metadata)
             for o in requested("analysis", formats, "table")}
    spec = roofline_spec(tables.kernels, tables.ctx, model_points=tables.model_points, model_pairs=tables.model_pairs)
    page = javascript_bundle() if "html" in charts else None  # read once for every page of the bundle
    files.update(chart_payloads(spec, charts, page_bundle=page))
    if has_instruction_data(tables.kernels):
        ctx = tables.ctx
        title = f"{ctx.gpu} · {', '.join(Path(p).name for p in ctx.inputs)}"
        files.update(chart_payloads(instruction_roofline_spec(tables.kernels, title=title, top=ctx.top), charts,
                                    stem=INSTRUCTION_STEM, page_bundle=page))
    for precision, view in views.items():
        view_spec = roofline_spec(view, replace(tables.ctx, precision=precision))
        files.update(chart_payloads(view_spec, charts, stem=f"roofline_{precision}", page_bundle=page))
    return Bundle(files, names=OUTPUT_NAMES)
