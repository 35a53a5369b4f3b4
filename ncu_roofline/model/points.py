"""Reading a points file: FLOP and byte counts made elsewhere (thop, fvcore, PyTorch's FLOP counter, by hand).

CSV, with a header row naming at least `name`, `flop`, `bytes`::

    name,flop,bytes,kernel,roof
    qkv projection,2147483648,12582912,gemm,tensor_fp16

or TOML, one `[[point]]` table per point with the same keys::

    [[point]]
    name = "qkv projection"
    flop = 2147483648
    bytes = 12582912
    kernel = "gemm"          # optional: a regex searched in measured kernel names (analyze --points)
    roof = "tensor_fp16"     # optional: the compute roof the work runs on (default: the caller's)

`flop` and `bytes` count one launch (one call of the operation); `bytes` is the DRAM traffic the model expects.
`roof` is a compute roof key: fp64, fp32, fp16, tensor, tensor_tf32, tensor_fp16, tensor_fp8, tensor_int8, ...
A file is TOML when its first meaningful line starts with `[`. Anything malformed (missing or repeated column, a
number that is not one, negative or zero bytes, a bad regex, an unknown roof, a duplicate name) is an InputError
naming the file and the line (CSV) or the point (TOML).
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.patterns import compile_regex
from ..readers.input_files import read_bounded
from ..roofs.peaks import compute_roof_column

REQUIRED = ("name", "flop", "bytes")
OPTIONAL = ("kernel", "roof")
DEFAULT_ROOF = "tensor"  # the table's default tensor roof: dense FP16 input


# A points file is a few lines to a few million (one per operator of a traced model, ~40 bytes each): 256 MiB is
# far beyond any of them and far below what would exhaust memory (an endless device is refused before this).
MAX_POINTS_BYTES = 256 << 20


def read_points(path: str | Path, *, default_roof: str = DEFAULT_ROOF) -> pd.DataFrame:
    """name, flop, bytes, kernel (regex or null), roof: one row per point, in file order.

    Checked column by column over the whole file (a million points in seconds); the first row that fails any check
    is then checked on its own, so the error names its line and what is wrong exactly as for a one-row file."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise InputError(path, "points file not found")
    if path.is_dir():
        raise InputError(path, "is a directory, expected a points .csv or .toml file")
    data = read_bounded(path, MAX_POINTS_BYTES, "points file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, "points file is not UTF-8 text") from None
    _check_roof(path, "--roof", default_roof)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    wheres, frame = _toml_rows(path, text) if first.startswith("[") else _csv_rows(path, text)
    if not wheres:
        raise InputError(path, "no points (expected a header `name,flop,bytes[,kernel]` and at least one row)")
    return _checked(path, wheres, frame, default_roof)


def _checked(path: Path, wheres: _Wheres, raw: pd.DataFrame, default_roof: str) -> pd.DataFrame:
    """The points of `raw` (object columns as read) validated and typed; the first bad row raises via `_point`."""
    raw = raw.reindex(columns=[*REQUIRED, *OPTIONAL]).reset_index(drop=True).astype(object)
    raw = raw.where(raw.notna(), None)  # a key a TOML point leaves out, or a column the CSV has not: None
    names = raw["name"].map(lambda v: v.strip() if isinstance(v, str) else None, na_action="ignore")
    bad = names.isna() | (names == "")
    numbers = {}
    for column in ("flop", "bytes"):
        plain = raw[column].where(raw[column].map(type).isin([str, int, float]))  # a TOML bool is not a count
        with np.errstate(all="ignore"):
            numbers[column] = pd.to_numeric(plain, errors="coerce").astype("float64")
        values = numbers[column].to_numpy()
        bad |= ~np.isfinite(values) | (values < 0) | ((values == 0) if column == "bytes" else False)
    kernels = raw["kernel"].where(raw["kernel"].map(bool), None)
    kernel_ok = {k: _regex_ok(k) for k in kernels.dropna().unique()} if kernels.notna().any() else {}
    bad |= kernels.map(lambda k: k is not None and not kernel_ok.get(k, False))
    roofs = raw["roof"].where(raw["roof"].map(bool), default_roof)
    roof_ok = {r: _roof_ok(r) for r in roofs.unique()}
    bad |= ~roofs.map(roof_ok).astype(bool)
    frame = pd.DataFrame({"name": names, "flop": numbers["flop"], "bytes": numbers["bytes"],
                          "kernel": kernels, "roof": roofs})
    for index in np.flatnonzero(bad.to_numpy()):  # raises at the first row that is bad for float() as well
        frame.loc[index] = _point(path, wheres[index], raw.loc[index].to_dict(), default_roof)
    repeated = frame["name"].duplicated()
    if repeated.any():
        index = int(np.flatnonzero(repeated.to_numpy())[0])
        name = frame.loc[index, "name"]
        first = int(np.flatnonzero((frame["name"] == name).to_numpy())[0])
        raise InputError(path, f"{wheres[index]}: duplicate point name {name!r} (first at {wheres[first]})")
    return frame.astype({"name": "string", "flop": "float64", "bytes": "float64", "kernel": "string",
                         "roof": "string"})


def _regex_ok(pattern: object) -> bool:
    try:
        compile_regex(str(pattern), "kernel") if isinstance(pattern, str) else None
    except InputError:
        return False
    return isinstance(pattern, str)


def _roof_ok(roof: object) -> bool:
    try:
        compute_roof_column(str(roof))
    except KeyError:
        return False
    return True


def _csv_rows(path: Path, text: str) -> tuple[_Wheres, pd.DataFrame]:
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    lines: list[int] = []
    rows: list[list[str]] = []
    width = 0
    try:
        for fields in reader:
            first = fields[0] if fields else ""
            if len(fields) == width and first[:1] not in ("", "#", " ", "\t"):  # an ordinary row: kept as it is
                lines.append(reader.line_num)
                rows.append(fields)
                continue
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields) or first.lstrip().startswith("#"):
                continue
            if header is None:
                header = _header(path, line, fields)
                width = len(header)
                continue
            if len(fields) != width:
                raise InputError(path, f"line {line}: {len(fields)} fields, the header has {width}")
            lines.append(line)
            rows.append(fields)
    except csv.Error as exc:  # a field beyond csv's limit (131,072 characters), a NUL byte
        raise InputError(path, f"line {reader.line_num}: not a CSV row a points file can hold ({exc})") from None
    frame = pd.DataFrame(rows, columns=header or list(REQUIRED), dtype=object)
    for column in frame.columns:  # fields are read stripped of surrounding blanks
        frame[column] = frame[column].str.strip().astype(object)
    return _Wheres("line {}", lines), frame


