"""Everything `model ... -o DIR` writes: `model.parquet` (the placed points) and the chart files (`model.*`), staged as
one set (render/output_set.py) so a reader sees the previous run's files or this run's, never a mix."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from ...core.errors import InputError
from ...core.parquet import parquet_bytes
from ..bundle import OutputSet, prepare_outdir

CHART_FORMATS = ("svg", "png")


def write_model_outputs(points: pd.DataFrame, peaks_by_gpu: Mapping[str, Mapping[str, float]], outdir: Path, *,
                        metadata: dict[str, str], formats: Iterable[str] = (), inputs: list[Path] = (),
                        title: str = "Analytic roofline") -> list[Path]:
    from ..chart_files import chart_payloads
    from .chart import model_chart

    extra = [f for f in formats if f]
    if unknown := [f for f in extra if f not in CHART_FORMATS]:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from svg, png")
    spec = model_chart(points, peaks_by_gpu, title=title,
                       subtitle=[f"Roofs: {', '.join(metadata.get('ncu_roofline.roofs', '').split(';'))}"])
    payloads = {"model.parquet": parquet_bytes(points, metadata),
                **chart_payloads(spec, ["vl.json", "html", *extra], stem="model")}  # all rendered before any is written
    prepare_outdir(outdir, list(inputs))
    with OutputSet(inputs) as outputs:
        for name, payload in payloads.items():
            outputs.stage(outdir / name, payload)
        return outputs.commit()
