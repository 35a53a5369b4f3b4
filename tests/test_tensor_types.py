"""Tensor work per input type: its own columns, its own roof in the speed of light, the type named as the bound.

Fixture `tensor_types_raw.csv`: three launches on an H100 SXM (no peaks in the export, so the table's dense roofs:
TF32 494.7, FP16/BF16 989.4, FP8 1978.9 TFLOP/s; DRAM 3350 GB/s), tensor work split by source type.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app
from ncu_roofline.pipeline.rank import TERMS, speed_of_light
from ncu_roofline.core.status import StatusNotes
from ncu_roofline.core.vocabulary import TENSOR_PEAK_COLUMNS

from conftest import FIXTURES

SPLIT = FIXTURES / "tensor_types_raw.csv"


@pytest.fixture(scope="module")
def launches() -> pd.DataFrame:
    return analyze(SPLIT).launches.set_index("kernel_name")


def test_tensor_flops_are_split_by_input_type(launches):
    mixed = launches.loc["gemm_mixed_fp16_tf32"]
    # fp16 covers FP16 and BF16: 3e11 (src_fp16) + 1e11 (src_bf16_dst_fp32) = 4e11; TF32 1e11 on its own
    assert (mixed["flop_tensor_fp16"], mixed["flop_tensor_tf32"], mixed["flop_tensor_fp8"]) == (4e11, 1e11, 0.0)
    assert mixed["flop_tensor"] == 5e11  # the whole pipe, as before: 4e11 + 1e11
    assert np.isnan(mixed["flop_tensor_fp4"])  # not collected: unknown, not zero
    # fp8: the dense and sparse instruction paths add up (1e12 + 0)
    assert launches.loc["gemm_fp8_e4m3", "flop_tensor_fp8"] == 1e12
    assert launches.loc["gemm_fp8_e4m3", "def_flop_tensor_fp8"] == "ops_path_tensor_src_fp8"


def test_each_type_has_its_dense_roof(launches):
    row = launches.loc["gemm_fp8_e4m3"]
    assert (row["peak_flop_per_s_tensor_tf32"], row["peak_flop_per_s_tensor_fp16"],
            row["peak_flop_per_s_tensor_fp8"]) == (494.7e12, 989.4e12, 1978.9e12)


def test_fp8_work_is_timed_against_the_fp8_roof(launches):
    row = launches.loc["gemm_fp8_e4m3"]
    # 1e12 FLOP / 1978.9e12 FLOP/s = 0.50533 ms, above DRAM's 1e9 B / 3.35e12 B/s = 0.2985 ms. Against the whole-
    # pipe FP16 roof it would be 1e12 / 989.4e12 = 1.0107 ms, more than the 1 ms the kernel took: a false above_roof.
    assert row["t_sol_s"] == pytest.approx(1e12 / 1978.9e12, rel=1e-12)
    assert row["bound"] == "tensor_fp8"
    assert row["roofline_fraction"] == pytest.approx((1e12 / 1978.9e12) / 1e-3, rel=1e-12)
    assert "above_roof" not in row["status"]


def test_the_largest_term_wins_across_types_and_levels(launches):
    mixed = launches.loc["gemm_mixed_fp16_tf32"]
    # fp16 4e11 / 989.4e12 = 0.404 ms, tf32 1e11 / 494.7e12 = 0.202 ms, DRAM 3e9 / 3.35e12 = 0.896 ms -> DRAM
    assert mixed["t_sol_s"] == pytest.approx(3e9 / 3.35e12, rel=1e-12) and mixed["bound"] == "dram"
    bf16 = launches.loc["gemm_bf16"]
    # BF16 counts as fp16: 1.5e12 / 989.4e12 = 1.516 ms > DRAM 1e9 / 3.35e12 = 0.299 ms
    assert bf16["t_sol_s"] == pytest.approx(1.5e12 / 989.4e12, rel=1e-12) and bf16["bound"] == "tensor_fp16"


def test_the_kernel_table_names_the_type_that_bound_it():
    kernels = analyze(SPLIT).kernels.set_index("kernel_name")
    assert kernels.loc["gemm_fp8_e4m3", "bound"] == "tensor_fp8"
    assert kernels.loc["gemm_bf16", "bound"] == "tensor_fp16"


def _sol_frame(**work: float) -> pd.DataFrame:
    """One row with every term's amount null and roof 1 FLOP/s (or B/s), then `work` filled in."""
    row = {"time_s": 10.0}
    for _, amount, peak in TERMS:
        row[amount] = np.nan
        row[peak] = 1.0
    row.update(work)
    return pd.DataFrame([row])


def test_a_capture_that_does_not_split_keeps_the_whole_pipe_term():
    # flop_tensor 4 over its roof 1 = 4 s, no per-type columns known: the tensor term decides, as before
    sol = speed_of_light(_sol_frame(flop_tensor=4.0, bytes_dram=2.0), StatusNotes(1))
    assert (sol["t_sol_s"].iloc[0], sol["bound"].iloc[0]) == (4.0, "tensor")


def test_a_split_capture_drops_the_whole_pipe_term():
    # the same 4 FLOP as 3 FP8 over its roof 1: the whole-pipe term (4 s) steps aside, FP8 gives 3 s
    sol = speed_of_light(_sol_frame(flop_tensor=4.0, flop_tensor_fp8=3.0, bytes_dram=2.0), StatusNotes(1))
    assert (sol["t_sol_s"].iloc[0], sol["bound"].iloc[0]) == (3.0, "tensor_fp8")


def test_a_users_tensor_roof_is_the_fp16_type_roof(tmp_path):
    ceilings = tmp_path / "mine.toml"
    ceilings.write_text("[peaks]\ntensor_tflops = 500.0\n", encoding="utf-8")
    row = analyze(SPLIT, ceilings=ceilings).launches.set_index("kernel_name").loc["gemm_bf16"]
    assert row["peak_flop_per_s_tensor"] == row["peak_flop_per_s_tensor_fp16"] == 500e12
    assert row["peak_flop_per_s_tensor_fp8"] == 1978.9e12  # other types keep the table's roofs
    assert row["t_sol_s"] == pytest.approx(1.5e12 / 500e12, rel=1e-12)  # 3 ms: above the 2 ms it took
    assert "above_roof tensor_fp16" in row["status"]


def test_metrics_list_asks_for_the_per_type_paths():
    listing = CliRunner().invoke(app, ["metrics", "--arch", "9.0", "--list"]).output
    assert r"regex:^sm__ops_path_tensor_src_[fb][pf]16.*\.sum$" in listing
    assert "sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained" in listing


def test_h100_report_per_type_roofs_are_its_dense_peaks(samples):
    pytest.importorskip("ncu_report")
    first = analyze(samples / "cs599k" / "rms_norm_matrix_2025-04-21_v1.ncu-rep").launches.iloc[0]
    clock = first["peak_flop_per_s_tensor_fp16"] / 466944  # hgmma fp16 sparsity_off: 114 SMs x 4096 FLOP/clk
    assert first["peak_flop_per_s_tensor_fp16"] == first["peak_flop_per_s_tensor"]  # the same dense FP16 roof
    assert first["peak_flop_per_s_tensor_tf32"] == pytest.approx(233472 * clock, rel=1e-12)  # 114 x 2048
    assert first["peak_flop_per_s_tensor_fp8"] == pytest.approx(933888 * clock, rel=1e-12)  # 114 x 8192
    assert first["peak_flop_per_s_tensor_fp64"] == pytest.approx(29184 * clock, rel=1e-12)  # 114 x 256
    assert set(TENSOR_PEAK_COLUMNS) <= set(first.index)
