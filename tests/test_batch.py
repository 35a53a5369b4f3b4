"""`batch`: one run per report into the history, the same rows from the process pool and from Dask; a failing
report is named in one line and the others go on."""

from __future__ import annotations

import importlib.util
import shutil

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline.batch import BatchJob, BatchOptions, analyse_report, plan_jobs
from ncu_roofline.cli import app
from ncu_roofline.history.store import run_ids

from conftest import FIXTURES

runner = CliRunner()
EXAMPLE = FIXTURES / "example_h100_raw.csv"


def dataset(directory) -> pd.DataFrame:
    """Every kernel row of the dataset, in a fixed order (content comparison)."""
    return duckdb.sql(f"SELECT * FROM read_parquet('{directory}/kernels/*/part-*.parquet', hive_partitioning=true, "
                      "hive_types={'run_id': VARCHAR}) ORDER BY run_id, rank").df()


@pytest.mark.slow
def test_jobs_2_and_dask_local_give_the_same_dataset(samples, tmp_path):
    pytest.importorskip("ncu_report")
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask[distributed] is not installed (pip install 'ncu-roofline[dask]')")
    reports = sorted((samples / "nersc-gpp").glob("*.ncu-rep"))
    if not reports:
        pytest.skip("no nersc-gpp reports")
    pattern = str(samples / "nersc-gpp" / "*.ncu-rep")
    pool = runner.invoke(app, ["batch", pattern, "--history", str(tmp_path / "pool"), "--jobs", "2"])
    assert pool.exit_code == 0, pool.stderr
    dask = runner.invoke(app, ["batch", pattern, "--history", str(tmp_path / "dask"), "--dask", "local",
                               "--jobs", "2"])
    assert dask.exit_code == 0, dask.stderr
    expected = {p.name.removesuffix(".ncu-rep") for p in reports}  # output0 ... output4: one run per report
    assert run_ids(tmp_path / "pool") == run_ids(tmp_path / "dask") == expected
    by_pool, by_dask = dataset(tmp_path / "pool"), dataset(tmp_path / "dask")
    assert len(by_pool) > 0
    # Everything equal, run times included: a batch run's time is its report's modification time.
    pd.testing.assert_frame_equal(by_pool, by_dask)
    assert f"{len(reports)} of {len(reports)} reports appended" in pool.stdout


def test_a_failing_report_is_named_in_one_line_and_the_others_go_on(tmp_path):
    inputs = tmp_path / "in"
    (inputs / "a").mkdir(parents=True)
    (inputs / "b").mkdir()
    shutil.copy(EXAMPLE, inputs / "a" / "run.csv")
    shutil.copy(EXAMPLE, inputs / "b" / "run.csv")  # same stem: made unique
    (inputs / "broken.csv").write_text("not,an,ncu,export\n1,2,3,4\n")
    history = tmp_path / "history"
    result = runner.invoke(app, ["batch", str(inputs), "--history", str(history), "--jobs", "2",
                                 "--label", "fleet=test"])
    assert result.exit_code == 1
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"ncu-roofline: error: {inputs / 'broken.csv'}: ")
    assert run_ids(history) == {"run", "run-2"}
    rows = dataset(history)
    assert len(rows) == 2 * 5 and set(rows["labels"]) == {'{"fleet": "test"}'}
    assert "2 of 3 reports appended" in result.stdout and "1 failed" in result.stdout
    # Run again: every id exists. --skip-existing leaves them out; without it each one is refused, by name.
    again = runner.invoke(app, ["batch", str(inputs / "a"), str(inputs / "b"), "--history", str(history),
                                "--skip-existing", "--jobs", "1"])
    assert again.exit_code == 0 and "2 already there (skipped)" in again.stdout
    refused = runner.invoke(app, ["batch", str(inputs / "a"), "--history", str(history), "--jobs", "1"])
    assert refused.exit_code == 1 and "run id 'run' is already in the history" in refused.stderr


def test_run_ids_are_file_stems_made_unique_and_valid(tmp_path):
    for name in ("x.ncu-rep", "x.csv", "my run (2).csv", "y.ncu-repz"):
        (tmp_path / name).write_text("")
    jobs = plan_jobs([tmp_path / "x.ncu-rep", tmp_path / "x.csv", tmp_path / "my run (2).csv",
                      tmp_path / "y.ncu-repz"])
    assert [j.run_id for j in jobs] == ["x", "x-2", "my_run__2_", "y"]


def test_the_unit_of_work_returns_an_outcome_instead_of_raising(tmp_path):
    options = BatchOptions(history=str(tmp_path / "h"))
    missing = analyse_report(BatchJob(str(tmp_path / "missing.csv"), "m"), options)
    assert missing.error == f"{tmp_path / 'missing.csv'}: no such file" and missing.kernels == 0
    good = analyse_report(BatchJob(str(EXAMPLE), "ok"), options)
    assert good.error is None and (good.kernels, good.launches) == (5, 6)


def test_dask_missing_is_one_line(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    result = runner.invoke(app, ["batch", str(EXAMPLE), "--history", str(tmp_path), "--dask", "local"])
    assert result.exit_code == 2
    assert result.stderr == "ncu-roofline: error: --dask needs the optional extra: pip install " \
                            "'ncu-roofline[dask]'\n"


def test_the_default_worker_count_leaves_busy_cores_alone():
    """Issue #38: without --jobs, the workers are the CPUs not already busy (1-minute load average), at least one,
    at most one per report."""
    from ncu_roofline.batch import default_workers

    assert default_workers(100, cpus=2, load=0.3) == 2  # an idle 2-core machine: both
    assert default_workers(100, cpus=2, load=1.3) == 1  # one core busy already
    assert default_workers(100, cpus=2, load=7.9) == 1  # a loaded machine: one worker, never zero
    assert default_workers(3, cpus=16, load=0.0) == 3  # no more workers than reports
    assert default_workers(100, cpus=16, load=4.5) == 12
