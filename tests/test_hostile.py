"""Hostile input: real and fixture exports, mutated, never crash the analysis and never lose a launch quietly.

Each of 300 examples (deterministic: the hypothesis profile in conftest.py) takes an export (fixtures/*.csv|txt,
and the small real ones in ../shared/ncu-samples when present), applies one to three mutations (truncate at any
byte, drop or duplicate a column, swap units, insert garbage lines, NaN/inf/negative/huge values and bad thousands
separators, bytes that are not UTF-8 or are terminal escapes in kernel names, empty values, wrong IDs or one ID
given to two launches in another spelling, a 175 KB field, repeated, deleted or shuffled rows, CRLF, a BOM) and
analyses it. The property: `analyze()` either returns an Analysis holding exactly the launches the mutated table
lists (counted here, independently, with Python's csv module) with every value valid or null, or raises
InputError with one line that names the file and a reason that fits the table (checked against the oracle). Any
other exception fails the test. A table with a header and no launch row holds no launch to analyse: it is refused.
"""

from __future__ import annotations

import csv
import io
import math
import random
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ncu_roofline import InputError, analyze
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.core.vocabulary import COUNTED_COLUMNS as COUNTED
from ncu_roofline.readers import long_pages, raw_page

from conftest import FIXTURES, SAMPLES

csv.field_size_limit(1 << 30)  # the oracle reads whatever the mutations wrote (the readers must cope on their own)

SOURCES = sorted(p for p in [*FIXTURES.glob("*.csv"), *FIXTURES.glob("*.txt")])
if SAMPLES.is_dir():  # small real exports only, to keep the examples within a minute
    SOURCES += sorted(p for p in [*SAMPLES.rglob("*.csv"), *SAMPLES.rglob("*.txt")] if p.stat().st_size <= 30_000)

# The columns of an ncu CSV that identify a launch (what a reader must find in a row to read it).
IDENTITY = ("ID", "Process ID", "Process Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "CC")
HOSTILE_VALUES = ("nan", "NaN", "inf", "-inf", "Infinity", "-5", "-1,234.5", "1e308", "1e999", "-1e999", "1e-400",
                  "9" * 400, "", " ", "n/a", "-", "1,2,3", "0x1F", "5\"", "1.2.3", "١٢٣", "\x00", "12 34", "+.5",
                  "1.234,5", "0", "-0", "-1e-300", "1,234,567")
HOSTILE_UNITS = ("", "furlong", "Kbyte", "Mbyte", "Gbyte", "byte", "msecond", "usecond", "nsecond", "Ghz", "%",
                 "cycle/nsecond", "inst/cycle", "mbyte", "µs", "\udcff\udcfe", "byte/byte/byte", "/")
GARBAGE_LINES = ("==PROF== Connected to process 1 (/usr/bin/python3)", "==WARNING== Found outstanding GPU clock reset",
                 "==ERROR== LaunchFailed", "Epoch 1/1, loss=0.2500", "1,2,3", "7", "", "   ", ",,,,,,,,,,,,,,,,",
                 "Passed.", "\udcff\udcfe\udc80 not utf-8", "a\x00b", "wrote 7 rows to C:\\Users\\me\\timing.csv")


# ---------------------------------------------------------------------------------------------------- mutations


def _split(data: bytes) -> tuple[str, list[list[str]] | None, str]:
    """(text before the table, parsed table rows or None, line ending), bytes kept through surrogateescape."""
    text = data.decode("utf-8", errors="surrogateescape")
    match = re.search(r'^(\ufeff)?"(ID|Process ID)",', text, re.MULTILINE)
    if match is None:
        return text, None, "\n"
    start = match.start() + (1 if match.group(1) else 0)
    table = text[start:]
    newline = "\r\n" if "\r\n" in table[:20_000] else "\n"
    return text[:start], list(csv.reader(io.StringIO(table, newline=""))), newline


def _join(preamble: str, rows: list[list[str]] | None, newline: str) -> bytes:
    out = io.StringIO(newline="")
    out.write(preamble)
    if rows is not None:
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator=newline).writerows(rows)
    return out.getvalue().encode("utf-8", errors="surrogateescape")


def _column(rows: list[list[str]], name: str) -> int | None:
    return rows[0].index(name) if rows and name in rows[0] else None


def drop_column(rows, rnd):
    if rows and rows[0]:
        i = rnd.randrange(len(rows[0]))
        for row in rows:
            if len(row) > i:
                del row[i]


