"""`benchmarks/run.py --quick`: every target of issue #16 measured in one run, as ratios against a baseline
measured in the same run (interleaved, whole processes, best of N), each printed as met or not met.

Targets (baseline in brackets):
- small: `ncu-roofline analyze fixtures/example_h100_raw.csv -o OUT` <= 2.0x
  [`python -c "import pandas as pd; pd.read_csv(F, skiprows=3).to_parquet(P)"`]
- start-up: `ncu-roofline --help` and `ncu-roofline ceilings` <= 0.5x [`python -c "import pandas"`]
- details page, 10^5 launches: `analyze FILE -o OUT --rows 0` <= 1.0x [`pyarrow.csv.read_csv(FILE)`]
- raw page, 10^5 launches: the same <= 0.5x [the same]
- peak memory of those two analyses <= 0.6x the file
- .ncu-rep: reading every metric of the cs599k sample report (2.7 MB; `read_ncu_rep`) <= 8.0x [walking every
  metric value of the same report with NVIDIA's `ncu_report` wheel]; skipped, and said so, when the sample or the
  wheel is absent. (Was `assert elapsed < 3.0` in tests/test_ncu_rep.py;
  the walk takes about 0.4 s, so 8x keeps that bound while not depending on the machine.)
- linear: details at 2.5x10^4 and 10^5 launches; time may grow at most 1.1x as fast as the launches (fixed start-up
  costs make it grow slower; anything worse than linear in the launches shows as more). `--full` checks 10^6.

Issue #28 (medians of interleaved runs; the verdict on CPU time, user + system, except for batch, whose point is
wall time on several cores):
- report: `analyze MW_Baseline.ncu-rep -o OUT` <= 1.3x [one process importing pandas and pyarrow, then
  `ncu_report.load_report` and every metric value read: the floor of issue #38]
- chart: `analyze FILE -o OUT --top 200` <= 1.5x [the same with `--top 5`] (a details page of 200 kernels)
- images: `analyze FILE -o OUT --top 40 --format svg,png` <= 2.0x [the same without `--format`]
- batch: `batch` of 100 copies of a small report `--jobs 2` <= 0.65x [`--jobs 1`], wall time: met only on an
  idle machine with 2 free cores; on a loaded one it shows whether --jobs 2 is at least not slower.

Issue #38 (real-shaped pages, benchmarks/real_pages.py; medians of interleaved runs, CPU time and peak RSS):
- real: the narrow raw page (one row per launch, pivoted from a real details export) at 10^5 and 10^6 launches,
  the 15-metric details page at 10^5 (10^6, 3 GB, with `--full`): `analyze FILE -o OUT --rows 0` <= 1.5x in CPU and <= 1.5x in
  peak memory [`pandas.read_csv(FILE, engine="pyarrow").to_parquet(P)` of the same file]; CPU per launch from 10^4
  to the largest size grows at most 1.1x as fast as linear. The 475-column B200 raw page (no FLOP counters:
  analysed with --allow-empty) at 10^4 (10^5 with --full) is printed beside the same baseline, without a target.

Issue #38 item 4 (CPU time inside one process, medians of interleaved runs):
- limiter: on a details page without the limiter's counters (2.5x10^4 launches, benchmarks/generate.py), the CPU
  time spent in the limiter (launch_limiters, group_limiters, the limiter notes) <= 0.05x the rest of `analyze`.

Issue #34:
- timeline: reading an nsys SQLite timeline of 10^6 launches (`read_timeline`) <= 1.5x [a bare sqlite3 GROUP BY of
  the same table by the same keys], in one process, interleaved, best of 3 (benchmarks/timeline.py).

Issue #38 item 5 (medians of interleaved runs, verdict on CPU time), over a history of 300 runs of a 2,000-launch
details page (200 kernels, built once in the work folder by the interpreter under test):
- history: `history H --rows 10` <= 1.5x [a bare DuckDB query over the same Parquet files, the glob with Hive
  partitions, reading the columns `history` reads into pandas]
- history-sql: `history H --sql Q` <= 2.0x [Q itself over the same glob, into pandas]


`only` picks groups: small, large, linear (issue #16), report, chart, images, batch (issue #28), real, limiter,
history (#38), timeline (#34).

Wall time is what the targets are about; CPU time (user + system of the process, from wait4) is printed beside
it, since on a shared machine it moves less with the load of other processes.
"""

