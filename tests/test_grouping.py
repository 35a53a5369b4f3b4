"""Kernel groups: by name and launch shape, optionally by NVTX range; launch counts stay honest."""

from __future__ import annotations

import numpy as np
import pytest

from ncu_roofline.catalogue import load_catalogue
from ncu_roofline.ceilings import CeilingOptions
from ncu_roofline.pipeline import evaluate
from ncu_roofline.group import filter_nvtx, group_keys, group_launches
from ncu_roofline.launch_table import finish_launch_table


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
               "sm__cycles_elapsed.avg.per_second": [1.0e9, 1.2e9, 1.4e9, 1.6e9]}
    table = finish_launch_table(identity, metrics, n)
    table["_file_mask"] = np.int64(1)
    table["_capture"] = 0
    return table


def test_group_by_nvtx_splits_a_kernel_by_range():
    raw = launches_with_nvtx()
    groups = group_launches(raw, group_keys(by_nvtx=True)).set_index("nvtx_range", drop=False)
    assert len(groups) == 3
    forward = groups[groups["nvtx_range"] == "train/forward"].iloc[0]
    assert forward["launches"] == 2
    assert forward["gpu__time_duration.sum"] == pytest.approx(1e-3 + 2e-3)  # totals add up
    assert forward["sm__cycles_elapsed.avg.per_second"] == pytest.approx((1.0e9 + 1.2e9) / 2)  # rates average
    assert groups["nvtx_range"].isna().sum() == 1  # launches outside any range form their own group


def test_group_by_kernel_merges_ranges_and_derives_from_sums():
    raw = launches_with_nvtx()
    groups = group_launches(raw, group_keys(by_nvtx=False))
    assert len(groups) == 1 and groups.iloc[0]["launches"] == 4
    kernels = evaluate(groups, load_catalogue(), CeilingOptions())
    row = kernels.iloc[0]
    assert row["time_s"] == pytest.approx(1e-3 + 2e-3 + 3e-3 + 4e-3)
    assert row["flop_fp32"] == pytest.approx(2 * (1e9 + 1e9 + 2e9 + 2e9))
    # the ratio comes from the sums, never from a mean of per-launch ratios
    assert row["ai_dram"] == pytest.approx(2 * 6e9 / 10e9)


def test_nvtx_include_keeps_matching_paths_only():
    raw = launches_with_nvtx()
    kept = filter_nvtx(raw, "train/forward*")
    assert list(kept["launch_id"]) == [0, 1]
    assert list(filter_nvtx(raw, "train/*")["launch_id"]) == [0, 1, 2]
    assert filter_nvtx(raw, "eval/*").empty
