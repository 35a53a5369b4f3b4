"""The guarantees of a history in a bucket, written once for every store: tests/test_history_s3.py runs them on
moto's S3 server, tests/test_history_gcs.py on fake-gcs-server. Each store's test file starts its server, gives the
fixtures `bucket` (a `Bucket`: its URL scheme, the environment its writers need, and how the store's own SDK lists
the bucket's keys, the reference for what was written) and `filesystem` (pyarrow's for the store, as a user reads
the bucket), and imports the `test_*` functions here, which pytest then collects there (this file's name is no
test file's, so they run once per store).

Reference: the example's six launches of 1626 µs in all (fixtures/example_h100_raw.csv), and the keys the store's
SDK lists.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.history.objects import PAUSE_BEFORE_MANIFEST_ENV

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
INPUT_TIME_S = (850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0) * 1e-6
runner = CliRunner()


@dataclass(frozen=True)
class Bucket:
    scheme: str                      # s3, gs
    name: str
    env: dict[str, str]              # what a writer in another process needs to reach the store
    list_keys: Callable[[], list[str]]  # every key in the bucket, as the store's own SDK lists them

    def url(self, prefix: str) -> str:
        return f"{self.scheme}://{self.name}/{prefix}"

    def keys(self) -> list[str]:
        return sorted(self.list_keys())


def analyze(url: str, run_id: str, *extra: str):
    return runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", run_id,
                               *extra])


def per_run(url: str) -> dict[str, list]:
    """Per run: the kernels' time, the launches' time and count, by `history --sql`."""
    result = runner.invoke(app, ["history", url, "--json", "-", "--sql",
                                 "SELECT k.run_id, k.t, l.t AS lt, l.n FROM (SELECT run_id, sum(time_s) AS t FROM "
                                 "kernels GROUP BY 1) k JOIN (SELECT run_id, sum(time_s) AS t, count(*) AS n FROM "
                                 "launches GROUP BY 1) l USING (run_id) ORDER BY 1"])
    assert result.exit_code == 0, result.stderr
    return {row["run_id"]: [row["t"], row["lt"], row["n"]] for row in json.loads(result.stdout)}


def assert_whole(runs: dict, expected: set[str]) -> None:
    assert set(runs) == expected
    for run_id, (kernel_s, launch_s, launches) in runs.items():
        assert kernel_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launch_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launches == 6, run_id


def test_a_bucket_that_does_not_exist_is_named_not_read_as_holding_no_runs(bucket: Bucket) -> None:
    """A misspelt bucket is "no such bucket", in one line; an existing bucket with nothing under the prefix holds no
    runs."""
    missing = f"{bucket.scheme}://{bucket.name}-misspelt/ci"
    for args in (["history", missing], ["history", missing, "--sql", "SELECT 1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stderr.splitlines() == [f"ncu-roofline: error: {missing}: no such bucket: {bucket.name}-misspelt"]
    empty = runner.invoke(app, ["history", bucket.url("nothing-here")])
    assert empty.exit_code == 2 and "holds no runs" in empty.stderr and "no such bucket" not in empty.stderr


def test_runs_written_to_a_bucket_read_back_whole_also_from_duckdb(bucket: Bucket, filesystem) -> None:
    """Two runs written, read back whole by `history` and `--sql`, and by DuckDB as a user reads the bucket
    offline: pyarrow's `filesystem` for the store, Hive partitions."""
    url = bucket.url("ci")
    for run_id in ("r1", "r2"):
        result = analyze(url, run_id)
        assert result.exit_code == 0, result.stderr
    keys = bucket.keys()
    assert [k for k in keys if k.startswith("ci/_runs/")] == ["ci/_runs/r1.json", "ci/_runs/r2.json"]
    assert len([k for k in keys if k.startswith("ci/kernels/run_id=r1/part-")]) == 1
    assert len([k for k in keys if k.startswith("ci/launches/run_id=r2/part-")]) == 1
    assert_whole(per_run(url), {"r1", "r2"})
    shown = runner.invoke(app, ["history", url, "--json", "-"])
    assert shown.exit_code == 0, shown.stderr
    assert [run["run_id"] for run in json.loads(shown.stdout)["runs"]] == ["r1", "r2"]
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds

    kernels = ds.dataset(f"{bucket.name}/ci/kernels", filesystem=filesystem, format="parquet",
                         partitioning=ds.partitioning(pa.schema([("run_id", pa.string())]), flavor="hive"))
    con = duckdb.connect()
    con.register("kernels", kernels)
    totals = con.execute("SELECT run_id, sum(time_s) AS t FROM kernels GROUP BY 1 ORDER BY 1").fetchall()
    assert [r[0] for r in totals] == ["r1", "r2"]
    assert all(r[1] == pytest.approx(INPUT_TIME_S, rel=1e-12) for r in totals)


