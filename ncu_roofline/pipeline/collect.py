"""What to collect: the ncu flags that give the analysis everything it can use, read off the catalogue."""

from __future__ import annotations

import re

import pandas as pd

from ..core.vocabulary import DERIVED_QUANTITIES, ROOF_COLUMNS, TENSOR_FLOP_COLUMNS
from .catalogue import Catalogue

# The sections that hold the hierarchical roofline data in a binary report.
ROOFLINE_SECTIONS = ("SpeedOfLight", "SpeedOfLight_RooflineChart", "SpeedOfLight_HierarchicalSingleRooflineChart",
                     "SpeedOfLight_HierarchicalDoubleRooflineChart", "SpeedOfLight_HierarchicalHalfRooflineChart",
                     "SpeedOfLight_HierarchicalTensorRooflineChart")
_QUANTITIES = (*DERIVED_QUANTITIES, *ROOF_COLUMNS, *TENSOR_FLOP_COLUMNS, "max_sm_clock_hz")


def collection_metrics(catalogue: Catalogue, compute_capability: float | None = None, *,
                       complete: bool = False) -> list[str]:
    """The `--metrics` list for a CSV export: per quantity, the inputs of the first totals-form definition that
    applies to the architecture (of every one with `complete`). Globs become ncu `regex:` entries."""
    arch = pd.DataFrame({"compute_capability": pd.array([compute_capability], dtype="Float64")})
    names: list[str] = []
    for quantity in _QUANTITIES:
        for definition in catalogue.definitions(quantity):
            if not complete and definition.is_rate_form:
                continue  # rate forms are for section-only reports; --metrics can ask for the totals
            # a condition on the architecture alone (`isnull` is its function, not a metric)
            arch_only = definition.when is not None and set(definition.when.names) <= {"compute_capability", "isnull"}
            if compute_capability is not None and arch_only and not definition.applies(arch)[0]:
                continue
            names.extend(definition.expr.names)
            names.extend(f"regex:^{_glob_regex(g)}$" for g in definition.expr.globs)
            if not complete and (compute_capability is not None or definition.when is None
                                 or (arch_only and definition.applies(arch)[0])):
                break
    if complete:
        names.extend(limiter_metrics(catalogue, complete=True))
    return list(dict.fromkeys(names))


def limiter_metrics(catalogue: Catalogue, *, complete: bool = False) -> list[str]:
    """The `--metrics` list for the limiter and the instruction roofline (metrics/limiters.toml): per quantity the
    inputs of its first definition (of every one with `complete`)."""
    from .limiter import limiter_settings

    names: list[str] = []
    for quantity in limiter_settings().quantities:
        for definition in catalogue.definitions(quantity)[: None if complete else 1]:
            names.extend(definition.expr.names)
    return list(dict.fromkeys(names))


def limiter_sections_flag() -> str:
    """The ncu sections that hold the limiter's counters in a binary report (`--set full` has them all)."""
    from .limiter import limiter_settings

    return " ".join(f"--section {s}" for s in limiter_settings().sections)


def metrics_flag(catalogue: Catalogue, compute_capability: float | None = None, *, complete: bool = False) -> str:
    return "--metrics " + ",".join(collection_metrics(catalogue, compute_capability, complete=complete))


def sections_flag() -> str:
    return " ".join(f"--section {s}" for s in ROOFLINE_SECTIONS)


def _glob_regex(glob: str) -> str:
    """A catalogue glob as an ncu `regex:`: `*` is any text, `[fb]` a character class, the rest literal."""
    return re.escape(glob).replace("\\*", ".*").replace("\\[", "[").replace("\\]", "]")
