"""Which runs of a history are committed, and the proof that each is whole: one run is one atomic rename.

A run's parts (one Parquet file per table, `TABLE/run_id=<ID>/part-<uuid>.parquet`) are written first, each
under a hidden temporary name renamed into place; then the run is committed by one rename of a small manifest,
`_runs/<ID>.json`, naming its parts. `--replace` writes the new parts and renames a new manifest over the old one:
that rename is the one instant the run turns from old to new, and the old parts are removed after it. A writer
killed at any instant therefore leaves the old run (or none) or the new one, never both: parts that no manifest
names are *uncommitted* and no reader takes them.

Readers (`list_runs`) take a run only from its manifest, and check each part it names: a regular file (not a
link), a Parquet footer that reads, the history's metadata with the run's own id, the required columns. A run
that fails is left out and named in `Listing.problems` (the CLI prints each as a note); one bad file never breaks
the rest of the history.

Histories written before manifests (part schema version 1) are read as they are when unambiguous: a run folder
with no manifest holding exactly one version-1 part per table is that run. Two or more (a `--replace` killed
midway, or two copies of a history merged) cannot be told apart: the run is named and left out, never
double-counted. `repair` (`history DIR --repair`) removes temporary files and uncommitted parts and writes the
manifest of each unambiguous old run; it must run while no writer is active (a live writer's temporary file looks
like a dead one's).

Paths are only ever listed (`os.scandir`) and passed on as files, never as glob patterns: a folder named `a[1]`
is a folder like any other.

Confinement: a manifest is text anyone can edit, so every part it names must be one file name (no `/`, no `..`)
whose real path is exactly `DIR/TABLE/run_id=<ID>/NAME`: no link anywhere between DIR and the file. A manifest
naming anything else makes its run damaged (named, left out, and nothing of it is removed by `--replace` or
`--repair`), and a history whose `_runs`, `kernels` or `launches` folder is a link is refused as a whole: what
repair removes must be inside the history.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InputError

TABLES = ("kernels", "launches")
RUNS_FOLDER = "_runs"  # a leading underscore: pyarrow, Spark and DuckDB dataset readers skip it, so the Parquet dataset still reads as it is
MANIFEST_FORMAT = "ncu_roofline.history.run"
PART_VERSION = "2"  # parts written under a manifest; "1": parts of a history from before manifests
REQUIRED_COLUMNS = ("run_time", "labels", "gpu", "tool_version", "inputs", "kernel_name", "time_s")
_PART_NAME = re.compile(r"^part-[0-9a-f]{32}\.parquet$")
_LEGACY_PART_NAME = re.compile(r"^part-[^/\\\x00]*\.parquet$")  # one file name: no separator, so no `..` step
_TEMP_NAME = re.compile(r"^\..+\.tmp$")
_MAX_MANIFEST_BYTES = 64 * 1024


@dataclass(frozen=True)
class Run:
    run_id: str
    parts: dict[str, Path]  # table -> its one part
    legacy: bool = False  # committed by the old rule (one version-1 part per table, no manifest)


@dataclass
class Listing:
    runs: dict[str, Run] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # one line each: which run is left out, and why
    orphans: list[Path] = field(default_factory=list)  # uncommitted parts and temporary files (what repair removes)
    ambiguous: list[str] = field(default_factory=list)  # run ids with several old parts and no manifest


def manifest_path(directory: Path, run_id: str) -> Path:
    return Path(directory) / RUNS_FOLDER / f"{run_id}.json"


def run_folder(directory: Path, table: str, run_id: str) -> Path:
    return Path(directory) / table / f"run_id={run_id}"


def manifest_bytes(run_id: str, parts: dict[str, str]) -> bytes:
    return json.dumps({"format": MANIFEST_FORMAT, "version": 1, "run_id": run_id,
                       "parts": {table: parts[table] for table in TABLES}}, sort_keys=True).encode()


def list_runs(directory: Path, *, only: str | None = None, deep: bool = True) -> Listing:
    """The committed runs of the history in `directory` (or of run `only`), each checked; see the module doc.

    `deep=False`: a committed run's parts are checked from their directory entries only (place, kind, not empty),
    not their footers: for a reader that opens the footers anyway and checks them there (`views.connect`)."""
    directory = Path(directory)
    _refuse_linked_folders(directory)
    listing = Listing()
    manifests = _manifests(directory, only, listing)
    bad_folders: set[str] = set()
    candidates = _candidate_parts(directory, only, listing, bad_folders)
    for run_id in sorted(set(manifests) | set(candidates)):
        if run_id in bad_folders:
            continue
        parts_here = candidates.get(run_id, {})
        if run_id in manifests:
            _take_manifest_run(directory, run_id, manifests[run_id], parts_here, listing, deep)
        else:
            _take_legacy_run(run_id, parts_here, listing)
    return listing


def _refuse_linked_folders(directory: Path) -> None:
    """The history's own folders must be plain folders inside it: through a link, repair would remove files
    elsewhere and the parts read would not be the history's."""
    for name in (RUNS_FOLDER, *TABLES):
        folder = Path(directory) / name
        if folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir()):
            raise InputError(folder, "is not a plain folder (a link or a file): a history's _runs, kernels and "
                                     "launches must be folders inside it")


