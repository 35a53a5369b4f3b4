"""Status that helps: byte order checked on bytes, unknown never shown as zero, what a capture lacks said once."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app

runner = CliRunner()


def test_byte_order_is_checked_without_flops(samples):
    pytest.importorskip("ncu_report")
    launches = analyze(samples / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep").launches
    row = launches[launches["launch_id"] == 1].iloc[0]  # set_halo_values_x_419_gpu: copies, no FLOPs
    assert row["flop_fp32"] == 0 and row["flop_fp64"] == 0 and math.isnan(row["flop_total"])
    # L1: 128 B x 5,120 LSU writebacks = 655,360 B; L2: 32 B x 67,011 sectors = 2,144,352 B; L1 < L2
    assert row["bytes_l1"] == 128 * 5_120 and row["bytes_l2"] == 32 * 67_011
    assert "bytes_order l1<l2" in row["status"]
    # launch 0 (set_halo_values_x_396_gpu): 2,395,392 >= 1,577,440 >= 1,573,120 B, in order, no flag
    first = launches[launches["launch_id"] == 0].iloc[0]
    assert first["bytes_l1"] >= first["bytes_l2"] >= first["bytes_dram"]
    assert first["status"] == "ok"


def test_basic_set_report_without_counters_exits_2_and_says_what_to_collect(samples, tmp_path):
    pytest.importorskip("ncu_report")
    path = samples / "GPU_Power_Model" / "PS1_10_profile.ncu-rep"
    result = runner.invoke(app, ["analyze", str(path), "--rows", "0"])
    assert result.exit_code == 2
    assert "no kernel can be placed on a roofline" in result.output
    assert "10 launch(es) have no FLOP or byte counters" in result.output and "ncu --set" in result.output
    # with --allow-empty: written, and the unknown headroom is null in every output, never 0
    result = runner.invoke(app, ["analyze", str(path), "--allow-empty", "--json", str(tmp_path / "s.json"),
                                 "--summary-md", str(tmp_path / "s.md"), "--rows", "5"])
    assert result.exit_code == 0, result.output
    totals = json.loads((tmp_path / "s.json").read_text())["totals"]
    assert totals["headroom_s"] is None and totals["headroom_s_known"] is None
    assert totals["kernels_unknown_headroom"] == 1 and totals["kernels"] == 1
    assert totals["unknown_reasons"] == ["10 launch(es) have no FLOP or byte counters (collect them: profile with "
                                         "`ncu --set roofline` (ncu 2023+) or `ncu --set full`, or see "
                                         "`ncu-roofline metrics`)"]
    markdown = (tmp_path / "s.md").read_text()
    assert "recoverable at the roofs — (unknown for 1 of 1 kernels" in markdown
    assert "recoverable at the roofs 0" not in markdown
    assert "recoverable at the roofs — (unknown for 1 of 1 kernels" in result.output


def test_export_without_device_name_exits_2_unless_a_gpu_is_given(samples, tmp_path):
    path = samples / "cuda-roofline" / "output_V100.csv"
    result = runner.invoke(app, ["analyze", str(path), "--rows", "0"])
    assert result.exit_code == 2
    assert "11 launch(es) have counters but no roofs: the export names no GPU (pass --gpu NAME" in result.output
    result = runner.invoke(app, ["analyze", str(path), "--rows", "0", "--allow-empty", "--json",
                                 str(tmp_path / "s.json")])
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["totals"]["headroom_s"] is None and summary["totals"]["kernels_unknown_headroom"] == 4
    assert all(k["headroom_s"] is None for k in summary["kernels"])
    result = analyze(path, gpu="Tesla V100-SXM2-16GB")
    assert result.kernels["t_sol_s"].notna().all()


def test_a_precision_the_capture_did_not_collect_is_a_run_note_not_a_launch_problem(samples):
    pytest.importorskip("ncu_report")
    path = samples / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep"
    result = analyze(path)
    # FP64 Fortran on a V100: FP16 and tensor counters are in no launch of the report
    assert not result.launches["status"].str.contains("missing flop_fp16|missing flop_tensor").any()
    assert not result.launches["status"].str.contains("flop_total_lower_bound").any()
    assert result.notes[0].startswith(f"{path.name}: the capture holds no counters for FP16, Tensor (unknown on all 5 "
                                      "launches; FLOP totals add up the precisions counted, and stay unknown where those are all "
                                      "zero; the speed of light leaves it out); to count it: "
                                      "ncu --metrics sm__sass_thread_inst_executed_op_hadd_pred_on.sum,")
    # Volta has no sm__ops_path_tensor_* counters: it is told the tensor-pipe instruction count
    assert result.notes[0].endswith(",sm__inst_executed_pipe_tensor.sum -o report ...")


@pytest.mark.slow
def test_nersc_capture_is_told_the_nersc_metrics_it_lacks(samples):
    from conftest import SAMPLES

    folder = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"
    result = analyze(folder, gpu="Tesla V100-SXM2-16GB")
    assert not result.launches["status"].str.contains("missing flop_fp64").any()
    gaps = [n for n in result.notes if "holds no counters" in n]
    assert len(gaps) == 1
    # the NERSC family's own FP64 counters, and no other L2 metric than the lts__t_bytes it already collects
    assert gaps[0].endswith("holds no counters for FP64 (unknown on all 559 launches; FLOP totals add up the "
                            "precisions counted, and stay unknown where those are all zero; the speed of light "
                            "leaves it out); to count it: ncu --metrics "
                            "sm__sass_thread_inst_executed_op_dadd_pred_on.sum,"
                            "sm__sass_thread_inst_executed_op_dmul_pred_on.sum,"
                            "sm__sass_thread_inst_executed_op_dfma_pred_on.sum --csv ...")
    # launch rows aligned by name hold no values, and no definition either: their kernels say which
    by_name = result.launches["status"].astype(str).str.startswith("alignment: by name")
    assert (result.launches.loc[~by_name, "def_bytes_l2"] == "lts__t_bytes").all()
    assert result.launches.loc[by_name, "def_bytes_l2"].isna().all()
    assert (result.kernels["def_bytes_l2"] == "lts__t_bytes").all()
    for text in [*result.notes, *result.launches["status"].astype(str).unique()]:
        assert "lts2xbar" not in text
