"""The built-in GPU ceiling table (`metrics/gpus.toml`) and matching a device name to one of its rows.

The table is the fallback when a report does not carry its own roofs. Its figures are datasheet peaks with a
source each; here they become `GpuSpec`s in base units (FLOP/s, bytes/s) under the same `peak_*` names as the
output columns. Matching is exact name, then alias, then a normalised name, never a substring: "H200" must not
pick up "GH200", nor "A10" pick up "A10G". A MIG slice is refused, since a full-GPU roof does not fit it.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from ncu_roofline.errors import InputError
from ncu_roofline.vocabulary import PEAK_COLUMNS, TERMS

# The roofs, in output-column order.
PEAK_KEYS: tuple[str, ...] = PEAK_COLUMNS

# Table figure -> (roof, factor to base units): `<precision>_tflops`, `<level>_gbps`. The default tensor roof is
# dense FP16 input, FP32 accumulate.
FIGURE_TO_PEAK: dict[str, tuple[str, float]] = {
    (f"{t.key}_fp16_tflops" if t.key == "tensor" else f"{t.key}_tflops" if t.kind == "compute" else f"{t.key}_gbps"):
    (t.peak, 1e12 if t.kind == "compute" else 1e9) for t in TERMS
}
# Table figure -> tensor data type; `sources`/`derived`/`caveats` key these as "tensor_<dtype>".
TENSOR_FIGURES: dict[str, str] = {
    "tensor_fp16_tflops": "fp16",
    "tensor_bf16_tflops": "bf16",
    "tensor_tf32_tflops": "tf32",
    "tensor_fp8_tflops": "fp8",
    "tensor_int8_tops": "int8",
    "tensor_fp64_tflops": "fp64",
}
_COUNT_FIGURES = ("sm_count", "boost_clock_mhz")
FIGURES: tuple[str, ...] = (*_COUNT_FIGURES, *FIGURE_TO_PEAK, *(f for f in TENSOR_FIGURES if f not in FIGURE_TO_PEAK))
_GPU_KEYS = {"name", "aliases", "arch", "compute_capability", "notes", "sources", "derived", "caveats", *FIGURES}

_PREFIXES = ("nvidia ", "tesla ", "geforce ")
# A memory size ("16gb", "480gb", "144g") or memory type ("hbm3", "hbm3e", "gddr6x") token, after case folding.
_MEMORY_SIZE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b")
_MEMORY_TYPE = re.compile(r"\b(?:hbm\d*e?|gddr\d*x?)\b")
_MIG = re.compile(r"\bmig\b|\b\d+g\.\d+gb\b", re.IGNORECASE)


def to_base_units(value: float, factor: float) -> float:
    """`value` x `factor`, rounded once: 66.9 TFLOP/s gives exactly 66.9e12, not 66.9 * 1e12 one ulp off."""
    return float(Decimal(repr(float(value))) * Decimal(factor))


def default_table_path() -> Path:
    """`metrics/gpus.toml` inside an installed wheel (package data), else at the top of a source checkout."""
    here = Path(__file__).resolve().parent
    for metrics in (here / "metrics", here.parent / "metrics"):
        if (metrics / "gpus.toml").is_file():
            return metrics / "gpus.toml"
    return here.parent / "metrics" / "gpus.toml"


@dataclass(frozen=True)
class GpuSpec:
    """One table row in base units. `peaks` holds only the roofs the table knows; unknown ones are absent."""

    name: str
    aliases: tuple[str, ...]
    arch: str
    compute_capability: float
    sm_count: int | None
    boost_clock_hz: float | None
    peaks: dict[str, float] = field(hash=False)  # PEAK_KEYS -> FLOP/s or bytes/s
    tensor_peaks: dict[str, float] = field(hash=False)  # "fp16", "bf16", ... -> FLOP/s (OP/s for int8)
    sources: dict[str, str] = field(hash=False)  # peak key, "tensor_<dtype>", "sm_count", "boost_clock_hz", "name"
    derived: dict[str, str] = field(hash=False)  # same keys -> "EXPR; WHY" for figures computed, not read
    caveats: dict[str, str] = field(default_factory=dict, hash=False)
    notes: tuple[str, ...] = ()


def load_gpu_table(path: Path | None = None) -> list[GpuSpec]:
    """Read and validate the ceiling table (the built-in one by default); parsed once per path."""
    return list(_load_cached(str(Path(path).resolve() if path is not None else default_table_path())))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> tuple[GpuSpec, ...]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "GPU ceiling table not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read GPU ceiling table: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}") from None
    unknown = set(data) - {"schema_version", "gpu"}
    if unknown or data.get("schema_version") != 1:
        raise InputError(path, f"expected schema_version = 1 and [[gpu]] tables, got keys {sorted(data)}")
    rows = data.get("gpu")
    if not isinstance(rows, list) or not rows:
        raise InputError(path, "no [[gpu]] tables")
    specs = tuple(_spec_from_row(path, i, row) for i, row in enumerate(rows))
    _check_unique(path, specs)
    return specs


def _spec_from_row(path: str, index: int, row: Any) -> GpuSpec:
    """Turn one [[gpu]] table into a GpuSpec, refusing anything a reader of the table could not trust."""
    if not isinstance(row, dict) or not isinstance(row.get("name"), str) or not row["name"].strip():
        raise InputError(path, f"[[gpu]] #{index + 1} has no name")
    name = row["name"]

    def fail(message: str) -> InputError:
        return InputError(path, f"gpu {name!r}: {message}")

    if unknown := set(row) - _GPU_KEYS:
        raise fail(f"unknown keys {sorted(unknown)}")
    aliases, notes = row.get("aliases", []), row.get("notes", [])
    for what, value in (("aliases", aliases), ("notes", notes)):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise fail(f"{what} must be a list of non-empty strings")
    if not isinstance(row.get("arch"), str):
        raise fail("arch must be a string")
    cc = row.get("compute_capability")
    if isinstance(cc, bool) or not isinstance(cc, (int, float)) or cc <= 0:
        raise fail("compute_capability must be a number such as 8.6")

    figures = {k: row[k] for k in FIGURES if k in row}
    for key, value in figures.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise fail(f"{key} must be a positive number, got {value!r}")
    tables: dict[str, dict[str, str]] = {}
    for table in ("sources", "derived", "caveats"):
        entries = row.get(table, {})
        if not isinstance(entries, dict) or not all(isinstance(v, str) and v.strip() for v in entries.values()):
            raise fail(f"[gpu.{table}] must map figures to non-empty strings")
        allowed = set(figures) | ({"name"} if table == "sources" else set())
        if stray := set(entries) - allowed:
            raise fail(f"[gpu.{table}] names figures the row does not give: {sorted(stray)}")
        tables[table] = entries
    if unsourced := [k for k in figures if k not in tables["sources"]]:
        raise fail(f"no source for {', '.join(unsourced)}")

    def rekey(entries: dict[str, str]) -> dict[str, str]:
        """Figure names -> the spec's keys: a tensor FP16 entry serves both the default roof and its dtype."""
        out: dict[str, str] = {}
        for key, text in entries.items():
            if key in FIGURE_TO_PEAK:
                out[FIGURE_TO_PEAK[key][0]] = text
            if key in TENSOR_FIGURES:
                out[f"tensor_{TENSOR_FIGURES[key]}"] = text
            if key in ("sm_count", "name"):
                out[key] = text
            if key == "boost_clock_mhz":
                out["boost_clock_hz"] = text
        return out

    sm_count = figures.get("sm_count")
    clock_mhz = figures.get("boost_clock_mhz")
    return GpuSpec(
        name=name,
        aliases=tuple(aliases),
        arch=row["arch"],
        compute_capability=float(cc),
        sm_count=int(sm_count) if sm_count is not None else None,
        boost_clock_hz=float(clock_mhz) * 1e6 if clock_mhz is not None else None,
        peaks={peak: to_base_units(figures[k], f) for k, (peak, f) in FIGURE_TO_PEAK.items() if k in figures},
        tensor_peaks={dtype: to_base_units(figures[k], 1e12) for k, dtype in TENSOR_FIGURES.items() if k in figures},
        sources=rekey(tables["sources"]),
        derived=rekey(tables["derived"]),
        caveats=rekey(tables["caveats"]),
        notes=tuple(notes),
    )


