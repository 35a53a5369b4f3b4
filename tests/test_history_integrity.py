"""A history run is one committed unit (issue 23): a killed `--replace` leaves the old run or the new one, never
both; merged copies never double-count; one bad part file is named and left out without breaking the rest; a folder
named `a[1]` is a folder; `--sql` is sandboxed; `--repair` cleans what dead writers left.

Every check on the runs' contents compares sum(time_s) with the input's: the example's six launches take
850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0 = 1626 µs (fixtures/example_h100_raw.csv, gpu__time_duration.sum).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import ncu_roofline
from ncu_roofline.cli import app
from ncu_roofline.history.store import PAUSE_ENV, append_analysis, connect, run_ids, run_sql

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
INPUT_TIME_S = (850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0) * 1e-6  # 1626 µs
runner = CliRunner()


@pytest.fixture(scope="module")
def example() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(EXAMPLE)


def _per_run(directory: Path, notes: list | None = None) -> dict[str, tuple[float, float, int, str]]:
    """run id -> (sum of kernels' time_s, sum of launches' time_s, launch rows, labels), as ncu-roofline reads it."""
    con = connect(directory, notes=notes)
    rows = run_sql(con, "SELECT k.run_id, k.t, l.t AS lt, l.n, k.labels FROM (SELECT run_id, sum(time_s) AS t, "
                        "any_value(labels) AS labels FROM kernels GROUP BY 1) k JOIN (SELECT run_id, sum(time_s) "
                        "AS t, count(*) AS n FROM launches GROUP BY 1) l USING (run_id) ORDER BY 1")
    return {r.run_id: (r.t, r.lt, int(r.n), r.labels) for r in rows.itertuples()}


def _assert_whole(runs: dict, expected_ids: set[str]) -> None:
    assert set(runs) == expected_ids
    for run_id, (kernel_s, launch_s, launches, _) in runs.items():
        assert kernel_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launch_s == pytest.approx(INPUT_TIME_S, rel=1e-12), run_id
        assert launches == 6, run_id  # launch IDs 0..5, once each


def _parts(directory: Path, table: str, run_id: str) -> list[Path]:
    return sorted((directory / table / f"run_id={run_id}").glob("part-*.parquet"))


def _make_legacy(directory: Path) -> None:
    """Turn a history into one written before manifests: no _runs/ folder, parts of schema version 1."""
    shutil.rmtree(directory / "_runs")
    for part in directory.glob("*/run_id=*/part-*.parquet"):
        table = pq.read_table(part)
        meta = dict(table.schema.metadata)
        meta[b"ncu_roofline.history.schema_version"] = b"1"
        meta.pop(b"ncu_roofline.history.table", None)
        pq.write_table(table.replace_schema_metadata(meta), part)


def test_a_kill_before_the_manifest_swap_leaves_the_old_run_and_after_it_the_new(tmp_path, example):
    append_analysis(tmp_path, example, run_id="r1", labels={"v": "old"})
    append_analysis(tmp_path, example, run_id="r0")
    old_manifest = (tmp_path / "_runs" / "r1.json").read_bytes()
    old_parts = {t: _parts(tmp_path, t, "r1") for t in ("kernels", "launches")}
    append_analysis(tmp_path, example, run_id="r1", labels={"v": "new"}, replace=True)
    new_parts = {t: _parts(tmp_path, t, "r1") for t in ("kernels", "launches")}
    new_manifest = (tmp_path / "_runs" / "r1.json").read_bytes()
    # the state of a kill after both new parts were renamed in, before the manifest rename: old manifest, 4 parts
    scratch = tmp_path / "scratch"
    shutil.copytree(tmp_path, scratch, ignore=shutil.ignore_patterns("scratch"))
    # (the old parts were removed by the real replace: rebuild them from a second history written the same way)
    first = tmp_path.parent / (tmp_path.name + "-first")
    append_analysis(first, example, run_id="r1", labels={"v": "old"})
    for table in ("kernels", "launches"):
        shutil.copy(_parts(first, table, "r1")[0], scratch / table / "run_id=r1")
    (scratch / "_runs" / "r1.json").write_bytes((first / "_runs" / "r1.json").read_bytes())
    assert all(len(_parts(scratch, t, "r1")) == 2 for t in ("kernels", "launches"))  # 2 parts per table on disk
    runs = _per_run(scratch)
    _assert_whole(runs, {"r0", "r1"})  # 1626 µs, not 3252 µs: the uncommitted parts are not read
    assert runs["r1"][3] == '{"v": "old"}'
    # the state of a kill after the manifest rename, before the old parts were removed: the new run
    (scratch / "_runs" / "r1.json").write_bytes(new_manifest)
    runs = _per_run(scratch)
    _assert_whole(runs, {"r0", "r1"})
    assert runs["r1"][3] == '{"v": "new"}'
    assert old_manifest != new_manifest and new_parts["kernels"] != old_parts["kernels"]
    # --repair removes the superseded parts, and the run reads the same
    result = runner.invoke(app, ["history", str(scratch), "--repair"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("removed ") == 2
    assert all(len(_parts(scratch, t, "r1")) == 1 for t in ("kernels", "launches"))
    assert _per_run(scratch)["r1"][3] == '{"v": "new"}'


def test_two_copies_that_both_replaced_a_run_merge_without_double_counting(tmp_path, example):
    base = tmp_path / "base"
    append_analysis(base, example, run_id="r1", labels={"v": "0"})
    copies = []
    for name in ("a", "b"):
        copy = tmp_path / name
        shutil.copytree(base, copy)
        append_analysis(copy, example, run_id="r1", labels={"v": name}, replace=True)
        copies.append(copy)
    merged = tmp_path / "merged"
    shutil.copytree(copies[0], merged)
    shutil.copytree(copies[1], merged, dirs_exist_ok=True)  # `cp -r b/. merged/`: b's manifest wins
    assert len(_parts(merged, "kernels", "r1")) == 2
    runs = _per_run(merged)
    _assert_whole(runs, {"r1"})
    assert runs["r1"][3] == '{"v": "b"}'


def test_an_old_layout_history_is_read_and_an_ambiguous_run_is_named_not_double_counted(tmp_path, example):
    for run_id in ("r1", "r2"):
        append_analysis(tmp_path, example, run_id=run_id)
    # r2 gets a second complete part per table (an old writer killed midway through --replace)
    extra = tmp_path / "extra"
    append_analysis(extra, example, run_id="r2")
    for table in ("kernels", "launches"):
        shutil.copy(_parts(extra, table, "r2")[0], tmp_path / table / "run_id=r2")
    shutil.rmtree(extra)
    _make_legacy(tmp_path)
    result = runner.invoke(app, ["history", str(tmp_path), "--json", "-"])
    assert result.exit_code == 0, result.stderr
    assert [run["run_id"] for run in json.loads(result.stdout)["runs"]] == ["r1"]
    assert result.stderr.splitlines() == [
        f"ncu-roofline: note: {tmp_path}: run 'r2' left out: 2 kernels and 2 launches parts and no manifest (an "
        "interrupted --replace, or two copies of the history merged); remove all but one part per table, then "
        "`history DIR --repair`"]
    _assert_whole(_per_run(tmp_path), {"r1"})
    # --repair commits r1 with a manifest; r2 still waits for the user's choice
    repaired = runner.invoke(app, ["history", str(tmp_path), "--repair"])
    assert repaired.exit_code == 0 and "committed run r1" in repaired.stdout
    assert json.loads((tmp_path / "_runs" / "r1.json").read_text())["run_id"] == "r1"
    for table in ("kernels", "launches"):
        _parts(tmp_path, table, "r2")[0].unlink()
    _assert_whole(_per_run(tmp_path), {"r1", "r2"})


@pytest.mark.parametrize("damage", ["zero-byte", "corrupt", "symlink", "foreign", "other-run"])
def test_one_bad_part_is_named_and_left_out_the_other_runs_read(tmp_path, example, damage):
    for run_id in ("good", "bad"):
        append_analysis(tmp_path, example, run_id=run_id)
    part = _parts(tmp_path, "kernels", "bad")[0]
    if damage == "zero-byte":
        part.write_bytes(b"")
        reason = "is empty (0 bytes)"
    elif damage == "corrupt":
        part.write_bytes(b"PAR1" + bytes(range(256)) * 4)
        reason = "is not a readable Parquet file"
    elif damage == "symlink":
        target = tmp_path.parent / f"{tmp_path.name}-elsewhere.parquet"
        shutil.copy(part, target)
        part.unlink()
        part.symlink_to(target)
        reason = "is a symbolic link, not a part file"
    elif damage == "foreign":
        pq.write_table(pa.table({"x": [1.0, 2.0]}), part)
        reason = "is not an ncu-roofline history part (no history metadata)"
    else:
        shutil.copy(_parts(tmp_path, "kernels", "good")[0], part)
        reason = "belongs to run 'good'"
    result = runner.invoke(app, ["history", str(tmp_path), "--rows", "0"])
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ncu-roofline: note: {tmp_path}: run 'bad' left out: "
                                                   f"kernels part {part.name} {reason}"), lines
    _assert_whole(_per_run(tmp_path), {"good"})
    # a foreign file dropped beside a committed run's parts is not part of it
    append_analysis(tmp_path, example, run_id="bad", replace=True)
    pq.write_table(pa.table({"x": [1.0]}), tmp_path / "kernels" / "run_id=good" / "part-stray.parquet")
    (tmp_path / "launches" / "run_id=good" / "part-0.parquet").write_bytes(b"")
    _assert_whole(_per_run(tmp_path), {"good", "bad"})


def test_only_bad_runs_is_exit_2_in_one_line(tmp_path, example):
    append_analysis(tmp_path, example, run_id="only")
    _parts(tmp_path, "launches", "only")[0].write_bytes(b"")
    result = runner.invoke(app, ["history", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"ncu-roofline: error: {tmp_path}: holds no runs (no committed run in _runs/*.json or kernels/run_id=*/); "
        "1 left out, first: run 'only' left out: launches part "
        f"{_parts(tmp_path, 'launches', 'only')[0].name} is empty (0 bytes)")


def test_a_history_folder_named_like_a_glob_pattern_is_read(tmp_path, example):
    directory = tmp_path / "a[1]" / "h*?"
    append_analysis(directory, example, run_id="r1")
    append_analysis(tmp_path / "a1" / "hx", example, run_id="decoy")  # what `a[1]/h*?` would match as a glob
    result = runner.invoke(app, ["history", str(directory), "--json", "-"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["runs"][0]["run_id"] == "r1"
    _assert_whole(_per_run(directory), {"r1"})


def test_sql_is_sandboxed(tmp_path, example):
    append_analysis(tmp_path, example, run_id="r1")
    secret = tmp_path / "secret.csv"
    secret.write_text("a\nsecret-value\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.parquet"  # a valid part, but not one of the history's
    part = _parts(tmp_path, "kernels", "r1")[0]
    shutil.copy(part, outside)
    part_bytes = part.read_bytes()
    written = tmp_path / "x.csv"
    refused = "ncu-roofline: error: --sql: refused: a query may read only the views kernels and launches ("
    for query, why in ((f"COPY kernels TO '{written}'", "COPY is not a query; only SELECT runs"),
                       # the parts are readable (allowed_paths), so writing over one must be refused too
                       (f"COPY (SELECT 1) TO '{part}' (FORMAT csv, USE_TMP_FILE false)",
                        "COPY is not a query; only SELECT runs"),
                       (f"ATTACH '{tmp_path / 'db.duckdb'}'", "ATTACH is not a query; only SELECT runs"),
                       ("SET enable_external_access = true", "SET is not a query; only SELECT runs"),
                       (f"SELECT 1; COPY kernels TO '{written}'", "COPY is not a query; only SELECT runs"),
                       (f"SELECT * FROM read_csv('{secret}')", "Permission Error"),
                       (f"SELECT * FROM read_parquet('{outside}')", "Permission Error")):
        result = runner.invoke(app, ["history", str(tmp_path), "--sql", query])
        assert result.exit_code == 2, (query, result.stdout)
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith(refused + why), result.stderr
        assert "secret-value" not in result.stdout
    assert not written.exists() and not (tmp_path / "db.duckdb").exists() and part.read_bytes() == part_bytes
    python = runner.invoke(app, ["history", str(tmp_path), "--sql", "SELECT * FROM query"])  # a Python variable
    assert python.exit_code == 2 and "query" in python.stderr and "does not exist" in python.stderr
    ok = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--sql",
                             "SELECT sum(time_s) AS t FROM launches"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)[0]["t"] == pytest.approx(INPUT_TIME_S)
    outside.unlink()


def test_repair_removes_what_dead_writers_left(tmp_path, example):
    append_analysis(tmp_path, example, run_id="r1")
    folder = tmp_path / "launches" / "run_id=r1"
    temp = folder / ".part-0123.parquet.abc.tmp"
    temp.write_bytes(b"half a part")
    (tmp_path / "_runs" / ".r9.json.xyz.tmp").write_bytes(b"{")
    # an uncommitted run: its parts are there, its manifest is not
    other = tmp_path / "other"
    append_analysis(other, example, run_id="r2")
    for table in ("kernels", "launches"):
        (tmp_path / table / "run_id=r2").mkdir()
        shutil.copy(_parts(other, table, "r2")[0], tmp_path / table / "run_id=r2")
    shutil.rmtree(other)
    assert run_ids(tmp_path) == {"r1"}
    result = runner.invoke(app, ["history", str(tmp_path), "--repair"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("removed ") == 4
    assert "repair: 1 runs committed, 4 files removed, 0 left out" in result.stdout
    assert not temp.exists() and not (tmp_path / "kernels" / "run_id=r2").exists()
    _assert_whole(_per_run(tmp_path), {"r1"})


def test_real_sigkills_during_replace_leave_the_old_run_or_the_new(tmp_path, example):
    """SIGKILL `analyze --history --replace` at random instants (seeded), many times; after each the history holds
    r1 exactly once, whole, with the old labels or the new ones."""
    append_analysis(tmp_path, example, run_id="r1", labels={"v": "0"})
    append_analysis(tmp_path, example, run_id="r0")
    rng = random.Random(23)
    env = {**os.environ, PAUSE_ENV: "0.15"}  # each of the three renames waits 0.15 s: a wide window to land in
    committed = "0"
    outcomes = set()
    for attempt in range(1, 9):
        writer = subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(EXAMPLE), "--rows", "0",
                                   "--history", str(tmp_path), "--run-id", "r1", "--replace", "--label",
                                   f"v={attempt}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".part-") for p in (tmp_path / "launches" / "run_id=r1").iterdir()):
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read()
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.6))  # somewhere in the three renames, or just after them
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=30)  # reaps it and closes its pipe
        notes: list[str] = []
        runs = _per_run(tmp_path, notes)
        assert notes == []
        _assert_whole(runs, {"r0", "r1"})
        label = json.loads(runs["r1"][3])["v"]
        assert label in {committed, str(attempt)}, (attempt, label)
        outcomes.add("new" if label == str(attempt) else "old")
        committed = label
    assert outcomes == {"old", "new"}  # the seeded instants land on both sides of the commit
    result = runner.invoke(app, ["history", str(tmp_path), "--repair"])
    assert result.exit_code == 0 and "0 left out" in result.stdout
    assert all(len(_parts(tmp_path, t, "r1")) == 1 for t in ("kernels", "launches"))
    assert not [p for p in tmp_path.rglob(".*") if p.is_file() and p.name != ".lock"]  # the lock stays


def test_a_damaged_manifest_is_named_and_repair_keeps_its_parts(tmp_path, example):
    for run_id in ("good", "bad"):
        append_analysis(tmp_path, example, run_id=run_id)
    (tmp_path / "_runs" / "bad.json").write_text("{not json")
    result = runner.invoke(app, ["history", str(tmp_path), "--rows", "0"])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"ncu-roofline: note: {tmp_path}: run 'bad' left out: _runs/bad.json cannot "
                                          "be read (JSONDecodeError)"]
    _assert_whole(_per_run(tmp_path), {"good"})
    repaired = runner.invoke(app, ["history", str(tmp_path), "--repair"])
    assert repaired.exit_code == 0 and "0 files removed, 1 left out" in repaired.stdout
    assert all(len(_parts(tmp_path, t, "bad")) == 1 for t in ("kernels", "launches"))  # nothing of it deleted
    refused = runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", str(tmp_path), "--run-id",
                                  "bad"])
    assert refused.exit_code == 2 and "run id 'bad' is already in the history" in refused.stderr
