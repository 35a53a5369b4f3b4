"""The raw-page reader's two paths (readers/raw_page.py): metrics parsed as numbers by the CSV reader itself, or,
when a cell is something it cannot read as one (a thousands separator, a word), the page read again as text and
parsed by readers/columns.py. Both must give the same table: the values written out below, the same notes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.readers import raw_page
from ncu_roofline.readers.csv_export import read_csv_export

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","dram__bytes.sum","gpu__time_duration.sum","lts__t_bytes.sum"')
UNITS = '"","","","","","","","","","","","Kbyte","nsecond","byte"'
# dram__bytes.sum (Kbyte) cells and what each is in bytes (None: null); a note is due where the cell is no number
DRAM = [("2", 2000.0, False), ("1e5", 1e8, False), (" 7", 7000.0, False), ("", None, False), ("n/a", None, False),
        ("-", None, False), ("nan", None, True), ("inf", None, True), ("1e306", None, True), ("0.5", 500.0, False)]


def page(lts_cell: str) -> str:
    """One launch per DRAM cell above; lts__t_bytes.sum is 64 bytes except on the last launch, `lts_cell`."""
    lines = [HEADER, UNITS]
    for i, (dram, _, _) in enumerate(DRAM):
        lts = lts_cell if i == len(DRAM) - 1 else "64"
        lines.append(f'"{i}","42","app","host","k","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0",'
                     f'"{dram}","{1000 + i}","{lts}"')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("lts_cell, text_read", [("4096", False), ("4,096", True)])
def test_both_reads_give_the_values_and_notes_written_out(tmp_path, monkeypatch, lts_cell, text_read):
    parsed_as_text: list[int] = []
    as_text = raw_page._text_numbers_into
    monkeypatch.setattr(raw_page, "_text_numbers_into", lambda column, out: parsed_as_text.append(1)
                        or as_text(column, out))
    path = tmp_path / "raw.csv"
    path.write_text(page(lts_cell))
    table = read_csv_export(path, load_catalogue().wants).set_index("launch_id")
    assert bool(parsed_as_text) == text_read  # the page took the path this case is about
    for i, (cell, expected, noted) in enumerate(DRAM):
        value = table.loc[i, "dram__bytes.sum"]
        assert (np.isnan(value) if expected is None else value == expected), (cell, value)
        assert ("value of dram__bytes.sum is not a number" in table.loc[i, "reader_notes"]) == noted, cell
    assert table["gpu__time_duration.sum"].tolist() == [(1000 + i) * 1e-9 for i in range(len(DRAM))]
    assert table["lts__t_bytes.sum"].tolist() == [64.0] * (len(DRAM) - 1) + [4096.0]  # "4,096" is a number


@pytest.mark.parametrize("before, width", [(0, 3), (1_500_000, 3), (0, 120_000), (1_048_000, 3)])
def test_the_table_is_found_as_the_whole_scan_finds_it(tmp_path, monkeypatch, before, width):
    """The first MiB settles where the table starts only when the header and its sample lie inside it: a table
    after 1.5 MB of program output, a header of 120,000 metrics (2.6 MB), a header cut by the first MiB's end."""
    from ncu_roofline.readers import text

    names = [f"m{j}__x.sum" for j in range(width)]
    lines = ["program output line"] * (before // 20) + [HEADER + "," + ",".join(f'"{m}"' for m in names)]
    lines += [f'"{i}","42","app","host","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","1","2","3",'
              + ",".join(["5"] * width) for i in range(3)]
    path = tmp_path / "page.csv"
    path.write_text("\n".join(lines) + "\n")
    found = text.locate_table(path)
    monkeypatch.setattr(text, "_FIRST_BYTES", 1 << 30)  # the whole scan only, as before the first look
    whole = text.locate_table(path)
    assert (found.offset, found.header, found.layout, found.sample_rows) == \
        (whole.offset, whole.header, whole.layout, whole.sample_rows)
    assert found.offset == len("\n".join(lines[:-4])) + (1 if lines[:-4] else 0)  # the header line's first byte
    assert found.header[-1] == names[-1] and len(found.sample_rows) == 3


@pytest.mark.parametrize("ids, refused", [([0, 1, 2, 3], None), ([3, 0, 2, 1], None), ([5, 2, 9, 2], "2 is on 2"),
                                          ([1, 1, 2, 3], "1 is on 2"), ([4, 7, 4, 7], "4 is on 2 rows (2 IDs")])
def test_ids_in_any_order_are_read_and_a_repeated_one_refused(tmp_path, ids, refused):
    """ncu writes IDs in increasing order (no sort then needed to find a repeat); a page in another order is read
    as it stands, one that repeats an ID in any order is refused naming it."""
    from ncu_roofline.core.errors import InputError

    lines = [HEADER, UNITS] + [f'"{i}","42","app","host","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",'
                               f'"{j + 1}","{j + 10}","64"' for j, i in enumerate(ids)]
    path = tmp_path / "raw.csv"
    path.write_text("\n".join(lines) + "\n")
    if refused is None:
        table = read_csv_export(path, load_catalogue().wants)
        assert table["launch_id"].tolist() == ids  # the page's order, every row
        assert table["dram__bytes.sum"].tolist() == [1000.0 * (j + 1) for j in range(len(ids))]  # Kbyte
    else:
        with pytest.raises(InputError, match=re.escape(refused)):
            read_csv_export(path, load_catalogue().wants)


def test_identity_text_over_many_batches_reads_as_written(tmp_path, monkeypatch):
    """Identity text comes from the parser as one dictionary per batch (readers/raw_page.py); over batches whose
    names differ (and repeat across them), every launch keeps its own name, stripped, a Latin-1 byte as U+FFFD,
    an empty name null, and its process ID as the integer written."""
    monkeypatch.setattr(raw_page, "BLOCK_SIZE", 1024)  # a few rows per batch
    names = [b"gemm", b" padded ", b"caf\xe9", b"", b"gemm<128>", b"k0"]
    expected = ["gemm", "padded", "caf\ufffd", None, "gemm<128>", "k0"]
    rows = [HEADER.encode(), UNITS.encode()]
    for i in range(300):
        name = names[(i * 7 // 5) % len(names)]
        rows.append(b'"%d","%d","app","host","%s","1","7","(128, 1, 1)","(%d, 1, 1)","0","9.0","2","1000","64"'
                    % (i, 100 + i % 3, name, i % 4 + 1))
    path = tmp_path / "raw.csv"
    path.write_bytes(b"\n".join(rows) + b"\n")
    table = read_csv_export(path, load_catalogue().wants)
    assert [None if v is pd.NA else v for v in table["kernel_name"].tolist()] == \
        [expected[(i * 7 // 5) % len(names)] for i in range(300)]
    assert table["process_id"].tolist() == [100 + i % 3 for i in range(300)]
    assert table["grid"].tolist() == [f"({i % 4 + 1}, 1, 1)" for i in range(300)]


@pytest.mark.parametrize("rows_hint", [1, 37, 1_000_000, 2 ** 48])  # 2^48: no such block can be had (MemoryError)
def test_metric_values_over_many_batches_land_on_their_launch(tmp_path, monkeypatch, rows_hint):
    """The metric block is filled batch by batch from a guess of the row count (readers/raw_page._Block): a guess
    far too low (the block grows, more than once), about right, far too high, or beyond memory, every launch keeps
    its own values and its own notes."""
    monkeypatch.setattr(raw_page, "BLOCK_SIZE", 1024)
    monkeypatch.setattr(raw_page, "_rows_hint", lambda start, units: rows_hint)
    odd = {17: "nan", 140: "inf", 299: "nan"}
    rows = [HEADER, UNITS]
    for i in range(300):
        dram = odd.get(i, f"{i * 1.5}")
        rows.append(f'"{i}","42","app","host","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","{dram}","{1000 + i}",'
                    f'"{i % 7}"')
    path = tmp_path / "raw.csv"
    path.write_text("\n".join(rows) + "\n")
    table = read_csv_export(path, load_catalogue().wants)
    dram = table["dram__bytes.sum"].to_numpy()
    assert [i for i in range(300) if np.isnan(dram[i])] == sorted(odd)
    assert all(dram[i] == i * 1500.0 for i in range(300) if i not in odd)  # Kbyte
    assert table["gpu__time_duration.sum"].tolist() == [(1000 + i) * 1e-9 for i in range(300)]
    assert table["lts__t_bytes.sum"].tolist() == [float(i % 7) for i in range(300)]
    noted = [i for i, text in enumerate(table["reader_notes"]) if "dram__bytes.sum is not a number" in text]
    assert noted == sorted(odd)


@pytest.mark.parametrize("cells, text, number", [
    ([b" 42 "] * 5, ["42"] * 5, [42] * 5),  # one value on every row: filled at once
    ([None] * 4, [None] * 4, [None] * 4),  # every row null
    ([b"42", None, b"42"], ["42", None, "42"], [42, None, 42]),  # one value and a null: row by row
    ([b"", b""], [None, None], [None, None]),  # one value, empty once stripped
    ([b"7", b"1,024", b"7"], ["7", "1,024", "7"], [7, 1024, 7]),
])
def test_identity_values_as_written(cells, text, number):
    """readers/columns.decode_values over a parser's dictionary column, chunked as the parser hands it over: text
    stripped (empty is null), numbers through the identity rules, whether rows share one value or not."""
    import pyarrow as pa

    from ncu_roofline.readers.columns import _integer, decode_values

    column = pa.chunked_array([pa.array(cells[:2], pa.binary()).dictionary_encode(),
                               pa.array(cells[2:], pa.binary()).dictionary_encode()])
    as_text = decode_values(column)
    assert str(as_text.dtype) == "string" and len(as_text) == len(cells)
    assert [None if v is pd.NA else v for v in as_text.tolist()] == text
    as_number = decode_values(column, _integer, dtype="Int64")
    assert str(as_number.dtype) == "Int64"
    assert [None if v is pd.NA else v for v in as_number.tolist()] == number


@pytest.mark.parametrize("cells, ids, refused", [
    (["0", "1", "007"], [0, 1, 7], None),  # digits only: one integer cast
    (["0", "+1", "2.0"], [0, 1, 2], None),  # other spellings of an integer: the float parse
    (["0", "1", "9007199254740991"], [0, 1, 2 ** 53 - 1], None),
    (["0", "0x1f"], None, "0x1f"),  # Arrow's integer cast would read hex: refused as before
    (["0", "9007199254740993"], None, "9007199254740993"),  # beyond 2^53
    (["0", "-1"], None, "-1"),
])
def test_launch_ids_as_written(tmp_path, cells, ids, refused):
    from ncu_roofline.core.errors import InputError

    lines = [HEADER, UNITS] + [f'"{cell}","42","app","host","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","1","2","3"'
                               for cell in cells]
    path = tmp_path / "raw.csv"
    path.write_text("\n".join(lines) + "\n")
    if refused is None:
        assert read_csv_export(path, load_catalogue().wants)["launch_id"].tolist() == ids
    else:
        with pytest.raises(InputError, match=re.escape(f"the ID column holds {refused!r}, not a launch number")):
            read_csv_export(path, load_catalogue().wants)
