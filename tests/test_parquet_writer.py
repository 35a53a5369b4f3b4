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


def test_large_tables_convert_as_pyarrow_converts_them():
    """core/parquet.arrow_table builds the float64 and category columns of a large frame itself (NaN and code -1 as
    null); the result must be pyarrow's own `from_pandas`: types, pandas metadata, values and nulls, and so the same
    Parquet bytes."""
    import pyarrow as pa

    from ncu_roofline.core.parquet import _OWN_COLUMNS_FROM, arrow_table

    n = _OWN_COLUMNS_FROM + 3
    rng = np.random.default_rng(0)
    odd = rng.random(n)
    odd[::5], odd[1::7], odd[2::11], odd[3::13] = np.nan, np.inf, -0.0, -np.inf
    block = np.stack([odd, np.arange(n, dtype=float), np.full(n, np.nan)])  # one block, as the pipeline keeps it
    table = pd.DataFrame(block.T, columns=["time_s", "bytes_dram", "ii_l1"])
    table.insert(0, "kernel_name", pd.array(np.where(np.arange(n) % 3, "k", None), dtype="string"))
    table["stream"] = pd.array(np.arange(n) % 4, dtype="Int64")
    table["bound"] = pd.Categorical(np.where(np.arange(n) % 2, "dram", "fp32"))
    table["limiter"] = pd.Categorical(np.where(np.arange(n) % 3, None, "issue"), categories=["mem", "issue", "none"])
    table["def_time_s"] = pd.Categorical([f"d{i % 300}" for i in range(n)], ordered=True)  # int16 codes
    table["ceiling_source"] = pd.Categorical([None] * n, categories=["spec"])
    table["sol_complete"] = np.arange(n) % 2 == 0
    ours, theirs = arrow_table(table), pa.Table.from_pandas(table, preserve_index=False)
    assert ours.schema.equals(theirs.schema, check_metadata=True)
    assert ours.equals(theirs)
    assert [ours.column(c).null_count for c in ("time_s", "bytes_dram", "ii_l1")] == [int(np.isnan(odd).sum()), 0, n]
    assert ours.column("limiter").null_count == len([i for i in range(n) if i % 3])
    assert str(ours.schema.field("def_time_s").type) == "dictionary<values=large_string, indices=int16, ordered=1>"
    assert parquet_bytes(table, {"k": "v"}) == pq_bytes_of(theirs, {"k": "v"})


def pq_bytes_of(arrow, metadata):
    """What core/parquet writes, from a table converted by pyarrow itself."""
    from ncu_roofline.core import parquet

    merged = dict(arrow.schema.metadata or {})
    merged.update({k.encode(): v.encode() for k, v in sorted(metadata.items())})
    arrow = arrow.replace_schema_metadata(merged)
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="zstd", write_statistics=parquet._with_statistics(arrow.schema))
    return sink.getvalue()


def _small_table() -> pd.DataFrame:
    return pd.DataFrame({
        "kernel_name": pd.array(["b", None, "c", "é"], dtype="string"),
        "launch_id": np.array([7, 3, 5, 1], dtype=np.int64),
        "time_s": [2e-6, np.nan, 1e-6, np.inf],
        "stream": pd.array([1, None, 2, 2], dtype="Int64"),
        "bound": pd.Categorical(["dram", None, "fp32", "dram"]),
        "sol_complete": [True, False, True, True],
    })


def test_the_bytes_are_those_of_pyarrow_parquet_write_table():
    """core/parquet writes through `pyarrow._parquet` (importing `pyarrow.parquet` loads its filesystems): the file
    must be the one pyarrow's public `write_table` makes of the same table and options, byte for byte."""
    import pyarrow as pa

    table = _small_table()
    theirs = pq_bytes_of(pa.Table.from_pandas(table, preserve_index=False), {"k": "v"})
    assert parquet_bytes(table, {"k": "v"}) == theirs
    assert parquet_bytes(table.iloc[:0], {"k": "v"}) == pq_bytes_of(
        pa.Table.from_pandas(table.iloc[:0], preserve_index=False), {"k": "v"})


def test_a_pyarrow_whose_private_writer_differs_falls_back_to_the_public_one(monkeypatch):
    """A `pyarrow._parquet.ParquetWriter` that refuses an option (another pyarrow) is no failure: the public
    writer writes the same table, the same bytes."""
    from ncu_roofline.core import parquet

    table = _small_table()
    expected = parquet_bytes(table, {"k": "v"})
    monkeypatch.setattr(parquet, "_WRITER_DEFAULTS", {**parquet._WRITER_DEFAULTS, "no_such_option": 1})
    assert parquet_bytes(table, {"k": "v"}) == expected
