"""Output files as one set (render/bundle.py): an interrupted or failed run leaves the previous set whole, no
temporary file, no new file beside old ones; every option is checked before anything is written.

The signal tests run the real command in a subprocess (they are about the process): the test hook
NCU_ROOFLINE_TEST_PAUSE_AFTER=NAME makes it stop right after staging NAME and say so on stderr; the test then sends
SIGTERM or SIGINT, exactly mid-write.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app, run_command_line
from ncu_roofline.core.errors import InputError
from ncu_roofline.render.bundle import TEST_PAUSE_VARIABLE, Bundle, OutputSet
from ncu_roofline.render.outputs import chart_formats

from conftest import FIXTURES

FIRST = FIXTURES / "raw_base_units.csv"
SECOND = FIXTURES / "example_h100_raw.csv"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def first_run(out: Path) -> dict[str, bytes]:
    result = CliRunner().invoke(app, ["analyze", str(FIRST), "-o", str(out), "--rows", "0", "--format", "svg"])
    assert result.exit_code == 0, result.output
    before = snapshot(out)
    assert set(before) == {"launches.parquet", "kernels.parquet", "roofline.vl.json", "roofline.html", "roofline.svg"}
    return before


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("pause_after,sig,code,said", [
    ("launches.parquet", signal.SIGTERM, 143, "ncu-roofline: terminated"),
    ("roofline.html", signal.SIGTERM, 143, "ncu-roofline: terminated"),
    ("summary.md", signal.SIGINT, 130, "ncu-roofline: interrupted"),
])
@pytest.mark.slow
def test_a_signal_mid_write_leaves_the_previous_set_whole(tmp_path, pause_after, sig, code, said):
    out = tmp_path / "out"
    before = first_run(out)
    summary = tmp_path / "summary.md"
    summary.write_text("previous summary\n")
    env = {**os.environ, TEST_PAUSE_VARIABLE: pause_after}
    proc = subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(SECOND), "-o", str(out),
                             "--rows", "0", "--summary-md", str(summary)],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr.readline().strip() == f"staged {pause_after}"  # the hook: it is paused mid-write
        staged = [p.name for p in out.iterdir() if p.name.endswith(".tmp")] + \
            [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert staged  # new files exist, as temporary files only
        proc.send_signal(sig)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == code, rest
    finally:
        proc.kill()
        proc.communicate()  # closes the pipe
    assert rest.strip().splitlines() == [said]
    assert snapshot(out) == before  # old set, byte for byte: no new file, no temporary file
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert summary.read_text() == "previous summary\n"


def test_an_uninterrupted_run_replaces_the_whole_set(tmp_path):
    out = tmp_path / "out"
    before = first_run(out)
    result = CliRunner().invoke(app, ["analyze", str(SECOND), "-o", str(out), "--rows", "0"])
    assert result.exit_code == 0, result.output
    after = snapshot(out)
    # the earlier run's roofline.svg is gone: it would show the old kernels beside the new tables
    assert set(after) == {"launches.parquet", "kernels.parquet", "roofline.vl.json", "roofline.html"}
    assert all(after[name] != before[name] for name in after)


@pytest.mark.parametrize("args,reason", [
    (["--format", "bogus"], "unknown --format bogus; choose from svg, png"),
    (["--json", "{out}/kernels.parquet"], "--json names a file that -o {out} (its kernels.parquet) also writes"),
    (["--summary-md", "{out}/roofline.html"], "--summary-md names a file that -o {out} (its roofline.html) also"),
    (["--json", "{tmp}/s.md", "--summary-md", "{tmp}/s.md"], "--json names a file that --summary-md also writes"),
    (["--json", "{tmp}"], "--json names a folder"),
])
def test_bad_options_are_refused_before_anything_is_written(tmp_path, args, reason):
    out = tmp_path / "out"
    before = first_run(out)
    args = [a.format(out=out, tmp=tmp_path) for a in args]
    result = CliRunner().invoke(app, ["analyze", str(SECOND), "-o", str(out), "--rows", "0", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and reason.format(out=out, tmp=tmp_path) in lines[0], result.output
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


EMPTY_PATH_COMMANDS = {"analyze": ["analyze", str(SECOND)], "compare": ["compare", str(SECOND), str(SECOND)],
                       "history": ["history", "{tmp}/history"],
                       "model": ["model", "gemm", "--m", "8", "--n", "8", "--k", "8", "--gpu", "H100 PCIe"]}


@pytest.mark.parametrize("name,option", [(name, option) for name in EMPTY_PATH_COMMANDS
                                         for option in ("-o", "--json", "--summary-md", "--ceilings")
                                         if (name, option) not in {("model", "--summary-md"),  # model has none
                                                                   ("history", "--ceilings")}])  # nor history
def test_an_empty_path_is_refused_by_every_command_in_the_same_words(tmp_path, capsys, name, option):
    """cli/common.py's one check, the type of every path parameter: an unset variable (`--summary-md ""`) never
    means the current folder. Refused while the command line is parsed, so through cli.run_command_line."""
    command = [a.format(tmp=tmp_path) for a in EMPTY_PATH_COMMANDS[name]]
    assert run_command_line([*command, option, ""]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"ncu-roofline: error: {option} was given an empty path ('')"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,name", [
    (["batch", ""], "the inputs argument"), (["batch", str(SECOND), "--history", ""], "--history"),
    (["history", ""], "the directory argument"), (["show", "", "1"], "the outdir argument"),
    (["analyze", ""], "the inputs argument"), (["compare", str(SECOND), ""], "the head argument"),
    (["model", "points", ""], "the file argument"), (["compare", str(SECOND), str(SECOND), "--nsys", ""], "--nsys"),
])
def test_an_empty_path_argument_never_means_the_current_folder(tmp_path, monkeypatch, capsys, args, name):
    """`batch "" --history h` once analysed every export in the current folder; `history ""` and `show ""` read
    it. An empty argument is refused in one line, exit 2, and nothing is read or written."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SECOND, tmp_path / "run.csv")  # what an empty path taken as "." would have found
    assert run_command_line(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"ncu-roofline: error: {name} was given an empty path ('')"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


# Every parameter of the command line that names a file or folder, listed here by hand (not read off the code).
PATH_PARAMETERS = {
    "analyze": {"inputs", "out_arg", "ceilings", "summary_md_arg", "json_arg", "history_arg", "points_arg", "nsys"},
    "batch": {"inputs", "history_arg", "ceilings", "nsys"},
    "compare": {"base", "head", "out_arg", "ceilings", "summary_md_arg", "json_arg", "nsys"},
    "history": {"directory", "out_arg", "summary_md_arg", "json_arg"},
    "show": {"outdir"},
    "model points": {"file", "json_out", "out", "ceilings"},
}


def test_every_path_parameter_has_the_path_type():
    """The empty-path check is applied by type: each path parameter of each command is declared PATH."""
    import typer

    from ncu_roofline.cli.common import PathText

    root = typer.main.get_command(app)
    for path, expected in PATH_PARAMETERS.items():
        command = root
        for word in path.split():
            command = command.commands[word]
        typed = {p.name for p in command.params if isinstance(p.type, PathText)}
        assert expected <= typed, (path, sorted(expected - typed))


def test_compare_bad_options_are_refused_before_anything_is_written(tmp_path):
    result = CliRunner().invoke(app, ["compare", str(FIRST), str(FIRST), "-o", str(tmp_path),
                                      "--json", str(tmp_path / "compare.parquet")])
    assert result.exit_code == 2
    assert "--json names a file that -o" in result.output and "(its compare.parquet)" in result.output
    assert list(tmp_path.iterdir()) == []


def test_output_set_commit_and_discard(tmp_path):
    source = tmp_path / "input.csv"
    source.write_text("x")
    (tmp_path / "old.svg").write_text("old chart")
    with OutputSet([source]) as outputs:
        outputs.stage(tmp_path / "a.bin", b"a")
        with pytest.raises(InputError, match="refusing to overwrite an input file"):
            outputs.stage(source, b"y")
        with pytest.raises(InputError, match="two outputs of this run would be written to the same file"):
            outputs.stage(tmp_path / "." / "a.bin", b"b")
        assert not (tmp_path / "a.bin").exists()  # staged only
        outputs.replace_stale([tmp_path / "old.svg", tmp_path / "a.bin", source])
        assert outputs.commit() == [tmp_path / "a.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "input.csv"]
    assert (tmp_path / "a.bin").read_bytes() == b"a" and source.read_text() == "x"

    with OutputSet() as outputs:
        outputs.stage(tmp_path / "b.bin", b"b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "input.csv"]  # left without commit: discarded


def test_outputs_never_replace_devices_links_or_pipes(tmp_path, monkeypatch):
    """`--summary-md /dev/stdout` once replaced the /dev/stdout link with a file (root may write in /dev). The
    device folders are faked here under tmp_path, so that a regression cannot damage the machine."""
    from ncu_roofline.core import files
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    (fake_dev / "stdout").symlink_to("/proc/self/fd/1")
    monkeypatch.setattr(files, "SPECIAL_ROOTS", (str(fake_dev),))
    target = tmp_path / "real.md"
    target.write_text("kept")
    (tmp_path / "link.md").symlink_to(target)
    os.mkfifo(tmp_path / "pipe.md")
    cases = {str(fake_dev / "stdout"): "is in a device or system folder",
             str(tmp_path / "link.md"): "is a symbolic link",
             str(tmp_path / "pipe.md"): "exists and is not a regular file"}
    for dest, reason in cases.items():
        for option in ("--summary-md", "--json"):
            result = CliRunner().invoke(app, ["analyze", str(FIRST), "--rows", "0", option, dest])
            assert result.exit_code == 2, result.output
            assert reason in result.output and len(result.output.strip().splitlines()) == 1, result.output
    result = CliRunner().invoke(app, ["analyze", str(FIRST), "--rows", "0", "-o", str(fake_dev / "out")])
    assert result.exit_code == 2 and "is a device or system folder" in result.output
    assert (fake_dev / "stdout").is_symlink() and os.readlink(fake_dev / "stdout") == "/proc/self/fd/1"
    assert target.read_text() == "kept" and (tmp_path / "link.md").is_symlink()
    assert sorted(p.name for p in fake_dev.iterdir()) == ["stdout"]


def test_every_writer_refuses_links_and_device_folders(tmp_path, monkeypatch):
    """The same rule for files written outside an output set (`model --json`, `write_atomic`, `prepare_outdir`)."""
    from ncu_roofline.core import files
    from ncu_roofline.render import bundle

    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    (fake_dev / "stdout").symlink_to("/proc/self/fd/1")
    monkeypatch.setattr(files, "SPECIAL_ROOTS", (str(fake_dev),))
    with pytest.raises(InputError, match="is in a device or system folder"):
        files.write_atomic(fake_dev / "stdout", b"x")
    with pytest.raises(InputError, match="is a device or system folder"):
        bundle.prepare_outdir(fake_dev / "out", [])
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(InputError, match="is a symbolic link"):
        files.write_atomic(tmp_path / "link.json", b"x")
    assert os.readlink(fake_dev / "stdout") == "/proc/self/fd/1" and not (tmp_path / "elsewhere.json").exists()
    assert sorted(p.name for p in fake_dev.iterdir()) == ["stdout"]


def test_a_bundle_never_writes_over_an_input_and_puts_nothing_in_place_when_refused(tmp_path):
    """history's bundle passes the dataset's part files as inputs: an output of that name is refused, and the other
    files of the bundle are not written either."""
    part = tmp_path / "part-0.parquet"
    part.write_bytes(b"the dataset")
    bundle = Bundle({"history.json": b"{}", "part-0.parquet": b"an output"}, names=("history.json",))
    with pytest.raises(InputError, match="refusing to overwrite an input file with an output"):
        bundle.write(tmp_path, inputs=[part])
    assert part.read_bytes() == b"the dataset"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part-0.parquet"]


def test_a_bundle_removes_what_an_earlier_run_of_its_kind_left(tmp_path):
    (tmp_path / "model.svg").write_bytes(b"old chart")
    (tmp_path / "notes.txt").write_bytes(b"the user's")
    written = Bundle({"model.html": b"new"}, names=("model.html", "model.svg")).write(tmp_path)
    assert written == [tmp_path / "model.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.html", "notes.txt"]


@pytest.mark.parametrize("value,expected", [("svg, PNG", ("svg", "png")), (None, ()), (["png"], ("png",)), ("", ())])
def test_chart_formats_is_the_one_format_check(value, expected):
    assert chart_formats(value) == expected


def test_an_unknown_format_is_refused_the_same_way_by_the_library():
    with pytest.raises(InputError, match="unknown --format bmp; choose from svg, png"):
        chart_formats("svg,bmp")


@pytest.mark.parametrize("command,option", [
    (["analyze", str(SECOND)], "--history"), (["analyze", str(SECOND)], "--points"),
    (["batch", str(SECOND)], "--history"),
])
def test_an_empty_history_or_points_path_never_means_the_current_folder(tmp_path, monkeypatch, capsys, command,
                                                                       option):
    """`--history "$UNSET"` once wrote a run into the current folder: typer turned "" into Path('.')."""
    monkeypatch.chdir(tmp_path)
    args = [*command, option, ""] + (["--history", str(tmp_path / "h")] if command[0] == "batch" and
                                      option != "--history" else [])
    assert run_command_line(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"ncu-roofline: error: {option} was given an empty path ('')"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", EMPTY_PATH_COMMANDS)
def test_format_without_an_output_folder_is_refused_by_every_command_in_the_same_words(tmp_path, name):
    """Nothing is dropped silently: `--format svg` without `-o` has nowhere to write the images."""
    command = [a.format(tmp=tmp_path) for a in EMPTY_PATH_COMMANDS[name]]
    result = CliRunner().invoke(app, [*command, "--format", "svg"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "ncu-roofline: error: --format needs -o DIR (the charts are written there)"
    assert list(tmp_path.iterdir()) == []
