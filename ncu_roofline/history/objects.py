"""A history in an object store (`--history s3://bucket/prefix`, `gs://bucket/prefix`): the local layout,
committed without a rename.

The keys are the folder layout's paths under the prefix (`kernels/run_id=<ID>/part-<uuid>.parquet`,
`launches/...`, `_runs/<ID>.json`), so every engine reads the bucket as it reads the folder. A writer puts its two
parts (unique names: no writer ever overwrites another's object), then commits the run by putting its manifest
with a create-only conditional put (S3's `If-None-Match: *`, GCS's `ifGenerationMatch=0`): of two writers of one
run id exactly one commits, the other is refused in one line. A writer killed before its manifest leaves parts
that no manifest names; readers take runs from the manifests only, so its run is absent.

`--replace` is refused: swapping a committed manifest for another is atomic on a file system (a rename) but needs a
compare-and-swap on the manifest (S3's ETag, GCS's generation) here, and removing the old parts safely after it
needs the lock `--repair` takes locally. `--repair` is refused too: without a lock it cannot tell a dead writer's
parts from a live one's. Both refusals say so; the uncommitted parts of killed writers are invisible to
ncu-roofline and cost only storage (a lifecycle rule cannot tell them from committed parts; a cleanup of parts no
manifest names reclaims them).

This module is the protocol; each store is a module with the same six functions (`client`, `failures`, `put`
with its create-only form, `exists`, `delete`, and `filesystem`, pyarrow's reader): history/s3.py (boto3, pyarrow's
`S3FileSystem`) and history/gcs.py (google-cloud-storage, pyarrow's `GcsFileSystem`). pyarrow's filesystems list
and read (in the base install); the SDKs write, since pyarrow's filesystems have no create-if-absent.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ..core.errors import InputError
from .commits import RUNS_FOLDER, TABLES, judge_part, manifest_bytes, parse_manifest

PAUSE_BEFORE_MANIFEST_ENV = "NCU_ROOFLINE_HISTORY_PAUSE_BEFORE_MANIFEST_S"  # test hook: a writer killed between


@dataclass(frozen=True)
class ObjectHistory:
    """`s3://bucket/prefix` or `gs://bucket/prefix`: where a history lives in a bucket."""

    scheme: str
    bucket: str
    prefix: str  # no leading or trailing slash; may be empty

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)


def parse(scheme: str, rest: str) -> ObjectHistory:
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise InputError(None, f"{scheme}://{rest}: no bucket named ({scheme}://bucket/prefix)")
    prefix = prefix.strip("/")
    if any(step in (".", "..") for step in prefix.split("/")):
        raise InputError(None, f"{scheme}://{rest}: a prefix with '.' or '..' steps")
    return ObjectHistory(scheme, bucket, prefix)


def _store(history: ObjectHistory):
    """The store module of the history's scheme (imported only for its URLs: the base install needs neither)."""
    if history.scheme == "gs":
        from . import gcs

        return gcs
    from . import s3

    return s3


def _error(history: ObjectHistory, exc: Exception) -> InputError:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return InputError(history, f"the object store failed or refused: {first}")


def refuse_taken(history: ObjectHistory, run_id: str) -> None:
    raise InputError(history, f"run id {run_id!r} is already in the history; give another --run-id "
                              "(--replace is refused on an object store)")


def refuse_replace(history: ObjectHistory) -> None:
    raise InputError(history, "--replace is refused on an object store: swapping a committed run needs a rename "
                              "(or a compare-and-swap and a writers' lock), which this store does not give; give a "
                              "new --run-id")


def refuse_repair(history: ObjectHistory) -> None:
    raise InputError(history, "--repair is refused on an object store: without a writers' lock it cannot tell a "
                              "killed writer's parts from a live one's (uncommitted parts are never read; "
                              "docs/history.md says how to reclaim them)")


def manifest_exists(history: ObjectHistory, run_id: str) -> bool:
    store = _store(history)
    failures = store.failures()  # first: without the SDK this is the one line that says to install it
    try:
        return store.exists(store.client(), history.bucket, history.key(RUNS_FOLDER, f"{run_id}.json"))
    except failures as exc:  # a refusal, no credentials, no endpoint
        raise _error(history, exc) from None


