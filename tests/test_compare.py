"""`compare`: kernel matching, changes worked out by hand, verdicts, gates, exit codes, outputs and determinism.

The fixtures (fixtures/compare/base.csv, head.csv) are raw-page exports of one made-up GPU with round roofs:
DRAM 1,000 byte/cycle × 2 GHz = 2 TB/s, FP32 2 × 5,000 FFMA/cycle × 1 GHz = 10 TFLOP/s (no L1/L2/FP64 counters,
so those roofs stay unknown and t_sol = max(FLOP / 10 T, DRAM bytes / 2 T)).

    kernel        grid × block           base: time  DRAM   FFMA      head: time  DRAM   FFMA
    gemm_tile     (64,1,1)×(128,1,1)      100 µs  60 MB  2.5e8          80 µs  60 MB  2.5e8   faster
    gemm_tile     (32,1,1)×(128,1,1)       50 µs  20 MB  1e8            60 µs  20 MB  1e8     slower
    copy_kernel   (1024,1,1)×(256,1,1)  2×10 µs 2×15 MB  0          2×10.1 µs 2×15 MB  0       +1 %
    reduce_sum    (256,1,1)×(256,1,1)      10 µs  10 MB  5e6     (512,1,1)×(128,1,1): 9 µs 10 MB 5e6
    old_kernel    (16,1,1)×(64,1,1)         5 µs   4 MB  0          — removed
    new_kernel    (8,1,1)×(64,1,1)          —  added                 3 µs   2 MB  0
    tiny_kernel   (1,1,1)×(32,1,1)          1 µs   1 MB  0           2 µs   1 MB  0       short
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import numpy as np
import pytest
from typer.testing import CliRunner

from ncu_roofline import InputError, analyze
from ncu_roofline.cli import app
from ncu_roofline.compare.match import match_kernels
from ncu_roofline.comparison import comparability_warnings, compare
from ncu_roofline.pipeline.gates import parse_gate
from ncu_roofline.render.compare.markdown import comparison_markdown

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "fixtures" / "compare" / "base.csv"
HEAD = ROOT / "fixtures" / "compare" / "head.csv"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "ncu-samples"
MW = SAMPLES / "NCAR-GPU_workshop"
GEMM, COPY, REDUCE = "gemm_tile(float *, const float *, int)", "copy_kernel(float *, const float *)", \
    "reduce_sum(const float *, float *, int)"
MIN_TIME_S = 5e-6
runner = CliRunner()


@pytest.fixture(scope="module")
def runs():
    return analyze(BASE), analyze(HEAD)


@pytest.fixture(scope="module")
def comparison(runs):
    return compare(*runs, min_time_s=MIN_TIME_S)


def row(comparison, name: str, grid: str | None = None):
    kernels = comparison.kernels
    picked = kernels[(kernels["kernel_name"] == name)
                     & ((kernels["grid_head"] == grid) | (kernels["grid_base"] == grid) if grid else True)]
    assert len(picked) == 1, picked
    return picked.iloc[0]


# ------------------------------------------------------------------------------------------------- matching


def test_kernels_match_by_name_and_shape_then_name_only_when_unambiguous(comparison):
    kernels = comparison.kernels
    assert len(kernels) == 7
    by_match = {(r.kernel_name.split("(")[0], r.grid_base if pd.notna(r.grid_base) else r.grid_head): r.match
                for r in kernels.itertuples()}
    assert by_match == {
        ("gemm_tile", "(64, 1, 1)"): "exact", ("gemm_tile", "(32, 1, 1)"): "exact",
        ("copy_kernel", "(1024, 1, 1)"): "exact", ("tiny_kernel", "(1, 1, 1)"): "exact",
        # one reduce_sum in each run, new shape: paired, and flagged as such
        ("reduce_sum", "(256, 1, 1)"): "name_only",
        ("old_kernel", "(16, 1, 1)"): pd.NA, ("new_kernel", "(8, 1, 1)"): pd.NA,
    }
    assert row(comparison, "old_kernel(float *)")["verdict"] == "removed"
    assert row(comparison, "new_kernel(float *)")["verdict"] == "added"
    reduce = row(comparison, REDUCE)
    assert (reduce["grid_base"], reduce["block_base"]) == ("(256, 1, 1)", "(256, 1, 1)")
    assert (reduce["grid_head"], reduce["block_head"]) == ("(512, 1, 1)", "(128, 1, 1)")


def _groups(rows: list[tuple[str, str, str, str | None, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["kernel_name", "grid", "block", "nvtx_range", "launch_order"])


def test_repeated_name_in_nvtx_ranges_matches_by_path_then_launch_order():
    base = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", "fwd", 0), ("k", "(1, 1, 1)", "(32, 1, 1)", "bwd", 1),
                    ("k", "(1, 1, 1)", "(32, 1, 1)", "step 1/opt", 2)])
    head = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", "step 2/opt", 2), ("k", "(1, 1, 1)", "(32, 1, 1)", "bwd", 1),
                    ("k", "(1, 1, 1)", "(32, 1, 1)", "fwd", 0)])
    pairs = match_kernels(base, head)
    assert sorted(map(tuple, pairs.to_numpy().tolist())) == [(0, 2, "exact"), (1, 1, "exact"), (2, 0, "launch_order")]


def test_repeated_name_with_new_shapes_is_never_matched_by_name_alone():
    base = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", None, 0), ("k", "(2, 1, 1)", "(32, 1, 1)", None, 1)])
    head = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", None, 0), ("k", "(4, 1, 1)", "(32, 1, 1)", None, 1)])
    pairs = match_kernels(base.drop(columns="nvtx_range"), head.drop(columns="nvtx_range"))
    # (1,1,1) pairs; base (2,1,1) and head (4,1,1) might be the same kernel, but k repeats: removed + added
    assert sorted(map(tuple, pairs.to_numpy().tolist())) == [(-1, 1, ""), (0, 0, "exact"), (1, -1, "")]


def test_same_key_on_two_devices_pairs_in_launch_order():
    base = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", None, 5), ("k", "(1, 1, 1)", "(32, 1, 1)", None, 2)])
    head = _groups([("k", "(1, 1, 1)", "(32, 1, 1)", None, 0), ("k", "(1, 1, 1)", "(32, 1, 1)", None, 9)])
    pairs = match_kernels(base, head)
    assert sorted(map(tuple, pairs.to_numpy().tolist())) == [(0, 1, "exact"), (1, 0, "exact")]


# -------------------------------------------------------------------------------------------------- changes


def test_changes_worked_out_by_hand(comparison):
    gemm = row(comparison, GEMM, "(64, 1, 1)")
    # time 100 µs -> 80 µs: -20 µs, -20 %
    assert gemm["time_s_change"] == pytest.approx(80e-6 - 100e-6)
    assert gemm["time_s_change_pct"] == pytest.approx(100 * (80 - 100) / 100)
    # FLOP = 2 × 2.5e8 FFMA = 5e8; FLOP/s 5e8 / 100e-6 = 5e12 -> 5e8 / 80e-6 = 6.25e12: +25 %
    assert (gemm["flop_per_s_base"], gemm["flop_per_s_head"]) == (pytest.approx(5e12), pytest.approx(6.25e12))
    assert gemm["flop_per_s_change_pct"] == pytest.approx(25.0)
    # t_sol = max(5e8 / 1e13, 60e6 / 2e12) = max(50 µs, 30 µs) = 50 µs, FP32-bound; fraction 50/100 -> 50/80
    assert gemm["bound_base"] == gemm["bound_head"] == "fp32"
    assert gemm["roofline_fraction_base"] == pytest.approx(0.5)
    assert gemm["roofline_fraction_head"] == pytest.approx(0.625)
    assert gemm["roofline_fraction_change"] == pytest.approx(0.125)
    # headroom 100 - 50 = 50 µs -> 80 - 50 = 30 µs: -20 µs, -40 %
    assert gemm["headroom_s_change"] == pytest.approx(-20e-6)
    assert gemm["headroom_s_change_pct"] == pytest.approx(-40.0)

    slower = row(comparison, GEMM, "(32, 1, 1)")
    # t_sol = max(2e8 / 1e13, 20e6 / 2e12) = max(20 µs, 10 µs) = 20 µs; 50 -> 60 µs: +20 %, fraction 0.4 -> 1/3
    assert slower["time_s_change_pct"] == pytest.approx(20.0)
    assert slower["roofline_fraction_change"] == pytest.approx(20 / 60 - 20 / 50)
    assert slower["headroom_s_change_pct"] == pytest.approx(100 * ((60 - 20) - (50 - 20)) / (50 - 20))
    assert slower["flop_per_s_change_pct"] == pytest.approx(100 * (2e8 / 60e-6 - 2e8 / 50e-6) / (2e8 / 50e-6))

    copy = row(comparison, COPY)
    # two launches summed: 2 × 10 µs -> 2 × 10.1 µs = +1 %; DRAM-bound: t_sol = 30e6 / 2e12 = 15 µs
    assert (copy["launches_base"], copy["launches_head"]) == (2, 2)
    assert copy["time_s_change_pct"] == pytest.approx(1.0)
    assert copy["t_sol_s_base"] == pytest.approx(15e-6)

    reduce = row(comparison, REDUCE)
    # 10 -> 9 µs; t_sol = max(1e7 / 1e13, 10e6 / 2e12) = max(1 µs, 5 µs) = 5 µs, DRAM-bound
    assert reduce["time_s_change_pct"] == pytest.approx(-10.0)
    assert reduce["roofline_fraction_head"] == pytest.approx(5 / 9)
    assert reduce["bound_head"] == "dram"

    added = row(comparison, "new_kernel(float *)")
    assert pd.isna(added["time_s_base"]) and pd.isna(added["time_s_change"])
    assert added["time_s_head"] == pytest.approx(3e-6)


def test_totals_are_sums_and_ratios_of_sums(comparison):
    totals = comparison.totals
    # every kernel of each run: 100 + 50 + 20 + 10 + 5 + 1 = 186 µs; 80 + 60 + 20.2 + 9 + 3 + 2 = 174.2 µs
    assert totals.loc["time_s", "base"] == pytest.approx(186e-6)
    assert totals.loc["time_s", "head"] == pytest.approx(174.2e-6)
    assert totals.loc["time_s", "change_pct"] == pytest.approx(100 * (174.2 - 186) / 186)
    # headroom: 50 + 30 + (20 - 15) + (10 - 5) + (5 - 2) + (1 - 0.5) = 93.5 µs;
    #           30 + 40 + (20.2 - 15) + (9 - 5) + (3 - 1) + (2 - 0.5) = 82.7 µs
    assert totals.loc["headroom_s", "base"] == pytest.approx(93.5e-6)
    assert totals.loc["headroom_s", "head"] == pytest.approx(82.7e-6)
    # FLOPs: the zero-FFMA kernels have no FLOP count (their FP64/FP16 counters were not collected), so the run's
    # total is unknown, never the 7.1e8 summed over the other three (the one totals function: pipeline/totals.py);
    # FLOP/s over the kernels with a known FLOP count: 7.1e8 / 160 µs and 7.1e8 / 149 µs
    assert pd.isna(totals.loc["flop_total", "base"]) and pd.isna(totals.loc["flop_total", "change"])
    assert totals.loc["flop_per_s", "base"] == pytest.approx(7.1e8 / 160e-6)
    assert totals.loc["flop_per_s", "head"] == pytest.approx(7.1e8 / 149e-6)
    # roofline fraction = Σt_sol / Σtime, not the mean of the fractions: (186 - 93.5) / 186
    assert totals.loc["roofline_fraction", "base"] == pytest.approx((186 - 93.5) / 186)
    assert totals.loc["kernels", "base"] == totals.loc["kernels", "head"] == 6
    assert totals.loc["launches", "base"] == 7


def test_verdicts_by_time_threshold_and_min_time(runs, comparison):
    verdicts = {(r.kernel_name, r.grid_head if pd.notna(r.grid_head) else r.grid_base): r.verdict
                for r in comparison.kernels.itertuples()}
    assert verdicts == {
        (GEMM, "(64, 1, 1)"): "improvement",  # -20 %
        (GEMM, "(32, 1, 1)"): "regression",  # +20 %
        (COPY, "(1024, 1, 1)"): "neutral",  # +1 %, inside ±2 %
        (REDUCE, "(512, 1, 1)"): "improvement",  # -10 %
        ("tiny_kernel(int *)", "(1, 1, 1)"): "neutral",  # +100 %, but 2 µs < --min-time 5 µs
        ("old_kernel(float *)", "(16, 1, 1)"): "removed",
        ("new_kernel(float *)", "(8, 1, 1)"): "added",
    }
    everything = compare(*runs)  # min_time_s = 0: the short kernel is judged too
    assert row(everything, "tiny_kernel(int *)")["verdict"] == "regression"
    assert compare(*runs, time_threshold_pct=25.0).counts()["regression"] == 1  # only tiny's +100 %


def test_rows_are_sorted_by_absolute_time_change(comparison):
    names = [r.kernel_name.split("(")[0] for r in comparison.kernels.itertuples()]
    # |Δt|: 20, 10, 5 (removed), 3 (added), 1, 1, 0.2 µs
    assert names[:4] == ["gemm_tile", "gemm_tile", "old_kernel", "new_kernel"]
    assert names[-1] == "copy_kernel"


# ----------------------------------------------------------------------------------------------------- gates


@pytest.mark.parametrize("text, scope, metric, op, threshold, relative", [
    ("time_s>+5%", "kernel", "time_s", ">", 5.0, True),
    ("roofline_fraction<-0.05pt", "kernel", "roofline_fraction", "<", -0.05, False),
    ("headroom_s>+10%", "kernel", "headroom_s", ">", 10.0, True),
    ("flop_per_s<-3%", "kernel", "flop_per_s", "<", -3.0, True),
    ("total:time_s>+2%", "total", "time_s", ">", 2.0, True),
    (" total : time_s >= 2.5e-1 % ", "total", "time_s", ">=", 0.25, True),
    ("kernel:t_sol_s>1us", "kernel", "t_sol_s", ">", 1e-6, False),
])
def test_gate_grammar(text, scope, metric, op, threshold, relative):
    gate = parse_gate(text)
    assert (gate.scope, gate.metric, gate.op, gate.threshold, gate.relative) == (scope, metric, op, threshold,
                                                                                  relative)


@pytest.mark.parametrize("text", ["time_s", "time_s>>5%", "time_s>5%%", "time>+5%", "total:time_s>", "x:time_s>1",
                                  "time_s=+5%", "time_s>+5 percent", ""])
def test_malformed_gate_is_one_line_input_error(text):
    with pytest.raises(InputError) as caught:
        parse_gate(text)
    assert "\n" not in caught.value.line() and "--fail-on" in caught.value.line()


@pytest.mark.parametrize("text, threshold", [
    ("time_s>+50us", 50e-6), ("time_s>2ms", 2e-3), ("headroom_s<-500ns", -500e-9), ("t_sol_s>+1.5s", 1.5),
    ("time_s>+3µs", 3e-6), ("flop_per_s<-2TFLOP/s", -2e12), ("flop_per_s<-20GFLOP/s", -20e9),
    ("flop_total>+1GFLOP", 1e9), ("ai_dram<-0.5FLOP/B", -0.5), ("roofline_fraction<-0.05pt", -0.05),
])
def test_an_absolute_threshold_is_a_value_with_its_unit(text, threshold):
    gate = parse_gate(text)
    assert not gate.relative and gate.threshold == pytest.approx(threshold, rel=1e-15)


@pytest.mark.parametrize("text", ["time_s>5", "total:time_s>+5", "headroom_s>1e-6", "flop_per_s<-3",
                                  "roofline_fraction<-0.05", "flop_total>0", "ai_dram<-1"])
def test_a_bare_number_is_refused_with_the_three_spellings(text):
    # `time_s>5` used to read as +5 seconds and pass forever; it must say how to write percent, points or a unit.
    with pytest.raises(InputError) as caught:
        parse_gate(text)
    line = caught.value.line()
    assert "\n" not in line and "no unit" in line
    assert "%' (percent)" in line and "pt'" in line
    if not text.startswith("roofline_fraction"):
        assert "(a value with its unit)" in line


@pytest.mark.parametrize("text", ["time_s>+5pt", "roofline_fraction<-5us", "flop_per_s<-1ms", "time_s>+5 sec",
                                  "ai_dram<-1FLOP/s"])
def test_a_unit_of_another_dimension_is_refused(text):
    with pytest.raises(InputError) as caught:
        parse_gate(text)
    assert "is not a unit of" in caught.value.line()


@pytest.mark.parametrize("gate, failing", [
    ("time_s>+9us", ["gemm_tile (32, 1, 1)"]),  # 50 -> 60 µs: +10 µs
    ("time_s>+11us", []),
    ("time_s>+0.009ms", ["gemm_tile (32, 1, 1)"]),
    ("time_s<-15us", ["gemm_tile (64, 1, 1)"]),  # 100 -> 80 µs: -20 µs
    ("time_s<-25us", []),
    ("total:time_s<-11us", ["total"]),  # 186 -> 174.2 µs: -11.8 µs
    ("total:time_s<-12us", []),
])
def test_gates_in_units_judge_the_change_in_that_unit(runs, gate, failing):
    result = compare(*runs, min_time_s=MIN_TIME_S, gates=[gate])
    (outcome,) = result.gates
    assert ["total" if f.get("scope") == "total" else f"{f['kernel_name'].split('(')[0]} {f['grid']}"
            for f in outcome.failures] == failing


def test_a_bare_gate_is_exit_2_in_compare_and_history(tmp_path):
    # On main `--fail-on 'time_s>5'` printed PASS and exited 0: a typo turned the gate off for good.
    for command in (["compare", str(BASE), str(HEAD)], ["history", str(tmp_path)]):
        result = runner.invoke(app, [*command, "--fail-on", "time_s>5"])
        assert result.exit_code == 2, result.output
        assert "no unit" in result.output and "'time_s>+50us'" in result.output


@pytest.mark.parametrize("gate, min_time_s, failing", [
    ("time_s>+10%", MIN_TIME_S, ["gemm_tile (32, 1, 1)"]),  # +20 %
    ("time_s>+25%", MIN_TIME_S, []),  # tiny's +100 % is under --min-time
    ("time_s>+25%", 0.0, ["tiny_kernel (1, 1, 1)"]),
    ("roofline_fraction<-0.05pt", MIN_TIME_S, ["gemm_tile (32, 1, 1)"]),  # 0.4 -> 0.333: -0.067
    ("headroom_s>+10%", MIN_TIME_S, ["gemm_tile (32, 1, 1)"]),  # 30 -> 40 µs: +33 %
    ("flop_per_s<-3%", MIN_TIME_S, ["gemm_tile (32, 1, 1)"]),  # -16.7 %
    ("time_s<-15%", MIN_TIME_S, ["gemm_tile (64, 1, 1)"]),  # -20 % (a gate may ask for anything)
    ("total:time_s>+2%", MIN_TIME_S, []),  # -6.3 %
    ("total:time_s>-10%", MIN_TIME_S, ["total"]),  # fails unless 10 % faster
    ("total:roofline_fraction<-0.01pt", MIN_TIME_S, []),  # 0.497 -> 0.525
])
def test_gates_per_kernel_and_on_totals(runs, gate, min_time_s, failing):
    result = compare(*runs, min_time_s=min_time_s, gates=[gate])
    (outcome,) = result.gates
    found = ["total" if f.get("scope") == "total" else f"{f['kernel_name'].split('(')[0]} {f['grid']}"
             for f in outcome.failures]
    assert found == failing
    assert result.passed is (not failing)


def test_kernels_list_the_gates_they_failed(runs):
    result = compare(*runs, min_time_s=MIN_TIME_S, gates=["time_s>+10%", "headroom_s>+10%", "total:time_s>+2%"])
    assert row(result, GEMM, "(32, 1, 1)")["gates_failed"] == "time_s>+10%; headroom_s>+10%"
    assert row(result, GEMM, "(64, 1, 1)")["gates_failed"] == ""


# --------------------------------------------------------------------------------------------- comparability


def test_like_for_like_runs_have_no_warnings(comparison):
    assert comparison.warnings == []


def test_other_gpu_and_definitions_are_warned_about(runs):
    base, head = runs
    other = head.kernels.assign(device_name="Other GPU 40GB")
    launches = head.launches.assign(def_bytes_dram="dram__sectors_x32")
    warnings = comparability_warnings(base, replace(head, kernels=other, launches=launches,
                                                    options=replace(head.options, clock="max")))
    assert warnings == [
        "GPU differs: base 'Test GPU 80GB', head 'Other GPU 40GB'",
        "--clock option differs: base 'measured', head 'max'",
        "metric definition of bytes_dram differs: base 'dram__bytes', head 'dram__sectors_x32'",
    ]


def test_strict_refuses_a_mismatch_naming_both_files(runs, tmp_path):
    other = tmp_path / "other_gpu.csv"
    other.write_text(HEAD.read_text().replace("Test GPU 80GB", "Other GPU 40GB"))
    base = runs[0]
    with pytest.raises(InputError) as caught:
        compare(base, analyze(other), strict=True)
    from ncu_roofline.core.paths import shown_path  # relative to the working folder, else the file name

    assert shown_path(BASE) in caught.value.line() and shown_path(other) in caught.value.line()
    assert "GPU differs" in caught.value.line()

    result = runner.invoke(app, ["compare", str(BASE), str(other), "--strict"])
    assert result.exit_code == 2 and shown_path(other) in result.stderr
    result = runner.invoke(app, ["compare", str(BASE), str(other), "--rows", "0"])
    assert result.exit_code == 0 and "warning: GPU differs" in result.stderr


# ------------------------------------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("args, code", [
    (["--fail-on", "total:time_s>+2%"], 0),
    (["--fail-on", "time_s>+25%", "--min-time", "5e-6"], 0),
    (["--fail-on", "time_s>+25%"], 1),
    (["--fail-on", "time_s>+10%", "--fail-on", "total:time_s>+2%"], 1),
    ([], 0),
    (["--fail-on", "time_s>>5%"], 2),
    (["--fail-on", "speed>+5%"], 2),
])
def test_cli_exit_codes(args, code):
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), *args])
    assert result.exit_code == code, result.output
    if code == 2:
        assert result.stderr.startswith("ncu-roofline: error: --fail-on") and result.stderr.count("\n") == 1


def test_cli_missing_input_exits_2():
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD.with_name("missing.csv"))])
    assert result.exit_code == 2 and "missing.csv: no such file" in result.stderr


def test_cli_terminal_table_and_gate_lines():
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--min-time", "5e-6", "--fail-on", "time_s>+10%"])
    assert result.exit_code == 1
    assert "regression" in result.stdout and "name_only" in result.stdout
    # named as the table names it: the (32,1,1) group, grid × block telling it from its namesake
    assert "FAIL time_s>+10% (4 kernels checked): gemm_tile(…) [32×128] +20.0%" in result.stdout


def test_cli_outputs(tmp_path):
    out, md, js = tmp_path / "out", tmp_path / "summary.md", tmp_path / "compare.json"
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--min-time", "5e-6", "--fail-on", "time_s>+10%",
                                 "-o", str(out), "--summary-md", str(md), "--json", str(js)])
    assert result.exit_code == 1
    assert sorted(p.name for p in out.iterdir()) == ["compare.html", "compare.json", "compare.parquet",
                                                      "compare.vl.json"]
    table = pd.read_parquet(out / "compare.parquet")
    assert len(table) == 7
    for column in ("kernel_name", "match", "verdict", "grid_base", "grid_head", "time_s_base", "time_s_head",
                   "time_s_change", "time_s_change_pct", "flop_per_s_change_pct", "roofline_fraction_change",
                   "headroom_s_change", "gates_failed"):
        assert column in table.columns

    payload = json.loads(js.read_text())
    assert payload["kind"] == "comparison" and payload["passed"] is False
    assert payload["counts"] == {"regression": 1, "improvement": 2, "neutral": 2, "added": 1, "removed": 1}
    assert payload["totals"]["time_s"]["base"] == pytest.approx(186e-6)
    (gate,) = payload["gates"]
    assert gate["expression"] == "time_s>+10%" and gate["passed"] is False and gate["checked"] == 4
    assert gate["failures"][0]["change_pct"] == pytest.approx(20.0)
    assert json.loads((out / "compare.json").read_text()) == payload

    summary = md.read_text()
    assert summary.startswith("## ncu-roofline compare\n")
    assert "❌ **1 of 1 gates failed**" in summary
    assert "| `time_s>+10%` | per kernel | ❌ fail | 4 | `gemm_tile(…) [32×128]` +20.0% |" in summary
    assert "### Added (1)" in summary and "`new_kernel(…)` (8,1,1)×(64,1,1)" in summary
    assert "### Removed (1)" in summary and "`old_kernel(…)`" in summary
    assert "name_only" in summary

    html = (out / "compare.html").read_text()
    assert "cdn.jsdelivr" not in html and "https://cdn" not in html  # offline: scripts inlined
    spec = json.loads((out / "compare.vl.json").read_text())
    marks = [layer["mark"]["type"] for layer in spec["vconcat"][0]["layer"]]  # the roofline over the memory panel
    assert "rule" in marks and marks.count("point") == 2
    assert spec["vconcat"][1]["name"] == "memory_panel"


def test_chart_arrows_use_head_roofs_and_dram_intensity(comparison):
    from ncu_roofline.render.compare.chart import arrow_rows

    # The fixture holds DRAM bytes only; give the head run an L2 intensity of half its DRAM one (twice the bytes).
    head = comparison.head.kernels.assign(ai_l2=comparison.head.kernels["ai_dram"] / 2)
    every_level = arrow_rows(comparison.kernels, 20, comparison.base.kernels, head)
    assert set(every_level["level"]) == {"DRAM", "L2", "L1"}
    # L2 and L1 ends come from each run's kernel table by rank: every drawn L2 head end is half its DRAM one.
    l2 = every_level[every_level["level"] == "L2"].set_index("key")
    dram = every_level[every_level["level"] == "DRAM"].set_index("key")
    drawn = l2.index[l2["has_head"]]
    assert len(drawn) >= 2 and np.allclose(l2.loc[drawn, "x_head"], dram.loc[drawn, "x_head"] / 2)
    assert not every_level.loc[every_level["level"] == "L1", "has_head"].any()  # no L1 bytes: nothing drawn
    arrows = every_level[every_level["level"] == "DRAM"]
    gemm = arrows[(arrows["kernel_name"] == GEMM) & (arrows["shape"] == "(64, 1, 1) × (128, 1, 1)")].iloc[0]
    # AI DRAM = 5e8 FLOP / 60e6 B = 8.33 in both runs; the arrow goes straight up from 5 to 6.25 TFLOP/s
    assert gemm["x_base"] == pytest.approx(5e8 / 60e6) and gemm["x_head"] == pytest.approx(5e8 / 60e6)
    assert (gemm["y_base"], gemm["y_head"]) == (pytest.approx(5e12), pytest.approx(6.25e12))
    assert not arrows.loc[arrows["kernel_name"] == COPY, "has_head"].item()  # zero FLOP/s: not on log axes


def test_markdown_without_gates(comparison):
    text = comparison_markdown(comparison.kernels, comparison.totals, comparison.info())
    assert "No gates set" in text and "### Gates" not in text


# ---------------------------------------------------------------------------------------------- determinism


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_compare_outputs_are_byte_identical_across_runs(tmp_path):
    outputs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        args = ["compare", str(BASE), str(HEAD), "--fail-on", "time_s>+10%", "-o", str(folder / "out"),
                "--summary-md", str(folder / "summary.md"), "--json", str(folder / "compare.json")]
        assert runner.invoke(app, args).exit_code == 1
        outputs.append(_files(folder))
    assert outputs[0].keys() == outputs[1].keys() and len(outputs[0]) == 6
    for name in outputs[0]:
        assert outputs[0][name] == outputs[1][name], name


def test_analyze_outputs_are_byte_identical_across_runs(tmp_path):
    outputs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        args = ["analyze", str(ROOT / "fixtures" / "example_h100_raw.csv"), "-o", str(folder / "out"),
                "--summary-md", str(folder / "summary.md"), "--json", str(folder / "summary.json"), "--rows", "0"]
        assert runner.invoke(app, args).exit_code == 0
        outputs.append(_files(folder))
    assert {"out/kernels.parquet", "out/launches.parquet", "out/roofline.vl.json", "out/roofline.html",
            "summary.md", "summary.json"} <= outputs[0].keys()
    assert outputs[0].keys() == outputs[1].keys()
    for name in outputs[0]:
        assert outputs[0][name] == outputs[1][name], name


# -------------------------------------------------------------------------------------------- real reports


@pytest.fixture(scope="module")
def mw_reports() -> tuple[Path, Path]:
    pytest.importorskip("ncu_report")
    base, head = MW / "MW_Baseline.ncu-rep", MW / "MW_DivToMult.ncu-rep"
    if not (base.is_file() and head.is_file()):
        pytest.skip("../shared/ncu-samples/NCAR-GPU_workshop is not present")
    return base, head


@pytest.fixture(scope="module")
def mw_runs(mw_reports):
    """MW_Baseline and MW_DivToMult analysed once for the module (read only: each test compares them itself)."""
    return analyze(mw_reports[0]), analyze(mw_reports[1])


def test_ncar_div_to_mult_matches_one_to_one(mw_runs):
    result = compare(*mw_runs, min_time_s=1e-4)
    assert len(result.kernels) == 5
    assert (result.kernels["match"] == "exact").all()
    assert result.warnings == []
    # the rewrite of compute_tendencies_x_279 (a division turned into a multiplication) is the improvement
    top = result.kernels.iloc[0]
    assert top["kernel_name"] == "compute_tendencies_x_279_gpu" and top["verdict"] == "improvement"
    assert result.totals.loc["time_s", "change"] < 0


def test_ncar_gates_pass_and_fail(mw_reports):
    base, head = map(str, mw_reports)
    passing = runner.invoke(app, ["compare", base, head, "--min-time", "1e-4", "--fail-on", "time_s>+5%",
                                  "--fail-on", "total:time_s>+2%"])
    assert passing.exit_code == 0, passing.output
    # fewer FLOPs in less time: FLOP/s fell, so a FLOP/s gate fails the improvement
    failing = runner.invoke(app, ["compare", base, head, "--fail-on", "flop_per_s<-10%"])
    assert failing.exit_code == 1, failing.output


# ----------------------------------------------------------------------------------------------- JSON schema


def _documented_schema(kind: str) -> dict:
    """The JSON Schema block of docs/json-schema.md that follows `<!-- schema: kind -->`."""
    text = (ROOT / "docs" / "json-schema.md").read_text()
    block = text.split(f"<!-- schema: {kind} -->", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    return json.loads(block)


def test_json_outputs_follow_the_documented_schemas(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    analysis = runner.invoke(app, ["analyze", str(HEAD), "--json", "-", "--rows", "3"])
    assert analysis.exit_code == 0
    jsonschema.Draft7Validator(_documented_schema("analysis")).validate(json.loads(analysis.stdout))

    comparison = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--json", "-", "--fail-on", "time_s>+10%",
                                     "--fail-on", "total:time_s>-10%"])
    assert comparison.exit_code == 1
    payload = json.loads(comparison.stdout)
    jsonschema.Draft7Validator(_documented_schema("comparison")).validate(payload)
    assert [g["passed"] for g in payload["gates"]] == [False, False]


def test_nvtx_grouped_runs_carry_both_paths(runs):
    def in_range(analysis, path):
        return replace(analysis, kernels=analysis.kernels.assign(nvtx_range=path),
                       launches=analysis.launches.assign(nvtx_range=path))

    result = compare(in_range(runs[0], "train/step"), in_range(runs[1], "train/step"))
    assert {"nvtx_range_base", "nvtx_range_head"} <= set(result.kernels.columns)
    assert result.kernels["match"].value_counts().to_dict() == {"exact": 4, "name_only": 1}
    renamed = compare(in_range(runs[0], "train/step 1"), in_range(runs[1], "train/step 2"))
    assert renamed.kernels["match"].value_counts().to_dict() == {"launch_order": 4, "name_only": 1}


def test_folders_are_runs(tmp_path):
    for side, source in (("base", BASE), ("head", HEAD)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "run.csv").write_bytes(source.read_bytes())
    result = runner.invoke(app, ["compare", str(tmp_path / "base"), str(tmp_path / "head"), "--json", "-"])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["base"]["label"] == "run.csv"  # outside the working folder: the file name, no absolute path
    assert payload["counts"]["added"] == 1


def test_chart_draws_kernels_without_flops_in_the_memory_panel(comparison):
    """copy, old, new and tiny count no FLOP: no point on the log axes, an arrow of bytes/s per level in the panel.
    DRAM only (the fixture has no L2/L1 bytes). copy: 2 × 15 MB in 2 × 10 µs = 1.5 TB/s, in 2 × 10.1 µs
    = 30e6 / 20.2e-6 = 1.485 TB/s (75.0 % → 74.3 % of the 2 TB/s roof); old_kernel (removed): 4 MB / 5 µs = 0.8 TB/s
    on the base side only; new_kernel (added): 2 MB / 3 µs = 0.667 TB/s on the head side only."""
    from ncu_roofline.render.compare.chart import compare_chart

    spec = compare_chart(comparison.kernels, base_kernels=comparison.base.kernels,
                         head_kernels=comparison.head.kernels, ctx=comparison.chart_context(20))
    assert [view["name"] for view in spec["vconcat"]] == ["roofline", "memory_panel"]  # the panel under, as wide
    assert spec["vconcat"][1]["width"] == spec["vconcat"][0]["width"]
    panel = pd.DataFrame(spec["datasets"]["memory_arrows"])
    assert set(panel["level"]) == {"DRAM"}
    names = {name.split("(")[0] for name in panel["kernel_name"]}
    assert names == {"copy_kernel", "old_kernel", "new_kernel", "tiny_kernel"}
    copy = panel[panel["kernel_name"] == COPY].iloc[0]
    assert (copy["bw_base"], copy["bw_head"]) == (pytest.approx(1.5e12), pytest.approx(30e6 / 20.2e-6))
    assert copy["of_roof"] == "75.0% → 74.3%" and copy["angle"] == 180  # slower: the arrowhead points down
    old = panel[panel["kernel_name"].str.startswith("old_kernel")].iloc[0]
    assert old["has_bw_base"] and not old["has_bw_head"] and old["bw_base"] == pytest.approx(0.8e12)
    new = panel[panel["kernel_name"].str.startswith("new_kernel")].iloc[0]
    assert new["has_bw_head"] and not new["has_bw_base"] and new["bw_head"] == pytest.approx(2e6 / 3e-6)
    roofs = pd.DataFrame(spec["datasets"]["memory_roofs"])
    assert set(roofs["roof"]) == {"DRAM"} and set(roofs["y"]) == {2e12}  # the head run's roof, no L2/L1 known
    # Each column is named on the x axis, in the comparison's order; hovering the panel's heads picks the kernel.
    axis = spec["vconcat"][1]["layer"][0]["encoding"]["x"]["axis"]
    assert len(axis["values"]) == panel["slot"].nunique() == 4
    assert "memory_heads" in next(p for p in spec["params"] if p["name"] == "kernel")["views"]
    assert spec["title"]["subtitle"][2] == ("3 of 7 kernels on the roofline, 4 in the memory panel (bytes, no FLOPs), "
                                            "largest time change first")


def test_chart_always_draws_the_kernels_that_failed_a_gate(runs):
    """time_s>+10% fails gemm_tile (32,1,1) (+20 %) and tiny_kernel (1 → 2 µs, +100 %; gated with --min-time 0).
    With --top 1 only the largest change (gemm_tile (64,1,1), -20 µs) is in the top, yet both failures are drawn:
    gemm_tile (32,1,1) on the roofline, tiny_kernel (no FLOPs) in the memory panel."""
    from ncu_roofline.render.compare.chart import compare_chart

    result = compare(*runs, gates=["time_s>+10%"])
    failed = result.kernels[result.kernels["gates_failed"] != ""]
    assert {name.split("(")[0] for name in failed["kernel_name"]} == {"gemm_tile", "tiny_kernel"}
    spec = compare_chart(result.kernels, base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                         ctx=result.chart_context(1))
    arrows = pd.DataFrame(spec["datasets"]["arrows"])
    on_roofline = arrows[arrows["has_base"] | arrows["has_head"]]
    assert set(on_roofline["shape"]) == {"(64, 1, 1) × (128, 1, 1)", "(32, 1, 1) × (128, 1, 1)"}
    panel = pd.DataFrame(spec["datasets"]["memory_arrows"])
    assert {name.split("(")[0] for name in panel["kernel_name"]} == {"tiny_kernel"}
    assert spec["title"]["subtitle"][2] == ("2 of 7 kernels on the roofline, 1 in the memory panel (bytes, no FLOPs), "
                                            "largest time change first, and 2 more that failed a gate; "
                                            "4 left out (beyond the top 1)")


def test_miniweather_chart_draws_both_kernels_that_failed_the_gate(mw_runs):
    """MW_Baseline → MW_DivToMult with time_s>+5%: set_halo_values_x_396 (+12.4 %) and _419 (+6.8 %) fail; they
    count no FLOP (FP64 halo copies), so compare.html once left both out. They are in the memory panel now."""
    from ncu_roofline.render.compare.chart import compare_chart

    result = compare(*mw_runs, gates=["time_s>+5%"])
    failed = set(result.kernels.loc[result.kernels["gates_failed"] != "", "kernel_name"])
    assert failed == {"set_halo_values_x_396_gpu", "set_halo_values_x_419_gpu"}
    spec = compare_chart(result.kernels, base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                         ctx=result.chart_context(20))
    panel = pd.DataFrame(spec["datasets"]["memory_arrows"])
    assert set(panel["kernel_name"]) == failed and set(panel["verdict"]) == {"regression"}
    assert (panel["has_bw_base"] & panel["has_bw_head"]).all()  # an arrow at every level they have bytes for
    drawn = {row["kernel_name"] for row in spec["datasets"]["arrows"] if row["has_base"] or row["has_head"]}
    assert drawn | set(panel["kernel_name"]) == set(result.kernels["kernel_name"])  # all 5 kernels drawn


# ------------------------------------------------------------------------------ partial speed of light (issue 35)


def test_a_partial_speed_of_light_is_marked_in_every_compare_output(runs):
    """A head run whose gemm_tile (64) speed of light lacks terms (`sol_complete` false, as analyze marks a capture
    without some counters): its fraction is a lower bound and its bound unproven, in the Markdown, the terminal and
    the JSON as in analyze (`≥ 62.5%`, `fp32?`). gemm_tile (64): t_sol = 5e8 FLOP / 10 TFLOP/s = 50 µs over
    100 µs → 80 µs, so 50.0% → 62.5%, +12.5 pt, bound FP32 in both."""
    base, head = runs
    kernels = head.kernels.copy()
    kernels["sol_complete"] = kernels["grid"] != "(64, 1, 1)"
    result = compare(base, replace(head, kernels=kernels), min_time_s=MIN_TIME_S)
    gemm = row(result, GEMM, "(64, 1, 1)")
    assert gemm["sol_complete_base"] is True or bool(gemm["sol_complete_base"])
    assert not bool(gemm["sol_complete_head"])
    text = comparison_markdown(result.kernels, result.totals, result.info())
    assert "| 50.0% → ≥ 62.5% | fp32 → fp32? |" in text
    assert "| +12.5 pt? |" in text  # a change towards a lower bound is unproven
    assert "| headroom (recoverable) | 93.5 µs | ≤ 82.7 µs |" in text  # 186 - 92.5 µs; 174.2 - 91.5 µs
    assert "that run's speed of light lacks terms" in text
    payload = json.loads(comparison_json_text(result))
    first = next(k for k in payload["kernels"] if k["grid_head"] == "(64, 1, 1)")
    assert first["sol_complete_base"] is True and first["sol_complete_head"] is False
    assert payload["totals"]["kernels_upper_bound"]["head"] == 1.0
    terminal = run_terminal(result)
    assert "fp32 → fp32?" in terminal and "+12.5 pt?" in terminal


def comparison_json_text(result) -> str:
    from ncu_roofline.render.compare.json_summary import comparison_json

    return comparison_json(result.kernels, result.totals, result.info())


def run_terminal(result) -> str:
    from rich.console import Console

    from ncu_roofline.render.compare.console import print_comparison

    console = Console(width=160, record=True, color_system=None)
    print_comparison(result.kernels, result.totals, result.info(), console=console)
    return console.export_text()


# ------------------------------------------------------------------------ Markdown for a step summary (issue 35)


def test_chart_url_is_the_summary_image_and_the_failing_kernel_comes_first(tmp_path):
    """gemm_tile (32) fails `time_s>+9us` (+10 µs) but moved less than gemm_tile (64) (-20 µs), which the table
    listed first; a step summary shows what failed the job first, and the chart from the URL the job uploaded
    it to (a relative path is a broken image there)."""
    url = "https://github.com/o/r/actions/runs/1/artifacts/2/compare.png"
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--fail-on", "time_s>+9us", "--min-time", "5e-6",
                                 "--summary-md", str(tmp_path / "s.md"), "--chart-url", url])
    assert result.exit_code == 1, result.output
    text = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert f"![before → after roofline]({url})" in text
    assert text.index("### Gates") < text.index(url) < text.index("### Top")
    first_row = text.split("### Top", 1)[1].split("| 1 |", 1)[1].splitlines()[0]
    assert "`gemm_tile" in first_row and "✗ gate" in first_row and "+20.0%" in first_row


@pytest.mark.parametrize("command", [["compare", str(BASE), str(HEAD)], ["analyze", str(BASE)]])
def test_a_chart_url_that_is_no_url_is_refused(command):
    result = runner.invoke(app, [*command, "--chart-url", "out/roofline.png"])
    assert result.exit_code == 2 and "--chart-url 'out/roofline.png': expected an http(s) URL" in result.output


def test_analyze_links_the_chart_url(tmp_path):
    url = "https://example.org/run/roofline.png"
    result = runner.invoke(app, ["analyze", str(BASE), "--summary-md", str(tmp_path / "s.md"), "--chart-url", url])
    assert result.exit_code == 0, result.output
    assert f"![roofline]({url})" in (tmp_path / "s.md").read_text(encoding="utf-8")


def test_a_failing_absolute_gate_prints_its_change_in_the_metrics_unit():
    # gemm_tile (32): 50 -> 60 µs; the line printed "+10.0 µ" (an SI prefix without its unit)
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--fail-on", "time_s>+9us", "--min-time", "5e-6"],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 1
    line = next(row for row in result.output.splitlines() if row.startswith("FAIL"))
    assert line.endswith("+10.0 µs"), line
