"""The cached Vega bundle (render/chart/vega_bundle.py): same HTML whatever the cache holds, damaged copies rebuilt, an
unusable cache folder never an error, and NCU_ROOFLINE_CACHE_DIR honoured."""

from __future__ import annotations

import hashlib

import pytest
import vl_convert

from ncu_roofline import analyze
from ncu_roofline.core import cache as cache_files
from ncu_roofline.render.chart import vega_bundle
from ncu_roofline.render.chart.vegalite import VL_CONVERT_VERSION

from conftest import FIXTURES

FAKE = "/* fake bundle */ const vega = 1;\n"


@pytest.fixture
def fake_builder(monkeypatch):
    """vl-convert's builder replaced by a fast one that counts its calls (the cache logic is what is tested)."""
    calls = []

    def build(vl_version=None):
        calls.append(vl_version)
        return FAKE

    monkeypatch.setattr(vl_convert, "javascript_bundle", build)
    return calls


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(vega_bundle.ENV_CACHE_DIR, str(folder))
    return folder


@pytest.mark.slow
def test_html_is_the_same_from_a_cold_cache_a_warm_cache_and_no_cache(tmp_path, cache, monkeypatch):
    result = analyze(FIXTURES / "example_h100_raw.csv")
    cold = result.write(tmp_path / "cold")
    [cached] = list(cache.glob("vega-bundle-*"))  # the cold run filled the cache
    warm = result.write(tmp_path / "warm")
    monkeypatch.setattr(vega_bundle, "cache_dir", lambda: 1 / 0)  # no cache at all: built in memory
    uncached = result.write(tmp_path / "uncached")
    assert [p.name for p in cold] == [p.name for p in warm] == [p.name for p in uncached]
    for a, b, c in zip(cold, warm, uncached):
        assert a.read_bytes() == b.read_bytes() == c.read_bytes(), a.name
    # The page inlines exactly what vl-convert builds for the Vega-Lite version the specs are written against.
    bundle = vl_convert.javascript_bundle(vl_version=VL_CONVERT_VERSION)
    assert cached.read_bytes().split(b"\n", 1)[1].decode() == bundle
    assert bundle in (tmp_path / "warm" / "roofline.html").read_text(encoding="utf-8")


def test_the_bundle_is_built_once_then_read_from_the_cache(cache, fake_builder):
    assert vega_bundle.javascript_bundle() == FAKE
    assert vega_bundle.javascript_bundle() == FAKE
    assert len(fake_builder) == 1
    [path] = list(cache.iterdir())
    assert path.name == f"vega-bundle-{vl_convert.__version__}-{vega_bundle.vl_version()}.js"
    head, body = path.read_bytes().split(b"\n", 1)
    assert body == FAKE.encode()
    assert head == (b"// ncu-roofline vega bundle sha256=" + hashlib.sha256(FAKE.encode()).hexdigest().encode()
                    + b" bytes=" + str(len(FAKE)).encode())


@pytest.mark.parametrize("damage", ["cut short", "byte flipped", "no header", "empty", "other length"])
def test_a_damaged_cache_is_rebuilt_not_embedded(cache, fake_builder, damage):
    vega_bundle.javascript_bundle()
    [path] = list(cache.iterdir())
    good = path.read_bytes()
    damaged = {
        "cut short": good[:-5],
        "byte flipped": good[:-3] + b"X" + good[-2:],
        "no header": FAKE.encode(),
        "empty": b"",
        "other length": good.replace(b" bytes=", b" bytes=1"),
    }[damage]
    path.write_bytes(damaged)
    assert vega_bundle.javascript_bundle() == FAKE
    assert len(fake_builder) == 2  # rebuilt
    assert path.read_bytes() == good  # and the cache mended


def test_a_cache_folder_that_cannot_be_written_still_gives_the_bundle(tmp_path, monkeypatch, fake_builder):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(vega_bundle.ENV_CACHE_DIR, str(blocker / "cache"))  # mkdir fails: a file is in the way
    assert vega_bundle.javascript_bundle() == FAKE
    assert vega_bundle.javascript_bundle() == FAKE
    assert len(fake_builder) == 2  # built in memory each time
    assert blocker.read_text() == "not a folder"


def test_a_read_only_cache_folder_still_gives_the_bundle_and_leaves_nothing(cache, monkeypatch, fake_builder):
    cache.mkdir()
    cache.chmod(0o555)

    def refuse(*args, **kwargs):  # what a read-only folder does to a non-root user (tests may run as root)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_files.tempfile, "mkstemp", refuse)
    try:
        assert vega_bundle.javascript_bundle() == FAKE
        assert list(cache.iterdir()) == []
    finally:
        cache.chmod(0o755)


def test_a_failed_cache_write_leaves_no_temporary_file(cache, monkeypatch, fake_builder):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_files.os, "replace", refuse)
    assert vega_bundle.javascript_bundle() == FAKE
    assert list(cache.iterdir()) == []


def test_the_cli_writes_the_page_with_an_unusable_cache(tmp_path, monkeypatch, fake_builder):
    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(vega_bundle.ENV_CACHE_DIR, str(blocker / "cache"))
    result = CliRunner().invoke(app, ["analyze", str(FIXTURES / "example_h100_raw.csv"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert FAKE in (tmp_path / "o" / "roofline.html").read_text()


def test_without_the_override_the_platform_cache_folder_is_used(tmp_path, monkeypatch, fake_builder):
    monkeypatch.delenv(vega_bundle.ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # platformdirs' user cache folder on Linux
    if not str(vega_bundle.cache_dir()).startswith(str(tmp_path / "xdg")):
        pytest.skip("platformdirs does not follow XDG_CACHE_HOME on this platform")
    vega_bundle.javascript_bundle()
    assert [p.name for p in (tmp_path / "xdg" / "ncu-roofline").iterdir()] == \
        [f"vega-bundle-{vl_convert.__version__}-{vega_bundle.vl_version()}.js"]


def test_a_bundle_of_several_pages_reads_the_cached_bundle_once(tmp_path, cache, fake_builder, monkeypatch):
    reads = []
    read_cached = vega_bundle.read_cached
    monkeypatch.setattr(vega_bundle, "read_cached", lambda path: reads.append(path) or read_cached(path))
    vega_bundle.javascript_bundle()  # the cache filled (built once by the fake builder)
    reads.clear()
    files = analyze(FIXTURES / "example_h100_raw.csv").bundle(precisions=["fp64"]).files
    pages = [name for name in files if name.endswith(".html")]
    assert pages == ["roofline.html", "roofline_fp64.html"]
    assert len(reads) == 1 and fake_builder == [VL_CONVERT_VERSION]
    assert all(FAKE in files[name].decode("utf-8") for name in pages)
