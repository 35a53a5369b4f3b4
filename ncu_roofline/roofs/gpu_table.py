"""The built-in GPU ceiling table (`metrics/gpus.toml`) and matching a device name to one of its rows.

The table is the fallback when a report does not carry its own roofs. Its figures are datasheet peaks with a
source each; here they become `GpuSpec`s in base units (FLOP/s, bytes/s) under the same `peak_*` names as the
output columns. Matching is exact name, then alias, then a normalised name, never a substring: "H200" must not
pick up "GH200", nor "A10" pick up "A10G". A MIG slice is refused, since a full-GPU roof does not fit it.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from ncu_roofline.core.data import METRICS_DIR, read_data_toml
from ncu_roofline.core.errors import InputError
from ncu_roofline.core.vocabulary import LEVELS, PEAK_COLUMNS, TENSOR_TYPES, TERMS, peak_bytes_column, tensor_peak_column

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
    "tensor_fp4_tflops": "fp4",
    "tensor_fp64_tflops": "fp64",
}
# Counts, clocks and per-clock widths: the inputs of derived roofs (L2 = slices x B/clk x clock, L1 = SMs x B/clk x
# clock). `tensor_clock_mhz` is the clock a vendor's low-precision tensor figures are quoted at, where it is not the
# boost clock (Hopper: 1830 vs 1980 MHz on H100 SXM).
INPUT_FIGURES: tuple[str, ...] = ("sm_count", "boost_clock_mhz", "tensor_clock_mhz", "l2_slices",
                                  "l2_bytes_per_clk_per_slice", "l1_bytes_per_clk_per_sm")
# Measured bandwidths (ERT, microbenchmarks): shown beside the theoretical roof, never used as a roof.
MEASURED_FIGURES: dict[str, str] = {f"{level}_gbps_measured": peak_bytes_column(level) for level in LEVELS}
FIGURES: tuple[str, ...] = (*INPUT_FIGURES, *FIGURE_TO_PEAK, *(f for f in TENSOR_FIGURES if f not in FIGURE_TO_PEAK),
                            *MEASURED_FIGURES)
_GPU_KEYS = {"name", "aliases", "arch", "compute_capability", "notes", "sources", "derived", "caveats", "ncu_factors",
             *FIGURES}

_PREFIXES = ("nvidia ", "tesla ", "geforce ")
# A memory size ("16gb", "480gb", "144g") or memory type ("hbm3", "hbm3e", "gddr6x") token, after case folding.
_MEMORY_SIZE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b")
_MEMORY_TYPE = re.compile(r"\b(?:hbm\d*e?|gddr\d*x?)\b")
_MIG = re.compile(r"\bmig\b|\b\d+g\.\d+gb\b", re.IGNORECASE)


def to_base_units(value: float, factor: float) -> float:
    """`value` x `factor`, rounded once: 66.9 TFLOP/s gives exactly 66.9e12, not 66.9 * 1e12 one ulp off."""
    return float(Decimal(repr(float(value))) * Decimal(factor))


def default_table_path() -> Path:
    """`metrics/gpus.toml`, wherever core/data.py finds the data files."""
    return METRICS_DIR / "gpus.toml"


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
    inputs: dict[str, float] = field(default_factory=dict, hash=False)  # INPUT_FIGURES as written in the table
    measured: dict[str, float] = field(default_factory=dict, hash=False)  # peak column -> measured bytes/s
    # figure -> Nsight Compute's per-clock peak / the table's per-clock figure, where their definitions differ
    ncu_factors: dict[str, float] = field(default_factory=dict, hash=False)


def tensor_type_peaks(spec: GpuSpec) -> dict[str, float]:
    """Dense tensor roof per input type (`peak_flop_per_s_tensor_<type>`); "fp16" covers FP16 and BF16."""
    by_type = {t: spec.tensor_peaks.get(t) for t in TENSOR_TYPES}
    if by_type["fp16"] is None:
        by_type["fp16"] = spec.tensor_peaks.get("bf16")
    return {tensor_peak_column(t): v for t, v in by_type.items() if v is not None}


def load_gpu_table(path: Path | None = None) -> list[GpuSpec]:
    """Read and validate the ceiling table (the built-in one by default); parsed once per path."""
    return list(_load_cached(str(Path(path).resolve() if path is not None else default_table_path())))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> tuple[GpuSpec, ...]:
    try:
        data = read_data_toml(Path(path))  # parsed once per file version (core/data.py)
    except FileNotFoundError:
        raise InputError(path, "GPU ceiling table not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read GPU ceiling table: {exc}") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError (imported only where the table is parsed, not per run)
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
    factors = row.get("ncu_factors", {})
    if not isinstance(factors, dict) or set(factors) - set(figures) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in factors.values()):
        raise fail("[gpu.ncu_factors] must map figures the row gives to positive numbers")
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
            if key in ("sm_count", "name") or key in INPUT_FIGURES or key in MEASURED_FIGURES:
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
        inputs={k: float(figures[k]) for k in INPUT_FIGURES if k in figures},
        measured={peak: to_base_units(figures[k], 1e9) for k, peak in MEASURED_FIGURES.items() if k in figures},
        ncu_factors={k: float(v) for k, v in factors.items()},
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
    """No table row for a device name. Only rows of the same family are ever listed (`suggestions`): an unknown GPU
    gets the `--ceilings` route, never another GPU's roofs as a stand-in."""

    def __init__(self, name: str, suggestions: list[str], path: str | Path | None = None, why: str = "") -> None:
        self.gpu_name = name
        self.suggestions = suggestions
        if suggestions:
            rows = ", ".join(repr(s) for s in suggestions)
            text = (f"{why or 'ambiguous GPU name'} {name!r} names a family; its table rows ({rows}) have different "
                    "roofs: pass --gpu with the exact row if one is your GPU, else --ceilings FILE.toml")
        else:
            report = shlex.quote(str(path)) if path else "REPORT"
            text = (f"{why or 'no ceiling table entry for GPU'} {name!r}: write its roofs with `ncu-roofline "
                    f"ceilings template {name!r} --from {report} > FILE.toml` (prefilled from the report's own "
                    "peaks) and pass --ceilings FILE.toml; no other GPU's roofs are used in its place (the "
                    "table's rows are not the same GPU), --gpu NAME only if it is a row of `ncu-roofline ceilings`")
        super().__init__(path, text)


