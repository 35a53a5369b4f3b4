"""`trends(DIR) -> History`: the façade of `ncu-roofline history`, beside `analyze() -> Analysis` and
`compare() -> Comparison`, and as symmetric: `json()`, `markdown()`, `chart()`, `bundle()`, `write()`; with
`sql(DIR, QUERY) -> QueryResult` (`history --sql`) and `repair(DIR)` (`history --repair`) beside it, and the checks
of a history's options that every command taking one (`analyze --history`, `batch`, `history`, the MCP server)
makes before any input is read: `history_location`, `prepare_run`, `parse_labels`, `band_options`.

The work is `history/report.load_history` (read the dataset, match kernels into series, bands, gates); this holds
the result and hands its tables to the renderers, so the CLI only parses, calls this, writes the bundle and prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from .history.sql import SQL_MEMORY_LIMIT, SQL_TIMEOUT_S  # noqa: F401  (`--sql-timeout`'s and `--sql-memory`'s defaults)

if TYPE_CHECKING:
    import pandas as pd

    from .history.bands import BandOptions
    from .history.report import History as Report
    from .pipeline.gates import Gate


@dataclass(frozen=True)
class History:
    """A history folder's runs, series, summary and gate results (history/report.py), with its outputs."""

    report: Report
    directory: Path  # or a bucket's location (history/location.py)

    @property
    def runs(self) -> pd.DataFrame:
        return self.report.runs

    @property
    def series(self) -> pd.DataFrame:
        return self.report.series

    @property
    def summary(self) -> pd.DataFrame:
        return self.report.summary

    @property
    def gates(self) -> list:
        return self.report.gates

    @property
    def notes(self) -> list[str]:
        """Runs left out of the history (damaged, ambiguous), one line each."""
        return self.report.notes

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def newest_run_id(self) -> str | None:
        return self.report.newest_run_id

    @property
    def input_paths(self) -> list[Path]:
        """The dataset's part files: outputs are never written over them."""
        from .history.store import dataset_files

        return dataset_files(self.directory)

    def metadata(self) -> dict[str, str]:
        return self.report.metadata()

    def time_wide(self) -> pd.DataFrame:
        """`time_s` per series (rows) and run (columns): what the table and the Markdown summary show."""
        from .history.series import wide_values

        return wide_values(self.series, "time_s", len(self.runs))

    def json(self) -> str:
        """The JSON summary (docs/json-schema.md)."""
        from .render.history.json_summary import history_json

        return history_json(self.runs, self.summary, self.series, self.gates, metadata=self.metadata())

    def markdown(self, *, top: int = 10) -> str:
        from .render.history.markdown import history_markdown

        return history_markdown(self.summary, self.time_wide(), self.gates, metadata=self.metadata(),
                                runs=len(self.runs), newest_run_id=self.newest_run_id, top=top)

    def chart(self, *, top: int = 10, window: int = 10, band_name: str = "mad", label_key: str | None = None
              ) -> dict:
        """The trend chart as a Vega-Lite spec: the failing runs marked, runs named by `label_key`'s label."""
        from .render.history.chart import history_chart

        return history_chart(self.summary, self.series, self.runs, top=top, window=window, band_name=band_name,
                             gates=self.gates, label_key=label_key)

    def bundle(self, *, formats: Iterable[str] = (), top: int = 10, window: int = 10, band_name: str = "mad",
               label_key: str | None = None):
        """The files `-o DIR` holds (render/history/outputs.py), rendered, not yet written: a `Bundle`."""
        from .render.history.outputs import history_bundle

        return history_bundle(runs=self.runs, summary=self.summary, series=self.series, gates=self.gates,
                              metadata=self.metadata(), formats=tuple(formats), top=top, window=window,
                              band_name=band_name, label_key=label_key)

    def write(self, outdir: str | Path, *, formats: Iterable[str] = (), top: int = 10, window: int = 10,
              band_name: str = "mad", label_key: str | None = None) -> list[Path]:
        return self.bundle(formats=formats, top=top, window=window, band_name=band_name,
                           label_key=label_key).write(Path(outdir), self.input_paths)


def history_location(value: str | Path):
    """Where a `--history` value (or `history DIR`) points: a local folder or an object store's location; an unknown
    URL scheme is refused in one line (history/location.py)."""
    from .history.location import history_location as locate

    return locate(value)


def prepare_run(location, run_id: str | None, labels: list[str], *, replace: bool = False
                ) -> tuple[str, dict[str, str]]:
    """The run id (given, or CI's default) and labels a run will be appended with, checked against the history
    before any input is read: a bad or taken id fails in a second, not after a long read (history/store.py)."""
    from .history.store import prepare_run as prepare

    return prepare(location, run_id, labels, replace=replace)


def parse_labels(texts: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--label key=value` pairs; a key given twice is refused (history/store.py)."""
    from .history.store import parse_labels as parse

    return parse(texts)


def band_options(*, window: int, band: str, k: float) -> BandOptions:
    """The noise band a gate is judged against (history/bands.py), checked before any run is read."""
    from .history.bands import BandOptions

    return BandOptions(window=window, band=band, k=k)


def trends(directory: str | Path, *, kernel: str | None = None, last: int | None = None,
           labels: Mapping[str, str] | None = None, gates: Iterable[Gate | str] = (),
           band: BandOptions | None = None, min_time_s: float = 0.0) -> History:
    """Read the history folder and judge its newest run (history/report.load_history says how)."""
    from .history.report import load_history

    report = load_history(directory, kernel=kernel, last=last, labels=labels, gates=gates, band=band,
                          min_time_s=min_time_s)
    return History(report, Path(directory) if isinstance(directory, str) else directory)  # a folder or a bucket


@dataclass(frozen=True)
class QueryResult:
    """What `history --sql` printed or wrote: the query's result as a table."""

    frame: pd.DataFrame

    def json(self) -> str:
        from .render.history.json_summary import frame_json

        return frame_json(self.frame)


def sql(directory, query: str, *, timeout_s: float = SQL_TIMEOUT_S, memory_limit: str = SQL_MEMORY_LIMIT,
        on_notes: Callable[[list[str]], None] = lambda notes: None) -> QueryResult:
    """Run a SELECT over the history's views `kernels` and `launches`, sandboxed (history/sql.py: no file or network
    access, a time and memory limit). `on_notes` hears the runs left out (damaged, ambiguous) before the query
    runs, so they are said even when it fails. `directory`: a folder or an object store's location, as
    history/location.history_location gives it."""
    from .history.commits import TABLES
    from .history.sql import check_memory_limit, check_query, run_sql, tables_named
    from .history.views import connect

    check_memory_limit(memory_limit)
    check_query(query)
    notes: list[str] = []
    con = connect(directory, notes=notes, tables=tables_named(query, TABLES))  # only what the query reads
    on_notes(notes)
    try:
        return QueryResult(run_sql(con, query, timeout_s=timeout_s, memory_limit=memory_limit))
    finally:
        con.close()


def repair(directory):
    """`history --repair`: remove what killed writers left, commit old-layout runs with a manifest (history/store.py);
    (removed paths, migrated run ids, the folder as it is after)."""
    from .history.store import repair_history

    return repair_history(directory)
