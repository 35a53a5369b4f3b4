"""Where a history is: `--history` and `history DIR` take a folder, a `file://` URL, `s3://bucket/prefix` or
`gs://bucket/prefix` (history/objects.py); any other URL scheme is refused in one line (docs/history.md, "Object
stores")."""

from __future__ import annotations

import re
from pathlib import Path

from ..core.errors import InputError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(/+)(.*)$", re.DOTALL)  # a scheme of 2+ letters: not a drive letter


def history_location(directory: str | Path):
    """Where a `--history` value (or `history DIR`) points: a local `Path` (a path, or a `file://` URL), or an
    `objects.ObjectHistory` (`s3://bucket/prefix`, `gs://bucket/prefix`). Any other URL scheme is refused in one
    line rather than written to a local folder named `az:` (a `Path` has already folded `s3://b` into `s3:/b`: both
    spellings are read). See docs/history.md, "Object stores"."""
    text = str(directory)
    match = _URL.match(text)
    if match is None:
        return Path(directory)
    scheme, slashes, rest = match.group(1).lower(), match.group(2), match.group(3)
    if scheme == "file":
        return Path("/" + rest)
    if scheme in ("s3", "gs"):
        from .objects import parse

        # `s3:/b` (a Path's folding of `s3://b`) and `s3://b` name bucket b; `gs:///ci` names no bucket at all
        return parse(scheme, "/" * max(0, len(slashes) - 2) + rest)
    raise InputError(None, f"{scheme}://{rest}: a history in an object store ({scheme}://) is not supported yet "
                           "(s3:// and gs:// are); give s3://, gs://, a local or shared folder, or file:///path")


def is_remote(where) -> bool:
    return not isinstance(where, Path)