def write_run(history: ObjectHistory, run_id: str, names: dict[str, str], payloads: dict[str, bytes]) -> list[str]:
    """Put the two parts, then the manifest create-only; return the parts' URLs.

    A manifest put that fails its precondition, or fails outright, may have landed on an earlier try (the SDKs retry
    after a lost answer): the manifest there is read back, and if it names this writer's parts (unique names) the
    run is committed. The parts are removed only when the manifest is known not to be ours: after a failure whose
    outcome is unknown they stay (never read unless a manifest names them)."""
    store = _store(history)
    failures = store.failures()
    manifest_key = history.key(RUNS_FOLDER, f"{run_id}.json")
    manifest = manifest_bytes(run_id, names)
    urls = [f"{history.scheme}://{history.bucket}/{history.key(table, f'run_id={run_id}', names[table])}"
            for table in ("kernels", "launches")]
    written: list[str] = []
    try:
        client = store.client()
        for table in ("launches", "kernels"):
            key = history.key(table, f"run_id={run_id}", names[table])
            store.put(client, history.bucket, key, payloads[table])
            written.append(key)
    except failures as exc:
        if written:
            _remove(store, client, history, written, failures)
        raise _error(history, exc) from None
    if os.environ.get(PAUSE_BEFORE_MANIFEST_ENV):
        time.sleep(float(os.environ[PAUSE_BEFORE_MANIFEST_ENV]))
    try:
        if store.put(client, history.bucket, manifest_key, manifest, if_absent=True):
            return urls
        failure = None  # the precondition failed: a manifest is there
    except failures as exc:
        failure = exc
    ours = _ours(store, history, manifest_key, manifest)
    if ours:
        return urls
    if ours is False:  # another writer's manifest, or none: our parts are garbage
        _remove(store, client, history, written, failures)
    if failure is None:
        refuse_taken(history, run_id)
    raise _error(history, failure) from None


def _remove(store, client, history: ObjectHistory, keys: list[str], failures) -> None:
    """Our own parts (unique names); best effort, and invisible to readers anyway."""
    for key in keys:
        try:
            store.delete(client, history.bucket, key)
        except failures:
            pass


def _head(fs, path: str) -> bytes:
    """An object's first bytes, enough for a manifest (`parse_manifest` refuses a longer one)."""
    with fs.open_input_stream(path) as stream:
        return stream.read(64 * 1024 + 1)


def _ours(store, history: ObjectHistory, key: str, manifest: bytes) -> bool | None:
    """Whether the manifest at `key` is this writer's (its part names are unique): False when it is another's or
    absent, None when it cannot be read."""
    import pyarrow as pa

    try:
        return _head(store.filesystem(), f"{history.bucket}/{key}") == manifest
    except FileNotFoundError:
        return False
    except (OSError, pa.ArrowException):
        return None


def read_committed(history: ObjectHistory, wanted: tuple[str, ...]) -> tuple[dict[str, list], list[str], list[str]]:
    """As `views._read_committed` for a bucket: per table in `wanted`, one Arrow table per committed run (with a
    `run_id` column); the run ids read; the runs left out (one line each)."""
    import pyarrow as pa
    import pyarrow.fs
    import pyarrow.parquet as pq

    base = f"{history.bucket}/{history.prefix}".rstrip("/")
    try:
        fs = _store(history).filesystem()
        listed = fs.get_file_info(pyarrow.fs.FileSelector(f"{base}/{RUNS_FOLDER}", allow_not_found=True))
        # nothing listed: an empty prefix, or no bucket of that name (a misspelt one must not read as "no runs")
        missing = not listed and fs.get_file_info(history.bucket).type == pyarrow.fs.FileType.NotFound
    except (OSError, pa.ArrowException) as exc:
        raise _error(history, exc) from None
    if missing:
        raise InputError(history, f"no such bucket: {history.bucket}")
    tables: dict[str, list] = {name: [] for name in TABLES}
    problems: list[str] = []
    ids: list[str] = []
    for info in sorted(listed, key=lambda i: i.path):
        name = info.base_name
        if info.type != pyarrow.fs.FileType.File or not name.endswith(".json") or name.startswith("."):
            continue
        run_id = name[:-len(".json")]
        try:
            payload = _head(fs, info.path)
        except (OSError, pa.ArrowException) as exc:
            problems.append(f"run {run_id!r} left out: {RUNS_FOLDER}/{name} cannot be read ({type(exc).__name__})")
            continue
        parts, problem = parse_manifest(payload, run_id)
        if problem:
            problems.append(f"run {run_id!r} left out: {RUNS_FOLDER}/{name} {problem}")
            continue
        read, problem = _read_run(fs, base, run_id, parts, wanted)
        if problem:
            problems.append(f"run {run_id!r} left out: {problem}")
            continue
        ids.append(run_id)
        for table, data in read.items():
            tables[table].append(data.append_column("run_id", pa.array([run_id] * data.num_rows, pa.string())))
    return tables, ids, problems


def _read_run(fs, base: str, run_id: str, parts: dict[str, str], wanted: tuple[str, ...]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    read = {}
    for table in TABLES:
        path = f"{base}/{table}/run_id={run_id}/{parts[table]}"
        try:
            if table in wanted:
                data = pq.read_table(path, filesystem=fs)
                schema = data.schema
            else:
                schema = pq.read_schema(path, filesystem=fs)
        except (OSError, pa.ArrowException, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return None, f"{table} part {parts[table]} cannot be read ({first})"
        metadata = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
                    for k, v in (schema.metadata or {}).items()}
        problem = judge_part(metadata, schema.names, run_id)[1]
        if problem:
            return None, f"{table} part {parts[table]} {problem}"
        if table in wanted:
            read[table] = data.replace_schema_metadata(None)
    return read, None
