"""Which files a run reads: arguments expanded into regular files, each checked before anything opens it.

`os.stat` comes first, so a FIFO, a terminal or `/dev/stdin` is refused instead of blocking a read (or the
SHA-256 thread) forever; a file or folder that cannot be read is one line, not a traceback; an empty argument is
refused rather than meaning the current folder; and a file named twice (a relative and an absolute path, a
symlink) is read once, with a note, instead of counting every launch twice.
"""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path
from typing import Iterable

from ..core.errors import InputError

SUFFIXES = (".csv", ".txt", ".ncu-rep", ".ncu-repz", ".nsight-cuprof-report")
_KINDS = ((stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a character device (a terminal or /dev/stdin?)"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_regular_file(path: Path, what: str = "file") -> os.stat_result:
    """Stat `path` without opening it; raise InputError unless it is a regular file this process may read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, f"no such {what}") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(path, f"is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise InputError(path, f"is {kind}, not a regular file: save the output to a file and name that file")
    if not os.access(path, os.R_OK):
        raise InputError(path, "cannot be read: permission denied")
    return info


def read_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, refused in one line when it holds more than `limit` (a size that fits
    what the file is): checked on `stat` first, and again while reading, so a file that grows (or a device that
    says size 0) cannot make the read endless or eat the memory."""
    info = check_regular_file(path, what)
    if info.st_size > limit:
        raise InputError(path, f"is {info.st_size:,} bytes; a {what} is at most {limit:,} bytes")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(path, f"holds more than {limit:,} bytes; a {what} is at most that")
    return data


def expand_paths(paths: Iterable[str | Path], notes: list[str] | None = None,
                 refused: list[Path] | None = None) -> list[Path]:
    """Files named, folders (their ncu exports and reports, sorted) and globs, in a stable order, each checked.

    A file reached twice is kept at its first place; `notes`, when given, receives one line per such repeat.
    A path that is not a readable regular file (a FIFO in a folder, a socket) raises, or, when `refused` is given
    (`batch`, which names each bad report and goes on), is kept in its place and also listed there.
    """
    files: list[Path] = []
    for item in paths:
        if str(item).strip() == "":
            raise InputError(None, "an empty input path ('') was given; name a file or folder (an unset shell "
                                   "variable?)")
        path = Path(item)
        if path.is_dir():
            found = _folder_files(path)
            if not found:
                raise InputError(path, "the folder holds no ncu exports (.csv, .txt) or reports (.ncu-rep)")
            files.extend(found)
        elif not os.path.lexists(path) and any(ch in str(item) for ch in "*?["):
            matches = sorted(Path(p) for p in glob.glob(str(item), recursive=True) if not os.path.isdir(p))
            if not matches:
                raise InputError(item, "no file matches this pattern")
            files.extend(matches)
        else:
            files.append(path)
    unique: dict[str, Path] = {}
    for path in files:
        try:
            check_regular_file(path)
        except InputError:
            if refused is None:
                raise
            refused.append(path)
        key = os.path.realpath(path)
        if key in unique:
            if notes is not None:
                same = "was given twice" if unique[key] == path else f"is the same file as {unique[key]}"
                notes.append(f"{path} {same}: read once")
            continue
        unique[key] = path
    return list(unique.values())


def _folder_files(folder: Path) -> list[Path]:
    """Every export or report under `folder`; a subfolder that cannot be read is an error, not a silent gap."""
    if not os.access(folder, os.R_OK | os.X_OK):
        raise InputError(folder, "cannot be read: permission denied")

    def fail(exc: OSError) -> None:
        raise InputError(exc.filename or folder, f"cannot be read: {exc.strerror or exc}")

    found = []
    for root, _, names in os.walk(folder, onerror=fail):
        for name in names:
            if name.endswith(SUFFIXES):
                candidate = Path(root) / name
                if not candidate.is_dir():  # a FIFO or socket named like a report is named, not skipped
                    found.append(candidate)
    return sorted(found)
