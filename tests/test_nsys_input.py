"""Bad Nsight Systems timelines (readers/nsys.py, readers/nsys_sqlite.py): refused in one line, or flagged per row
with a count in one note; never a traceback, never a number made up. Each expected count and time is worked out
here from the rows the test writes."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ncu_roofline.core.errors import InputError
from ncu_roofline.readers import nsys_sqlite
from ncu_roofline.readers.nsys import read_timeline

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "fixtures" / "raw_base_units.csv"
NSYS_SAMPLES = ROOT.parent / "shared" / "nsys-samples"
K = "void k<4>(float *)"


def _db(path: Path, launches: list[tuple], strings: list[tuple] | None = None, *, pk: bool = True) -> Path:
    """A kernel table without nsys's NOT NULL constraints, so that any value can be written: launches are
    (start, end, demangled id, short id, gridX, device)."""
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE StringIds (id INTEGER {'PRIMARY KEY' if pk else ''}, value TEXT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, demangledName, shortName, "
               "gridX, gridY, gridZ, blockX, blockY, blockZ)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", strings if strings is not None else [(1, K), (2, "k")])
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?, ?, ?, 1, 1, 32, 1, 1)",
                   [(s, e, dev, d, b, g) for s, e, d, b, g, dev in launches])
    db.commit()
    db.close()
    return path


def _good(n: int = 3) -> list[tuple]:
    return [(1000 * i, 1000 * i + 500, 1, 2, 2, 0) for i in range(n)]  # n launches of 500 ns, grid (2, 1, 1)


def test_launches_with_impossible_durations_are_left_out_and_counted(tmp_path):
    """3 good launches of 500 ns; text start, NULL end, a real-valued end (not ns integers: 3); end before start,
    end = start (2); two days long (1): 6 of 9 left out, in one note; the kernel's time is 3 x 500 ns."""
    bad = [("abc", 10, 1, 2, 2, 0), (5, None, 1, 2, 2, 0), (5, 7.5, 1, 2, 2, 0), (100, 50, 1, 2, 2, 0),
           (100, 100, 1, 2, 2, 0), (0, 2 * 86_400 * 10**9, 1, 2, 2, 0)]
    timeline = read_timeline(_db(tmp_path / "t.sqlite", _good() + bad))
    assert timeline.kernels["instances"].tolist() == [3]
    assert timeline.kernels["time_s"].tolist() == pytest.approx([1500e-9], rel=1e-12)
    assert len(timeline.notes) == 1
    note = timeline.notes[0]
    assert note.startswith("6 of 9 kernel launches") and "3 with a start or end that is not an integer" in note
    assert "2 ending before they start or at once" in note and "1 over 24 h long" in note


def test_a_timeline_of_only_bad_launches_is_refused(tmp_path):
    with pytest.raises(InputError, match="no launch of CUPTI_ACTIVITY_KIND_KERNEL has a usable duration"):
        read_timeline(_db(tmp_path / "t.sqlite", [(100, 50, 1, 2, 2, 0)]))


def test_a_null_shape_is_an_unknown_shape_not_another_one(tmp_path):
    """Two launches of grid (2, 1, 1) and one whose gridX is NULL: the first keep their shape, the third has none
    (pandas would have made every gridX a float, `(2.0, 1, 1)`)."""
    launches = _good(2) + [(9000, 9500, 1, 2, None, 0)]
    kernels = read_timeline(_db(tmp_path / "t.sqlite", launches)).kernels
    shapes = dict(zip(kernels["grid"].astype(object).where(kernels["grid"].notna(), None), kernels["instances"]))
    assert shapes == {"(2, 1, 1)": 2, None: 1}


def test_name_ids_missing_from_stringids_or_not_integers_are_named_and_keep_their_time(tmp_path):
    """One launch names id 99 (not in StringIds), one the text 'x7': both stay in the run's time (500 ns each) under
    a placeholder; the note names both."""
    launches = _good(1) + [(5000, 5500, 99, 99, 2, 0), (7000, 7500, "x7", "x7", 2, 0)]
    timeline = read_timeline(_db(tmp_path / "t.sqlite", launches))
    assert timeline.kernels["time_s"].sum() == pytest.approx(1500e-9, rel=1e-12)
    assert (timeline.kernels["name"] == K).sum() == 1
    assert timeline.kernels["name"].str.startswith("(kernel of unknown name").sum() == 2
    note = next(n for n in timeline.notes if "not found" in n)
    assert "demangledName 99 not in StringIds" in note and "demangledName 'x7' not an integer id" in note


def test_a_stringids_id_given_twice_is_refused_by_name(tmp_path):
    path = _db(tmp_path / "t.sqlite", _good(1), [(1, K), (1, "void other(int)"), (2, "k")], pk=False)
    with pytest.raises(InputError, match=r"StringIds gives id 1 twice"):
        read_timeline(path)


