"""Scale benchmark: `ncu-roofline analyze FILE -o OUT --rows 0` end to end against pyarrow reading the same file.

For each page (details, raw) and size (10^4 and 10^5 launches; 10^6 with --full), the file is generated once
(benchmarks/generate.py, cached in --workdir), then the commands run as whole processes, interleaved, three times
each; the best time counts. Two baselines:

- read_csv: `python -c "import pyarrow.csv as c; c.read_csv(FILE)"`, the whole file as a table. It needs 2-4x the
  file in memory, so it is skipped (and said so) where that would not fit in the memory available.
- stream: pyarrow's streaming reader over the same file, every column converted (as binary) and dropped: the
  parsing floor any CSV reader pays, in constant memory.

Peak RSS is the child's own `ru_maxrss` from `os.wait4` (per process, not the cumulative RUSAGE_CHILDREN
maximum). Results and a description of the machine go to benchmarks/RESULTS.md; a `## Notes` section at the end
of that file is kept across runs.

Targets (DESIGN §5): analyze <= 3x the baseline at 10^5 launches and above (goal 1.5x), peak RSS <= 1.5x the file
size, time linear in launches.

    python benchmarks/run.py                 # 10^4 and 10^5 launches, both pages
    python benchmarks/run.py --full          # and 10^6 (about 12 GB per page on disk)
    python benchmarks/run.py --sizes 1000,4000 --pages details --repeat 1 --no-write
    python benchmarks/run.py --quick         # every target of issues #16, #28 and #38 as met / not met (targets.py)
    python benchmarks/run.py --quick --only report,chart,images,batch
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate_details, generate_raw  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
TARGET_RATIO, GOAL_RATIO, TARGET_RSS = 3.0, 1.5, 1.5


@dataclass
class Measure:
    seconds: float
    peak_rss_bytes: int
    returncode: int
    stderr: str
    cpu_seconds: float = 0.0  # user + system time of the process


@dataclass
class Row:
    page: str
    launches: int
    file_bytes: int
    analyze: Measure
    baseline: Measure | None  # read_csv; None where it would not fit in memory
    stream: Measure
    skipped: str = ""

    @property
    def ratio(self) -> float:
        return self.analyze.seconds / self.baseline.seconds if self.baseline else float("nan")

    @property
    def stream_ratio(self) -> float:
        return self.analyze.seconds / self.stream.seconds

    @property
    def rss_ratio(self) -> float:
        return self.analyze.peak_rss_bytes / self.file_bytes


# The measured command is the child of a small launcher, not of this process: Linux counts a child's peak RSS from
# the memory of the process it was forked from, so a child of a large process (a test worker holding analyses,
# say) would report that process's memory as its own. The launcher waits for it and prints its exit code, wall
# seconds, peak RSS and CPU seconds.
_LAUNCHER = """
import os, sys, time
argv = sys.argv[1:]
null = os.open(os.devnull, os.O_WRONLY)
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
print(os.waitstatus_to_exitcode(status), repr(seconds), usage.ru_maxrss, repr(usage.ru_utime + usage.ru_stime))
"""


def measure(command: list[str], *, timeout_s: float | None = None) -> Measure:
    """Wall time, peak RSS and CPU time of one process, from wait4 on exactly that child (in the launcher)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER, *map(str, command)],
                                   stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        try:
            out, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    fields = out.decode().split()
    if len(fields) != 4:  # killed at the deadline, or the launcher failed
        return Measure(time.perf_counter() - start, 0, process.returncode or -signal.SIGKILL, text)
    code, seconds, maxrss, cpu = fields
    # Linux reports ru_maxrss in KiB, macOS in bytes.
    rss = int(maxrss) * (1 if sys.platform == "darwin" else 1024)
    return Measure(float(seconds), rss, int(code), text, float(cpu))


def analyze_command(path: Path, outdir: Path) -> list[str]:
    return [sys.executable, "-m", "ncu_roofline.cli", "analyze", str(path), "-o", str(outdir), "--rows", "0"]