from __future__ import annotations

import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLE = ROOT / "fixtures" / "example_h100_raw.csv"
SAMPLES = ROOT.parent / "shared" / "ncu-samples"
REPORT = SAMPLES / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep"
SMALL_REPORT = SAMPLES / "nersc-gpp" / "output1.ncu-rep"
GROUPS = ("small", "large", "linear", "report", "chart", "images", "batch", "real", "limiter", "timeline", "history")
# The limiter's CPU share of one analysis: its entry points timed inside the process (limiter.py, the notes).
LIMITER_SHARE = """
import sys, time
import ncu_roofline.pipeline.evaluate as evaluate, ncu_roofline.pipeline.steps as steps
from ncu_roofline import analyze
spent = [0.0]
def timed(fn):
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start
    return run
evaluate.launch_limiters = timed(evaluate.launch_limiters)
steps.group_limiters = timed(steps.group_limiters)
steps.limiter_notes = timed(steps.limiter_notes)
start = time.process_time()
result = analyze(sys.argv[1], allow_empty=True)
total = time.process_time() - start
assert (result.launches["limiter"].astype(str) == "unknown").any()
print(f"{spent[0]:.4f} {total - spent[0]:.4f}")
"""
HISTORY_RUNS = 300
# Built by the interpreter under test: one analysis of the page, written as HISTORY_RUNS runs an hour apart.
HISTORY_BUILD = """
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
import ncu_roofline
from ncu_roofline.history.store import append_analysis
page, folder, runs = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
analysis = ncu_roofline.analyze(page)
start = datetime(2026, 1, 1, tzinfo=timezone.utc)
for i in range(runs):
    append_analysis(folder, analysis, run_id=f"run{i:04d}", run_time=start + timedelta(hours=i),
                    labels={"branch": "main"})
"""
# What `history` reads of the kernels (history/series.py IDENTITY and VALUES), as a bare query over the glob.
HISTORY_BARE = """
import sys, duckdb
glob, query, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
source = f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true, hive_types = {{'run_id': VARCHAR}})"
if wanted:  # the columns of `wanted` that the files have (history reads the others as null)
    present = {row[0] for row in duckdb.sql(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    query = query.replace("{columns}", ", ".join(f'"{c}"' for c in wanted if c in present))
duckdb.sql(query.replace("FROM kernels", f"FROM {source}")).df()
"""
# NVIDIA's own reader over every metric value of every action, in a process that has imported pandas and pyarrow
# (which any tool writing Parquet tables pays): the floor for analysing a report (issue #38).
NCU_REPORT_READ = """
import sys, ncu_report
import pandas, pyarrow
report = ncu_report.load_report(sys.argv[1])
values = 0
for r in range(report.num_ranges()):
    rng = report.range_by_idx(r)
    for a in range(rng.num_actions()):
        action = rng.action_by_idx(a)
        for name in action.metric_names():
            action[name].value()
            values += 1
assert values
"""


@dataclass
class Target:
    name: str
    ratio: float
    limit: float
    detail: str
    cpu_ratio: float | None = None
    by_cpu: bool = False  # the verdict on the CPU ratio (a loaded machine moves CPU time less than wall time)

    @property
    def met(self) -> bool:
        return (self.cpu_ratio if self.by_cpu and self.cpu_ratio is not None else self.ratio) <= self.limit

    def line(self) -> str:
        if self.by_cpu and self.cpu_ratio is not None:
            return (f"{'met    ' if self.met else 'NOT MET'}  {self.name}: CPU {self.cpu_ratio:.2f}x (target <= "
                    f"{self.limit}x, wall {self.ratio:.2f}x) - {self.detail}")
        cpu = f", CPU {self.cpu_ratio:.2f}x" if self.cpu_ratio is not None else ""
        return (f"{'met    ' if self.met else 'NOT MET'}  {self.name}: {self.ratio:.2f}x (target <= {self.limit}x"
                f"{cpu}) - {self.detail}")


