"""history/series.py's vectorised steps checked against pandas' own operations on the same rows: the order of the
rows (a stable sort by run, launch order, name, nulls last), the identity keys (a null part and "" are one key),
and the wide per-run table (pivot_table's 'first' of each series and run, all-null series left out)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ncu_roofline.history.series import IDENTITY, VALUES, assign_series, wide_values


def _rows() -> pd.DataFrame:
    """Three runs of kernels given out of order, with null names, null NVTX paths beside "", equal names with
    other grids, a run that is not shown and null launch orders."""
    names = ["b", "a", None, "a", "b", "a", "c", "a", "b", "a"]
    frame = pd.DataFrame({
        "run_id": ["r2", "r1", "r0", "r0", "r0", "r2", "rX", "r1", "rX", "r0"],
        "kernel_name": pd.array(names, dtype="string"),
        "grid": ["(1, 1, 1)", "(2, 1, 1)", "(1, 1, 1)", "(2, 1, 1)", "(1, 1, 1)", "(1, 1, 1)", "(1, 1, 1)",
                 "(1, 1, 1)", "(1, 1, 1)", "(1, 1, 1)"],
        "block": ["(32, 1, 1)"] * 10,
        "nvtx_range": [None, "", None, None, "", "", None, "", None, ""],
        "device_name": ["H100"] * 10,
        "launch_order": [np.nan, 1.0, np.nan, 1.0, np.nan, np.nan, 0.0, 0.0, np.nan, 0.0],
    })
    for i, value in enumerate(v for v in VALUES if v not in frame):
        frame[value] = np.arange(10, dtype="float64") + i
    return frame


def test_rows_are_ordered_as_a_stable_pandas_sort_and_null_and_empty_paths_share_a_series():
    rows = _rows()
    runs = pd.DataFrame({"run_id": ["r0", "r1", "r2"]})
    series = assign_series(rows, runs)
    expected = rows[rows["run_id"].isin(runs["run_id"])].assign(run_index=rows["run_id"].map({"r0": 0, "r1": 1,
                                                                                             "r2": 2}))
    expected = expected.sort_values(["run_index", "launch_order", "kernel_name"], kind="stable", na_position="last")
    assert series["time_s"].tolist() == expected["time_s"].tolist()
    assert series["run_index"].tolist() == expected["run_index"].tolist()
    # one series per (name, grid, block, path) with null and "" paths alike: a in (1, 1, 1) runs in all three runs
    key = series["kernel_name"].fillna("?") + series["grid"]
    for name, ids in series.groupby(key)["series_id"]:
        assert ids.nunique() == 1, name
    assert series.groupby("series_id")["run_index"].apply(list)[series.loc[key == "a(1, 1, 1)", "series_id"].iloc[0]
                                                                ] == [0, 1, 2]
    assert set(IDENTITY) <= set(series.columns)


def test_wide_values_is_pivot_tables_first_of_each_series_and_run():
    series = pd.DataFrame({"series_id": [0, 0, 1, 1, 2, 3, 3, 3, 4],
                           "run_index": [0, 2, 0, 1, 1, 0, 0, 2, 3],
                           "time_s": [1.0, 2.0, np.nan, 3.0, np.nan, np.nan, 4.0, 5.0, 6.0]})
    expected = series.pivot_table(index="series_id", columns="run_index", values="time_s", aggfunc="first")
    expected = expected.reindex(columns=range(5))
    got = wide_values(series, "time_s", 5)
    pd.testing.assert_frame_equal(got, expected, check_column_type=False)
    assert 2 not in got.index  # a series with no known value has no row, as in pivot_table
    assert got.loc[3, 0] == 4.0  # the first known value of the run, past a null
