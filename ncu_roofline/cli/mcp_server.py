"""`ncu-roofline mcp`: the analysis as Model Context Protocol tools, for agents (the official `mcp` SDK, over stdio).

Why a server beside the CLI: an agent's optimisation loop asks "how much time is left, and why" many times over
the same reports; the tools answer in the documented JSON contracts (docs/json-schema.md), the same values
`--json` writes, bounded in size (a page of kernels with a cursor), and keep a few analyses in memory so that
paging and `show` do not read a report again.

Safety: the server reads only files under the roots it was started with (`--root DIR`, repeatable; default the
working folder), after symlinks are resolved; it runs no shell, writes no file, and a path outside the roots is
refused in one line (a tool error, never a crash). Bad input is the same one line the CLI prints.
"""

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from ..core.errors import InputError

PAGE_DEFAULT, PAGE_MAX = 20, 200  # kernels (or rows) per answer: an agent's context is not a dump
CACHED_ANALYSES = 8
GLOB_CHARS = set("*?[")


class OutsideRoots(InputError):
    """A path that resolves outside every root the server was started with."""


@dataclass(frozen=True)
class Roots:
    """The folders the server may read under, resolved once (symlinks followed) when it starts."""

    folders: tuple[Path, ...]

    @classmethod
    def of(cls, folders: list[str] | None) -> "Roots":
        chosen = [Path(f) for f in folders] if folders else [Path.cwd()]
        resolved = []
        for folder in chosen:
            if not str(folder).strip():
                raise InputError(None, "--root '' is empty: name a folder")
            if not folder.is_dir():
                raise InputError(folder, "--root is not a folder")
            resolved.append(folder.resolve(strict=True))
        return cls(tuple(resolved))

    def check(self, value: str, what: str = "path") -> Path:
        """`value` resolved (relative to the first root), refused unless it lies under a root."""
        if not isinstance(value, str) or not value.strip():
            raise InputError(None, f"{what} is empty: name a file under the server's roots")
        if "\0" in value:
            raise InputError(None, f"{what} holds a NUL character")
        if GLOB_CHARS & set(value):
            raise InputError(value, f"{what}: globs are not expanded by the server; name a file or a folder")
        candidate = Path(value).expanduser()
        if not candidate.is_absolute():
            candidate = self.folders[0] / candidate
        try:
            resolved = candidate.resolve(strict=False)
        except (OSError, RuntimeError) as error:  # a symlink loop
            raise InputError(value, f"{what} cannot be resolved ({error})") from None
        if not any(resolved == root or resolved.is_relative_to(root) for root in self.folders):
            raise OutsideRoots(value, f"{what} is outside the server's roots ("
                                      + ", ".join(str(r) for r in self.folders) + ")")
        return resolved


class Session:
    """The tools' state: the roots and a few analyses kept by their inputs, options and file stamps."""

    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self._analyses: OrderedDict[tuple, Any] = OrderedDict()

    def _stamp(self, paths: list[Path]) -> tuple:
        stamps = []
        for path in paths:
            try:
                stat = path.stat()
            except OSError:
                stamps.append((str(path), None))
                continue
            stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
        return tuple(stamps)

    def inputs(self, paths: list[str]) -> list[Path]:
        if not isinstance(paths, list) or not paths:
            raise InputError(None, "paths: give one or more ncu exports, reports or folders")
        files = [self.roots.check(p, "paths") for p in paths]
        for file in files:  # a folder's files are expanded by the reader: each must stay inside the roots too
            if file.is_dir():
                for inner in file.rglob("*"):
                    self.roots.check(str(inner), "paths")
        return files

    def analysis(self, paths: list[str], **options: Any):
        """`analyze()` of the inputs, from the cache when the files have not changed."""
        from .. import analyze

        files = self.inputs(paths)
        for option in ("ceilings", "nsys"):
            if options.get(option):
                options[option] = str(self.roots.check(options[option], option))
        key = (self._stamp(files), tuple(sorted((k, str(v)) for k, v in options.items())))
        if key in self._analyses:
            self._analyses.move_to_end(key)
            return self._analyses[key]
        result = analyze([str(f) for f in files], **options)
        self._analyses[key] = result
        while len(self._analyses) > CACHED_ANALYSES:
            self._analyses.popitem(last=False)
        return result


