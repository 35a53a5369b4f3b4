"""ncu-roofline: hierarchical roofline analysis of Nsight Compute exports and reports.

    from ncu_roofline import analyze
    result = analyze("run.csv")
    result.kernels.head()      # ranked by recoverable time
    result.chart()             # Altair chart
    result.write("out/")       # Parquet tables, Vega-Lite spec, offline HTML
"""

from .version import __version__  # noqa: E402
from .analysis import Analysis, analyze  # noqa: E402
from .errors import InputError  # noqa: E402

__all__ = ["Analysis", "InputError", "analyze", "__version__"]
