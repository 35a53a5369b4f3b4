"""The weighting everywhere it is shown: chart bars and tooltips, the ranking sentence under `--sort`, compare's
run and per-kernel app-time change and its gates on the app columns.

The profile is fixtures/raw_base_units.csv (dgemm_naive, saxpy); the timeline fixtures/nsys/kern_sum_2024.csv
(dgemm 400 ms, saxpy 50 ms, reduce_rows 150 ms); compare uses fixtures/compare with timelines written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_nsys import compare_timelines

import ncu_roofline
from ncu_roofline.readers.nsys import timeline_csv

from conftest import cli_in_process

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
PROFILE = FIXTURES / "raw_base_units.csv"
TIMELINE = FIXTURES / "nsys" / "kern_sum_2024.csv"


def _cli(*args: str):
    return cli_in_process(*args, env={"COLUMNS": "160"})


def _bars(spec: dict) -> dict:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == "headroom" and "mark" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(spec)
    assert len(found) == 1
    return found[0]


def _title(view: dict) -> str:
    return view["title"] if isinstance(view["title"], str) else view["title"]["text"]


def test_the_bars_plot_app_headroom_when_ranked_by_it_and_the_tooltips_carry_it():
    """Ranked by app_headroom_s, the bars' values are each kernel's app_headroom_s (seconds × the axis unit), and
    the headroom tooltip ends with that and the app time."""
    result = ncu_roofline.analyze(PROFILE, nsys=TIMELINE)
    spec = result.chart().to_dict()
    assert _title(_bars(spec)).startswith("App headroom (over the whole run)")
    rows = spec["datasets"]["kernels"]
    by_rank = {int(r["rank"]): r for r in rows}
    for k in result.kernels.itertuples(index=False):
        assert by_rank[k.rank]["headroom_s"] == pytest.approx(k.app_headroom_s, rel=1e-12)
        assert by_rank[k.rank]["headroom"].endswith(f"of {'400 ms' if k.app_time_s > 0.1 else '50.0 ms'}")
        assert " · over the run " in by_rank[k.rank]["headroom"]


def test_sort_time_drops_the_app_ranking_sentence_and_the_bars_show_the_profiles_headroom(tmp_path):
    run = _cli("analyze", str(PROFILE), "--nsys", str(TIMELINE), "--sort", "time", "-o", str(tmp_path / "o"))
    assert run.returncode == 0, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("The profile covers 75.0%") and "ranked by app_headroom_s" not in run.stdout
    spec = json.loads((tmp_path / "o" / "roofline.vl.json").read_text())
    assert _title(_bars(spec)).startswith("Headroom (recoverable time)")
    assert "ranked by app_headroom_s" not in json.dumps(spec["title"])


def test_compare_says_the_runs_app_time_change_and_gates_on_app_time(tmp_path):
    """Base timeline 30 + 1 + 2 + 11 = 44 ms, head 28 + 0.9 + 2 = 30.9 ms: the run −29.8 %; reduce_sum's app time
    1 ms → 0.9 ms (−10 %) fails `app_time_s<-5%`; `app_time_s>5%` fails nothing."""
    base_tl, head_tl = compare_timelines(tmp_path)
    args = ("compare", str(FIXTURES / "compare" / "base.csv"), str(FIXTURES / "compare" / "head.csv"),
            "--nsys", str(base_tl), "--nsys", str(head_tl))
    passing = _cli(*args, "--fail-on", "app_time_s>5%")
    assert passing.returncode == 0, passing.stderr
    change = 100 * (30.9 - 44) / 44
    assert f"GPU time 44.0 ms → 30.9 ms ({change:+.1f}%)" in passing.stdout
    assert "reduce_sum(…): app time 1.00 ms → 900 µs (-10.0%)" in passing.stdout.replace("−", "-")
    markdown = _cli(*args, "--summary-md", str(tmp_path / "c.md"))
    assert markdown.returncode == 0, markdown.stderr
    text = (tmp_path / "c.md").read_text().replace("−", "-")
    assert f"GPU time 44.0 ms → 30.9 ms ({change:+.1f}%); app time by kernel:" in text
    assert "gemm_tile(…): app time" not in text and "- reduce_sum(…): app time 1.00 ms → 900 µs (-10.0%)" in text
    failing = _cli(*args, "--fail-on", "app_time_s<-5%", "--json", str(tmp_path / "c.json"))
    assert failing.returncode != 0 and "Traceback" not in failing.stderr
    summary = json.loads((tmp_path / "c.json").read_text())
    failed = {r["kernel_name"] for r in summary["kernels"] if r.get("gates_failed")}
    assert failed == {"reduce_sum(const float *, float *, int)"}


def test_under_sort_time_the_notes_cite_the_ranks_of_the_table_shown(tmp_path):
    """A timeline without dgemm_naive: its note names it. By app headroom dgemm is #2 (it has none, saxpy has);
    by profiled time #1 (4 ms against saxpy's 15 µs), by fraction #1 (0.14 against 0.93), alone under --kernel #1:
    the note cites the rank of the table shown each time."""
    timeline = tmp_path / "no_dgemm.csv"
    timeline.write_text(timeline_csv([("saxpy(int, float, const float *, float *)", 50_000_000, 100)]))
    dgemm = "dgemm_naive(const double *, const double *, double *, int)"
    for options, rank in (({}, 2), ({"sort": "time"}, 1), ({"sort": "fraction"}, 1), ({"kernel": "dgemm"}, 1)):
        result = ncu_roofline.analyze(PROFILE, nsys=timeline, **options)
        assert int(result.kernels.set_index("kernel_name").loc[dgemm, "rank"]) == rank
        note = next(n for n in result.notes if "not in the timeline" in n)
        assert f"#{rank} dgemm_naive" in note, (options, note)