def test_a_taken_run_id_replace_and_repair_are_refused_in_one_line(bucket: Bucket) -> None:
    url = bucket.url("ci")
    assert analyze(url, "r1").exit_code == 0
    for result, text in ((analyze(url, "r1"), "run id 'r1' is already in the history; give another --run-id "
                                              "(--replace is refused on an object store)"),
                         (analyze(url, "r1", "--replace"), "--replace is refused on an object store"),
                         (runner.invoke(app, ["history", url, "--repair"]), "--repair is refused on an object store")):
        assert result.exit_code == 2, result.stdout
        line, = result.stderr.splitlines()
        assert text in line and line.startswith(f"ncu-roofline: error: {url}: "), line
    assert_whole(per_run(url), {"r1"})


def writer(bucket: Bucket, url: str, run_id: str, pause_s: float) -> subprocess.Popen:
    """`analyze --history` in its own process, pausing `pause_s` between its parts and its manifest."""
    return subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(EXAMPLE), "--rows", "0",
                             "--history", url, "--run-id", run_id],
                            env={**os.environ, **bucket.env, PAUSE_BEFORE_MANIFEST_ENV: str(pause_s)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_parts(bucket: Bucket, run_id: str, writers: list[subprocess.Popen], count: int) -> None:
    deadline = time.monotonic() + 90
    while len([k for k in bucket.keys() if f"/run_id={run_id}/part-" in k]) < count:
        assert all(w.poll() is None for w in writers) and time.monotonic() < deadline, "writers never wrote parts"
        time.sleep(0.05)


@pytest.mark.slow
def test_concurrent_writers_of_different_runs_both_commit(bucket: Bucket) -> None:
    url = bucket.url("ci")
    writers = [writer(bucket, url, f"job{i}", 1.0) for i in range(2)]  # both wait before their manifests
    for process in writers:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
    assert_whole(per_run(url), {"job0", "job1"})


@pytest.mark.slow
def test_two_writers_of_one_run_id_exactly_one_commits(bucket: Bucket) -> None:
    url = bucket.url("ci")
    writers = [writer(bucket, url, "same", 2.0) for _ in range(2)]
    wait_for_parts(bucket, "same", writers, 4)  # both have put their parts: both passed the early check
    outcomes = []
    for process in writers:
        _, err = process.communicate(timeout=120)
        outcomes.append((process.returncode, err.decode()))
    assert sorted(code for code, _ in outcomes) == [0, 2], outcomes
    loser = next(err for code, err in outcomes if code == 2)
    assert loser.count("\n") == 1 and "run id 'same' is already in the history" in loser, loser
    assert_whole(per_run(url), {"same"})  # once, whole: the winner's parts (the loser removed its own)
    assert len([k for k in bucket.keys() if k.startswith("ci/kernels/run_id=same/")]) == 1


@pytest.mark.slow
def test_a_writer_killed_between_its_parts_and_its_manifest_leaves_its_run_absent(bucket: Bucket) -> None:
    url = bucket.url("ci")
    assert analyze(url, "kept").exit_code == 0
    process = writer(bucket, url, "killed", 60.0)
    wait_for_parts(bucket, "killed", [process], 2)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert "ci/_runs/killed.json" not in bucket.keys()
    assert len([k for k in bucket.keys() if "/run_id=killed/part-" in k]) == 2  # parts, never read
    assert_whole(per_run(url), {"kept"})
    assert analyze(url, "killed").exit_code == 0  # no manifest: the id is free, and the new run reads whole
    assert_whole(per_run(url), {"kept", "killed"})


def test_batch_appends_each_report_to_the_bucket(bucket: Bucket, tmp_path) -> None:
    for name in ("a", "b"):
        shutil.copy(EXAMPLE, tmp_path / f"{name}.csv")
    url = bucket.url("fleet")
    result = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--history", url,
                                 "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    assert_whole(per_run(url), {"a", "b"})
    again = runner.invoke(app, ["batch", str(tmp_path / "a.csv"), "--history", url, "--jobs", "1",
                                "--skip-existing"])
    assert again.exit_code == 0, again.stderr
    assert_whole(per_run(url), {"a", "b"})
