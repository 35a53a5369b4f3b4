"""A value the same on every launch (--gpu's roofs, a quantity no launch counted) is held by the steps as one element
(`one_value`); the launch table handed to the user is a frame like any other: every column its own writable array,
every launch the value."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import FIXTURES
from ncu_roofline import analyze
from ncu_roofline.pipeline.expressions import one_value, owned

GPU = "NVIDIA A100-SXM4-80GB"  # metrics/gpus.toml: fp32_tflops = 19.5, dram_gbps = 2039, fp64_tflops = 9.7


@pytest.mark.parametrize("name", ["raw_base_units.csv", "tensor_types_raw.csv"])
def test_the_gpu_table_roofs_are_on_every_launch_and_the_table_can_be_written(name):
    launches = analyze(FIXTURES / name, gpu=GPU).launches
    assert (launches["ceiling_source"] == f"table:{GPU}").all()
    assert launches["peak_flop_per_s_fp32"].tolist() == [19.5e12] * len(launches)
    assert launches["peak_bytes_per_s_dram"].tolist() == [2039e9] * len(launches)
    assert launches["peak_flop_per_s_fp64"].tolist() == [9.7e12] * len(launches)
    # a user's edit of one launch reaches that launch only (a view of one element would refuse it, or change all)
    for column in ("peak_flop_per_s_fp32", "bytes_dram", "flop_tensor_fp8", "gips", "warp_inst"):
        before = launches[column].to_numpy().copy()
        launches.loc[0, column] = -1.0
        after = launches[column].to_numpy()
        assert after[0] == -1.0
        np.testing.assert_array_equal(after[1:], before[1:])


def test_a_quantity_no_launch_counted_is_null_on_every_launch():
    launches = analyze(FIXTURES / "raw_base_units.csv", gpu=GPU).launches
    for column in ("flop_tensor_fp8", "flop_tensor_int8", "gips", "ii_l1", "limiter_gain_s"):
        assert launches[column].isna().all(), column


def test_one_value_takes_no_memory_per_row_and_owned_gives_each_column_its_own():
    import pandas as pd

    roof = one_value(10**6, 2.5)
    assert roof.nbytes == 8 * 10**6 and roof.strides == (0,) and not roof.flags.writeable
    assert roof.base.nbytes == 8  # one element behind the million rows
    frame = owned(pd.DataFrame({"a": one_value(3, 2.5), "b": one_value(3, np.nan), "c": [1.0, 2.0, 3.0]},
                               copy=False))
    for column in frame:
        assert frame[column].to_numpy().strides == (8,)
    frame.loc[1, "a"] = 0.0
    assert frame["a"].tolist() == [2.5, 0.0, 2.5] and frame["b"].isna().all()


@pytest.mark.parametrize("rows", [0, 1, 2])
def test_owned_frees_a_table_of_any_length_for_writing(rows):
    import pandas as pd

    frame = owned(pd.DataFrame({"a": one_value(rows, 2.5), "c": np.arange(rows, dtype="float64")}, copy=False))
    assert frame["a"].tolist() == [2.5] * rows
    if rows:
        frame.loc[0, "a"] = 0.0
        assert frame["a"].tolist() == [0.0] + [2.5] * (rows - 1)


def test_columns_of_one_value_share_an_array_and_a_write_reaches_one_column():
    import pandas as pd

    frame = owned(pd.DataFrame({"a": one_value(4, np.nan), "b": one_value(4, np.nan), "c": one_value(4, 2.5),
                                "d": one_value(4, 2.5), "e": np.zeros(4)}, copy=False))
    frame.loc[1, "a"] = 1.0
    frame.loc[2, "c"] = 0.0
    assert frame["a"].tolist()[1] == 1.0 and frame["b"].isna().all()
    assert frame["c"].tolist() == [2.5, 2.5, 0.0, 2.5] and frame["d"].tolist() == [2.5] * 4
