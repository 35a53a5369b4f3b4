"""The details-page reader's two paths (readers/long_pages.py): uniform pages are parsed on every core at once,
pages with rows of another width in file order. Both must give the same table, row for row."""

from __future__ import annotations

import pandas as pd
import pytest

from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.readers import long_pages
from ncu_roofline.readers.csv_export import read_csv_export

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def details_page(launches: int, *, extra_field_at: int | None = None) -> str:
    """`launches` launches of two kernels, 9 rows each: time 1,000 + i ns (thousands separator), DRAM bytes
    2 Kbyte x (i + 1), and 7 rows the reader must skip. The launch `extra_field_at` has one row with a stray
    trailing field (another width than every other row)."""
    lines = [HEADER]
    for i in range(launches):
        kernel = f'"void k{i % 2}<float, {i % 2}>(float*, int)"'
        ident = f'"{i}","42","app","host",{kernel},"1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","S"'
        rows = [f'"gpu__time_duration.sum","nsecond","{1000 + i:,}"',
                f'"dram__bytes_read.sum","Kbyte","{2 * (i + 1)}"']
        rows += [f'"unused__metric_{j}.sum","","{j}"' for j in range(7)]
        for j, row in enumerate(rows):
            tail = ',"stray"' if (i == extra_field_at and j == 1) else ""
            lines.append(f"{ident},{row}{tail}")
    return "\n".join(lines) + "\n"


def read(path) -> pd.DataFrame:
    return read_csv_export(path, load_catalogue().wants)


def test_the_parallel_read_reports_progress_to_the_end_of_the_file(tmp_path):
    path = tmp_path / "details.csv"
    path.write_text(details_page(50))
    seen: list[int] = []
    read_csv_export(path, load_catalogue().wants, seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == path.stat().st_size


def test_a_uniform_page_is_read_in_parallel_and_matches_the_serial_read(tmp_path, monkeypatch):
    path = tmp_path / "details.csv"
    path.write_text(details_page(400))
    monkeypatch.setattr(long_pages, "BLOCK_SIZE", 16 * 1024)  # ~10 blocks: launches straddle block edges
    parallel_calls = []
    real_parallel = long_pages._read_parallel
    monkeypatch.setattr(long_pages, "_read_parallel", lambda *a: parallel_calls.append(1) or real_parallel(*a))
    parallel = read(path)
    assert parallel_calls == [1]
    monkeypatch.setattr(long_pages, "_uniform", lambda start, width: False)
    serial = read(path)
    pd.testing.assert_frame_equal(parallel, serial)
    assert parallel["launch_id"].tolist() == list(range(400))
    # launch 123: 1,123 ns; 2 Kbyte x 124 = 248,000 bytes
    row = parallel.set_index("launch_id").loc[123]
    assert row["gpu__time_duration.sum"] == pytest.approx(1123e-9)
    assert row["dram__bytes_read.sum"] == pytest.approx(248_000)
    assert row["kernel_name"] == "void k1<float, 1>(float*, int)"


def test_a_row_of_another_width_past_the_sample_falls_back_to_the_ordered_read(tmp_path, monkeypatch):
    path = tmp_path / "details.csv"
    path.write_text(details_page(300, extra_field_at=250))  # row 2,251: far past the 200 sampled rows
    serial_calls = []
    real_serial = long_pages._read_serial
    monkeypatch.setattr(long_pages, "_read_serial", lambda *a: serial_calls.append(1) or real_serial(*a))
    table = read(path).set_index("launch_id")
    assert serial_calls == [1]
    assert len(table) == 300
    # The odd row is launch 250's DRAM row: 2 Kbyte x 251 = 502,000 bytes, read, not dropped.
    assert table.loc[250, "dram__bytes_read.sum"] == pytest.approx(502_000)
    assert table.loc[250, "gpu__time_duration.sum"] == pytest.approx(1250e-9)
