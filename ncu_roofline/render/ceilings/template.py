"""`ncu-roofline ceilings template NAME`: a `--ceilings` file to fill in for a GPU the built-in table lacks.

An unknown GPU never borrows another GPU's roofs; its user writes its own. The template names every roof in the
units datasheets use (TFLOP/s, GB/s) and, given a report or export of that GPU, prefills the roofs the input itself
holds: Nsight Compute's `*.peak_sustained` x the clock measured during each launch (the median over launches, at
the measured clock: what Nsight Compute draws), never the table's.
"""

from __future__ import annotations

import math

from ...roofs.user_file import UNIT_KEYS
from ..text.safe_text import for_terminal, for_toml_string

_HEADER = """\
# ncu-roofline ceilings for {name} -- pass with: ncu-roofline analyze run.ncu-rep --ceilings THIS_FILE.toml
# Units: TFLOP/s for compute, GB/s for bandwidth (1 GB/s = 1e9 B/s). Only the roofs given are used; a roof left
# commented out stays unknown ("—"), never guessed. See docs/ceilings.md.
#   - Give THEORETICAL peaks (datasheet or SMs x per-clock width x clock), all at ONE clock (base or boost; ncu
#     profiles at its locked base clock unless run with --clock-control none). Measured (ERT) figures are not roofs.
#   - tensor_tflops is DENSE (vendors print "with sparsity", 2x dense), FP16 inputs with FP32 accumulate.
#   - l2_gbps / l1_gbps as Nsight Compute derives them: L2 slices x 64 B/clk x clock; SMs x 128 B/clk x clock.
"""


def ceilings_template_text(name: str, peaks: dict[str, float] | None = None, origin: str | None = None) -> str:
    """TOML for `--ceilings`: every roof key, with the known ones filled in (base-unit `peaks` by column name)."""
    peaks = peaks or {}
    lines = [_HEADER.format(name=for_terminal(name))]  # a comment line: a line break in the name must not end it
    if origin:
        lines.append(f"# Prefilled from {for_terminal(origin)}: the input's own peaks x its measured clocks.\n")
    lines.append(f"name = {for_toml_string(name)}\n\n[peaks]\n")
    for key, (column, factor) in UNIT_KEYS.items():
        value = peaks.get(column)
        if value is not None and math.isfinite(value) and value > 0:
            lines.append(f"{key} = {float(f'{value / factor:.6g}')!r}\n")
        else:
            lines.append(f"# {key} = \n")
    return "".join(lines)

