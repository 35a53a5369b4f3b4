"""What every command shares: the consoles, one-line errors with exit 2, the option definitions, the one check
of a path given on the command line, and writing a run's files (its bundle and summaries) as one set.

Its own module so that the command modules (cli/analyze.py, cli/compare.py, ...) import it, never each other.
"""

from __future__ import annotations

import gc
import os
import re
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer
from typer._click.exceptions import ClickException  # typer 0.28 carries its own click: its types and
from typer._click.types import ParamType  # exceptions are the ones its parser calls and raises
from rich.console import Console

from ..core.errors import InputError
from ..render.text.safe_text import for_terminal

PIPE_WIDTH = 160  # logs and pipes get a wide table instead of rich's 80-column default, unless COLUMNS says


class _Stdout:
    """The console on sys.stdout as it is when something is printed: the stream and COLUMNS of that moment, not of
    the moment this module was imported (in one process, a command run with COLUMNS=80 must not narrow every
    later command's tables: the CLI's tests run many commands in one process, in any order). Both consoles leave
    emoji codes alone (`emoji=False`): a path or kernel name holding `:fire:` prints as it is, where rich would
    print 🔥 (and first load its emoji table, 5 ms of every run)."""

    def __init__(self) -> None:
        self._key: tuple[int, str] | None = None
        self._console: Console | None = None

    def _current(self) -> Console:
        columns = os.environ.get("COLUMNS", "")
        key = (id(sys.stdout), columns)
        if self._console is None or self._key != key:
            pipe_width = int(columns) if columns.isdigit() else PIPE_WIDTH
            self._console, self._key = Console(width=None if sys.stdout.isatty() else pipe_width, emoji=False), key
        return self._console

    def __getattr__(self, name: str):
        return getattr(self._current(), name)


stdout = _Stdout()
stderr = Console(stderr=True, emoji=False)


