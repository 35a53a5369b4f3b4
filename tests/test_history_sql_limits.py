"""`history --sql` is bounded (issue 37, item 3): a query that never ends stops at `--sql-timeout` with one line and
exit 2, one that grows past `--sql-memory` (DuckDB's memory_limit) stops there, and an empty or comment-only query is
refused in one line before the history is read. The references: the limits the test passes, and the example's six
launches (fixtures/example_h100_raw.csv) for the query that must still run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ncu_roofline
from ncu_roofline.cli import app
from ncu_roofline.history.store import append_analysis

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
runner = CliRunner()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    folder = tmp_path_factory.mktemp("h")
    append_analysis(folder, ncu_roofline.analyze(EXAMPLE), run_id="r1")
    return folder


def _one_line(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    return lines[0]


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM range(1000000000000000)",  # constant memory: only the clock stops it
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",  # never ends
])
def test_a_query_that_never_ends_stops_at_the_time_limit_in_one_line(history, query):
    line = _one_line(runner.invoke(app, ["history", str(history), "--sql", query, "--sql-timeout", "1"]))
    assert "stopped after 1 s" in line or "memory limit, 4GB" in line, line


def test_a_query_past_the_memory_limit_stops_in_one_line(history):
    # a million 1,000-byte strings joined: about 1 GB, fifty times the limit
    query = "SELECT length(string_agg(repeat('x', 1000), '')) FROM range(1000000)"
    line = _one_line(runner.invoke(app, ["history", str(history), "--sql", query, "--sql-memory", "20MB"]))
    assert line == "ncu-roofline: error: --sql: stopped at the query's memory limit, 20MB (--sql-memory raises it)"
    ok = runner.invoke(app, ["history", str(history), "--json", "-", "--sql-memory", "20MB", "--sql",
                             "SELECT count(*) AS n FROM launches"])
    assert ok.exit_code == 0 and json.loads(ok.stdout) == [{"n": 6}]  # the limit leaves room for a real query


@pytest.mark.parametrize("query", ["", "   \n", "-- only a comment", "/* a block */ ;", ";;"])
def test_an_empty_or_comment_only_query_is_refused_in_one_line(tmp_path, query):
    # tmp_path holds no history: the refusal comes before the folder is read
    line = _one_line(runner.invoke(app, ["history", str(tmp_path / "absent"), "--sql", query]))
    assert line == ("ncu-roofline: error: --sql: the query is empty (nothing but blanks, comments or "
                    "semicolons)")


def test_a_bad_memory_limit_is_refused_in_one_line(history):
    line = _one_line(runner.invoke(app, ["history", str(history), "--sql", "SELECT 1", "--sql-memory", "lots"]))
    assert line == "ncu-roofline: error: --sql-memory 'lots': expected a size such as 512MB or 4GB"


def test_sql_opens_only_the_tables_the_query_names(tmp_path):
    """A broken launches part does not stop a query of the kernels (that file is never opened), and a query of the
    launches names it and leaves its run out; the kernels' rows are the example's five groups per run."""
    analysis = ncu_roofline.analyze(EXAMPLE)
    for run_id in ("a", "b"):
        append_analysis(tmp_path, analysis, run_id=run_id)
    broken = next((tmp_path / "launches" / "run_id=b").glob("part-*.parquet"))
    broken.write_bytes(b"PAR1" + bytes(200) + b"PAR1")  # a footer no reader can parse
    kernels = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--sql",
                                  "SELECT run_id, count(*) AS n FROM kernels GROUP BY 1 ORDER BY 1"])
    assert kernels.exit_code == 0 and kernels.stderr == ""
    assert json.loads(kernels.stdout) == [{"run_id": "a", "n": 5}, {"run_id": "b", "n": 5}]
    launches = runner.invoke(app, ["history", str(tmp_path), "--json", "-", "--sql",
                                   "SELECT run_id, count(*) AS n FROM launches GROUP BY 1 ORDER BY 1"])
    assert launches.exit_code == 0
    assert json.loads(launches.stdout) == [{"run_id": "a", "n": 6}]
    note, = launches.stderr.splitlines()
    assert f"run 'b' left out: launches part {broken.name} is not a readable Parquet file" in note
