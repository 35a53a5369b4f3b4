"""Every CSV layout, read from a hand-made fixture, with the expected numbers worked out from the file."""

from __future__ import annotations

import math

import pytest

from ncu_roofline import analyze
from ncu_roofline.roofs.gpu_table import match_gpu

from conftest import FIXTURES

approx = lambda value: pytest.approx(value, rel=1e-12)  # noqa: E731


def launch(result, launch_id):
    rows = result.launches[result.launches["launch_id"] == launch_id]
    assert len(rows) == 1
    return rows.iloc[0]


def test_details_2020_twelve_columns_with_program_output_before_the_header():
    result = analyze(FIXTURES / "details_2020.txt", allow_empty=True)
    assert list(result.launches["launch_id"]) == [0, 1, 2]
    first = launch(result, 0)
    # time = sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second = 1,000,000 / 1e9
    assert first["time_s"] == approx(1_000_000 / 1e9)
    assert first["def_time_s"] == "sm_cycles_over_clock"
    assert first["flop_fp32"] == approx(0 + 0 + 2 * 1e9)
    # fp16 uses the current weights: 2*hadd + 2*hmul + 4*hfma = 2*1e6 + 0 + 4*5e5
    assert first["flop_fp16"] == approx(2 * 1e6 + 4 * 5e5)
    # no compute capability in a 2020.1 export: the legacy 512 FLOP per tensor instruction, flagged
    assert first["flop_tensor"] == approx(512 * 1000)
    assert "tensor_flops_legacy_512_per_inst" in first["status"]
    total = 2e9 + 4e6 + 512_000
    assert first["flop_total"] == approx(total)
    assert first["ai_dram"] == approx(total / 8e8)
    assert first["ai_l2"] == approx(total / 1.6e9)
    assert first["ai_l1"] == approx(total / 3.2e9)
    assert first["flop_per_s"] == approx(total / 1e-3)
    memset = launch(result, 2)
    assert memset["flop_total"] == 0
    assert memset["ai_dram"] == 0
    assert math.isnan(memset["ai_l1"])  # 0 FLOP over 0 bytes is no intensity, not zero

    kernels = result.kernels.set_index("kernel_name")
    axpy = kernels.loc["void axpy<float>(int, float, const float *, float *)"]
    assert axpy["launches"] == 2
    # the kernel's time sums cycles over the mean clock: (1e6 + 2e6) / 1e9
    assert axpy["time_s"] == approx(3e6 / 1e9)
    assert axpy["bytes_dram"] == approx(8e8 + 1.6e9)


def test_details_2021_rule_columns_ragged_rows_thousands_separators_and_unit_prefixes():
    result = analyze(FIXTURES / "details_2021_rules.csv")
    first = launch(result, 0)
    assert first["time_s"] == approx(1_500 * 1e-6)  # "1,500" usecond
    assert first["bytes_dram"] == approx(1_234.5 * 1e6)  # "1,234.5" Mbyte
    assert first["bytes_l2"] == approx(2.5 * 1e9)  # "2.5" Gbyte
    assert first["bytes_l1"] == approx(5_000_000 * 1e3)  # "5,000,000" Kbyte
    assert first["flop_fp32"] == approx(2 * 1_000_000_000)
    assert math.isnan(first["flop_fp64"])  # dfma is "n/a": missing, never zero
    assert "missing flop_fp64 (needs sm__sass_thread_inst_executed_op_dfma_pred_on.sum)" in first["status"]
    assert first["device_name"] == "NVIDIA A100-SXM4-40GB"
    assert first["kernel_name"] == "void gemm<float, 128, (int)4>(const float *, float *, int)"
    second = launch(result, 1)
    assert second["flop_fp64"] == approx(2 * 250_000)
    # roofs from the built-in table (the export carries no peak metrics)
    spec = match_gpu("NVIDIA A100-SXM4-40GB")
    assert first["ceiling_source"] == "table:NVIDIA A100-SXM4-40GB"
    t_sol = max(2e9 / spec.peaks["peak_flop_per_s_fp32"], 1.2345e9 / spec.peaks["peak_bytes_per_s_dram"])
    assert first["t_sol_s"] == approx(t_sol)
    assert first["headroom_s"] == approx(1.5e-3 - t_sol)
    assert first["roofline_fraction"] == approx(t_sol / 1.5e-3)