def best(measure: Callable, commands: dict[str, list[str]], repeat: int,
         before: Callable[[], None] | None = None) -> dict[str, object]:
    """Best wall time of `repeat` interleaved runs per command (and the worst peak RSS, and the lowest CPU)."""
    out: dict[str, object] = {}
    worst_rss: dict[str, int] = {}
    least_cpu: dict[str, float] = {}
    for _ in range(repeat):
        for name, command in commands.items():
            if before is not None:
                before()
            m = measure(command)
            if m.returncode != 0:
                raise SystemExit(f"{name} failed (exit {m.returncode}): {' '.join(command)}\n{m.stderr}")
            worst_rss[name] = max(worst_rss.get(name, 0), m.peak_rss_bytes)
            least_cpu[name] = min(least_cpu.get(name, float("inf")), m.cpu_seconds)
            if name not in out or m.seconds < out[name].seconds:
                out[name] = m
    for name, m in out.items():
        m.peak_rss_bytes = worst_rss[name]
        m.cpu_seconds = least_cpu[name]
    return out


def medians(measure: Callable, commands: dict[str, list[str]], repeat: int,
            before: Callable[[], None] | None = None) -> dict[str, object]:
    """Median wall and median CPU time of `repeat` interleaved runs per command (and the worst peak RSS)."""
    runs: dict[str, list] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            if before is not None:
                before()
            m = measure(command)
            if m.returncode != 0:
                raise SystemExit(f"{name} failed (exit {m.returncode}): {' '.join(command)}\n{m.stderr}")
            runs[name].append(m)
    out: dict[str, object] = {}
    for name, ms in runs.items():
        m = ms[0]
        m.seconds = statistics.median(x.seconds for x in ms)
        m.cpu_seconds = statistics.median(x.cpu_seconds for x in ms)
        m.peak_rss_bytes = max(x.peak_rss_bytes for x in ms)
        out[name] = m
    return out


def _fmt(m) -> str:
    return f"{m.seconds:.2f} s wall, {m.cpu_seconds:.2f} s CPU, {m.peak_rss_bytes / 1e6:,.0f} MB"


def quick(measure: Callable, ensure_file: Callable, python: str, workdir: Path, *, repeat_small: int = 5,
          repeat_large: int = 2, full: bool = False, log: Callable[[str], None] = print,
          only: set[str] | None = None) -> tuple[list[Target], list[str]]:
    """Measure every target (or the groups in `only`); returns the verdicts and the raw figures (one line per
    command)."""
    me = sys.executable
    script = Path(python).parent / "ncu-roofline"  # the installed command: what users start (and it does not put
    cli = [str(script)] if script.exists() else [python, "-m", "ncu_roofline.cli"]  # the cwd on sys.path)
    figures: list[str] = []
    targets: list[Target] = []
    out = workdir / "quick_out"
    parquet = workdir / "quick_baseline.parquet"
    wanted = set(GROUPS) if only is None else set(only)

    def clean() -> None:
        shutil.rmtree(out, ignore_errors=True)

    # Warm the Vega bundle cache (render/chart/vega_bundle.py) and the file cache once; the timed runs are what a user
    # gets from the second run on.
    measure([*cli, "analyze", str(EXAMPLE), "-o", str(out)])

    if "small" in wanted:
        _small(measure, cli, me, out, parquet, repeat_small, clean, log, figures, targets)
    large: dict[tuple[str, int], tuple[object, int]] = {}
    if "large" in wanted:
        large = _large(measure, ensure_file, cli, me, workdir, out, repeat_large, clean, log, figures, targets)
    if "linear" in wanted:
        _linear(measure, ensure_file, cli, workdir, out, repeat_large, clean, log, figures, targets, large, full)
    if "report" in wanted:
        _report(measure, cli, me, out, clean, log, figures, targets)
    if "chart" in wanted or "images" in wanted:
        _charts(measure, ensure_file, cli, workdir, out, clean, log, figures, targets, wanted)
    if "batch" in wanted:
        _batch(measure, cli, workdir, log, figures, targets)
    if "real" in wanted:
        _real(measure, cli, me, workdir, out, parquet, clean, log, figures, targets, full)
    if "limiter" in wanted:
        _limiter(ensure_file, me, workdir, log, figures, targets)
    if "timeline" in wanted:
        _timeline(python, workdir, log, figures, targets)
    if "history" in wanted:
        _history(measure, ensure_file, python, cli, me, workdir, log, figures, targets)
    clean()
    parquet.unlink(missing_ok=True)
    return targets, figures


