"""`history --sql`: one query over the views `kernels` and `launches` (`views.connect`), sandboxed and bounded.

Sandboxed: only SELECT (and EXPLAIN) statements run, the connection can read the history's committed parts and
nothing else (`enable_external_access = false`, the parts as DuckDB's `allowed_paths`: no `read_csv('/etc/passwd')`,
no COPY, ATTACH, INSTALL or LOAD), cannot see Python variables, and its configuration is locked so the query cannot
undo that. Bounded: DuckDB is interrupted after the time limit and holds at most the memory limit, so a recursive
CTE that never ends stops in one line. A query string from a pull request reads the history and nothing more.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core.errors import InputError

if TYPE_CHECKING:  # pandas is loaded by the query, not by `--sql-timeout`'s default (cli/history.py)
    import pandas as pd

SQL_SANDBOX = ("SET python_enable_replacements = false", "SET enable_external_access = false",
               "SET lock_configuration = true")
SQL_TIMEOUT_S = 60.0
SQL_MEMORY_LIMIT = "4GB"
_MEMORY = re.compile(r"^\s*(\d+(\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)
_REFUSED = "--sql: refused: a query may read only the views kernels and launches"


def check_memory_limit(text: str) -> str:
    """A DuckDB `memory_limit` value: a number and a unit (`512MB`, `4GB`, `1.5GiB`)."""
    if not _MEMORY.match(text or ""):
        raise InputError(None, f"--sql-memory {text!r}: expected a size such as 512MB or 4GB")
    return text.strip()


def check_query(query: str) -> None:
    """Refuse, before any file is read, a query that does not parse, holds no statement (blanks, comments), or
    holds a statement other than SELECT/EXPLAIN (COPY, ATTACH, SET, PRAGMA, CREATE... could write or reconfigure)."""
    import duckdb

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise InputError(None, f"--sql: {first_line(exc)}") from None
    if not statements:
        raise InputError(None, "--sql: the query is empty (nothing but blanks, comments or semicolons)")
    allowed = (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN)
    for statement in statements:
        if statement.type not in allowed:
            kind = str(statement.type).rsplit(".", 1)[-1].removesuffix("_STATEMENT")
            raise InputError(None, f"{_REFUSED} ({kind} is not a query; only SELECT runs)")


def tables_named(query: str, tables: tuple[str, ...]) -> tuple[str, ...]:
    """Which of `tables` the query may read (all of them when DuckDB cannot say): only those are opened."""
    import duckdb

    try:
        named = {name.lower() for name in duckdb.get_table_names(query)}
    except duckdb.Error:
        return tables
    return tuple(t for t in tables if t in named)


def run_sql(con, query: str, *, timeout_s: float = SQL_TIMEOUT_S, memory_limit: str = SQL_MEMORY_LIMIT
            ) -> pd.DataFrame:
    """The query's result (see the module docstring); any error is one line."""
    import threading

    import duckdb

    check_query(query)
    if not timeout_s > 0:
        raise InputError(None, f"--sql-timeout must be more than 0 seconds, not {timeout_s:g}")
    if con.execute("SELECT current_setting('lock_configuration')").fetchone()[0] is not True:
        con.execute(f"SET memory_limit = '{check_memory_limit(memory_limit)}'")
        for statement in SQL_SANDBOX:
            con.execute(statement)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        result = con.execute(query)
        if result.description:
            return result.df()
        import pandas as pd

        return pd.DataFrame()
    except duckdb.InterruptException:
        raise InputError(None, f"--sql: stopped after {timeout_s:g} s (the query's time limit; --sql-timeout "
                               "raises it)") from None
    except duckdb.OutOfMemoryException:
        raise InputError(None, f"--sql: stopped at the query's memory limit, {memory_limit} (--sql-memory "
                               "raises it)") from None
    except duckdb.PermissionException as exc:
        raise InputError(None, f"{_REFUSED} ({first_line(exc)})") from None
    except duckdb.Error as exc:
        raise InputError(None, f"--sql: {first_line(exc)}") from None
    finally:
        timer.cancel()


def first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