def test_details_2023_bom_crlf_print_fp_sectors_and_smsp_counters():
    result = analyze(FIXTURES / "details_2023_crlf.csv", allow_empty=True)
    first = launch(result, 0)
    assert first["compute_capability"] == 8.0
    assert (first["grid"], first["block"]) == ("(64, 64, 1)", "(32, 8, 1)")
    assert first["time_s"] == approx(20.0e-6)
    assert first["flop_fp32"] == approx(1_048_576)
    assert first["def_flop_fp32"] == "smsp_sass_sp"
    assert first["bytes_dram"] == approx(8.39e6 + 8.39e6)  # read + write, Mbyte
    assert first["bytes_l2"] == approx(32 * 524.29e3)  # Ksector x 32 bytes
    assert first["def_bytes_l2"] == "lts__t_sectors_x32"
    # two launch shapes of the same kernel are two kernel groups
    assert len(result.kernels) == 2


def test_details_2025_twenty_columns_tensor_paths_and_auto_scaled_units():
    result = analyze(FIXTURES / "details_2025_rules.csv", allow_empty=True)
    first = launch(result, 0)
    assert first["time_s"] == approx(23.42e-6)  # "us"
    assert first["bytes_dram"] == approx(2.33e6 + 0)  # Mbyte read + byte write
    # current Nsight Compute definitions: L2 = lts2xbar cycles x 32, L1 = LSU writeback x 128 on CC >= 9.0
    assert first["bytes_l2"] == approx(32 * 1_500_000)
    assert first["bytes_l1"] == approx(128 * 400_000)
    # tensor FLOPs from the aggregate src_ paths only ("n/a" skipped); the op_ path counts the same work
    assert first["flop_tensor"] == approx(1_275_068_416)
    assert first["def_flop_tensor"] == "ops_path_tensor_src"
    assert first["flop_fp32"] == approx(12_288 + 4_096)


def test_per_kernel_summary_rows_stand_for_all_invocations():
    result = analyze(FIXTURES / "summary_per_kernel.csv", allow_empty=True)
    kernels = result.kernels.set_index("kernel_name")
    a = kernels.loc["kernel_A"]
    assert a["launches"] == 100
    assert a["time_s"] == approx(10.0e-6 * 100)  # Average x Invocations
    assert a["flop_fp32"] == approx(2 * 2_000_000 * 100)
    assert a["bytes_dram"] == approx(4_000e3 * 100)
    b = kernels.loc["kernel_B"]
    assert b["launches"] == 10
    assert b["time_s"] == approx(50.0e-6 * 10)
    assert b["ai_dram"] == approx((2 * 1_000_000 * 10) / (40_000e3 * 10))


