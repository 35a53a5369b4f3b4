"""Column-wise helpers shared by the CSV readers: numbers, units and identity text, all vectorised in Arrow.

Values are parsed after CSV parsing (quoted fields hold commas), so thousands separators are stripped from the
value field only. Text columns are read as bytes and decoded once per distinct value, so a stray non-UTF-8 byte in a
kernel name becomes U+FFFD instead of an error.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..core.launch_table import IDENTITY_COLUMNS, repeated_text
from .units import metric_unit_factor

_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_GROUPED = r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$"
# ncu's own word for "not available"; a null that needs no note.
_NOT_AVAILABLE = {b"", b"n/a", b"N/A", b"-"}
NOT_AVAILABLE_TEXTS = sorted(v.decode() for v in _NOT_AVAILABLE)  # the same, as the CSV reader's null values

# ncu CSV identity header -> LaunchTable identity column
CSV_IDENTITY = {
    "ID": "launch_id",
    "Process ID": "process_id",
    "Process Name": "process_name",
    "Kernel Name": "kernel_name",
    "Context": "context",
    "Stream": "stream",
    "Block Size": "block",
    "Grid Size": "grid",
    "CC": "compute_capability",
}
DEVICE_NAME_METRIC = "device__attribute_display_name"


def parse_numbers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Bytes like b"1,234.5" -> float64; returns (values with NaN where not a finite number, mask of non-numbers
    that were not ncu's n/a or empty, i.e. worth a note).

    A comma is a thousands separator only between groups of three digits before the point: "1,234,567.5" is a
    number, "1,2,3" and "1.234,5" (a decimal comma) are not, rather than 123 and 1.2345.
    """
    if values.null_count == 0:
        commas = pc.match_substring(values, b",")
        grouped = pc.any(commas).as_py()
        try:  # the common case, every value a number: a cast (after one literal replace where commas are), no regex
            text = pc.replace_substring(values, b",", b"") if grouped else values
            numbers = pc.cast(pc.cast(text, pa.string()), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        else:
            out = numbers.to_numpy(zero_copy_only=False).astype("float64", copy=True)
            odd = ~np.isfinite(out)  # the cast reads "nan" and "inf", which are no measurement
            if grouped:
                odd |= _bad_grouping(values)
            out[odd] = np.nan
            return out, odd
    trimmed = pc.replace_substring_regex(values, r"[\s\"]", b"")
    cleaned = pc.replace_substring(trimmed, b",", b"")
    valid = pc.fill_null(pc.match_substring_regex(cleaned, _NUMBER), False)
    numbers = pc.cast(pc.cast(pc.if_else(valid, cleaned, pa.scalar(b"0", pa.binary())), pa.string()), pa.float64())
    out = numbers.to_numpy(zero_copy_only=False).astype("float64", copy=True)
    valid_np = valid.to_numpy(zero_copy_only=False) & np.isfinite(out) & ~_bad_grouping(trimmed)  # "1e999" too
    out[~valid_np] = np.nan
    not_available = pc.fill_null(pc.is_in(cleaned, value_set=pa.array(sorted(_NOT_AVAILABLE), pa.binary())), True)
    odd = ~valid_np & ~not_available.to_numpy(zero_copy_only=False)
    return out, odd


def _bad_grouping(values: pa.Array) -> np.ndarray:
    """Values holding a comma that is not a thousands separator between groups of three digits."""
    commas = pc.fill_null(pc.match_substring(values, b","), False)
    if not pc.any(commas).as_py():
        return np.zeros(len(values), dtype=bool)
    grouped = pc.fill_null(pc.match_substring_regex(values, _GROUPED), False)
    return pc.and_(commas, pc.invert(grouped)).to_numpy(zero_copy_only=False)


def grouping_ok(text: str) -> bool:
    """The scalar form of the thousands-separator rule, for identity fields parsed one distinct value at a time."""
    return "," not in text or re.match(_GROUPED, text.strip()) is not None


def metric_unit_factors(units: pa.Array, codes: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the factor to base units of the row's unit for the row's metric (`names[codes[i]]`), NaN where the
    unit is refused (not understood, or of another dimension than the metric: units.UNIT_FITS), and the why of
    each refusal ("" elsewhere). Computed once per distinct (metric, unit)."""
    encoded = pc.dictionary_encode(units).combine_chunks() if isinstance(units, pa.ChunkedArray) \
        else pc.dictionary_encode(units)
    unit_names = [decode(v) for v in encoded.dictionary.to_pylist()] or [""]
    unit_codes = encoded.indices.to_numpy(zero_copy_only=False)
    unit_codes = np.where(pd.isna(unit_codes), 0, unit_codes).astype(np.int64)
    pairs, inverse = np.unique(np.asarray(codes, dtype=np.int64) * len(unit_names) + unit_codes, return_inverse=True)
    checked = [metric_unit_factor(names[int(p) // len(unit_names)], unit_names[int(p) % len(unit_names)])
               for p in pairs]
    factors = np.array([np.nan if f is None else f for f, _ in checked] or [1.0])
    why = np.array([w or "" for _, w in checked] or [""], dtype=object)
    return factors[inverse], why[inverse]


def decode(value: bytes | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return value.decode("utf-8", errors="replace")


def decode_column(values: pa.Array | pa.ChunkedArray) -> pd.Series:
    """Bytes -> pandas strings, decoding each distinct value once."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    texts = np.array([decode(v).strip() for v in encoded.dictionary.to_pylist()] + [""], dtype=object)
    codes = encoded.indices.fill_null(len(texts) - 1).to_numpy(zero_copy_only=False)
    return pd.Series(texts[codes], dtype="string")


def decode_values(values: pa.Array | pa.ChunkedArray, convert: Callable[[str], object] | None = None, *,
                  unquote: bool = False, dtype: str | None = None):
    """Bytes -> stripped text as an Arrow-backed pandas string array (null where empty), built in Arrow; or, with
    `convert`, an object array of `convert(text)` (with `dtype`, a pandas array of that dtype, built from the
    distinct values: no Python object per row). Either way each distinct value is decoded once."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    texts = [decode(v).strip() for v in encoded.dictionary.to_pylist()]
    if unquote:
        texts = [text.strip('"') for text in texts]
    if len(encoded) and (encoded.null_count == len(encoded) or (len(texts) == 1 and not encoded.null_count)):
        return _one_value(texts[0] if texts and not encoded.null_count else None, len(encoded), convert, dtype)
    codes = encoded.indices.fill_null(len(texts))
    if convert is None:
        # large_string: the type pandas keeps its strings in, so that the array is taken without a cast
        strings = pa.array([text or None for text in texts] + [None], pa.large_string())
        # decoding the dictionary is a cast, half the CPU of a take of every row through it
        return pd.array(pa.DictionaryArray.from_arrays(codes, strings).cast(pa.large_string()), dtype="string")
    if dtype is not None:
        return pd.array([convert(text) for text in texts] + [pd.NA], dtype=dtype).take(
            codes.to_numpy(zero_copy_only=False).astype(np.int64))
    lookup = np.array([convert(text) for text in texts] + [pd.NA], dtype=object)
    return lookup[codes.to_numpy(zero_copy_only=False)]


def _one_value(text: str | None, n: int, convert: Callable[[str], object] | None, dtype: str | None):
    """`decode_values` of a column whose rows all hold `text` (None: all null; a capture's one process, context
    or compute capability), without a row-by-row take: text as one shared Arrow chunk (launch_table.repeated_text),
    numbers filled at once."""
    if convert is None:
        return pd.array(repeated_text(text or None, n), dtype="string")
    value = pd.NA if text is None else convert(text)
    lookup = pd.array([value], dtype=dtype) if dtype is not None else None
    if isinstance(lookup, (pd.arrays.IntegerArray, pd.arrays.FloatingArray)):
        values = np.zeros(n, dtype=lookup.dtype.numpy_dtype) if value is pd.NA else \
            np.full(n, lookup.to_numpy(dtype=lookup.dtype.numpy_dtype)[0])
        return type(lookup)(values, np.full(n, value is pd.NA))
    if lookup is not None:
        return lookup.take(np.zeros(n, dtype=np.intp))
    return np.full(n, value, dtype=object)


def _integer(text: str) -> object:
    number = _number(text)
    return pd.NA if number is pd.NA else int(round(number))


def _number(text: str) -> object:
    if not grouping_ok(text):
        return pd.NA
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        return pd.NA
    return number if np.isfinite(number) and abs(number) < 2.0 ** 62 else pd.NA


def identity_frame(columns: dict[str, pa.Array], path: str) -> dict[str, object]:
    """Identity columns of the LaunchTable from the CSV's identity columns (already one row per launch)."""
    identity: dict[str, object] = {"source_file": path}
    for header, name in CSV_IDENTITY.items():
        if header not in columns or name == "launch_id":
            continue
        if name in {"process_id", "context", "stream"}:
            identity[name] = decode_values(columns[header], _integer, dtype=IDENTITY_COLUMNS[name])
        elif name == "compute_capability":
            identity[name] = decode_values(columns[header], _number, dtype=IDENTITY_COLUMNS[name])
        else:
            identity[name] = decode_values(columns[header])
    if "kernel_name" in identity:
        identity["kernel_demangled"] = identity["kernel_name"]
    identity["workload_type"] = "kernel"
    return identity
