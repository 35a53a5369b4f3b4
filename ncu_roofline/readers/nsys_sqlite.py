"""The kernels of an `nsys export --type sqlite` database, summed per (names, launch shape, device), read safely.

`CUPTI_ACTIVITY_KIND_KERNEL` holds one row per launch (`start`, `end` in ns, `deviceId`, `demangledName`,
`shortName`, `mangledName` as ids into `StringIds(id, value)`, `gridX/Y/Z`, `blockX/Y/Z`). The file is an input
like any other, so:

* it is opened read-only by its path (never as a URI built from the name: a `?`, `#`, `%` or newline in it would
  open another file or create one beside it): `file:` + the percent-encoded absolute path, `mode=ro`;
* both tables must be tables (a view can recurse forever), values are capped in size (`SQLITE_LIMIT_LENGTH`: a
  900 MB name is refused, not loaded), and every query runs under a progress handler that ends it after
  `QUERY_SECONDS` or at SIGINT/SIGTERM (the signal is then raised again once SQLite has let go);
* one GROUP BY pass counts, per group, the launches whose `start`/`end` are not integers, or whose duration is not
  positive or absurd (over a day): those are left out and counted in one note; a NULL in a launch shape is an
  unknown shape (matched by name), not another shape; a name id that is not an integer or not in StringIds, or an
  id StringIds gives twice, is named.
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from ..core.errors import InputError

KERNEL_TABLE, STRINGS_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"
NAME_COLUMNS = (("demangledName", "demangled"), ("shortName", "base"), ("mangledName", "mangled"))
SHAPE_COLUMNS = ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")
QUERY_SECONDS = 600.0  # a 10^6-launch timeline is summed in about a second
MAX_VALUE_BYTES = 64 << 20  # the longest string SQLite may hand over (SQLITE_LIMIT_LENGTH)
MAX_NAME_CHARS = 1 << 16  # a kernel name is cut here (and said): name matching is linear, tables need not be
MAX_DURATION_NS = 86_400 * 10**9  # a launch over a day is a broken clock, not a kernel
_STEPS = 10_000  # SQLite VM instructions between two looks at the clock and the signals


def read_kernels(path: Path) -> tuple[pd.DataFrame, tuple[int, ...], list[str]]:
    """(one row per kernel with the timeline's name forms, shape, device, instances and time_s; the devices;
    notes on launches left out or names not found)."""
    uri = "file:" + quote(str(path.resolve()), safe="/") + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=True)
    except sqlite3.Error as exc:
        raise InputError(path, f"cannot open the SQLite timeline: {exc}") from None
    try:
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        with _bounded(connection, path):
            return _query(path, connection)
    except sqlite3.DataError as exc:
        raise InputError(path, f"a value in the SQLite timeline is larger than {MAX_VALUE_BYTES >> 20} MB ({exc}): "
                               "not a kernel name nsys writes") from None
    except sqlite3.DatabaseError as exc:
        if "too big" in str(exc):
            raise InputError(path, f"a value in the SQLite timeline is larger than {MAX_VALUE_BYTES >> 20} MB: "
                                   "not a kernel name nsys writes") from None
        raise InputError(path, f"not a readable nsys SQLite export: {exc}") from None
    finally:
        connection.close()


@contextmanager
def _bounded(connection: sqlite3.Connection, path: Path):
    """Queries end after QUERY_SECONDS, or at SIGINT/SIGTERM, whose handlers run again once SQLite returns."""
    deadline = time.monotonic() + QUERY_SECONDS
    caught: list[int] = []
    held = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            held[number] = signal.signal(number, lambda signum, frame: caught.append(signum))

    def progress() -> int:
        return 1 if caught or time.monotonic() > deadline else 0

    connection.set_progress_handler(progress, _STEPS)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if caught or "interrupted" not in str(exc):
            raise
        raise InputError(path, f"reading the SQLite timeline took over {QUERY_SECONDS:g} s: not a kernel table "
                               "nsys writes (a recursive view? a corrupt index?)") from None
    finally:
        connection.set_progress_handler(None, 0)
        for number, handler in held.items():
            signal.signal(number, handler)
        for number in caught[:1]:
            signal.raise_signal(number)  # now to the handler the CLI installed (or the default: the end)


def _query(path: Path, connection: sqlite3.Connection) -> tuple[pd.DataFrame, tuple[int, ...], list[str]]:
    kinds = dict(connection.execute("SELECT name, type FROM sqlite_master WHERE name IN (?, ?)",
                                    (KERNEL_TABLE, STRINGS_TABLE)).fetchall())
    for table in (KERNEL_TABLE, STRINGS_TABLE):
        if table not in kinds:
            raise InputError(path, f"the SQLite file has no {table} table: not an `nsys export --type sqlite` of a "
                                   "run traced with CUDA (nsys profile -t cuda), or a run that launched no kernel")
        if kinds[table] != "table":
            raise InputError(path, f"{table} is a {kinds[table]}, not the table nsys writes")
    columns = {row[1] for row in connection.execute(f"PRAGMA table_info({KERNEL_TABLE})")}
    missing = [c for c in ("start", "end") if c not in columns]
    names = [c for c, _ in NAME_COLUMNS if c in columns]
    if missing or not names:
        raise InputError(path, f"{KERNEL_TABLE} lacks {', '.join(missing) or 'any kernel name column'}")
    shape = [c for c in SHAPE_COLUMNS if c in columns] if all(c in columns for c in SHAPE_COLUMNS) else []
    device = ["deviceId"] if "deviceId" in columns else []
    keys = [*names, *shape, *device]
    integer = "typeof(k.start) = 'integer' AND typeof(k.\"end\") = 'integer'"
    good = f"{integer} AND k.\"end\" > k.start AND k.\"end\" - k.start <= {MAX_DURATION_NS}"
    query = (f"SELECT {', '.join(f'k.{c}' for c in keys)}, count(CASE WHEN {good} THEN 1 END), "
             f"sum(CASE WHEN {good} THEN k.\"end\" - k.start END), "
             f"count(CASE WHEN NOT ({integer}) THEN 1 END), "
             f"count(CASE WHEN {integer} AND k.\"end\" <= k.start THEN 1 END), count(*) "
             f"FROM {KERNEL_TABLE} AS k GROUP BY {', '.join(f'k.{c}' for c in keys)}")
    rows = connection.execute(query).fetchall()
    if not rows:
        raise InputError(path, f"{KERNEL_TABLE} holds no kernel launch: an empty timeline")
    # objects, not numbers: a text id or a NULL in a shape must stay what it is (pandas would make 3 a 3.0)
    frame = pd.DataFrame(rows, columns=[*keys, "instances", "time_ns", "not_integer", "not_positive", "all"],
                         dtype=object)
    notes = _left_out(frame)
    frame = frame[frame["instances"] > 0].reset_index(drop=True)
    if not len(frame):
        raise InputError(path, f"no launch of {KERNEL_TABLE} has a usable duration: " + "; ".join(notes))
    strings, cut = _strings(path, connection, frame, names)
    out = pd.DataFrame({"instances": frame["instances"].astype("int64"),
                        "time_s": frame["time_ns"].astype("float64") * 1e-9})
    unresolved: dict[str, int] = {}
    for column, form in NAME_COLUMNS:
        values = []
        for value in (frame[column] if column in frame else [None] * len(frame)):
            if value is None:
                values.append(None)
            elif isinstance(value, int) and value in strings:
                values.append(strings[value])
            else:
                what = f"{column} {value!r} " + ("not in StringIds" if isinstance(value, int) else "not an integer id")
                unresolved[what] = unresolved.get(what, 0) + 1
                values.append(None)
        out[form] = pd.array(values, dtype="string")
    from ..core.kernel_names import base_kernel_name

    derived = [base_kernel_name(n) if pd.notna(n) else None for n in out["demangled"]]
    out["base"] = out["base"].fillna(pd.Series(pd.array(derived, dtype="string")))
    placeholder = pd.Series([f"(kernel of unknown name: {names[0]} {frame.at[i, names[0]]!r})"
                             for i in range(len(frame))], dtype="string")
    out["name"] = out["demangled"].fillna(out["base"]).fillna(out["mangled"]).fillna(placeholder)
    if unresolved:
        listed = sorted(unresolved)
        notes.append(f"{len(listed)} kernel name id(s) of {KERNEL_TABLE} not found: " + "; ".join(listed[:5])
                     + ("; …" if len(listed) > 5 else "") + ": those kernels keep their time, under a placeholder "
                     "name (never matched to a profiled kernel)")
    if cut:
        notes.append(f"{cut} kernel name(s) longer than {MAX_NAME_CHARS} characters cut there (ending '…')")
    out["grid"] = [_shape(row) for row in frame[shape[:3]].itertuples(index=False)] if shape else None
    out["block"] = [_shape(row) for row in frame[shape[3:]].itertuples(index=False)] if shape else None
    out["device_id"] = pd.array([d if isinstance(d, int) else None for d in frame["deviceId"]] if device
                                else [pd.NA] * len(frame), dtype="Int64")
    devices = tuple(sorted(int(d) for d in out["device_id"].dropna().unique()))
    return out, devices, notes


def _left_out(frame: pd.DataFrame) -> list[str]:
    bad = int(frame["all"].sum() - frame["instances"].sum())
    if not bad:
        return []
    not_integer, not_positive = int(frame["not_integer"].sum()), int(frame["not_positive"].sum())
    absurd = bad - not_integer - not_positive
    reasons = [f"{n} {what}" for n, what in ((not_integer, "with a start or end that is not an integer of ns "
                                                           "(text, NULL, real)"),
                                             (not_positive, "ending before they start or at once"),
                                             (absurd, f"over {MAX_DURATION_NS // 10**9 // 3600} h long")) if n]
    return [f"{bad} of {int(frame['all'].sum())} kernel launches of the timeline left out (" + "; ".join(reasons)
            + "): they are in no kernel's time nor in the run's"]


def _strings(path: Path, connection: sqlite3.Connection, frame: pd.DataFrame, names: list[str]
             ) -> tuple[dict[int, str], int]:
    ids = sorted({v for c in names for v in frame[c] if isinstance(v, int)})
    strings: dict[int, str] = {}
    cut = 0
    for chunk in range(0, len(ids), 500):  # SQLite's host-parameter limit
        part = ids[chunk:chunk + 500]
        for key, value in connection.execute(f"SELECT id, substr(value, 1, {MAX_NAME_CHARS + 1}) FROM "
                                             f"{STRINGS_TABLE} WHERE id IN ({', '.join('?' * len(part))})", part):
            text = value if isinstance(value, str) else None
            if text is not None and len(text) > MAX_NAME_CHARS:
                text, cut = text[:MAX_NAME_CHARS] + "…", cut + 1
            if key in strings and strings[key] != text:
                raise InputError(path, f"{STRINGS_TABLE} gives id {key} twice ({strings[key][:80]!r} and "
                                       f"{str(text)[:80]!r}): which is the kernel's name is unknown")
            if text is not None:
                strings[key] = text
    return strings, cut


def _shape(values: tuple) -> str | None:
    """`(896, 1, 1)`; None (unknown) where one of the three is NULL or not a positive integer."""
    if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        return f"({', '.join(str(v) for v in values)})"
    return None
