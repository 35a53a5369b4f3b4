"""A chart spec's files: the Vega-Lite JSON, a self-contained offline HTML page, and SVG/PNG through vl-convert.

Every chart (roofline, compare, model, history) goes through `chart_payloads`, so the page template, the JSON
form and the image scale are decided once. Payloads are rendered, not written, so a failing export writes nothing.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...core.files import write_atomic
from .vegalite import VEGALITE_VERSION, VL_CONVERT_VERSION, Spec

PNG_SCALE = 2.0  # sharp on a high-density screen
FORMATS = ("vl.json", "html", "svg", "png")
DEFAULT_FORMATS = ("vl.json", "html")
# Vega-Embed options for the HTML page: SVG keeps zoomed text crisp and each mark a DOM node (what tests count);
# the action menu offers image export only ("open in editor" would post the data to an online editor).
EMBED_OPTIONS: dict[str, Any] = {"renderer": "svg", "actions": {"export": True, "source": False, "compiled": False,
                                                                 "editor": False}, "mode": "vega-lite"}

_PAGE = """\
<!DOCTYPE html>
<html>
<head>
{title}  <meta charset="UTF-8">
  <style>
    html {{
      overflow-y: scroll;
    }}

    #vis.vega-embed {{
      width: 100%;
      display: flex;
    }}

    #vis.vega-embed details,
    #vis.vega-embed details summary {{
      position: relative;
    }}
  </style>
  <script type="text/javascript">
    // vega-embed.js bundle with Vega-Lite version v{vegalite_version}
    {bundle}
  </script>
