"""Writing artifacts safely: to a temporary name beside the target, then an atomic rename.

An interrupted run leaves no half-written Parquet or HTML, and an input file is never overwritten.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .errors import InputError

SPECIAL_ROOTS = ("/dev", "/proc", "/sys")  # folders of devices and kernel files, never an output's home


def stage_temporary(path: Path, payload: bytes, *, on_created: Callable[[Path], None] | None = None) -> Path:
    """Write `payload` to a new hidden temporary file beside `path` (`.NAME.<random>.tmp`, so globs for NAME's
    pattern never see it, and a later rename cannot cross a file system), with the usual permissions.

    `on_created` hears the temporary path before a byte is written, so a caller can clean up an interrupted write.
    Failures are one-line `InputError`s; the temporary file is removed when the write itself fails."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
    tmp = Path(name)
    if on_created is not None:
        on_created(tmp)
    with _removed_on_failure(tmp, path):
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    return tmp


def write_atomic(path: Path, payload: bytes, *, inputs: list[Path] = (),
                 before_replace: Callable[[Path], None] | None = None) -> Path:
    """Write `payload` to `path` via a temporary file and os.replace; never over an input file.

    `before_replace` (given the temporary path) runs between the write and the rename (a test hook for killed
    writers)."""
    resolved = real_path(path)
    if any(resolved == real_path(p) for p in inputs):
        raise InputError(path, "refusing to overwrite an input file with an output")
    refuse_non_regular_target(path)  # never rename over /dev/stdout, a link or a pipe
    tmp = stage_temporary(path, payload)
    with _removed_on_failure(tmp, path):
        if before_replace is not None:
            before_replace(tmp)
        os.replace(tmp, path)
    return path


@contextmanager
def _removed_on_failure(tmp: Path, path: Path) -> Iterator[None]:
    """Anything that stops the write removes the temporary file; an OSError becomes one line naming `path`."""
    try:
        yield
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
        raise


def real_path(path: str | Path) -> Path:
    """`path` absolute with its links followed as far as they go: `Path.resolve` without its RuntimeError on a
    symbolic-link loop (the loop stays in the path, and opening it then fails with one line saying so)."""
    return Path(os.path.realpath(path))


def in_special_folder(path: str | Path) -> bool:
    """Whether `path` lies in /dev, /proc or /sys, as written (`/proc/self/cwd/out`: a kernel file system, even
    though it leads back to an ordinary folder) or once its links are followed (`out -> /dev/shm/...`)."""
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        if any(candidate == root or candidate.startswith(root + os.sep) for root in SPECIAL_ROOTS):
            return True
    return False


def refuse_non_regular_target(path: Path, *, folder_ok: bool = True) -> None:
    """An output replaces the file at its path (a rename), so that path must be a plain file or nothing yet.

    Refused: a path in /dev, /proc or /sys (`--summary-md /dev/stdout` would replace the device link itself when
    run as root; '-' is stdout), a symbolic link (the rename would replace the link, and writing through it would
    let a link planted in a shared folder aim the write anywhere), a device, pipe or socket.
    """
    if in_special_folder(Path(path).parent):
        raise InputError(path, "is in a device or system folder: outputs are written to files ('-' is stdout)")
    try:
        info = os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(path, "cannot be written: its path runs through a loop of symbolic links") from None
        return  # not there yet (or not reachable: the write will say so)
    if stat.S_ISLNK(info.st_mode):
        raise InputError(path, "is a symbolic link: outputs are not written over or through links; name a file")
    if stat.S_ISDIR(info.st_mode) and not folder_ok:
        raise InputError(path, "is a folder: an output file of this name cannot be written there; move the folder "
                               "or choose another -o folder")
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise InputError(path, "exists and is not a regular file (a device, pipe or socket): outputs are written "
                               "to files ('-' is stdout)")


def refuse_special_folder(outdir: Path) -> None:
    """`-o` in /dev, /proc or /sys: refused before anything is created there."""
    if in_special_folder(outdir):
        raise InputError(outdir, "is a device or system folder: choose another -o folder")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