def duplicate_column(rows, rnd):
    if rows and rows[0]:
        i = rnd.randrange(len(rows[0]))
        for row in rows:
            if len(row) > i:
                row.insert(i, row[i])


def swap_units(rows, rnd):
    unit = _column(rows, "Metric Unit")
    if unit is not None:
        for row in rows[1:]:
            if len(row) > unit and rnd.random() < 0.3:
                row[unit] = rnd.choice(HOSTILE_UNITS)
    elif len(rows) > 1 and rows[1] and rows[1][0] == "":  # the raw page's units row
        for j in range(11, len(rows[1])):
            if rnd.random() < 0.3:
                rows[1][j] = rnd.choice(HOSTILE_UNITS)


def hostile_values(rows, rnd):
    value = _column(rows, "Metric Value") or _column(rows, "Average")
    columns = [value] if value is not None else list(range(11, len(rows[0]) if rows else 0))
    for row in rows[1:]:
        for j in columns:
            if len(row) > j and row[0] != "" and rnd.random() < 0.2:
                row[j] = rnd.choice(HOSTILE_VALUES)


def empty_values(rows, rnd):
    value = _column(rows, "Metric Value")
    if value is not None:
        for row in rows[1:]:
            if len(row) > value and rnd.random() < 0.3:
                row[value] = ""


def non_utf8_names(rows, rnd):
    name = _column(rows, "Kernel Name")
    if name is not None:
        bad = rnd.choice(("\udcff", "\udce9", "\udcc3(", "\udcf0\udc9f\udc98"))  # Latin-1, broken sequences
        for row in rows[1:]:
            if len(row) > name and rnd.random() < 0.5:
                cut = rnd.randrange(len(row[name]) + 1)
                row[name] = row[name][:cut] + bad + row[name][cut:]


def hostile_ids(rows, rnd):
    launch = _column(rows, "ID")
    if launch is not None:
        for row in rows[1:]:
            if len(row) > launch and rnd.random() < 0.1:
                row[launch] = rnd.choice(("-1", "1.5", "abc", "1e3", "99999999999999999999", "", " 7 ", "1,000",
                                          "0x10", "nan", "3", "+1", "01", "1.0", "1,0", "-0"))


def giant_field(rows, rnd):
    name = _column(rows, "Kernel Name")
    if name is not None and len(rows) > 1:
        row = rows[rnd.randrange(1, len(rows))]
        if len(row) > name:
            row[name] = "void k<" + "float, " * 25_000 + "int>()"  # 175 KB: over the csv module's default limit


def repeat_rows(rows, rnd):
    for _ in range(rnd.randint(1, 3)):
        if len(rows) > 1:
            i = rnd.randrange(1, len(rows))
            rows.insert(rnd.randrange(1, len(rows) + 1), list(rows[i]))


def delete_rows(rows, rnd):
    for _ in range(rnd.randint(1, 3)):
        if rows:
            del rows[rnd.randrange(len(rows))]


def shuffle_rows(rows, rnd):
    body = rows[1:]
    rnd.shuffle(body)
    rows[1:] = body


def share_an_id(rows, rnd):
    """Give every row of one launch the ID of another, spelled another way (`01`, `+1`, ` 1`, `1.0`): two
    launches with one ID, which must be refused or kept apart, never merged."""
    launch = _column(rows, "ID")
    if launch is None:
        return
    ids = sorted({row[launch] for row in rows[1:] if len(row) > launch and row[launch].strip().isdigit()})
    if len(ids) >= 2:
        victim, target = rnd.sample(ids, 2)
        spelling = rnd.choice(("0{}", "+{}", " {}", "{}.0", "{}"))
        for row in rows[1:]:
            if len(row) > launch and row[launch] == victim:
                row[launch] = spelling.format(target.strip())


def control_names(rows, rnd):
    """Kernel names with terminal escapes, BEL, NUL, backticks, U+FFFE: data, to be kept exactly."""
    name = _column(rows, "Kernel Name")
    if name is not None:
        bad = rnd.choice(("\x1b[2J\x1b]0;t\x07", "`**B**`", "\x00\x08", "\ufffe", "[/]"))
        for row in rows[1:]:
            if len(row) > name:
                row[name] = bad + row[name]


ROW_MUTATIONS = (drop_column, duplicate_column, swap_units, hostile_values, empty_values, non_utf8_names, hostile_ids,
                 giant_field, repeat_rows, delete_rows, shuffle_rows, share_an_id, control_names)


