"""How a report was captured: clock control and cache control, from the `ncu` command line the report records.

Both change every measured time (`--clock-control none` lets the GPU boost, `base` locks it to its base clock;
`--cache-control none` keeps caches warm between replay passes, `all` flushes them), so two captures taken with
different settings are not like for like (compare warns, `--strict` refuses).

A `.ncu-rep` keeps the command line it was captured with in each block's session details (block header field 3,
its field 11: `readers/report_container.py` walks it). A flag that is absent means ncu's documented default:
`--clock-control base` and `--cache-control all` (Nsight Compute CLI, "Profile" options). CSV exports record
neither: their settings stay unknown (null), never guessed.
"""

from __future__ import annotations

import shlex

# ncu's defaults when the flag is not given (Nsight Compute CLI documentation, options --clock-control and
# --cache-control).
DEFAULTS = {"clock_control": "base", "cache_control": "all"}
_FLAGS = {"--clock-control": "clock_control", "--cache-control": "cache_control"}
# ncu options that take no value (the others take the next word unless written `--option=value`)
_NO_VALUE = frozenset({"-f", "--force-overwrite", "--nvtx", "--quiet", "--open-in-ui", "--list-sets",
                       "--list-sections", "--list-rules", "--list-metrics", "--list-chips", "--version", "-v",
                       "--help", "-h"})


def settings_from_command(command: str) -> dict[str, str]:
    """{'clock_control': ..., 'cache_control': ...} as the `ncu` command line `command` set them (the defaults
    where it does not say)."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote in the recorded line: split on spaces
        words = command.split()
    found = dict(DEFAULTS)
    i = 1  # words[0] is ncu itself
    while i < len(words) and words[i].startswith("-"):  # ncu's own options; the application starts after them
        flag, equals, value = words[i].partition("=")
        takes_value = not equals and flag not in _NO_VALUE
        if takes_value and i + 1 < len(words):
            value = words[i + 1]
        if flag in _FLAGS and value:
            found[_FLAGS[flag]] = value
        i += 2 if takes_value else 1
    return found
