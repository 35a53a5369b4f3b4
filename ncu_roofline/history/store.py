"""Run history: each analysed run appended, immutably, to a Hive-partitioned Parquet dataset.

Layout (what DuckDB, Polars, pyarrow and Spark read as it is)::

    DIR/kernels/run_id=<ID>/part-<uuid>.parquet     one row per kernel group of the run
    DIR/launches/run_id=<ID>/part-<uuid>.parquet    one row per launch of the run
    DIR/_runs/<ID>.json                             the run's manifest: which two parts are the run (commits.py)

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

Writes are safe for any number of concurrent writers on one folder, and a run is one committed unit: each part
is written under a hidden temporary name (`.part-<uuid>.parquet.<random>.tmp`) and renamed into place, then the
run is committed by one atomic rename of its manifest `_runs/<ID>.json` naming its two parts; `replace=True` renames
a new manifest over the old one and only then removes the old parts. ncu-roofline reads only committed runs, each
checked (`history/commits.py`); other engines reading the `part-*.parquet` glob directly see uncommitted parts of
killed writers too until `history DIR --repair` removes them.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

import pandas as pd

from ..compare.match import launch_order
from ..core.errors import InputError
from ..core.files import stage_temporary, write_atomic
from ..core.parquet import parquet_bytes
from .commits import PART_VERSION, RUNS_FOLDER, TABLES, list_runs, manifest_bytes, manifest_path, repair, run_folder
from .location import history_location, is_remote
# the reading half (views over the committed parts, --sql), kept importable from here
from .sql import check_memory_limit, check_query, run_sql  # noqa: F401
from .views import connect, read_kernel_rows, read_runs  # noqa: F401

PART_GLOB = "part-*.parquet"
RUN_COLUMNS = ("run_time", "labels", "gpu", "tool_version", "inputs")
HISTORY_SCHEMA_VERSION = PART_VERSION
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
    if is_remote(history_location(directory)):
        return []  # objects in a bucket: no local output can be written over them
    return sorted(p for name in TABLES for p in (Path(directory) / name).glob(f"run_id=*/{PART_GLOB}"))


def run_ids(directory: Path) -> set[str]:
    """The run ids committed in `directory` (whole and readable)."""
    where = history_location(directory)
    if is_remote(where):
        from .objects import read_committed

        return set(read_committed(where, ())[1])
    return set(list_runs(where).runs)


def prepare_run(directory: Path, run_id: str | None, labels: list[str], *, replace: bool = False
                ) -> tuple[str, dict[str, str]]:
    """The run id (given, or CI's default) and parsed labels of `analyze --history`, checked before the inputs are
    read: a bad or taken run id fails in a second, not after a long read."""
    directory = history_location(directory)
    if is_remote(directory) and replace:
        from .objects import refuse_replace

        refuse_replace(directory)
    run_id = check_run_id(run_id) if run_id else default_run_id()
    parsed = parse_labels(labels)
    if not replace:
        refuse_existing(directory, run_id)
    return run_id, parsed


def refuse_existing(directory: Path, run_id: str) -> None:
    """Fail early (before a long read) when `run_id` is already in the history."""
    where = history_location(directory)
    if is_remote(where):
        from .objects import manifest_exists, refuse_taken

        if manifest_exists(where, run_id):
            refuse_taken(where, run_id)
        return
    if _taken(Path(directory), run_id):
        _refuse(Path(directory), run_id)


def _taken(directory: Path, run_id: str) -> bool:
    """A committed run, or one that is there but damaged or ambiguous (a new run must not hide behind it)."""
    listing = list_runs(directory, only=run_id)
    return bool(listing.runs or listing.problems) or os.path.lexists(manifest_path(directory, run_id))


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

    The parts are renamed into place first, then the run is committed by renaming its manifest into place (see the
    module docstring). An existing run id is refused unless `replace`, which swaps the manifest and removes the
    old parts after. Two writers racing on one new run id: the first manifest wins, the other is refused.
    """
    check_run_id(run_id)
    directory = history_location(directory)
    if is_remote(directory) and replace:
        from .objects import refuse_replace

        refuse_replace(directory)
    run_time = run_time or datetime.now(timezone.utc)
    if run_time.tzinfo is None:
        raise ValueError("run_time must be timezone-aware")
    if not is_remote(directory):
        old = list_runs(directory, only=run_id)
        if not replace and _taken(directory, run_id):
            _refuse(directory, run_id)
        for table in TABLES:  # never write through a link out of the history
            folder = run_folder(directory, table, run_id)
            if folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir()):
                raise InputError(folder, "is not a plain folder (a link or a file): the run cannot be written there")
    file_meta = {**metadata, "ncu_roofline.history.schema_version": HISTORY_SCHEMA_VERSION,
                 "ncu_roofline.history.run_id": run_id}
    payloads = {name: _parquet(run_rows(frame, metadata=metadata, labels=labels or {}, run_time=run_time),
                               {**file_meta, "ncu_roofline.history.table": name})
                for name, frame in (("kernels", kernels), ("launches", launches))}
    names = {name: f"part-{uuid.uuid4().hex}.parquet" for name in TABLES}
    if is_remote(directory):  # parts, then the manifest by a conditional put (history/objects.py)
        from .objects import write_run as put_run

        return put_run(directory, run_id, names, payloads)
    manifest = manifest_path(directory, run_id)
    _mkdir(manifest.parent)
    with history_lock(directory, exclusive=False):  # `--repair` waits for this commit (and we for it)
        written = _write_and_commit(directory, run_id, names, payloads, manifest, replace=replace)
        # committed: the old run's parts are garbage now
        # (only the committed ones: a concurrent writer's uncommitted parts are not ours to remove)
        for path in [p for run in old.runs.values() for p in run.parts.values()]:
            if path not in written:
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass  # left for `history --repair`; readers ignore it
    return written[::-1]


