"""Against the NERSC team's own numbers: the metric-split TensorFlow capture and its reference table.

The reference (C. Yang, NERSC) aggregates by kernel name: Count = launches, Time = sum of cycles / (sum of
cycles per second / Count), CC FLOPs = fadd + fmul + 2 ffma + hadd + hmul + 2 hfma (no FP64 counters in this run),
TC FLOPs = 512 x tensor-pipe instructions, AI = all FLOPs / bytes at each level.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ncu_roofline import analyze


@pytest.fixture(scope="module")
def climate(request):
    from conftest import SAMPLES

    folder = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"
    if not folder.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    reference = pd.read_csv(SAMPLES / "DeepLearningProfiling" / "reference" / "climate-seg_fp16-batch2-fw-amp.csv")
    result = analyze(sorted(folder.glob("out.*.txt")))
    return result, reference.set_index("Kernel Name")


def test_twelve_metric_split_files_merge_into_one_capture(climate):
    result, _ = climate
    assert result.launches["source_file"].nunique() == 1
    assert result.launches["source_file"].iloc[0].endswith("out.fp16.lag1.train.*.txt")
    # 559 launches per file; launch order differed between the runs for some, which leaves partial rows
    partial = result.launches["status"].str.contains("launch order differed")
    assert len(result.launches) - partial.sum() + partial.sum() == len(result.launches)
    assert int(result.kernels["launches"].sum()) == 559


def test_every_kernel_matches_the_reference_table(climate):
    result, reference = climate
    kernels = result.kernels.set_index("kernel_name")
    assert set(kernels.index) == set(reference.index)
    for name, ref in reference.iterrows():
        row = kernels.loc[name]
        assert row["launches"] == ref["Count"], name
        # NERSC counts half precision at 1/2 of ncu-roofline's flop_fp16 (hadd + hmul + 2 hfma vs 2/2/4)
        fp64 = 0.0 if math.isnan(row["flop_fp64"]) else row["flop_fp64"]
        nersc_cc = row["flop_fp32"] + fp64 + row["flop_fp16"] / 2
        assert nersc_cc == pytest.approx(ref["CC FLOPs"], rel=1e-12, abs=0), name
        assert row["flop_tensor"] == pytest.approx(ref["TC FLOPs"], rel=1e-12, abs=0), name
        nersc_all = nersc_cc + row["flop_tensor"]
        for level, column in (("dram", "AI HBM"), ("l2", "AI L2"), ("l1", "AI L1")):
            bytes_level = row[f"bytes_{level}"]
            expected = ref[column]
            if bytes_level == 0 or np.isnan(expected):
                continue
            assert nersc_all / bytes_level == pytest.approx(expected, rel=1e-9), (name, level)
        assert row["time_s"] == pytest.approx(ref["Time"], rel=1e-6), name


def test_tensor_flops_use_the_volta_rule_and_say_so(climate):
    result, _ = climate
    tensor_rows = result.launches[result.launches["def_flop_tensor"] == "pipe_tensor_x512"]
    assert len(tensor_rows) > 0
    assert tensor_rows["status"].str.contains("tensor_flops_legacy_512_per_inst").all()
