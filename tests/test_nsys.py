"""`analyze --nsys`: Nsight Systems' timeline of the run weights the profiled kernels (readers/nsys.py,
pipeline/app_weight.py).

The profile is `fixtures/raw_base_units.csv`: one launch each of `dgemm_naive` and `saxpy`. The timelines
(fixtures/nsys/, and SQLite databases built here with sqlite3) hold three kernels:

    dgemm_naive  100 launches  400 ms   (profiled)
    saxpy        100 launches   50 ms   (profiled)
    reduce_rows   50 launches  150 ms   (never profiled)
    run's GPU kernel time: 400 + 50 + 150 = 600 ms; profiled share = (400 + 50) / 600 = 0.75

app_headroom_s = (1 - roofline_fraction) x app_time_s, with the fraction of the profiled launch.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import ncu_roofline
from ncu_roofline.core.errors import InputError
from ncu_roofline.pipeline.app_weight import weight_by_timeline
from ncu_roofline.readers.nsys import read_timeline, timeline_csv

from conftest import cli_in_process

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROFILE = FIXTURES / "raw_base_units.csv"
KERNEL_SCHEMA = FIXTURES / "nsys" / "kernel_schema.sql"  # the tables nsys declares, one copy for tests and benchmarks
DGEMM = "dgemm_naive(const double *, const double *, double *, int)"
SAXPY = "saxpy(int, float, const float *, float *)"
REDUCE = "void reduce_rows<float, 256>(const float *, float *, int)"


@pytest.fixture(scope="module")
def fractions() -> dict[str, float]:
    """The profiled launches' roofline fractions, from the profile alone."""
    kernels = ncu_roofline.analyze(PROFILE).kernels
    return dict(zip(kernels["kernel_name"], kernels["roofline_fraction"]))


def _by_name(analysis) -> pd.DataFrame:
    return analysis.kernels.set_index("kernel_name")


@pytest.mark.parametrize("timeline", ["kern_sum_2024.csv", "kern_sum_2021_base.csv"])
def test_csv_timeline_weights_each_group_and_says_the_profiled_share(timeline, fractions):
    result = ncu_roofline.analyze(PROFILE, nsys=FIXTURES / "nsys" / timeline)
    k = _by_name(result)
    assert k.loc[DGEMM, "app_launches"] == 100 and k.loc[SAXPY, "app_launches"] == 100
    assert k.loc[DGEMM, "app_time_s"] == pytest.approx(0.400, rel=1e-12)
    assert k.loc[SAXPY, "app_time_s"] == pytest.approx(0.050, rel=1e-12)
    # (1 - f) x app time: dgemm 0.4 x (1 - f_dgemm), saxpy 0.05 x (1 - f_saxpy)
    assert k.loc[DGEMM, "app_headroom_s"] == pytest.approx((1 - fractions[DGEMM]) * 0.400, rel=1e-12)
    assert k.loc[SAXPY, "app_headroom_s"] == pytest.approx((1 - fractions[SAXPY]) * 0.050, rel=1e-12)
    assert set(k["app_match"]) == {"exact" if timeline.startswith("kern_sum_2024") else "base"}
    assert result.app.app_gpu_time_s == pytest.approx(0.600, rel=1e-12)
    assert result.app.profiled_share == pytest.approx(0.75, rel=1e-12)  # (0.4 + 0.05) / 0.6
    unprofiled = result.app.unprofiled
    assert len(unprofiled) == 1 and unprofiled["app_launches"].tolist() == [50]
    assert unprofiled["app_time_s"].iloc[0] == pytest.approx(0.150)
    assert unprofiled["app_time_share"].iloc[0] == pytest.approx(0.25)  # 0.15 / 0.6
    assert unprofiled["name"].iloc[0] == (REDUCE if timeline.startswith("kern_sum_2024") else "reduce_rows")


