"""Run history: each analysed run appended, immutably, to a Hive-partitioned Parquet dataset.

Layout (what DuckDB, Polars, pyarrow and Spark read as it is)::

    DIR/kernels/run_id=<ID>/part-<uuid>.parquet     one row per kernel group of the run
    DIR/launches/run_id=<ID>/part-<uuid>.parquet    one row per launch of the run

`run_id` lives only in the folder name (the Hive partition), never in the files: Spark refuses a column that is in
both. Beside the kernel and launch tables' own columns every row carries the run's context:

- `run_time` (timestamp, UTC): when the run was recorded; the only non-deterministic value, and it is not in the
  normal `-o` outputs;
- `labels` (string): the run's `--label key=value` pairs as a JSON object with sorted keys. A JSON string, not a
  map or one column per key, because every engine reads a string the same way and a new label never changes the
  schema (`labels->>'branch'` in DuckDB, `get_json_object(labels, '$.branch')` in Spark);
- `gpu` (the run's device names, comma-joined), `tool_version`, `inputs` (JSON list of `{path, sha256}`);
- `launch_order` (kernels only): the position of the group's first launch in its run, which `compare`'s matching
  uses to pair kernels that share name and launch shape.

Writes are safe for any number of concurrent writers on one folder: a part is written under a hidden temporary
name (`.part-<uuid>.parquet.<random>.tmp`, which the readers' `part-*.parquet` glob and Spark/pyarrow's hidden-file
rule never see) and renamed into place; nothing is ever rewritten. The launches part is renamed first and the
kernels part last, so a run is complete once its kernels part is visible. `replace=True` writes the new parts
first, then removes the run's old ones.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..compare.match import launch_order
from ..core.errors import InputError
from ..core.files import write_atomic
from ..core.parquet import parquet_bytes

TABLES = ("kernels", "launches")
PART_GLOB = "part-*.parquet"
RUN_COLUMNS = ("run_time", "labels", "gpu", "tool_version", "inputs")
HISTORY_SCHEMA_VERSION = "1"
_RUN_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,199}$")
_LABEL_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
# Test hook: seconds to sleep between writing a part's temporary file and renaming it (a writer killed then must
# leave nothing a reader sees).
PAUSE_ENV = "NCU_ROOFLINE_HISTORY_PAUSE_S"


def check_run_id(run_id: str) -> str:
    """A run id is one folder name: letters, digits, `_ . + -`, not starting with a dot (hidden) or dash."""
    if not _RUN_ID.match(run_id or ""):
        raise InputError(None, f"--run-id {run_id!r}: use letters, digits and _ . + - (at most 200, not starting "
                               "with . or -)")
    return run_id


def safe_run_id(text: str) -> str:
    """`text` made a valid run id: other characters become `_` (batch derives run ids from file names)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.+-]", "_", text)[:200]
    return cleaned if _RUN_ID.match(cleaned) else f"_{cleaned}"[:200]


def default_run_id(environ: Mapping[str, str] = os.environ) -> str:
    """The run id CI gives for free: GitHub Actions' `GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT`, GitLab's `CI_PIPELINE_ID`,
    Buildkite's `BUILDKITE_BUILD_NUMBER`. Elsewhere (and in matrix jobs, which share one run id) pass --run-id."""
    if environ.get("GITHUB_RUN_ID"):
        return check_run_id(f"{environ['GITHUB_RUN_ID']}-{environ.get('GITHUB_RUN_ATTEMPT') or '1'}")
    for name in ("CI_PIPELINE_ID", "BUILDKITE_BUILD_NUMBER"):
        if environ.get(name):
            return check_run_id(environ[name])
    raise InputError(None, "--history needs --run-id ID (or GITHUB_RUN_ID, CI_PIPELINE_ID in the environment)")


