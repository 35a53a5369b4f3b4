"""A run's output files as one set: a reader sees the previous set or the new one, never a mix.

How: every file of the run (Parquet tables, charts, the Markdown and JSON summaries) is rendered to bytes first and
staged as a temporary file beside its target (`.NAME.XXXX.tmp`, same folder, so a rename cannot cross a file
system). Only when every file is staged does `commit` rename them all into place and remove outputs of the previous
run that this one does not write (a `roofline.svg` from an earlier `--format svg`), with SIGINT and SIGTERM held
back for those few renames. Anything that stops the run earlier (bad input, a full disk, Ctrl-C, SIGTERM) removes
the staged files and leaves the previous set untouched.

Why not a temporary folder swapped into place: `-o DIR` may be a folder that holds other files (the inputs, say),
which a folder swap would move away. What remains is the renames themselves: a SIGKILL or power loss in the
microseconds between two renames can still leave a mix; nothing short of that can.

For tests, NCU_ROOFLINE_TEST_PAUSE_AFTER=NAME makes `stage` print "staged NAME" on stderr after staging NAME and
then sleep, so a test can send a signal mid-write.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable

from ..errors import InputError

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}
TEST_PAUSE_VARIABLE = "NCU_ROOFLINE_TEST_PAUSE_AFTER"
SPECIAL_ROOTS = ("/dev", "/proc", "/sys")  # folders of devices and kernel files, never an output's home


class OutputSet:
    """Files staged for one run; `commit` puts them all in place, leaving the context without it discards them."""

    def __init__(self, inputs: Iterable[Path] = ()) -> None:
        self.inputs = {Path(p).resolve() for p in inputs}
        self.staged: list[tuple[Path, Path]] = []  # (temporary file, target)
        self.stale: list[Path] = []

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def stage(self, path: Path, payload: bytes) -> Path:
        """Write `payload` to a temporary file beside `path`; `path` itself is untouched until `commit`."""
        path = Path(path)
        if path.resolve() in self.inputs:
            raise InputError(path, "refusing to overwrite an input file with an output")
        refuse_non_regular_target(path)
        if any(path.resolve() == target.resolve() for _, target in self.staged):
            raise InputError(path, "two outputs of this run would be written to the same file")
        try:
            handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
        self.staged.append((Path(tmp), path))  # recorded before writing, so an interrupted write is cleaned up
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(payload)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
        except OSError as exc:
            raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
        _test_pause(path.name)
        return path

    def replace_stale(self, paths: Iterable[Path]) -> None:
        """Outputs of an earlier run that this one does not write: removed at commit, so no old chart is left
        beside new tables."""
        staged = {target.resolve() for _, target in self.staged}
        self.stale = [Path(p) for p in paths if Path(p).resolve() not in staged and Path(p).resolve() not in
                      self.inputs]

    def commit(self) -> list[Path]:
        """Rename every staged file into place and remove stale ones, with SIGINT/SIGTERM held until done."""
        held = _hold_signals()
        try:
            for tmp, target in self.staged:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise InputError(target, f"cannot write: {exc.strerror or exc}") from None
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


def _hold_signals() -> set | None:
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)


def _release_signals(previous: set | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
            claimed[(Path(outdir) / name).resolve()] = f"-o {outdir} (its {name})"
    for option, path in files.items():
        if path is None or str(path) == "-":
            continue
        resolved = Path(path).resolve()
        if resolved in claimed:
            raise InputError(path, f"{option} names a file that {claimed[resolved]} also writes; give it another name")
        if resolved.is_dir():
            raise InputError(path, f"{option} names a folder; it needs a file name")
        refuse_non_regular_target(Path(path))
        claimed[resolved] = option


def refuse_non_regular_target(path: Path) -> None:
    """An output replaces the file at its path (a rename), so that path must be a plain file or nothing yet.

    Refused: a path in /dev, /proc or /sys (`--summary-md /dev/stdout` would replace the device link itself when
    run as root; '-' is stdout), a symbolic link (the rename would replace the link, and writing through it would
    let a link planted in a shared folder aim the write anywhere), a device, pipe or socket.
    """
    parent = os.path.realpath(Path(path).parent)
    if any(parent == root or parent.startswith(root + os.sep) for root in SPECIAL_ROOTS):
        raise InputError(path, "is in a device or system folder: outputs are written to files ('-' is stdout)")
    try:
        info = os.lstat(path)
    except OSError:
        return  # not there yet (or not reachable: the write will say so)
    if stat.S_ISLNK(info.st_mode):
        raise InputError(path, "is a symbolic link: outputs are not written over or through links; name a file")
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise InputError(path, "exists and is not a regular file (a device, pipe or socket): outputs are written "
                               "to files ('-' is stdout)")


def refuse_special_folder(outdir: Path) -> None:
    """`-o` in /dev, /proc or /sys: refused before anything is created there."""
    parent = os.path.realpath(outdir)
    if any(parent == root or parent.startswith(root + os.sep) for root in SPECIAL_ROOTS):
        raise InputError(outdir, "is a device or system folder: choose another -o folder")
