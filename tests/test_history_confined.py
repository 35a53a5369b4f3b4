"""History paths stay inside the history (issue 37, item 1): a manifest naming a part by a path that leads out of
its run folder (`..`, absolute, a link) makes its run damaged: named on stderr, left out, and nothing outside is
read or removed by `--replace` or `--repair`; a history whose own folders are links is refused in one line; and
`--repair` waits for a writer committing instead of breaking its commit.

The references: the files outside the history (their bytes before and after), the example's six launches of
1626 µs in all (fixtures/example_h100_raw.csv), and the writer's own exit status and stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ncu_roofline
from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.history.store import PAUSE_ENV, append_analysis, connect, repair_history, run_ids, run_sql

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
INPUT_TIME_S = (850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0) * 1e-6
runner = CliRunner()


@pytest.fixture(scope="module")
def example() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(EXAMPLE)


def _history_with_victim(tmp_path: Path, example) -> tuple[Path, Path, Path]:
    """A history with runs `good` and `evil`, and outside it a copy of evil's kernels part (a valid part of run
    `evil`, so only the path can tell it is not the history's)."""
    history, outside = tmp_path / "h", tmp_path / "outside"
    outside.mkdir()
    append_analysis(history, example, run_id="good")
    append_analysis(history, example, run_id="evil")
    part = next((history / "kernels" / "run_id=evil").glob("part-*.parquet"))
    victim = outside / part.name
    shutil.copy(part, victim)
    return history, outside, victim


def _point_manifest(history: Path, run_id: str, table: str, name: str) -> None:
    manifest = history / "_runs" / f"{run_id}.json"
    data = json.loads(manifest.read_text())
    data["parts"][table] = name
    manifest.write_text(json.dumps(data))


def _sum_time(history: Path) -> dict[str, float]:
    con = connect(history)
    rows = run_sql(con, "SELECT run_id, sum(time_s) AS t FROM kernels GROUP BY 1 ORDER BY 1")
    return dict(zip(rows["run_id"], rows["t"]))


@pytest.mark.parametrize("how", ["dotdot", "absolute", "link", "linked-folder"])
def test_a_manifest_naming_a_part_outside_is_damaged_and_nothing_outside_is_removed(tmp_path, example, how):
    history, outside, victim = _history_with_victim(tmp_path, example)
    before = victim.read_bytes()
    folder = history / "kernels" / "run_id=evil"
    if how == "dotdot":
        _point_manifest(history, "evil", "kernels", f"part-/../../../../outside/{victim.name}")
    elif how == "absolute":
        _point_manifest(history, "evil", "kernels", str(victim))
    elif how == "link":  # the manifest's name is a plain file name, but the file is a link out of the history
        (folder / victim.name).unlink()
        (folder / victim.name).symlink_to(victim)
    else:  # the run folder itself is a link to a folder outside holding a valid part of the run
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    result = runner.invoke(app, ["history", str(history), "--rows", "0"])
    assert result.exit_code == 0, result.stderr
    notes = result.stderr.splitlines()
    reason = {"link": "is a symbolic link, not a part file", "linked-folder": "is not a plain folder"}.get(
        how, "outside its run folder")
    assert len(notes) == 1 and "run 'evil' left out" in notes[0] and reason in notes[0], notes
    assert set(_sum_time(history)) == {"good"}  # the victim's rows (a valid part of `evil`) were not read
    assert _sum_time(history)["good"] == pytest.approx(INPUT_TIME_S, rel=1e-12)

    repaired = runner.invoke(app, ["history", str(history), "--repair"])
    assert repaired.exit_code == 0, repaired.stderr
    assert "1 left out" in repaired.stdout and reason in repaired.stderr
    assert victim.read_bytes() == before
    assert len(list((history / "launches" / "run_id=evil").iterdir())) == 1  # the damaged run's own part stays

    replaced = runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", str(history), "--run-id",
                                   "evil", "--replace"])
    if how == "linked-folder":  # nothing is written through the link either
        assert replaced.exit_code == 2 and "is not a plain folder" in replaced.stderr, replaced.stderr
        assert sorted(p.name for p in outside.iterdir()) == [victim.name] and victim.read_bytes() == before
        return
    assert replaced.exit_code == 0, replaced.stderr
    assert victim.read_bytes() == before  # --replace removes only the parts of a whole, confined run
    assert run_ids(history) == {"good", "evil"}
    assert _sum_time(history)["evil"] == pytest.approx(INPUT_TIME_S, rel=1e-12)


