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
    merged = analyze([a, b], allow_empty=True)
    whole = analyze(FIXTURES / "details_2020.txt", allow_empty=True)
    assert len(merged.launches) == 3
    assert merged.launches["source_file"].iloc[0] == str(tmp_path / "out.metric_*.txt")
    for column in ("time_s", "flop_fp32", "bytes_dram", "bytes_l2", "bytes_l1", "ai_dram"):
        assert list(merged.launches[column]) == pytest.approx(list(whole.launches[column]), nan_ok=True)
    assert merged.launches["status"].str.contains("launch order differed").sum() == 0


def test_launch_order_that_differs_between_parts_is_aligned_where_launches_can_be_told_apart(tmp_path):
    # in part B, launches 1 (axpy) and 2 (memset) swap their IDs, as TensorFlow's threads do between runs
    a, b = split_by_metric(tmp_path, ["dram__bytes.sum"])
    text = b.read_text().replace('"1","4242"', '"X","4242"').replace('"2","4242"', '"1","4242"') \
        .replace('"X","4242"', '"2","4242"')
    b.write_text(text)
    result = analyze([a, b], allow_empty=True)
    whole = analyze(FIXTURES / "details_2020.txt", allow_empty=True)
    assert len(result.launches) == 3
    launches = result.launches.set_index("launch_id")
    # memset is launched once (A: ID 2; B: ID 1): one launch whatever its ID, with its counters from both parts
    memset = whole.launches.set_index("launch_id").loc[2]
    for column in ("time_s", "flop_fp32", "bytes_dram", "bytes_l2", "bytes_l1", "t_sol_s", "status"):
        assert launches.loc[2, column] == pytest.approx(memset[column], nan_ok=True) if column != "status" \
            else launches.loc[2, column] == memset[column]
    # axpy's launches sit at IDs 0, 1 in A and 0, 2 in B: the order moved, and nothing says which launch of B is
    # which launch of A. Its launch rows hold no values; its kernel is its sums
    assert launches.loc[[0, 1], "status"].str.startswith("alignment: by name").all()
    assert launches.loc[[0, 1], ["time_s", "bytes_dram", "bytes_l2", "t_sol_s"]].isna().all().all()
    kernels = result.kernels.set_index("kernel_name")
    axpy = kernels.loc["void axpy<float>(int, float, const float *, float *)"]
    assert axpy["launches"] == 2
    assert axpy["bytes_dram"] == pytest.approx(8e8 + 1.6e9)  # part A
    assert axpy["bytes_l2"] == pytest.approx(1.6e9 + 3.2e9)  # part B
    # (1e6 + 2e6) cycles at the mean clock of 1 GHz
    assert axpy["time_s"] == pytest.approx(3e-3, rel=1e-12)
    assert kernels.loc["memset_kernel(char *, int)", "launches"] == 1
    # launch 1 and launch 2 of part A sit at another ID in part B
    assert result.notes[0] == ("out.metric_*.txt: 2 metric-split parts of 3 launches each, aligned on "
                            "(kernel name, its k-th occurrence in the part); 2 of the 3 launches had a different "
                            "launch ID in some part (launch order differed between the runs)")
    assert "1 kernel(s) (2 launches) cannot be told apart launch by launch" in result.notes[1]


def test_files_with_other_kernels_are_separate_runs_not_parts(tmp_path):
    a, b = split_by_metric(tmp_path, ["dram__bytes.sum"], rename=("axpy<float>", "other<float>"))
    result = analyze([a, b], allow_empty=True)
    assert result.launches["source_file"].nunique() == 2
    assert len(result.launches) == 6