def _small(measure, cli, me, out, parquet, repeat_small, clean, log, figures, targets) -> None:
    log("small input and start-up ...")
    small = best(measure, {
        "analyze example -o OUT": [*cli, "analyze", str(EXAMPLE), "-o", str(out)],
        "pandas read_csv+to_parquet": [me, "-c", f"import pandas as pd; pd.read_csv({str(EXAMPLE)!r}, skiprows=3)"
                                                 f".to_parquet({str(parquet)!r})"],
        "--help": [*cli, "--help"],
        "ceilings": [*cli, "ceilings"],
        "import pandas": [me, "-c", "import pandas"],
    }, repeat_small, before=clean)
    for name, m in small.items():
        figures.append(f"{name}: {_fmt(m)}")
    base = small["pandas read_csv+to_parquet"]
    targets.append(Target("analyze example -o OUT vs pandas read_csv+to_parquet", small["analyze example -o OUT"].seconds / base.seconds,
                          2.0, f"{small['analyze example -o OUT'].seconds:.2f} s vs {base.seconds:.2f} s",
                          small["analyze example -o OUT"].cpu_seconds / base.cpu_seconds))
    pandas_import = small["import pandas"]
    for name in ("--help", "ceilings"):
        targets.append(Target(f"ncu-roofline {name} vs import pandas", small[name].seconds / pandas_import.seconds,
                              0.5, f"{small[name].seconds:.2f} s vs {pandas_import.seconds:.2f} s",
                              small[name].cpu_seconds / pandas_import.cpu_seconds))


def _large(measure, ensure_file, cli, me, workdir, out, repeat_large, clean, log, figures, targets) -> dict:
    large: dict[tuple[str, int], tuple[object, int]] = {}
    for page, launches, limit in (("details", 100_000, 1.0), ("raw", 100_000, 0.5)):
        path = ensure_file(workdir, page, launches, 0)
        size = path.stat().st_size
        log(f"{page} page, {launches:,} launches ({size / 1e6:,.0f} MB) ...")
        runs = best(measure, {
            "analyze": [*cli, "analyze", str(path), "-o", str(out), "--rows", "0"],
            "read_csv": [me, "-c", f"import pyarrow.csv as c; c.read_csv({str(path)!r})"],
        }, repeat_large, before=clean)
        a, r = runs["analyze"], runs["read_csv"]
        figures += [f"{page} {launches:,} analyze: {_fmt(a)}", f"{page} {launches:,} read_csv: {_fmt(r)}"]
        large[(page, launches)] = (a, size)
        targets.append(Target(f"{page} page {launches:,} launches vs pyarrow read_csv", a.seconds / r.seconds, limit,
                              f"{a.seconds:.2f} s vs {r.seconds:.2f} s", a.cpu_seconds / r.cpu_seconds))
        targets.append(Target(f"{page} page {launches:,} launches peak memory / file size", a.peak_rss_bytes / size,
                              0.6, f"{a.peak_rss_bytes / 1e6:,.0f} MB for a {size / 1e6:,.0f} MB file"))
    return large


def _linear(measure, ensure_file, cli, workdir, out, repeat_large, clean, log, figures, targets, large,
            full) -> None:
    sizes = (100_000, 1_000_000) if full else (25_000, 100_000)
    small_n, large_n = sizes
    path = ensure_file(workdir, "details", small_n, 0)
    log(f"details page, {small_n:,} launches (linearity) ...")
    m = best(measure, {"analyze": [*cli, "analyze", str(path), "-o", str(out), "--rows", "0"]}, repeat_large,
             before=clean)["analyze"]
    figures.append(f"details {small_n:,} analyze: {_fmt(m)}")
    if (("details", large_n)) not in large:
        path = ensure_file(workdir, "details", large_n, 0)
        log(f"details page, {large_n:,} launches (linearity) ...")
        big = best(measure, {"analyze": [*cli, "analyze", str(path), "-o", str(out), "--rows", "0"]}, 1,
                   before=clean)["analyze"]
        figures.append(f"details {large_n:,} analyze: {_fmt(big)}")
    else:
        big = large[("details", large_n)][0]
    factor = large_n / small_n
    growth = big.seconds / m.seconds
    targets.append(Target(f"details page linear in launches ({small_n:,} -> {large_n:,})", growth / factor, 1.1,
                          f"time grew {growth:.2f}x for {factor:.0f}x the launches",
                          (big.cpu_seconds / m.cpu_seconds) / factor))


