"""Run `ncu-roofline` on the bundled example and every shared sample into a directory, or diff two such directories.

Why: a reshape must not change what users get. Run it once with the old tool and once with the new one, then diff:

    python benchmarks/compare_outputs.py run /tmp/before --exe /work/main/.venv/bin/ncu-roofline
    python benchmarks/compare_outputs.py run /tmp/after
    python benchmarks/compare_outputs.py diff /tmp/before /tmp/after

Each input gets a folder with -o outputs (Parquet, vl.json, html), --summary-md, --json, the terminal text and
the exit code. Inputs that are refused keep their exit code and stderr line, so refusals are compared too.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "ncu-samples"
SUFFIXES = {".csv", ".txt", ".ncu-rep", ".ncu-repz"}


def inputs() -> list[Path]:
    found = [ROOT / "fixtures" / "example_h100_raw.csv"]
    if SAMPLES.is_dir():
        found += sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    return found


def slug(path: Path) -> str:
    try:
        rel = path.relative_to(SAMPLES)
    except ValueError:
        rel = path.relative_to(ROOT)
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(rel))


def run_one(exe: str, args: list[str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COLUMNS="160", NO_COLOR="1", TERM="dumb")
    done = subprocess.run([exe, *args, "-o", str(folder / "out"), "--summary-md", str(folder / "summary.md"),
                           "--json", str(folder / "summary.json")], capture_output=True, env=env, timeout=600)
    (folder / "stdout.txt").write_bytes(done.stdout.replace(str(folder).encode(), b"DIR"))
    (folder / "stderr.txt").write_bytes(done.stderr.replace(str(folder).encode(), b"DIR"))
    (folder / "rc.txt").write_text(f"{done.returncode}\n")


def run(dest: Path, exe: str) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    jobs = [(["analyze", str(p)], dest / slug(p)) for p in inputs()]
    compare_dir = ROOT / "fixtures" / "compare"
    jobs.append((["compare", str(compare_dir / "base.csv"), str(compare_dir / "head.csv")], dest / "compare"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda job: run_one(exe, *job), jobs))
    print(f"{len(jobs)} runs into {dest}")


def diff(a: Path, b: Path) -> int:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = 0
    for rel in sorted(files_a ^ files_b):
        print(f"only in {'first' if rel in files_a else 'second'}: {rel}")
        bad += 1
    for rel in sorted(files_a & files_b):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            print(f"differs: {rel}")
            bad += 1
    print(f"{len(files_a & files_b)} files compared, {bad} differences")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("dest", type=Path)
    r.add_argument("--exe", default=shutil.which("ncu-roofline") or "ncu-roofline")
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    ns = parser.parse_args()
    if ns.cmd == "run":
        run(ns.dest, ns.exe)
        return 0
    return diff(ns.a, ns.b)


if __name__ == "__main__":
    sys.exit(main())
