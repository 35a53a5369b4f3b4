"""A history in an S3 bucket (`--history s3://bucket/prefix`): the local layout, committed without a rename.

The keys are the folder layout's paths under the prefix (`kernels/run_id=<ID>/part-<uuid>.parquet`,
`launches/...`, `_runs/<ID>.json`), so every engine reads the bucket as it reads the folder. A writer puts its two
parts (unique names: no writer ever overwrites another's object), then commits the run by putting its manifest
with a conditional put, `If-None-Match: *` (create only if absent; S3 has honoured it since 2024): of two writers
of one run id exactly one commits, the other is refused in one line. A writer killed before its manifest leaves
parts that no manifest names; readers take runs from the manifests only, so its run is absent.

`--replace` is refused: swapping a committed manifest for another is atomic on a file system (a rename) but needs a
compare-and-swap on the manifest's ETag here, and removing the old parts safely after it needs the lock `--repair`
takes locally. `--repair` is refused too: without a lock it cannot tell a dead writer's parts from a live one's.
Both refusals say so; the uncommitted parts of killed writers are invisible to ncu-roofline and cost only storage
(a lifecycle rule cannot tell them from committed parts; a cleanup of parts no manifest names reclaims them).

Layers: pyarrow's filesystem (`pyarrow.fs.S3FileSystem`, in the base install) lists and reads; boto3 (the `s3`
extra) writes, since pyarrow's filesystems have no create-if-absent. Both read credentials, region and
`AWS_ENDPOINT_URL` from the environment as the AWS CLI does.
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
    """`s3://bucket/prefix`: where a history lives in a bucket."""

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
        raise InputError(None, f"{scheme}://{rest}: no bucket named (s3://bucket/prefix)")
    prefix = prefix.strip("/")
    if any(step in (".", "..") for step in prefix.split("/")):
        raise InputError(None, f"{scheme}://{rest}: a prefix with '.' or '..' steps")
    return ObjectHistory(scheme, bucket, prefix)


def _client():
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise InputError(None, "writing a history to s3:// needs boto3: pip install 'ncu-roofline[s3]'") from None
    return boto3.client("s3", config=Config(retries={"mode": "standard"}))


def _filesystem():
    import pyarrow.fs

    kwargs = {"endpoint_override": os.environ["AWS_ENDPOINT_URL"]} if os.environ.get("AWS_ENDPOINT_URL") else {}
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return pyarrow.fs.S3FileSystem(region=region, **kwargs) if region else pyarrow.fs.S3FileSystem(**kwargs)


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
    client = _client()  # first: without boto3 this is the one line that says to install it
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        client.head_object(Bucket=history.bucket, Key=history.key(RUNS_FOLDER, f"{run_id}.json"))
        return True
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise _error(history, exc) from None
    except BotoCoreError as exc:  # no credentials, no endpoint
        raise _error(history, exc) from None


def write_run(history: ObjectHistory, run_id: str, names: dict[str, str], payloads: dict[str, bytes]) -> list[str]:
    """Put the two parts, then the manifest with `If-None-Match: *`; return the parts' URLs."""
    client = _client()
    from botocore.exceptions import BotoCoreError, ClientError

    written: list[str] = []
    try:
        for table in ("launches", "kernels"):
            key = history.key(table, f"run_id={run_id}", names[table])
            client.put_object(Bucket=history.bucket, Key=key, Body=payloads[table])
            written.append(key)
        if os.environ.get(PAUSE_BEFORE_MANIFEST_ENV):
            time.sleep(float(os.environ[PAUSE_BEFORE_MANIFEST_ENV]))
        try:
            client.put_object(Bucket=history.bucket, Key=history.key(RUNS_FOLDER, f"{run_id}.json"),
                              Body=manifest_bytes(run_id, names), IfNoneMatch="*")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict"):
                refuse_taken(history, run_id)
            raise
    except (ClientError, BotoCoreError, InputError) as exc:
        for key in written:  # ours alone (unique names); best effort, and invisible to readers anyway
            try:
                client.delete_object(Bucket=history.bucket, Key=key)
            except (ClientError, BotoCoreError):
                pass
        if isinstance(exc, InputError):
            raise
        raise _error(history, exc) from None
    return [f"{history.scheme}://{history.bucket}/{key}" for key in written[::-1]]


def read_committed(history: ObjectHistory, wanted: tuple[str, ...]) -> tuple[dict[str, list], list[str], list[str]]:
    """As `views._read_committed` for a bucket: per table in `wanted`, one Arrow table per committed run (with a
    `run_id` column); the run ids read; the runs left out (one line each)."""
    import pyarrow as pa
    import pyarrow.fs
    import pyarrow.parquet as pq

    fs = _filesystem()
    base = f"{history.bucket}/{history.prefix}".rstrip("/")
    try:
        listed = fs.get_file_info(pyarrow.fs.FileSelector(f"{base}/{RUNS_FOLDER}", allow_not_found=True))
    except (OSError, pa.ArrowException) as exc:
        raise _error(history, exc) from None
    tables: dict[str, list] = {name: [] for name in TABLES}
    problems: list[str] = []
    ids: list[str] = []
    for info in sorted(listed, key=lambda i: i.path):
        name = info.base_name
        if info.type != pyarrow.fs.FileType.File or not name.endswith(".json") or name.startswith("."):
            continue
        run_id = name[:-len(".json")]
        try:
            with fs.open_input_stream(info.path) as stream:
                payload = stream.read(64 * 1024 + 1)
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
