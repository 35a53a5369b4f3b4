"""User ceilings (`--ceilings FILE.toml`): roofs the user knows better than the report or the table.

They exist for what neither can give: a MIG slice, a power-capped or clock-locked part, a GPU missing from the
table, or measured (ERT, microbenchmark) roofs. They override both, one roof at a time. The file::

    # optional: shown in chart titles and output metadata
    name = "A100 MIG 3g.40gb, measured"

    [peaks]
    # the datasheet units `ceilings template` writes (TFLOP/s, GB/s; 1 GB/s = 1e9 B/s):
    fp32_tflops = 9.7
    dram_gbps = 780

Keys: fp64_tflops, fp32_tflops, fp16_tflops, tensor_tflops (TFLOP/s) and dram_gbps, l2_gbps, l1_gbps (GB/s), the one
vocabulary of the template, the errors and docs/ceilings.md. Also accepted, in base units: the output columns
peak_flop_per_s_{fp64,fp32,fp16,tensor}, peak_bytes_per_s_{dram,l2,l1}.
Both spellings may be mixed, but each roof may be named once. `tensor` means the dense FP16-input tensor
roof (FP32 accumulate), as in the built-in table. Only the roofs named are overridden; values must be positive
numbers between 1e6 and 1e18 in base units (1 MB/s or 1 MFLOP/s to 1 EB/s or 1 EFLOP/s). Anything else (another key
or table, text, zero, a negative, inf/nan, a subnormal or a 400-digit number, bad or absurdly nested TOML, a file
that is not a regular file or cannot be read) is refused with one line that names the file.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ncu_roofline.core.errors import InputError
from ncu_roofline.readers.input_files import read_bounded
from ncu_roofline.roofs.gpu_table import FIGURE_TO_PEAK, PEAK_KEYS, to_base_units

# Friendly spelling -> (roof, factor to base units): the table's figure names, with `tensor_tflops` for the roof.
UNIT_KEYS: dict[str, tuple[str, float]] = {
    ("tensor_tflops" if figure == "tensor_fp16_tflops" else figure): roof for figure, roof in FIGURE_TO_PEAK.items()
}
_TOP_LEVEL = {"name", "peaks"}
# Every roof in base units lies in [1e6, 1e18]: 1 MB/s or 1 MFLOP/s up to 1 EB/s or 1 EFLOP/s. The largest GPU roofs
# today are ~1e16 (dense low-precision tensor FLOP/s), the smallest ~1e9, so this refuses unit slips, not parts.
ROOF_RANGE = (1e6, 1e18)
# A real ceilings file is a few hundred bytes; a megabyte is not a ceilings file.
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class UserCeilings:
    """The roofs a user file names (base units), and how outputs cite it (`user:FILE`)."""

    peaks: dict[str, float] = field(hash=False)
    source: str
    name: str | None = None


def load_user_ceilings(path: Path) -> UserCeilings:
    """Read and validate a `--ceilings` file; every problem is an InputError naming the file."""
    path = Path(path)
    try:  # a real ceilings file is a few lines of TOML
        text = read_bounded(path, MAX_FILE_BYTES, "ceilings file").decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "ceilings file is not UTF-8 text") from None
    _refuse_non_decimal(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries "(at line N, column M)"
        raise InputError(path, f"not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise InputError(path, "not valid TOML for ceilings: arrays or tables nested too deep") from None

    if unknown := sorted(set(data) - _TOP_LEVEL):
        raise InputError(path, f"unknown top-level keys {unknown}; expected optional `name` and a [peaks] table")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError(path, "`name` must be a string")
    table = data.get("peaks")
    if not isinstance(table, dict) or not table:
        raise InputError(path, "no [peaks] table with at least one roof (e.g. dram_gbps = 3350; "
                               "`ncu-roofline ceilings template NAME` writes one to fill in)")

    peaks: dict[str, float] = {}
    named_by: dict[str, str] = {}
    for key, value in table.items():
        if key in PEAK_KEYS:
            roof, factor = key, 1.0
        elif key in UNIT_KEYS:
            roof, factor = UNIT_KEYS[key]
        else:
            raise InputError(
                path,
                f"unknown roof {key!r} in [peaks]; use one of {', '.join(UNIT_KEYS)} (TFLOP/s, GB/s; or the "
                f"base-unit {', '.join(PEAK_KEYS)})",
            )
        base = _roof_value(path, key, value, factor)
        if roof in named_by:
            raise InputError(path, f"[peaks] names {roof} twice ({named_by[roof]} and {key})")
        named_by[roof] = key
        peaks[roof] = base
    return UserCeilings(peaks={k: peaks[k] for k in PEAK_KEYS if k in peaks}, source=f"user:{path.name}", name=name)


_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')
_NON_DECIMAL = re.compile(r"(?:^|[=,\[{])[ \t]*[+-]?0[xXoObB][0-9a-fA-F_]*", re.MULTILINE)


def _refuse_non_decimal(path: Path, text: str) -> None:
    """A roof is a decimal number: `dram_gbps = 0x400` (hex, octal or binary, which TOML reads as an integer) is
    refused, naming the line, since nobody writes a bandwidth in hex on purpose. Strings and comments are left
    out of the search."""
    bare = _STRINGS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    if found := _NON_DECIMAL.search(bare):
        line = text.count("\n", 0, found.start()) + 1 + (found.group(0).startswith("\n"))
        literal = found.group(0).lstrip("=,[{ \t\n")
        raise InputError(path, f"line {line}: {literal!r} is not a decimal number; write roofs in decimal "
                               "(e.g. dram_gbps = 3350)")


def _roof_value(path: Path, key: str, value: object, factor: float) -> float:
    """One roof in base units, or an InputError: not a number, not positive and finite, or outside what hardware
    can be (ROOF_RANGE), which catches a subnormal `5e-324` or a 400-digit integer as surely as a unit slip."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"[peaks] {key} must be a number, got {_shown(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float64
        number = math.inf
    if not math.isfinite(number) or number <= 0:
        raise InputError(path, f"[peaks] {key} must be a positive finite number, got {_shown(value)}")
    base = to_base_units(number, factor)
    low, high = ROOF_RANGE
    if not low <= base <= high:
        unit = "bytes/s" if "bytes" in key or key.endswith("gbps") else "FLOP/s"
        raise InputError(path, f"[peaks] {key} = {_shown(value)} is {base:.3g} {unit}, outside the range a GPU roof "
                               f"can have ({low:.0e} to {high:.0e} {unit}): check the unit of the key")
    return base


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
