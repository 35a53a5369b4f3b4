"""`collection(arch) -> Collection`: what to ask ncu for, the façade of `ncu-roofline metrics` (the work is in
`pipeline/collect.py`, over the catalogue and limiters.toml), so the command parses, calls this and prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Collection:
    """The metrics and sections an analysis of compute capability `arch` (None: any) needs; `complete`: every
    metric any definition can use."""

    arch: float | None = None
    complete: bool = False

    @property
    def _catalogue(self):
        from .pipeline.catalogue import load_catalogue

        return load_catalogue()

    def metric_list(self) -> list[str]:
        """The comma-separated `--metrics` list's names."""
        from .pipeline.collect import collection_metrics

        return list(collection_metrics(self._catalogue, self.arch, complete=self.complete))

    def metrics_flag(self) -> str:
        """`--metrics a,b,...` for a CSV export of the raw page."""
        from .pipeline.collect import metrics_flag

        return metrics_flag(self._catalogue, self.arch, complete=self.complete)

    def sections_flag(self) -> str:
        """`--section ...` for a binary report."""
        from .pipeline.collect import sections_flag

        return sections_flag()

    def limiter_sections_flag(self) -> str:
        """The sections the limiter and the instruction roofline read (binary report)."""
        from .pipeline.collect import limiter_sections_flag

        return limiter_sections_flag()

    def limiter_metrics(self) -> list[str]:
        """The metrics the limiter and the instruction roofline read (CSV, beside the list above)."""
        from .pipeline.collect import limiter_metrics

        return list(limiter_metrics(self._catalogue, complete=self.complete))


def collection(arch: float | None = None, *, complete: bool = False) -> Collection:
    return Collection(arch, complete)