def _ratio_target(name: str, runs: dict, a: str, b: str, limit: float, figures: list[str], targets: list[Target],
                  *, by_cpu: bool = True) -> None:
    figures += [f"{a}: {_fmt(runs[a])}", f"{b}: {_fmt(runs[b])}"]
    x, y = runs[a], runs[b]
    targets.append(Target(name, x.seconds / y.seconds, limit,
                          f"{x.cpu_seconds:.2f} vs {y.cpu_seconds:.2f} CPU-s, {x.seconds:.2f} vs {y.seconds:.2f} s "
                          "wall (medians)", x.cpu_seconds / y.cpu_seconds, by_cpu=by_cpu))


def _report(measure, cli, me, out, clean, log, figures, targets, repeat: int = 5) -> None:
    import importlib.util

    if not REPORT.is_file() or importlib.util.find_spec("ncu_report") is None:
        log(f"report target skipped: needs {REPORT} and the ncu-report wheel")
        return
    log(f"one report ({REPORT.name}) ...")
    runs = medians(measure, {
        "analyze report -o OUT": [*cli, "analyze", str(REPORT), "-o", str(out)],
        "import pandas, pyarrow + ncu_report every metric": [me, "-c", NCU_REPORT_READ, str(REPORT)],
    }, repeat, before=clean)
    _ratio_target(f"analyze {REPORT.name} -o OUT vs its floor (pandas, pyarrow and ncu_report reading every metric)",
                  runs, "analyze report -o OUT", "import pandas, pyarrow + ncu_report every metric", 1.3, figures,
                  targets)


def _charts(measure, ensure_file, cli, workdir, out, clean, log, figures, targets, wanted, repeat: int = 5) -> None:
    path = ensure_file(workdir, "details", 2_000, 0)  # 200 kernels (benchmarks/generate.py), 2,000 launches
    analyze = [*cli, "analyze", str(path), "-o", str(out), "--rows", "0"]
    if "chart" in wanted:
        log("a chart of 200 kernels against one of 5 ...")
        runs = medians(measure, {"--top 200": [*analyze, "--top", "200"], "--top 5": [*analyze, "--top", "5"]},
                       repeat, before=clean)
        _ratio_target("chart of 200 kernels vs 5 kernels (same input, -o)", runs, "--top 200", "--top 5", 1.5,
                      figures, targets)
    if "images" in wanted:
        log("--format svg,png against no images, 40 kernels ...")
        runs = medians(measure, {"--top 40 --format svg,png": [*analyze, "--top", "40", "--format", "svg,png"],
                                 "--top 40": [*analyze, "--top", "40"]}, repeat, before=clean)
        _ratio_target("--format svg,png vs no images (40 kernels)", runs, "--top 40 --format svg,png", "--top 40",
                      2.0, figures, targets)


def _batch(measure, cli, workdir, log, figures, targets, reports: int = 100, repeat: int = 3) -> None:
    import importlib.util

    source = SMALL_REPORT if SMALL_REPORT.is_file() and importlib.util.find_spec("ncu_report") else EXAMPLE
    folder, history = workdir / "batch_reports", workdir / "batch_history"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    suffix = ".ncu-rep" if source.name.endswith(".ncu-rep") else source.suffix
    for i in range(reports):
        shutil.copyfile(source, folder / f"report{i:04d}{suffix}")
    log(f"batch of {reports} copies of {source.name}, --jobs 2 against --jobs 1 ...")
    runs = medians(measure, {
        f"batch {reports} --jobs 2": [*cli, "batch", str(folder), "--history", str(history), "--jobs", "2"],
        f"batch {reports} --jobs 1": [*cli, "batch", str(folder), "--history", str(history), "--jobs", "1"],
    }, repeat, before=lambda: shutil.rmtree(history, ignore_errors=True))
    _ratio_target(f"batch {reports} reports --jobs 2 vs --jobs 1 (wall; needs 2 idle cores)", runs,
                  f"batch {reports} --jobs 2", f"batch {reports} --jobs 1", 0.65, figures, targets, by_cpu=False)
    targets[-1].cpu_ratio = None  # wait4 does not see the pool's workers (children of the forkserver)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(history, ignore_errors=True)