def match_gpu(name: str, table: list[GpuSpec] | None = None) -> GpuSpec:
    """The table row for a device name: exact name, then alias (case-insensitive), then normalised name.

    A name that only starts a family ("A100", "Tesla V100") is ambiguous and lists that family's rows; anything
    else is unknown, with no suggestion: a near spelling is usually another GPU (RTX 2060 SUPER vs RTX 4090).
    """
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
            raise UnknownGpuError(wanted, [s.name for s in candidates], why="ambiguous GPU name")
        candidates = sized
    if candidates:
        return candidates[0]
    family = family_rows(wanted, specs)
    raise UnknownGpuError(wanted, family, why="ambiguous GPU name" if family else "")


def family_rows(name: str, table: list[GpuSpec]) -> list[str]:
    """Rows of which `name` names the family: its normalised words start one of the row's spellings.

    Words, not characters: "A100" starts "a100 sxm4" and "a100 pcie", never "a10" or "h100"; "V100" never "GV100".
    """
    words = normalise_gpu_name(name).split()
    if not words:
        return []
    rows = [s.name for s in table
            if any(normalise_gpu_name(n).split()[:len(words)] == words for n in (s.name, *s.aliases))]
    return list(dict.fromkeys(rows))


def describe_gpu(spec: GpuSpec) -> dict[str, Any]:
    """JSON-ready view of one row for `ncu-roofline ceilings show NAME`: every roof with unit, source, formula,
    the dense tensor roof per input type, measured figures beside their roofs, and the ridge points.

    Unknown roofs are listed with value None so that the gap is visible.
    """
    from ncu_roofline.roofs.peaks import ridge_points

    def entry(key: str, value: float | None, unit: str) -> dict[str, Any]:
        return {
            "value": value,
            "unit": unit,
            "source": spec.sources.get(key),
            "derived": spec.derived.get(key),
            "caveat": spec.caveats.get(key),
        }

    figure_of = {peak: figure for figure, (peak, _) in FIGURE_TO_PEAK.items()}
    by_type = tensor_type_peaks(spec)
    return {
        "name": spec.name,
        "aliases": list(spec.aliases),
        "arch": spec.arch,
        "compute_capability": spec.compute_capability,
        "sm_count": spec.sm_count,
        "boost_clock_hz": spec.boost_clock_hz,
        "peaks": {
            k: {**entry(k, spec.peaks.get(k), "FLOP/s" if "flop" in k else "byte/s"),
                "ncu_factor": spec.ncu_factors.get(figure_of[k])} for k in PEAK_KEYS
        },
        "tensor_peaks": {
            d: entry(f"tensor_{d}", v, "OP/s" if d == "int8" else "FLOP/s") for d, v in spec.tensor_peaks.items()
        },
        "tensor_roofs": {
            t: by_type.get(tensor_peak_column(t)) for t in TENSOR_TYPES
        },
        "measured": {
            k: {"value": spec.measured[peak], "unit": "byte/s", "source": spec.sources.get(k),
                "caveat": spec.caveats.get(k)} for k, peak in MEASURED_FIGURES.items() if peak in spec.measured
        },
        "inputs": {
            k: {"value": v, "source": spec.sources.get(k), "derived": spec.derived.get(k),
                "caveat": spec.caveats.get(k)} for k, v in spec.inputs.items()
        },
        "ridges": ridge_points({**spec.peaks, **by_type}),
        "sources": {k: v for k, v in spec.sources.items() if k in ("name", "sm_count", "boost_clock_hz")},
        "derived": {k: v for k, v in spec.derived.items() if k in ("sm_count", "boost_clock_hz")},
        "notes": list(spec.notes),
    }


def list_gpus(table: list[GpuSpec] | None = None) -> list[dict[str, Any]]:
    """One JSON-ready line per row for `ncu-roofline ceilings`: identity and every roof in base units (None where
    the table does not know it, so a gap shows)."""
    specs = load_gpu_table() if table is None else table
    return [
        {
            "name": s.name,
            "aliases": list(s.aliases),
            "arch": s.arch,
            "compute_capability": s.compute_capability,
            "peaks": {k: s.peaks.get(k) for k in PEAK_KEYS},
            "tensor_peaks": tensor_type_peaks(s),
        }
        for s in specs
    ]