def test_ranking_follows_app_headroom_not_the_profiled_headroom(tmp_path):
    """In the profile saxpy (15 µs) barely counts; over the run it is 50 ms. A timeline where saxpy ran 10^4 times
    longer than dgemm puts it first: 1 - f_saxpy ≈ 0.068, x 10 s = 0.68 s > (1 - 0.137) x 0.001 s."""
    text = timeline_csv([(SAXPY, 10_000_000_000, 1000), (DGEMM, 1_000_000, 1)])
    path = tmp_path / "rank.csv"
    path.write_text(text)
    result = ncu_roofline.analyze(PROFILE, nsys=path)
    assert result.kernels["kernel_name"].tolist() == [SAXPY, DGEMM]
    assert result.kernels["rank"].tolist() == [1, 2]
    without = ncu_roofline.analyze(PROFILE)
    assert without.kernels["kernel_name"].tolist() == [DGEMM, SAXPY]


def test_launch_shapes_pick_the_profiled_shape_of_a_gb_sum_csv(fractions):
    """kern_gb_sum.csv holds dgemm_naive twice: grid (64, 64, 1) 400 ms (the profiled shape) and (32, 32, 1)
    100 ms. Only the first is the profiled group's; the other is unprofiled: profiled share = 450 / 700."""
    result = ncu_roofline.analyze(PROFILE, nsys=FIXTURES / "nsys" / "kern_gb_sum.csv")
    k = _by_name(result)
    assert k.loc[DGEMM, "app_time_s"] == pytest.approx(0.400)
    assert result.app.profiled_share == pytest.approx(450 / 700)
    un = result.app.unprofiled
    assert un["name"].tolist() == [REDUCE, DGEMM] and un["grid"].tolist() == ["(32, 1, 1)", "(32, 32, 1)"]
    assert un["app_time_share"].tolist() == pytest.approx([150 / 700, 100 / 700])


def _sqlite(path: Path, launches: list[tuple[str, str, str | None, int, int, tuple, tuple]]) -> Path:
    """A minimal `nsys export --type sqlite`: StringIds and CUPTI_ACTIVITY_KIND_KERNEL as nsys declares them.
    Rows: (demangled, short, mangled, duration ns, device, grid, block), one launch each."""
    db = sqlite3.connect(path)
    db.executescript(KERNEL_SCHEMA.read_text(encoding="utf-8"))
    ids: dict[str, int] = {}

    def sid(text):
        if text is None:
            return None
        if text not in ids:
            ids[text] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    clock = 1_000
    for n, (demangled, short, mangled, ns, device, grid, block) in enumerate(launches):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,7,?,1,?,?,?,32,?,?,?,?,?,?)",
                   (clock, clock + ns, device, n, sid(demangled), sid(short), sid(mangled), *grid, *block))
        clock += ns + 100
    db.commit()
    db.close()
    return path


def _three_kernels(device: int = 0) -> list:
    """100 x 4 ms dgemm, 100 x 0.5 ms saxpy, 50 x 3 ms reduce_rows (= 400, 50, 150 ms) on one device."""
    return ([(DGEMM, "dgemm_naive", "_Z11dgemm_naivePKdS0_Pdi", 4_000_000, device, (64, 64, 1), (16, 16, 1))] * 100
            + [(SAXPY, "saxpy", "_Z5saxpyifPKfPf", 500_000, device, (4096, 1, 1), (256, 1, 1))] * 100
            + [(REDUCE, "reduce_rows", "_Z11reduce_rowsIfLi256EEvPKfPfi", 3_000_000, device, (32, 1, 1),
                (256, 1, 1))] * 50)


