"""The history read back: an in-memory DuckDB connection with views `kernels` and `launches` over the committed
runs' parts, and the few queries `history` runs over them.

The views are DuckDB over exactly the committed parts (a list of files from the manifests, never a glob), so a
query reads only the tables and columns it names (projection pushdown) and each footer is opened once: the checks
of a part's footer (its history metadata, the run it belongs to) are one DuckDB call over all of them, whose
footers DuckDB keeps for the query (`parquet_metadata_cache`). A part that fails is named and its run left out;
when DuckDB cannot read a footer at all, each part of that table is checked on its own (`commits.check_part`) to
name the bad ones. A history under a path DuckDB would read as a glob pattern (`a[1]`) is read by pyarrow, file by
file, instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..core.errors import InputError
from .commits import PART_KEYS, REQUIRED_COLUMNS, TABLES, check_part, judge_part, list_runs
from .location import history_location, is_remote

_GLOB = re.compile(r"[*?\[\]{}]")


def connect(directory: Path, *, notes: list[str] | None = None, tables: tuple[str, ...] = TABLES):
    """The connection (see the module docstring). Each run is checked (`history/commits.py`); one that fails is
    left out and named in `notes` (one line each). Columns are unified by name (a run written by a newer version
    with an extra column reads as null in older runs); `run_id` is always text, the last column. Only `tables` are
    checked and readable (`history` needs the kernels only, a `--sql` query the tables it names); the others are
    empty views. The parts are DuckDB's `allowed_paths`, so `run_sql` can lock every other file away."""
    import duckdb

    shown = history_location(directory)
    if not is_remote(shown) and not shown.is_dir():
        raise InputError(shown, "no such history folder")
    directory = shown if is_remote(shown) else Path(os.path.abspath(shown))
    con = duckdb.connect()
    try:
        if is_remote(shown):  # a bucket: read by pyarrow's filesystem (DuckDB's httpfs may not be installable)
            from .objects import read_committed

            runs, problems = _register_arrow(con, directory, tables, reader=read_committed)
        elif _GLOB.search(str(directory)):  # DuckDB would read each path as a glob pattern
            runs, problems = _register_arrow(con, directory, tables)
        else:
            runs, problems = _create_views(con, directory, tables)
    except BaseException:
        con.close()
        raise
    if notes is not None:
        notes.extend(f"{shown}: {line}" for line in problems)
    if not runs:
        con.close()
        detail = f"; {len(problems)} left out, first: {problems[0]}" if problems else ""
        raise InputError(shown, f"holds no runs (no committed run in _runs/*.json or kernels/run_id=*/){detail}")
    return con


def _create_views(con, directory: Path, tables: tuple[str, ...]) -> tuple[int, list[str]]:
    listing = list_runs(directory, deep=False)  # the footers are checked below, in one DuckDB call per table
    problems = list(listing.problems)
    runs = dict(listing.runs)
    con.execute("SET parquet_metadata_cache = true")
    for table in tables:
        for run_id, problem in sorted(_check_footers(con, runs, table).items()):
            problems.append(f"run {run_id!r} left out: {table} part {runs.pop(run_id).parts[table].name} {problem}")
    allowed: list[str] = []
    for name in TABLES:
        parts = [(str(run.parts[name]), run_id) for run_id, run in sorted(runs.items())] if name in tables else []
        if not parts:
            con.execute(f"CREATE VIEW {name} AS SELECT NULL::VARCHAR AS run_id WHERE false")
            continue
        con.execute(f"CREATE TEMP TABLE _parts_{name} (filename VARCHAR, run_id VARCHAR)")
        con.register("_new_parts", pd.DataFrame(parts, columns=["filename", "run_id"], dtype="object"))
        con.execute(f"INSERT INTO _parts_{name} SELECT * FROM _new_parts")
        con.unregister("_new_parts")
        paths = [path for path, _ in parts]
        con.execute(f"CREATE VIEW {name} AS SELECT * EXCLUDE (filename) FROM read_parquet({_literal(paths)}, "
                    "union_by_name = true, filename = true, hive_partitioning = false) "
                    f"JOIN _parts_{name} USING (filename)")
        allowed += paths
    con.execute(f"SET allowed_paths = {_literal(allowed)}")
    return len(runs), problems


def _check_footers(con, runs: dict, table: str) -> dict[str, str]:
    """run id -> what is wrong with its `table` part's footer, for the runs committed under a manifest (old-layout
    runs were checked whole by `list_runs`)."""
    import duckdb

    paths = {str(run.parts[table]): run_id for run_id, run in runs.items() if not run.legacy}
    if not paths:
        return {}
    try:
        rows = con.execute("SELECT file_name, decode(key), decode(value) FROM parquet_kv_metadata(?) "
                           "WHERE decode(key) IN (?, ?)", [list(paths), *PART_KEYS]).fetchall()
        columns = {row[0] for row in con.execute(
            f"DESCRIBE SELECT * FROM read_parquet({_literal(list(paths))}, union_by_name = true, "
            "hive_partitioning = false)").fetchall()}
    except duckdb.Error:  # a footer DuckDB cannot read: find which, part by part
        return _one_by_one(paths)
    if "run_id" in columns or not set(REQUIRED_COLUMNS) <= columns:
        return _one_by_one(paths)  # some part has another schema: name it
    metadata: dict[str, dict[str, str]] = {}
    for path, key, value in rows:
        metadata.setdefault(path, {})[key] = value
    judged = {run_id: judge_part(metadata.get(path, {}), None, run_id)[1] for path, run_id in paths.items()}
    return {run_id: problem for run_id, problem in judged.items() if problem}


