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

import pandas as pd

from ..core.errors import InputError
from ..core.patterns import compile_regex
from ..roofs.peaks import compute_roof_column

REQUIRED = ("name", "flop", "bytes")
OPTIONAL = ("kernel", "roof")
DEFAULT_ROOF = "tensor"  # the table's default tensor roof: dense FP16 input


def read_points(path: str | Path, *, default_roof: str = DEFAULT_ROOF) -> pd.DataFrame:
    """name, flop, bytes, kernel (regex or null), roof: one row per point, in file order."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "points file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a points .csv or .toml file") from None
    except UnicodeDecodeError:
        raise InputError(path, "points file is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(path, f"cannot read points file: {exc.strerror or exc}") from None
    _check_roof(path, "--roof", default_roof)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    rows = _toml_rows(path, text) if first.startswith("[") else _csv_rows(path, text)
    if not rows:
        raise InputError(path, "no points (expected a header `name,flop,bytes[,kernel]` and at least one row)")
    seen: dict[str, str] = {}
    records = []
    for where, row in rows:
        record = _point(path, where, row, default_roof)
        if record["name"] in seen:
            raise InputError(path, f"{where}: duplicate point name {record['name']!r} (first at {seen[record['name']]})")
        seen[record["name"]] = where
        records.append(record)
    frame = pd.DataFrame(records, columns=[*REQUIRED, *OPTIONAL])
    return frame.astype({"name": "string", "flop": "float64", "bytes": "float64", "kernel": "string",
                         "roof": "string"})


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    rows = []
    for fields in reader:
        line = reader.line_num
        if not fields or all(not f.strip() for f in fields) or fields[0].lstrip().startswith("#"):
            continue
        if header is None:
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
            continue
        if len(fields) != len(header):
            raise InputError(path, f"line {line}: {len(fields)} fields, the header has {len(header)}")
        rows.append((f"line {line}", dict(zip(header, (f.strip() for f in fields)))))
    return rows


def _toml_rows(path: Path, text: str) -> list[tuple[str, dict[str, object]]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries "(at line N, column M)"
        raise InputError(path, f"not valid TOML: {exc}") from None
    if set(data) - {"point"} or not isinstance(data.get("point", []), list):
        raise InputError(path, f"expected only [[point]] tables, got keys {sorted(data)}")
    rows = []
    for index, row in enumerate(data.get("point", []), start=1):
        if unknown := sorted(set(row) - {*REQUIRED, *OPTIONAL}):
            raise InputError(path, f"[[point]] #{index}: unknown keys {unknown}")
        rows.append((f"[[point]] #{index}", row))
    return rows


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
