"""One `ncu --csv` export (details page, raw page or per-kernel summary) into a LaunchTable."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from .long_pages import read_long_page
from .raw_page import read_raw_page
from .text import locate_table


def read_csv_export(path: Path, wanted: Callable[[str], bool] | None = None,
                    progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Find the table in `path`, recognise its page from the header, and read it."""
    start = locate_table(Path(path))
    keep = wanted or (lambda name: True)
    if start.layout == "raw":
        return read_raw_page(start, keep, progress)
    return read_long_page(start, keep, progress)
