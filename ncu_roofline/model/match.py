"""Model beside measurement: points of a points file set against the kernel groups their `kernel` regex names.

A point counts ONE launch (one call of the operation). A kernel group sums all its launches, so the group's model
is the matched points' sum × the group's launches, and the ratios compare like with like:

    flop_over_model       = flop_total / model_flop     (1.0: the kernel does exactly the modelled work)
    dram_bytes_over_model = bytes_dram / model_bytes    (3.0: three times the minimum DRAM traffic)

A regex is searched (RE2, linear time: core/patterns.py) in the kernel name and in the demangled name. Several points matching one group
are summed and named in `model_points`; a point may match several groups; a group no point matches has nulls.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.patterns import compile_regex
from ..core.vocabulary import BYTES_OFF_CHIP
from ..pipeline.select import name_mask
from ..roofs.peaks import compute_peak, memory_peak, run_peaks
from .place import roofline_values

MODEL_COLUMNS = ("model_flop", "model_bytes", "model_ai", "flop_over_model", "dram_bytes_over_model",
                 "model_points")


def match_pairs(points: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """(point index, name, kernel rank) for every point whose `kernel` regex is found in a group's names."""
    rows = []
    for index, point in points.iterrows():  # one regex per point; the kernels are matched vectorised
        pattern = point.get("kernel")
        if pattern is None or pd.isna(pattern):
            continue
        regex = compile_regex(str(pattern), f"point {point['name']!r}: kernel {str(pattern)!r}")
        rows += [(index, point["name"], int(rank)) for rank in kernels.loc[name_mask(kernels, regex), "rank"]]
    return pd.DataFrame(rows, columns=["point", "name", "rank"])


def model_columns(kernels: pd.DataFrame, points: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The kernel table with MODEL_COLUMNS added (null where no point matches)."""
    joined = pairs.merge(points[["flop", "bytes"]], left_on="point", right_index=True)
    per_rank = joined.groupby("rank", sort=True).agg(flop=("flop", "sum"), bytes=("bytes", "sum"),
                                                     model_points=("name", lambda s: " + ".join(s)))
    table = kernels.drop(columns=[c for c in MODEL_COLUMNS if c in kernels]).merge(
        per_rank, left_on="rank", right_index=True, how="left")
    launches = table["launches"].astype("float64")
    model_flop = table.pop("flop") * launches
    model_bytes = table.pop("bytes") * launches
    with np.errstate(divide="ignore", invalid="ignore"):
        values = {
            "model_flop": model_flop,
            "model_bytes": model_bytes,
            "model_ai": model_flop / model_bytes,
            "flop_over_model": table["flop_total"].astype("float64") / model_flop.where(model_flop > 0),
            "dram_bytes_over_model": table[BYTES_OFF_CHIP].astype("float64") / model_bytes.where(model_bytes > 0),
        }
    for name, value in values.items():
        table[name] = value.astype("float64")
    table["model_points"] = table.pop("model_points").astype("string")
    return table.reset_index(drop=True)


def place_on_run(points: pd.DataFrame, kernels: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The points on the run's own roofs (ai, attainable, bound, ...) and how many kernel groups each matched."""
    peaks = run_peaks(kernels)
    dram = memory_peak(peaks, "dram")
    frame = points.assign(gpu="measured run",
                          peak_flop_per_s=points["roof"].map(lambda k: compute_peak(peaks, k)).astype("float64"),
                          peak_bytes_per_s_dram=np.nan if dram is None else dram)
    frame = pd.concat([frame, roofline_values(frame)], axis=1)
    counts = pairs.groupby("point").size()
    frame["matched_kernels"] = counts.reindex(frame.index, fill_value=0).astype("int64").to_numpy()
    return frame.reset_index(drop=True)