def test_raw_page_with_units_row_and_report_peaks():
    result = analyze(FIXTURES / "example_h100_raw.csv")
    gemm = launch(result, 0)
    assert gemm["device_name"] == "NVIDIA H100 PCIe"
    assert gemm["time_s"] == approx(850.5e-6)
    tensor, fp32 = 274_877_906_944, 2 * 1_048_576
    assert gemm["flop_tensor"] == approx(tensor)
    # roofs = peak per cycle x clock measured during the launch
    peak_tensor = 466_944 * 1.10e9
    peak_fp32 = 2 * 14_592 * 1.10e9
    peak_dram = 1_280 * 1.59e9
    peak_l2 = 5_120 * 1.09e9
    peak_l1 = 14_592 * 1.10e9
    assert gemm["peak_flop_per_s_tensor"] == approx(peak_tensor)
    assert gemm["peak_flop_per_s_fp32"] == approx(peak_fp32)
    assert gemm["peak_bytes_per_s_dram"] == approx(peak_dram)
    assert gemm["peak_bytes_per_s_l2"] == approx(peak_l2)
    assert gemm["peak_bytes_per_s_l1"] == approx(peak_l1)
    assert gemm["ceiling_source"] == "report"
    t_sol = max(tensor / peak_tensor, fp32 / peak_fp32, 268.44e6 / peak_dram, 805.31e6 / peak_l2,
                1_610.61e6 / peak_l1)
    assert gemm["t_sol_s"] == approx(t_sol)
    # the export counts tensor work by input type (sm__ops_path_tensor_src_fp16): the bound names the type
    assert gemm["flop_tensor_fp16"] == approx(tensor) and gemm["peak_flop_per_s_tensor_fp16"] == approx(peak_tensor)
    assert gemm["bound"] == "tensor_fp16"
    assert gemm["headroom_s"] == approx(850.5e-6 - t_sol)
    assert gemm["status"] == "ok"

    kernels = result.kernels
    add = kernels[kernels["kernel_name"].str.contains("AddFunctor")].iloc[0]
    assert add["launches"] == 2
    assert add["time_s"] == approx(120.25e-6 + 119.75e-6)
    add_t_sol = (201.33e6 * 2) / peak_dram  # DRAM-bound: streaming add
    assert add["t_sol_s"] == approx(add_t_sol)
    assert add["bound"] == "dram"
    assert add["headroom_s"] == approx(240e-6 - add_t_sol)
    # ranked by headroom, most recoverable time first
    assert list(kernels["rank"]) == list(range(1, len(kernels) + 1))
    assert kernels["headroom_s"].is_monotonic_decreasing
    assert kernels["time_share"].sum() == pytest.approx(1.0)


def test_raw_page_without_units_row_takes_ncu_base_units():
    result = analyze(FIXTURES / "raw_base_units.csv")
    saxpy = launch(result, 0)
    assert saxpy["time_s"] == approx(15_000e-9)  # gpu__time_duration in ns
    assert saxpy["flop_fp32"] == approx(2 * 1_048_576)
    dgemm = launch(result, 1)
    assert dgemm["flop_fp64"] == approx(2 * 1_073_741_824)
    assert dgemm["ceiling_source"] == "table:Tesla V100-SXM2-16GB"


def test_launch_with_missing_counters_keeps_its_row_and_names_them(tmp_path):
    text = (FIXTURES / "details_2020.txt").read_text()
    trimmed = "\n".join(line for line in text.splitlines()
                        if not ('"2"' in line.split(",")[0] and "dram__bytes.sum" in line))
    path = tmp_path / "no_dram_for_launch_2.csv"
    path.write_text(trimmed + "\n")
    result = analyze(path, allow_empty=True)
    row = launch(result, 2)
    assert math.isnan(row["bytes_dram"]) and math.isnan(row["ai_dram"])
    assert "missing bytes_dram (needs dram__bytes.sum)" in row["status"]


def test_details_21_columns_with_body_item_label(tmp_path):
    """2025 single-section exports add `Body Item Label` before `Metric Name`; metric ids are read as usual."""
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Body Item Label", "Metric Name", "Metric Unit",
              "Metric Value", "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
              "Estimated Speedup"]
    identity = ["0", "1", "app", "host", "k(float *)", "1", "7", "(128, 1, 1)", "(64, 1, 1)", "0", "9.0", "SOL"]
    metrics = [("gpu__time_duration.sum", "us", "2.00"), ("dram__bytes.sum", "Mbyte", "1.5"),
               ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "1,000"),
               ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst", "0"),
               ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "2,000")]
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    lines = [quote(header)] + [quote(identity + ["Achieved Value", *m]) + "," for m in metrics]
    path = tmp_path / "section_21.csv"
    path.write_text("\n".join(lines) + "\n")
    row = launch(analyze(path, allow_empty=True), 0)
    assert row["time_s"] == approx(2.00e-6)
    assert row["bytes_dram"] == approx(1.5e6)
    assert row["flop_fp32"] == approx(1_000 + 0 + 2 * 2_000)


def test_details_with_display_labels_only_is_refused_with_what_to_collect():
    from ncu_roofline import InputError

    with pytest.raises(InputError, match="no roofline metrics"):
        analyze(FIXTURES / "details_section_labels.csv")
