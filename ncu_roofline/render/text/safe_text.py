"""Text from the input (kernel names, NVTX ranges, file names) made safe for the medium it is shown in.

A kernel name is whatever bytes the profiled program gave: ESC sequences that clear a terminal or set its title,
backticks that end a Markdown code span, NUL/BEL/BS, U+FFFE, lone surrogates. Parquet and JSON keep names exact;
every renderer that shows a name passes it through one of these first:

- `for_terminal`: control characters (C0, DEL, C1), bidirectional overrides, noncharacters and lone surrogates
  become visible escapes (`\\x1b`, `\\u202e`); rich markup in names is the caller's to avoid (use `rich.text.Text`).
- `for_markdown_code`: a whole code span that nothing inside can end: a fence of backticks longer than any run
  in the text, padded when the text starts or ends with a backtick, control characters (line breaks too) escaped
  as above, and `|` escaped when the span sits in a table cell.
- `for_markdown_text`: running Markdown text (a GPU name in bold, a sentence): `for_terminal`, then every character
  that can open markup inline (`\\`, backticks, `*`, `_`, brackets, `<`, `>`, `&`, `|`, `~`, `!`) escaped with a
  backslash, so the text renders as `for_terminal` shows it and adds no emphasis, link, HTML or table cell.
- `for_toml_string`: a TOML basic string (quotes included) that reads back as the text, with every character
  `for_terminal` escapes written as a TOML `\\uXXXX` escape instead (a lone surrogate, which no TOML string can
  hold, as U+FFFD), so the file is valid TOML and inert on the terminal it is printed to.
- `for_chart`: what Vega, vl-convert/resvg (SVG/PNG) and browsers accept: the same characters replaced by U+FFFD,
  so a label still shows that something was there.

`for_terminal` and `for_chart` are idempotent; all three leave ordinary names (C++ templates, `operator<<`,
non-ASCII) unchanged apart from the span's backticks.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls; bidi embeddings/overrides/isolates (text that reorders what follows it);
# the line and paragraph separators; lone surrogates; and the noncharacters U+FDD0..U+FDEF and U+xFFFE/U+xFFFF.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff\ufdd0-\ufdef"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(0x11)).replace("\\U0000", "\\u") + "]"
)
_BACKTICK_RUNS = re.compile("`+")
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>&|~!])")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def for_terminal(text: object) -> str:
    """`text` with every character a terminal would act on, or could not show, written as a visible escape."""
    return _UNSAFE.sub(_escape, str(text))


def for_markdown_code(text: object, *, table_cell: bool = False) -> str:
    """`text` as one Markdown code span (backticks included) that no character of it can break out of."""
    body = for_terminal(text)  # line breaks too: a name never spans lines
    if table_cell:
        body = body.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ")
                                                                  and body.strip()) else ""
    return f"{fence}{pad}{body}{pad}{fence}" if body else "` `"


def for_markdown_text(text: object) -> str:
    """`text` as inert running Markdown: shows what `for_terminal` shows, opens no emphasis, link, HTML or cell."""
    return _MARKDOWN_INLINE.sub(r"\\\1", for_terminal(text))


def for_chart(text: object) -> str:
    """`text` with every character a chart renderer may reject (vl-convert panics on ESC, NUL, U+FFFE) replaced
    by U+FFFD."""
    return _UNSAFE.sub("\ufffd", str(text))


def for_toml_string(text: object) -> str:
    """`text` as a TOML basic string: reads back as `text` (lone surrogates aside), shows no control character."""
    def escape(match: re.Match[str]) -> str:
        code = ord(match.group(0))
        if 0xD800 <= code <= 0xDFFF:
            return "\\ufffd"
        return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    body = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _UNSAFE.sub(escape, body) + '"'
