"""Bad inputs through the real command line: exit 2, exactly one line on stderr that names the file and says what is
wrong, never a traceback. The corpus is fixtures/bad/, with the expected text of each in fixtures/bad/EXPECTED.tsv
(a few hostile-looking inputs there must be analysed instead: exit 0, every launch present).

Then output safety: an input is never overwritten, a write that fails leaves neither a temporary file nor a damaged
earlier output, and an output folder that cannot be used is one clear line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from conftest import FIXTURES

BAD = FIXTURES / "bad"


def expectations() -> list[tuple[str, int, str]]:
    rows = []
    for line in (BAD / "EXPECTED.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, code, text = line.split("\t")
            rows.append((name, int(code), text))
    return rows


EXPECTED = expectations()


def cli(*args: str | Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ncu_roofline.cli", *map(str, args)], capture_output=True,
                          text=True, errors="replace", timeout=180, **kwargs)


def cli_in_process(*args: str | Path) -> SimpleNamespace:
    """The same command in this process (typer's CliRunner): no interpreter start-up per corpus file. An exception
    that escapes the CLI becomes a traceback on stderr, as it would in a real process."""
    import traceback

    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(result.exception))
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=stderr)


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory) -> dict[str, tuple[SimpleNamespace, Path]]:
    """Every corpus file through `ncu-roofline analyze FILE -o OUT --rows 0`, in process."""
    root = tmp_path_factory.mktemp("bad")
    # the ok_ files name no GPU: they are analysed, with every roof unknown, only under --allow-empty
    return {name: (cli_in_process("analyze", BAD / name, "-o", root / name, "--rows", "0",
                                  *(("--allow-empty",) if name.startswith("ok_") else ())), root / name)
            for name, _, _ in EXPECTED}


def test_a_bad_input_in_a_real_process_is_one_line_and_exit_2(tmp_path):
    """The process itself: exit status 2 and one stderr line, no traceback (the corpus runs in process)."""
    name, code, text = next(row for row in EXPECTED if row[1] == 2)
    proc = cli("analyze", BAD / name, "-o", tmp_path / "out", "--rows", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [line for line in proc.stderr.splitlines() if text in line]


def test_the_corpus_is_complete():
    listed = {name for name, _, _ in EXPECTED}
    present = {p.name for p in BAD.iterdir() if p.name != "EXPECTED.tsv"}
    assert listed == present
    assert sum(code == 2 for _, code, _ in EXPECTED) >= 30


@pytest.mark.parametrize("name,code,text", EXPECTED, ids=[name for name, _, _ in EXPECTED])
def test_bad_input_gives_one_line(corpus_runs, name, code, text):
    proc, out = corpus_runs[name]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, proc.stderr
    if code == 2:
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("ncu-roofline: error: ")
        assert str(BAD / name) in lines[0]
        assert text in lines[0]
        assert not any(out.glob("*.parquet")) if out.exists() else True
    else:  # analysed: stderr holds at most notes (launches left out of totals, a file given twice)
        assert all(line.startswith("ncu-roofline: note: ") for line in proc.stderr.splitlines()), proc.stderr
        launches = pd.read_parquet(out / "launches.parquet")
        assert len(launches) == int(text)
        if "non_utf8" in name:  # the bytes that are not UTF-8 become U+FFFD, the rest of the name is kept
            assert launches["kernel_name"].str.contains("\ufffd").all()


def test_a_missing_file_and_an_empty_folder(tmp_path):
    proc = cli_in_process("analyze", tmp_path / "nope.csv")
    assert proc.returncode == 2 and proc.stderr.splitlines() == [
        f"ncu-roofline: error: {tmp_path / 'nope.csv'}: no such file"]
    (tmp_path / "empty").mkdir()
    proc = cli_in_process("analyze", tmp_path / "empty")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "holds no ncu exports" in proc.stderr


# ---------------------------------------------------------------------------------------------------- output safety

GOOD = FIXTURES / "raw_base_units.csv"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", ["launches.parquet", "kernels.parquet", "roofline.html", "roofline.vl.json"])
def test_an_input_is_never_overwritten_by_an_output_of_the_same_name(tmp_path, name):
    source = tmp_path / name
    shutil.copyfile(GOOD, source)
    proc = cli_in_process("analyze", source, "-o", tmp_path, "--rows", "0")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and str(source) in lines[0] and "over an input file" in lines[0]
    assert source.read_bytes() == GOOD.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written, no temporary file left


def test_the_output_folder_cannot_be_an_input_file(tmp_path):
    source = tmp_path / "run.csv"
    shutil.copyfile(GOOD, source)
    proc = cli_in_process("analyze", source, "-o", source, "--rows", "0")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"ncu-roofline: error: {source}: the output path exists and is not a folder"]
    assert source.read_bytes() == GOOD.read_bytes()


def test_an_output_folder_under_a_file(tmp_path):
    source = tmp_path / "run.csv"
    shutil.copyfile(GOOD, source)
    proc = cli_in_process("analyze", source, "-o", source / "out", "--rows", "0")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and str(source / "out") in lines[0] and "part of the path is a file" in lines[0]
    assert source.read_bytes() == GOOD.read_bytes()


def _limit_file_size() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))  # writes past 2 KiB fail with EFBIG, like a full disk


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_write_that_fails_midway_leaves_no_temporary_file_and_earlier_outputs_intact(tmp_path):
    out = tmp_path / "out"
    first = cli_in_process("analyze", GOOD, "-o", out, "--rows", "0")
    assert first.returncode == 0, first.stderr
    before = _snapshot(out)
    assert {"launches.parquet", "kernels.parquet", "roofline.html"} <= set(before)

    # Tests run as root here, where a read-only folder still takes writes: a file-size limit makes the write of the
    # first Parquet fail after its temporary file was created and partly written (EFBIG, what a full disk gives).
    proc = cli("analyze", FIXTURES / "example_h100_raw.csv", "-o", out, "--rows", "0", preexec_fn=_limit_file_size)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "launches.parquet" in lines[0], proc.stderr
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".")]
    assert _snapshot(out) == before  # the earlier run's outputs are whole and unchanged


def test_an_output_folder_that_cannot_be_written(tmp_path):
    source = tmp_path / "run.csv"
    shutil.copyfile(GOOD, source)
    if os.geteuid() != 0:
        target = tmp_path / "locked"
        target.mkdir(mode=0o500)
        expected = "the output folder is not writable"
    else:  # root writes through permission bits; /sys is refused before any attempt (render/output_set.py)
        target = Path("/sys/ncu-roofline-test-out")
        expected = "is a device or system folder: choose another -o folder"
    proc = cli_in_process("analyze", source, "-o", target, "--rows", "0")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and expected in lines[0], proc.stderr


def test_write_atomic_cleans_up_when_the_rename_fails(tmp_path, monkeypatch):
    from ncu_roofline.core.errors import InputError
    from ncu_roofline.core import files
    target = tmp_path / "kernels.parquet"
    target.write_bytes(b"earlier output")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(InputError, match="No space left on device"):
        files.write_atomic(target, b"new output" * 1000)
    assert target.read_bytes() == b"earlier output"
    assert [p.name for p in tmp_path.iterdir()] == ["kernels.parquet"]
