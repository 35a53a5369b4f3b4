"""`compare` per launch where a matched kernel's launch count differs, and unknown totals shown as unknown.

The captures are raw-page exports built here in the format of fixtures/compare/: one kernel `gemm_tile` on a
made-up GPU (DRAM 1,000 byte/cycle × 2 GHz = 2 TB/s, FP32 2 × 5,000 FFMA/cycle × 1 GHz = 10 TFLOP/s), each launch
moving 60 MB of DRAM and doing 2.5e8 FFMA (5e8 FLOP): t_sol per launch = max(5e8 / 10e12 = 50 µs,
60e6 / 2e12 = 30 µs) = 50 µs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app
from ncu_roofline.comparison import compare
from ncu_roofline.render.compare.markdown import comparison_markdown

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","device__attribute_display_name","dram__bytes.sum","dram__bytes.sum.peak_sustained",'
          '"dram__cycles_elapsed.avg.per_second","gpu__time_duration.sum","sm__cycles_elapsed.avg.per_second",'
          '"sm__sass_thread_inst_executed_op_fadd_pred_on.sum","sm__sass_thread_inst_executed_op_ffma_pred_on.sum",'
          '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",'
          '"sm__sass_thread_inst_executed_op_fmul_pred_on.sum"')
UNITS = '"","","","","","","","","","","","","Mbyte","byte/cycle","Ghz","usecond","Ghz","inst","inst","inst/cycle","inst"'
GEMM = "gemm_tile(float *, const float *, int)"
runner = CliRunner()


def capture(path: Path, durations_us: list[float]) -> Path:
    """One `gemm_tile` launch per duration, each 60 MB of DRAM and 2.5e8 FFMA."""
    rows = [f'"{i}","4242","bench","ci","{GEMM}","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Test GPU 80GB",'
            f'"60","1,000","2","{us}","1","0","250,000,000","5,000","0"' for i, us in enumerate(durations_us)]
    path.write_text("\n".join([HEADER, UNITS, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def one_launch(tmp_path):
    return analyze(capture(tmp_path / "base.csv", [100]))


def test_equal_time_per_launch_passes_a_time_gate_when_launch_counts_differ(one_launch, tmp_path):
    head = analyze(capture(tmp_path / "head.csv", [100, 100]))
    result = compare(one_launch, head, gates=["time_s>+5%"])
    row = result.kernels.iloc[0]
    # per launch: 100 µs / 1 → 200 µs / 2 = 100 µs: +0 %; the summed time would read +100 %
    assert row["compared"] == "per_launch"
    assert (row["launches_base"], row["launches_head"]) == (1, 2)
    assert row["time_s_base"] == pytest.approx(100e-6) and row["time_s_head"] == pytest.approx(100e-6)
    assert row["time_s_change_pct"] == pytest.approx(0.0, abs=1e-9)
    # headroom per launch: 100 - 50 = 50 µs on both sides; FLOPs per launch 5e8 on both
    assert row["headroom_s_base"] == pytest.approx(50e-6) and row["headroom_s_head"] == pytest.approx(50e-6)
    assert row["flop_total_base"] == pytest.approx(5e8) and row["flop_total_head"] == pytest.approx(5e8)
    assert row["verdict"] == "neutral" and result.passed
    # the run totals follow the rows' rule (issue 35): 100 µs → 100 µs per launch, +0 %, never the sums' +100 %;
    # the launch count stays the real one, 1 → 2
    assert result.totals.loc["time_s", "head"] == pytest.approx(100e-6)
    assert result.totals.loc["time_s", "change_pct"] == pytest.approx(0.0, abs=1e-9)
    assert result.totals.loc["headroom_s", "head"] == pytest.approx(50e-6)
    assert tuple(result.totals.loc["launches", ["base", "head"]]) == (1, 2)
    assert compare(one_launch, head, gates=["total:time_s>+5%"]).passed
    text = comparison_markdown(result.kernels, result.totals, result.info())
    assert "launches 1 → 2, compared per launch" in text
    assert "Launch counts differ for 1 kernel" in text


def test_ten_percent_slower_per_launch_fails_the_gate(one_launch, tmp_path):
    head = analyze(capture(tmp_path / "head.csv", [110, 110]))
    result = compare(one_launch, head, gates=["time_s>+5%"])
    row = result.kernels.iloc[0]
    # per launch: 100 µs → 220 µs / 2 = 110 µs: +10 % > +5 %
    assert row["time_s_change_pct"] == pytest.approx(10.0)
    assert row["verdict"] == "regression" and not result.passed
    assert result.gates[0].failures[0]["change_pct"] == pytest.approx(10.0)


def test_totals_flag_judges_summed_time(one_launch, tmp_path):
    head = analyze(capture(tmp_path / "head.csv", [100, 100]))
    result = compare(one_launch, head, gates=["time_s>+5%"], totals=True)
    row = result.kernels.iloc[0]
    # summed: 100 µs → 200 µs = +100 %
    assert row["compared"] == "total" and row["time_s_change_pct"] == pytest.approx(100.0)
    assert result.totals.loc["time_s", "change_pct"] == pytest.approx(100.0)  # the totals follow: sums
    assert not result.passed
    assert "launches 1 → 2, compared in total" in comparison_markdown(result.kernels, result.totals, result.info())


def test_equal_launch_counts_compare_the_sums(one_launch, tmp_path):
    head = analyze(capture(tmp_path / "head.csv", [104]))
    row = compare(one_launch, head).kernels.iloc[0]
    assert row["compared"] == "total" and row["time_s_change_pct"] == pytest.approx(4.0)


def test_cli_per_launch_and_totals(tmp_path):
    base = capture(tmp_path / "base.csv", [100])
    head = capture(tmp_path / "head.csv", [100, 100])
    passed = runner.invoke(app, ["compare", str(base), str(head), "--fail-on", "time_s>+5%", "--json",
                                 str(tmp_path / "c.json")], env={"COLUMNS": "200"})
    assert passed.exit_code == 0, passed.output
    assert "launches 1 → 2," in passed.output and "compared per launch" in passed.output
    kernel = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["kernels"][0]
    assert kernel["compared"] == "per_launch" and kernel["time_s_change_pct"] == pytest.approx(0.0, abs=1e-9)
    failed = runner.invoke(app, ["compare", str(base), str(head), "--fail-on", "time_s>+5%", "--totals"])
    assert failed.exit_code == 1, failed.output


def test_unknown_totals_stay_unknown(samples, tmp_path):
    """GPU_Power_Model's basic-set reports hold durations only: headroom, FLOPs and FLOP/s are unknown in both
    runs and read "—" (null in JSON), never 0 s or 0 FLOP (with --allow-empty: without it, a run no kernel of which
    can be placed on a roofline is refused, tests/test_nothing_to_judge.py). Its launch counts are 10 and 6 (`--launch-count`):
    69.2 s / 10 = 6.92 s and 41.5 s / 6 = 6.92 s, so per launch the kernel is neutral, not 40 % faster."""
    folder = samples / "GPU_Power_Model"
    result = runner.invoke(app, ["compare", str(folder / "PS1_10_profile.ncu-rep"),
                                 str(folder / "PS1_100_profile.ncu-rep"), "--fail-on", "time_s<-5%", "--summary-md",
                                 str(tmp_path / "c.md"), "--json", str(tmp_path / "c.json"), "--allow-empty"])
    if result.exit_code == 2 and "ncu-report" in result.output:
        pytest.skip("the ncu-report wheel is not installed")
    assert result.exit_code == 0, result.output  # -0.0 % per launch: the improvement gate does not fire
    payload = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    for metric in ("headroom_s", "flop_total", "flop_per_s", "t_sol_s", "roofline_fraction"):
        assert payload["totals"][metric]["base"] is None and payload["totals"][metric]["head"] is None
    kernel = payload["kernels"][0]
    assert kernel["compared"] == "per_launch" and abs(kernel["time_s_change_pct"]) < 1.0
    text = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert "| headroom (recoverable) | — | — | — (—) |" in text and "| FLOPs | — | — | — (—) |" in text
    assert "0 FLOP" not in text and "| 0 s" not in text
    assert not math.isnan(kernel["time_s_base"])
