"""Vega-Lite written as plain data: the few building blocks every chart spec here is made of.

Why not Altair at run time: the charts are fixed designs filled with data, and the command writes them after every
profiling job. Importing Altair costs about 0.2 s and building and validating its objects another 0.2 s, more than
reading, deriving and ranking a small run together (benchmarks/RESULTS.md). So the specs are dicts, written
against one Vega-Lite version (`VEGALITE_VERSION`, the one vl-convert renders), validated against that version's
JSON schema in the tests, and handed to notebook users as Altair charts by `as_altair`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.values import plain_value

VEGALITE_VERSION = "6.4.1"
VL_CONVERT_VERSION = "v6_4"  # vl-convert's name for that version (bundle, SVG and PNG)
SCHEMA_URL = f"https://vega.github.io/schema/vega-lite/v{VEGALITE_VERSION}.json"
# Every view sets its size; this is Vega-Lite's default for one that would not (as Altair writes it).
CONFIG = {"view": {"continuousHeight": 300, "continuousWidth": 300}}
TYPES = {"Q": "quantitative", "N": "nominal", "O": "ordinal", "T": "temporal"}

Spec = dict[str, Any]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as JSON values: numpy scalars as Python numbers, NaN, ±inf and NA as null.

    Column by column (each column's values as iterating it gives them, which is what `to_dict(orient="records")`
    reads too): a third of to_dict's cost on the few-row frames a chart draws."""
    names = [str(name) for name in frame.columns]
    if not names:
        return [{} for _ in range(len(frame))]
    columns = [[plain_value(v) for v in column] for _, column in frame.items()]
    return [dict(zip(names, row)) for row in zip(*columns)]


def channel(shorthand: str, **properties: Any) -> Spec:
    """An encoding channel from 'field:T' shorthand (T one of Q, N, O, T) and its properties."""
    name, _, kind = shorthand.rpartition(":")
    return {"field": name, "type": TYPES[kind], **properties}


def tooltip(fields: list[tuple[str, str]] | tuple[tuple[str, str], ...], **formats: str) -> list[Spec]:
    """Tooltip lines from (shorthand, title) pairs; `formats` maps a field to its d3 format."""
    lines = []
    for shorthand, title in fields:
        line = channel(shorthand, title=title)
        if line["field"] in formats:
            line["format"] = formats[line["field"]]
        lines.append(line)
    return lines


def when(test: str | Spec, then: Any, otherwise: Any, *more: tuple[str | Spec, Any]) -> Spec:
    """A conditional value: `then` where the selection `test` (a param name or a predicate) holds, else `otherwise`;
    `more` adds (test, value) pairs tried in order after the first."""
    def condition(t: str | Spec, value: Any) -> Spec:
        return {"param": t, "value": value} if isinstance(t, str) else {"test": t, "value": value}

    conditions = [condition(test, then), *(condition(t, v) for t, v in more)]
    return {"condition": conditions, "value": otherwise}


def log_scale(domain: tuple[float, float] | list[float] | None, *, nice: bool | None = False,
              padding: float | None = None) -> Spec:
    """A log scale over a fixed domain, or over the data where `domain` is None (a trend whose values are not known
    in advance); nice=None leaves Vega-Lite's default rounding, `padding` (px) keeps marks off the plot's edges."""
    scale: Spec = {"type": "log"}
    if domain is not None:
        scale["domain"] = [float(v) for v in domain]
    if nice is not None:
        scale["nice"] = nice
    if padding is not None:
        scale["padding"] = padding
    return scale


def ordinal_scale(domain: list[str], colours_or_shapes: dict[str, str] | list[str]) -> Spec:
    """A fixed mapping from category to colour or shape, listed in `domain` order."""
    values = [colours_or_shapes[d] for d in domain] if isinstance(colours_or_shapes, dict) else list(colours_or_shapes)
    return {"domain": list(domain), "range": values}


def top_level(body: Spec, datasets: dict[str, pd.DataFrame | list[dict[str, Any]]]) -> Spec:
    """A complete spec: schema, default view size, the named datasets the views read (`{"name": …}`) and `body`."""
    data = {name: rows if isinstance(rows, list) else records(rows) for name, rows in datasets.items()}
    return {"$schema": SCHEMA_URL, "config": CONFIG, "datasets": data, **body}


def as_altair(spec: Spec):  # -> altair.TopLevelMixin (imported only here)
    """The spec as an Altair chart, for notebooks (displayed as is, or changed with Altair's API)."""
    import altair as alt

    kinds = {"hconcat": alt.HConcatChart, "vconcat": alt.VConcatChart, "concat": alt.ConcatChart,
             "layer": alt.LayerChart, "facet": alt.FacetChart}
    for key, kind in kinds.items():
        if key in spec:
            return kind.from_dict(spec, validate=False)
    return alt.Chart.from_dict(spec, validate=False)