def parse_labels(texts: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`key=value` pairs from `--label`; a key given twice is refused (one value per key)."""
    labels: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not _LABEL_KEY.match(key):
            raise InputError(None, f"--label {text!r}: expected key=value, the key made of letters, digits, _ . -")
        if key in labels:
            raise InputError(None, f"--label {key!r} given twice")
        labels[key] = value
    return labels


def dataset_files(directory: Path) -> list[Path]:
    """Every part file of the dataset: the inputs of `history`, which its outputs must never be written over."""
    return sorted(p for name in TABLES for p in (Path(directory) / name).glob(f"run_id=*/{PART_GLOB}"))


def run_ids(directory: Path) -> set[str]:
    """The run ids that have a visible kernels part in `directory`."""
    root = Path(directory) / "kernels"
    if not root.is_dir():
        return set()
    return {p.parent.name.removeprefix("run_id=") for p in root.glob(f"run_id=*/{PART_GLOB}")}


def prepare_run(directory: Path, run_id: str | None, labels: list[str], *, replace: bool = False
                ) -> tuple[str, dict[str, str]]:
    """The run id (given, or CI's default) and parsed labels of `analyze --history`, checked before the inputs are
    read: a bad or taken run id fails in a second, not after a long read."""
    run_id = check_run_id(run_id) if run_id else default_run_id()
    parsed = parse_labels(labels)
    if not replace:
        refuse_existing(directory, run_id)
    return run_id, parsed


def refuse_existing(directory: Path, run_id: str) -> None:
    """Fail early (before a long read) when `run_id` is already in the history."""
    if any(any((Path(directory) / name / f"run_id={run_id}").glob(PART_GLOB)) for name in TABLES):
        _refuse(Path(directory), run_id)


def _refuse(directory: Path, run_id: str) -> None:
    raise InputError(directory, f"run id {run_id!r} is already in the history; give another --run-id, or "
                                "--replace to overwrite it")


def run_rows(table: pd.DataFrame, *, metadata: Mapping[str, str], labels: Mapping[str, str],
             run_time: datetime) -> pd.DataFrame:
    """`table` with the run's context columns in front (see the module docstring)."""
    devices = sorted(set(table["device_name"].dropna().astype(str))) if "device_name" in table else []
    context = pd.DataFrame({
        "run_time": pd.Series([pd.Timestamp(run_time).tz_convert("UTC")] * len(table), dtype="datetime64[us, UTC]"),
        "labels": pd.Series([json.dumps(dict(labels), sort_keys=True)] * len(table), dtype="string"),
        "gpu": pd.Series([", ".join(devices) or None] * len(table), dtype="string"),
        "tool_version": pd.Series([metadata.get("ncu_roofline.tool_version")] * len(table), dtype="string"),
        "inputs": pd.Series([metadata.get("ncu_roofline.inputs")] * len(table), dtype="string"),
    })
    body = table.drop(columns=[c for c in (*RUN_COLUMNS, "run_id") if c in table]).reset_index(drop=True)
    return pd.concat([context, body], axis=1)


def write_run(directory: Path, *, run_id: str, kernels: pd.DataFrame, launches: pd.DataFrame,
              metadata: Mapping[str, str], labels: Mapping[str, str] | None = None,
              run_time: datetime | None = None, replace: bool = False) -> list[Path]:
    """Append one run (its kernel and launch tables) to the dataset in `directory`; return the two parts written.

    An existing run id is refused unless `replace`, which removes the run's old parts only after the new ones are
    in place. Two writers racing on the same new run id are not told apart (CI run ids are unique).
    """
    check_run_id(run_id)
    directory = Path(directory)
    run_time = run_time or datetime.now(timezone.utc)
    if run_time.tzinfo is None:
        raise ValueError("run_time must be timezone-aware")
    folders = {name: directory / name / f"run_id={run_id}" for name in TABLES}
    old = {name: sorted(folder.glob(PART_GLOB)) if folder.is_dir() else [] for name, folder in folders.items()}
    if (old["kernels"] or old["launches"]) and not replace:
        _refuse(directory, run_id)
    file_meta = {**metadata, "ncu_roofline.history.schema_version": HISTORY_SCHEMA_VERSION,
                 "ncu_roofline.history.run_id": run_id}
    payloads = {name: _parquet(run_rows(frame, metadata=metadata, labels=labels or {}, run_time=run_time),
                               file_meta)
                for name, frame in (("kernels", kernels), ("launches", launches))}
    written: list[Path] = []
    try:
        for name in ("launches", "kernels"):  # kernels last: a run is complete once its kernels part is visible
            folder = folders[name]
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(folder, f"cannot create the history folder: {exc.strerror or exc}") from None
            written.append(write_atomic(folder / f"part-{uuid.uuid4().hex}.parquet", payloads[name],
                                        before_replace=_pause_hook()))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    for name in ("kernels", "launches"):  # the old run disappears as a whole once its kernels part is gone
        for path in old[name]:
            path.unlink(missing_ok=True)
    return written[::-1]


def append_analysis(directory: Path, analysis, *, run_id: str, labels: Mapping[str, str] | None = None,
                    run_time: datetime | None = None, replace: bool = False) -> list[Path]:
    """`write_run` for an `Analysis`: its kernel table (with `launch_order`), launch table and metadata."""
    kernels = analysis.kernels.assign(launch_order=launch_order(analysis.kernels, analysis.launches).to_numpy())
    return write_run(directory, run_id=run_id, kernels=kernels, launches=analysis.launches,
                     metadata=analysis.metadata(), labels=labels, run_time=run_time, replace=replace)


def _parquet(frame: pd.DataFrame, metadata: Mapping[str, str]) -> bytes:
    return parquet_bytes(frame, dict(metadata))


def _pause_hook():
    seconds = os.environ.get(PAUSE_ENV)
    if not seconds:
        return None
    return lambda _tmp: time.sleep(float(seconds))


# ------------------------------------------------------------------------------------------------------ reading


def connect(directory: Path):
    """An in-memory DuckDB connection with views `kernels` and `launches` over the dataset in `directory`.

    Columns are unified by name (a run written by a newer version with an extra column reads as null in older
    runs), and `run_id` is always text (Hive partition values would otherwise be guessed as numbers).
    """
    import duckdb

    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(directory, "no such history folder")
    con = duckdb.connect()
    for name in TABLES:
        parts = directory / name
        if any(parts.glob(f"run_id=*/{PART_GLOB}")):
            pattern = str(parts / "*" / PART_GLOB).replace("'", "''")
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{pattern}', hive_partitioning = true, "
                        f"union_by_name = true, hive_types = {{'run_id': VARCHAR}})")
        elif name == "kernels":
            raise InputError(directory, "holds no runs (no kernels/run_id=*/part-*.parquet)")
        else:
            con.execute(f"CREATE VIEW {name} AS SELECT NULL::VARCHAR AS run_id WHERE false")
    return con


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
    try:
        return con.execute(f"SELECT {select} FROM kernels WHERE run_id IN (SELECT run_id FROM _wanted_runs)").df()
    finally:
        con.unregister("_wanted_runs")


def run_sql(con, query: str) -> pd.DataFrame:
    """Any SQL over the views `kernels` and `launches`; an error is one line naming the query's problem."""
    import duckdb

    try:
        result = con.execute(query)
        return result.df() if result.description else pd.DataFrame()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(None, f"--sql: {first}") from None


def _label_filter(labels: Mapping[str, str]) -> tuple[str, list[str]]:
    if not labels:
        return "", []
    clauses = ["json_extract_string(labels, ?) = ?" for _ in labels]
    params = [item for key, value in sorted(labels.items()) for item in (f'$."{key}"', value)]
    return "WHERE " + " AND ".join(clauses), params

