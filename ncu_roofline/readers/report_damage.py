"""What the `ncu-report` wheel returns, checked before it is believed.

The container walk in `ncu_rep` catches truncation and broken block lengths, but a byte flipped inside a block's
protobuf payload passes it, and the wheel then loads a launch with an empty name and not one metric (one flipped
byte in `CudaCode/vec_add.ncu-rep` does). Such a launch is damage, not data: analysing it gives a run of nameless,
unknown launches that a `compare --fail-on` would judge nothing of. A report holding one is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.launch_table import metric_columns


def check_report_launches(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Return `table` when every launch has a kernel name and at least one metric value; else InputError."""
    names = table["kernel_name"].astype("object")
    nameless = (names.isna() | (names.fillna("").astype(str).str.strip() == "")).to_numpy(dtype=bool)
    metrics = metric_columns(table)
    empty = ~table[metrics].notna().any(axis=1).to_numpy(dtype=bool) if metrics else np.ones(len(table), dtype=bool)
    damaged = nameless | empty
    if len(table) == 0 or not damaged.any():
        return table
    first = int(np.argmax(damaged))
    what = " and ".join(w for w, flag in (("no kernel name", nameless[first]), ("no metric value", empty[first]))
                        if flag)
    count = f" ({int(damaged.sum())} of {len(table)} launches are)" if damaged.sum() > 1 else ""
    raise InputError(path, f"corrupt Nsight Compute report: launch {int(table['launch_id'].iloc[first])} has {what}"
                           f"{count}; the file is damaged, copy or export it again")
