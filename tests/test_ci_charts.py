"""Charts for CI (#35 item 5): compare.html and its images say first what failed the gate, with the verdict;
history.html marks the failing run, draws a band of zero spread as a line, and names runs by a `--label`
(`--label-key sha`). The fixtures: fixtures/compare's gemm_tile (32,1,1)×(128,1,1) goes 50 → 60 µs (+20 %),
tiny_kernel 1 → 2 µs (+100 %); every other kernel moves less than 5 % or gets faster."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from ncu_roofline import analyze
from ncu_roofline.comparison import compare
from ncu_roofline.history.bands import BandOptions
from ncu_roofline.history.report import load_history
from ncu_roofline.history.store import append_analysis
from ncu_roofline.render.compare.chart import compare_chart
from ncu_roofline.render.history.chart import history_chart, run_names

ROOT = Path(__file__).resolve().parents[1]
BASE, HEAD = ROOT / "fixtures" / "compare" / "base.csv", ROOT / "fixtures" / "compare" / "head.csv"


@pytest.fixture(scope="module")
def runs():
    return analyze(BASE), analyze(HEAD)


def _compare_spec(runs, gates):
    comparison = compare(*runs, gates=gates)
    return compare_chart(comparison.kernels, base_kernels=runs[0].kernels, head_kernels=runs[1].kernels,
                         ctx=comparison.chart_context(20))


def test_compare_chart_leads_with_the_gate_failures_and_their_verdicts(runs):
    spec = _compare_spec(runs, ["time_s>+5%"])
    title = spec["title"]["text"]
    # the title's second line, above the plot: (50 → 60 µs) is +20.0 %, (1 → 2 µs) is +100.0 %
    assert title[1].startswith("✗ gate failed: ")
    assert "gemm_tile(…) [32×128], regression +20.0% (time_s>+5%)" in title[1]
    assert "tiny_kernel(…), regression +100.0% (time_s>+5%)" in title[1]
    arrows = pd.DataFrame(spec["datasets"]["arrows"])
    failed = arrows[arrows["failed"]]
    assert set(failed["label"]) == {"✗ gemm_tile(…) [32×128] (regression)", "✗ tiny_kernel(…) (regression)"}
    assert not arrows.loc[~arrows["failed"], "label"].str.contains("✗").any()


def test_compare_chart_without_failures_keeps_its_one_title_line(runs):
    spec = _compare_spec(runs, ["time_s>+500%"])
    assert len(spec["title"]["text"]) == 1 and "color" not in spec["title"]
    assert not any(a["failed"] for a in spec["datasets"]["arrows"])


@pytest.fixture(scope="module")
def history(runs, tmp_path_factory):
    """Four base runs then the head: the band of the four is min–max of equal times, zero spread."""
    folder = tmp_path_factory.mktemp("history")
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for day, run in enumerate((runs[0],) * 4 + (runs[1],)):
        append_analysis(folder, run, run_id=f"r{day + 1}", run_time=start + timedelta(days=day),
                        labels={"sha": f"{day + 1:x}0c0ffee1234", "branch": "main"})
    return load_history(folder, gates=["time_s>+5%"], band=BandOptions(band="minmax"))


def test_history_chart_marks_the_failing_run_and_names_runs_by_sha(history):
    spec = history_chart(history.summary, history.series, history.runs, gates=history.gates, band_name="minmax",
                         label_key="sha")
    times = pd.DataFrame(spec["datasets"]["times"])
    marked = times[times["failed"]]
    # the newest run (r5, sha 50c0ffee…: first 8 characters) of the two kernels that failed, nothing else
    assert set(marked["run"]) == {"r5"} and set(marked["run_id"]) == {"50c0ffee"}
    assert sorted(marked["label"]) == ["gemm_tile(…) [32×128]", "tiny_kernel(…)"]
    [layer] = [layer for layer in spec["layer"] if layer.get("transform") == [{"filter": "datum.failed"}]]
    assert layer["mark"]["shape"] == "cross"
    assert spec["title"]["text"][1].startswith("✗ gate failed in run 50c0ffee: ")
    x_sort = spec["layer"][-2]["encoding"]["x"]["sort"]
    assert x_sort == ["10c0ffee", "20c0ffee", "30c0ffee", "40c0ffee", "50c0ffee"]


def test_a_band_of_zero_spread_is_drawn_as_a_line(history):
    spec = history_chart(history.summary, history.series, history.runs, gates=history.gates, band_name="minmax")
    bands = pd.DataFrame(spec["datasets"]["bands"])
    gemm = bands[bands["label"] == "gemm_tile(…) [32×128]"]
    # four equal runs of 50 µs: the band is [50 µs, 50 µs], an area of no height
    assert gemm["band_low"].tolist() == pytest.approx([50e-6] * len(gemm)) == gemm["band_high"].tolist()
    edges = [layer for layer in spec["layer"] if layer.get("data") == {"name": "bands"}
             and layer["mark"]["type"] == "line"]
    assert {e["encoding"]["y"]["field"] for e in edges} == {"band_low_scaled", "band_high_scaled"}


def test_run_names_fall_back_to_the_id_and_keep_shared_names_apart():
    runs = pd.DataFrame({"run_id": ["a", "b", "c"],
                         "labels": ['{"sha": "deadbeef99"}', '{"sha": "deadbeef11"}', '{"branch": "x"}']})
    # both shas start deadbeef: each keeps its id beside it; c has no sha: its id
    assert run_names(runs, "sha") == {"a": "deadbeef (a)", "b": "deadbeef (b)", "c": "c"}
    assert run_names(runs, None) == {"a": "a", "b": "b", "c": "c"}



def test_history_gate_lines_name_kernels_as_the_table_does(history):
    import io

    from rich.console import Console

    from ncu_roofline.history.series import wide_values
    from ncu_roofline.render.history.console import print_history

    stream = io.StringIO()
    print_history(history.summary, wide_values(history.series, "time_s", len(history.runs)), history.gates,
                  runs=len(history.runs), newest_run_id=history.newest_run_id, console=Console(file=stream, width=200))
    [line] = [line for line in stream.getvalue().splitlines() if line.startswith("FAIL")]
    # 50 → 60 µs is +20.0 % above a band of 50 µs; the [32×128] group, not its [64×128] namesake
    assert "gemm_tile(…) [32×128] +20.0% above the band" in line
