"""`history`: series over hand-built runs with known values, matched as `compare` matches, and the noise-band gates
with their arithmetic written out."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.history.store import write_run
from ncu_roofline.history.bands import BandOptions
from ncu_roofline.history.report import load_history

runner = CliRunner()
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def kernel(name: str, time_s: float, *, grid: str = "(64,1,1)", block: str = "(128,1,1)", t_sol_s: float = 0.5,
           order: float = 0.0, bound: str = "dram") -> dict:
    return {"kernel_name": name, "grid": grid, "block": block, "device_name": "H100", "launches": 1,
            "time_s": time_s, "t_sol_s": t_sol_s, "roofline_fraction": t_sol_s / time_s,
            "headroom_s": time_s - t_sol_s, "bound": bound, "ai_dram": 2.0, "flop_total": 1e9,
            "flop_per_s": 1e9 / time_s, "launch_order": order}


def add_run(directory, index: int, kernels: list[dict], labels: dict | None = None) -> None:
    table = pd.DataFrame(kernels)
    write_run(directory, run_id=f"r{index}", kernels=table, launches=table.drop(columns=["launch_order"]),
              metadata={}, labels=labels or {}, run_time=T0 + timedelta(days=index))


def build(directory, gemm_times: list[float], axpy_times: list[float | None] | None = None) -> None:
    for i, t in enumerate(gemm_times):
        rows = [kernel("gemm", t, order=0)]
        other = (axpy_times or [2.0] * len(gemm_times))[i]
        if other is not None:
            rows.append(kernel("axpy", other, order=1))
        add_run(directory, i, rows)


def failing(history) -> dict[str, dict]:
    return {f["kernel_name"]: f for result in history.gates for f in result.failures}


def test_series_follow_kernels_across_runs_as_compare_matches_them(tmp_path):
    add_run(tmp_path, 0, [kernel("gemm", 1.0), kernel("axpy", 2.0, order=1),
                          kernel("copy", 0.1, grid="(1,1,1)", order=2), kernel("copy", 0.2, grid="(2,1,1)", order=3)])
    # run 1: axpy absent, gemm retuned its block (its name is unique: matched by name only)
    add_run(tmp_path, 1, [kernel("gemm", 1.1, block="(256,1,1)"), kernel("copy", 0.1, grid="(1,1,1)", order=2),
                          kernel("copy", 0.2, grid="(2,1,1)", order=3)])
    # run 2: axpy is back, and a new kernel appears
    add_run(tmp_path, 2, [kernel("gemm", 1.2, block="(256,1,1)"), kernel("axpy", 2.5, order=1),
                          kernel("scan", 0.3, order=4), kernel("copy", 0.1, grid="(1,1,1)", order=2),
                          kernel("copy", 0.4, grid="(2,1,1)", order=3)])
    history = load_history(tmp_path)
    series = history.series
    assert series["series_id"].nunique() == 5  # gemm, axpy, copy×2 (two grids: never merged), scan
    def values(name, grid="(64,1,1)"):
        rows = series[(series["kernel_name"] == name) & ((series["grid"] == grid) | (name != "copy"))]
        assert rows["series_id"].nunique() == 1
        return rows.sort_values("run_index")[["run_id", "time_s"]].values.tolist()
    assert values("gemm") == [["r0", 1.0], ["r1", 1.1], ["r2", 1.2]]
    assert values("axpy") == [["r0", 2.0], ["r2", 2.5]]
    assert values("copy", "(1,1,1)") == [["r0", 0.1], ["r1", 0.1], ["r2", 0.1]]
    assert values("copy", "(2,1,1)") == [["r0", 0.2], ["r1", 0.2], ["r2", 0.4]]
    assert values("scan") == [["r2", 0.3]]
    summary = history.summary.set_index(["kernel_name", "grid"])
    # axpy: newest 2.5 against the median of its earlier runs (2.0): +0.5 s, +25 %
    assert summary.loc[("axpy", "(64,1,1)"), "time_s_change"] == pytest.approx(0.5)
    assert summary.loc[("axpy", "(64,1,1)"), "time_s_change_pct"] == pytest.approx(25.0)
    # gemm: median(1.0, 1.1) = 1.05, newest 1.2: +0.15 s; roofline fraction 0.5/1.2 - median(0.5, 0.5/1.1)
    assert summary.loc[("gemm", "(64,1,1)"), "time_s_change"] == pytest.approx(0.15)
    assert summary.loc[("gemm", "(64,1,1)"), "roofline_fraction_change"] == pytest.approx(
        0.5 / 1.2 - (0.5 + 0.5 / 1.1) / 2)
    # the movers, largest absolute time change first: axpy +0.5, copy(2) +0.2, gemm +0.15, copy(1) 0; scan (no
    # earlier run) last
    assert history.summary["kernel_name"].tolist() == ["axpy", "copy", "gemm", "copy", "scan"]
    assert history.summary["grid"].tolist()[:4] == ["(64,1,1)", "(2,1,1)", "(64,1,1)", "(1,1,1)"]
    # run 3: one copy changes its grid. The name repeats, so (as in compare) it is not matched by name: a new
    # series starts, and the old (2,1,1) series simply has no value in r3.
    add_run(tmp_path, 3, [kernel("gemm", 1.2, block="(256,1,1)"), kernel("copy", 0.1, grid="(1,1,1)", order=2),
                          kernel("copy", 0.4, grid="(4,1,1)", order=3)])
    later = load_history(tmp_path).series
    assert later["series_id"].nunique() == 6
    assert later[later["grid"] == "(4,1,1)"]["run_id"].tolist() == ["r3"]
    assert later[later["grid"] == "(2,1,1)"]["run_id"].tolist() == ["r0", "r1", "r2"]


@pytest.mark.parametrize("newest, band, gate, fails", [
    # window r0..r3 = 1.00, 1.02, 0.98, 1.01 -> min-max band [0.98, 1.02]
    (1.015, "minmax", "time_s>+5%", False),  # inside the band: change 0
    (1.06, "minmax", "time_s>+5%", False),   # (1.06 - 1.02) / 1.02 = 3.92 % above the band: not beyond 5 %
    (1.10, "minmax", "time_s>+5%", True),    # (1.10 - 1.02) / 1.02 = 7.84 % above the band
    # median 1.005, |x - median| = .005 .015 .025 .005 -> MAD 0.01; band 1.005 ± 3 · 1.4826 · 0.01 = ± 0.044478
    (1.10, "mad", "time_s>+5%", False),      # (1.10 - 1.049478) / 1.049478 = 4.81 %
    (1.10, "mad", "time_s>+4.5%", True),
    (0.90, "minmax", "time_s>+5%", False),   # faster: below the band, change (0.90 - 0.98) is negative
    (0.90, "minmax", "time_s<-5%", True),    # (0.90 - 0.98) / 0.98 = -8.16 %
])
def test_gate_against_the_band_of_earlier_runs(tmp_path, newest, band, gate, fails):
    build(tmp_path, [1.00, 1.02, 0.98, 1.01, newest])
    history = load_history(tmp_path, gates=[gate], band=BandOptions(band=band))
    assert history.passed is not fails
    table = history.gate_tables[gate].set_index("series_id")
    gemm = int(history.summary.set_index("kernel_name").loc["gemm", "series_id"])
    low, high = (0.98, 1.02) if band == "minmax" else (1.005 - 3 * 1.4826 * 0.01, 1.005 + 3 * 1.4826 * 0.01)
    assert table.loc[gemm, "low"] == pytest.approx(low) and table.loc[gemm, "high"] == pytest.approx(high)
    edge = high if newest > high else low if newest < low else None
    assert table.loc[gemm, "change_pct"] == pytest.approx(0.0 if edge is None else 100 * (newest - edge) / edge)
    if fails:
        failure = failing(history)["gemm"]
        assert failure["since_run_id"] == "r4" and failure["newest_run_id"] == "r4"
        assert failure["window_runs"] == 4
        assert set(failing(history)) == {"gemm"}  # axpy, flat at 2.0, never fails


def test_window_since_and_cli_exit_codes(tmp_path):
    # A creeping kernel: 1.0 ×4, then 1.2, 1.4. Newest 1.4 against [1.0, 1.2]: +16.7 %. Since: r4's 1.2 and r5's
    # 1.4 are both > 5 % above the band of the runs before r4 ([1.0, 1.0]); r3's 1.0 is not: the move began at r4.
    build(tmp_path, [1.0, 1.0, 1.0, 1.0, 1.2, 1.4])
    minmax = BandOptions(band="minmax")
    history = load_history(tmp_path, gates=["time_s>+5%"], band=minmax)
    failure = failing(history)["gemm"]
    assert failure["change_pct"] == pytest.approx(100 * (1.4 - 1.2) / 1.2)
    assert failure["since_run_id"] == "r4"
    # --window 1: the band is r4 alone, [1.2, 1.2]: the same +16.7 %; --last 2: only r4 and r5 are shown
    assert failing(load_history(tmp_path, gates=["time_s>+5%"], band=BandOptions(window=1, band="minmax")))[
        "gemm"]["window_runs"] == 1
    assert load_history(tmp_path, last=2).runs["run_id"].tolist() == ["r4", "r5"]
    # A total gate: run totals are 1.4 + 2.0 = 3.4 against [3.0, 3.2]: +6.25 %
    total = load_history(tmp_path, gates=["total:time_s>+6%"], band=minmax)
    assert failing(total)["total"]["change_pct"] == pytest.approx(100 * (3.4 - 3.2) / 3.2)
    assert load_history(tmp_path, gates=["total:time_s>+7%"], band=minmax).passed
    # the default band (median ± 3·1.4826·MAD of 1.0, 1.0, 1.0, 1.0, 1.2: median 1.0, MAD 0) is [1.0, 1.0]:
    # 1.4 is +40 % above it
    assert failing(load_history(tmp_path, gates=["time_s>+5%"]))["gemm"]["change_pct"] == pytest.approx(40.0)
    result = runner.invoke(app, ["history", str(tmp_path), "--fail-on", "time_s>+5%", "--json", "-",
                                 "--band", "minmax"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["passed"] is False and [r["run_id"] for r in payload["runs"]] == [f"r{i}" for i in range(6)]
    gemm = next(k for k in payload["kernels"] if k["kernel_name"] == "gemm")
    assert [p["time_s"] for p in gemm["series"]] == [1.0, 1.0, 1.0, 1.0, 1.2, 1.4]
    assert payload["gates"][0]["failures"][0]["since_run_id"] == "r4"
    passing = runner.invoke(app, ["history", str(tmp_path), "--fail-on", "time_s>+20%", "--band", "minmax"])
    assert passing.exit_code == 0 and "PASS time_s>+20%" in passing.stdout
    # --kernel keeps the matching series; --min-time leaves out kernels under it (gemm's newest 1.4 s < 1.5 s)
    assert runner.invoke(app, ["history", str(tmp_path), "--kernel", "^gemm$", "--fail-on", "time_s>+5%",
                               "--min-time", "1.5"]).exit_code == 0
    typo = runner.invoke(app, ["history", str(tmp_path), "--kernel", "^gemmm$", "--fail-on", "time_s>+5%"])
    assert typo.exit_code == 2 and "no kernel name matches --kernel '^gemmm$'" in typo.stderr
    bad = runner.invoke(app, ["history", str(tmp_path), "--band", "iqr"])
    assert bad.exit_code == 2 and "--band must be 'minmax' or 'mad'" in bad.stderr


def test_a_kernel_absent_from_the_newest_run_or_new_in_it_is_skipped(tmp_path):
    build(tmp_path, [1.0, 1.0, 3.0], axpy_times=[2.0, 2.0, None])
    add_run(tmp_path, 3, [kernel("gemm", 1.0), kernel("fresh", 9.0, order=2)])
    history = load_history(tmp_path, gates=["time_s>+1%"])
    (result,) = history.gates
    # gemm is judged (inside [1.0, 3.0]); axpy is absent from r3 and fresh has no earlier value: both skipped
    assert (result.checked, result.skipped, result.passed) == (1, 2, True)


def test_label_filter_and_the_outputs(tmp_path):
    for i, (t, branch) in enumerate([(1.0, "main"), (5.0, "dev"), (1.0, "main"), (1.02, "main")]):
        add_run(tmp_path, i, [kernel("gemm", t)], labels={"branch": branch})
    # on main alone, gemm is flat (1.0, 1.0 -> 1.02: +2 %); with the dev run, the band is [1.0, 5.0]
    main_only = load_history(tmp_path, labels={"branch": "main"}, gates=["time_s>+1%"])
    assert main_only.runs["run_id"].tolist() == ["r0", "r2", "r3"]
    assert failing(main_only)["gemm"]["change_pct"] == pytest.approx(2.0)
    assert load_history(tmp_path, gates=["time_s>+1%"], band=BandOptions(band="minmax")).passed
    # the default band is robust to the one dev run: median(1.0, 5.0, 1.0) = 1.0, MAD 0: +2 % above [1.0, 1.0]
    assert failing(load_history(tmp_path, gates=["time_s>+1%"]))["gemm"]["change_pct"] == pytest.approx(2.0)
    with pytest.raises(InputError, match="no run matches the --label filter"):
        load_history(tmp_path, labels={"branch": "nope"})
    out = tmp_path / "out"
    result = runner.invoke(app, ["history", str(tmp_path), "--label", "branch=main", "-o", str(out),
                                 "--summary-md", str(tmp_path / "summary.md")])
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["history.html", "history.json", "history.parquet",
                                                     "history.vl.json"]
    series = pd.read_parquet(out / "history.parquet")
    assert series["time_s"].tolist() == [1.0, 1.0, 1.02]
    spec = json.loads((out / "history.vl.json").read_text())
    bands = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "area")
    band_rows = spec["datasets"][bands["data"]["name"]]
    # the band (min-max of r0, r2) spans the window and the newest run
    assert [(r["run_id"], r["band_low"], r["band_high"]) for r in band_rows] == [
        ("r0", 1.0, 1.0), ("r2", 1.0, 1.0), ("r3", 1.0, 1.0)]
    assert "cdn.jsdelivr" not in (out / "history.html").read_text()  # offline
    markdown = (tmp_path / "summary.md").read_text()
    assert "| `gemm` (64,1,1)×(128,1,1) | 3 |" in markdown and "+2.0%" in markdown


def test_history_json_follows_the_documented_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from test_compare import _documented_schema

    build(tmp_path, [1.0, 1.0, 1.0, 1.0, 1.2, 1.4])
    result = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--fail-on", "time_s>+5%"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    jsonschema.Draft7Validator(_documented_schema("history")).validate(payload)
    again = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--fail-on", "time_s>+5%"])
    assert again.stdout == result.stdout  # deterministic: the run times are the dataset's own
    assert payload["runs"][0]["run_time"] == "2026-03-01T00:00:00+00:00"


def test_a_single_run_has_no_band_and_nothing_is_judged(tmp_path):
    build(tmp_path, [1.0])
    history = load_history(tmp_path, gates=["time_s>+5%", "total:time_s>+5%"], band=BandOptions(band="mad"))
    assert [(r.checked, r.skipped, r.passed) for r in history.gates] == [(0, 2, True), (0, 1, True)]
    assert history.summary["band_low"].isna().all()
    result = runner.invoke(app, ["history", str(tmp_path), "--last", "1", "--fail-on", "time_s>+5%"])
    assert result.exit_code == 0 and "PASS time_s>+5% (0 kernels checked)" in result.stdout


def test_history_kernel_matches_the_display_name_as_analyze_does(tmp_path):
    """A kernel recorded mangled is found by what the tables show (`RowReduceKernel(float const*`), and `^…$`
    anchors at either name's ends, as `analyze --kernel` (pipeline/select.name_mask)."""
    mangled = "_ZN10tensorflow7functor15RowReduceKernelEPKfPfi"
    for i in range(2):
        add_run(tmp_path, i, [kernel(mangled, 1.0), kernel("gemm", 2.0, order=1), kernel("gemm_tn", 3.0, order=2)])
    by_display = load_history(tmp_path, kernel=r"RowReduceKernel\(float const\*")
    assert by_display.summary["kernel_name"].tolist() == [mangled]
    assert load_history(tmp_path, kernel="^gemm$").summary["kernel_name"].tolist() == ["gemm"]


