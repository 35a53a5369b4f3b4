"""Where the data files live (`metrics/`: the catalogue, the GPU table): inside an installed wheel (package data),
else at the top of a source checkout. One answer, so every layer reads the same files, and one reader of them
(`read_data_toml`), which keeps their parsed form for the next run."""

from __future__ import annotations

import hashlib
import marshal
import sys
from pathlib import Path

from .cache import cache_dir, read_checked, store_checked

_PACKAGE = Path(__file__).resolve().parents[1]
METRICS_DIR = _PACKAGE / "metrics" if (_PACKAGE / "metrics").is_dir() else _PACKAGE.parent / "metrics"


def read_data_toml(path: Path) -> dict:
    """A TOML data file, parsed: from a marshal copy in the cache folder (core/cache.py) when one was made from these
    very bytes by this Python, else parsed, and the copy written for the next run.

    Why: tomllib is pure Python, and every analysis reads the GPU table (170 kB: 40 ms of parsing, more than the
    run's ranking), the catalogue and the limiter settings; the copy loads in 3 ms. The file is read and its digest
    checked every time, so an edited file is parsed again, never stale. Raises what reading and parsing raise
    (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError)."""
    raw = path.read_bytes()
    key = b"ncu-roofline parsed toml of sha256=%s marshal=%d sha256=" % (
        hashlib.sha256(raw).hexdigest().encode(), marshal.version)
    copy = _parsed_copy(path)
    body = read_checked(copy, key) if copy is not None else None
    if body is not None:
        try:
            data = marshal.loads(body)
        except (EOFError, ValueError, TypeError):
            data = None
        if isinstance(data, dict):
            return data
    import tomllib

    data = tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))  # as Path.read_text
    if copy is not None:
        try:
            store_checked(copy, key, marshal.dumps(data))
        except ValueError:  # a TOML date or time has no marshal form: no copy
            pass
    return data


def _parsed_copy(path: Path) -> Path | None:
    """Where the parsed copy of `path` is kept (one per file name and Python version), None without a cache."""
    try:
        return cache_dir() / f"parsed-{path.stem}-py{sys.version_info[0]}{sys.version_info[1]}.marshal"
    except Exception:  # no home folder, say: no cache
        return None