def page(items: list, cursor: Optional[str], limit: int) -> tuple[list, Optional[str]]:
    """One page of `items` and the cursor of the next (None at the end). The cursor is an opaque offset."""
    if limit < 1 or limit > PAGE_MAX:
        raise InputError(None, f"limit must be 1 to {PAGE_MAX}")
    start = 0
    if cursor:
        if not cursor.isdigit() or int(cursor) > len(items):
            raise InputError(None, f"cursor {cursor!r} is not one this server gave")
        start = int(cursor)
    end = start + limit
    return items[start:end], (str(end) if end < len(items) else None)


def analyze_tool(session: Session, paths: list[str], *, gpu: Optional[str] = None, ceilings: Optional[str] = None,
                 clock: str = "measured", group_by: str = "kernel", kernel: Optional[str] = None,
                 exclude: Optional[str] = None, sort: str = "headroom", nsys: Optional[str] = None,
                 limit: int = PAGE_DEFAULT, cursor: Optional[str] = None) -> dict[str, Any]:
    result = session.analysis(paths, gpu=gpu, ceilings=ceilings, clock=clock, group_by=group_by, kernel=kernel,
                              exclude=exclude, sort=sort, nsys=nsys)
    payload = json.loads(result.json())
    kernels, next_cursor = page(payload["kernels"], cursor, limit)
    payload.update(kernels=kernels, kernel_count=len(payload["kernels"]), next_cursor=next_cursor)
    return payload


def show_tool(session: Session, paths: list[str], kernel: str, *, gpu: Optional[str] = None,
              ceilings: Optional[str] = None, clock: str = "measured", launches: int = PAGE_DEFAULT
              ) -> dict[str, Any]:
    """One kernel group (its rank, or a regex matching one name, as `show` takes): its JSON entry and launches."""
    from ..render.analysis.drilldown import find_kernel
    from ..render.text.json_values import records

    result = session.analysis(paths, gpu=gpu, ceilings=ceilings, clock=clock)
    row = find_kernel(result.kernels, str(kernel).strip())
    payload = json.loads(result.json())
    entry = next(e for e in payload["kernels"] if e["rank"] == int(row["rank"]))
    mine = result.launches_of(row)
    fields = tuple(c for c in LAUNCH_FIELDS if c in mine.columns)
    shown, _ = page(records(mine, fields), None, max(1, min(launches, PAGE_MAX)))
    return {"kernel": entry, "launch_count": len(mine), "launches": shown, "metadata": payload["metadata"],
            "schema_version": payload["schema_version"]}


LAUNCH_FIELDS = ("launch_id", "grid", "block", "time_s", "flop_per_s", "bound", "roofline_fraction", "headroom_s",
                 "limiter", "status")


def compare_tool(session: Session, base: list[str], head: list[str], *, fail_on: Optional[list[str]] = None,
                 min_time_s: float = 0.0, strict: bool = False, totals: bool = False, gpu: Optional[str] = None,
                 ceilings: Optional[str] = None, clock: str = "measured", limit: int = PAGE_DEFAULT,
                 cursor: Optional[str] = None) -> dict[str, Any]:
    from .. import parse_gates
    from ..comparison import compare
    from ..render.compare.json_summary import comparison_json

    gates = parse_gates(list(fail_on or []))
    runs = [session.analysis(p, gpu=gpu, ceilings=ceilings, clock=clock, allow_empty=True) for p in (base, head)]
    result = compare(*runs, min_time_s=min_time_s, gates=gates, strict=strict, totals=totals)
    payload = json.loads(comparison_json(result.kernels, result.totals, result.info()))
    kernels, next_cursor = page(payload.get("kernels", []), cursor, limit)
    payload.update(kernels=kernels, kernel_count=len(payload.get("kernels", [])), next_cursor=next_cursor,
                   passed=bool(result.passed), warnings=list(result.warnings))
    return payload


