"""Paths as outputs print them: a CI job's summary, JSON and notes never carry the absolute paths of the machine
that ran it (`/home/runner/work/...` says nothing to a reader and leaks the runner's layout).

A path under the working folder is shown relative to it (`runs/base.csv`), any other by its file name; a relative
path is shown as given. Reading always uses the real path: this is display only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# An absolute path inside a sentence: starts at a `/` that does not follow a word (`GB/s` is no path), runs to
# whitespace or punctuation that cannot be part of a file name here.
_ABSOLUTE = re.compile(r"(?<![\w.~/])/[^\s:;,'\"()\[\]`<>]+")


def shown_path(path: object) -> str:
    """`path` relative to the working folder when under it, else its file name (relative paths as given)."""
    text = str(path)
    if not os.path.isabs(text):
        return text
    here = os.path.abspath(os.getcwd())
    absolute = os.path.abspath(text)
    if os.path.commonpath([here, absolute]) == here:
        return os.path.relpath(absolute, here) + (os.sep if text.endswith(os.sep) else "")
    return Path(text).name or text


def without_absolute_paths(text: str) -> str:
    """Every absolute path of an existing file or folder in `text` (a note, a label) as `shown_path` shows it; a
    slash that names nothing on this machine (`/2`, `/s`) is left alone."""

    def shown(match: re.Match) -> str:
        token = match.group(0)
        path = token.rstrip(".")
        parent = os.path.dirname(path)
        if os.path.exists(path) or (parent not in ("", os.sep) and os.path.isdir(parent)):
            return shown_path(path) + token[len(path):]
        return token

    return _ABSOLUTE.sub(shown, text)
