"""A run's output files as one set: a reader sees the previous set or the new one, never a mix.

How: every file of the run (Parquet tables, charts, the Markdown and JSON summaries) is rendered to bytes first and
staged as a temporary file beside its target (`.NAME.XXXX.tmp`, same folder, so a rename cannot cross a file
system). Only when every file is staged does `commit` rename them all into place and remove outputs of the previous
run that this one does not write (a `roofline.svg` from an earlier `--format svg`), with SIGINT and SIGTERM held
back for those few renames: blocked in the calling thread, and their Python handlers swapped for one that only
notes the signal, so a signal the kernel hands to any other thread (Arrow's, Dask's) cannot raise mid-rename
either; a noted signal is raised again, with the usual handler, once the last rename is done. Anything that stops
the run earlier (bad input, a full disk, Ctrl-C, SIGTERM) removes the staged files and leaves the previous set
untouched.

Why not a temporary folder swapped into place: `-o DIR` may be a folder that holds other files (the inputs, say),
which a folder swap would move away. What remains is the renames themselves: a SIGKILL or power loss in the
microseconds between two renames can still leave a mix; nothing short of that can.

For tests, NCU_ROOFLINE_TEST_PAUSE_AFTER=NAME makes `stage` print "staged NAME" on stderr after staging NAME and
then sleep, so a test can send a signal mid-write; NCU_ROOFLINE_TEST_RENAME_PAUSE_S=S makes `commit` print
"committing" and sleep S seconds after each rename, so a test can signal inside the rename window.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..core.errors import InputError
from ..core.files import real_path, refuse_non_regular_target, refuse_special_folder, stage_temporary
from .outputs import OUTPUTS

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}
TEST_PAUSE_VARIABLE = "NCU_ROOFLINE_TEST_PAUSE_AFTER"
TEST_RENAME_PAUSE_VARIABLE = "NCU_ROOFLINE_TEST_RENAME_PAUSE_S"


@dataclass(frozen=True)
class Bundle:
    """The files one output needs, by name, every one rendered before any is written (a failing chart export
    writes nothing). `names`: every file this kind of output may write into its folder; one of them left by an
    earlier run and not in `files` (a `roofline.png` without --format png) is removed when the bundle is put in
    place, so no old chart stays beside new tables."""

    files: Mapping[str, bytes]
    names: tuple[str, ...] = field(default=())

    def stage(self, outputs: "OutputSet", outdir: Path, inputs: Iterable[Path] = ()) -> None:
        """Create `outdir` (refusing device folders, links, and any output that would replace an input), then
        stage every file in `outputs`; nothing is in place before `outputs.commit()`."""
        outdir = Path(outdir)
        refuse_special_folder(outdir)
        for name in self.files:  # every target checked before the folder is made or a byte is staged
            refuse_non_regular_target(outdir / name, folder_ok=False)
        prepare_outdir(outdir, list(inputs))
        for name, payload in self.files.items():
            outputs.stage(outdir / name, payload)
        outputs.replace_stale(outdir / name for name in self.names if (outdir / name).exists())

    def write(self, outdir: Path, inputs: Iterable[Path] = ()) -> list[Path]:
        """Stage and commit the bundle on its own: every file in place, or none."""
        inputs = list(inputs)
        with OutputSet(inputs) as outputs:
            self.stage(outputs, outdir, inputs)
            return outputs.commit()


def emit_text(outputs: "OutputSet", dest: Path | None, text) -> str | None:
    """A summary (`--summary-md`, `--json`) staged with the run's other files; for '-', the text to print once
    they are in place (`text` is called only when the summary is wanted)."""
    if dest is None:
        return None
    if str(dest) == "-":
        return text()
    outputs.stage(Path(dest), text().encode())
    return None


class OutputSet:
    """Files staged for one run; `commit` puts them all in place, leaving the context without it discards them."""

    def __init__(self, inputs: Iterable[Path] = ()) -> None:
        self.inputs = {real_path(p) for p in inputs}
        self.staged: list[tuple[Path, Path]] = []  # (temporary file, target)
        self.stale: list[Path] = []

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def stage(self, path: Path, payload: bytes) -> Path:
        """Write `payload` to a temporary file beside `path`; `path` itself is untouched until `commit`."""
        path = Path(path)
        if real_path(path) in self.inputs:
            raise InputError(path, "refusing to overwrite an input file with an output")
        refuse_non_regular_target(path, folder_ok=False)
        if any(real_path(path) == real_path(target) for _, target in self.staged):
            raise InputError(path, "two outputs of this run would be written to the same file")
        staged = stage_temporary(path, payload, on_created=lambda tmp: self.staged.append((tmp, path)))
        assert staged == self.staged[-1][0]
        _test_pause(path.name)
        return path

    def replace_stale(self, paths: Iterable[Path]) -> None:
        """Outputs of an earlier run that this one does not write: removed at commit, so no old chart is left
        beside new tables."""
        staged = {real_path(target) for _, target in self.staged}
        self.stale = [Path(p) for p in paths if real_path(p) not in staged and real_path(p) not in self.inputs]

    def commit(self) -> list[Path]:
        """Rename every staged file into place and remove stale ones, with SIGINT/SIGTERM held until done."""
        held = _hold_signals()
        pause = _rename_pause()
        try:
            for tmp, target in self.staged:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise InputError(target, f"cannot write: {exc.strerror or exc}") from None
                pause()
            for path in self.stale:
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass  # an earlier output that cannot be removed stays; the new set is whole
            written = [target for _, target in self.staged]
            self.staged = []
            return written
        finally:
            _release_signals(held)

    def discard(self) -> None:
        for tmp, _ in self.staged:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
        self.staged = []


class _Held:
    """SIGINT/SIGTERM held: the thread's mask, and (in the main thread) Python handlers that only note a signal."""

    def __init__(self) -> None:
        self.mask = None
        self.handlers: dict[int, object] = {}
        self.noted: list[int] = []