def _check_unique(path: str, specs: tuple[GpuSpec, ...]) -> None:
    """No spelling may lead to two rows: names and aliases are unique, and so are their memory-qualified forms."""
    owner: dict[str, str] = {}
    keyed: dict[tuple[str, str | None], str] = {}
    for spec in specs:
        for spelling in (spec.name, *spec.aliases):
            folded = spelling.strip().casefold()
            if owner.setdefault(folded, spec.name) != spec.name:
                raise InputError(path, f"{spelling!r} names both {owner[folded]!r} and {spec.name!r}")
            key = _name_key(spelling)
            if keyed.setdefault(key, spec.name) != spec.name:
                raise InputError(path, f"{spelling!r} normalises like a name of {keyed[key]!r}")


def normalise_gpu_name(name: str) -> str:
    """Comparable form of a device name: case-folded, no vendor/brand prefix, no memory size or type.

    Form factors stay (SXM2, PCIe, NVL) and so does every letter of the model: "GH200 480GB" -> "gh200",
    never "h200"; "A10G" -> "a10g", never "a10".
    """
    return _name_key(name)[0]


def _name_key(name: str) -> tuple[str, str | None]:
    """(normalised name, memory size in GB or None): the size separates rows that differ only in memory."""
    text = re.sub(r"[\s_\-]+", " ", name.casefold()).strip()
    while text.startswith(_PREFIXES):
        text = text.split(" ", 1)[1] if " " in text else ""
    sizes = _MEMORY_SIZE.findall(text)
    text = _MEMORY_TYPE.sub(" ", _MEMORY_SIZE.sub(" ", text))
    return " ".join(text.split()), (sizes[0] if len(sizes) == 1 else None)


