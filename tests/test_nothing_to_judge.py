"""A run with nothing to judge is exit 2, never a green job (issue 35, item 2).

One part of a split capture (climate-seg: one metric per file, no kernel duration in the `dram__bytes` part) was
refused without `--gpu` and, with it, analysed and compared with every value `—`, exit 0. A `--precision` the
capture counted no FLOPs of drew another precision's roof; `--group-by nvtx|op` on a capture without ranges
grouped by kernel under another name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "fixtures" / "compare" / "base.csv"  # FP32 FFMA counters only, no NVTX ranges (test_compare.py)
SPLIT = "DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp"
V100 = "Tesla V100-SXM2-16GB"
runner = CliRunner()


def one_line_error(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ncu-roofline: error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("command", [["analyze"], ["compare", "PART"]])
def test_one_part_of_a_split_capture_is_refused_with_gpu_too(samples, command):
    part = str(samples / SPLIT / "out.fp16.lag1.train.dram__bytes.sum.txt")
    args = [part if a == "PART" else a for a in command]
    line = one_line_error(*args, part, "--gpu", V100)
    # 559 launches in the file (SOURCES.tsv), none with a duration
    assert "no kernel can be placed on a roofline" in line and "559 launch(es) have no kernel duration" in line
    assert "split capture" in line and "--allow-empty" in line


def test_the_parts_together_are_analysed(samples, tmp_path):
    result = runner.invoke(app, ["analyze", str(samples / SPLIT), "--gpu", V100, "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output


def test_allow_empty_still_compares_a_run_with_nothing_placed(samples):
    part = str(samples / SPLIT / "out.fp16.lag1.train.dram__bytes.sum.txt")
    result = runner.invoke(app, ["compare", part, part, "--gpu", V100, "--allow-empty"])
    assert result.exit_code == 0, result.output


def test_time_only_reports_are_refused_by_compare_unless_allowed(samples):
    # GPU_Power_Model's basic-set reports hold durations and no FLOP or byte counter (test_compare_per_launch.py)
    folder = samples / "GPU_Power_Model"
    line = one_line_error("compare", str(folder / "PS1_10_profile.ncu-rep"), str(folder / "PS1_100_profile.ncu-rep"))
    assert "no kernel can be placed on a roofline" in line and "have no FLOP or byte counters" in line


def test_a_precision_without_counted_flops_is_refused(tmp_path):
    line = one_line_error("analyze", str(BASE), "--precision", "fp16", "-o", str(tmp_path / "out"))
    assert "--precision fp16" in line and "no FP16 FLOPs" in line and "not collected" in line and "fp32" in line
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_precision_the_capture_counts_is_drawn(tmp_path):
    result = runner.invoke(app, ["analyze", str(BASE), "--precision", "fp32", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "roofline_fp32.html").is_file()


@pytest.mark.parametrize("by", ["nvtx", "op"])
def test_grouping_by_ranges_the_capture_lacks_is_refused(by):
    line = one_line_error("analyze", str(BASE), "--group-by", by)
    assert f"--group-by {by}: the capture records no NVTX ranges" in line and "base.csv" in line
    compare_line = one_line_error("compare", str(BASE), str(BASE), "--group-by", by)
    assert "records no NVTX ranges" in compare_line


def test_an_unknown_gpu_leads_with_the_template_from_the_report():
    # RTX 5070 is not in the table; RTX 5090 has 2.7x its bandwidth and must never be offered as a stand-in
    line = one_line_error("analyze", str(BASE), "--gpu", "RTX 5070")
    assert line.index("ceilings template 'RTX 5070' --from REPORT") < line.index("not the same GPU")
    assert "5090" not in line and "did you mean" not in line