def truncate(data: bytes, rnd) -> bytes:
    return data[:rnd.randrange(len(data) + 1)]


def garbage_lines(data: bytes, rnd) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rnd.randint(1, 4)):
        if rnd.random() < 0.3:
            line = bytes(rnd.choice(b"abc,;|0123456789 \t\x00\xff\xfe.-=") for _ in range(rnd.randint(0, 60)))
        else:
            line = rnd.choice(GARBAGE_LINES).encode("utf-8", errors="surrogateescape")
        lines.insert(rnd.randrange(len(lines) + 1), line)
    return b"\n".join(lines)


def crlf(data: bytes, rnd) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def bom(data: bytes, rnd) -> bytes:
    return b"\xef\xbb\xbf" + data


BYTE_MUTATIONS = (truncate, garbage_lines, crlf, bom)


def mutate(data: bytes, rnd: random.Random) -> tuple[bytes, list[str]]:
    """One to three mutations; row-level ones first (on the parsed table), then byte-level ones."""
    chosen = rnd.sample(ROW_MUTATIONS + BYTE_MUTATIONS, rnd.randint(1, 3))
    preamble, rows, newline = _split(data)
    applied = []
    if rows is not None:
        for mutation in chosen:
            if mutation in ROW_MUTATIONS:
                mutation(rows, rnd)
                applied.append(mutation.__name__)
        data = _join(preamble, rows, newline)
    for mutation in (m for m in BYTE_MUTATIONS if m in chosen):
        data = mutation(data, rnd)
        applied.append(mutation.__name__)
    return data, applied


# ---------------------------------------------------------------------------------------------------- the oracle

MUST_FAIL = "must fail"  # the table has a row no reader may skip or accept: a bad ID, a damaged raw row, a cut row
NOT_COUNTED = "not counted"  # per-kernel summaries: no launch IDs to count
NO_COUNTERS = "no roofline metrics"  # readable, but no FLOP or byte counter with a value: must be refused so
NO_METRICS_REFUSAL = "no roofline metrics:"  # how the analysis words that refusal
# Most sources name no GPU: a table row for every launch, so that a readable table with counters is always placed on
# a roofline (a run with no placeable kernel is refused, which is not what this property is about).
GPU = "NVIDIA H100 PCIe"
NOTHING_PLACED = "no kernel can be placed on a roofline"  # counter columns, but no complete definition
_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_INTEGER_TEXT = re.compile(r"^\s*[+-]?\d[\d,]*\s*$")
_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")
SHARED_ID_REFUSAL = "is used by two launches"  # how the details reader words a shared ID


def _launch_id(cell: str) -> int | None:
    """A launch ID: a whole number >= 0 (ncu counts launches from 0), commas only between groups of three."""
    text = re.sub(r'[\t\n\f\r "]', "", cell)
    if "," in text and not _GROUPED.match(text):
        return None
    text = text.replace(",", "")
    if not _NUMBER.match(text):
        return None
    number = float(text)
    if not math.isfinite(number) or number != int(number) or abs(number) >= 2 ** 53 or number < 0:
        return None
    return int(number)


class LaunchIds(set):
    """The launch IDs of a table, and whether one ID is used by two launches (`shared`): its rows come back after
    another launch's rows, or name two kernels. The reader may refuse such a table for that reason."""

    shared = False


def _shares_an_id(header: list[str], rows: list[list[str]], id_index: int) -> bool:
    """Read off the complete rows in file order; the reader looks at a subset of them (the rows of the page's
    usual width), so a shared ID it finds is always one seen here too."""
    name_index = header.index("Kernel Name") if "Kernel Name" in header else None
    seen: set[int] = set()
    last, last_name = None, None
    for row in rows:
        launch = _launch_id(row[id_index])
        name = row[name_index] if name_index is not None else None
        if launch != last:
            if launch in seen:
                return True
            seen.add(launch)
            last, last_name = launch, name
        elif name != last_name:
            return True
    return False


