"""The chart kit every roofline chart builds on: Vega-Lite specs, layout and label placement, memory panel, tooltips,
and the files (Vega bundle, HTML/SVG/PNG) a spec becomes."""
