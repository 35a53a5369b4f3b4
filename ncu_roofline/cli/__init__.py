"""The `ncu-roofline` command: one module per command (cli/analyze.py, cli/compare.py, ...), each parsing its
options, calling the library, writing the bundle and printing; what they share is in cli/common.py.

Exit codes: 0 success, 1 a gate the user asked for failed, 2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import warnings

import typer

from .common import ClosedStdout, GuardedStdout, StdoutClosed, StdoutFailed, on_sigterm

_APP_SETTINGS = dict(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                     help="Hierarchical roofline analysis of Nsight Compute (ncu) exports and reports.")
# Each command on the command line: its module here and what it registers, a function (a command) or a Typer (a
# group of commands), in the order the help lists them. Only the module of the command a run names is imported:
# the others' modules (and what they import: history's trends and SQL, model's, ceilings') were 9 modules and
# 10-15 ms of every `analyze`.
_COMMANDS = {"analyze": ("analyze", "analyze"), "show": ("show", "show"), "compare": ("compare", "compare"),
             "ceilings": ("ceilings", "ceilings_app"), "metrics": ("metrics", "metrics"),
             "model": ("model", "model_app"), "project": ("project", "project"), "history": ("history", "history"),
             "batch": ("batch", "batch"), "mcp": ("mcp", "mcp")}


def _with_commands(names) -> typer.Typer:
    """The app's group (its name, help and settings) holding the commands `names`, each registered as the whole
    app registers it."""
    group = typer.Typer(**_APP_SETTINGS)
    for name in names:
        module, attribute = _COMMANDS[name]
        command = getattr(importlib.import_module(f".{module}", __name__), attribute)
        if isinstance(command, typer.Typer):
            group.add_typer(command, name=name)
        else:
            group.command()(command)
    return group


def __getattr__(name: str):
    """`app`, the Typer of every command, made (and its commands' modules imported) when first asked for."""
    if name == "app":
        return globals().setdefault("app", _with_commands(_COMMANDS))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the command, then leave without interpreter finalization (`os._exit`), output flushed first.

    Why: the CSV readers hand pyarrow a Python stream (`readers.text.Utf8Stream`); Arrow's IO threads wrap each block
    read in a PyBuffer and may drop the last one just after the command returns. A thread that wants the GIL once
    CPython has begun finalizing is ended with pthread_exit, whose forced unwind through Arrow's noexcept frames calls
    std::terminate: "terminate called without an active exception", exit -6, about 2 runs in 100 on a file that is
    refused at once (fixtures/bad/raw_header_only.csv; backtrace: PyBuffer::~PyBuffer -> PyGILState_Ensure ->
    take_gil -> PyThread_exit_thread). Nothing the process must do is left to finalization: outputs are closed and
    renamed before the command returns.
    """
    code: int = 0
    signal.signal(signal.SIGTERM, on_sigterm)
    _standard_streams_held()
    keep_freed_memory()
    warnings.simplefilter("ignore")  # a warning is never the user's business on stderr (numpy overflow, pandas)
    guarded = sys.stdout = GuardedStdout(sys.stdout)
    try:
        code = run_command_line()
        if code != 2:
            guarded.flush()  # buffered output that cannot be written is a failure, not a silent loss
    except SystemExit as done:  # sys.exit() in a command (typer.Exit is returned as a code instead)
        code = _exit_code(done.code)
        if code != 2:
            try:
                guarded.flush()
            except StdoutFailed as error:
                code = _stdout_failed(error)
            except StdoutClosed:
                code = 128 + 13
    except StdoutFailed as error:  # raised outside a command's user_errors (typer's own output)
        code = _stdout_failed(error)
    except StdoutClosed:
        code = 128 + 13  # SIGPIPE's exit code, as `yes | head` gives
    except KeyboardInterrupt:
        code = 130
    except BaseException as exc:  # a bug or a resource limit: one line, never a traceback
        code = _unexpected(exc)
    _leave(code)


# glibc's mallopt parameters (malloc.h) and the values this process runs with
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_KEPT_MALLOC = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 1 << 30, _M_TOP_PAD: 64 << 20}


def keep_freed_memory() -> bool:
    """Have glibc keep freed heap memory for the next allocation instead of giving it back to the kernel at once.

    Why: a run over 10^6 launches makes hundreds of short-lived 8 MB column arrays. By default glibc unmaps or
    trims most of them when freed, so the next one is faulted in page by page again: 1.3-3.0 s of system time on
    the real narrow page at 10^6 launches against 0.5-0.7 s with these settings (user time the same, peak memory
    +2.5 %; benchmarks/RESULTS.md). Allocations over 32 MB are still mapped and unmapped on their own. A no-op
    (False) where the C library is not glibc."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(parameter, value) == 1 for parameter, value in _KEPT_MALLOC.items())


def _standard_streams_held() -> None:
    """A closed descriptor 0, 1 or 2 (`>&-`, `2>&-`) is held by /dev/null, so that no file this run opens can get
    that number (and be written by a library that prints to fd 1 or 2). A closed stdout is then a stream that
    refuses every write ("standard output is closed": exit 2), a closed stderr one that drops them (there is no
    other place to say anything; the exit code still tells)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDWR)
            if held != fd:  # a lower descriptor was free too and took it: move it (never happens after 0)
                os.dup2(held, fd)
                os.close(held)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:
        sys.stdout = ClosedStdout()


def _unexpected(exc: BaseException) -> int:
    """What escaped every command's `user_errors`: one line on stderr and exit 2. A resource limit is said in the
    user's words (input nested too deep, out of memory, an OS error naming its file); anything else is a bug, named
    by its type (NCU_ROOFLINE_TRACEBACK=1 prints the traceback for a report)."""
    from ..render.text.safe_text import for_terminal

    if os.environ.get("NCU_ROOFLINE_TRACEBACK"):
        import traceback

        traceback.print_exc()
    if isinstance(exc, RecursionError):
        line = "an input is nested too deep to read (RecursionError); no ncu export or ceilings file nests like that"
    elif isinstance(exc, MemoryError):
        line = "out of memory while reading the inputs; is one of them far larger than an ncu export can be?"
    elif isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        line = f"{where}{exc.strerror or exc}"
    else:
        line = f"internal error ({type(exc).__name__}: {exc}); please report it with the command line"
    try:
        print(f"ncu-roofline: error: {for_terminal(' '.join(line.split()))}", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return 2


def run_command_line(args: list[str] | None = None) -> int:
    """The command's exit code. A command line click refuses (an unknown option, a missing argument, a value out
    of range) is one line on stderr and exit 2, like every other bad input, instead of click's framed usage box."""
    try:
        result = _click_command(sys.argv[1:] if args is None else args)(args=args, standalone_mode=False)
    except Exception as exc:
        names = {cls.__name__ for cls in type(exc).__mro__}
        if "NoArgsIsHelpError" in names:  # no arguments: the help was printed, as `no_args_is_help` asks
            return 2
        if "Abort" in names:  # click's EOF at a prompt
            print("ncu-roofline: aborted", file=sys.stderr)
            return 1
        if "ClickException" not in names:
            raise
        from ..render.text.safe_text import for_terminal

        ctx = getattr(exc, "ctx", None)
        where = f"; see `{ctx.command_path} --help`" if ctx is not None and "UsageError" in names else ""
        message = for_terminal(" ".join(exc.format_message().split())).rstrip(".")
        print(f"ncu-roofline: error: {message}{where}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2) or 2)
    return result if isinstance(result, int) else 0


def _click_command(args: list[str]):
    """What click runs for this command line: the group of every command, built with only the command that `args`
    names when they name one (turning the options of every command into click's objects was 0.035 CPU-s of each
    run, one command's 0.004; importing every command's module 10-15 ms more), the whole of it otherwise (the help,
    a misspelt name).
    The same group either way: its name, help and settings, and that command as the whole app registers it."""
    first = args[0] if args else None
    if first not in _COMMANDS:
        return typer.main.get_command(__getattr__("app"))
    return typer.main.get_group(_with_commands([first]))


def _stdout_failed(error: StdoutFailed) -> int:
    from ..render.text.safe_text import for_terminal

    print(f"ncu-roofline: error: {for_terminal(error.line())}", file=sys.stderr)
    return 2


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _leave(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe or stdout (StdoutFailed was said already): nothing more can be said
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
