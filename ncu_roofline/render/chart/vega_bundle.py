"""The Vega/Vega-Lite/Vega-Embed JavaScript that `roofline.html` inlines, built once per vl-convert version.

`vl_convert.javascript_bundle()` rebuilds the same ~900 kB bundle on every call (about 1.4 s, most of a small
run), so it is kept in the user's cache folder (platformdirs; `NCU_ROOFLINE_CACHE_DIR` overrides), one file per
(vl-convert version, Vega-Lite version). The file starts with a header line holding the SHA-256 and length of the
bundle; a file that does not match (cut short, damaged, written by something else) is rebuilt, never embedded. It is
written to a temporary name and renamed, so a reader sees the whole file or none. The cache is only a speed-up:
a folder that cannot be created, read or written means the bundle is built in memory, silently.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from ...core.cache import ENV_CACHE_DIR, cache_dir, read_checked, store_checked  # noqa: F401 (ENV_CACHE_DIR)

_HEADER = b"// ncu-roofline vega bundle sha256="


def vl_version() -> str:
    """The Vega-Lite version the specs are written against, in vl-convert's spelling ('v6_4')."""
    from .vegalite import VL_CONVERT_VERSION

    return VL_CONVERT_VERSION


def vl_convert_version() -> str:
    """vl-convert's version (its `__version__`), read from the name of its installed metadata folder
    (`vl_convert_python-1.9.0.post1.dist-info`: a post release carries the same code), so that a run that draws
    no image does not load the 90 MB extension (10-25 ms); from the module itself where no such folder is found."""
    spec = importlib.util.find_spec("vl_convert")
    if spec is not None and spec.origin:
        prefix, suffix = "vl_convert_python-", ".dist-info"
        found = sorted(entry.name[len(prefix):-len(suffix)] for entry in Path(spec.origin).parent.parent.glob(
            f"{prefix}*{suffix}"))
        if len(found) == 1:
            return re.sub(r"\.post\d+$", "", found[0])
    import vl_convert

    return vl_convert.__version__


def bundle_path(directory: Path, vl: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in f"{vl_convert_version()}-{vl}")
    return directory / f"vega-bundle-{safe}.js"


def javascript_bundle(*, use_cache: bool = True) -> str:
    """The Vega, Vega-Lite and Vega-Embed bundle the HTML page inlines, from the cache when a sound copy is there."""
    vl = vl_version()
    path = None
    if use_cache:
        try:
            path = bundle_path(cache_dir(), vl)
        except Exception:  # no home folder, say: no cache
            path = None
    if path is not None:
        cached = read_cached(path)
        if cached is not None:
            return cached
    import vl_convert

    bundle = vl_convert.javascript_bundle(vl_version=vl)
    if path is not None:
        store(path, bundle)
    return bundle


def read_cached(path: Path) -> str | None:
    """The cached bundle, or None when it is absent, unreadable or does not match its header."""
    body = read_checked(path, _HEADER)
    if body is None:
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def store(path: Path, bundle: str) -> bool:
    """Write the bundle atomically (temporary file, then rename); False, and nothing left behind, on failure."""
    return store_checked(path, _HEADER, bundle.encode("utf-8"))
