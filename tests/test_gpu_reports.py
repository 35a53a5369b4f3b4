"""The built-in table agrees with real reports: for every GPU of which a shared sample report exists, each roof's
per-clock figure in `metrics/gpus.toml` equals the report's own `*.peak_sustained` (the per-clock figure Nsight
Compute multiplies by a measured clock to draw its roof).

Same units per clock on both sides: a table roof divided by the table's clock (FLOP/s / Hz = FLOP per cycle, B/s /
Hz = bytes per cycle), against the report's peak per cycle of the unit that runs the roof. DRAM runs on its own
clock, so the table's DRAM roof is divided by the report's memory clock (`device__attribute_max_mem_frequency_khz`).
Where the two definitions differ, the row's `[gpu.ncu_factors]` says by what factor (report / table) and its caveat
says why; the check multiplies by it. Reports that hold no roof (no roofline section collected) are checked on
their device attributes: SM count, clock, L2 slices and the DRAM bus.
"""

from __future__ import annotations

import pytest

from ncu_roofline.roofs.gpu_table import GpuSpec, load_gpu_table, match_gpu
from ncu_roofline.readers.ncu_rep import read_ncu_rep

from conftest import SAMPLES

pytestmark = pytest.mark.conformance  # the real exports in ../shared/ncu-samples

pytest.importorskip("ncu_report", reason="reading .ncu-rep needs the ncu-report wheel")

# Table row -> a shared report of that GPU.
REPORTS = {
    "NVIDIA H100 PCIe": "cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep",
    "Tesla T4": "cuda-mlp-inference/report.ncu-rep",
    "Tesla V100-SXM2-16GB": "NCAR-GPU_workshop/MW_Baseline.ncu-rep",
    "NVIDIA GeForce RTX 2060 SUPER": "GPU_Power_Model/PS1_10_profile.ncu-rep",
    "NVIDIA GeForce RTX 2080 Ti": "nsight-compute-files/3136_64_64_rtx2080ti_sgemm.ncu-rep",
    "NVIDIA GeForce RTX 4060 Laptop GPU": "nersc-gpp/output1.ncu-rep",
    "NVIDIA GeForce GTX 1660 SUPER": "CudaCode/vec_add.ncu-rep",
}

# Table figure -> (the report's per-cycle peak as Nsight Compute's sections spell it: a factor times the first of
# these metrics present, the clock of the table that the figure is quoted at).
PER_CLOCK = {
    "fp64_tflops": (2, ["sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"], "boost"),
    "fp32_tflops": (2, ["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"], "boost"),
    "fp16_tflops": (4, ["sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"], "boost"),
    "tensor_fp16_tflops": (1, ["sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained"], "tensor"),
    "tensor_tf32_tflops": (1, ["sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"],
                           "tensor"),
    "tensor_fp8_tflops": (1, ["sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained"], "tensor"),
    "tensor_int8_tops": (1, ["sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained"], "tensor"),
    "tensor_fp64_tflops": (1, ["sm__ops_path_tensor_src_fp64.sum.peak_sustained"], "boost"),
    "dram_gbps": (1, ["dram__bytes.sum.peak_sustained"], "memory"),
    "l2_gbps": (1, ["derived__lts__lts2xbar_bytes.sum.peak_sustained", "lts__t_bytes.sum.peak_sustained"], "boost"),
    "l1_gbps": (1, ["derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
                    "derived__l1tex__lsu_writeback_bytes_mem_lg.sum.peak_sustained",
                    "l1tex__t_bytes.sum.peak_sustained"], "boost"),
}
UNIT = {"fp64_tflops": 1e12, "fp32_tflops": 1e12, "fp16_tflops": 1e12, "tensor_fp16_tflops": 1e12,
        "tensor_tf32_tflops": 1e12, "tensor_fp8_tflops": 1e12, "tensor_int8_tops": 1e12, "tensor_fp64_tflops": 1e12,
        "dram_gbps": 1e9, "l2_gbps": 1e9, "l1_gbps": 1e9}
ATTRIBUTES = ("device__attribute_multiprocessor_count", "device__attribute_max_gpu_frequency_khz",
              "device__attribute_max_mem_frequency_khz", "device__attribute_fb_bus_width",
              "device__attribute_l2s_count")