def test_sqlite_timeline_gives_the_same_numbers_as_its_csv(tmp_path, fractions):
    result = ncu_roofline.analyze(PROFILE, nsys=_sqlite(tmp_path / "run.sqlite", _three_kernels()))
    k = _by_name(result)
    assert k.loc[DGEMM, "app_launches"] == 100
    assert k.loc[DGEMM, "app_time_s"] == pytest.approx(0.400, rel=1e-12)  # 100 x 4 ms
    assert k.loc[SAXPY, "app_time_s"] == pytest.approx(0.050, rel=1e-12)  # 100 x 0.5 ms
    assert k.loc[SAXPY, "app_headroom_s"] == pytest.approx((1 - fractions[SAXPY]) * 0.050, rel=1e-12)
    assert result.app.profiled_share == pytest.approx(0.75, rel=1e-12)
    assert result.app.unprofiled["name"].tolist() == [REDUCE]


def test_sqlite_devices_are_summed_with_a_note_or_picked(tmp_path):
    """Device 0 runs the three kernels; device 1 runs dgemm 100 x 4 ms more. All devices: dgemm 800 ms of a
    1000 ms run, profiled share (800 + 50) / 1000 = 0.85; device 1 alone: dgemm is all of it."""
    launches = _three_kernels(0) + [row[:4] + (1,) + row[5:] for row in _three_kernels(1)[:100]]
    path = _sqlite(tmp_path / "two.sqlite", launches)
    both = ncu_roofline.analyze(PROFILE, nsys=path)
    assert _by_name(both).loc[DGEMM, "app_time_s"] == pytest.approx(0.800)
    assert both.app.profiled_share == pytest.approx(0.85)
    assert any("2 GPUs" in note for note in both.notes)
    one = ncu_roofline.analyze(PROFILE, nsys=path, nsys_device=1)
    assert one.app.profiled_share == pytest.approx(1.0) and one.app.unprofiled.empty
    assert pd.isna(_by_name(one).loc[SAXPY, "app_time_s"]) and _by_name(one).loc[SAXPY, "app_match"] == "absent"
    assert any("not in the timeline" in note and "saxpy" in note for note in one.notes)
    with pytest.raises(InputError, match="no kernel on device 5"):
        read_timeline(path, device=5)


# -------------------------------------------------------------------------------------- the join, name forms


def _groups(*rows) -> pd.DataFrame:
    """Kernel groups as analyze ranks them: (rank, kernel_name, grid, block, launches, roofline_fraction)."""
    return pd.DataFrame(rows, columns=["rank", "kernel_name", "grid", "block", "launches", "roofline_fraction"]
                        ).assign(kernel_demangled=lambda f: f["kernel_name"], time_s=1e-6,
                                 headroom_s=lambda f: (1 - f["roofline_fraction"]) * 1e-6)


def _timeline(*rows) -> pd.DataFrame:
    """Timeline rows: (demangled, base, mangled, grid, block, instances, time_s)."""
    frame = pd.DataFrame(rows, columns=["demangled", "base", "mangled", "grid", "block", "instances", "time_s"])
    frame["name"] = frame["demangled"].fillna(frame["base"]).fillna(frame["mangled"])
    frame["device_id"] = pd.NA
    return frame


def test_name_forms_mangled_base_and_truncated():
    """Group 1 is printed mangled, group 2 by its base name, group 3 as ncu 2025 prints an anonymous namespace
    (`unnamed>::`, the normal form drops it as nsys's `(anonymous namespace)::`), group 4 in the old demangler's
    style `<int=4>`. Each finds its one timeline kernel."""
    groups = _groups((1, "_Z4gemmIfEvPfi", None, None, 1, 0.5),
                     (2, "scale", None, None, 1, 0.25),
                     (3, "unnamed>::saxpy_kernel(float, const float *, float *, int)", None, None, 1, 0.5),
                     (4, "void kernelBLFit<int=4>(float*)", None, None, 1, 0.0))
    timeline = _timeline(("void gemm<float>(float *, int)", "gemm", "_Z4gemmIfEvPfi", None, None, 10, 2.0),
                         ("void scale<double>(double *)", "scale", None, None, None, 20, 4.0),
                         ("(anonymous namespace)::saxpy_kernel(float, const float *, float *, int)", "saxpy_kernel",
                          None, None, None, 30, 1.0),
                         ("void kernelBLFit<4>(float *)", "kernelBLFit", None, None, None, 5, 1.0))
    app = weight_by_timeline(groups, timeline)
    k = app.kernels.set_index("kernel_name").loc[groups["kernel_name"]]
    assert k["app_match"].tolist() == ["mangled", "base", "normalised", "normalised"]
    assert k["app_launches"].tolist() == [10, 20, 30, 5]
    # (1 - f) x t: 0.5 x 2 = 1.0; 0.75 x 4 = 3.0; 0.5 x 1 = 0.5; 1.0 x 1 = 1.0
    assert k["app_headroom_s"].tolist() == pytest.approx([1.0, 3.0, 0.5, 1.0])
    assert app.profiled_share == pytest.approx(1.0) and app.notes == []


