"""ncu-roofline: hierarchical roofline analysis of Nsight Compute exports and reports.

    from ncu_roofline import analyze
    result = analyze("run.csv")
    result.kernels.head()      # ranked by recoverable time
    result.chart()             # Altair chart
    result.write("out/")       # Parquet tables, Vega-Lite spec, offline HTML

`analyze` and `Analysis` are loaded on first use (module `__getattr__`), so that `import ncu_roofline` and the
command's start-up (`ncu-roofline --help`) do not pay for pandas and pyarrow. So are the two checks a command makes
of what it was given before it reads anything: `refuse_unreadable(paths)` (a file that is plainly no ncu table,
refused with its reader's line before pandas is loaded) and `parse_gates(texts)` (the `--fail-on` grammar that
compare, history and the MCP server share).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.errors import InputError  # noqa: E402
from .core.version import __version__  # noqa: E402

if TYPE_CHECKING:
    from .analysis import Analysis, analyze
    from .pipeline.gates import parse_gates
    from .readers import refuse_unreadable

__all__ = ["Analysis", "InputError", "analyze", "parse_gates", "refuse_unreadable", "__version__"]


def __getattr__(name: str) -> object:
    if name in {"analyze", "Analysis"}:
        from . import analysis

        return getattr(analysis, name)
    if name == "parse_gates":
        from .pipeline.gates import parse_gates

        return parse_gates
    if name == "refuse_unreadable":
        from .readers import refuse_unreadable

        return refuse_unreadable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
