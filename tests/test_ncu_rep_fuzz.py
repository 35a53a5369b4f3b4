"""Damaged `.ncu-rep` reports: truncations, appended bytes and bit flips of every shared report (12 per report, 228
with the 19 shared ones), each ending in a whole, valid analysis or in one line that says why.

Run in-process: before writing this, 597 such mutations were loaded each in a forked child (`ncu_report` is native
code that could abort or crash the test process); every child exited normally, none hung (the slowest took 1.1 s),
so isolating each load would only cost time. Seeds are fixed, so CI sees the same cases every run.

The property, per case:
- refused: an InputError whose one line names the file and gives a reason from REASONS (the reason is checked,
  not only that something refused);
- read: every launch has a kernel name and at least one metric; every metric value is a finite number >= 0 or
  null (a flipped byte may still change a value to another plausible one: the format has no checksums);
- for the first readable case of each report, the whole analysis: every numeric result finite and >= 0 where it is
  physical, or null, and a status on every row.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from ncu_roofline import InputError, analyze
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.core.launch_table import metric_columns
from ncu_roofline.readers import read_file
from ncu_roofline.pipeline.validity import flag_invalid_values

from conftest import SAMPLES

pytestmark = pytest.mark.conformance  # the real exports in ../shared/ncu-samples

pytest.importorskip("ncu_report")

REPORTS = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".ncu-rep", ".nsight-cuprof-report")) \
    if SAMPLES.is_dir() else []
CASES_PER_REPORT = 12
REASONS = re.compile("|".join([
    r"truncated Nsight Compute report \(the data ends inside block \d+, at \d+ bytes\)",
    r"corrupt Nsight Compute report \(block \d+ has an implausible header length \d+\)",
    r"corrupt Nsight Compute report \(block \d+ has a malformed header\)",
    r"corrupt Nsight Compute report \(block \d+: (entries overrun the payload size|payload size \d+ but entries use)",
    r"corrupt Nsight Compute report \(implausible file header length \d+\)",
    r"corrupt Nsight Compute report \(\d+ byte\(s\) after the last complete block \(block \d+\) that do not start "
    r"another block: data appended to the report\)",
    r"corrupt Nsight Compute report \(bad protobuf",
    r"corrupt Nsight Compute report: launch \d+ has (no kernel name|no metric value|no kernel name and no metric "
    r"value)",
    r"corrupt Nsight Compute report: ncu_report could read \d+ of its \d+",
    r"not an Nsight Compute report",
    r"Pascal \(CC 6\.x\) reports use pre-Volta metric names",  # a flip in the CC field
    r"no roofline metrics",
]))
# Result columns that are a physical amount, never negative.
NON_NEGATIVE = ("time_s", "flop_", "bytes_", "ai_", "flop_per_s", "peak_", "t_sol_s", "roofline_fraction")


def mutations(data: bytes, rnd: random.Random) -> list[tuple[str, bytes]]:
    """4 truncations (one in the first KiB), one appended byte, 3 appended bytes, 6 flips (4 single bits, one byte
    set to 0x00, one run of 8 random bytes)."""
    size = len(data)
    cases = [("cut", data[:rnd.randrange(1, min(size, 1024))])]
    cases += [("cut", data[:rnd.randrange(1, size)]) for _ in range(3)]
    cases += [("append 1", data + bytes([rnd.randrange(256)])), ("append 3", data + bytes(rnd.randrange(256)
                                                                                        for _ in range(3)))]
    for kind in ("bit", "bit", "bit", "bit", "zero", "run"):
        flipped = bytearray(data)
        at = rnd.randrange(4, size)  # the NVR magic itself is the sniff: a flip there is "not a report"
        if kind == "bit":
            flipped[at] ^= 1 << rnd.randrange(8)
        elif kind == "zero":
            flipped[at] = 0
        else:
            flipped[at:at + 8] = bytes(rnd.randrange(256) for _ in range(8))
        cases.append((f"{kind}@{at}", bytes(flipped)))
    return cases


def test_there_are_enough_cases():
    if not REPORTS:
        pytest.skip("../shared/ncu-samples is not present")
    assert len(REPORTS) * CASES_PER_REPORT >= 200


@pytest.mark.slow
@pytest.mark.parametrize("report", REPORTS, ids=[f"{p.parent.name}/{p.name}" for p in REPORTS])
def test_a_damaged_report_is_read_whole_or_refused_with_its_reason(tmp_path, report):
    catalogue = load_catalogue()
    rnd = random.Random(f"{report.parent.name}/{report.name}")  # str seeds hash deterministically
    analysed = False
    outcomes = []
    for index, (kind, data) in enumerate(mutations(report.read_bytes(), rnd)):
        path = tmp_path / f"case{index}{report.suffix}"
        path.write_bytes(data)
        try:
            table = flag_invalid_values(read_file(path, catalogue.wants), catalogue.is_timing)
        except InputError as error:
            line = error.line()
            assert "\n" not in line and line.startswith(str(path)), (kind, line)
            assert REASONS.search(error.message), (kind, line)
            if kind.startswith("append"):
                assert "truncated" not in line, (kind, line)  # appended bytes are not a cut
            outcomes.append("refused")
            continue
        names = table["kernel_name"].astype("object")
        assert names.notna().all() and (names.astype(str).str.strip() != "").all(), kind
        metrics = table[metric_columns(table)].to_numpy(dtype="float64")
        assert (table[metric_columns(table)].notna().any(axis=1)).all(), kind
        assert not (np.isinf(metrics) | (metrics < 0)).any(), kind  # finite and >= 0, or null
        outcomes.append("read")
        if not analysed:
            analysed = True
            result = analyze(path, allow_empty=True)  # values are the point here, roofs or not
            for frame in (result.launches, result.kernels):
                assert frame["status"].notna().all()
                for column in frame.select_dtypes("number").columns:
                    values = frame[column].to_numpy(dtype="float64")
                    assert not np.isinf(values).any(), (kind, column)
                    if column.startswith(NON_NEGATIVE):
                        assert not (values < 0).any(), (kind, column)
    assert len(outcomes) == CASES_PER_REPORT
    assert outcomes[:4].count("refused") >= 3  # a cut report is refused (a cut inside the first KiB always is)