def _one_by_one(paths: dict[str, str]) -> dict[str, str]:
    judged = {run_id: check_part(Path(path), run_id)[1] for path, run_id in paths.items()}
    return {run_id: problem for run_id, problem in judged.items() if problem}


def _literal(paths: list[str]) -> str:
    """A DuckDB list of string literals (quotes doubled): a view cannot take parameters."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def _register_arrow(con, directory, tables: tuple[str, ...], reader=None) -> tuple[int, list[str]]:
    """The tables read by pyarrow, file by file, and registered in DuckDB (no path is ever a glob pattern)."""
    read, runs, problems = (reader or _read_committed)(directory, tables)
    for name in TABLES:
        con.register(name, _union(read[name], directory, name))
    return len(runs), problems


def _read_committed(directory: Path, wanted: tuple[str, ...]) -> tuple[dict[str, list], list[str], list[str]]:
    """Per table in `wanted`, one Arrow table per committed run (run id in a `run_id` column); the run ids read;
    and the runs left out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    listing = list_runs(directory)
    problems = list(listing.problems)
    tables: dict[str, list] = {name: [] for name in TABLES}
    ids: list[str] = []
    for run_id, run in sorted(listing.runs.items()):
        for attempt in range(3):
            try:
                read = {name: pq.read_table(run.parts[name]).replace_schema_metadata(None) for name in wanted}
                break
            except FileNotFoundError:  # a --replace committed meanwhile and removed the old parts: look again
                run = list_runs(directory, only=run_id).runs.get(run_id)
                if run is None or attempt == 2:
                    read = None
                    problems.append(f"run {run_id!r} left out: its parts vanished while being read")
                    break
            except (pa.ArrowException, OSError, ValueError) as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                problems.append(f"run {run_id!r} left out: a part cannot be read ({first})")
                read = None
                break
        if read is None:
            continue
        ids.append(run_id)
        for name, table in read.items():
            tables[name].append(table.append_column("run_id", pa.array([run_id] * table.num_rows, pa.string())))
    return tables, ids, problems


def _union(parts: list, directory: Path, name: str):
    import pyarrow as pa

    if not parts:
        return pa.table({"run_id": pa.array([], pa.string())})
    try:
        table = pa.concat_tables(parts, promote_options="permissive")
    except (pa.ArrowException, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(directory, f"the runs' {name} tables do not share one schema ({first})") from None
    order = [c for c in table.column_names if c != "run_id"] + ["run_id"]
    return table.select(order)


def read_runs(con, *, labels: Mapping[str, str] | None = None, last: int | None = None) -> pd.DataFrame:
    """One row per run (`run_id`, `run_time`, `labels`, `gpu`), oldest first; filtered by labels, newest `last`."""
    where, params = _label_filter(labels or {})
    limit = f"LIMIT {int(last)}" if last else ""
    runs = con.execute(f"SELECT run_id, max(run_time) AS run_time, any_value(labels) AS labels, "
                       f"any_value(gpu) AS gpu FROM kernels {where} GROUP BY run_id "
                       f"ORDER BY run_time DESC, run_id DESC {limit}", params).df()
    return runs.iloc[::-1].reset_index(drop=True)


def read_kernel_rows(con, run_ids: list[str], columns: tuple[str, ...]) -> pd.DataFrame:
    """The kernel rows of `run_ids`, with whichever of `columns` the dataset has (missing ones are null)."""
    present = set(con.execute("SELECT * FROM kernels LIMIT 0").df().columns)
    select = ", ".join(f'"{c}"' if c in present else f'NULL AS "{c}"' for c in ("run_id", *columns))
    con.register("_wanted_runs", pd.DataFrame({"run_id": pd.Series(run_ids, dtype="object")}))
    try:  # through Arrow: DuckDB's own .df() converts every text cell to a Python string first (twice the CPU)
        return _arrow(con.sql(f"SELECT {select} FROM kernels WHERE run_id IN (SELECT run_id FROM _wanted_runs)"))\
            .to_pandas()
    finally:
        con.unregister("_wanted_runs")


def _arrow(relation):
    """A DuckDB relation's rows as one Arrow table (`to_arrow_table` from DuckDB 1.4 on, `arrow` before)."""
    to_table = getattr(relation, "to_arrow_table", None)
    return (to_table() if to_table is not None else relation.arrow()).combine_chunks()


def _label_filter(labels: Mapping[str, str]) -> tuple[str, list[str]]:
    if not labels:
        return "", []
    clauses = ["json_extract_string(labels, ?) = ?" for _ in labels]
    params = [item for key, value in sorted(labels.items()) for item in (f'$."{key}"', value)]
    return "WHERE " + " AND ".join(clauses), params

