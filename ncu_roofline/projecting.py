"""`project(analysis, targets) -> Projected`: the façade of `ncu-roofline project`, beside `analyze() -> Analysis`:
the analysed run placed on other GPUs' roofs (`Analysis.project`, projection/project.py), with its outputs
(`json()`, `markdown()`, `bundle()`), so the command parses, checks the targets, analyses, calls this, writes the
bundle and prints (docs/projection.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .analysis import Analysis
    from .projection.project import Projection
    from .render.bundle import Bundle


def check_targets(names: Iterable[str]) -> list:
    """Every target checked before a profile is read: table rows by name, `.toml` files as ceilings files."""
    from .projection.project import target_roofs

    return target_roofs(list(names))


@dataclass(frozen=True)
class Projected:
    """An analysis (the measured run) and its projection onto each target."""

    analysis: Analysis
    projection: Projection

    @property
    def input_paths(self) -> list[Path]:
        return self.analysis.input_paths

    def json(self) -> str:
        from .render.projection.json_summary import projection_json

        p = self.projection
        return projection_json(p.kernels, p.runs, p.metadata)

    def markdown(self, *, top: int = 10) -> str:
        from .projection.project import ASSUMPTIONS
        from .render.projection.console import projection_markdown

        p = self.projection
        return projection_markdown(p.kernels, p.runs, source_gpu=p.source_gpu,
                                   inputs=[f.path for f in self.analysis.inputs], assumptions=ASSUMPTIONS, top=top)

    def bundle(self, *, formats: Iterable[str] = (), top: int = 20) -> Bundle:
        """The files `-o DIR` holds (render/projection/outputs.py), rendered, not yet written."""
        from .render.projection.outputs import projection_bundle

        p = self.projection
        return projection_bundle(p.kernels, self.analysis.kernels, p.source_gpu, p.source_peaks, p.peaks_by_gpu,
                                 metadata=p.metadata, formats=tuple(formats), top=top)

    def refuse_unplaceable(self, source: str | None) -> None:
        """Bad input where a target can take nothing (InputError naming `source`, the one profile or None)."""
        from .projection.project import refuse_unplaceable

        refuse_unplaceable(self.projection.kernels, self.projection.runs, source)


def project(analysis: Analysis, targets: Iterable[str | Path]) -> Projected:
    return Projected(analysis, analysis.project(targets))
