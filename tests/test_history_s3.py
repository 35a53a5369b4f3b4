"""A history in an S3 bucket (issue 40, item 2), against a real S3 API served locally (moto's server mode, started
here on 127.0.0.1): runs written by `analyze --history s3://...` read back whole by `history` and `--sql`, and by
DuckDB through pyarrow's filesystem; two concurrent writers of different runs both commit; of two writers of one run
id exactly one does (the conditional put); a writer killed between its parts and its manifest leaves its run absent;
`--replace` and `--repair` are refused with the reason.

Reference: the example's six launches of 1626 µs in all (fixtures/example_h100_raw.csv), and the objects the bucket
holds as boto3 lists them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.history.objects import PAUSE_BEFORE_MANIFEST_ENV

from conftest import FIXTURES

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")

EXAMPLE = FIXTURES / "example_h100_raw.csv"
INPUT_TIME_S = (850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0) * 1e-6
runner = CliRunner()


@pytest.fixture(scope="module")
def s3_env():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture
def bucket(s3_env, request):
    name = f"hist-{abs(hash(request.node.name)) % 10**8}"
    boto3.client("s3").create_bucket(Bucket=name)
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
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket)
    return sorted(item["Key"] for item in listed.get("Contents", []))


def test_runs_written_to_a_bucket_read_back_whole_also_from_duckdb(bucket):
    url = f"s3://{bucket}/ci"
    for run_id in ("r1", "r2"):
        result = _analyze(url, run_id)
        assert result.exit_code == 0, result.stderr
    keys = _keys(bucket)
    assert [k for k in keys if k.startswith("ci/_runs/")] == ["ci/_runs/r1.json", "ci/_runs/r2.json"]
    assert len([k for k in keys if k.startswith("ci/kernels/run_id=r1/part-")]) == 1
    _assert_whole(_per_run(url), {"r1", "r2"})
    shown = runner.invoke(app, ["history", url, "--json", "-"])
    assert shown.exit_code == 0, shown.stderr
    assert [run["run_id"] for run in json.loads(shown.stdout)["runs"]] == ["r1", "r2"]
    # the same bucket as a DuckDB user reads it without httpfs: pyarrow's S3 filesystem, Hive partitions
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs

    fs = pyarrow.fs.S3FileSystem(endpoint_override=os.environ["AWS_ENDPOINT_URL"], region="us-east-1")
    kernels = ds.dataset(f"{bucket}/ci/kernels", filesystem=fs, format="parquet",
                         partitioning=ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive"))
    con = duckdb.connect()
    con.register("kernels", kernels)
    totals = con.execute("SELECT run_id, sum(time_s) AS t FROM kernels GROUP BY 1 ORDER BY 1").fetchall()
    assert [r[0] for r in totals] == ["r1", "r2"]
    assert all(r[1] == pytest.approx(INPUT_TIME_S, rel=1e-12) for r in totals)


def test_a_taken_run_id_replace_and_repair_are_refused_in_one_line(bucket):
    url = f"s3://{bucket}/ci"
    assert _analyze(url, "r1").exit_code == 0
    for result, text in ((_analyze(url, "r1"), "run id 'r1' is already in the history; give another --run-id "
                                               "(--replace is refused on an object store)"),
                         (_analyze(url, "r1", "--replace"), "--replace is refused on an object store"),
                         (runner.invoke(app, ["history", url, "--repair"]), "--repair is refused on an object store")):
        assert result.exit_code == 2, result.stdout
        line, = result.stderr.splitlines()
        assert text in line, line
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
def test_concurrent_writers_of_different_runs_both_commit(bucket, s3_env):
    url = f"s3://{bucket}/ci"
    writers = [_writer(url, f"job{i}", s3_env, 1.0) for i in range(2)]  # both wait before their manifests
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    _assert_whole(_per_run(url), {"job0", "job1"})


@pytest.mark.slow
def test_two_writers_of_one_run_id_exactly_one_commits(bucket, s3_env):
    url = f"s3://{bucket}/ci"
    writers = [_writer(url, "same", s3_env, 2.0) for _ in range(2)]
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
def test_a_writer_killed_between_its_parts_and_its_manifest_leaves_its_run_absent(bucket, s3_env):
    url = f"s3://{bucket}/ci"
    assert _analyze(url, "kept").exit_code == 0
    writer = _writer(url, "killed", s3_env, 60.0)
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
    url = f"s3://{bucket}/fleet"
    result = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--history", url,
                                 "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    _assert_whole(_per_run(url), {"a", "b"})
    again = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), "--history", url, "--jobs", "1",
                                "--skip-existing"])
    assert again.exit_code == 0, again.stderr
    _assert_whole(_per_run(url), {"a", "b"})