# The pages ncu writes as CSV (NCU's CLI reference: `--page details`, `--page raw`, `--print-summary per-kernel`),
# told apart by the columns this oracle reads off each, so that a table is a page exactly when every column its
# count below needs is there (worked out from what a page holds, not from the readers' code):
# - details: one row per metric of a launch; the launch is counted by its "ID", a counter told by its "Metric Name",
#   its number read under "Metric Value".
# - summary: one row per metric of a kernel, statistics over its launches: the "Metric Name", the "Average", and
#   "Invocations" (how many launches the row stands for; without it no run time can be summed).
# - raw: one row per launch and one column per metric (so no "Metric Name" column): each row starts with the launch's
#   "ID" (the column counted: index 0) and says its "Kernel Name" (what its launches group into).
METRIC_NAME = "Metric Name"
LONG_PAGES = {"details": ("ID", METRIC_NAME, "Metric Value"),  # the value column last
              "summary": ("Invocations", METRIC_NAME, "Average")}
RAW_LEADS, RAW_NAMES = "ID", "Kernel Name"


def _layout(header: list[str]) -> str | None:
    """The page `header` heads, or None when a column the oracle reads is missing (a reader cannot read it)."""
    for page, reads in LONG_PAGES.items():  # details before summary: a details page never has "Average"
        if all(column in header for column in reads):
            return page
    if header[:1] == [RAW_LEADS] and RAW_NAMES in header and METRIC_NAME not in header:
        return "raw"
    return None


def _number_text(cell: str) -> bool:
    """A value the readers must take as a number (thousands separators between groups of three digits allowed,
    so "1,234" but not "1,2,3" or "1.234,5"), NaN and infinities left out."""
    text = cell.strip().replace('"', "")
    if "," in text and not _GROUPED.match(text):
        return False
    text = text.replace(",", "")
    return bool(_NUMBER.match(text)) and math.isfinite(float(text))


def counter_values(header: list[str], body: list[list[str]], layout: str) -> tuple[bool, bool]:
    """(some work/traffic counter is named, one of them holds a number), read off the table with the csv module.

    A counter is what the catalogue counts as work or traffic (not time or clocks): the same list `ncu-roofline
    metrics` asks for. This is the rule for "no roofline metrics", worked out independently of the readers.
    """
    catalogue = load_catalogue()
    is_counter = lambda name: catalogue.counts_work(name.strip(), COUNTED)  # noqa: E731
    if layout == "raw":
        columns = [j for j, name in enumerate(header) if is_counter(name)]
        values = any(len(row) == len(header) and _number_text(row[j]) for row in body for j in columns)
        return bool(columns), values
    name_at, value_at = header.index(METRIC_NAME), header.index(LONG_PAGES[layout][-1])
    rows = [row for row in body if len(row) > max(name_at, value_at) and is_counter(row[name_at])]
    return bool(rows), any(_number_text(row[value_at]) for row in rows)


def expected_outcome(data: bytes) -> tuple[set[int] | str, str | None]:
    """What the analysis must do with `data`: (launch IDs or MUST_FAIL or NOT_COUNTED, NO_COUNTERS or None).

    The second part says whether a readable table holds a FLOP or byte counter: NO_COUNTERS when none is named
    (it must be refused for that), "maybe" when counters are named but none holds a number (either outcome), None
    when one holds a number (it must be analysed)."""
    launches = expected_launches(data)
    if launches == MUST_FAIL:
        return launches, None
    header, body, layout, _ = _table(data)
    named, valued = counter_values(header, body, layout)
    return launches, (NO_COUNTERS if not named else None if valued else "maybe")


def _table(data: bytes) -> tuple[list[str], list[list[str]], str, str] | None:
    """The first table in `data` with a known layout: header, non-empty rows, layout, and the text from its header
    on; None when there is none."""
    text = data.decode("utf-8", errors="replace")
    for match in re.finditer(r'^\ufeff?"?(ID|Process ID)"?,', text, re.MULTILINE):
        start = match.start() + (1 if text[match.start()] == "\ufeff" else 0)
        rows = list(csv.reader(io.StringIO(text[start:], newline="")))
        header = [cell.strip() for cell in rows[0]]
        layout = _layout(header)
        if layout is not None:
            return header, [row for row in rows[1:] if row], layout, text[start:]
    return None


