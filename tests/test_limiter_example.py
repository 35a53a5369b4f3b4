"""The example the README's first command runs is a real capture with the limiter's counters: MW_Baseline.ncu-rep
(NCAR's MiniWeather on a V100) exported to the raw-page CSV by scripts/export_report_csv.py. Its top kernels get a
limiter that is not `unknown`, and (where the shared samples are present) it reads back to the report's own
numbers and limiters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ncu_roofline import analyze

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "example_v100_miniweather_raw.csv"


def test_the_readme_runs_this_example():
    first = re.search(r"```bash\n(.*?)\n", (ROOT / "README.md").read_text(encoding="utf-8")).group(1)
    assert "ncu-roofline analyze fixtures/example_v100_miniweather_raw.csv" in first


def test_the_examples_top_kernels_have_a_limiter_and_a_gain():
    kernels = analyze(EXAMPLE).kernels
    # NCU's own SpeedOfLight verdicts stored in MW_Baseline.ncu-rep for these five kernels: High Compute
    # Throughput, High Memory Throughput (twice), Small Grid (twice)
    assert kernels["limiter"].astype(str).tolist() == ["compute", "memory", "memory", "launch", "launch"]
    assert kernels["limiter_gain_s"].notna().all()
    assert kernels["limiter_evidence"].iloc[0] == "SM 70.3%, memory 44.6% (DRAM 44.6%) of peak"


def test_the_example_reads_back_to_the_reports_numbers(samples):
    pytest.importorskip("ncu_report")
    report = analyze(samples / "NCAR-GPU_workshop/MW_Baseline.ncu-rep").kernels.set_index("kernel_name")
    example = analyze(EXAMPLE).kernels.set_index("kernel_name")
    assert sorted(report.index) == sorted(example.index)
    for column in ("time_s", "flop_per_s", "bytes_dram", "bytes_l2", "bytes_l1", "t_sol_s", "headroom_s"):
        assert example[column].to_numpy() == pytest.approx(report.loc[example.index, column].to_numpy(),
                                                           rel=1e-9, nan_ok=True), column
    for column in ("limiter", "limiter_evidence"):
        assert example[column].astype(str).tolist() == report.loc[example.index, column].astype(str).tolist()
