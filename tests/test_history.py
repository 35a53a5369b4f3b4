"""The history dataset: runs appended as Hive-partitioned Parquet parts, read back by DuckDB as they are; concurrent
writers lose nothing; a killed writer leaves nothing a reader sees; `--replace`, refusals and schema drift."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import ncu_roofline
from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.history.store import (PAUSE_ENV, append_analysis, connect, default_run_id, parse_labels, read_runs,
                                  run_ids, run_sql, write_run)

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
runner = CliRunner()


@pytest.fixture(scope="module")
def example() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(EXAMPLE)


def _read(directory: Path, table: str) -> pd.DataFrame:
    """What any DuckDB user runs: the glob, Hive partitions, columns unified by name."""
    return duckdb.sql(f"SELECT * FROM read_parquet('{directory}/{table}/*/part-*.parquet', hive_partitioning=true, "
                      f"union_by_name=true, hive_types={{'run_id': VARCHAR}})").df()


def test_two_runs_read_back_with_duckdb_equal_the_kernel_tables(tmp_path, example):
    t1 = datetime(2026, 1, 1, 3, 0, tzinfo=timezone.utc)
    t2 = datetime(2026, 1, 2, 3, 0, tzinfo=timezone.utc)
    append_analysis(tmp_path, example, run_id="101-1", labels={"branch": "main", "gpu": "h100"}, run_time=t1)
    append_analysis(tmp_path, example, run_id="nightly", labels={}, run_time=t2)
    kernels = _read(tmp_path, "kernels")
    assert sorted(kernels["run_id"].unique()) == ["101-1", "nightly"]
    # 5 kernel groups and 6 launches per run in the example (its rows, one per launch)
    assert len(kernels) == 2 * len(example.kernels) == 10
    assert len(_read(tmp_path, "launches")) == 2 * len(example.launches) == 12
    sha = hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    for run_id, when, labels in (("101-1", t1, {"branch": "main", "gpu": "h100"}), ("nightly", t2, {})):
        rows = kernels[kernels["run_id"] == run_id].sort_values("rank").reset_index(drop=True)
        expected = example.kernels.sort_values("rank").reset_index(drop=True)
        for column in ("kernel_name", "grid", "block", "bound", "device_name"):
            assert rows[column].astype(str).tolist() == expected[column].astype(str).tolist(), column
        for column in ("time_s", "flop_total", "bytes_dram", "t_sol_s", "roofline_fraction", "headroom_s", "ai_dram",
                       "launches", "rank"):
            np.testing.assert_array_equal(rows[column].to_numpy(dtype="float64"),
                                          expected[column].to_numpy(dtype="float64"), err_msg=column)
        assert (rows["run_time"] == pd.Timestamp(when)).all()
        assert {json.dumps(labels, sort_keys=True)} == set(rows["labels"])
        assert set(rows["tool_version"]) == {ncu_roofline.__version__}
        assert set(rows["gpu"]) == {"NVIDIA H100 PCIe"}
        inputs = json.loads(rows["inputs"].iloc[0])
        from ncu_roofline.core.paths import shown_path  # as every output names an input

        assert inputs == [{"path": shown_path(EXAMPLE), "sha256": sha}]
    # run_id lives in the folder name only (Spark refuses a column in both the file and the partition)
    part = next((tmp_path / "kernels" / "run_id=nightly").glob("part-*.parquet"))
    assert "run_id" not in duckdb.sql(f"SELECT * FROM read_parquet('{part}', hive_partitioning=false)").columns
    # the label filter of the library reads the JSON labels
    con = connect(tmp_path)
    assert read_runs(con, labels={"branch": "main"})["run_id"].tolist() == ["101-1"]
    assert read_runs(con)["run_id"].tolist() == ["101-1", "nightly"]  # oldest first


def _writer(directory: Path, run_id: str, pause_s: float) -> subprocess.Popen:
    env = {**os.environ, PAUSE_ENV: str(pause_s)}
    return subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(EXAMPLE), "--rows", "0",
                             "--history", str(directory), "--run-id", run_id], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_four_concurrent_writer_processes_keep_four_complete_runs(tmp_path):
    # Each writer holds its temporary file 0.5 s before the rename, so the four are mid-write at the same time.
    writers = [_writer(tmp_path, f"job{i}", 0.5) for i in range(4)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    assert run_ids(tmp_path) == {"job0", "job1", "job2", "job3"}
    for table, rows_per_run in (("kernels", 5), ("launches", 6)):
        for i in range(4):
            parts = list((tmp_path / table / f"run_id=job{i}").iterdir())
            assert len(parts) == 1 and parts[0].name.startswith("part-"), parts  # no temporary file left
        counts = _read(tmp_path, table).groupby("run_id").size()
        assert counts.to_dict() == {f"job{i}": rows_per_run for i in range(4)}


def test_a_killed_writer_leaves_no_visible_part(tmp_path, example):
    append_analysis(tmp_path, example, run_id="complete")
    writer = _writer(tmp_path, "killed", 60)
    hidden = tmp_path / "launches" / "run_id=killed"
    deadline = time.monotonic() + 60
    while not (hidden.is_dir() and any(p.name.startswith(".part-") for p in hidden.iterdir())):
        assert writer.poll() is None and time.monotonic() < deadline, "the writer never started its first part"
        time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=30)  # reaps it and closes its pipes
    leftovers = [p.name for p in hidden.iterdir()]
    assert leftovers and all(name.startswith(".") for name in leftovers)  # hidden from every reader
    assert not list(tmp_path.glob("*/run_id=killed/part-*.parquet"))
    assert set(_read(tmp_path, "kernels")["run_id"]) == {"complete"}
    assert set(_read(tmp_path, "launches")["run_id"]) == {"complete"}
    # nothing of the killed run is visible, so its id is free again
    append_analysis(tmp_path, example, run_id="killed")
    assert run_ids(tmp_path) == {"complete", "killed"}


def test_an_existing_run_id_is_refused_in_one_line_and_replace_swaps_the_parts(tmp_path):
    args = ["analyze", str(EXAMPLE), "--rows", "0", "--history", str(tmp_path), "--run-id", "r1"]
    assert runner.invoke(app, [*args, "--label", "branch=old"]).exit_code == 0
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert "run id 'r1' is already in the history" in refused.stderr
    before = {p.name for p in tmp_path.glob("*/run_id=r1/*")}
    replaced = runner.invoke(app, [*args, "--replace", "--label", "branch=new"])
    assert replaced.exit_code == 0, replaced.stderr
    after = {p.name for p in tmp_path.glob("*/run_id=r1/*")}
    assert len(after) == 2 and not after & before  # one new part per table, the old ones gone
    assert set(_read(tmp_path, "kernels")["labels"]) == {'{"branch": "new"}'}


def test_run_ids_labels_and_the_ci_default(tmp_path, example):
    assert default_run_id({"GITHUB_RUN_ID": "987", "GITHUB_RUN_ATTEMPT": "2"}) == "987-2"
    assert default_run_id({"CI_PIPELINE_ID": "55"}) == "55"
    with pytest.raises(InputError, match="--history needs --run-id"):
        default_run_id({})
    for bad in ("", "../up", ".hidden", "a/b", "x" * 201, "sp ace"):
        with pytest.raises(InputError, match="--run-id"):
            append_analysis(tmp_path, example, run_id=bad)
    assert parse_labels(["branch=main", "sha=abc=def"]) == {"branch": "main", "sha": "abc=def"}
    for bad in (["novalue"], ["=x"], ["a=1", "a=2"]):
        with pytest.raises(InputError, match="--label"):
            parse_labels(bad)
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--history", str(tmp_path)], env={"GITHUB_RUN_ID": ""})
    assert result.exit_code == 2 and "--history needs --run-id" in result.stderr
    assert not (tmp_path / "kernels").exists()  # refused before anything was read or written
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", str(tmp_path)],
                           env={"GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1"})
    assert result.exit_code == 0 and run_ids(tmp_path) == {"4242-1"}


def test_a_new_column_in_a_later_run_does_not_break_reading(tmp_path):
    def table(extra: dict) -> pd.DataFrame:
        return pd.DataFrame({"kernel_name": ["k"], "grid": ["(1,1,1)"], "block": ["(32,1,1)"], "time_s": [1.0],
                             **extra})

    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    write_run(tmp_path, run_id="old", kernels=table({}), launches=table({}), metadata={}, run_time=when)
    write_run(tmp_path, run_id="new", kernels=table({"bytes_l3": [7.0]}), launches=table({}), metadata={},
              run_time=when.replace(day=2))
    con = connect(tmp_path)
    rows = run_sql(con, "SELECT run_id, bytes_l3 FROM kernels ORDER BY run_id")
    assert rows["run_id"].tolist() == ["new", "old"]
    assert rows["bytes_l3"].iloc[0] == 7.0 and pd.isna(rows["bytes_l3"].iloc[1])


def test_sql_runs_over_both_views_and_a_bad_query_is_one_line(tmp_path, example):
    append_analysis(tmp_path, example, run_id="a")
    append_analysis(tmp_path, example, run_id="b")
    result = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--sql",
                                 "SELECT k.run_id, count(*) AS kernels, (SELECT count(*) FROM launches l "
                                 "WHERE l.run_id = k.run_id) AS launches FROM kernels k GROUP BY 1 ORDER BY 1"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"run_id": "a", "kernels": 5, "launches": 6},
                                         {"run_id": "b", "kernels": 5, "launches": 6}]
    bad = runner.invoke(app, ["history", str(tmp_path), "--sql", "SELECT nope FROM kernels"])
    assert bad.exit_code == 2 and bad.stderr.startswith("ncu-roofline: error: --sql: Binder Error")
    assert bad.stderr.count("\n") == 1
    empty = runner.invoke(app, ["history", str(tmp_path / "missing")])
    assert empty.exit_code == 2 and "no such history folder" in empty.stderr


def test_the_history_facade_reads_back_what_the_analysis_facade_appended(tmp_path, example):
    """`Analysis.append_to_history` then `trends(DIR)`: the History façade beside Analysis and Comparison. Its
    series hold each appended run's kernel times (the analysis' own table is the reference), its JSON names both
    runs, and its bundle is the files the registry lists for history."""
    from ncu_roofline.render.outputs import names
    from ncu_roofline.trends import trends

    example.append_to_history(tmp_path, run_id="first", labels={"branch": "main"})
    example.append_to_history(tmp_path, run_id="second", labels={"branch": "main"})
    history = trends(tmp_path, labels={"branch": "main"})
    assert history.runs["run_id"].astype(str).tolist() == ["first", "second"]
    newest = history.series[history.series["run_id"].astype(str) == "second"]
    assert sorted(newest["time_s"].tolist()) == pytest.approx(sorted(example.kernels["time_s"].tolist()))
    assert [r["run_id"] for r in json.loads(history.json())["runs"]] == ["first", "second"]
    assert history.passed and history.input_paths
    files = set(history.bundle().files)
    assert files <= set(names("history")) and {"history.parquet", "history.json", "history.html"} <= files