def expected_launches(data: bytes) -> set[int] | str:
    """The launch IDs a reader must return for `data`, MUST_FAIL, or NOT_COUNTED; counted with the csv module."""
    found = _table(data)
    if found is None:
        return MUST_FAIL  # no table
    header, body, layout, table_text = found
    if not body:
        return MUST_FAIL  # a header and no rows: nothing to analyse
    if layout == "summary":
        if "Metric Unit" not in header:
            return MUST_FAIL  # a summary without units cannot be read (fixtures/bad/summary_no_metric_unit.csv)
        return MUST_FAIL if _cut_last_row(data, table_text, len(header)) else NOT_COUNTED
    if layout == "details":
        needed = [header.index(c) for c in (*IDENTITY, "Metric Name", "Metric Unit", "Metric Value") if c in header]
        if "Metric Unit" not in header:
            return MUST_FAIL
        required = max(needed) + 1
        complete = [row for row in body if len(row) >= required]
        id_index = header.index("ID")
    else:
        required = len(header)
        if body and body[0][0].strip() == "" and len(body[0]) == len(header):
            body = body[1:]  # the units row
        complete = [row for row in body if len(row) == required]
        if any(_INTEGER_TEXT.match(row[0]) for row in body if len(row) != required):
            return MUST_FAIL  # a launch row with the wrong number of fields
        id_index = 0
    if _cut_last_row(data, table_text, required):
        return MUST_FAIL
    if not complete:
        # A header (and a units row) with no launch row holds no launch to analyse: the reader refuses it in one
        # line ("the raw page has a header but no launch rows", "... but no metric rows").
        return MUST_FAIL
    ids = [_launch_id(row[id_index]) for row in complete]
    if any(i is None for i in ids):
        return MUST_FAIL
    if layout == "raw" and len(set(ids)) != len(ids):
        return MUST_FAIL
    launches = LaunchIds(ids)
    launches.shared = layout == "details" and _shares_an_id(header, complete, id_index)
    return launches


def _cut_last_row(data: bytes, table: str, required: int) -> bool:
    if not data or data.endswith((b"\n", b"\r")):
        return False
    last = re.split(r"\r\n|\r|\n", table)[-1]
    if last == table:  # the header is the only line
        return False
    if last.count('"') % 2:
        return True
    return len(next(csv.reader([last]), [])) < required


# ---------------------------------------------------------------------------------------------------- the property


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def check(path: Path, data: bytes, applied: list[str]) -> None:
    path.write_bytes(data)
    expected, counters = expected_outcome(data)
    try:
        result = analyze(path, gpu=GPU)
    except InputError as error:
        line = error.line()
        assert "\n" not in line and "\r" not in line, line
        assert str(path) in line, line
        # The reason must fit the table: a table the oracle reads whole is refused only for holding no counter
        # (and then for that reason); a damaged one by its reader, before any roofline check.
        no_metrics = error.message.startswith(NO_METRICS_REFUSAL)
        if error.message.startswith(NOTHING_PLACED) and expected != MUST_FAIL:
            # readable, but what is left of its counters places no kernel (every kernel has a launch without a
            # complete definition, or without a roof for it): said so. Read it anyway to check the reason.
            whole = analyze(path, gpu=GPU, allow_empty=True)
            placed = whole.kernels["t_sol_s"].notna() & whole.kernels["time_s"].notna()  # a roof and a duration
            assert not placed.any(), f"{applied}: refused with a placeable kernel: {line}"
            if expected != NOT_COUNTED:
                assert set(whole.launches["launch_id"]) == expected, applied
            return
        if "small batches" in applied and "giant_field" in applied and "could not be parsed" in error.message:
            return  # a 175 KB row cannot fit the 4 KiB block this test shrank the reader to; real blocks are MBs
        if getattr(expected, "shared", False) and SHARED_ID_REFUSAL in error.message:
            return  # two launches with one ID: refused for that, never merged into one
        if expected == MUST_FAIL:
            assert not no_metrics, f"{applied}: a damaged table got past the reader: {line}"
        else:
            assert no_metrics and counters in (NO_COUNTERS, "maybe"), f"{applied}: a readable table refused: {line}"
        return
    assert expected != MUST_FAIL, f"{applied}: analysed a table with a row that cannot be read whole"
    assert counters != NO_COUNTERS, f"{applied}: analysed a table without any FLOP or byte counter"
    if expected == NOT_COUNTED:
        return
    _every_value_valid_or_flagged(result, applied)
    ids = result.launches["launch_id"].tolist()
    assert len(ids) == len(set(ids)), f"{applied}: a launch ID twice"
    assert set(ids) == expected, f"{applied}: launches {sorted(set(ids) ^ expected)[:10]} differ from the table"
    assert int(result.kernels["launches"].sum()) == len(expected), applied


PHYSICAL = ("time_s", "flop_", "bytes_", "ai_", "flop_per_s", "peak_", "t_sol_s", "roofline_fraction")


