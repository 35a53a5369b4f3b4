"""Where a history is: `--history` and `history DIR` take a folder or a `file://` URL; any other URL scheme is
refused in one line (the store's commit is an atomic rename, which an object store does not have: docs/history.md,
"Object stores")."""

from __future__ import annotations

import re
from pathlib import Path

from ..core.errors import InputError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/+(.*)$", re.DOTALL)  # a scheme of 2+ letters: not a drive letter


def local_folder(directory: str | Path) -> Path:
    """The local folder a `--history` value names: a path, or a `file://` URL. An object store URL (`s3://`,
    `gs://`...) is refused in one line rather than written to a local folder named `s3:` (a `Path` has already
    folded `s3://b` into `s3:/b`: both spellings are caught). See docs/history.md, "Object stores"."""
    text = str(directory)
    match = _URL.match(text)
    if match is None:
        return Path(directory)
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme == "file":
        return Path("/" + rest)
    raise InputError(None, f"{scheme}://{rest}: a history in an object store ({scheme}://) is not "
                           "supported yet; give a local or shared folder (or file:///path)")