def history_tool(session: Session, directory: str, *, kernel: Optional[str] = None, last: Optional[int] = None,
                 fail_on: Optional[list[str]] = None, sql: Optional[str] = None, limit: int = PAGE_DEFAULT,
                 cursor: Optional[str] = None) -> dict[str, Any]:
    from .. import parse_gates

    folder = session.roots.check(directory, "directory")
    if sql is not None:
        from ..trends import sql as run_query

        notes: list[str] = []  # the CLI's own checks and limits: an empty query, time and memory bounds
        answer = run_query(folder, sql, on_notes=notes.extend)
        rows = json.loads(answer.json())
        shown, next_cursor = page(rows, cursor, limit)
        return {"rows": shown, "row_count": len(rows), "next_cursor": next_cursor, "notes": notes}
    from ..trends import trends

    result = trends(folder, kernel=kernel, last=last, gates=parse_gates(list(fail_on or [])))
    payload = json.loads(result.json())
    kernels, next_cursor = page(payload["kernels"], cursor, limit)
    payload.update(kernels=kernels, kernel_count=len(payload["kernels"]), next_cursor=next_cursor,
                   notes=list(result.notes))
    return payload


def model_tool(session: Session, workload: str, params: dict[str, Any], *, gpus: Optional[list[str]] = None,
               ceilings: Optional[str] = None) -> dict[str, Any]:
    """Analytic points: one workload of model/ (the `model` command's), placed on the GPUs' roofs."""
    from ..modeling import model, workload as count

    try:
        work = count(workload, **params)
    except TypeError as error:  # a parameter the workload has not, or one missing
        raise InputError(None, f"model {workload}: {error}") from None
    user = str(session.roots.check(ceilings, "ceilings")) if ceilings else None
    return json.loads(model(work, list(gpus or []), user).json())


def ceilings_tool(session: Session, gpu: Optional[str] = None) -> Any:
    """The built-in GPU table (no `gpu`), or one GPU's roofs with their sources."""
    from ..modeling import describe, gpu_rows

    if gpu is None:
        return {"gpus": gpu_rows()}
    return describe(gpu)