# The figures each report can check: it fails if a report stops yielding a roof it holds today.
EXPECTED_CHECKS = {
    "NVIDIA H100 PCIe": {"fp64_tflops", "fp32_tflops", "fp16_tflops", "tensor_fp16_tflops", "tensor_tf32_tflops",
                         "tensor_fp8_tflops", "tensor_int8_tops", "tensor_fp64_tflops", "dram_gbps", "l2_gbps",
                         "l1_gbps"},
    "Tesla T4": {"fp64_tflops", "fp32_tflops", "dram_gbps"},
    "Tesla V100-SXM2-16GB": {"fp64_tflops", "fp32_tflops", "dram_gbps"},
    "NVIDIA GeForce RTX 2060 SUPER": set(),  # no roofline section: only its device attributes are checked
    "NVIDIA GeForce RTX 2080 Ti": {"fp64_tflops", "fp32_tflops", "dram_gbps", "l2_gbps", "l1_gbps"},
    "NVIDIA GeForce RTX 4060 Laptop GPU": {"fp64_tflops", "dram_gbps", "l2_gbps", "l1_gbps"},
    "NVIDIA GeForce GTX 1660 SUPER": {"fp64_tflops", "fp32_tflops", "dram_gbps"},
}
TOLERANCE = 0.02  # datasheet rounding: H100 PCIe FP64 "26" is 114 x 64 x 1.755 GHz = 25.6 TFLOP/s


def wanted(name: str) -> bool:
    return name in ATTRIBUTES or any(name in metrics for _, metrics, _ in PER_CLOCK.values())


@pytest.fixture(scope="module")
def first_launches() -> dict[str, dict[str, float]]:
    """The first launch of each sample report: its peaks and device attributes (the same for every launch)."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    out = {}
    for row, report in REPORTS.items():
        frame = read_ncu_rep(SAMPLES / report, wanted=wanted)
        out[row] = {c: float(v) for c, v in frame.iloc[0].items() if c in frame and isinstance(v, (int, float))
                    and v == v}
        out[row]["device_name"] = frame["device_name"].iloc[0]
    return out


def table_clock_hz(spec: GpuSpec, which: str, launch: dict[str, float]) -> float:
    if which == "memory":
        return launch["device__attribute_max_mem_frequency_khz"] * 1e3
    if which == "tensor" and "tensor_clock_mhz" in spec.inputs:
        return spec.inputs["tensor_clock_mhz"] * 1e6
    return spec.boost_clock_hz


def figure_value(spec: GpuSpec, figure: str) -> float | None:
    from ncu_roofline.roofs.gpu_table import FIGURE_TO_PEAK, TENSOR_FIGURES

    if figure in FIGURE_TO_PEAK and figure != "tensor_fp16_tflops":
        return spec.peaks.get(FIGURE_TO_PEAK[figure][0])
    return spec.tensor_peaks.get(TENSOR_FIGURES[figure])


@pytest.mark.parametrize("row", list(REPORTS))
def test_table_roofs_per_clock_equal_the_reports_own_peaks(first_launches, row):
    launch = first_launches[row]
    spec = match_gpu(launch["device_name"])  # the report's own device name finds the row
    assert spec.name == row
    checked = set()
    for figure, (factor, metrics, clock) in PER_CLOCK.items():
        present = [m for m in metrics if m in launch]
        table_value = figure_value(spec, figure)
        if not present or table_value is None:
            continue
        report_per_clk = factor * launch[present[0]]
        # e.g. H100 PCIe FP32: 51 TFLOP/s / 1.755 GHz = 29060 FLOP/clk vs 2 x 14592 (ffma peak) = 29184
        table_per_clk = table_value / table_clock_hz(spec, clock, launch)
        ncu_factor = spec.ncu_factors.get(figure, 1.0)
        assert report_per_clk == pytest.approx(table_per_clk * ncu_factor, rel=TOLERANCE), (row, figure, present[0])
        checked.add(figure)
    assert checked == EXPECTED_CHECKS[row]


@pytest.mark.parametrize("row", list(REPORTS))
def test_table_counts_and_clocks_equal_the_reports_device_attributes(first_launches, row):
    launch = first_launches[row]
    spec = match_gpu(row)
    assert launch["device__attribute_multiprocessor_count"] == spec.sm_count
    assert launch["device__attribute_max_gpu_frequency_khz"] * 1e3 == spec.boost_clock_hz
    # DRAM from the bus: bits / 8 x 2 transfers per memory clock x the memory clock. T4: 256 / 8 x 2 x 5.001 GHz
    # = 320.06 GB/s; H100 PCIe: 5120 / 8 x 2 x 1.593 GHz = 2039 GB/s, which the datasheet rounds to 2000 (-1.9 %).
    bus_bytes_per_s = (launch["device__attribute_fb_bus_width"] / 8 * 2
                       * launch["device__attribute_max_mem_frequency_khz"] * 1e3)
    assert spec.peaks["peak_bytes_per_s_dram"] == pytest.approx(bus_bytes_per_s, rel=TOLERANCE)
    if not any(m in launch for m in PER_CLOCK["l2_gbps"][1]):
        # Without an L2 peak, the slice count is the attribute's (with one, the peak above decides: the RTX 2080 Ti
        # attribute says 48, the full TU102, while its lts peak counts the 44 slices enabled).
        assert launch["device__attribute_l2s_count"] == spec.inputs["l2_slices"]


def test_every_sample_gpu_is_a_table_row():
    names = {s.name for s in load_gpu_table()}
    assert set(REPORTS) <= names