REAL_OPTIONS = {"details": ["--gpu", "NVIDIA GeForce RTX 4060 Laptop GPU"],  # the sample's GPU (SOURCES.tsv)
                "narrow": ["--gpu", "NVIDIA GeForce RTX 4060 Laptop GPU"], "b200": ["--allow-empty"]}


def _real(measure, cli, me, workdir, out, parquet, clean, log, figures, targets, full, repeat: int = 3) -> None:
    """Issue #38 item 3: real-shaped pages against pandas' pyarrow read and a Parquet write of the same file."""
    from real_pages import ensure_page

    # The narrow page is issue #38's 10^6 case in --quick too (257 MB); the details page at 10^6 is 3 GB: --full.
    sizes = (10_000, 100_000, 1_000_000) if full else (10_000, 100_000)
    plan = [("narrow", n) for n in (10_000, 100_000, 1_000_000)] + [("details", n) for n in sizes] + \
        [("b200", n) for n in ((10_000, 100_000) if full else (10_000,))]
    cpu: dict[tuple[str, int], float] = {}
    for page, launches in plan:
        path = ensure_page(workdir, page, launches)
        if path is None:
            log(f"real {page} page skipped: its sample is not in {SAMPLES}")
            continue
        size = path.stat().st_size
        log(f"real {page} page, {launches:,} launches ({size / 1e6:,.0f} MB) ...")
        runs = medians(measure, {
            "analyze": [*cli, "analyze", str(path), "-o", str(out), "--rows", "0", *REAL_OPTIONS[page]],
            "pandas": [me, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, engine='pyarrow')"
                                 f".to_parquet({str(parquet)!r})"],
        }, repeat if launches < 1_000_000 else 2, before=clean)
        a, b = runs["analyze"], runs["pandas"]
        figures += [f"real {page} {launches:,} analyze: {_fmt(a)}",
                    f"real {page} {launches:,} pandas read_csv(pyarrow)+to_parquet: {_fmt(b)}"]
        cpu[(page, launches)] = a.cpu_seconds
        if page == "b200" or launches < 100_000:
            continue
        name = f"real {page} page {launches:,} launches vs pandas read_csv(engine=pyarrow)+to_parquet"
        targets.append(Target(f"{name}, CPU", a.seconds / b.seconds, 1.5,
                              f"{a.cpu_seconds:.2f} vs {b.cpu_seconds:.2f} CPU-s (medians)",
                              a.cpu_seconds / b.cpu_seconds, by_cpu=True))
        targets.append(Target(f"{name}, peak memory", a.peak_rss_bytes / b.peak_rss_bytes, 1.5,
                              f"{a.peak_rss_bytes / 1e6:,.0f} vs {b.peak_rss_bytes / 1e6:,.0f} MB "
                              f"({size / 1e6:,.0f} MB file)"))
    for page in ("narrow", "details"):
        mine = sorted(n for p, n in cpu if p == page)
        if len(mine) >= 2:
            small_n, large_n = mine[0], mine[-1]
            growth = cpu[(page, large_n)] / cpu[(page, small_n)]
            factor = large_n / small_n
            targets.append(Target(f"real {page} page linear in launches ({small_n:,} -> {large_n:,}), CPU",
                                  growth / factor, 1.1, f"CPU grew {growth:.2f}x for {factor:.0f}x the launches",
                                  growth / factor, by_cpu=True))


