"""Parquet tables: `launches.parquet` and `kernels.parquet`, with file metadata, byte-identical for the same
inputs (no timestamps, stable row order), so a fleet of runs is one dataset DuckDB or Spark can query as it is."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa


def parquet_bytes(table: pd.DataFrame, metadata: dict[str, str]) -> bytes:
    arrow = arrow_table(table)
    merged = dict(arrow.schema.metadata or {})
    merged.update({k.encode(): v.encode() for k, v in sorted(metadata.items())})
    arrow = arrow.replace_schema_metadata(merged)
    sink = io.BytesIO()
    _write_table(arrow, sink, compression="zstd", write_statistics=_with_statistics(arrow.schema))
    return sink.getvalue()


# What `pyarrow.parquet.write_table` hands its writer for the options it is given here: its other defaults, so the
# bytes are the same as through it.
_WRITER_DEFAULTS = dict(version="2.6", use_dictionary=True, use_deprecated_int96_timestamps=False,
                        coerce_timestamps=None, data_page_size=None, allow_truncated_timestamps=False,
                        compression_level=None, use_byte_stream_split=False, column_encoding=None,
                        writer_engine_version="V2", data_page_version="1.0", use_compliant_nested_type=True,
                        encryption_properties=None, write_batch_size=None, dictionary_pagesize_limit=None,
                        store_schema=True, write_page_index=False, write_page_checksum=False, sorting_columns=None,
                        store_decimal_as_integer=False, write_time_adjusted_to_utc=False, max_rows_per_page=None,
                        bloom_filter_options=None, use_content_defined_chunking=False)


def _write_table(arrow: pa.Table, sink: io.BytesIO, **options) -> None:
    """`pyarrow.parquet.write_table(arrow, sink, **options)` through the writer it wraps, `pyarrow._parquet`:
    importing `pyarrow.parquet` costs 13-17 ms a run (its `pyarrow.fs` loads libarrow_s3, libssl and the Azure, GCS
    and HDFS modules) against 1.5 ms. Where that private module's API differs (another pyarrow), the public one."""
    try:
        from pyarrow._parquet import ParquetWriter

        writer = ParquetWriter(sink, arrow.schema, **_WRITER_DEFAULTS, **options)
    except (ImportError, TypeError):
        import pyarrow.parquet as pq

        pq.write_table(arrow, sink, **options)
        return
    try:
        writer.write_table(arrow, row_group_size=None)
    finally:
        writer.close()


_OWN_COLUMNS_FROM = 1 << 16  # rows: below, converting no rows costs more than the scans it saves


def arrow_table(table: pd.DataFrame) -> pa.Table:
    """`table` as `pa.Table.from_pandas` gives it (no index), with its float64 and category columns built here:
    pandas' conversion looks for NaN (a null in Arrow) value by value, ~2.8 ms per 10^6 values against 0.3 ms for
    numpy's `isnan`, and for a category's -1 codes ~2 ms; a launch table has ~45 and ~19 such columns (0.19 -> 0.06
    CPU-s at 10^6 launches). The types, the categories and the pandas metadata come from converting no rows, which
    costs more than it saves below ~65,000 rows (those are converted as a whole), as is a frame with object columns
    (whose type depends on their values)."""
    dtypes = list(table.dtypes)
    floats = {i for i, dtype in enumerate(dtypes) if isinstance(dtype, np.dtype) and dtype == np.float64}
    categories = {i for i, dtype in enumerate(dtypes) if isinstance(dtype, pd.CategoricalDtype)}
    if len(table) < _OWN_COLUMNS_FROM or not (floats or categories) or any(dtype == object for dtype in dtypes) \
            or not table.columns.is_unique:
        # columns mostly taken as they are: a pool of threads for them cost more CPU than it saved
        return pa.Table.from_pandas(table, preserve_index=False, nthreads=1)
    empty = pa.Table.from_pandas(table.iloc[:0], preserve_index=False)
    others = [i for i in range(table.shape[1]) if i not in floats | categories]
    arrays = dict(zip(others, pa.Table.from_pandas(table.iloc[:, others], preserve_index=False, nthreads=1).columns))
    arrays.update((i, _float_array(table.iloc[:, i].to_numpy())) for i in floats)
    arrays.update((i, _category_array(table.iloc[:, i].array, empty.column(i))) for i in categories)
    if any(not arrays[i].type.equals(empty.schema.field(i).type) for i in arrays):
        return pa.Table.from_pandas(table, preserve_index=False, nthreads=1)
    return pa.Table.from_arrays([arrays[i] for i in range(table.shape[1])], schema=empty.schema)


def _float_array(values: np.ndarray) -> pa.Array:
    """A float64 column as Arrow with NaN as null, as `from_pandas` makes it (no validity buffer when none is)."""
    values = np.ascontiguousarray(values)
    return _plain_array(pa.float64(), values, ~np.isnan(values))


def _plain_array(kind: pa.DataType, values: np.ndarray, valid: np.ndarray) -> pa.Array:
    """`values` (contiguous) as an Arrow array of `kind`, null where not `valid` (no validity buffer when none is)."""
    nulls = len(values) - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(kind, len(values), [bitmap, pa.py_buffer(values)], null_count=nulls)


def _category_array(values: pd.Categorical, empty: pa.ChunkedArray) -> pa.Array:
    """A category column as `from_pandas` makes it: its codes as the indices (null where -1), into the dictionary
    that converting no rows of it gave (every category, in order)."""
    codes = np.ascontiguousarray(values.codes)
    indices = _plain_array(pa.from_numpy_dtype(codes.dtype), codes, codes >= 0)
    kind = empty.type
    dictionary = empty.chunk(0).dictionary if empty.num_chunks else pa.array([], kind.value_type)
    return pa.DictionaryArray.from_arrays(indices, dictionary, ordered=kind.ordered, safe=False)


def _with_statistics(schema: pa.Schema) -> list[str]:
    """The columns whose min/max statistics are written: all but the dictionary-encoded ones (pandas categories:
    `bound`, `limiter`, the `def_*` columns...), whose statistics Arrow works out value by value through the
    dictionary (a quarter of the write of a 10^6-launch table) and which a file of one row group per run could
    only skip as a whole."""
    return [field.name for field in schema if not pa.types.is_dictionary(field.type)]


# The table formats an output may come in (render/outputs.py names the files): a new one is a function here.
TABLE_WRITERS = {"parquet": parquet_bytes}


def table_bytes(fmt: str, table: pd.DataFrame, metadata: dict[str, str]) -> bytes:
    """`table` as a file of format `fmt` (a key of TABLE_WRITERS), with the run's metadata where the format
    holds it."""
    return TABLE_WRITERS[fmt](table, metadata)
