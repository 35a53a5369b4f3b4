"""A command line that click itself refuses (an unknown option, a value out of range, a missing argument) is bad
input like any other: one line on stderr, exit 2 (cli.run_command_line). It was click's framed usage box: five
lines or more, the error in the last of them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ncu_roofline.cli import run_command_line


@pytest.mark.parametrize("args,message,command", [
    (["batch", "-o", "x"], "No such option: -o", "batch"),
    (["analyze", "--top", "0", "run.csv"], "Invalid value for '--top': 0 is not in the range x>=1", "analyze"),
    (["history"], "Missing argument 'directory'", "history"),
    (["ceilings", "show"], "Missing argument 'name'", "ceilings show"),
    (["analyze", "--ot", "run.csv"], "No such option: --ot (Possible options: --out, --sort, --top)", "analyze"),
    (["no-such-command"], "No such command 'no-such-command'", ""),
])
def test_a_refused_command_line_is_one_line_and_exit_2(capsys, args, message, command):
    code = run_command_line(args)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith(f"ncu-roofline: error: {message}; see `"), line
    assert line.endswith(f"{' ' + command if command else ''} --help`"), line


def test_no_arguments_still_print_the_help(capsys):
    assert run_command_line([]) == 2
    out, err = capsys.readouterr()
    assert "Usage:" in out + err and "analyze" in out + err and "error" not in out + err


def test_help_and_a_run_keep_their_exit_codes(capsys):
    assert run_command_line(["analyze", "--help"]) == 0
    assert "--top" in capsys.readouterr().out
    assert run_command_line(["ceilings", "show", "H100", "--json"]) == 0
    assert '"name"' in capsys.readouterr().out


def test_the_installed_command_says_it_in_one_line():
    """The real process (cli.main): stderr holds the one line and nothing else."""
    done = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze", "--bogus", "x.csv"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "ncu-roofline: error: No such option: --bogus (Possible options: --gpu, --out, --verbose); "
        "see `python -m ncu_roofline.cli analyze --help`"]


def _help_of_the_whole_app(args, capsys):
    """The help as the group of every command prints it (what run_command_line built before it built only the
    command named)."""
    import typer

    from ncu_roofline.cli import app

    typer.main.get_command(app)(args=args, standalone_mode=False)
    return capsys.readouterr().out


def _every_command_line_name():
    import typer

    from ncu_roofline.cli import app

    names = [c.name or typer.main.get_command_name(c.callback.__name__) for c in app.registered_commands]
    subcommands = [[g.name, typer.main.get_command_name(c.name or c.callback.__name__)]
                   for g in app.registered_groups for c in g.typer_instance.registered_commands]
    return [[n] for n in names] + [[g.name] for g in app.registered_groups] + subcommands


@pytest.mark.parametrize("words", _every_command_line_name(), ids=" ".join)
def test_each_command_reads_the_same_as_in_the_whole_app(capsys, monkeypatch, words):
    """run_command_line builds only the command its arguments name: its help, options and refusals are those the
    whole app gives it."""
    monkeypatch.setenv("COLUMNS", "100")
    expected = _help_of_the_whole_app([*words, "--help"], capsys)
    assert run_command_line([*words, "--help"]) == 0
    assert capsys.readouterr().out == expected and "Usage:" in expected


def test_a_command_imports_its_own_module_and_no_other_commands():
    """cli/__init__ imports only the module of the command a run names (the others cost every `analyze` 10-15 ms):
    `ceilings` runs with its module loaded and none of the other nine commands' modules, nor history's trends; the
    whole app (`cli.app`, the help) still holds all ten."""
    probe = ("import sys\n"
             "from ncu_roofline.cli import run_command_line\n"
             "code = run_command_line(['ceilings', '--json'])\n"
             "print(code, sorted(m for m in sys.modules if m.startswith('ncu_roofline.cli.')),"
             " 'ncu_roofline.trends' in sys.modules, file=sys.stderr)\n"
             "from ncu_roofline.cli import app\n"
             "print(len(app.registered_commands), sorted(g.name for g in app.registered_groups), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    run, whole = done.stderr.splitlines()[-2:]
    assert run == "0 ['ncu_roofline.cli.ceilings', 'ncu_roofline.cli.common'] False", done.stderr
    assert whole == "8 ['ceilings', 'model']"
