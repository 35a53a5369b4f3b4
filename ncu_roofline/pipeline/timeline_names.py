"""One kernel's name as Nsight Compute and Nsight Systems each write it, folded to one normal form.

The two tools demangle and print the same kernel differently. nsys 2025 writes
`void at::native::<unnamed>::CatArrayBatchedCopy<at::native::<unnamed>::OpaqueType<(unsigned int)2>, …>(…)`;
ncu 2025.1 writes the same kernel `void unnamed>::CatArrayBatchedCopy<unnamed>::OpaqueType<2>, …>(…)`: it drops
every `identifier::` qualifier together with a `<` or `[` right after it (hence `unnamed>::`, and
`operator ()() lambda() (instance 7)]` where nsys has `operator ()() const::[lambda() (instance 7)]`), and writes
template arguments without their casts. Older demanglers write `(anonymous namespace)`, `4` for `(int)4`, `true`
for `(bool)1`, `double const*` for `const double *`, `<int=4>` for `<4>`.

`normal_form` applies one set of rules to both sides, each a single left-to-right regular-expression pass whose
quantifiers cannot backtrack (possessive, or bounded by a character the run cannot hold), so its time is linear
in the name's length (a 64 kB template name takes milliseconds, not forever):

1. ncu's own qualifier rule: every `identifier::`, with a `<` or `[` right after it, is dropped;
2. anonymous namespaces in every spelling (`(anonymous namespace)::`, `<unnamed>::`, ncu's `unnamed>::`);
3. casts before literals (`(bool)0`, `(unsigned long)2`), `true`/`false` as 1/0, the old `<int=4>`;
4. `const`, `volatile`, `__restrict__`, a leading `void` return type and `(void)`; then every space.

Two names are one kernel where their normal forms are equal; a name without a parameter list (a base-name or
`--print-kernel-base function` print) is compared without the other side's parameter list
(`without_parameters`).
"""

from __future__ import annotations

import re

from ..core.kernel_names import base_kernel_name

# 1. ncu's qualifier rule; `\b` and the possessive `\w*+` start once per identifier and never backtrack.
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*+::[<\[]?")
# 2. `Cat<unnamed>::Op` (after rule 1 or as ncu printed it): the `<` opens Cat's template, `unnamed>::` is the
#    namespace; elsewhere `<unnamed>::`, `unnamed>::` and the older spellings are the namespace alone.
_ANONYMOUS_IN_TEMPLATE = re.compile(r"(?<=[\w>])<unnamed>::")
_ANONYMOUS = re.compile(r"\(anonymous namespace\)::|\{anonymous\}::|\{anon\}::|<?unnamed>::")
# 3. `(bool)0`, `(int)-1`, `(unsigned long)2`: a bracketed type name right before a literal.
_CAST = re.compile(r"\([A-Za-z_][\w ]*+\)(?=-?\d)")
_BOOLEAN = re.compile(r"\b(?:true|false)\b")
_OLD_TEMPLATE_ARG = re.compile(r"(?<=[<,])\s*+[A-Za-z_][\w: ]*?=(?!=)")  # `kernelBLFit<int=4>` (ncu 2019/2020)
# 4. words that both tools print but not always in the same place, a return type one of them leaves out.
_QUALIFIER_WORD = re.compile(r"\b(?:const|volatile|__restrict__|__restrict)\b")
_VOID = re.compile(r"^\s*+void\s++|(?<=\()\s*+void\s*+(?=\))")
_SPACE = re.compile(r"\s++")
ELLIPSES = ("...", "…")


def clean_name(name: str) -> str:
    """Rules 1–4 with single spaces kept, so that `base_kernel_name` can still find the function's own name."""
    text = _QUALIFIER.sub("", str(name))
    text = _ANONYMOUS.sub("", _ANONYMOUS_IN_TEMPLATE.sub("<", text))
    text = _OLD_TEMPLATE_ARG.sub("", _CAST.sub("", text))
    text = _BOOLEAN.sub(lambda m: "1" if m.group(0) == "true" else "0", text)
    text = _VOID.sub("", _QUALIFIER_WORD.sub("", text))
    return _SPACE.sub(" ", text).strip()


def normal_form(name: str) -> str:
    """The name as both tools' prints of it agree (see the module docstring): compare these, never show them."""
    return _SPACE.sub("", clean_name(name))


def normal_base(name: str) -> str:
    """The function's own name (`CatArrayBatchedCopy`), read off the cleaned name: ncu's `unnamed>::` and nsys's
    casts no longer confuse the bracket parser."""
    return base_kernel_name(clean_name(name))


def has_parameters(normal: str) -> bool:
    return normal.endswith(")") and without_parameters(normal) != normal


def has_template(normal: str) -> bool:
    return "<" in without_parameters(normal)


def without_parameters(normal: str) -> str:
    """A normal form without its trailing parameter list: `k<4>(int,float*)` → `k<4>`. One backward scan."""
    if not normal.endswith(")"):
        return normal
    depth = 0
    for i in range(len(normal) - 1, -1, -1):
        ch = normal[i]
        depth += (ch in ")]>}") - (ch in "([<{")
        if depth == 0:
            return normal[:i] if i > 0 else normal
    return normal


def cut(normal: str) -> tuple[str, str] | None:
    """("suffix", tail) for a name missing its front (a closing bracket before its opener), ("prefix", head) for
    one ending in an ellipsis; None for a whole name."""
    for mark in ELLIPSES:
        if normal.endswith(mark) and len(normal) > len(mark):
            return "prefix", normal[: -len(mark)]
    depth = 0
    for i, ch in enumerate(normal):
        depth += (ch in "<([{") - (ch in ">)]}")
        if depth < 0:
            # only a qualifier cut at its front (`unnamed>::k(…)`): ncu's eaten `[` leaves `…]` mid-name too
            tail = normal[i + 1:]
            return ("suffix", tail[2:]) if tail.startswith("::") and len(tail) > 3 else None
    return None