def confined(name: str) -> bool:
    """True when part `name` is one file name in its run folder. With the folder checks this is the whole of
    confinement: `_refuse_linked_folders` (no top folder is a link), `_candidate_parts` (no run folder is a link:
    its run is left out) and `check_file` (the part is not a link) leave no link between DIR and a part, so its
    real path is DIR/TABLE/run_id=<ID>/NAME without a `realpath` per part."""
    return bool(name) and os.sep not in name and (os.altsep is None or os.altsep not in name) and \
        name not in (".", "..") and "\x00" not in name


def _manifests(directory: Path, only: str | None, listing: Listing) -> dict[str, dict[str, str] | None]:
    """run id -> the part names its manifest gives (None: a manifest that cannot be read)."""
    found: dict[str, dict[str, str] | None] = {}
    for entry in _entries(directory / RUNS_FOLDER):
        if _TEMP_NAME.match(entry.name):
            listing.orphans.append(Path(entry.path))
            continue
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        run_id = entry.name[:-len(".json")]
        if only is not None and run_id != only:
            continue
        parts, problem = _read_manifest(Path(entry.path), run_id)
        if problem:
            listing.problems.append(f"run {run_id!r} left out: {RUNS_FOLDER}/{entry.name} {problem}")
        found[run_id] = parts
    return found


def _read_manifest(path: Path, run_id: str) -> tuple[dict[str, str] | None, str | None]:
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        if info.st_size > _MAX_MANIFEST_BYTES:
            return None, f"is {info.st_size:,} bytes, not a run manifest"
        payload = path.read_bytes()
    except OSError as exc:
        return None, f"cannot be read ({type(exc).__name__})"
    return parse_manifest(payload, run_id)


def parse_manifest(payload: bytes, run_id: str) -> tuple[dict[str, str] | None, str | None]:
    """(table -> part file name, None) from a manifest's bytes, or (None, what is wrong with it)."""
    if len(payload) > _MAX_MANIFEST_BYTES:
        return None, f"is {len(payload):,} bytes, not a run manifest"
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"cannot be read ({type(exc).__name__})"
    parts = data.get("parts") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or data.get("run_id") != run_id
            or not isinstance(parts, dict) or not all(isinstance(parts.get(t), str) for t in TABLES)):
        return None, "is not this run's manifest"
    if not all(_LEGACY_PART_NAME.match(parts[t]) for t in TABLES):
        return None, "names a part outside its run folder (a part is one file name, part-*.parquet)"
    return {table: parts[table] for table in TABLES}, None


def _candidate_parts(directory: Path, only: str | None, listing: Listing,
                     bad_folders: set[str]) -> dict[str, dict[str, list[Path]]]:
    """run id -> table -> the `part-*.parquet` entries of its folder (temporary files go to the orphans)."""
    found: dict[str, dict[str, list[Path]]] = {}
    for table in TABLES:
        for folder in _entries(directory / table):
            if not folder.name.startswith("run_id="):
                continue
            run_id = folder.name[len("run_id="):]
            if only is not None and run_id != only:
                continue
            if folder.is_symlink() or not folder.is_dir():
                listing.problems.append(f"run {run_id!r} left out: {table}/{folder.name} is not a plain folder")
                bad_folders.add(run_id)
                continue
            for entry in _entries(Path(folder.path)):
                if _TEMP_NAME.match(entry.name):
                    listing.orphans.append(Path(entry.path))
                elif _LEGACY_PART_NAME.match(entry.name):
                    found.setdefault(run_id, {}).setdefault(table, []).append(Path(entry.path))
    return found


