"""ncu-roofline: hierarchical roofline analysis of Nsight Compute exports and reports.

    from ncu_roofline import analyze
    result = analyze("run.csv")
    result.kernels.head()      # ranked by recoverable time
    result.chart()             # Altair chart
    result.write("out/")       # Parquet tables, Vega-Lite spec, offline HTML

`analyze` and `Analysis` are loaded on first use (module `__getattr__`), so that `import ncu_roofline` and the
command's start-up (`ncu-roofline --help`) do not pay for pandas and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.errors import InputError  # noqa: E402
from .core.version import __version__  # noqa: E402

if TYPE_CHECKING:
    from .analysis import Analysis, analyze

__all__ = ["Analysis", "InputError", "analyze", "__version__"]


def __getattr__(name: str) -> object:
    if name in {"analyze", "Analysis"}:
        from . import analysis

        return getattr(analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