def baseline_command(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import pyarrow.csv as c; c.read_csv({str(path)!r})"]


STREAM = """
import csv, sys
import pyarrow as pa, pyarrow.csv as c
path = sys.argv[1]
with open(path, newline="", encoding="utf-8", errors="replace") as f:
    header = next(csv.reader(f))
types = {name: pa.binary() for name in header}
for batch in c.open_csv(path, convert_options=c.ConvertOptions(column_types=types)):
    pass
"""


def stream_command(path: Path) -> list[str]:
    return [sys.executable, "-c", STREAM, str(path)]


def available_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def ensure_file(workdir: Path, page: str, launches: int, seed: int) -> Path:
    path = workdir / f"{page}_{launches}_s{seed}.csv"
    if not path.exists():
        tmp = path.with_suffix(".partial")
        started = time.perf_counter()
        (generate_details if page == "details" else generate_raw)(tmp, launches, seed=seed)
        tmp.rename(path)
        print(f"  generated {path} ({path.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - started:.1f} s",
              flush=True)
    return path


def bench(page: str, launches: int, workdir: Path, *, repeat: int, seed: int, keep: bool,
          read_csv_factor: float) -> Row:
    """Best of `repeat` interleaved runs of analyze, read_csv (when it fits in memory) and the stream baseline."""
    path = ensure_file(workdir, page, launches, seed)
    size = path.stat().st_size
    outdir = workdir / f"out_{page}_{launches}"
    free = available_memory()
    skipped = ""
    if free is not None and size * read_csv_factor > 0.6 * free:
        skipped = (f"read_csv skipped: it would need about {size * read_csv_factor / 1e9:.0f} GB "
                   f"({read_csv_factor:.1f}x the file, as measured at the smaller size), {free / 1e9:.0f} GB available")
        print(f"  {skipped}", flush=True)
    best: dict[str, Measure] = {}
    peak: dict[str, int] = {}
    commands = {"analyze": analyze_command(path, outdir), "stream": stream_command(path)}
    if not skipped:
        commands["read_csv"] = baseline_command(path)
    for _ in range(repeat):
        shutil.rmtree(outdir, ignore_errors=True)
        line = []
        for name, command in commands.items():
            m = measure(command)
            if m.returncode != 0:
                raise SystemExit(f"{name} failed on {path} (exit {m.returncode}):\n{m.stderr}")
            peak[name] = max(peak.get(name, 0), m.peak_rss_bytes)
            if name not in best or m.seconds < best[name].seconds:
                best[name] = m
            line.append(f"{name} {m.seconds:7.2f} s {m.peak_rss_bytes / 1e6:8,.0f} MB")
        print(f"  {page} {launches:>9,}: " + " | ".join(line), flush=True)
    for name, m in best.items():
        m.peak_rss_bytes = peak[name]  # the worst peak of the repeats
    if not keep:
        shutil.rmtree(outdir, ignore_errors=True)
    return Row(page, launches, size, best["analyze"], best.get("read_csv"), best["stream"], skipped)


def machine() -> dict[str, str]:
    import pandas
    import pyarrow

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        kib = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")))
        ram = f"{kib / 1024 ** 2:.1f} GiB"
    except (OSError, StopIteration):
        ram = "unknown"
    return {"CPUs (nproc)": str(os.cpu_count()), "CPU": cpu, "RAM": ram,
            "OS": f"{platform.system()} {platform.release()}", "Python": platform.python_version(),
            "pyarrow": pyarrow.__version__, "pandas": pandas.__version__}


def measured_commit() -> str:
    """The commit the figures were measured at (with `+changes` when the work tree differs from it): every figure
    in RESULTS.md names it, so a reader knows which code it describes."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=10", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "ncu_roofline", "metrics", "benchmarks")
    return commit + (" +changes" if dirty else "")


def machine_lines() -> list[str]:
    """The machine as RESULTS.md lists it, with the load average: other work on it moves every wall time."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return [f"- {key}: {value}" for key, value in machine().items()] + [
        f"- load average when the run ended: {', '.join(f'{x:.1f}' for x in load)}" if load else "- load: unknown"]


