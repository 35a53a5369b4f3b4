"""Issue 34's speed target: reading an `nsys export --type sqlite` timeline of 10^6 kernel launches
(readers/nsys.read_timeline: the checked GROUP BY, the StringIds lookup, the frame) against a bare sqlite3
GROUP BY of the same table by the same keys (count and summed duration, nothing checked), in one process,
interleaved, best of N: both start from a warm page cache and neither pays an interpreter start-up.

    python benchmarks/timeline.py [--launches N] [--repeat R] [--workdir DIR]   # prints one JSON line

The table is written as nsys declares it (CUPTI_ACTIVITY_KIND_KERNEL, StringIds), 200 kernels of PyTorch-like
names (300-character templates) with a few launch shapes each, on one device.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

KERNEL_SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "nsys" / "kernel_schema.sql"  # as nsys declares it

KEYS = ("demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
        "deviceId")
BARE = (f"SELECT {', '.join(KEYS)}, count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL "
        f"GROUP BY {', '.join(KEYS)}")


def make(path: Path, launches: int, kernels: int = 200, seed: int = 34) -> Path:
    """The timeline, written once per (launches) and kept: its content depends only on the seed."""
    if path.is_file():
        return path
    rng = random.Random(seed)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    db = sqlite3.connect(partial)
    db.executescript(KERNEL_SCHEMA.read_text(encoding="utf-8"))
    strings = []
    for k in range(kernels):
        base = f"kernel_{k}"
        strings += [(3 * k + 1, f"void at::native::{base}<(int)128, (int)4, at::native::BinaryFunctor<c10::BFloat16, "
                                f"c10::BFloat16, at::native::MulFunctor<float>>, std::array<char *, (unsigned long)"
                                f"{k % 4}>>(int, T2, T3)"),
                    (3 * k + 2, base), (3 * k + 3, f"_Z{len(base)}{base}ILi128ELi4EEviT_T0_")]
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", strings)
    clock = 0
    batch = []
    for n in range(launches):
        k = rng.randrange(kernels)
        shape = rng.randrange(3)
        duration = 1_000 + rng.randrange(50_000)
        batch.append((clock, clock + duration, 0, 1, 7, n, 1, 3 * k + 1, 3 * k + 2, 3 * k + 3, 32,
                      128 << shape, 1, 1, 256, 1, 1))
        clock += duration + 500
        if len(batch) == 100_000:
            db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", batch)
            batch = []
    if batch:
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", batch)
    db.commit()
    db.close()
    partial.rename(path)
    return path


def bare(path: Path) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return len(connection.execute(BARE).fetchall())
    finally:
        connection.close()


def ours(path: Path) -> int:
    from ncu_roofline.readers.nsys import read_timeline

    return len(read_timeline(path).kernels)


def measure(path: Path, repeat: int) -> dict:
    ours(path), bare(path)  # imports and the page cache warm
    best = {"ours": float("inf"), "bare": float("inf")}
    for _ in range(repeat):
        for name, read in (("ours", ours), ("bare", bare)):
            start = time.perf_counter()
            read(path)
            best[name] = min(best[name], time.perf_counter() - start)
    return {"ours_s": best["ours"], "bare_s": best["bare"], "ratio": best["ours"] / best["bare"],
            "kernels": ours(path)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ncu-roofline-bench")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = make(args.workdir / f"timeline_{args.launches}.sqlite", args.launches)
    print(json.dumps({"launches": args.launches, **measure(path, args.repeat)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
