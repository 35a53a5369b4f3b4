"""Prove a reshape or a speed-up changed no output: run `ncu-roofline` with two builds on the same inputs, then
compare every file byte for byte.

Inputs: fixtures/*.csv and *.txt, every shared sample (../shared/ncu-samples: CSV/text exports and .ncu-rep
reports), and two generated details/raw exports (benchmarks/generate.py) large enough to span several read batches.
Each input gets a folder with the `analyze -o` outputs (Parquet, Vega-Lite, HTML), the --summary-md and --json
summaries, stdout, stderr and the exit code, so refusals are compared too; one more folder holds `compare` of the
fixtures' base and head runs.

    python benchmarks/same_outputs.py run /tmp/before --exe /work/main/.venv/bin/ncu-roofline
    python benchmarks/same_outputs.py run /tmp/after
    python benchmarks/same_outputs.py diff /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "ncu-samples"
SUFFIXES = (".csv", ".txt", ".ncu-rep", ".ncu-repz")
GENERATED = (("details", 2_000), ("raw", 300))


def inputs(workdir: Path) -> list[Path]:
    found = sorted(p for p in (ROOT / "fixtures").iterdir() if p.is_file() and p.name.endswith((".csv", ".txt")))
    if SAMPLES.is_dir():
        found += sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from generate import generate_details, generate_raw

    for page, launches in GENERATED:
        path = workdir / f"generated_{page}_{launches}.csv"
        if not path.exists():
            (generate_details if page == "details" else generate_raw)(path, launches, seed=1)
        found.append(path)
    return found


def slug(path: Path) -> str:
    for base in (SAMPLES, ROOT):
        try:
            return re.sub(r"[^A-Za-z0-9._-]", "_", str(path.relative_to(base)))
        except ValueError:
            continue
    return re.sub(r"[^A-Za-z0-9._-]", "_", path.name)


def run_one(exe: list[str], args: list[str], folder: Path) -> None:
    folder.mkdir(parents=True)
    env = dict(os.environ, COLUMNS="160", NO_COLOR="1", TERM="dumb")
    done = subprocess.run([*exe, *args, "-o", str(folder / "out"), "--summary-md", str(folder / "summary.md"),
                           "--json", str(folder / "summary.json")], capture_output=True, env=env, timeout=600)
    (folder / "stdout.txt").write_bytes(done.stdout.replace(str(folder).encode(), b"DIR"))
    (folder / "stderr.txt").write_bytes(done.stderr.replace(str(folder).encode(), b"DIR"))
    (folder / "rc.txt").write_text(f"{done.returncode}\n")


def run(dest: Path, exe: list[str], workdir: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    workdir.mkdir(parents=True, exist_ok=True)
    jobs = [(["analyze", str(p)], dest / slug(p)) for p in inputs(workdir)]
    pair = ROOT / "fixtures" / "compare"
    jobs.append((["compare", str(pair / "base.csv"), str(pair / "head.csv")], dest / "compare"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda job: run_one(exe, *job), jobs))
    print(f"{len(jobs)} inputs -> {dest}")


def diff(before: Path, after: Path) -> int:
    names = sorted({p.relative_to(before) for p in before.rglob("*") if p.is_file()}
                   | {p.relative_to(after) for p in after.rglob("*") if p.is_file()})
    different = [n for n in names if not (before / n).is_file() or not (after / n).is_file()
                 or (before / n).read_bytes() != (after / n).read_bytes()]
    inputs_seen = len({n.parts[0] for n in names})
    for name in different:
        print(f"DIFFERS: {name}")
    print(f"{len(names)} files from {inputs_seen} inputs compared byte by byte: {len(different)} differ")
    return 1 if different else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("dest", type=Path)
    run_parser.add_argument("--exe", help="the ncu-roofline to run (default: this checkout, python -m ncu_roofline.cli)")
    run_parser.add_argument("--workdir", type=Path, default=Path("/tmp/ncu-roofline-same-outputs"),
                            help="where the generated inputs are kept (same path for both runs: it is in the outputs)")
    diff_parser = sub.add_parser("diff")
    diff_parser.add_argument("before", type=Path)
    diff_parser.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.dest, [args.exe] if args.exe else [sys.executable, "-m", "ncu_roofline.cli"], args.workdir)
    else:
        sys.exit(diff(args.before, args.after))


if __name__ == "__main__":
    main()