@pytest.mark.parametrize("name", ["a?mode=rwc.sqlite", "b#frag.sqlite", "c%41.sqlite", "d\nline.sqlite"])
def test_a_sqlite_timeline_is_opened_by_its_path_whatever_the_name_holds(tmp_path, name):
    """The URI is built from the percent-encoded path: the file itself is read, and nothing is created beside it."""
    source = _db(tmp_path / "src.sqlite", _good())
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / name
    shutil.copy(source, path)
    assert read_timeline(path).kernels["instances"].tolist() == [3]
    assert sorted(os.listdir(folder)) == [name]


def test_a_view_is_refused_before_it_is_queried(tmp_path):
    """A view could recurse forever; nsys writes tables."""
    path = tmp_path / "v.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(start) AS (SELECT 1 UNION ALL "
               "SELECT start + 1 FROM r) SELECT start, start + 1 AS end, 1 AS demangledName FROM r")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="CUPTI_ACTIVITY_KIND_KERNEL is a view"):
        read_timeline(path)


def test_a_query_over_its_time_is_ended(tmp_path, monkeypatch):
    """With no time at all allowed, the progress handler ends the GROUP BY of 5,000 launches (over 10,000 SQLite
    steps) at its first call."""
    path = _db(tmp_path / "t.sqlite", _good(5000))
    monkeypatch.setattr(nsys_sqlite, "QUERY_SECONDS", -1.0)
    with pytest.raises(InputError, match="took over"):
        read_timeline(path)


def test_names_longer_than_the_cap_are_cut_and_values_beyond_sqlites_limit_refused(tmp_path, monkeypatch):
    long = "void k<" + "a" * 70_000 + ">(int)"
    timeline = read_timeline(_db(tmp_path / "long.sqlite", _good(1), [(1, long), (2, "k")]))
    name = timeline.kernels["name"].iloc[0]
    assert len(name) == nsys_sqlite.MAX_NAME_CHARS + 1 and name.endswith("…") and long.startswith(name[:-1])
    assert any("cut there" in n for n in timeline.notes)
    monkeypatch.setattr(nsys_sqlite, "MAX_VALUE_BYTES", 50_000)
    with pytest.raises(InputError, match="larger than"):
        read_timeline(tmp_path / "long.sqlite")


def test_a_fifo_is_refused_before_it_is_read(tmp_path):
    fifo = tmp_path / "timeline.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"is a pipe \(FIFO\)"):
        read_timeline(fifo)  # open() would block for a writer that never comes