def _write_and_commit(directory: Path, run_id: str, names: dict[str, str], payloads: dict[str, bytes],
                      manifest: Path, *, replace: bool) -> list[Path]:
    """The parts renamed into place, then the manifest: the commit. A failure removes the parts written."""
    written: list[Path] = []
    try:
        for name in ("launches", "kernels"):
            folder = run_folder(directory, name, run_id)
            _mkdir(folder)
            written.append(write_atomic(folder / names[name], payloads[name], before_replace=_pause_hook()))
        _commit(manifest, manifest_bytes(run_id, names), replace=replace)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written


def _mkdir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(folder, f"cannot create the history folder: {exc.strerror or exc}") from None


def _commit(manifest: Path, payload: bytes, *, replace: bool) -> None:
    """The one rename that commits a run. Without `replace`, a hard link makes it create-only, so of two writers
    of one new run id exactly one commits; with it, os.replace swaps the old manifest for the new at once."""
    if replace:
        write_atomic(manifest, payload, before_replace=_pause_hook())
        return
    tmp = stage_temporary(manifest, payload)
    try:
        hook = _pause_hook()
        if hook:
            hook(tmp)
        try:
            os.link(tmp, manifest)
        except FileExistsError:
            _refuse(manifest.parent.parent, manifest.stem)
        except OSError:  # a file system without hard links: the check before the write has to do
            if os.path.lexists(manifest):
                _refuse(manifest.parent.parent, manifest.stem)
            os.replace(tmp, manifest)
    finally:
        tmp.unlink(missing_ok=True)


LOCK_NAME = ".lock"  # DIR/_runs/.lock: hidden, not a manifest, not a part
REPAIR_WAIT_S = 10.0


@contextmanager
def history_lock(directory: Path, *, exclusive: bool, wait_s: float | None = None) -> Iterator[None]:
    """An advisory lock on the history: every writer holds it shared from its first part to its commit, `--repair`
    exclusive, so repair never removes the parts or temporary files of a commit in progress. `wait_s`: give up
    (one line) after that long instead of waiting. Where flock is missing (not POSIX) nothing is locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = Path(directory) / RUNS_FOLDER / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        raise InputError(lock, f"cannot open the history's lock: {exc.strerror or exc}") from None
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        if wait_s is None:
            fcntl.flock(fd, mode)
        else:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise InputError(Path(directory), f"a writer is committing a run here (it holds {lock}); "
                                                          f"waited {wait_s:g} s: run --repair again when it is "
                                                          "done") from None
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def repair_history(directory: Path, *, wait_s: float | None = None):
    """`history DIR --repair`: see `commits.repair`. Waits (up to `wait_s`) for writers committing, and holds
    every new writer off while it runs: a live writer's temporary files and uncommitted parts are never removed."""
    directory = history_location(directory)
    if is_remote(directory):
        from .objects import refuse_repair

        refuse_repair(directory)
    if not directory.is_dir():
        raise InputError(directory, "no such history folder")
    list_runs(directory, only="")  # a history whose folders are links is refused before anything is created
    _mkdir(directory / RUNS_FOLDER)
    with history_lock(directory, exclusive=True, wait_s=REPAIR_WAIT_S if wait_s is None else wait_s):
        return repair(directory, write_manifest=lambda path, payload: write_atomic(path, payload))


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