</head>
<body>
<div class="vega-visualization" id="vis"></div>
<script type="text/javascript">
  const spec = {spec};
  const embedOpt = {embed_options};
{fit_script}
</script>
</body>
</html>"""


# Filling the window: a spec whose `usermeta.fit` lists plot sizes (each with its own label layout, placed in Python
# so that no texts overlap at any of them) is drawn at the widest size that fits the page beside everything else
# (axes, legends, the bars: measured on a first drawing of each arrangement). When not even the smallest size fits
# beside the bars, the bars narrow (`fit.narrow`: view name -> spec to merge, where the spec offers it) and then, if
# the smallest still does not fit, go under the plot ("stacked") and the plot takes the width. Redrawn on resize.
_FIT_SCRIPT = """\
  const fit = (spec.usermeta || {}).fit;
  const overheads = {};  // arrangement -> width of everything but the plot, measured when first drawn
  let shown = null, current = null, arrangement = 'side', queue = Promise.resolve();
  function merge(into, from) {
    for (const [key, value] of Object.entries(from)) {
      if (value && typeof value === 'object' && !Array.isArray(value) && into[key] && typeof into[key] === 'object') {
        merge(into[key], value);
      } else {
        into[key] = value;
      }
    }
  }
  function find(node, name) {  // a view by name, in nested concatenations too (the roofline over its panel)
    if (node.name === name) return node;
    for (const child of node.hconcat || node.vconcat || node.concat || []) {
      const found = find(child, name);
      if (found) return found;
    }
    return null;
  }
  function sized(size, how) {
    const copy = JSON.parse(JSON.stringify(spec));
    if (how === 'stacked' && copy.hconcat) {  // one column; `fit.stacked` adjusts views for it (view name -> spec)
      copy.vconcat = copy.hconcat;
      delete copy.hconcat;
      for (const other of copy.vconcat) merge(other, (fit.stacked || {})[other.name] || {});
    }
    if (how === 'narrow') {  // side by side, the views `fit.narrow` names made narrower
      for (const [name, patch] of Object.entries(fit.narrow || {})) {
        const other = find(copy, name);
        if (other) merge(other, patch);
      }
    }
    const view = find(copy, fit.view) || copy;
    view.width = size.width;
    view.height = size.height;
    for (const [name, props] of Object.entries(size.views || {})) {  // views sized with the plot (memory panel)
      const other = find(copy, name);
      if (other) Object.assign(other, props);
    }
    Object.assign(copy.datasets, size.datasets);
    return copy;
  }
  function drawnWidth() {
    const box = getComputedStyle(document.querySelector('#vis'));
    return document.querySelector('#vis svg').getBoundingClientRect().width
      + parseFloat(box.paddingLeft) + parseFloat(box.paddingRight);
  }
  async function draw(size, how) {
    if (shown) shown.finalize();
    shown = await vegaEmbed('#vis', sized(size, how), embedOpt);
    current = size;
    arrangement = how;
    if (overheads[how] === undefined) overheads[how] = drawnWidth() - size.width;
  }
  async function refit() {
    const room = document.body.clientWidth;
    const widest = (how) => fit.sizes.filter(size => size.width + overheads[how] <= room).pop();
    const ways = ['side', ...(fit.narrow && spec.hconcat ? ['narrow'] : []), ...(spec.hconcat ? ['stacked'] : [])];
    let how = 'side', size = null;
    for (const way of ways) {  // the first arrangement where some size fits, at its widest size
      if (overheads[way] === undefined) await draw(fit.sizes[0], way);
      how = way;
      size = widest(way);
      if (size) break;
    }
    size = size || fit.sizes[0];
    if (size !== current || how !== arrangement) await draw(size, how);
    document.body.dataset.plotWidth = String(current.width);
    document.body.dataset.arrangement = arrangement;
  }
  vegaEmbed('#vis', spec, embedOpt).then(async (result) => {
    shown = result;
    if (!fit || !fit.sizes.length) return;
    const view = find(spec, fit.view) || spec;
    overheads.side = drawnWidth() - view.width;
    current = fit.sizes.find(size => size.width === view.width && size.height === view.height) || null;
    await refit();
    let pending = null;
    window.addEventListener('resize', () => {
      clearTimeout(pending);
      pending = setTimeout(() => { queue = queue.then(refit).catch(console.error); }, 150);
    });
  }).catch(console.error);"""
_PLAIN_SCRIPT = "  vegaEmbed('#vis', spec, embedOpt).catch(console.error);"


class _ScriptSafeEncoder(json.JSONEncoder):
    """JSON that can sit inside an HTML <script>: `<` is escaped, so a name or file name holding `</script>`
    cannot end the script early."""

    def encode(self, o: Any) -> str:
        return super().encode(o).replace("<", "\\u003c")


def spec_text(spec: Spec) -> str:
    """The Vega-Lite spec as stable text: sorted keys, shortest round-trip floats, nothing time-dependent.

    Without `usermeta.fit`: the label layouts for other page sizes are the HTML page's business, and would double
    the file people embed or attach to a review (it shows the chart at its default size)."""
    return json.dumps(_without_fit(spec), sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _without_fit(spec: Spec) -> Spec:
    """The spec less `usermeta.fit` (the page's label layouts per size): what the files other than the page need."""
    meta = spec.get("usermeta")
    if isinstance(meta, dict) and "fit" in meta:
        return {**spec, "usermeta": {k: v for k, v in meta.items() if k != "fit"}}
    return spec


def static_variant(spec: Spec) -> Spec:
    """The spec an image is drawn from: without `usermeta.fit` (Vega draws nothing from usermeta: the same image, a
    third less to hand over) and with `usermeta.static` merged in: what differs where nobody can hover or zoom (the
    roofline's subtitle names its unnumbered points instead of "hover or zoom")."""
    spec = _without_fit(spec)
    meta = spec.get("usermeta")
    static = meta.get("static") if isinstance(meta, dict) else None
    if not isinstance(static, dict):
        return spec
    return _merged({**spec, "usermeta": {k: v for k, v in meta.items() if k != "static"}}, static)


def _merged(into: Spec, patch: Spec) -> Spec:
    """`into` with `patch` merged in, objects key by key (a copy: `into` is not changed)."""
    out = dict(into)
    for key, value in patch.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def html_page(spec: Spec, bundle: str | None = None) -> str:
    """The offline page: the Vega bundle inlined (render/chart/vega_bundle.py), the spec, a <title> from the spec's
    `usermeta.title` (escaped: names and file names are not markup), and with `usermeta.fit`, a chart that fills
    the window's width."""
    from .vega_bundle import javascript_bundle

    meta = spec.get("usermeta") or {}
    title = meta.get("title") if isinstance(meta, dict) else None
    return _PAGE.format(
        title=f"  <title>{html.escape(str(title))}</title>\n" if title else "",
        vegalite_version=VEGALITE_VERSION,
        bundle=bundle if bundle is not None else javascript_bundle(),
        spec=json.dumps(spec, cls=_ScriptSafeEncoder, sort_keys=True, allow_nan=False),
        embed_options=json.dumps(EMBED_OPTIONS),
        fit_script=_FIT_SCRIPT if isinstance(meta, dict) and meta.get("fit") else _PLAIN_SCRIPT,
    )


def _image(spec: Spec, fmt: str, svg: bytes | None = None) -> bytes:
    import vl_convert

    from .image_fonts import convert

    spec = static_variant(spec)
    if fmt == "png":
        # What vegalite_to_png does, in less than half the work: the spec's SVG (`svg`, when made already), with
        # the layers' clipping moved onto their marks (png_clips.py), rasterised.
        from .png_clips import lighter_clips

        text = lighter_clips((svg if svg is not None else _image(spec, "svg")).decode("utf-8"))
        return convert(vl_convert, spec, lambda: vl_convert.svg_to_png(text, scale=PNG_SCALE))
    return convert(vl_convert, spec,
                   lambda: vl_convert.vegalite_to_svg(spec, vl_version=VL_CONVERT_VERSION).encode("utf-8"))


def render(spec: Spec, fmt: str, *, svg: bytes | None = None, page_bundle: str | None = None) -> bytes:
    """One file's bytes: "vl.json", "html", "svg" or "png" (a PNG rasterised from `svg` when given: the spec's own
    SVG, already made; a page inlining `page_bundle` when given: the Vega bundle, already read)."""
    if fmt == "vl.json":
        return spec_text(spec).encode("utf-8")
    if fmt == "html":
        return html_page(spec, page_bundle).encode("utf-8")
    return _image(spec, fmt, svg if fmt == "png" else None)


def chart_payloads(spec: Spec, formats: Iterable[str], *, stem: str = "roofline",
                   page_bundle: str | None = None) -> dict[str, bytes]:
    """`{"<stem>.<format>": bytes}` for each of `formats` ("vl.json", "html", "svg", "png"; "json" is taken for
    "vl.json"), in the order asked: rendered, not written, so a failing export (vl-convert, say) writes nothing.
    With both images asked for, the PNG is rasterised from the SVG rather than drawn again from the spec (its
    clipping done per mark: render/chart/png_clips.py). `page_bundle`: the Vega bundle the page inlines, where the
    caller has read it already for another chart (reading and checking the cached 900 kB costs 2-3 ms a time)."""
    wanted: list[str] = []
    for fmt in formats:
        fmt = "vl.json" if fmt == "json" else fmt
        if fmt not in FORMATS:
            raise ValueError(f"unknown chart format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if fmt not in wanted:
            wanted.append(fmt)
    rendered: dict[str, bytes] = {}
    if "svg" in wanted and "png" in wanted:
        rendered["svg"] = render(spec, "svg")
        rendered["png"] = render(spec, "png", svg=rendered["svg"])
    return {f"{stem}.{fmt}": rendered[fmt] if fmt in rendered else render(spec, fmt, page_bundle=page_bundle)
            for fmt in wanted}


def write_chart(spec: Spec, outdir: Path, formats: Iterable[str] = DEFAULT_FORMATS, *,
                stem: str = "roofline") -> list[Path]:
    """Write `chart_payloads` into `outdir`, every format rendered before any file is written; the paths written,
    in the order asked."""
    payloads = chart_payloads(spec, formats, stem=stem)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    return [write_atomic(outdir / name, payload) for name, payload in payloads.items()]