@pytest.mark.parametrize("name", ["run.nsys-rep", "old.qdrep"])
def test_an_nsys_report_is_answered_with_the_export_command(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\x00" * 64)
    with pytest.raises(InputError) as error:
        read_timeline(path)
    stem = path.with_suffix("")
    assert f"nsys export --type sqlite --output {stem}.sqlite {path}" in str(error.value)
    assert f"nsys stats --report cuda_gpu_kern_sum --format csv --output {stem} {path}" in str(error.value)


def test_the_real_qdrep_is_recognised_by_its_bytes_under_another_name(tmp_path):
    real = NSYS_SAMPLES / "kmeans" / "report2.qdrep"
    if not real.is_file():
        pytest.skip("../shared/nsys-samples is not present")
    path = tmp_path / "renamed.csv"
    shutil.copy(real, path)
    with pytest.raises(InputError, match="an Nsight Systems report, not its export"):
        read_timeline(path)


HEADER = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"


def test_csv_rows_that_cannot_be_weighted_are_flagged_each_with_a_count_in_one_note(tmp_path):
    """One good row (2,000 ns, 4 launches); seven bad: negative, zero, text, inf and NaN Total Time; 1e20 and
    2.5 Instances."""
    bad = ["1,-2000,4", "1,0,4", "1,lots,4", "1,inf,4", "1,nan,4", "1,2000,1e20", "1,2000,2.5"]
    text = HEADER + "50,2000,4,500,500,500,500,0,good(int)\n" + "".join(
        f"{row},1,1,1,1,0,bad{i}(int)\n" for i, row in enumerate(bad))
    path = tmp_path / "t.csv"
    path.write_text(text)
    timeline = read_timeline(path)
    assert timeline.kernels["name"].tolist() == ["good(int)"] and timeline.kernels["instances"].tolist() == [4]
    assert len(timeline.notes) == 1
    note = timeline.notes[0]
    assert note.startswith("7 row(s) of the timeline left out")
    assert "2 with a Total Time not positive and finite" not in note  # -2000, 0, inf: three
    assert "3 with a Total Time not positive and finite" in note and "2 with a Total Time that is not a number" in note
    assert "2 with an Instances that is no launch count" in note and "line 3: Total Time '-2000'" in note


def test_a_timeline_of_only_bad_rows_is_exit_2_in_one_line(tmp_path):
    path = tmp_path / "neg.csv"
    path.write_text(HEADER + "100,-2460000000,3,1,1,1,1,0,k(int)\n")
    run = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(PROFILE), "--nsys", str(path)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2 and "Total Time '-2460000000'" in run.stderr and str(path) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


ALIGNED = """\
Processing [report.sqlite] with [/opt/nvidia/nsight-systems/2024.5.1/host-linux-x64/reports/cuda_gpu_kern_sum.py]...

 ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

 Time (%)  Total Time (ns)  Instances  Avg (ns)   Med (ns)   Min (ns)  Max (ns)  StdDev (ns)                            Name
 --------  ---------------  ---------  ---------  ---------  --------  --------  -----------  ----------------------------------------------------------
     88.9      400,000,000        100  4,000,000  4,000,000  4,000,000  4,000,000          0.0  dgemm_naive(const double *, const double *, double *, int)
     11.1       50,000,000        100    500,000    500,000   500,000   500,000          0.0  saxpy(int, float, const float *, float *)

"""


def test_the_column_aligned_table_nsys_stats_prints_to_a_terminal_is_read(tmp_path):
    """Thousands separators and names with spaces, under the dashes of their column: 400 ms / 100 and 50 ms / 100."""
    path = tmp_path / "stats.txt"
    path.write_text(ALIGNED)
    kernels = read_timeline(path).kernels
    assert kernels["name"].tolist() == ["dgemm_naive(const double *, const double *, double *, int)",
                                        "saxpy(int, float, const float *, float *)"]
    assert kernels["time_s"].tolist() == pytest.approx([0.4, 0.05], rel=1e-12)
    assert kernels["instances"].tolist() == [100, 100]


def test_the_benchmarks_timeline_reads_as_its_bare_group_by(tmp_path):
    """benchmarks/timeline.py's table (2,000 launches here): read_timeline finds the groups and the total time the
    bare sqlite3 GROUP BY of the same keys does."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchmarks_timeline", ROOT / "benchmarks" / "timeline.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = bench.make(tmp_path / "t.sqlite", 2_000)
    with sqlite3.connect(path) as db:
        rows = db.execute(bench.BARE).fetchall()
    kernels = read_timeline(path).kernels
    assert len(kernels) == len(rows) and kernels["instances"].sum() == 2_000
    assert kernels["time_s"].sum() == pytest.approx(sum(r[-1] for r in rows) * 1e-9, rel=1e-12)


SIGTERM_SCRIPT = """
import os, signal, sqlite3, sys, threading
from pathlib import Path
from ncu_roofline.readers.nsys_sqlite import _bounded

class Stop(Exception):
    pass

def stop(signum, frame):
    raise Stop()

signal.signal(signal.SIGTERM, stop)
connection = sqlite3.connect(":memory:")
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
try:
    with _bounded(connection, Path("t.sqlite")):
        connection.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                           "SELECT count(*) FROM r").fetchall()
except Stop:
    print("stopped by the handler the program installed")
    sys.exit(0)
sys.exit(3)
"""


@pytest.mark.slow
def test_sigterm_ends_a_query_that_would_never_end_and_reaches_the_programs_handler():
    """SQLite runs a query in C, where Python's signal handlers cannot run: the progress handler ends it, and the
    signal is raised again to the handler the program had installed (the CLI's: exit 143)."""
    run = subprocess.run([sys.executable, "-c", SIGTERM_SCRIPT], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0 and "stopped by the handler" in run.stdout, run.stderr


@pytest.mark.parametrize(("name", "normal"), [
    ("a" * 65_536, "a" * 65_536),  # one identifier never followed by `::`: a backtracking `\w*::` is quadratic
    ("a::" * 21_845 + "k(int)", "k(int)"),
    ("a:" * 32_768, "a:" * 32_768),
    ("(int " * 13_107 + ")1", "(int" * 13_106 + "1"),  # only the innermost bracket is a cast
    ("<" * 65_536, "<" * 65_536),
    ("void k<" + "(bool)1, " * 7_000 + "0>(const float *)", "k<" + "1," * 7_000 + "0>(float*)"),
])
def test_the_normal_form_of_a_64_kb_name_is_computed_in_one_pass(name, normal):
    """Names shaped to make a backtracking regular expression take forever (the issue's 64 kB name hung the
    join): each comes back, folded as the rules say."""
    from ncu_roofline.pipeline.timeline_names import normal_base, normal_form

    assert normal_form(name) == normal
    assert isinstance(normal_base(name), str)