def test_demangler_spellings_of_one_name_match():
    """ncu prints `(int)4`, `(bool)1`, `const double *`, `<unnamed>`; nsys's demangler `4`, `true`, `double const*`,
    `(anonymous namespace)`: one kernel."""
    groups = _groups((1, "void at::native::<unnamed>::k<(int)4, (bool)1>(const double *, float *)", None, None, 1,
                      0.5))
    timeline = _timeline(("void at::native::(anonymous namespace)::k<4, true>(double const*, float*)", "k", None,
                          None, None, 7, 2.0),
                         ("void at::native::(anonymous namespace)::k<4, false>(double const*, float*)", "k", None,
                          None, None, 1, 1.0))
    app = weight_by_timeline(groups, timeline)
    assert app.kernels["app_match"].tolist() == ["normalised"] and app.kernels["app_launches"].tolist() == [7]
    assert app.profiled_share == pytest.approx(2 / 3)  # 2 s of 3


def test_a_base_name_of_several_template_instances_is_ambiguous_never_guessed():
    """The base `gemm` names gemm<32> (3 s) and gemm<64> (1 s): no app time, a note naming both. Either may be the
    profiled one: the profiled share is unknown, between 0 / 4 and 4 / 4, and neither is listed as not profiled."""
    groups = _groups((1, "gemm", None, None, 1, 0.5))
    timeline = _timeline(("void gemm<32>(float *)", "gemm", None, None, None, 3, 3.0),
                         ("void gemm<64>(float *)", "gemm", None, None, None, 1, 1.0))
    app = weight_by_timeline(groups, timeline)
    assert app.kernels["app_match"].tolist() == ["ambiguous"]
    assert pd.isna(app.kernels["app_time_s"].iloc[0]) and pd.isna(app.kernels["app_headroom_s"].iloc[0])
    assert "gemm<32>" in app.notes[0] and "gemm<64>" in app.notes[0]
    assert pd.isna(app.profiled_share) and (app.profiled_share_low, app.profiled_share_high) == (0.0, 1.0)
    assert app.unprofiled.empty and "between 0.0% and 100.0%" in app.notes[-1]


def test_launch_shape_resolves_what_the_name_alone_cannot_and_a_shapeless_row_is_shared():
    """Two groups of k (grids (1, 1, 1) and (2, 1, 1)). With shapes in the timeline each takes its own row; a CSV
    without shapes has one row for both: its time cannot be split, so neither gets app time (a note), though
    the row counts as profiled."""
    groups = _groups((1, "k(int)", "(1, 1, 1)", "(32, 1, 1)", 1, 0.5), (2, "k(int)", "(2, 1, 1)", "(32, 1, 1)", 1, 0.5))
    shaped = _timeline(("k(int)", "k", None, "(1, 1, 1)", "(32, 1, 1)", 10, 1.0),
                       ("k(int)", "k", None, "(2, 1, 1)", "(32, 1, 1)", 10, 3.0))
    app = weight_by_timeline(groups, shaped)
    assert app.kernels.sort_values("grid")["app_time_s"].tolist() == [1.0, 3.0]
    shapeless = _timeline(("k(int)", "k", None, None, None, 20, 4.0))
    app = weight_by_timeline(groups, shapeless)
    assert app.kernels["app_match"].tolist() == ["shared", "shared"]
    assert app.kernels["app_time_s"].isna().all()
    assert app.profiled_share == 1.0 and any("#1, #2" in note for note in app.notes)
    other = weight_by_timeline(_groups((1, "k(int)", "(9, 1, 1)", "(32, 1, 1)", 1, 0.5)), shaped)
    assert other.kernels["app_match"].tolist() == ["other_shape"] and "other launch shapes" in other.notes[0]