def test_sparklines_share_one_scale_per_table(tmp_path):
    """gemm jitters ±1 % around 1 s; axpy drops 14 % at the newest run (2.0 → 1.72 s). On one scale (ratios to
    each kernel's median: 0.86 … 1.01) gemm's line stays in the top levels and axpy's spans them all; drawn per row,
    ±1 % filled the whole height like the drop (issue 35)."""
    gemm = [1.0, 1.01, 0.99, 1.0, 1.01, 0.99]
    axpy = [2.0, 2.0, 2.0, 2.0, 2.0, 1.72]
    build(tmp_path, gemm, axpy)
    result = runner.invoke(app, ["history", str(tmp_path), "--summary-md", str(tmp_path / "s.md")],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = (tmp_path / "s.md").read_text(encoding="utf-8")
    lines = {name: line for line in text.splitlines() for name in ("gemm", "axpy") if line.startswith(f"| `{name}")}
    spark = {name: line.split("`")[3] for name, line in lines.items()}
    assert spark["axpy"] == "██████"[:5] + "▁"  # 1.0 at the top of 0.86 … 1.01, 0.86 at the bottom
    assert set(spark["gemm"]) <= set("▇█"), spark  # 0.99 … 1.01 of 0.86 … 1.01: the top two levels
    assert "one scale: -14.0% … +1.0% of each kernel's median" in text
    assert "one scale: -14.0% …" in result.output  # the terminal says it under its table too


def test_sol_complete_travels_into_the_history_outputs(tmp_path):
    """A run whose speed of light lacks terms keeps `sol_complete` false in the history's JSON and Parquet rows,
    and its newest bound and Δ of roof read '?' as analyze's and compare's do (issue 35)."""
    for i, complete in enumerate([True, True, False]):
        add_run(tmp_path, i, [{**kernel("gemm", 1.0 + 0.1 * i), "sol_complete": complete}])
    payload = json.loads(runner.invoke(app, ["history", str(tmp_path), "--json", "-"]).stdout)
    (gemm,) = payload["kernels"]
    assert gemm["sol_complete_newest"] is False
    assert [run["sol_complete"] for run in gemm["series"]] == [True, True, False]
    result = runner.invoke(app, ["history", str(tmp_path), "--summary-md", str(tmp_path / "s.md")])
    assert result.exit_code == 0, result.output
    row = next(line for line in (tmp_path / "s.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `gemm"))
    assert row.endswith(" pt? | dram? |"), row