def _every_value_valid_or_flagged(result, applied: list[str]) -> None:
    """No infinity anywhere; no negative amount, time or rate (an impossible input value is null and flagged)."""
    for frame in (result.launches, result.kernels):
        for column in frame.select_dtypes("number").columns:
            values = frame[column].to_numpy(dtype="float64")
            assert not np.isinf(values).any(), (applied, column)
            if column.startswith(PHYSICAL):
                assert not (values < 0).any(), (applied, column, values[values < 0][:3])
        assert not (frame["time_s"].to_numpy(dtype="float64") == 0).any(), (applied, "time_s = 0")


@pytest.mark.slow
@settings(max_examples=150)  # derandomised by the profile in conftest.py: the same 150 on every machine
@given(source=st.sampled_from(SOURCES), rnd=st.randoms(use_true_random=False), small_batches=st.booleans())
# Drawn on a machine without ../shared/ncu-samples (other sources, other examples): every launch row deleted, a
# header and a units row left. No launch to analyse: refused in one line naming the file (the oracle once expected
# an empty analysis).
@example(source=FIXTURES / "tensor_types_raw.csv", rnd=random.Random(29), small_batches=False)
def test_a_mutated_export_is_analysed_whole_or_refused_in_one_line(work, source, rnd, small_batches):
    data, applied = mutate(source.read_bytes(), rnd)
    if not small_batches:
        check(work / "input.csv", data, [source.name, *applied])
        return
    # The same file read in 4 KiB blocks, odd rows gathered three at a time: launches that straddle batches,
    # and rule rows read apart from their launch's metric rows, as in a file of many gigabytes.
    with mock.patch.object(long_pages, "BLOCK_SIZE", 4096), mock.patch.object(raw_page, "BLOCK_SIZE", 4096), \
            mock.patch.object(long_pages, "_ODD_BATCH_ROWS", 3):
        check(work / "input.csv", data, [source.name, *applied, "small batches"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_the_real_cli_on_mutated_exports(tmp_path, seed):
    """The same property through the console entry point: exit 0 with every launch in launches.parquet, or exit 2
    with one line on stderr that names the file; never a traceback."""
    rnd = random.Random(seed)
    source = rnd.choice(SOURCES)
    data, applied = mutate(source.read_bytes(), rnd)
    path = tmp_path / "input.csv"
    path.write_bytes(data)
    expected = expected_launches(data)
    proc = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(path), "-o", str(tmp_path / "out"),
                           "--rows", "0", "--gpu", GPU], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode == 2:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0], proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    assert expected != MUST_FAIL, applied
    if expected != NOT_COUNTED:
        launches = pd.read_parquet(tmp_path / "out" / "launches.parquet")
        assert set(launches["launch_id"]) == expected and len(launches) == len(expected), applied


def test_the_oracle_counts_what_the_fixtures_hold():
    """The independent count agrees with the readers on the untouched inputs."""
    for source in SOURCES:
        expected, counters = expected_outcome(source.read_bytes())
        try:
            result = analyze(source, gpu=GPU)
        except InputError as error:
            if error.message.startswith(NOTHING_PLACED) and expected != MUST_FAIL:
                # readable, but no kernel has both a roof and a duration (one part of a split capture): refused
                whole = analyze(source, gpu=GPU, allow_empty=True)
                assert (whole.kernels["t_sol_s"].isna() | whole.kernels["time_s"].isna()).all(), (source, error)
                continue
            assert expected == MUST_FAIL or (counters == NO_COUNTERS
                                             and error.message.startswith(NO_METRICS_REFUSAL)), (source, error)
            continue
        assert counters is None, source
        if isinstance(expected, set):
            assert set(result.launches["launch_id"]) == expected, source


def test_the_oracle_tells_each_fixture_page_as_its_name_says():
    """The page of each untouched fixture, by the name its maker gave it (details_*, summary_*, *_raw), is the one the
    oracle's column rule finds: the rule is checked against a reference it did not produce."""
    named = {p: next(page for page in ("details", "summary", "raw") if page in p.stem) for p in FIXTURES.glob("*.*")
             if p.suffix in {".csv", ".txt"} and any(page in p.stem for page in ("details", "summary", "raw"))}
    assert len(named) >= 8, sorted(p.name for p in named)
    for path, page in named.items():
        found = _table(path.read_bytes())
        assert found is not None and found[2] == page, (path.name, found and found[2])
