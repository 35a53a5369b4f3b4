"""Everything `analyze -o DIR` writes, in one place: Parquet tables, then the chart files, staged as one set
(render/output_set.py) so that a reader sees the previous run's files or this run's, never a mix."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import InputError
from ..bundle import OutputSet, prepare_outdir

if TYPE_CHECKING:  # pandas and the chart are imported when outputs are made: the CLI reads the names below first
    import pandas as pd

    from .chart import ChartContext

CHART_FORMATS = ("vl.json", "html", "svg", "png")
EXTRA_FORMATS = ("svg", "png")  # what --format may ask for; vl.json and html are always written
INSTRUCTION_STEM = "instruction_roofline"  # written where the capture counts warp instructions
OUTPUT_NAMES = ("launches.parquet", "kernels.parquet", *(f"roofline.{fmt}" for fmt in CHART_FORMATS),
                *(f"{INSTRUCTION_STEM}.{fmt}" for fmt in CHART_FORMATS))


def write_outputs(outdir: Path, *, launches: pd.DataFrame, kernels: pd.DataFrame, metadata: dict[str, str],
                  ctx: ChartContext, inputs: list[Path], formats: Iterable[str] = (),
                  model_points: pd.DataFrame | None = None, model_pairs: pd.DataFrame | None = None,
                  precisions: Iterable[str] = ()) -> list[Path]:
    """`launches.parquet`, `kernels.parquet`, `roofline.vl.json`, `roofline.html`, and any extra chart formats.

    `inputs` are never written over; `metadata` goes into every file that can carry it. Each of `precisions`
    adds `roofline_<precision>.*`: that precision's work over its own roof (render/precision_view.py).
    """
    with OutputSet(inputs) as outputs:
        stage_outputs(outdir, outputs, launches=launches, kernels=kernels, metadata=metadata, ctx=ctx, inputs=inputs,
                      formats=formats, model_points=model_points, model_pairs=model_pairs, precisions=precisions)
        return outputs.commit()


def stage_outputs(outdir: Path, outputs: OutputSet, *, launches: pd.DataFrame, kernels: pd.DataFrame,
                  metadata: dict[str, str], ctx: ChartContext, inputs: list[Path], formats: Iterable[str] = (),
                  model_points: pd.DataFrame | None = None, model_pairs: pd.DataFrame | None = None,
                  precisions: Iterable[str] = ()) -> None:
    """Render every file first (a failing chart export writes nothing), then stage them in `outputs`; a file of an
    earlier run that this one does not write (`roofline.png` without --format png) goes at commit."""
    from dataclasses import replace

    from ...core.parquet import parquet_bytes
    from ..chart_files import chart_payloads
    from .chart import roofline_spec
    from .instruction_chart import has_instruction_data, instruction_roofline_spec
    from .precision_view import precision_view

    views = {p: precision_view(kernels, p) for p in precisions}  # a bad --precision fails before writing
    extra = [f for f in formats if f]
    unknown = [f for f in extra if f not in EXTRA_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from {', '.join(EXTRA_FORMATS)}")
    payloads = {"launches.parquet": parquet_bytes(launches, metadata),
                "kernels.parquet": parquet_bytes(kernels, metadata)}
    spec = roofline_spec(kernels, ctx, model_points=model_points, model_pairs=model_pairs)
    payloads.update(chart_payloads(spec, ["vl.json", "html", *extra]))
    if has_instruction_data(kernels):
        title = f"{ctx.gpu} · {', '.join(Path(p).name for p in ctx.inputs)}"
        payloads.update(chart_payloads(instruction_roofline_spec(kernels, title=title, top=ctx.top),
                                       ["vl.json", "html", *extra], stem=INSTRUCTION_STEM))
    for precision, view in views.items():
        view_spec = roofline_spec(view, replace(ctx, precision=precision))
        payloads.update(chart_payloads(view_spec, ["vl.json", "html", *extra], stem=f"roofline_{precision}"))
    prepare_outdir(outdir, inputs)
    for name, payload in payloads.items():
        outputs.stage(outdir / name, payload)
    outputs.replace_stale(outdir / name for name in OUTPUT_NAMES if (outdir / name).exists())