class _Wheres:
    """Where each row is, written only for the row an error names ("line 12"): a million labels cost seconds."""

    def __init__(self, pattern: str, numbers: list[int]) -> None:
        self.pattern, self.numbers = pattern, numbers

    def __getitem__(self, index: int) -> str:
        return self.pattern.format(self.numbers[index])

    def __len__(self) -> int:
        return len(self.numbers)


def _header(path: Path, line: int, fields: list[str]) -> list[str]:
    header = [f.strip().lower() for f in fields]
    if missing := [c for c in REQUIRED if c not in header]:
        raise InputError(path, f"line {line}: header lacks {', '.join(missing)} "
                               f"(expected name,flop,bytes[,kernel][,roof]; got {','.join(header)})")
    if repeated := sorted({c for c in header if header.count(c) > 1}):
        # two `flop` columns: which one is the point's? Refused, never the first or the last silently
        raise InputError(path, f"line {line}: column {', '.join(repeated)} given twice in the header")
    if unknown := [c for c in header if c not in (*REQUIRED, *OPTIONAL)]:
        raise InputError(path, f"line {line}: unknown column {', '.join(unknown)}; expected "
                               f"{', '.join((*REQUIRED, *OPTIONAL))}")
    return header


def _toml_rows(path: Path, text: str) -> tuple[_Wheres, pd.DataFrame]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries "(at line N, column M)"
        raise InputError(path, f"not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise InputError(path, "not valid TOML for points: arrays or tables nested too deep") from None
    if set(data) - {"point"} or not isinstance(data.get("point", []), list):
        raise InputError(path, f"expected only [[point]] tables, got keys {sorted(data)}")
    rows = []
    for index, row in enumerate(data.get("point", []), start=1):
        if not isinstance(row, dict):
            raise InputError(path, f"[[point]] #{index}: expected a table of name, flop, bytes")
        if unknown := sorted(set(row) - {*REQUIRED, *OPTIONAL}):
            raise InputError(path, f"[[point]] #{index}: unknown keys {unknown}")
        rows.append(row)
    frame = pd.DataFrame.from_records(rows, columns=[*REQUIRED, *OPTIONAL]).astype(object)
    return _Wheres("[[point]] #{}", list(range(1, len(rows) + 1))), frame


def _point(path: Path, where: str, row: dict, default_roof: str) -> dict[str, object]:
    name = row.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(path, f"{where}: a point needs a non-empty name")
    values = {}
    for column in ("flop", "bytes"):
        raw = row.get(column)
        try:
            value = float(raw) if not isinstance(raw, bool) and raw not in (None, "") else math.nan
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value) or value < 0 or (column == "bytes" and value == 0):
            need = "a positive number" if column == "bytes" else "a number >= 0"
            raise InputError(path, f"{where}: {column} must be {need}, got {raw!r} (point {name!r})")
        values[column] = value
    kernel = row.get("kernel") or None
    if kernel is not None:
        if not isinstance(kernel, str):
            raise InputError(path, f"{where}: kernel must be a regex string, got {kernel!r}")
        compile_regex(kernel, f"{where}: kernel {kernel!r}", path=path)  # linear time (RE2), checked here
    roof = row.get("roof") or default_roof
    _check_roof(path, where, roof)
    return {"name": name.strip(), **values, "kernel": kernel, "roof": roof}


def _check_roof(path: Path, where: str, roof: object) -> None:
    try:
        compute_roof_column(str(roof))
    except KeyError:
        raise InputError(path, f"{where}: unknown roof {roof!r}; expected fp64, fp32, fp16, tensor or "
                               "tensor_<tf32|fp16|fp8|int8|fp4|fp64>") from None
