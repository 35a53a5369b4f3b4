"""The parsed copies of the TOML data files (core/data.py `read_data_toml`, core/cache.py): always what tomllib
parses from the file as it is now, whatever the cache folder holds."""

from __future__ import annotations

import tomllib

import pytest

from ncu_roofline.core import cache as cache_files
from ncu_roofline.core.data import METRICS_DIR, read_data_toml


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache_files.ENV_CACHE_DIR, str(folder))
    return folder


@pytest.mark.parametrize("name", ["gpus", "catalogue", "limiters", "projection"])
def test_every_data_file_reads_as_tomllib_parses_it_cold_and_warm(cache, name):
    path = METRICS_DIR / f"{name}.toml"
    expected = tomllib.loads(path.read_text(encoding="utf-8"))
    assert read_data_toml(path) == expected  # parsed, and the copy written
    assert [p.name for p in cache.iterdir()] == [f"{copy_name(name)}"]
    assert read_data_toml(path) == expected  # from the copy


def copy_name(stem: str) -> str:
    import sys

    return f"parsed-{stem}-py{sys.version_info[0]}{sys.version_info[1]}.marshal"


def test_an_edited_file_is_parsed_again_never_read_stale(cache, tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('name = "A100"\npeak = 1.5\n')
    assert read_data_toml(path) == {"name": "A100", "peak": 1.5}
    path.write_text('name = "H100"\npeak = 2.5\n')
    assert read_data_toml(path) == {"name": "H100", "peak": 2.5}
    assert read_data_toml(path) == {"name": "H100", "peak": 2.5}


@pytest.mark.parametrize("damage", ["cut short", "byte flipped", "no header", "empty", "other length", "not marshal"])
def test_a_damaged_copy_is_never_used_and_is_mended(cache, tmp_path, damage):
    path = tmp_path / "table.toml"
    path.write_text('values = [1, 2, 3]\nname = "x"\n')
    read_data_toml(path)
    [copy] = list(cache.iterdir())
    good = copy.read_bytes()
    head, body = good.split(b"\n", 1)
    copy.write_bytes({
        "cut short": good[:-3],
        "byte flipped": good[:-2] + bytes([good[-2] ^ 1]) + good[-1:],
        "no header": body,
        "empty": b"",
        "other length": good.replace(b" bytes=", b" bytes=1"),
        # a header that matches a body that is no marshal data: the digest holds, the load refuses it
        "not marshal": head.rsplit(b" sha256=", 1)[0] + b" sha256=" + cache_files.hashlib.sha256(b"\xff").hexdigest()
        .encode() + b" bytes=1\n\xff",
    }[damage])
    assert read_data_toml(path) == {"values": [1, 2, 3], "name": "x"}
    assert copy.read_bytes() == good


def test_the_crlf_file_reads_as_read_text_reads_it(cache, tmp_path):
    path = tmp_path / "crlf.toml"
    path.write_bytes(b'text = """a\r\nb"""\r\nn = 1\r\n')
    assert read_data_toml(path) == tomllib.loads(path.read_text(encoding="utf-8")) == {"text": "a\nb", "n": 1}


def test_dates_have_no_copy_but_are_read(cache, tmp_path):
    path = tmp_path / "dated.toml"
    path.write_text("day = 2026-12-03\n")
    expected = tomllib.loads(path.read_text())
    assert read_data_toml(path) == expected and read_data_toml(path) == expected
    assert not cache.exists() or list(cache.iterdir()) == []


def test_an_unusable_cache_folder_still_reads_and_bad_toml_still_raises(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cache_files.ENV_CACHE_DIR, str(blocker / "cache"))  # mkdir fails: a file is in the way
    path = tmp_path / "t.toml"
    path.write_text("a = 1\n")
    assert read_data_toml(path) == {"a": 1}
    path.write_text("a = \n")
    with pytest.raises(tomllib.TOMLDecodeError):
        read_data_toml(path)
    assert blocker.read_text() == "not a folder"
