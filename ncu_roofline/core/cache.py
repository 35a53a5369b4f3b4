"""The user's cache folder and the files kept there: only ever a speed-up, never a source of truth.

A cache file is one header line, then the body. The header holds what the file was made from (the caller's `key`:
a version, a source file's digest) and the body's SHA-256 and length, so a copy that was cut short, damaged, made
from something else or written by another program is never used: the caller rebuilds it. Files are written to a
temporary name and renamed, so a reader sees a whole file or none; a folder that cannot be made, read or written
costs the rebuild and nothing else.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

ENV_CACHE_DIR = "NCU_ROOFLINE_CACHE_DIR"


def cache_dir() -> Path:
    """Where cache files are kept: $NCU_ROOFLINE_CACHE_DIR, else the platform's user cache folder."""
    override = os.environ.get(ENV_CACHE_DIR)
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ncu-roofline", appauthor=False))


def read_checked(path: Path, key: bytes) -> bytes | None:
    """The body of `path` when its header names `key` and the body matches its digest and length; else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, sep, body = data.partition(b"\n")
    if not sep or not head.startswith(key):
        return None
    digest, _, length = head[len(key):].partition(b" bytes=")
    if not length.isdigit() or int(length) != len(body) or hashlib.sha256(body).hexdigest().encode() != digest:
        return None
    return body


def store_checked(path: Path, key: bytes, body: bytes) -> bool:
    """Write `key`'s header and `body` atomically (temporary file, then rename); False, nothing left behind, on
    failure."""
    payload = key + hashlib.sha256(body).hexdigest().encode() + b" bytes=" + str(len(body)).encode() + b"\n" + body
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
