"""One clock basis per speed of light: table roofs beside report roofs are rescaled to the report roofs' clock."""

from __future__ import annotations

import pytest

from ncu_roofline.pipeline.evaluate import evaluate
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.pipeline.ceilings import CeilingOptions
from ncu_roofline.core.launch_table import finish_launch_table

MEASURED_HZ = 766e6  # an A100 PCIe under load, well below its 1410 MHz boost
BOOST_HZ = 1410e6  # metrics/gpus.toml: boost_clock_mhz of NVIDIA A100-PCIE-40GB


def a100_report_without_tensor_peaks():
    """An A100-PCIE-40GB report that holds the FP32 peak (108 SMs x 64 FFMA/cycle) but no tensor peak metric."""
    identity = {"source_file": "a100.ncu-rep", "launch_id": [0], "kernel_name": ["hgemm"],
                "device_name": ["NVIDIA A100-PCIE-40GB"], "compute_capability": [8.0]}
    metrics = {"gpu__time_duration.sum": [1e-3], "sm__cycles_elapsed.avg.per_second": [MEASURED_HZ],
               "device__attribute_max_gpu_frequency_khz": [1_410_000.0],
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": [6912.0],
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": [1e9],
               "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": [0.0],
               "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": [0.0],
               "sm__ops_path_tensor_src_fp16.sum": [1e11]}
    return finish_launch_table(identity, metrics, 1)


def test_table_tensor_roof_is_rescaled_to_the_measured_clock_of_the_report_fp32_roof():
    gaps = []
    row = evaluate(a100_report_without_tensor_peaks(), load_catalogue(), CeilingOptions(), gaps).iloc[0]
    # report FP32 roof: 2 x 6,912 FFMA/cycle x 766 MHz = 10.589 TFLOP/s
    assert row["peak_flop_per_s_fp32"] == pytest.approx(2 * 6912 * MEASURED_HZ, rel=1e-12)
    # table tensor roof 312 TFLOP/s at 1410 MHz, at 766 MHz: 312e12 x 766 / 1410 = 169.5 TFLOP/s
    assert row["peak_flop_per_s_tensor"] == pytest.approx(312e12 * MEASURED_HZ / BOOST_HZ, rel=1e-12)
    assert row["peak_flop_per_s_fp16"] == pytest.approx(78e12 * MEASURED_HZ / BOOST_HZ, rel=1e-12)
    # the A100's tensor/FP32 ratio, 312 / 19.5 = 16 (19.49 TFLOP/s is 2 x 6,912 x 1410 MHz), not 312 / 10.59 = 29.5
    ratio = row["peak_flop_per_s_tensor"] / row["peak_flop_per_s_fp32"]
    assert ratio == pytest.approx(312e12 / (2 * 6912 * BOOST_HZ), rel=1e-12)
    assert ratio == pytest.approx(312 / 19.5, rel=1e-3)
    # DRAM keeps its own clock: the table's 1,555 GB/s as it is
    assert row["peak_bytes_per_s_dram"] == pytest.approx(1555e9, rel=1e-12)
    assert row["ceiling_source"] == "report+table:NVIDIA A100-PCIE-40GB@measured_clock"
    # the rescale is recorded in ceiling_source; what the capture lacks (FP64/FP16 counters and bytes) is for the
    # run, and the launch's status says only what that does to its speed of light: without byte counters it is a
    # lower bound (FP64 and FP16 are not missing from it: the report's own roofs chart FP32 only; docs/status.md)
    assert row["status"] == "no DRAM, L2, L1 byte counters: speed of light is a lower bound"
    assert not row["sol_complete"]
    assert [g.quantity for g in gaps] == ["flop_fp64", "flop_fp16", "bytes_dram", "bytes_l2", "bytes_l1"]
    # the speed of light: tensor 1e11 / 169.5e12 = 0.590 ms > FP32 2e9 / 10.59e12 = 0.189 ms
    assert row["t_sol_s"] == pytest.approx(1e11 / (312e12 * MEASURED_HZ / BOOST_HZ), rel=1e-12)
    # the capture counts FP16-input tensor work by type: its own roof, the table's 312 TFLOP/s at 766 MHz too
    assert row["peak_flop_per_s_tensor_fp16"] == pytest.approx(312e12 * MEASURED_HZ / BOOST_HZ, rel=1e-12)
    assert row["bound"] == "tensor_fp16"


def test_under_clock_max_both_are_at_the_maximum_clock():
    row = evaluate(a100_report_without_tensor_peaks(), load_catalogue(), CeilingOptions(clock="max")).iloc[0]
    # report FP32 at 1410 MHz: 2 x 6,912 x 1.41e9 = 19.49 TFLOP/s; table tensor at 1410/1410: 312 TFLOP/s
    assert row["peak_flop_per_s_fp32"] == pytest.approx(2 * 6912 * 1.41e9, rel=1e-12)
    assert row["peak_flop_per_s_tensor"] == pytest.approx(312e12, rel=1e-12)
    assert row["ceiling_source"] == "report+table:NVIDIA A100-PCIE-40GB@max_clock"


def test_table_roofs_alone_stay_at_the_table_clock():
    raw = a100_report_without_tensor_peaks().drop(
        columns=["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"])
    row = evaluate(raw, load_catalogue(), CeilingOptions()).iloc[0]
    assert row["peak_flop_per_s_tensor"] == pytest.approx(312e12, rel=1e-12)
    assert row["peak_flop_per_s_fp32"] == pytest.approx(19.5e12, rel=1e-12)
    assert row["ceiling_source"] == "table:NVIDIA A100-PCIE-40GB"