def build_server(roots: Roots):
    """The MCPServer with one tool per command; every InputError becomes a tool error of one line."""
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import Field

    # The parameters' documentation, in each tool's input schema (this function's annotations are evaluated here).
    Paths = Annotated[list[str], Field(description="ncu --csv exports, .ncu-rep reports or folders of them, under "
                                                   "the server's roots (relative paths: to the first root)")]
    Gpu = Annotated[Optional[str], Field(description="A GPU of the built-in table for the roofs (default: the "
                                                     "report's own peaks, else its device name)")]
    Ceilings = Annotated[Optional[str], Field(description="A --ceilings TOML file of roofs, under the roots")]
    Clock = Annotated[Literal["measured", "base", "max"], Field(description="The clock the roofs are scaled to")]
    Limit = Annotated[int, Field(ge=1, le=PAGE_MAX, description="Kernels (or rows) in one answer")]
    Cursor = Annotated[Optional[str], Field(description="next_cursor of the previous answer, for the next page")]
    Gates = Annotated[Optional[list[str]], Field(description="Gates as `--fail-on` takes them, e.g. 'time_s>+5%'")]

    from ..core.version import __version__

    session = Session(roots)
    server = MCPServer("ncu-roofline", version=__version__, log_level="WARNING", instructions=(
        "Roofline analysis of Nsight Compute exports and reports. Paths are files or folders under the server's "
        "roots: " + ", ".join(str(r) for r in roots.folders) + ". Answers are the JSON contracts of "
        "docs/json-schema.md, a page of kernels at a time (pass next_cursor back as cursor)."))

    def guarded(function, *args, **kwargs):
        try:
            return function(session, *args, **kwargs)
        except InputError as error:
            raise ToolError(error.line()) from None

    @server.tool(description="Analyse ncu exports or .ncu-rep reports: kernels ranked by headroom (the time a "
                             "kernel at its roofline would save), with bound, limiter and its evidence, the run's "
                             "totals and notes. The same values as `ncu-roofline analyze --json`.")
    def analyze(paths: Paths, gpu: Gpu = None, ceilings: Ceilings = None,
                clock: Clock = "measured",
                group_by: Literal["kernel", "nvtx", "op"] = "kernel", kernel: Optional[str] = None,
                exclude: Optional[str] = None, sort: Literal["headroom", "time", "fraction"] = "headroom",
                nsys: Optional[str] = None, limit: Limit = PAGE_DEFAULT,
                cursor: Cursor = None) -> dict[str, Any]:
        return guarded(analyze_tool, paths, gpu=gpu, ceilings=ceilings, clock=clock, group_by=group_by,
                       kernel=kernel, exclude=exclude, sort=sort, nsys=nsys, limit=limit, cursor=cursor)

    @server.tool(description="One kernel group of an analysis: its entry (bound, limiter, evidence) and its "
                             "launches. `kernel` is its rank or a regex matching one name.")
    def show(paths: Paths, kernel: str, gpu: Gpu = None, ceilings: Ceilings = None,
             clock: Clock = "measured",
             launches: int = PAGE_DEFAULT) -> dict[str, Any]:
        return guarded(show_tool, paths, kernel, gpu=gpu, ceilings=ceilings, clock=clock, launches=launches)

    @server.tool(description="Compare two runs kernel by kernel; gates such as 'time_s>+5%' give verdicts and "
                             "`passed`. The same values as `ncu-roofline compare --json`.")
    def compare(base: Paths, head: Paths, fail_on: Gates = None, min_time_s: float = 0.0,
                strict: bool = False, totals: bool = False, gpu: Optional[str] = None,
                ceilings: Ceilings = None, clock: Clock = "measured",
                limit: Limit = PAGE_DEFAULT, cursor: Cursor = None) -> dict[str, Any]:
        return guarded(compare_tool, base, head, fail_on=fail_on, min_time_s=min_time_s, strict=strict,
                       totals=totals, gpu=gpu, ceilings=ceilings, clock=clock, limit=limit, cursor=cursor)

    @server.tool(description="Query a run history folder: per-kernel trends and noise-aware gates on the newest "
                             "run, or a sandboxed SQL query over the views `kernels` and `launches`.")
    def history(directory: str, kernel: Optional[str] = None, last: Optional[int] = None,
                fail_on: Gates = None, sql: Optional[str] = None, limit: Limit = PAGE_DEFAULT,
                cursor: Cursor = None) -> dict[str, Any]:
        return guarded(history_tool, directory, kernel=kernel, last=last, fail_on=fail_on, sql=sql, limit=limit,
                       cursor=cursor)

    @server.tool(description="Analytic roofline points of a workload (gemm, conv2d, elementwise, layernorm, "
                             "softmax, llm; `params` are the `ncu-roofline model` options, e.g. {\"m\": 4096, "
                             "\"n\": 4096, \"k\": 4096, \"dtype\": \"fp16\"}) placed on GPUs' roofs.")
    def model(workload: Literal["gemm", "conv2d", "elementwise", "layernorm", "softmax", "llm"],
              params: dict[str, Any], gpus: Optional[list[str]] = None,
              ceilings: Ceilings = None) -> dict[str, Any]:
        return guarded(model_tool, workload, params, gpus=gpus, ceilings=ceilings)

    @server.tool(description="The built-in GPU ceiling table, or one GPU's roofs with their sources.")
    def ceilings(gpu: Optional[str] = None) -> dict[str, Any]:
        return guarded(ceilings_tool, gpu)

    return server


def serve(roots: list[str] | None) -> None:
    """Run the server over stdio until the client closes it."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise InputError(None, "the MCP server needs the mcp extra: pip install 'ncu-roofline[mcp]'") from None
    build_server(Roots.of(roots)).run("stdio")
