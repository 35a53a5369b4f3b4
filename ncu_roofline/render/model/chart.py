"""The model chart: analytic points on one or more GPUs' roofs, drawn by the chart kit's several-GPU roofline
(render/chart/gpu_chart.py), which `project`'s chart builds on too."""

from __future__ import annotations

from ..chart.gpu_chart import model_chart

__all__ = ["model_chart"]