@pytest.mark.parametrize("folder", ["kernels", "_runs"])
def test_a_history_whose_folders_are_links_is_refused_in_one_line(tmp_path, example, folder):
    real, history = tmp_path / "real", tmp_path / "h"
    append_analysis(real, example, run_id="r1")
    history.mkdir()
    for name in ("kernels", "launches", "_runs"):
        target = history / name
        if name == folder:
            target.symlink_to(real / name, target_is_directory=True)
        else:
            shutil.copytree(real / name, target)
    (real / "kernels" / "run_id=r1" / ".part-x.parquet.abc.tmp").write_bytes(b"a writer's temporary file")
    files_before = sorted(p for p in real.rglob("*") if p.is_file())
    for args in (["history", str(history)], ["history", str(history), "--repair"],
                 ["history", str(history), "--sql", "SELECT 1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stderr.splitlines() == [
            f"ncu-roofline: error: {history / folder}: is not a plain folder (a link or a file): a history's _runs, "
            "kernels and launches must be folders inside it"], args
    assert sorted(p for p in real.rglob("*") if p.is_file()) == files_before  # repair removed nothing through it


def _paused_writer(history: Path, run_id: str, pause_s: float) -> subprocess.Popen:
    env = {**os.environ, PAUSE_ENV: str(pause_s)}
    writer = subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(EXAMPLE), "--rows", "0",
                               "--history", str(history), "--run-id", run_id], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    folder = history / "launches" / f"run_id={run_id}"
    deadline = time.monotonic() + 60
    while not (folder.is_dir() and any(p.name.startswith(".part-") for p in folder.iterdir())):
        assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read()
        time.sleep(0.01)
    return writer  # inside its commit: its first part's temporary file is written, nothing committed yet


@pytest.mark.slow
def test_repair_during_a_commit_waits_for_it_and_the_writer_commits(tmp_path, example, monkeypatch):
    monkeypatch.setattr("ncu_roofline.history.store.REPAIR_WAIT_S", 120.0)  # a busy machine: wait, never give up
    append_analysis(tmp_path, example, run_id="r0")
    writer = _paused_writer(tmp_path, "r1", 0.7)  # three pauses of 0.7 s: parts, then manifest
    repaired = runner.invoke(app, ["history", str(tmp_path), "--repair"])
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0 and err == b"", err.decode()  # the commit was not broken
    assert repaired.exit_code == 0, repaired.stderr
    assert "0 files removed" in repaired.stdout  # it ran after the commit: nothing of the writer's was garbage
    assert run_ids(tmp_path) == {"r0", "r1"}
    assert _sum_time(tmp_path) == pytest.approx({"r0": INPUT_TIME_S, "r1": INPUT_TIME_S}, rel=1e-12)


@pytest.mark.slow
def test_repair_gives_up_in_one_line_while_a_writer_holds_the_history(tmp_path, example):
    append_analysis(tmp_path, example, run_id="r0")
    writer = _paused_writer(tmp_path, "r1", 3.0)
    with pytest.raises(InputError, match=r"a writer is committing a run here .*waited 0.2 s"):
        repair_history(tmp_path, wait_s=0.2)
    assert any(p.name.startswith(".part-") for p in (tmp_path / "launches" / "run_id=r1").iterdir())  # untouched
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err.decode()
    assert run_ids(tmp_path) == {"r0", "r1"}


@pytest.mark.parametrize("url", ["az://container/ci", "AZ://container/ci", "https://host/ci"])
def test_an_unsupported_url_is_refused_in_one_line_and_nothing_is_written(tmp_path, monkeypatch, url):
    """Before this check `analyze --history s3://bucket/ci` wrote a local folder `s3:`; s3:// is a bucket now
    (tests/test_history_s3.py), and so is gs:// (tests/test_history_gcs.py); any other scheme is refused."""
    monkeypatch.chdir(tmp_path)
    scheme, rest = url.split("://")
    expected = [f"ncu-roofline: error: {scheme.lower()}://{rest}: a history in an object store "
                f"({scheme.lower()}://) is not supported yet (s3:// and gs:// are); give s3://, gs://, a local or "
                "shared folder, or file:///path"]
    for args in (["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", "r1"],
                 ["batch", str(EXAMPLE), "--history", url], ["history", url], ["history", url, "--repair"],
                 ["history", url, "--sql", "SELECT 1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stderr.splitlines() == expected, args
    assert list(tmp_path.iterdir()) == []  # no folder named `s3:` (or anything else)


@pytest.mark.parametrize("url", ["gs:///ci", "s3:///ci", "S3:////ci"])
def test_a_bucket_url_without_a_bucket_is_refused_not_read_as_the_prefix(tmp_path, monkeypatch, url):
    """`gs:///ci` has an empty bucket name: it was read as bucket `ci`."""
    monkeypatch.chdir(tmp_path)
    scheme = url.split(":")[0].lower()
    for args in (["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", "r1"], ["history", url]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.stdout)
        [line] = result.stderr.splitlines()
        assert line.startswith(f"ncu-roofline: error: {scheme}://") and f"no bucket named ({scheme}://bucket/prefix)" in line
    assert list(tmp_path.iterdir()) == []


def test_a_file_url_is_the_local_folder(tmp_path, example):
    url = (tmp_path / "h").as_uri()  # file:///...
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--rows", "0", "--history", url, "--run-id", "r1"])
    assert result.exit_code == 0, result.stderr
    assert run_ids(tmp_path / "h") == {"r1"}
    shown = runner.invoke(app, ["history", url, "--json", "-", "--sql", "SELECT sum(time_s) AS t FROM kernels"])
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)[0]["t"] == pytest.approx(INPUT_TIME_S, rel=1e-12)
