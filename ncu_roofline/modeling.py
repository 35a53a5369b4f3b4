"""`model(work, gpus) -> Model`: the façade of `ncu-roofline model ...`, beside `analyze() -> Analysis`,
`compare() -> Comparison` and `trends() -> History` (the GPUs' own roofs side by side are `gpus.compare_gpus`).

The work is in `model/` (counting a workload's FLOP and bytes, reading a points file, placing points on each GPU's
roofs); this holds the result and hands its tables to the renderers, so a command parses, calls this, writes the
bundle and prints. `workload(kind, ...)` counts one of the built-in workloads (gemm, conv2d, elementwise,
layernorm, softmax, llm).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    import pandas as pd

    from .model.place import Placement
    from .render.bundle import Bundle


def _counter(kind: str) -> Callable[..., object]:
    from .model import llm, workloads

    return {"gemm": workloads.gemm, "conv2d": workloads.conv2d, "elementwise": workloads.elementwise,
            "layernorm": workloads.layernorm, "softmax": workloads.softmax, "llm": llm.llm}[kind]


def workload(kind: str, *args: object, **params: object) -> list[object]:
    """One built-in workload's FLOP and minimum DRAM bytes (model/workloads.py, model/llm.py), as a list of one."""
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