def _take_manifest_run(directory: Path, run_id: str, parts: dict[str, str] | None,
                       here: dict[str, list[Path]], listing: Listing, deep: bool = True) -> None:
    if parts is None:  # a damaged manifest: its run is left out (named), and nothing of it is garbage to repair
        return
    named = {table: run_folder(directory, table, run_id) / name for table, name in parts.items()}
    outside = [table for table, name in parts.items() if not confined(name)]
    if outside:  # damaged: left out, and none of its folders' files are garbage (repair and --replace leave them)
        listing.problems.append(f"run {run_id!r} left out: {RUNS_FOLDER}/{run_id}.json names a {outside[0]} part "
                                "that resolves outside its run folder")
        return
    for table in TABLES:  # everything else in the run's folders is uncommitted or superseded
        listing.orphans += [p for p in here.get(table, []) if named.get(table) != p]
    for table in TABLES:
        problem = check_part(named[table], run_id)[1] if deep else check_file(named[table])
        if problem:
            listing.problems.append(f"run {run_id!r} left out: {table} part {named[table].name} {problem}")
            return
    listing.runs[run_id] = Run(run_id, named)


def _take_legacy_run(run_id: str, here: dict[str, list[Path]], listing: Listing) -> None:
    versions: dict[str, list[Path]] = {}
    for table in TABLES:
        for path in here.get(table, []):
            version, problem = check_part(path, run_id)
            if version == PART_VERSION:
                listing.orphans.append(path)  # written under a manifest that was never committed
            elif problem:
                listing.problems.append(f"run {run_id!r} left out: {table} part {path.name} {problem}")
                return
            else:
                versions.setdefault(table, []).append(path)
    counts = {table: len(versions.get(table, [])) for table in TABLES}
    if counts == {"kernels": 1, "launches": 1}:
        listing.runs[run_id] = Run(run_id, {table: versions[table][0] for table in TABLES}, legacy=True)
    elif counts["kernels"] > 1 or counts["launches"] > 1:
        listing.ambiguous.append(run_id)
        listing.problems.append(
            f"run {run_id!r} left out: {counts['kernels']} kernels and {counts['launches']} launches parts and no "
            f"manifest (an interrupted --replace, or two copies of the history merged); remove all but one part "
            f"per table, then `history DIR --repair`")
    elif counts["kernels"] == 1:
        listing.problems.append(f"run {run_id!r} left out: a kernels part and no launches part")
    else:
        listing.orphans += versions.get("launches", [])  # an old writer killed before its kernels part


def check_part(path: Path, run_id: str) -> tuple[str | None, str | None]:
    """(the part's history schema version, what is wrong with it or None): the file, then its footer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    problem = check_file(path)
    if problem:
        return None, problem
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return None, f"is not a readable Parquet file ({first})"
    metadata = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (schema.metadata or {}).items()}
    return judge_part(metadata, schema.names, run_id)


def check_file(path: Path) -> str | None:
    """What is wrong with `path` as a part file, from its directory entry alone (no byte of it read), or None."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link, not a part file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_size == 0:
        return "is empty (0 bytes)"
    return None


PART_KEYS = ("ncu_roofline.history.schema_version", "ncu_roofline.history.run_id")


def judge_part(metadata: dict[str, str], names: list[str] | None, run_id: str) -> tuple[str | None, str | None]:
    """(version, problem) of a part from its footer's key-value metadata (`PART_KEYS` suffice) and column names
    (None: not checked here; the reader checks the union of the parts' columns)."""
    version = metadata.get(PART_KEYS[0])
    if version is None:
        return None, "is not an ncu-roofline history part (no history metadata)"
    if metadata.get(PART_KEYS[1]) != run_id:
        return version, f"belongs to run {metadata.get(PART_KEYS[1])!r}"
    if names is None:
        return version, None
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing or "run_id" in names:
        return version, f"has another schema (missing {', '.join(missing)})" if missing else \
            "has another schema (a run_id column)"
    return version, None


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return []


def repair(directory: Path, *, write_manifest) -> tuple[list[Path], list[str], Listing]:
    """Remove temporary files and uncommitted parts; commit each unambiguous old run with a manifest.

    Returns (removed paths, run ids given a manifest, the listing after repair). `write_manifest(path, payload)`
    writes atomically (passed in by the store, which owns writing)."""
    directory = Path(directory)
    before = list_runs(directory)
    removed: list[Path] = []
    for path in before.orphans:
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
        except OSError:
            continue
    migrated = []
    for run_id, run in before.runs.items():
        if run.legacy:
            (directory / RUNS_FOLDER).mkdir(parents=True, exist_ok=True)
            write_manifest(manifest_path(directory, run_id),
                           manifest_bytes(run_id, {table: run.parts[table].name for table in TABLES}))
            migrated.append(run_id)
    for table in TABLES:  # folders left empty by the removals
        for folder in _entries(directory / table):
            if folder.name.startswith("run_id=") and folder.is_dir() and not folder.is_symlink():
                try:
                    os.rmdir(folder.path)
                except OSError:
                    pass
    return removed, migrated, list_runs(directory)
