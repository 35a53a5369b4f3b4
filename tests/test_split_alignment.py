"""Metric-split captures whose launches cannot be told apart across the parts: analysed from their sums by name.

Each capture is built here: two parts (one ncu run per metric), the bytes in one, the durations in the other.
"""

from __future__ import annotations

import pandas as pd
import pytest

from ncu_roofline import analyze

GPU = "Tesla V100-SXM2-16GB"
HEADER_2020 = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream",'
               '"Section Name","Metric Name","Metric Unit","Metric Value"')
HEADER_SHAPES = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
                 '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
K, OTHER = "k(float *)", "o(float *)"


def part_2020(path, pid, rows):
    """rows: (launch ID, kernel, metric, unit, value)."""
    lines = [HEADER_2020] + [f'"{i}","{pid}","python3","127.0.0.1","{name}","2020-Jun-09 20:05:31","1","7",'
                             f'"Command line profiler metrics","{metric}","{unit}","{value}"'
                             for i, name, metric, unit, value in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def part_shapes(path, pid, rows):
    """rows: (launch ID, kernel, grid, metric, unit, value); block (256, 1, 1), CC 7.0."""
    lines = [HEADER_SHAPES] + [f'"{i}","{pid}","app","127.0.0.1","{name}","1","7","(256, 1, 1)","{grid}","0","7.0",'
                               f'"Command line profiler metrics","{metric}","{unit}","{value}"'
                               for i, name, grid, metric, unit, value in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def swapped(tmp_path):
    # kernel k is launched twice: a large launch (1.5 GB of DRAM, 2 ms) and a small one (0.1 GB, 100 us).
    # Part A saw large k (ID 0), o (ID 1), small k (ID 2); part B saw small k (ID 0), large k (ID 1), o (ID 2).
    a = part_2020(tmp_path / "out.dram__bytes.sum.txt", 1, [
        (0, K, "dram__bytes.sum", "byte", "1500000000"),
        (1, OTHER, "dram__bytes.sum", "byte", "200000000"),
        (2, K, "dram__bytes.sum", "byte", "100000000"),
    ])
    b = part_2020(tmp_path / "out.gpu__time_duration.sum.txt", 2, [
        (0, K, "gpu__time_duration.sum", "usecond", "100"),
        (1, K, "gpu__time_duration.sum", "usecond", "2000"),
        (2, OTHER, "gpu__time_duration.sum", "usecond", "500"),
    ])
    return a, b


def test_launches_of_one_name_in_another_order_are_analysed_from_their_sums(swapped, tmp_path):
    result = analyze(list(swapped), gpu=GPU)
    launches = result.launches.set_index("launch_id")
    assert len(launches) == 3 and int(result.kernels["launches"].sum()) == 3
    # k's launch IDs are 0, 2 in part A and 0, 1 in part B: its 1st launch in A (1.5 GB) is not its 1st in B
    # (100 us): paired on (name, occurrence) it would read 1.5e9 B / 1e-4 s = 15 TB/s, 17x above a V100's DRAM.
    # So k's launch rows hold no values and say why
    for launch_id in (0, 2):
        row = launches.loc[launch_id]
        assert row["kernel_name"] == K
        assert row["status"].startswith("alignment: by name (launched in another order")
        for column in ("time_s", "bytes_dram", "t_sol_s", "headroom_s", "roofline_fraction", "peak_bytes_per_s_dram"):
            assert row[column] != row[column], column  # null
    # o is launched once: one launch whatever its ID (A: 1, B: 2), its counters from both parts
    o = launches.loc[1]
    # paired launch by launch, so no alignment status; its capture counts DRAM time and bytes only, so its speed of
    # light is a lower bound (pipeline/rank.py completeness)
    assert o["kernel_name"] == OTHER and o["status"] == "no FLOP counters, no L2, L1 byte counters: speed of light is a lower bound"
    assert o["bytes_dram"] == 2e8 and o["time_s"] == pytest.approx(500e-6, rel=1e-12)
    # k's kernel row is its sums: bytes 1.5e9 + 1e8 = 1.6e9, time 2 ms + 100 us = 2.1 ms, and its speed of light
    # is that of the sums: 1.6e9 B over the DRAM roof (762 GB/s achieved, under the roof)
    kernels = result.kernels.set_index("kernel_name")
    k = kernels.loc[K]
    assert k["launches"] == 2
    assert k["bytes_dram"] == 1.6e9
    assert k["time_s"] == pytest.approx(2.1e-3, rel=1e-12)
    peak = k["peak_bytes_per_s_dram"]
    assert peak == kernels.loc[OTHER, "peak_bytes_per_s_dram"] and peak > 1.6e9 / 2.1e-3
    assert k["t_sol_s"] == pytest.approx(1.6e9 / peak, rel=1e-12)
    assert k["headroom_s"] == pytest.approx(2.1e-3 - 1.6e9 / peak, rel=1e-12)
    assert k["roofline_fraction"] == pytest.approx(1.6e9 / peak / 2.1e-3, rel=1e-12)
    assert k["status"].startswith("alignment: by name")
    assert not result.launches["status"].str.contains("above_roof").any()
    # one run note names the kernel
    notes = [n for n in result.notes if "alignment: by name" in n]
    assert len(notes) == 1
    # outside the working folder, the capture is named by its file names, never its absolute path
    assert notes[0].startswith("out.*.sum.txt: 1 kernel(s) (2 launches) cannot be told "
                               "apart launch by launch across the parts (their launch order differs between the parts)")
    assert notes[0].endswith("their launch rows hold no values: k(…)")  # the short label, as in the tables


def test_by_name_totals_in_the_summaries_are_the_kernel_sums(swapped, tmp_path):
    import json

    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    out = CliRunner().invoke(app, ["analyze", *map(str, swapped), "--gpu", GPU, "--json", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    summary = json.loads((tmp_path / "s.json").read_text())
    # 2.1 ms of k (from its sums) + 0.5 ms of o; 3 launches
    assert summary["totals"]["time_s"] == pytest.approx(2.6e-3, rel=1e-12)
    assert summary["totals"]["launches"] == 3
    assert summary["totals"]["kernels_unknown_headroom"] == 0


def test_an_invalid_value_in_one_by_name_launch_leaves_the_sum_unknown(swapped):
    a, b = swapped
    a.write_text(a.read_text().replace('"100000000"', '"-100000000"'))  # small k's bytes: negative
    result = analyze([a, b], gpu=GPU)
    k = result.kernels.set_index("kernel_name").loc[K]
    # never the sum over the one launch that is left: k's totals are unknown and say so
    assert k["bytes_dram"] != k["bytes_dram"]
    assert "invalid dram__bytes.sum = -1e+08 (negative) (1 of 2 launches)" in k["status"]
    assert "2 of 2 launches left out of the totals" in k["status"]


def test_shapes_align_launches_that_the_name_alone_would_swap(tmp_path):
    # k launched in two shapes; part A: grid 100 (ID 0), grid 10 (ID 1); part B: grid 10 (ID 0), grid 100 (ID 1).
    # Paired on (name, occurrence) the 1.5 GB launch would get the 100 us duration; on (name, grid, block, k)
    # each launch is its own shape's
    a = part_shapes(tmp_path / "out.dram__bytes.sum.csv", 1, [
        (0, K, "(100, 1, 1)", "dram__bytes.sum", "byte", "1,500,000,000"),
        (1, K, "(10, 1, 1)", "dram__bytes.sum", "byte", "100,000,000"),
    ])
    b = part_shapes(tmp_path / "out.gpu__time_duration.sum.csv", 2, [
        (0, K, "(10, 1, 1)", "gpu__time_duration.sum", "usecond", "100"),
        (1, K, "(100, 1, 1)", "gpu__time_duration.sum", "usecond", "2000"),
    ])
    result = analyze([a, b], gpu=GPU)
    launches = result.launches.set_index("launch_id")
    assert launches.loc[0, "grid"] == "(100, 1, 1)" and launches.loc[0, "bytes_dram"] == 1.5e9
    assert launches.loc[0, "time_s"] == pytest.approx(2e-3, rel=1e-12)
    assert launches.loc[1, "bytes_dram"] == 1e8 and launches.loc[1, "time_s"] == pytest.approx(1e-4, rel=1e-12)
    assert not result.launches["status"].str.contains("alignment: by name").any()
    assert "aligned on (kernel name, grid, block, its k-th occurrence in the part)" in result.notes[0]
    # 1.5e9 B / 2e-3 s = 750 GB/s and 1e8 B / 1e-4 s = 1 TB/s: the small launch is above the V100's DRAM roof
    # only if the roof is under 1 TB/s; either way each row is one launch's own counters
    assert len(result.kernels) == 2


def test_shapes_that_differ_between_parts_are_by_name(tmp_path):
    # part B saw k's second launch in grid 20, part A in grid 10: the same launches cannot have other shapes, so
    # no launch of k can be paired; both parts hold two launches of k, whose sums still add up
    a = part_shapes(tmp_path / "out.dram__bytes.sum.csv", 1, [
        (0, K, "(100, 1, 1)", "dram__bytes.sum", "byte", "1500000000"),
        (1, K, "(10, 1, 1)", "dram__bytes.sum", "byte", "100000000"),
    ])
    b = part_shapes(tmp_path / "out.gpu__time_duration.sum.csv", 2, [
        (0, K, "(100, 1, 1)", "gpu__time_duration.sum", "usecond", "2000"),
        (1, K, "(20, 1, 1)", "gpu__time_duration.sum", "usecond", "100"),
    ])
    result = analyze([a, b], gpu=GPU)
    assert result.launches["status"].str.startswith("alignment: by name (launch shapes differ").all()
    assert result.launches["time_s"].isna().all()
    kernels = result.kernels
    assert len(kernels) == 1
    k = kernels.iloc[0]
    assert k["launches"] == 2 and k["bytes_dram"] == 1.6e9 and k["time_s"] == pytest.approx(2.1e-3, rel=1e-12)
    assert pd.isna(k["grid"])  # the sums belong to no one shape: grid unknown


def test_a_name_launched_in_the_same_id_order_everywhere_stays_aligned(tmp_path):
    # k at IDs 0 and 1 in both parts: aligned launch by launch, as the unsplit export would read
    a = part_2020(tmp_path / "out.dram__bytes.sum.txt", 1, [
        (0, K, "dram__bytes.sum", "byte", "1500000000"),
        (1, K, "dram__bytes.sum", "byte", "100000000"),
    ])
    b = part_2020(tmp_path / "out.gpu__time_duration.sum.txt", 2, [
        (0, K, "gpu__time_duration.sum", "usecond", "2000"),
        (1, K, "gpu__time_duration.sum", "usecond", "100"),
    ])
    result = analyze([a, b], gpu=GPU)
    launches = result.launches.set_index("launch_id")
    assert launches.loc[0, "bytes_dram"] == 1.5e9 and launches.loc[0, "time_s"] == pytest.approx(2e-3, rel=1e-12)
    assert launches.loc[1, "bytes_dram"] == 1e8 and launches.loc[1, "time_s"] == pytest.approx(1e-4, rel=1e-12)
    assert len(result.notes) == 1 or "alignment: by name" not in " ".join(result.notes)