def fail(error: InputError) -> None:
    # for_terminal: a path or name holding a line break or an ESC sequence must not break the one line or the terminal
    stderr.print(f"ncu-roofline: error: {for_terminal(error.line())}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def user_errors() -> Iterator[None]:
    """Bad input becomes exit 2 and one line; anything unexpected still says which input it was reading."""
    try:
        yield
    except InputError as error:
        fail(error)
    except Terminated:
        stderr.print("ncu-roofline: terminated")
        raise typer.Exit(128 + signal.SIGTERM) from None
    except KeyboardInterrupt:
        stderr.print("ncu-roofline: interrupted")
        raise typer.Exit(130) from None


@contextmanager
def imports_without_gc() -> Iterator[None]:
    """The first import of pandas and the pipeline with Python's cyclic garbage collector paused, what it made then
    frozen (`gc.freeze`: never traversed again) before it resumes.

    Why: importing pandas, pyarrow and this package's modules makes about 115,000 tracked objects that live as long
    as the process; the collector walks them again at each collection that the growing heap triggers, about 3 % of
    a one-report run's instructions (benchmarks/RESULTS.md), and never frees one. Only a process that has not
    loaded pandas yet pauses (a command run in-process after another, as the tests do, collects as before), and only
    for the imports: every later step runs with the collector on."""
    if "pandas" in sys.modules or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


class StdoutFailed(InputError):
    """A write to standard output failed (`> /dev/full`, a closed pipe, an I/O error): exit 2 with one line."""


class StdoutClosed(Exception):
    """The reader of standard output went away (EPIPE): the CLI exits 141 (128 + SIGPIPE) without a word."""


class GuardedStdout:
    """sys.stdout as the CLI uses it: a failed write or flush raises `StdoutFailed` once, and later writes are
    dropped (nothing more can reach that stream, and the exit must not fail a second time)."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        return self._guard(lambda: self._stream.write(text), len(text))

    def flush(self) -> None:
        self._guard(self._stream.flush, None)

    def _guard(self, call, dropped):
        if self.failed:
            return dropped
        try:
            return call()
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            self.failed = True
            if isinstance(exc, BrokenPipeError):  # the reader left (`| head`): nothing to say, as SIGPIPE would
                raise StdoutClosed() from None
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            raise StdoutFailed(None, f"cannot write to standard output: {reason}") from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class ClosedStdout:
    """Standard output when descriptor 1 was closed (`>&-`): every write fails as a write to a closed file would,
    which GuardedStdout turns into exit 2 and one line on stderr."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        raise ValueError("standard output is closed")

    def flush(self) -> None:
        raise ValueError("standard output is closed")

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError("standard output is closed")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that every `finally` and cleanup runs for it too."""


def on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


GROUP_BY_HELP = "'kernel', 'nvtx' (kernel within NVTX range) or 'op' (PyTorch operator, from emit_nvtx ranges)."


def grouping(group_by: str) -> dict[str, str]:
    """`--group-by` as the analysis' keyword argument, checked before any input is read."""
    if group_by not in {"kernel", "nvtx", "op"}:
        raise InputError(None, f"--group-by must be 'kernel', 'nvtx' or 'op', not {group_by!r}")
    return {"group_by": group_by}


def _formats(value: Optional[str], out: Optional[Path], subject: Optional[str] = None) -> list[str]:
    """Extra chart formats, checked before anything is read or written (render/bundle.py: the one check of the
    names); without -o there is nowhere to write them, which is said rather than ignored."""
    from ..render.outputs import chart_formats

    formats = list(chart_formats(value, subject))
    if formats and out is None:
        raise InputError(None, "--format needs -o DIR (the charts are written there)")
    return formats


def _precisions(value: Optional[str], out: Optional[object]) -> list[str]:
    """`--precision fp32,tensor`: one extra chart per precision, checked before anything is read or written."""
    from ..core.vocabulary import PRECISIONS

    wanted = [p.strip().lower() for p in (value or "").split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PRECISIONS]
    if unknown:
        raise InputError(None, f"unknown --precision {', '.join(unknown)}; choose from {', '.join(PRECISIONS)}")
    if wanted and out is None:
        raise InputError(None, "--precision needs -o DIR (the charts are written there)")
    return wanted


def chart_link(written: list, summary: Optional[object], subject: str = "analysis",
               url: Optional[str] = None) -> Optional[str]:
    """The chart a Markdown summary links to: `url` (`--chart-url`, an uploaded artifact's address: a relative
    path is a broken image in a GitHub step summary) when given, else relative to the summary's folder the PNG
    when one was written (it shows inline), else the HTML page (render/outputs.py names them); None without -o or
    when the summary goes to stdout."""
    from pathlib import Path

    from ..render.outputs import linked_chart

    if url is not None:
        if not re.fullmatch(r"https?://[^\s()<>]+", url):
            raise InputError(None, f"--chart-url {url!r}: expected an http(s) URL without spaces or brackets")
        return url
    if summary is None or str(summary) == "-":
        return None
    target = linked_chart(subject, written)
    if target is None:
        return None
    return Path(os.path.relpath(os.path.realpath(target), os.path.dirname(os.path.realpath(str(summary))))).as_posix()


# ------------------------------------------------------------------------------------------- shared options
# Paths arrive as text (`str`, not `Path`): click would stat and access-check them itself and answer in its
# multi-line box, and Path("") is "." (an unset variable would mean the current folder). Every path argument and
# option is declared with `click_type=PATH`, so the empty-path check is the parameter's type, not a call each
# command must remember (tests/test_output_set.py lists every path parameter and tries "" on each).


class EmptyPath(ClickException):
    """An empty path on the command line: one line and exit 2 (cli.run_command_line), like any bad input."""

    exit_code = 2


def empty_path_message(option: str) -> str:
    return f"{option} was given an empty path ('')"


class PathText(ParamType):
    """A file or folder named on the command line, kept as text; "" (an unset variable in CI) is refused, never
    taken as the current folder."""

    name = "path"

    def convert(self, value: object, param: object, ctx: object) -> object:
        if isinstance(value, str) and not value.strip():
            kind = getattr(param, "param_type_name", None)
            name = param.opts[0] if kind == "option" else f"the {getattr(param, 'human_readable_name', 'path')} argument"
            raise EmptyPath(empty_path_message(name))
        return value


PATH = PathText()

GPU = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table.")
CEILINGS = typer.Option(None, "--ceilings", click_type=PATH, help="TOML file of roofs that override others.")
CLOCK = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'.")
GROUP_BY = typer.Option("kernel", "--group-by", help=GROUP_BY_HELP)
SUMMARY_MD = typer.Option(None, "--summary-md", click_type=PATH, help="Write a Markdown summary here.")
CHART_URL = typer.Option(None, "--chart-url", help="Where the chart will be online (an artifact link), for the "
                                                   "Markdown summary; shown inline when it ends in .png or .svg.")


def checked_text(value: Optional[str], option: str) -> Optional[str]:
    """The one empty-path check: `--summary-md ""` (an unset variable) is refused, saying so."""
    if value is not None and not value.strip():
        raise InputError(None, empty_path_message(option))
    return value


def path(value: Optional[str], option: str) -> Optional[Path]:
    checked = checked_text(value, option)
    return None if checked is None else Path(checked)


@dataclass(frozen=True)
class OutputOptions:
    """A command's output options, checked: `-o`, `--summary-md`, `--json` as paths, the `--format`s."""

    out: Optional[Path]
    summary_md: Optional[Path]
    json: Optional[Path]
    formats: list[str]


def output_options(subject: str, out: Optional[str], fmt: Optional[str], *, summary_md: Optional[str] = None,
                   json: Optional[str] = None) -> OutputOptions:
    """The one check of a command's output options, before any input is read: each path, `--format` against the
    subject's files in the registry (it needs -o), and no `--summary-md`/`--json` naming a file `-o` writes."""
    from ..render.bundle import check_distinct_outputs
    from ..render.outputs import names

    checked = OutputOptions(path(out, "-o"), path(summary_md, "--summary-md"), path(json, "--json"), [])
    formats = _formats(fmt, checked.out, subject)
    check_distinct_outputs(checked.out, names(subject), {"--summary-md": checked.summary_md, "--json": checked.json})
    return replace(checked, formats=formats)


def write_run(inputs: list[Path], out: Optional[Path], bundle: Optional[Callable[[], object]],
              summaries: list[tuple[Optional[Path], Callable[[], str]]], subject: Optional[str] = None
              ) -> tuple[list[Path], str]:
    """The run's `-o` bundle and its summary files (`--summary-md`, `--json`), all in place or none.

    Returns the files written into `out`, as the registry lists `subject`'s (render/outputs.listed), and the text
    of summaries sent to stdout ('-'), to print afterwards."""
    from ..render.bundle import OutputSet, emit_text
    from ..render.outputs import listed

    with OutputSet(inputs) as outputs:
        if out is not None and bundle is not None:
            bundle().stage(outputs, out, inputs)
        printed = [emit_text(outputs, dest, text) for dest, text in summaries]
        committed = outputs.commit()
    written = listed(subject, out, committed) if subject is not None and bundle is not None else []
    return written, "".join(text for text in printed if text)


def say(text: object, *, soft_wrap: bool = False) -> None:
    """A line on stdout, as it is (no markup, no highlighting), control characters made visible."""
    stdout.print(for_terminal(text), highlight=False, markup=False, soft_wrap=soft_wrap)


def warn(text: object) -> None:
    """A line on stderr after the tool's name ('note: ...', 'warning: ...'), control characters made visible."""
    stderr.print(f"ncu-roofline: {for_terminal(text)}", markup=False, highlight=False, soft_wrap=True)


def say_written(paths: list[Path]) -> None:
    for written in paths:
        say(f"wrote {written}")
