"""Kernel groups: by name and launch shape, optionally by NVTX range; a group is the sum of its launch rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.pipeline.ceilings import CeilingOptions
from ncu_roofline.pipeline.evaluate import evaluate
from ncu_roofline.pipeline.group import filter_nvtx, group_keys, group_launches
from ncu_roofline.core.launch_table import finish_launch_table


def launches_with_nvtx():
    n = 4
    identity = {"source_file": "run.ncu-rep", "launch_id": list(range(n)), "kernel_name": ["gemm"] * n,
                "grid": ["(8, 1, 1)"] * n, "block": ["(128, 1, 1)"] * n,
                "nvtx_range": ["train/forward", "train/forward", "train/backward", None]}
    metrics = {"gpu__time_duration.sum": [1e-3, 2e-3, 3e-3, 4e-3],
               "dram__bytes.sum": [1e9, 2e9, 3e9, 4e9],
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": [1e9, 1e9, 2e9, 2e9],
               "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": [0.0] * n,
               "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": [0.0] * n,
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": [128.0] * n,
               "dram__bytes.sum.peak_sustained": [100.0] * n,
               "dram__cycles_elapsed.avg.per_second": [1.0e10] * n,
               "sm__cycles_elapsed.avg.per_second": [1.0e9, 1.2e9, 1.4e9, 1.6e9]}
    return evaluate(finish_launch_table(identity, metrics, n), load_catalogue(), CeilingOptions())


def test_group_by_nvtx_splits_a_kernel_by_range():
    launches = launches_with_nvtx()
    groups = group_launches(launches, group_keys(by_nvtx=True)).set_index("nvtx_range", drop=False)
    assert len(groups) == 3
    forward = groups[groups["nvtx_range"] == "train/forward"].iloc[0]
    assert forward["launches"] == 2
    assert forward["time_s"] == pytest.approx(1e-3 + 2e-3)  # totals add up
    assert groups["nvtx_range"].isna().sum() == 1  # launches outside any range form their own group


def test_a_group_is_the_sum_of_its_launches_and_its_ratios_come_from_the_sums():
    launches = launches_with_nvtx()
    groups = group_launches(launches, group_keys(by_nvtx=False))
    assert len(groups) == 1 and groups.iloc[0]["launches"] == 4
    row = groups.iloc[0]
    assert row["time_s"] == pytest.approx(1e-3 + 2e-3 + 3e-3 + 4e-3)
    assert row["flop_fp32"] == pytest.approx(2 * (1e9 + 1e9 + 2e9 + 2e9))
    # the ratio comes from the sums, never from a mean of per-launch ratios
    assert row["ai_dram"] == pytest.approx(2 * 6e9 / 10e9)
    # roofs per launch: FP32 2 x 128 x clock (256, 307.2, 358.4, 409.6 GFLOP/s), DRAM 100 x 1e10 = 1 TB/s.
    # FP32 time at the roof: 2e9/256e9 + 2e9/307.2e9 + 4e9/358.4e9 + 4e9/409.6e9 = 0.03560686 s per launch sum;
    # DRAM: (1+2+3+4)e9 / 1e12 = 0.01 s. Every launch is FP32-bound: t_sol = the FP32 sum.
    fp32_times = [2e9 / 256e9, 2e9 / 307.2e9, 4e9 / 358.4e9, 4e9 / 409.6e9]
    assert row["t_sol_s"] == pytest.approx(sum(fp32_times), rel=1e-12)
    assert row["headroom_s"] == pytest.approx(10e-3 - sum(fp32_times), rel=1e-12)
    assert row["roofline_fraction"] == pytest.approx(sum(fp32_times) / 10e-3, rel=1e-12)
    assert row["bound"] == "fp32"
    # the group's FP32 roof: summed FLOPs over summed time at the roofs, so amount / roof = the summed times
    assert row["peak_flop_per_s_fp32"] == pytest.approx(12e9 / sum(fp32_times), rel=1e-12)
    assert row["peak_bytes_per_s_dram"] == pytest.approx(1e12, rel=1e-12)


def test_an_unknown_launch_value_makes_the_group_value_unknown():
    launches = launches_with_nvtx()
    launches.loc[2, "bytes_dram"] = np.nan
    row = group_launches(launches, group_keys(by_nvtx=False)).iloc[0]
    assert np.isnan(row["bytes_dram"]) and np.isnan(row["ai_dram"])
    assert row["time_s"] == pytest.approx(10e-3)


def test_a_note_on_some_launches_says_on_how_many():
    launches = launches_with_nvtx()
    launches["status"] = ["ok", "above_roof dram", "ok", "above_roof dram; bytes_order l1<l2"]
    row = group_launches(launches, group_keys(by_nvtx=False)).iloc[0]
    assert row["status"] == "above_roof dram (2 of 4 launches); bytes_order l1<l2 (1 of 4 launches)"


def test_nvtx_include_keeps_matching_paths_only():
    raw = launches_with_nvtx()
    kept = filter_nvtx(raw, "train/forward*")
    assert list(kept["launch_id"]) == [0, 1]
    assert list(filter_nvtx(raw, "train/*")["launch_id"]) == [0, 1, 2]
    assert filter_nvtx(raw, "eval/*").empty


def test_distinct_values_of_a_group_join_sorted_and_unknown_stays_unknown():
    """`_distinct` (definition ids, ceiling sources): the one value a group's launches share, else all of them
    sorted and joined with '+'; a group with no value has none. Categories listed out of order must not leak
    their order into the text."""
    from ncu_roofline.pipeline.group import _distinct

    values = pd.Categorical(["b", "a", "a", None, "c", "a"], categories=["c", "b", "a"])
    frame = pd.DataFrame({"def_x": values, "_group": [0, 0, 0, 1, 2, 3]})
    assert _distinct(frame, "def_x").tolist() == ["a+b", pd.NA, "c", "a"]
    one = pd.DataFrame({"def_x": ["fp32_ffma", None, "fp32_ffma"], "_group": [0, 1, 2]})
    assert _distinct(one, "def_x").tolist() == ["fp32_ffma", pd.NA, "fp32_ffma"]
    assert _distinct(one, "absent").tolist() == [pd.NA, pd.NA, pd.NA]
