"""Which fonts vl-convert draws the SVG and PNG images with: the Liberation Sans it ships, when that covers the text.

vl-convert's font database holds its own Liberation Sans (in memory) and every system font (read from disk). Where
the system has a Liberation Sans too (Debian's fonts-liberation, say), that copy is the one chosen for
`sans-serif`, Vega's only font, and the system font files are opened and read whole for every glyph drawn and
every label measured: about four reads of a 400 kB file per glyph, 0.6 CPU-s of a 40-kernel chart's SVG and
0.45 of its PNG. The two copies have the same advance widths (the SVGs are byte-identical), so the images look
the same; the outlines of the bundled copy are newer, and the same on every machine.

The font database is built once per process, at the first conversion, from `FONTCONFIG_FILE` when it is set: a
configuration naming one folder that does not exist leaves vl-convert its own fonts only. It is set for that
first conversion only (and never where the user set it), and only when every character of the spec is one the
bundled font has; a spec with others (a file name in another script, say) gets the system fonts back, so no
character loses the fallback font it had.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ENV = "FONTCONFIG_FILE"
NO_SYSTEM_FONTS = Path(__file__).with_name("no-system-fonts.conf")
# Standard places of system fonts (fontdb's own list where no fontconfig file names any), for the fallback.
SYSTEM_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.fonts", "~/.local/share/fonts")
# Code points of the Liberation Sans 2.00.1 that vl-convert 1.9 bundles (all four styles alike), read from the
# fonts' cmap tables; a subset of its 2,294 (whole blocks where it has them): Latin, Greek, Cyrillic, the
# punctuation, arrows and mathematical signs the charts use. Tabs and line breaks are not drawn.
BUNDLED_FONT_COVERS: tuple[tuple[int, int], ...] = (
    (0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x7E), (0xA0, 0x36F), (0x384, 0x38A), (0x38C, 0x38C), (0x38E, 0x3A1),
    (0x3A3, 0x3CE), (0x3D0, 0x513), (0x2012, 0x2022), (0x2026, 0x2026), (0x2030, 0x2030), (0x2032, 0x2034),
    (0x2039, 0x203A), (0x20A0, 0x20B5), (0x2122, 0x2122), (0x2190, 0x2195), (0x2202, 0x2202), (0x2206, 0x2206),
    (0x220F, 0x220F), (0x2211, 0x2212), (0x2215, 0x2215), (0x2219, 0x221A), (0x221E, 0x221F), (0x2248, 0x2248),
    (0x2260, 0x2261), (0x2264, 0x2265),
)

BUNDLED_FONT_VERSIONS = ((1, 9),)  # vl-convert (major, minor) releases whose bundled fonts were checked to be these
_state = {"fonts": None}  # None: no conversion yet; "bundled": vl-convert's own fonts only; "system": all fonts


def covered(text: str) -> bool:
    """Whether the bundled Liberation Sans has a glyph for every character of `text`."""
    return all(any(lo <= ord(ch) <= hi for lo, hi in BUNDLED_FONT_COVERS) for ch in set(text))


def spec_text(spec: Any) -> str:
    """Every string a spec holds (and its keys and expressions: ASCII), as one text to check."""
    return json.dumps(spec, ensure_ascii=False, allow_nan=True, default=str)


def bundles_checked_fonts(version: str) -> bool:
    """Whether this vl-convert release is one whose bundled Liberation Sans `BUNDLED_FONT_COVERS` was read from
    (another might bundle other fonts, or none: then the images keep the system fonts)."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) in BUNDLED_FONT_VERSIONS


def convert(vl_convert: Any, spec: Any, call):
    """`call()` (one vl-convert conversion of `spec`) with the fonts chosen as the module docstring says."""
    needs_system = not covered(spec_text(spec))
    if _state["fonts"] is None:
        if (needs_system or os.environ.get(ENV) is not None or not NO_SYSTEM_FONTS.is_file()
                or not bundles_checked_fonts(getattr(vl_convert, "__version__", ""))):
            _state["fonts"] = "system"
            return call()
        os.environ[ENV] = str(NO_SYSTEM_FONTS)
        try:
            result = call()  # the font database is built in here, once per process
        finally:
            del os.environ[ENV]
        _state["fonts"] = "bundled"
        return result
    if _state["fonts"] == "bundled" and needs_system:
        for folder in SYSTEM_FONT_DIRS:
            path = Path(folder).expanduser()
            if path.is_dir():
                vl_convert.register_font_directory(str(path))
        _state["fonts"] = "system"
    return call()