def test_more_profiled_launches_than_the_timeline_saw_is_said():
    app = weight_by_timeline(_groups((1, "k(int)", None, None, 40, 0.5)), _timeline(("k(int)", "k", None, None, None,
                                                                                     10, 1.0)))
    assert app.kernels["app_launches"].tolist() == [10]
    assert any("more profiled launches than the timeline saw" in note for note in app.notes)


# ---------------------------------------------------------------------------------------- outputs and the CLI


def _cli(*args: str, cwd: Path | None = None):
    return cli_in_process(*args, cwd=cwd, env={"COLUMNS": "160"})


def test_cli_says_the_coverage_first_and_writes_the_app_columns(tmp_path):
    run = _cli("analyze", str(PROFILE), "--nsys", str(FIXTURES / "nsys" / "kern_sum_2024.csv"), "-o",
               str(tmp_path / "out"), "--summary-md", str(tmp_path / "s.md"), "--json", str(tmp_path / "s.json"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("The profile covers 75.0% of the run's GPU time")
    assert "by app_headroom_s" in run.stdout and "reduce_rows" in run.stdout
    kernels = pd.read_parquet(tmp_path / "out" / "kernels.parquet")
    assert {"app_launches", "app_time_s", "app_headroom_s", "app_match"} <= set(kernels.columns)
    markdown = (tmp_path / "s.md").read_text()
    assert "**The profile covers 75.0% of the run's GPU time" in markdown and "app headroom" in markdown
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["timeline"]["profiled_share"] == pytest.approx(0.75)
    spec = json.loads((tmp_path / "out" / "roofline.vl.json").read_text())
    assert spec["title"]["subtitle"][0].startswith("The profile covers 75.0%")


def test_outputs_without_nsys_carry_no_app_column(tmp_path):
    run = _cli("analyze", str(PROFILE), "-o", str(tmp_path / "out"), "--rows", "0")
    assert run.returncode == 0, run.stderr
    kernels = pd.read_parquet(tmp_path / "out" / "kernels.parquet")
    assert not any(c.startswith("app_") for c in kernels.columns)
    assert "ncu_roofline.nsys" not in ncu_roofline.analyze(PROFILE).metadata()


def _bad(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(("name", "content", "says"), [
    ("api.csv", "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                "81.2,131012864,1,131012864.0,131012864.0,131012864,131012864,0.0,cudaMalloc\n", "cuda_api_sum"),
    ("nvtx.csv", "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
                 "95.0,3481709,1,3481709.0,3481709.0,3481709,3481709,0.0,PushPop,Profile_Loop\n", "nvtx_sum"),
    ("empty.csv", "Processing [x.sqlite] with [cuda_gpu_kern_sum.py]... \n\n"
                  "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n",
     "lists no kernel"),
    ("text.csv", "hello\n", "not an nsys timeline"),
    ("word.csv", "Time (%),Total Time (ns),Instances,Name\n12,lots,3,k\n", "is not a number"),
])
def test_bad_csv_timelines_are_one_line_exit_2(tmp_path, name, content, says):
    path = _bad(tmp_path, name, content)
    run = _cli("analyze", str(PROFILE), "--nsys", str(path))
    assert run.returncode == 2 and says in run.stderr and str(path) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_bad_sqlite_timelines_are_one_line_exit_2(tmp_path):
    no_kernels = tmp_path / "nocuda.sqlite"
    db = sqlite3.connect(no_kernels)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.commit()
    db.close()
    empty = _sqlite(tmp_path / "empty.sqlite", [])
    broken = _bad(tmp_path, "broken.sqlite", b"SQLite format 3\x00" + b"\xff" * 200)
    for path, says in ((no_kernels, "no CUPTI_ACTIVITY_KIND_KERNEL table"), (empty, "an empty timeline"),
                       (broken, "SQLite")):
        run = _cli("analyze", str(PROFILE), "--nsys", str(path))
        assert run.returncode == 2 and says in run.stderr and str(path) in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1


def test_the_timeline_csv_reader_reads_units_and_several_reports(tmp_path):
    """`--timeunit usec` writes `Total Time (us)`; a stdout of several reports holds the kernel table after the API
    one."""
    text = ("** CUDA API Summary (cuda_api_sum):\n\n"
            "Time (%),Total Time (us),Num Calls,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name\n"
            "100.0,9000.0,20,450.0,450.0,400,500,1.0,cudaLaunchKernel\n\n"
            "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
            "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name\n"
            "100.0,2500.5,20,125.0,125.0,120,130,1.0,model_kernel\n\n"
            "** CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum):\n")
    path = tmp_path / "several.csv"
    path.write_text(text)
    timeline = read_timeline(path)
    assert timeline.kernels["name"].tolist() == ["model_kernel"]
    assert timeline.kernels["time_s"].tolist() == pytest.approx([2500.5e-6])
    assert timeline.kernels["instances"].tolist() == [20]


@pytest.mark.parametrize("unit,seconds", [("ns", 1e-9), ("nsec", 1e-9), ("us", 1e-6), ("usec", 1e-6),
                                          ("\u00b5s", 1e-6), ("\u03bcs", 1e-6), ("ms", 1e-3), ("msec", 1e-3),
                                          ("s", 1.0), ("sec", 1.0), ("MS", 1e-3)])
def test_the_timeline_time_unit_is_read_with_the_ncu_unit_table(tmp_path, unit, seconds):
    """2500.5 in the `Total Time (<unit>)` column is 2500.5 x the unit's seconds: micro as u, the micro sign or
    the Greek mu; the header's case does not matter (readers/units.unit_factor, the one unit table)."""
    path = tmp_path / "kern_sum.csv"
    path.write_text(f"Time (%),Total Time ({unit}),Instances,Avg ({unit}),Med ({unit}),Min ({unit}),Max ({unit}),"
                    f"StdDev ({unit}),Name\n100.0,2500.5,20,125.0,125.0,120,130,1.0,model_kernel\n",
                    encoding="utf-8")
    assert read_timeline(path).kernels["time_s"].tolist() == pytest.approx([2500.5 * seconds], rel=1e-15)


def compare_timelines(folder: Path) -> tuple[Path, Path]:
    """Timelines of fixtures/compare's base and head runs (nsys kernel summaries, ns): the base one has 11 ms of a
    kernel never profiled; reduce_sum 1 ms -> 0.9 ms, gemm_tile 30 -> 28 ms, copy_kernel 2 ms in both."""
    base_tl, head_tl = folder / "b.csv", folder / "h.csv"
    base_tl.write_text(timeline_csv([("gemm_tile(float *, const float *, int)", 30_000_000, 300),
                                     ("reduce_sum(const float *, float *, int)", 1_000_000, 100),
                                     ("copy_kernel(float *, const float *)", 2_000_000, 200),
                                     ("other_kernel(int)", 11_000_000, 10)]))
    head_tl.write_text(timeline_csv([("gemm_tile(float *, const float *, int)", 28_000_000, 300),
                                     ("reduce_sum(const float *, float *, int)", 900_000, 100),
                                     ("copy_kernel(float *, const float *)", 2_000_000, 200)]))
    return base_tl, head_tl


def test_compare_weights_both_runs_by_their_own_timelines(tmp_path):
    """fixtures/compare: base and head profiles; each its own timeline. reduce_sum ran 1 ms (base) and 0.9 ms
    (head) over the run, copy_kernel 2 ms in both; the base timeline has 11 ms of a kernel never profiled:
    base profiled share = (30 + 1 + 2) / 44 = 0.75, head = 1.0. gemm_tile has two launch shapes in each profile and
    one shapeless row in each CSV: shared, no app time."""
    base_tl, head_tl = compare_timelines(tmp_path)
    run = _cli("compare", str(FIXTURES / "compare" / "base.csv"), str(FIXTURES / "compare" / "head.csv"),
               "--nsys", str(base_tl), "--nsys", str(head_tl), "--json", str(tmp_path / "c.json"))
    assert run.returncode == 0, run.stderr
    assert "base: The profile covers 75.0%" in run.stdout and "head: The profile covers 100.0%" in run.stdout
    summary = json.loads((tmp_path / "c.json").read_text())
    assert summary["totals"]["profiled_share"]["base"] == pytest.approx(0.75)
    assert summary["totals"]["app_gpu_time_s"]["head"] == pytest.approx(0.0309)  # 28 + 0.9 + 2 ms
    rows = {r["kernel_name"]: r for r in summary["kernels"]}
    assert rows["reduce_sum(const float *, float *, int)"]["app_time_s_change"] == pytest.approx(-0.0001)
    once = _cli("compare", str(FIXTURES / "compare" / "base.csv"), str(FIXTURES / "compare" / "head.csv"),
                "--nsys", str(base_tl))
    assert once.returncode == 2 and "--nsys is given twice" in once.stderr


def test_history_keeps_the_app_columns_of_a_weighted_run(tmp_path):
    run = _cli("analyze", str(PROFILE), "--nsys", str(FIXTURES / "nsys" / "kern_sum_2024.csv"), "--history",
               str(tmp_path / "h"), "--run-id", "r1", "--rows", "0")
    assert run.returncode == 0, run.stderr
    import pyarrow.dataset as ds

    table = ds.dataset(tmp_path / "h", format="parquet", partitioning="hive").to_table().to_pandas()
    assert sorted(table["app_time_s"].dropna().tolist()) == pytest.approx([0.05, 0.4])


def test_batch_finds_each_reports_timeline_by_name(tmp_path):
    """run1.csv's timeline is run1.sqlite (dgemm 400 ms of 600), run2.csv's run2_cuda_gpu_kern_sum.csv; run3.csv has
    none: that report fails with a line saying where its timeline was looked for, the others are appended."""
    reports, timelines = tmp_path / "reports", tmp_path / "timelines"
    reports.mkdir()
    timelines.mkdir()
    for name in ("run1.csv", "run2.csv", "run3.csv"):
        (reports / name).write_bytes(PROFILE.read_bytes())
    _sqlite(timelines / "run1.sqlite", _three_kernels())
    (timelines / "run2_cuda_gpu_kern_sum.csv").write_text(timeline_csv([(DGEMM, 100_000_000, 10)]))
    run = _cli("batch", str(reports), "--history", str(tmp_path / "h"), "--nsys", str(timelines), "--jobs", "1")
    assert run.returncode != 0 and "run3.csv" in run.stderr and "run3_cuda_gpu_kern_sum.csv" in run.stderr
    import pyarrow.dataset as ds

    table = ds.dataset(tmp_path / "h", format="parquet", partitioning="hive").to_table().to_pandas()
    dgemm = table[(table["kernel_name"] == DGEMM) & table["app_time_s"].notna()]
    assert dict(zip(dgemm["run_id"].astype(str), dgemm["app_time_s"])) == pytest.approx({"run1": 0.4, "run2": 0.1})
