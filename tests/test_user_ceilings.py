"""`--ceilings FILE.toml`: a user file names some roofs, in base or friendly units, and is refused clearly if bad."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncu_roofline.core.errors import InputError
from ncu_roofline.roofs.gpu_table import PEAK_KEYS
from ncu_roofline.roofs.user_file import UNIT_KEYS, load_user_ceilings


def write(tmp_path: Path, text: str, name: str = "myceil.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_overriding_one_roof_yields_exactly_that_roof(tmp_path):
    ceilings = load_user_ceilings(write(tmp_path, "[peaks]\npeak_bytes_per_s_dram = 1.5e12\n"))
    assert ceilings.peaks == {"peak_bytes_per_s_dram": 1.5e12}
    assert ceilings.source == "user:myceil.toml"
    assert ceilings.name is None


def test_friendly_units_become_base_units(tmp_path):
    text = 'name = "H200, clocks locked"\n[peaks]\ndram_gbps = 4800\ntensor_tflops = 989.4\nl1_gbps = 14336\n'
    ceilings = load_user_ceilings(write(tmp_path, text))
    assert ceilings.peaks == {
        "peak_flop_per_s_tensor": 989.4e12,  # 989.4 TFLOP/s x 1e12
        "peak_bytes_per_s_dram": 4.8e12,  # 4800 GB/s x 1e9 = 4.8e12 B/s
        "peak_bytes_per_s_l1": 14.336e12,  # 14336 GB/s x 1e9
    }
    assert ceilings.name == "H200, clocks locked"


def test_every_documented_key_is_accepted(tmp_path):
    assert set(PEAK_KEYS) == {roof for roof, _ in UNIT_KEYS.values()}
    body = "".join(f"{key} = 2\n" for key in UNIT_KEYS)
    assert set(load_user_ceilings(write(tmp_path, "[peaks]\n" + body)).peaks) == set(PEAK_KEYS)


def test_malformed_toml_names_the_file_and_line(tmp_path):
    path = write(tmp_path, "[peaks]\npeak_flop_per_s_fp32 = 1e13\npeak_bytes_per_s_dram 3e12\n")
    with pytest.raises(InputError) as caught:
        load_user_ceilings(path)
    line = str(caught.value)
    assert str(path) in line and "not valid TOML" in line and "line 3" in line
    assert "\n" not in line


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ("[peaks]\npeak_flop_per_s_fp32 = 0\n", "positive"),
        ("[peaks]\npeak_flop_per_s_fp32 = -1e12\n", "positive"),
        ("[peaks]\nfp32_tflops = nan\n", "positive"),
        ("[peaks]\ndram_gbps = inf\n", "positive"),
        ('[peaks]\npeak_flop_per_s_fp32 = "19.5 TFLOP/s"\n', "must be a number"),
        ("[peaks]\npeak_flop_per_s_fp32 = true\n", "must be a number"),
        ("[peaks]\npeak_flops_fp32 = 1e12\n", "unknown roof 'peak_flops_fp32'"),
        ("[peaks]\ntensor_fp16_tflops = 100\n", "unknown roof"),
        ("[peaks]\nfp32_tflops = 19.5\npeak_flop_per_s_fp32 = 19.5e12\n", "twice"),
        ("[peak]\nfp32_tflops = 19.5\n", "unknown top-level keys ['peak']"),
        ('name = "x"\n', "no [peaks] table"),
        ("[peaks]\n", "no [peaks] table"),
        ("name = 3\n[peaks]\nfp32_tflops = 1\n", "`name` must be a string"),
    ],
)
def test_bad_values_are_refused_in_one_line_naming_the_file(tmp_path, body, complaint):
    path = write(tmp_path, body)
    with pytest.raises(InputError) as caught:
        load_user_ceilings(path)
    assert str(path) in str(caught.value) and complaint in str(caught.value)
    assert "\n" not in str(caught.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such ceilings file") as caught:
        load_user_ceilings(tmp_path / "nope.toml")
    assert "nope.toml" in str(caught.value)
    with pytest.raises(InputError, match="is a folder, not a ceilings file"):
        load_user_ceilings(tmp_path)


@given(key=st.sampled_from(PEAK_KEYS), value=st.floats(min_value=1e6, max_value=1e18))
def test_any_positive_base_value_round_trips(tmp_path_factory, key, value):
    path = write(tmp_path_factory.mktemp("c"), f"[peaks]\n{key} = {value!r}\n")
    assert load_user_ceilings(path).peaks == {key: value}
