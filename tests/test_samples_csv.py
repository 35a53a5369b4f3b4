"""Conformance over every real CSV/text export in ../shared/ncu-samples: analysed with every launch present,
or refused with exit 2 and one line. Exports that hold roofline metrics are always analysed."""

from __future__ import annotations

import csv
import io

import pytest
from typer.testing import CliRunner

from ncu_roofline import InputError, analyze
from ncu_roofline.cli import app

from conftest import SAMPLES

pytestmark = pytest.mark.conformance  # the real exports in ../shared/ncu-samples

CSV_SAMPLES = sorted([*SAMPLES.rglob("*.csv"), *SAMPLES.rglob("*.txt")]) if SAMPLES.is_dir() else []
# Exports that carry FLOP or byte counters: these must be analysed, never refused.
ROOFLINE_EXPORTS = {
    "APC-ML-Operators/bert_flashattn_nsight.csv", "APC-ML-Operators/conv2d_conv2d_result_l2.csv",
    "cuda-roofline/output_A100.csv", "cuda-roofline/output_V100.csv", "LearningNote4Dev/output_gemm.csv",
    "LearningNote4Dev/output_sgemm.csv", "GPU-Roofline-Python/multi_kernels_metrics.csv",
    "llm-perf-opt/kernel_0001.ncu.details.csv", "llm-perf-opt/kernel_0001.ncu.metrics.csv",
    "nersc-gpp/output.csv", "nersc-gpp/output1.csv", "nersc-gpp/output2.csv", "nersc-gpp/output3.csv",
    "nersc-gpp/output4.csv",
} | {  # the parts of the metric-split TensorFlow capture that hold a FLOP, tensor or byte counter
    f"DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp/out.fp16.lag1.train.{metric}.txt"
    for metric in ("dram__bytes.sum", "l1tex__t_bytes.sum", "lts__t_bytes.sum", "sm__inst_executed_pipe_tensor.sum",
                   *(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"
                     for op in ("fadd", "ffma", "fmul", "hadd", "hfma", "hmul")))
}


def launch_ids_in(path) -> set[str]:
    """Launch IDs as the table itself lists them, counted independently of the readers."""
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        return set()
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    return {row[0] for row in rows[1:] if row and row[0].strip() != ""}


@pytest.mark.parametrize("path", CSV_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_sample_is_analysed_or_refused_in_one_line(path, tmp_path):
    relative = str(path.relative_to(SAMPLES))
    # In process (the command's own code, without a fresh interpreter per sample): an exception that escaped the
    # command would be a traceback in a real run.
    result = CliRunner().invoke(app, ["analyze", str(path), "-o", str(tmp_path), "--rows", "0", "--allow-empty"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    if result.exit_code == 2:
        assert relative not in ROOFLINE_EXPORTS, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0], result.stderr
        return
    assert result.exit_code == 0, result.stderr
    import pandas as pd

    launches = pd.read_parquet(tmp_path / "launches.parquet")
    expected = launch_ids_in(path)
    if expected:  # details/raw pages: every launch of the file is in launches.parquet
        assert set(launches["launch_id"].astype(str)) == expected
    assert (tmp_path / "kernels.parquet").exists() and (tmp_path / "roofline.html").exists()


def test_every_roofline_export_is_present():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    present = {str(p.relative_to(SAMPLES)) for p in CSV_SAMPLES}
    assert ROOFLINE_EXPORTS <= present


def test_bert_launch_0_matches_the_processed_results(samples):
    """FORMAT_NOTES §11: Time = 8382.70 / 999,845,384.51; CC FLOPs = 2 x 983,040 + 196,608 (NERSC half weight);
    AI HBM = 2,162,688 / 384 = 5632; AI L2 = 2.2597; AI L1 = 5.5; 257.95 GFLOP/s."""
    result = analyze(samples / "APC-ML-Operators" / "bert_flashattn_nsight.csv", allow_empty=True)
    row = result.launches[result.launches["launch_id"] == 0].iloc[0]
    assert row["time_s"] == pytest.approx(8382.70 / 999_845_384.51, rel=1e-12)
    assert row["flop_fp32"] == 2 * 983_040
    assert row["flop_fp16"] == 2 * 196_608  # ncu-roofline's weights: 2 x hadd
    nersc_flops = row["flop_fp32"] + row["flop_fp16"] / 2
    assert nersc_flops == 2_162_688
    assert nersc_flops / row["bytes_dram"] == pytest.approx(5632)
    assert nersc_flops / row["bytes_l2"] == pytest.approx(2.259729838170389, rel=1e-12)
    assert nersc_flops / row["bytes_l1"] == pytest.approx(5.5)
    assert nersc_flops / row["time_s"] / 1e9 == pytest.approx(257.9543124452936, rel=1e-9)
    # the tool's own intensity counts FP16 at the current weights
    assert row["ai_dram"] == pytest.approx((2 * 983_040 + 2 * 196_608) / 384)


def test_a100_export_without_flop_counters_names_them_once_for_the_run(samples):
    path = samples / "cuda-roofline" / "output_A100.csv"
    result = analyze(path, gpu="NVIDIA A100-PCIE-40GB")
    assert len(result.launches) == 11
    # no launch of the capture has FLOP counters: one run-level note with the command, not 11 launch notes
    gaps = [n for n in result.notes if "holds no counters" in n]
    # the note names the file as the façade shows paths: by its name, outside the working folder (core/paths.py)
    assert gaps == [f"{path.name}: the capture holds no counters for FP64, FP32, FP16 (unknown on all 11 launches; "
                    "FLOP totals add up the precisions counted, and stay unknown where those are all zero; the "
                    "speed of light leaves it out); to count it: ncu --metrics "
                    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum,sm__sass_thread_inst_executed_op_dmul_pred_on"
                    ".sum,sm__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_"
                    "pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__sass_thread_inst_executed_op_"
                    "ffma_pred_on.sum,sm__sass_thread_inst_executed_op_hadd_pred_on.sum,sm__sass_thread_inst_"
                    "executed_op_hmul_pred_on.sum,sm__sass_thread_inst_executed_op_hfma_pred_on.sum --csv ..."]
    assert not result.launches["status"].str.contains("missing flop_fp64|missing flop_fp32|missing flop_fp16").any()
    # bytes are there, FLOPs are not: intensities stay unknown instead of zero
    assert result.launches["bytes_dram"].notna().all()
    assert result.launches["ai_dram"].isna().all()


def test_no_kernels_profiled_quotes_the_error(samples):
    with pytest.raises(InputError, match=r"no kernels were profiled; ncu said: ==ERROR=="):
        analyze(samples / "Roofline-Analysis" / "flashinfer_paged_decode__gqa_fp8_b64_ctx4k_p64.ncu.csv")


def test_nvprof_export_is_named(samples):
    with pytest.raises(InputError, match="nvprof export"):
        analyze(samples / "GPU-Roofline-Python" / "hierarchical_metrics_transpose.csv")


def test_raw_page_without_roofline_metrics_says_what_to_collect(samples):
    path = samples / "Roofline-Analysis" / "torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv"
    with pytest.raises(InputError) as error:
        analyze(path)
    message = error.value.line()
    assert str(path) in message and "ncu --metrics" in message and "dram__bytes.sum" in message
    assert "\n" not in message
