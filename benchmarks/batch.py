"""Batch benchmark: `ncu-roofline batch` of many small reports into a history, against a shell loop of single
`ncu-roofline analyze --history` calls (what a CI script would do without `batch`).

The reports are copies of one shared report (`../shared/ncu-samples/nersc-gpp/output1.ncu-rep`, 151 KB) when the
`ncu-report` package is installed, else of `fixtures/example_h100_raw.csv`. The loop pays a Python start-up and the
imports per report, so it is timed on a subset (`--loop-subset`, default 50) and extrapolated linearly to all
reports, as the section written says. Both write a full history dataset; the batch result is checked to hold one
run per report.

The section goes at the end of benchmarks/RESULTS.md (after `## Notes`, which benchmarks/run.py keeps), replacing
an earlier `## Batch` section of this script.

    python benchmarks/batch.py                       # 1,000 reports, --jobs 2, loop over 50
    python benchmarks/batch.py --reports 100 --no-write
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLE = ROOT.parent / "shared" / "ncu-samples" / "nersc-gpp" / "output1.ncu-rep"
FIXTURE = ROOT / "fixtures" / "example_h100_raw.csv"
SECTION = "## Batch: 1,000 reports into a history"


def source_report() -> Path:
    if SAMPLE.is_file() and importlib.util.find_spec("ncu_report") is not None:
        return SAMPLE
    return FIXTURE


def make_copies(source: Path, folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".ncu-rep" if source.name.endswith(".ncu-rep") else source.suffix
    paths = []
    for i in range(count):
        path = folder / f"report{i:05d}{suffix}"
        shutil.copyfile(source, path)
        paths.append(path)
    return paths


def cli() -> list[str]:
    script = Path(sys.executable).with_name("ncu-roofline")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ncu_roofline.cli"]


def time_batch(folder: Path, history: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run([*cli(), "batch", str(folder), "--history", str(history), "--jobs", str(jobs)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_loop(reports: list[Path], history: Path) -> float:
    """A shell loop, as CI would write it: one process per report."""
    command = " ".join(cli())
    script = (f'for f in "$@"; do {command} analyze "$f" --rows 0 --history "{history}" '
              f'--run-id "$(basename "$f" | cut -d. -f1)" || exit 1; done')
    start = time.perf_counter()
    subprocess.run(["bash", "-c", script, "loop", *map(str, reports)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reports", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--loop-subset", type=int, default=50)
    parser.add_argument("--no-write", action="store_true", help="print the section, leave RESULTS.md alone")
    args = parser.parse_args()

    source = source_report()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ncu-roofline-batch-") as tmp:
        work = Path(tmp)
        reports = make_copies(source, work / "reports", args.reports)
        batch_s = time_batch(work / "reports", work / "batch-history", args.jobs)
        runs = len(list((work / "batch-history" / "kernels").glob("run_id=*/part-*.parquet")))
        if runs != args.reports:
            raise SystemExit(f"batch wrote {runs} runs for {args.reports} reports")
        one_s = time_batch(work / "reports", work / "batch-history-1", 1)  # what --jobs N is measured against
        subset = reports[: min(args.loop_subset, len(reports))]
        loop_s = time_loop(subset, work / "loop-history")
    loop_all_s = loop_s / len(subset) * len(reports)
    load_after = os.getloadavg()[0]
    lines = [
        SECTION, "",
        f"`python benchmarks/batch.py --reports {args.reports} --jobs {args.jobs} --loop-subset "
        f"{len(subset)}` on {os.cpu_count()} CPUs, 1-minute load average {load_before:.1f} before and "
        f"{load_after:.1f} after (the machine is shared: a load above the CPU count slows both sides alike).",
        f"Reports: {args.reports} copies of `{source.relative_to(ROOT.parent) if source == SAMPLE else source.name}` "
        f"({source.stat().st_size / 1e3:.0f} kB each).", "",
        "| how | reports | time | reports/s | per report |", "|---|---:|---:|---:|---:|",
        f"| `batch --jobs {args.jobs}` | {args.reports} | {batch_s:.1f} s | {args.reports / batch_s:.1f} | "
        f"{1e3 * batch_s / args.reports:.0f} ms |",
        f"| `batch --jobs 1` | {args.reports} | {one_s:.1f} s | {args.reports / one_s:.1f} | "
        f"{1e3 * one_s / args.reports:.0f} ms |",
        f"| shell loop of `analyze --history` (measured) | {len(subset)} | {loop_s:.1f} s | "
        f"{len(subset) / loop_s:.2f} | {1e3 * loop_s / len(subset):.0f} ms |",
        f"| shell loop, extrapolated linearly | {args.reports} | {loop_all_s:.0f} s | "
        f"{args.reports / loop_all_s:.2f} | {1e3 * loop_all_s / args.reports:.0f} ms |", "",
        f"`batch` is {loop_all_s / batch_s:.1f}x the loop's throughput: each loop step starts Python and imports "
        "pandas, pyarrow and altair again; `batch` pays that once per worker.",
        f"`--jobs {args.jobs}` took {batch_s / one_s:.2f}x the wall time of `--jobs 1` (target <= 0.65x for "
        "`--jobs 2` on an idle 2-core machine; a busy one shares its cores with the pool).", "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.no_write:
        return
    results = HERE / "RESULTS.md"
    text = results.read_text() if results.exists() else ""
    if SECTION in text:
        text = text[: text.index(SECTION)].rstrip("\n") + "\n"
    results.write_text(text.rstrip("\n") + "\n\n" + section)


if __name__ == "__main__":
    main()
