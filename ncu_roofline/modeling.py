"""Roofs without a profile: `model(work, gpus) -> Model`, the façade of `ncu-roofline model ...` (beside
`analyze() -> Analysis`, `compare() -> Comparison` and `trends() -> History`), and the built-in GPU ceiling table as
`ncu-roofline ceilings` shows it (`gpu_rows`, `describe`, `template`, `compare_gpus -> GpuRoofs`).

The work is in `model/` (counting a workload's FLOP and bytes, reading a points file, placing points on each GPU's
roofs); this holds the result and hands its tables to the renderers, so a command parses, calls this, writes the
bundle and prints. The table's work is in `roofs/gpu_table.py`, a report's own peaks for a template in
`pipeline/evaluate.py`, roofs side by side in `model/compare_gpus.py`. `workload(kind, ...)` counts one of the
built-in `WORKLOADS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from .model.place import Placement
    from .render.bundle import Bundle


WORKLOADS = ("gemm", "conv2d", "elementwise", "layernorm", "softmax", "llm")  # model/workloads.py, model/llm.py


def _counter(kind: str) -> Callable[..., object]:
    from .model import llm, workloads

    return llm.llm if kind == "llm" else getattr(workloads, kind)


def workload(kind: str, *args: object, **params: object) -> list[object]:
    """One built-in workload's FLOP and minimum DRAM bytes (model/workloads.py, model/llm.py), as a list of one."""
    if kind not in WORKLOADS:
        raise InputError(None, f"workload {kind!r} is not one of {', '.join(WORKLOADS)}")
    return [_counter(kind)(*args, **params)]


def read_points(path: str | Path, *, default_roof: str) -> pd.DataFrame:
    """FLOP and byte counts made elsewhere (a CSV or TOML file; model/points.py)."""
    from .model.points import read_points as read

    return read(path, default_roof=default_roof)


@dataclass(frozen=True)
class Model:
    """Analytic points placed on every GPU asked for (model/place.py), with their outputs."""

    placement: Placement
    input_paths: list[Path] = field(default_factory=list)  # a points file: outputs are never written over it

    @property
    def points(self) -> pd.DataFrame:
        return self.placement.points

    @property
    def metadata(self) -> dict[str, str]:
        return self.placement.metadata

    def json(self) -> str:
        """The JSON of the points (docs/json-schema.md)."""
        from .render.model.json_summary import model_json

        return model_json(self.points, self.metadata)

    def bundle(self, *, formats: Iterable[str] = ()) -> Bundle:
        """The files `-o DIR` holds (render/model/outputs.py), rendered, not yet written."""
        from .render.model.outputs import model_bundle

        return model_bundle(self.points, self.placement.peaks_by_gpu, metadata=self.metadata,
                            formats=tuple(formats))

    def write(self, outdir: str | Path, *, formats: Iterable[str] = ()) -> list[Path]:
        return self.bundle(formats=formats).write(Path(outdir), self.input_paths)


def model(work: pd.DataFrame | list, gpus: Iterable[str] = (), ceilings: str | Path | None = None, *,
          inputs: Iterable[Path] = ()) -> Model:
    """Place workloads (`workload`) or a points frame (`read_points`) on each GPU of the table named in `gpus` and
    on the roofs of a `ceilings` file."""
    from .model.place import gpu_roofs, place

    return Model(place(work, gpu_roofs(list(gpus), ceilings)), [Path(p) for p in inputs])


def gpu_rows() -> list[dict]:
    """Every GPU of the table, one row each (name, aliases, compute capability, roofs)."""
    from .roofs.gpu_table import list_gpus, load_gpu_table

    return list_gpus(load_gpu_table())


def describe(name: str) -> dict:
    """One GPU's roofs and how each was derived, its sources and caveats (a name or alias of the table)."""
    from .roofs.gpu_table import describe_gpu, match_gpu

    return describe_gpu(match_gpu(name))


def template(name: str, source: str | Path | None = None) -> str:
    """A `--ceilings` TOML file for a GPU the table lacks, to fill in; prefilled from a report's own peaks."""
    from .pipeline.evaluate import report_peaks
    from .render.ceilings.template import ceilings_template_text

    peaks, origin = report_peaks(source) if source else ({}, None)
    return ceilings_template_text(name, peaks, origin)


@dataclass(frozen=True)
class GpuRoofs:
    """Several GPUs' roofs and ridge points side by side (model/compare_gpus.py): one row per roof or ridge."""

    frame: pd.DataFrame

    def json(self) -> str:
        from .render.model.json_summary import compare_json

        return compare_json(self.frame)


def compare_gpus(names: Iterable[str]) -> GpuRoofs:
    """`ceilings compare`: the table's GPUs named (names or aliases), their roofs and ridge points."""
    from .model.compare_gpus import compare_roofs
    from .model.place import gpu_roofs

    return GpuRoofs(compare_roofs(gpu_roofs(list(names))))
