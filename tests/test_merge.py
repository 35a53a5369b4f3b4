"""Several files are one analysis; metric-split captures (one ncu run per metric) are merged per launch."""

from __future__ import annotations

import pytest

from ncu_roofline import analyze

from conftest import FIXTURES

HEADER_END = 4  # details_2020.txt: 4 lines of program output, then the header


def split_by_metric(tmp_path, metrics_a, rename=None):
    lines = (FIXTURES / "details_2020.txt").read_text().splitlines()
    head, rows = lines[: HEADER_END + 1], lines[HEADER_END + 1:]
    part_a = [r for r in rows if any(f'"{m}"' in r for m in metrics_a)]
    part_b = [r for r in rows if r not in part_a]
    if rename:
        part_b = [r.replace(*rename) for r in part_b]
    a, b = tmp_path / "out.metric_a.txt", tmp_path / "out.metric_b.txt"
    a.write_text("\n".join(head + part_a) + "\n")
    b.write_text("\n".join(head + part_b) + "\n")
    return a, b


def test_metric_split_parts_merge_into_one_row_per_launch(tmp_path):
    a, b = split_by_metric(tmp_path, ["dram__bytes.sum", "lts__t_bytes.sum"])
    merged = analyze([a, b])
    whole = analyze(FIXTURES / "details_2020.txt")
    assert len(merged.launches) == 3
    assert merged.launches["source_file"].iloc[0] == str(tmp_path / "out.metric_*.txt")
    for column in ("time_s", "flop_fp32", "bytes_dram", "bytes_l2", "bytes_l1", "ai_dram"):
        assert list(merged.launches[column]) == pytest.approx(list(whole.launches[column]), nan_ok=True)
    assert merged.launches["status"].str.contains("launch order differed").sum() == 0


def test_launch_order_that_differs_between_parts_still_adds_up_per_kernel(tmp_path):
    # in part B, launches 1 and 2 swap their IDs (as a real TensorFlow capture did for 25 of 559 launches)
    a, b = split_by_metric(tmp_path, ["dram__bytes.sum"])
    text = b.read_text().replace('"1","4242"', '"X","4242"').replace('"2","4242"', '"1","4242"') \
        .replace('"X","4242"', '"2","4242"')
    b.write_text(text)
    result = analyze([a, b])
    partial = result.launches["status"].str.contains("1 of 2 files hold this")
    assert partial.sum() == 4  # (1, memset) and (2, axpy) from A, (1, axpy) and (2, memset) from B
    kernels = result.kernels.set_index("kernel_name")
    axpy = kernels.loc["void axpy<float>(int, float, const float *, float *)"]
    assert axpy["launches"] == 2  # the count in any one part, not the number of partial rows
    assert axpy["bytes_dram"] == pytest.approx(8e8 + 1.6e9)
    assert axpy["time_s"] == pytest.approx((1e6 + 2e6) / 1e9)
    assert kernels.loc["memset_kernel(char *, int)", "launches"] == 1


def test_files_with_other_kernels_are_separate_runs_not_parts(tmp_path):
    a, b = split_by_metric(tmp_path, ["dram__bytes.sum"], rename=("axpy<float>", "other<float>"))
    result = analyze([a, b])
    assert result.launches["source_file"].nunique() == 2
    assert len(result.launches) == 6
