"""Benchmark pages shaped like real exports (issue #38 item 3), scaled from shared samples to any launch count.

`benchmarks/generate.py` writes synthetic pages (12 kB per launch); the pages users collect look different, and
the readers' costs follow their shape. Each page here repeats the launches of one real export, renumbered, so the
columns, names, units and values are the sample's own:

- details: `nersc-gpp/output1.csv`, a details page of 15 metric rows per launch (ncu --csv --metrics).
- narrow: the same launches pivoted to a raw page, one narrow row per launch with a units row (what the README
  recommends collecting: `ncu --csv --page raw --metrics ...`); the grouping commas of the details page's values
  go, as a raw page writes them without.
- b200: `Roofline-Analysis/torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv`, a 475-column B200 raw page with a
  units row and 16 launches.

The samples are read from ../shared/ncu-samples (never copied into the repository); `ensure_page` returns None
when the sample is absent, and the benchmark says the target was skipped.

    python benchmarks/real_pages.py narrow 100000 /tmp/narrow.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-samples"
SOURCES = {"details": SAMPLES / "nersc-gpp" / "output1.csv", "narrow": SAMPLES / "nersc-gpp" / "output1.csv",
           "b200": SAMPLES / "Roofline-Analysis" / "torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv"}
IDENTITY = 11  # ID .. CC: the launch's own columns before the metrics (details and raw pages alike)


def _table(path: Path) -> list[list[str]]:
    """The CSV rows from the header on (the program's output and ==PROF== lines before it dropped)."""
    lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return list(csv.reader(lines[start:]))


def _launches(rows: list[list[str]]) -> list[list[list[str]]]:
    """Details rows grouped by launch (ID), in file order."""
    groups: dict[str, list[list[str]]] = {}
    for row in rows:
        groups.setdefault(row[0], []).append(row)
    return list(groups.values())


def write_details(path: Path, launches: int) -> None:
    header, *body = _table(SOURCES["details"])
    blocks = _launches(body)
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL)
        out.writerow(header)
        for n in range(launches):
            for row in blocks[n % len(blocks)]:
                out.writerow([str(n), *row[1:]])


def write_narrow(path: Path, launches: int) -> None:
    header, *body = _table(SOURCES["narrow"])
    name, unit, value = (header.index(c) for c in ("Metric Name", "Metric Unit", "Metric Value"))
    blocks = _launches(body)
    metrics = sorted({row[name] for block in blocks for row in block})
    units = {row[name]: row[unit] for block in blocks for row in block}
    rows = []
    for block in blocks:
        values = {row[name]: row[value].replace(",", "") for row in block}
        rows.append([*block[0][1:IDENTITY], *(values.get(m, "") for m in metrics)])
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL)
        out.writerow([*header[:IDENTITY], *metrics])
        out.writerow([""] * IDENTITY + [units[m] for m in metrics])
        for n in range(launches):
            out.writerow([str(n), *rows[n % len(rows)]])


def write_b200(path: Path, launches: int) -> None:
    header, units, *body = _table(SOURCES["b200"])
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL)
        out.writerow(header)
        out.writerow(units)
        for n in range(launches):
            out.writerow([str(n), *body[n % len(body)][1:]])


WRITERS = {"details": write_details, "narrow": write_narrow, "b200": write_b200}


def ensure_page(workdir: Path, page: str, launches: int) -> Path | None:
    """The page of `launches` launches in `workdir` (written once, then reused), or None without its sample."""
    if not SOURCES[page].is_file():
        return None
    path = workdir / f"real_{page}_{launches}.csv"
    if not path.exists():
        partial = path.with_suffix(".partial")
        WRITERS[page](partial, launches)
        partial.rename(path)
    return path


if __name__ == "__main__":
    page, launches, dest = sys.argv[1], int(float(sys.argv[2])), Path(sys.argv[3])
    WRITERS[page](dest, launches)