def _limiter(ensure_file, me, workdir, log, figures, targets, launches: int = 25_000, repeat: int = 5) -> None:
    """The limiter's CPU time against the rest of the analysis, in the same process (a details page without its
    counters: every launch `unknown`, the case issue #38 bounds at 5 %)."""
    import subprocess

    path = ensure_file(workdir, "details", launches, 0)
    log(f"the limiter's CPU share of analysing {path.name} (no limiter counters) ...")
    shares, limiter_s, rest_s = [], [], []
    for _ in range(repeat):
        done = subprocess.run([me, "-c", LIMITER_SHARE, str(path)], capture_output=True, text=True, check=True)
        spent, rest = map(float, done.stdout.split()[-2:])
        shares.append(spent / rest)
        limiter_s.append(spent)
        rest_s.append(rest)
    figures.append(f"limiter {statistics.median(limiter_s):.3f} CPU-s of the rest {statistics.median(rest_s):.3f} "
                   f"CPU-s (medians of {repeat})")
    share = statistics.median(shares)
    targets.append(Target(f"the limiter's CPU on {launches:,} launches without its counters vs the rest of analyze",
                          share, 0.05, f"{statistics.median(limiter_s):.3f} vs {statistics.median(rest_s):.3f} "
                          "CPU-s (medians, in one process)", share, by_cpu=True))


def _timeline(python: str, workdir: Path, log, figures, targets, launches: int = 1_000_000) -> None:
    import json
    import subprocess

    log(f"nsys SQLite timeline of {launches:,} launches against a bare sqlite3 GROUP BY ...")
    run = subprocess.run([python, str(HERE / "timeline.py"), "--launches", str(launches), "--repeat", "3",
                          "--workdir", str(workdir)], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"benchmarks/timeline.py failed (exit {run.returncode}):\n{run.stderr}")
    result = json.loads(run.stdout.strip().splitlines()[-1])
    figures.append(f"timeline {launches:,}: read_timeline {result['ours_s']:.2f} s, bare GROUP BY "
                   f"{result['bare_s']:.2f} s ({result['kernels']} kernels)")
    targets.append(Target(f"nsys SQLite timeline {launches:,} launches vs bare sqlite3 GROUP BY", result["ratio"], 1.5,
                          f"{result['ours_s']:.2f} s vs {result['bare_s']:.2f} s (best of 3, one process)"))


def _history(measure, ensure_file, python, cli, me, workdir, log, figures, targets, repeat: int = 5) -> None:
    from ncu_roofline.history.series import IDENTITY, VALUES

    folder = workdir / f"history_{HISTORY_RUNS}"
    if not (folder / "_runs" / f"run{HISTORY_RUNS - 1:04d}.json").exists():
        page = ensure_file(workdir, "details", 2_000, 0)
        shutil.rmtree(folder, ignore_errors=True)
        log(f"building a history of {HISTORY_RUNS} runs of {page.name} (once) ...")
        built = measure([python, "-c", HISTORY_BUILD, str(page), str(folder), str(HISTORY_RUNS)])
        if built.returncode != 0:
            raise SystemExit(f"building the history failed: {built.stderr}")
    glob = f"{folder}/kernels/*/part-*.parquet"
    sql = "SELECT run_id, count(*) AS kernels, sum(time_s) AS time_s FROM kernels GROUP BY ALL ORDER BY 1"
    log(f"history of {HISTORY_RUNS} runs against bare DuckDB over the same files ...")
    runs = medians(measure, {
        "history H": [*cli, "history", str(folder), "--rows", "10"],
        "bare DuckDB, history's columns": [me, "-c", HISTORY_BARE, glob, "SELECT {columns} FROM kernels", "run_id",
                                           *IDENTITY, *VALUES],
        "history H --sql Q": [*cli, "history", str(folder), "--sql", sql],
        "bare DuckDB, Q": [me, "-c", HISTORY_BARE, glob, sql],
    }, repeat)
    _ratio_target(f"history of {HISTORY_RUNS} runs vs a bare DuckDB query of its columns", runs, "history H",
                  "bare DuckDB, history's columns", 1.5, figures, targets)
    _ratio_target(f"history --sql over {HISTORY_RUNS} runs vs the same query in bare DuckDB", runs,
                  "history H --sql Q", "bare DuckDB, Q", 2.0, figures, targets)
