"""Kernel groups are sums of their own launch rows, on every shared sample and every input form.

A group's extensive columns (time, every FLOP and byte column, t_sol, headroom) equal the sum of its launches' to
1e-9; its ratios are recomputed from those sums; no launch table is longer than the input's launch count.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ncu_roofline import analyze
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.core.errors import InputError
from ncu_roofline.pipeline.group import SUMMED, group_keys
from ncu_roofline.readers import read_file

from conftest import SAMPLES

SUFFIXES = (".csv", ".txt", ".ncu-rep", ".nsight-cuprof-report")
CLIMATE = "DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp"


def sample_inputs() -> list[str]:
    if not SAMPLES.is_dir():
        return ["(samples absent)"]
    files = sorted(str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*") if p.is_file()
                   and p.name.endswith(SUFFIXES) and CLIMATE not in str(p))
    return [CLIMATE, *files, "NCAR-GPU_workshop/MW_Baseline.ncu-rep+NCAR-GPU_workshop/MW_DivToMult.ncu-rep",
            "nersc-gpp/output0.ncu-rep+nersc-gpp/output1.ncu-rep+nersc-gpp/output4.ncu-rep"]


def assert_groups_are_sums(result) -> None:
    keys = group_keys(by_nvtx=False)
    launches = result.launches.copy()
    for key in keys:
        launches[key] = launches[key].astype("object").where(launches[key].notna(), "")
    kernels = result.kernels.copy()
    for key in keys:
        kernels[key] = kernels[key].astype("object").where(kernels[key].notna(), "")
    # launch rows of a metric-split kernel aligned by name hold no values: that kernel is its parts' sums
    # (test_split_alignment.py, test_reference_nersc.py); every other group is the sum of its launch rows
    by_name_rows = launches["status"].astype(str).str.startswith("alignment: by name")
    by_name = kernels["status"].astype(str).str.contains("alignment: by name")
    assert launches.loc[by_name_rows, list(SUMMED)].isna().all().all()
    assert int(kernels.loc[by_name, "launches"].sum()) == int(launches.loc[by_name_rows, "launches"].sum())
    launches, kernels = launches[~by_name_rows], kernels[~by_name]
    grouped = launches.groupby(keys, sort=True)
    sums = grouped[list(SUMMED)].sum(min_count=1)
    unknown = grouped[list(SUMMED)].agg(lambda s: s.isna().any())
    sums = sums.where(~unknown.astype(bool))
    sums["launches"] = grouped["launches"].sum()
    table = kernels.set_index(keys).sort_index()
    assert len(table) == len(sums)
    sums = sums.loc[table.index]
    assert (table["launches"].to_numpy() == sums["launches"].to_numpy()).all()
    for column in SUMMED:
        got, want = table[column].to_numpy(dtype="float64"), sums[column].to_numpy(dtype="float64")
        assert np.array_equal(np.isnan(got), np.isnan(want)), column
        assert np.allclose(got, want, rtol=1e-9, atol=0, equal_nan=True), column
    with np.errstate(divide="ignore", invalid="ignore"):
        for ratio, top, bottom in (("ai_dram", "flop_total", "bytes_dram"), ("ai_l2", "flop_total", "bytes_l2"),
                                   ("ai_l1", "flop_total", "bytes_l1"), ("flop_per_s", "flop_total", "time_s"),
                                   ("roofline_fraction", "t_sol_s", "time_s")):
            want = table[top].to_numpy(dtype="float64") / table[bottom].to_numpy(dtype="float64")
            want = np.where(np.isfinite(want), want, np.nan)
            assert np.allclose(table[ratio].to_numpy(dtype="float64"), want, rtol=1e-12, atol=0,
                               equal_nan=True), ratio


@pytest.mark.parametrize("name", sample_inputs())
def test_every_kernel_row_is_the_sum_of_its_launch_rows(name: str) -> None:
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    paths = [SAMPLES / part for part in name.split("+")]
    if any(p.suffix in (".ncu-rep", ".nsight-cuprof-report") for p in paths):
        pytest.importorskip("ncu_report")
    try:
        result = analyze(paths, allow_empty=True)
    except InputError:
        return  # refused in one line (no table, Pascal, ...): nothing to add up
    assert_groups_are_sums(result)
    # the input's own launch count: per file, read alone; a metric-split capture is one set of launches
    files = sorted(Path(paths[0]).glob("out.*.txt")) if name == CLIMATE else paths
    counts = [int(read_file(f, load_catalogue().wants)["launches"].sum()) for f in files]
    bound = max(counts) if name == CLIMATE else sum(counts)
    assert int(result.launches["launches"].sum()) <= bound
    if name == CLIMATE:
        assert len(result.launches) == bound == 559


def test_ncar_pair_group_is_the_sum_of_its_two_launches(samples):
    pytest.importorskip("ncu_report")
    result = analyze([samples / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep",
                      samples / "NCAR-GPU_workshop" / "MW_DivToMult.ncu-rep"])
    launches = result.launches[result.launches["kernel_name"] == "compute_tendencies_x_279_gpu"]
    group = result.kernels.set_index("kernel_name").loc["compute_tendencies_x_279_gpu"]
    assert len(launches) == 2 and group["launches"] == 2
    # each launch reads its section's rates x its own duration; the group adds the two totals
    base, head = launches.iloc[0], launches.iloc[1]
    for column in ("flop_fp32", "flop_fp64", "bytes_dram", "bytes_l2", "bytes_l1", "time_s", "t_sol_s"):
        assert group[column] == pytest.approx(base[column] + head[column], rel=1e-12), column
    # the fraction of the roof: (t_sol 3.223 ms + 2.811 ms) / (time 6.191 ms + 3.482 ms) = 0.6238
    assert group["roofline_fraction"] == pytest.approx((base["t_sol_s"] + head["t_sol_s"])
                                                       / (base["time_s"] + head["time_s"]), rel=1e-12)
    assert group["roofline_fraction"] == pytest.approx(0.6238, abs=1e-4)


def test_nersc_gpp_reports_l1_bytes_add_up(samples):
    pytest.importorskip("ncu_report")
    result = analyze([samples / "nersc-gpp" / f"output{i}.ncu-rep" for i in (0, 1, 4)])
    big = result.launches[result.launches["grid"] == "(65535, 1, 1)"]
    group = result.kernels[result.kernels["grid"] == "(65535, 1, 1)"].iloc[0]
    assert len(big) == 3 and group["launches"] == 3
    # 1.490766e12 + 1.488491e12 + 1.331074e12 B: each launch's L1 rate x its own duration, then summed
    assert group["bytes_l1"] == pytest.approx(big["bytes_l1"].sum(), rel=1e-12)
    assert group["bytes_l1"] == pytest.approx(1.490766e12 + 1.488491e12 + 1.331074e12, rel=1e-6)


def test_apc_bert_group_time_is_the_sum_of_launch_durations(samples):
    result = analyze(samples / "APC-ML-Operators" / "bert_flashattn_nsight.csv", allow_empty=True)
    group = result.kernels[result.kernels["launches"] == 4].iloc[0]
    # per launch: sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second
    cycles = [8382.70, 3871.37, 5468.26, 3579.30]
    clocks = [9.998454e8, 9.306179e8, 9.820868e8, 9.168279e8]
    expected = sum(c / f for c, f in zip(cycles, clocks))  # 8.384 + 4.160 + 5.568 + 3.904 us = 22.016 us
    assert group["time_s"] == pytest.approx(expected, rel=1e-6)
    # not summed cycles over the mean clock (21,301.63 / 957.3 MHz = 22.25 us, 1.07 % more)
    assert sum(cycles) / (sum(clocks) / 4) / group["time_s"] == pytest.approx(1.0107, abs=1e-4)