def _mb(measure: Measure | None) -> str:
    return f"{measure.peak_rss_bytes / 1e6:,.0f}" if measure else "skipped"


def _s(measure: Measure | None) -> str:
    return f"{measure.seconds:.2f}" if measure else "skipped"


def table(rows: list[Row]) -> list[str]:
    lines = ["| page | launches | file MB | analyze s | read_csv s | stream s | ratio vs read_csv | ratio vs stream | "
             "analyze peak RSS MB | RSS / file | read_csv peak RSS MB | stream peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r.ratio:.2f}" if r.baseline else "—"
        lines.append(f"| {r.page} | {r.launches:,} | {r.file_bytes / 1e6:,.0f} | {r.analyze.seconds:.2f} | "
                     f"{_s(r.baseline)} | {r.stream.seconds:.2f} | {ratio} | {r.stream_ratio:.2f} | "
                     f"{r.analyze.peak_rss_bytes / 1e6:,.0f} | {r.rss_ratio:.2f} | {_mb(r.baseline)} | "
                     f"{_mb(r.stream)} |")
    return lines


def scaling(rows: list[Row]) -> list[str]:
    lines = ["| page | launches | analyze s per 10^5 launches | stream s per 10^5 launches |", "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.page} | {r.launches:,} | {r.analyze.seconds / r.launches * 1e5:.2f} | "
                     f"{r.stream.seconds / r.launches * 1e5:.2f} |")
    return lines


def verdicts(rows: list[Row]) -> list[str]:
    lines = []
    for r in rows:
        if r.skipped:
            lines.append(f"- {r.page}, {r.launches:,} launches: {r.skipped}")
        if r.launches < 100_000:
            continue  # process start-up dominates below 10^5; the targets apply from there
        if r.baseline:
            speed = "meets the goal" if r.ratio <= GOAL_RATIO else ("meets the target" if r.ratio <= TARGET_RATIO
                                                                      else "MISSES the target")
            against = f"time {r.ratio:.2f}x read_csv ({speed}: <= {TARGET_RATIO}x, goal {GOAL_RATIO}x)"
        else:
            against = "read_csv not measured"
        memory = "meets" if r.rss_ratio <= TARGET_RSS else "MISSES"
        lines.append(f"- {r.page}, {r.launches:,} launches: {against}; {r.stream_ratio:.2f}x the streaming parse; "
                     f"peak RSS {r.rss_ratio:.2f}x the file ({memory} the <= {TARGET_RSS}x target)")
    for page in sorted({r.page for r in rows}):
        mine = sorted((r for r in rows if r.page == page), key=lambda r: r.launches)
        for small, large in zip(mine, mine[1:]):
            growth = large.analyze.seconds / small.analyze.seconds
            factor = large.launches / small.launches
            lines.append(f"- {page}: {small.launches:,} -> {large.launches:,} launches ({factor:.0f}x): time grew "
                         f"{growth:.1f}x, {growth / factor:.2f} of linear (below 1: fixed start-up cost amortised)")
    return lines


def write_results(rows: list[Row], args: argparse.Namespace) -> None:
    info = machine()
    notes = ""
    if RESULTS.exists():
        previous = RESULTS.read_text()
        if "\n## Notes\n" in previous:
            notes = previous[previous.index("\n## Notes\n"):]
    command = "python benchmarks/run.py" + "".join(f" {a}" for a in sys.argv[1:])
    text = ["# Scale benchmark results", "", f"Measured at commit `{measured_commit()}`.", "",
            f"Written by `{command}`. Each command runs as a whole process (start-up included), interleaved with "
            f"the others, best of {args.repeat}; peak RSS is the worst of the runs (`os.wait4` ru_maxrss of that "
            "process).", "",
            "- analyze: `ncu-roofline analyze FILE -o OUT --rows 0` (Parquet tables, Vega-Lite spec, HTML chart)",
            "- read_csv: `python -c \"import pyarrow.csv as c; c.read_csv(FILE)\"` (the whole file as a table)",
            "- stream: `pyarrow.csv.open_csv(FILE)` with every column as binary, each batch dropped (the parsing "
            "floor, constant memory)",
            "- files: `benchmarks/generate.py`, seed 0 (details page: 15 columns, 23 rows per launch, 200 kernels "
            "with names of 100-600 characters; raw page: 1,500 metric columns and a units row)", "",
            "## Machine", ""]
    text += [f"- {key}: {value}" for key, value in info.items()]
    text += ["", "## Time and memory", ""] + table(rows)
    text += ["", "## Scaling", ""] + scaling(rows)
    text += ["", "## Against the targets", ""] + verdicts(rows) + [""]
    RESULTS.write_text("\n".join(text) + notes)
    print(f"wrote {RESULTS}")


def run_quick(args: argparse.Namespace) -> None:
    from targets import quick

    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    only = {g.strip() for g in args.only.split(",") if g.strip()} if args.only else None
    verdicts_, figures = quick(measure, ensure_file, args.python, args.workdir, full=args.full,
                               log=lambda text: print(text, flush=True), only=only)
    elapsed = time.perf_counter() - started
    lines = [*figures, "", *(t.line() for t in verdicts_), "",
             f"{sum(t.met for t in verdicts_)} of {len(verdicts_)} targets met; measured in {elapsed:.0f} s at commit "
             f"{measured_commit()}"]
    print("\n".join(["", *lines]))
    if args.no_write or args.only:
        return
    notes = ""
    if RESULTS.exists() and "\n## Notes\n" in RESULTS.read_text():
        previous = RESULTS.read_text()
        notes = previous[previous.index("\n## Notes\n"):]
    command = "python benchmarks/run.py" + "".join(f" {a}" for a in sys.argv[1:])
    text = ["# Benchmark results", "",
            f"Measured at commit `{measured_commit()}`: every figure and verdict below is of that commit.", "",
            f"Written by `{command}` (benchmarks/targets.py says what each target compares). Whole processes, "
            "interleaved with their baselines, best wall time of several runs; CPU is user + system time of the "
            "same process; peak RSS is the worst of the runs (`os.wait4`).", "",
            "## Machine", "", *machine_lines(), "",
            "## Targets", "", "```", *(t.line() for t in verdicts_), "```", "",
            "## Figures", "", "```", *figures, "```", "",
            f"{sum(t.met for t in verdicts_)} of {len(verdicts_)} targets met; the run took {elapsed:.0f} s.", ""]
    RESULTS.write_text("\n".join(text) + notes)
    print(f"wrote {RESULTS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="also 10^6 launches (about 12 GB per page on disk)")
    parser.add_argument("--sizes", help="comma-separated launch counts (overrides the defaults)")
    parser.add_argument("--pages", default="details,raw", help="details, raw or both (default)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ncu-roofline-bench")
    parser.add_argument("--keep", action="store_true", help="keep the output folders")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--quick", action="store_true", help="the issue #16 targets in about two minutes")
    parser.add_argument("--only", help="--quick: these target groups only (small, large, linear, report, chart, "
                                       "images, batch, real, limiter, timeline, history); RESULTS.md is then left alone")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter whose ncu_roofline is measured (--quick; e.g. another checkout's venv)")
    args = parser.parse_args()
    if args.quick:
        run_quick(args)
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")] if args.sizes else \
        [10_000, 100_000] + ([1_000_000] if args.full else [])
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for page in pages:
        factor = 5.0  # read_csv's peak over the file size until measured at a smaller size
        for launches in sorted(sizes):
            row = bench(page, launches, args.workdir, repeat=args.repeat, seed=args.seed, keep=args.keep,
                        read_csv_factor=factor)
            if row.baseline:
                factor = row.baseline.peak_rss_bytes / row.file_bytes
            rows.append(row)
    print("\n".join(["", *table(rows), "", *scaling(rows), "", *verdicts(rows)]))
    if not args.no_write:
        write_results(rows, args)


if __name__ == "__main__":
    main()