def _hold_signals() -> _Held:
    held = _Held()
    if threading.current_thread() is threading.main_thread():
        for sig in _HELD_SIGNALS:
            held.handlers[sig] = signal.signal(sig, lambda signum, _frame: held.noted.append(signum))
    if hasattr(signal, "pthread_sigmask"):
        held.mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    return held


def _release_signals(held: _Held) -> None:
    for sig, handler in held.handlers.items():
        signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    if held.mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held.mask)  # a signal blocked meanwhile arrives now
    if held.noted:
        signal.raise_signal(held.noted[0])  # with its own handler: KeyboardInterrupt, or the CLI's Terminated


def _rename_pause():
    seconds = os.environ.get(TEST_RENAME_PAUSE_VARIABLE)
    if not seconds:
        return lambda: None
    print("committing", file=sys.stderr, flush=True)
    return lambda: time.sleep(float(seconds))


def _test_pause(name: str) -> None:
    if os.environ.get(TEST_PAUSE_VARIABLE) == name:
        print(f"staged {name}", file=sys.stderr, flush=True)
        time.sleep(60)


def check_distinct_outputs(outdir: Path | None, names: Iterable[str], files: dict[str, Path | None]) -> None:
    """Refuse, before anything is read or written, a `--json`/`--summary-md` file that is one of the files `-o`
    writes (`outdir/NAME`), or that another such option names too: one would silently replace the other."""
    claimed: dict[Path, str] = {}
    if outdir is not None:
        refuse_special_folder(Path(outdir))
        for name in names:
            refuse_non_regular_target(Path(outdir) / name, folder_ok=False)  # before any input is read
            claimed[real_path(Path(outdir) / name)] = f"-o {outdir} (its {name})"
    for option, path in files.items():
        if path is None or str(path) == "-":
            continue
        resolved = real_path(path)
        if resolved in claimed:
            raise InputError(path, f"{option} names a file that {claimed[resolved]} also writes; give it another name")
        if resolved.is_dir():
            raise InputError(path, f"{option} names a folder; it needs a file name")
        refuse_non_regular_target(Path(path))
        claimed[resolved] = option


def prepare_outdir(outdir: Path, inputs: list[Path]) -> Path:
    """Create `outdir` or fail with one line; refuse an output folder that is an input file, or one where an output
    would replace an input (checked before anything is written, so a refused run changes nothing)."""
    refuse_special_folder(outdir)
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        if outdir.exists() and not outdir.is_dir():
            raise InputError(outdir, "the output path exists and is not a folder") from None
        raise InputError(outdir, "cannot create the output folder: part of the path is a file, not a folder") \
            from None
    except OSError as exc:
        raise InputError(outdir, f"cannot create the output folder: {exc.strerror or exc}") from None
    if not os.access(outdir, os.W_OK | os.X_OK):
        raise InputError(outdir, "the output folder is not writable")
    resolved = {real_path(p) for p in inputs}
    for name in dict.fromkeys(o.name for o in OUTPUTS):  # every name any -o folder may hold (render/outputs.py)
        if real_path(outdir / name) in resolved:
            raise InputError(outdir / name, f"refusing to write {name} over an input file of the same name; "
                                            "choose another -o folder")
    return outdir
