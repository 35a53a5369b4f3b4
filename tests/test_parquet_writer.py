"""core/parquet.py: the tables as Parquet, read back with the same values and schema, and min/max statistics on
the columns a query filters on (the writer skips them on pandas categories, where they cost the most)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ncu_roofline.core.parquet import parquet_bytes


def test_values_schema_and_statistics():
    table = pd.DataFrame({
        "kernel_name": pd.array(["b", "a", "c"], dtype="string"),
        "launch_id": np.array([7, 3, 5], dtype=np.int64),
        "time_s": [2e-6, np.nan, 1e-6],
        "bound": pd.Categorical(["dram", "fp32", "dram"]),
    })
    data = parquet_bytes(table, {"ncu_roofline.version": "x"})
    back = pq.read_table(io.BytesIO(data))
    pd.testing.assert_frame_equal(back.to_pandas(), table)
    assert back.schema.metadata[b"ncu_roofline.version"] == b"x"
    group = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0)
    stats = {group.column(i).path_in_schema: group.column(i).statistics for i in range(group.num_columns)}
    assert (stats["kernel_name"].min, stats["kernel_name"].max) == ("a", "c")
    assert (stats["launch_id"].min, stats["launch_id"].max) == (3, 7)
    assert (stats["time_s"].min, stats["time_s"].max, stats["time_s"].null_count) == (1e-6, 2e-6, 1)


def test_a_repeated_text_writes_the_bytes_of_the_same_column_built_row_by_row():
    """core/launch_table.repeated_text shares one Arrow chunk across the rows (a file name on every launch); the
    Parquet file must not tell: the same bytes as the column built from a Python list, over chunk boundaries."""
    from ncu_roofline.core.launch_table import repeated_text

    n = 3 * 65_536 + 5
    for text in ("/data/run 1/é.csv", "", None):
        shared = repeated_text(text, n)
        assert shared.to_pylist() == [text] * n
        assert len({chunk.buffers()[-1].address for chunk in shared.chunks}) == 1  # one buffer, not n copies
        plain = pd.DataFrame({"source_file": pd.array([text] * n, dtype="string"), "launch_id": np.arange(n)})
        built = plain.assign(source_file=pd.array(shared, dtype="string"))
        assert parquet_bytes(built, {"k": "v"}) == parquet_bytes(plain, {"k": "v"})
