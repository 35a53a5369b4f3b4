"""A transformer LLM forward step, decode or prefill, counted the way the roofline literature does.

FLOP: 2 per parameter per token (each weight is one multiply-add per token; Kaplan et al. 2020, "Scaling Laws
for Neural Language Models", section 2.1: C_forward ≈ 2N), plus, when the attention shape is given, the attention
score and value products: per layer and per token, 2·hidden FLOP per attended position for QKᵀ and as many for
A·V (4·hidden per position). Decode attends to `seq` cached positions; causal prefill attends on average to
`seq`/2, so 2·hidden·seq per token.

Bytes (the minimum at DRAM): the weights, read once per step whatever the batch (params × weight-dtype size),
plus, with `--layers --kv-heads --head-dim`, the KV cache: 2 (K and V)·layers·kv_heads·head_dim·size per token.
Decode reads the cache of `seq` positions per sequence and writes the new token's entry; prefill writes the
`seq` entries of each sequence. Activations between layers are left out: they are O(batch·hidden) per layer, and
a fused implementation keeps them on chip (for a 70B decode step they are under 0.01 % of the weights).
Weight-only quantisation (`weight_dtype`, e.g. int4 for W4A16) changes the weight bytes only: the multiplies run
on the activation type's roof after dequantisation; group scales (one fp16 per 128 weights adds 1/64 byte per
weight) are left out.

Checks: 70B parameters, fp16, decode, batch 1: 140 GFLOP over 140 GB = 1 FLOP/byte; prefill of 2048 tokens:
2048 FLOP/byte.
"""

from __future__ import annotations

from ..core.errors import InputError
from .dtypes import MATRIX_ROOF, element_bytes, roof_for
from .workloads import Workload, _positive

PHASES = ("decode", "prefill")


def llm(params: float, *, phase: str = "decode", batch: int = 1, seq: int = 1, dtype: str = "fp16",
        weight_dtype: str | None = None, layers: int | None = None, hidden: int | None = None,
        kv_heads: int | None = None, head_dim: int | None = None, kv_dtype: str | None = None) -> Workload:
    """One forward step: `decode` makes one token per sequence with `seq` positions in the cache, `prefill` reads a
    `seq`-token prompt per sequence. `batch` sequences share one read of the weights."""
    if phase not in PHASES:
        raise InputError(None, f"--phase must be 'decode' or 'prefill', not {phase!r}")
    _positive(params=params, batch=batch, seq=seq)
    shape = {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim}
    given = [k for k, v in shape.items() if v is not None]
    if given and len(given) != len(shape):
        missing = ", ".join(f"--{k.replace('_', '-')}" for k in shape if k not in given)
        raise InputError(None, f"the KV cache needs --layers, --kv-heads and --head-dim together; missing {missing}")
    for name, value in {**shape, "hidden": hidden}.items():
        if value is not None:
            _positive(**{name: value})
    if hidden is not None and layers is None:
        raise InputError(None, "--hidden (attention FLOP) needs --layers")
    weight_dtype = weight_dtype or dtype
    roof = roof_for(dtype, MATRIX_ROOF, "llm")
    weight_bytes = params * element_bytes(weight_dtype)

    tokens = batch if phase == "decode" else batch * seq
    flop = 2.0 * params * tokens
    parts = {"bytes_weights": weight_bytes}
    if hidden is not None:
        attended = seq if phase == "decode" else seq / 2  # positions each new token attends to (causal prefill)
        parts["flop_attention"] = 4.0 * layers * hidden * attended * tokens
        flop += parts["flop_attention"]
    nbytes = weight_bytes
    if layers is not None:
        per_token = 2.0 * layers * kv_heads * head_dim * element_bytes(kv_dtype or dtype)
        if phase == "decode":
            parts["bytes_kv_read"] = per_token * seq * batch
            parts["bytes_kv_write"] = per_token * batch
        else:
            parts["bytes_kv_write"] = per_token * seq * batch
        nbytes += parts.get("bytes_kv_read", 0.0) + parts["bytes_kv_write"]
    quant = f" W{weight_dtype}" if weight_dtype != dtype else ""
    name = f"llm {params / 1e9:g}B {phase} b{batch} s{seq} {dtype}{quant}"
    return Workload(name, flop, nbytes, roof,
                    "2·params·tokens (+ 4·layers·hidden·attended·tokens) FLOP; params·weight_size "
                    "(+ 2·layers·kv_heads·head_dim·size per cached token read or written) bytes", parts)