def is_mig(name: str) -> bool:
    """True for a MIG slice ("NVIDIA A100-SXM4-40GB MIG 1g.5gb"): the device is a fraction of the GPU."""
    return bool(_MIG.search(name))


class UnknownGpuError(InputError):
    """No table row for a device name; the message lists the closest names and the two ways out."""

    def __init__(self, name: str, suggestions: list[str], path: str | Path | None = None, why: str = "") -> None:
        self.gpu_name = name
        self.suggestions = suggestions
        closest = f"closest: {', '.join(repr(s) for s in suggestions)}" if suggestions else "no close match"
        reason = why or "no ceiling table entry for GPU"
        super().__init__(
            path,
            f"{reason} {name!r} ({closest}); pass --gpu NAME (see `ncu-roofline ceilings`) or --ceilings FILE.toml",
        )


def match_gpu(name: str, table: list[GpuSpec] | None = None) -> GpuSpec:
    """The table row for a device name: exact name, then alias (case-insensitive), then normalised name."""
    specs = load_gpu_table() if table is None else table
    wanted = name.strip()
    if is_mig(wanted):
        raise InputError(
            None,
            f"{wanted!r} is a MIG slice: the table's whole-GPU roofs do not apply to a MIG slice; "
            "pass --ceilings FILE.toml with the slice's own ceilings",
        )
    for spec in specs:
        if spec.name == wanted:
            return spec
    folded = wanted.casefold()
    for spec in specs:
        if folded in (s.strip().casefold() for s in (spec.name, *spec.aliases)):
            return spec
    key, size = _name_key(wanted)
    keys_of = {id(s): {_name_key(n) for n in (s.name, *s.aliases)} for s in specs}
    candidates = [s for s in specs if key and any(k == key for k, _ in keys_of[id(s)])]
    if len(candidates) > 1:  # rows that differ only in memory size (A100 40GB / 80GB): the size must decide
        sized = [s for s in candidates if size is not None and (key, size) in keys_of[id(s)]]
        if len(sized) != 1:
            raise UnknownGpuError(wanted, [s.name for s in candidates][:3], why="ambiguous GPU name")
        candidates = sized
    if candidates:
        return candidates[0]
    raise UnknownGpuError(wanted, closest_gpu_names(wanted, specs))


def closest_gpu_names(name: str, table: list[GpuSpec], limit: int = 3) -> list[str]:
    """Up to `limit` table names whose spellings (normalised) look most like `name`."""
    spelling_to_row: dict[str, str] = {}
    for spec in table:
        for spelling in (spec.name, *spec.aliases):
            spelling_to_row.setdefault(normalise_gpu_name(spelling), spec.name)
    spellings = list(spelling_to_row)
    hits = difflib.get_close_matches(normalise_gpu_name(name), spellings, n=len(spellings), cutoff=0.5)
    return list(dict.fromkeys(spelling_to_row[h] for h in hits))[:limit]


def describe_gpu(spec: GpuSpec) -> dict[str, Any]:
    """JSON-ready view of one row for `ncu-roofline ceilings show NAME`: every roof with unit, source, formula.

    Unknown roofs are listed with value None so that the gap is visible.
    """

    def entry(key: str, value: float | None, unit: str) -> dict[str, Any]:
        return {
            "value": value,
            "unit": unit,
            "source": spec.sources.get(key),
            "derived": spec.derived.get(key),
            "caveat": spec.caveats.get(key),
        }

    return {
        "name": spec.name,
        "aliases": list(spec.aliases),
        "arch": spec.arch,
        "compute_capability": spec.compute_capability,
        "sm_count": spec.sm_count,
        "boost_clock_hz": spec.boost_clock_hz,
        "peaks": {
            k: entry(k, spec.peaks.get(k), "FLOP/s" if "flop" in k else "byte/s") for k in PEAK_KEYS
        },
        "tensor_peaks": {
            d: entry(f"tensor_{d}", v, "OP/s" if d == "int8" else "FLOP/s") for d, v in spec.tensor_peaks.items()
        },
        "sources": {k: v for k, v in spec.sources.items() if k in ("name", "sm_count", "boost_clock_hz")},
        "derived": {k: v for k, v in spec.derived.items() if k in ("sm_count", "boost_clock_hz")},
        "notes": list(spec.notes),
    }


def list_gpus(table: list[GpuSpec] | None = None) -> list[dict[str, Any]]:
    """One JSON-ready line per row for `ncu-roofline ceilings`: identity and the known roofs in base units."""
    specs = load_gpu_table() if table is None else table
    return [
        {
            "name": s.name,
            "aliases": list(s.aliases),
            "arch": s.arch,
            "compute_capability": s.compute_capability,
            "peaks": {k: s.peaks[k] for k in PEAK_KEYS if k in s.peaks},
        }
        for s in specs
    ]
