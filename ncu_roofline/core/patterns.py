"""The user's regular expressions and globs (`--kernel`, `--exclude`, `show KERNEL`, `history --kernel`, a points
file's `kernel` column, `--nvtx-include`), matched in linear time.

Python's `re` backtracks: `--kernel '(a+)+$'` against a 37-character name runs for minutes. RE2 (`google-re2`)
never backtracks, so the time of a match grows with the name's length, whatever the pattern. Its syntax is
Python's for everything a kernel filter needs (`.*`, `\\d`, `(?i)`, `|`, `^ $`, classes, groups); what it cannot
run in linear time, backreferences (`\\1`) and lookaround (`(?=`, `(?<=`), is refused in one line that says so.
"""

from __future__ import annotations

from pathlib import Path

from .errors import InputError

_UNSUPPORTED = "RE2 syntax; backreferences and lookaround are not supported"


def _re2():
    """RE2, imported when a pattern is first compiled: most runs are given none (2-3 ms of every run otherwise)."""
    import re2

    return re2


def _options():
    options = _re2().Options()
    options.log_errors = False  # RE2 would print its own parse errors on stderr
    options.never_capture = True  # groups only group: nothing is extracted
    return options


class Pattern:
    """A compiled pattern: `search(text)` (found anywhere) or, for globs, the whole text."""

    def __init__(self, text: str, compiled, *, whole: bool) -> None:
        self.text = text
        self._compiled = compiled
        self._whole = whole

    def search(self, text: object) -> bool:
        subject = str(text)
        try:
            return self._match(subject)
        except UnicodeEncodeError:  # a lone surrogate in a hostile name: match what can be encoded
            return self._match(subject.encode("utf-8", "replace").decode("utf-8"))

    def _match(self, subject: str) -> bool:
        if self._whole:
            return self._compiled.fullmatch(subject) is not None
        return self._compiled.search(subject) is not None


def compile_regex(text: str, what: str, *, path: str | Path | None = None) -> Pattern:
    """`text` as a regex searched in names; an InputError naming `what` (e.g. "--kernel '(a'") when RE2 refuses
    it."""
    re2 = _re2()
    try:
        return Pattern(text, re2.compile(text, _options()), whole=False)
    except (re2.error, TypeError, ValueError) as exc:
        raise InputError(path, f"{what} is not a regular expression ({_reason(exc)}; {_UNSUPPORTED})") from None


def compile_glob(text: str, what: str) -> Pattern:
    """A shell glob (`*`, `?`, `[...]`, as fnmatch) matched against the whole text, translated to RE2."""
    re2 = _re2()
    try:
        return Pattern(text, re2.compile(_glob_regex(text), _options()), whole=True)
    except (re2.error, TypeError, ValueError) as exc:
        raise InputError(None, f"{what} is not a glob ({_reason(exc)})") from None


def _glob_regex(glob: str) -> str:
    re2 = _re2()
    out, i, n = [], 0, len(glob)
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = i
            if j < n and glob[j] == "!":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append("\\[")
                continue
            body = glob[i:j].replace("\\", "\\\\")
            i = j + 1
            if body.startswith("!"):
                body = "^" + body[1:]
            elif body.startswith("^"):
                body = "\\" + body
            out.append(f"[{body}]")
        else:
            out.append(re2.escape(c) if hasattr(re2, "escape") else _escape(c))
    return "(?s)" + "".join(out)


def _escape(c: str) -> str:
    return c if c.isalnum() or c == "_" else "\\" + c


def _reason(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
