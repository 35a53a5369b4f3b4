"""Parquet tables: `launches.parquet` and `kernels.parquet`, with file metadata, byte-identical for the same
inputs (no timestamps, stable row order), so a fleet of runs is one dataset DuckDB or Spark can query as it is."""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def parquet_bytes(table: pd.DataFrame, metadata: dict[str, str]) -> bytes:
    arrow = pa.Table.from_pandas(table, preserve_index=False, nthreads=1)  # columns mostly taken as they are:
    # a pool of threads for them cost more CPU than it saved (0.20 -> 0.17 CPU-s at 10^6 launches)
    merged = dict(arrow.schema.metadata or {})
    merged.update({k.encode(): v.encode() for k, v in sorted(metadata.items())})
    arrow = arrow.replace_schema_metadata(merged)
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="zstd", write_statistics=_with_statistics(arrow.schema))
    return sink.getvalue()


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
