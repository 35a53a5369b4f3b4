"""Images are drawn with the Liberation Sans vl-convert bundles where it covers the text (render/chart/image_fonts.py):
the font database is built without the system fonts at the first conversion, and gets them back for a spec with
characters the bundled font lacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ncu_roofline.render.chart import image_fonts

ROOT = Path(__file__).resolve().parents[1]


class FakeConverter:
    """Stands in for the vl_convert module: records the FONTCONFIG_FILE each conversion saw and the folders
    registered."""

    __version__ = "1.9.0"

    def __init__(self):
        self.seen: list[str | None] = []
        self.registered: list[str] = []

    def register_font_directory(self, folder: str) -> None:
        self.registered.append(folder)

    def call(self):
        self.seen.append(os.environ.get(image_fonts.ENV))
        return b"image"


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(image_fonts, "_state", {"fonts": None})
    monkeypatch.delenv(image_fonts.ENV, raising=False)
    return FakeConverter()


def test_the_charts_own_characters_are_covered():
    # what the charts write beside names: dashes, arrows, ellipses, signs, Greek letters, micro
    assert image_fonts.covered("Hierarchical roofline — H100 · ≤ 66.2 ms … (19365,3,1)×(256,1,1) → ÷ ± Δ Σ µ ≥ – −")
    assert image_fonts.covered("tab\tand\nline breaks")
    assert not image_fonts.covered("模型.ncu-rep")  # CJK: the bundled font has none
    assert not image_fonts.covered("✅")


def test_first_conversion_without_system_fonts_then_the_environment_is_restored(fresh):
    assert image_fonts.convert(fresh, {"title": "roofline — H100"}, fresh.call) == b"image"
    assert fresh.seen == [str(image_fonts.NO_SYSTEM_FONTS)]
    assert image_fonts.ENV not in os.environ
    image_fonts.convert(fresh, {"title": "again"}, fresh.call)
    assert fresh.seen[1] is None  # later conversions change nothing: the database is built already
    assert fresh.registered == []


def test_a_character_the_bundled_font_lacks_brings_the_system_fonts_back(fresh, monkeypatch, tmp_path):
    folder = tmp_path / "fonts"
    folder.mkdir()
    monkeypatch.setattr(image_fonts, "SYSTEM_FONT_DIRS", (str(folder), str(tmp_path / "absent")))
    image_fonts.convert(fresh, {"title": "roofline"}, fresh.call)
    image_fonts.convert(fresh, {"title": "模型.ncu-rep"}, fresh.call)
    assert fresh.registered == [str(folder)]  # the folders that exist, once
    image_fonts.convert(fresh, {"title": "模型 again"}, fresh.call)
    assert fresh.registered == [str(folder)]


def test_system_fonts_from_the_start_when_the_first_spec_needs_them(fresh):
    image_fonts.convert(fresh, {"title": "模型.ncu-rep"}, fresh.call)
    assert fresh.seen == [None]
    assert image_fonts._state["fonts"] == "system"


def test_a_users_fontconfig_file_is_left_alone(fresh, monkeypatch):
    monkeypatch.setenv(image_fonts.ENV, "/etc/my-fonts.conf")
    image_fonts.convert(fresh, {"title": "roofline"}, fresh.call)
    assert fresh.seen == ["/etc/my-fonts.conf"]
    assert os.environ[image_fonts.ENV] == "/etc/my-fonts.conf"


def test_an_unchecked_vl_convert_release_keeps_the_system_fonts(fresh):
    fresh.__version__ = "2.0.0"
    image_fonts.convert(fresh, {"title": "roofline"}, fresh.call)
    assert fresh.seen == [None]
    assert not image_fonts.bundles_checked_fonts("garbage")


def test_the_bundled_fonts_alone_draw_text():
    """In a fresh process (the font database is built once per process): a PNG of one word, drawn with the
    configuration of no system fonts, has dark pixels, so the bundled font is there and chosen."""
    pytest.importorskip("vl_convert")
    script = (
        "import os, sys, vl_convert\n"
        "from ncu_roofline.render.chart import image_fonts\n"
        "svg = ('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"30\">'\n"
        "       '<rect width=\"120\" height=\"30\" fill=\"white\"/>'\n"
        "       '<text x=\"5\" y=\"20\" font-family=\"sans-serif\" font-size=\"16px\">Roofline</text></svg>')\n"
        "png = image_fonts.convert(vl_convert, {'title': 'Roofline'}, lambda: vl_convert.svg_to_png(svg))\n"
        "assert image_fonts._state['fonts'] == 'bundled', image_fonts._state\n"
        "sys.stdout.buffer.write(png)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != image_fonts.ENV}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    from test_chart_images import decode_png

    pixels = decode_png(done.stdout)
    dark = (pixels[..., :3] < 128).any(axis=-1).sum()
    assert dark > 100  # "Roofline" at 16 px: a few hundred pixels of ink; a missing font draws none
