"""Short, readable labels for long C++ kernel names.

A demangled CUDA kernel name is often a 2,000-character template instantiation; as a chart label it hides
everything else. `short_kernel_name` folds it down in fixed steps, stopping at the first that fits, so the same
name always gives the same label and the most telling part (the function's own name) survives longest:

1. drop the return type and anything after the argument list (`const`, `[clone .kd]`), fold the argument list
   to `(…)`;
2. fold template arguments, innermost first (`f<a<b>, 4>` → `f<a<…>, 4>` → `f<…>`);
3. drop leading namespaces (`at::native::k<…>(…)` → `…::k<…>(…)`);
4. cut the end, marking the cut with `…`.

Full names stay in tooltips and tables; this is only for labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

ELLIPSIS = "…"

_OPENERS = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
# After the keyword `operator` these are a function name, not brackets.
_OPERATOR_SYMBOLS = ("()", "[]", "<<=", ">>=", "<=>", "<<", ">>", "<=", ">=", "->*", "->", "<", ">")
_ANONYMOUS_NAMESPACE = re.compile(r"\(anonymous namespace\)")
_WHITESPACE = re.compile(r"\s+")


@dataclass
class _Group:
    """A bracketed run of the name: `<...>`, `(...)`, `[...]` or `{...}`."""

    opener: str
    items: list[str | _Group] = field(default_factory=list)
    closed: bool = False

    def depth(self) -> int:
        """How many template groups nest at or below this one (step 2 folds them from the innermost out)."""
        inner = max((item.depth() for item in self.items if isinstance(item, _Group)), default=0)
        return inner + (1 if self.opener == "<" else 0)


def _parse(name: str) -> list[str | _Group]:
    """Split `name` into text and nested bracket groups; tolerates truncated or unbalanced names."""
    root = _Group("")
    stack = [root]
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "o" and name.startswith("operator", i) and not (i and (name[i - 1].isalnum() or name[i - 1] == "_")):
            rest = name[i + 8 :]
            stripped = rest.lstrip(" ")
            symbol = next((s for s in _OPERATOR_SYMBOLS if stripped.startswith(s)), "")
            end = i + 8 + (len(rest) - len(stripped)) + len(symbol) if symbol else i + 8
            stack[-1].items.append(name[i:end])
            i = end
            continue
        if ch == ">" and i and name[i - 1] == "-":  # `->` inside a decltype is not a closing bracket
            stack[-1].items.append(ch)
        elif ch in _OPENERS:
            group = _Group(ch)
            stack[-1].items.append(group)
            stack.append(group)
        elif ch in _CLOSERS and len(stack) > 1 and stack[-1].opener == _CLOSERS[ch]:
            stack.pop().closed = True
        else:
            stack[-1].items.append(ch)
        i += 1
    return root.items


def _render(items: list[str | _Group], fold_depth: int, level: int = 0) -> str:
    """Write items back out, folding template groups nested more than `fold_depth` deep (`level`: depth so far)."""
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif item.opener == "<" and level + 1 > fold_depth:
            out.append("<" + ELLIPSIS + ">")
        elif item.opener == "{":
            # Lambdas and unnamed types: `{lambda(int)#1}` → `{lambda}`.
            word = re.match(r"[A-Za-z_]*", _render(item.items, 0).strip())
            out.append("{" + (word.group(0) if word and word.group(0) else ELLIPSIS) + "}")
        else:
            inner = _render(item.items, fold_depth, level + (item.opener == "<"))
            out.append(item.opener + inner + (_OPENERS[item.opener] if item.closed else ""))
    return "".join(out)


def _function_items(items: list[str | _Group]) -> tuple[list[str | _Group], _Group | None]:
    """The items that make up the qualified function name, and its argument list (None when there is none).

    The argument list is the last top-level `(...)` that follows a name; what precedes the name's last top-level
    space is the return type, what follows the argument list is a qualifier.
    """
    call = None
    for index in range(len(items) - 1, 0, -1):
        item = items[index]
        previous = items[index - 1]
        if isinstance(item, _Group) and item.opener == "(" and not (isinstance(previous, str) and previous == " "):
            call = index
            break
    head = items[:call] if call is not None else items
    # Trailing spaces would make the name look empty after the last-space split below.
    while head and head[-1] == " ":
        head = head[:-1]
    last_space = max((i for i, item in enumerate(head) if item == " "), default=-1)
    arguments = items[call] if call is not None else None
    return head[last_space + 1 :], arguments if isinstance(arguments, _Group) else None


def _split_namespaces(items: list[str | _Group]) -> list[list[str | _Group]]:
    """Split a qualified name at its top-level `::`, keeping template groups with their component."""
    parts: list[list[str | _Group]] = [[]]
    i = 0
    while i < len(items):
        if items[i] == ":" and i + 1 < len(items) and items[i + 1] == ":":
            parts.append([])
            i += 2
            continue
        parts[-1].append(items[i])
        i += 1
    return [part for part in parts if part]


# The longest name parsed into namespaces and templates; real C++ kernel names run to a few thousand characters.
LONGEST_PARSED_NAME = 1 << 16


@lru_cache(maxsize=1 << 14)
def short_kernel_name(name: str, max_len: int = 40) -> str:
    """A label of at most `max_len` characters for kernel `name` (see the module docstring for the steps).

    Deterministic: the same name and `max_len` always give the same label. Two kernels may share a label, so a
    caller that needs unique labels adds something unique to it (the chart prefixes the rank). Cached: labelling a
    table asks for each name's label two or three times (core/kernel_labels.py), and a C++ name of a thousand
    characters takes a millisecond to parse.
    """
    if max_len < 4:
        raise ValueError(f"max_len must be at least 4, got {max_len}")
    text = _WHITESPACE.sub(" ", str(name)).strip()
    text = _ANONYMOUS_NAMESPACE.sub("{anon}", text)
    if not text:
        return ""
    if len(text) > LONGEST_PARSED_NAME:  # megabytes of name: parsing it item by item would take minutes
        return _truncate(text, max_len)
    function, arguments = _parsed_function(text)
    if not function:
        return _truncate(text, max_len)
    suffix = "" if arguments is None else "(" + ELLIPSIS + ")" if arguments.items else "()"
    max_depth = max((item.depth() for item in function if isinstance(item, _Group)), default=0)

    # Steps 1 and 2: fold templates from the innermost level outwards until the label fits.
    for fold_depth in range(max_depth, -1, -1):
        label = _render(function, fold_depth) + suffix
        if len(label) <= max_len:
            return label

    # Step 3: drop leading namespaces, marking that something was dropped.
    parts = _split_namespaces(function)
    for start in range(1, len(parts)):
        label = ELLIPSIS + "::" + "::".join(_render(part, 0) for part in parts[start:]) + suffix
        if len(label) <= max_len:
            return label

    # Step 4: the bare function name is still too long: cut it.
    return _truncate(_render(parts[-1] if parts else function, 0) + suffix, max_len)


@lru_cache(maxsize=1 << 12)
def _parsed_function(text: str) -> tuple[list[str | _Group], _Group | None]:
    """`_function_items(_parse(text))`, once per name: a table asks for a name's label at several widths (the
    canonical one, a narrower terminal's, the chart's). The items are only read after this, never changed."""
    return _function_items(_parse(text))


def _truncate(text: str, max_len: int) -> str:
    return text if len(text) <= max_len else text[: max_len - 1].rstrip() + ELLIPSIS


def base_kernel_name(name: str) -> str:
    """The function's own name, without return type, namespaces, template arguments or parameters: what Nsight
    Systems calls a kernel's base (`shortName`, `cuda_gpu_kern_sum:base`) and `ncu --print-kernel-base function`
    prints. `void at::native::k<4, float>(int, float *)` → `k`; a name without brackets is its own base."""
    text = _ANONYMOUS_NAMESPACE.sub("{anon}", _WHITESPACE.sub(" ", str(name)).strip())
    function, _ = _function_items(_parse(text))
    parts = _split_namespaces(function)
    if not parts:
        return text
    return "".join(item for item in parts[-1] if isinstance(item, str)).strip()
