"""`ncu-roofline model ...`: parse, call the `modeling` façade (`workload`/`read_points`, then `model`), write its
bundle, print.

Every `model` command takes the same output options as `analyze`: a terminal table, `--json FILE|-`, `-o DIR`
(the model files render/outputs.py registers) and `--format svg,png`; `--gpu` is repeatable and `--ceilings FILE`
adds a GPU described by a user file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..render.outputs import always_written
from .common import PATH

model_app = typer.Typer(no_args_is_help=True, help="Analytic roofline points: FLOPs and minimum DRAM bytes of "
                                                   "a workload, placed on one or more GPUs' roofs.")

GPU_HELP = "A GPU of the built-in table (repeatable; see `ncu-roofline ceilings`)."
CEILINGS_HELP = "TOML file of roofs (as for analyze --ceilings): one more GPU to place the points on."


def _gpu_option() -> list[str]:
    return typer.Option([], "--gpu", help=GPU_HELP)


def _emit(work, gpus: list[str], ceilings: Optional[str], json_arg: Optional[str], out_arg: Optional[str],
          fmt: Optional[str], inputs: list[Path] = ()) -> None:
    """Place the points on every GPU asked for, write the JSON and `-o` files as one set, print the table."""
    from ..modeling import model
    from ..render.model.console import model_table
    from .common import checked_text, output_options, say_written, stdout, user_errors, write_run

    with user_errors():
        options = output_options("model", out_arg, fmt, json=json_arg)
        out, json_out, formats = options.out, options.json, options.formats
        result = model(work, gpus, checked_text(ceilings, "--ceilings"), inputs=inputs)
        written, to_stdout = write_run(list(inputs), out, lambda: result.bundle(formats=formats),
                                       [(json_out, result.json)], subject="model")
        sys.stdout.write(to_stdout)
        if str(json_out) != "-":
            stdout.print(model_table(result.points, width=stdout.width))
            say_written(written)


_JSON = typer.Option(None, "--json", click_type=PATH, help="Write the points as JSON here ('-' for stdout).")
_OUT = typer.Option(None, "-o", "--out", click_type=PATH, help=f"Write {always_written('model')} here.")
_FMT = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o).")
_CEIL = typer.Option(None, "--ceilings", click_type=PATH, help=CEILINGS_HELP)


@model_app.command()
def gemm(m: int = typer.Option(..., "--m"), n: int = typer.Option(..., "--n"), k: int = typer.Option(..., "--k"),
         dtype: str = typer.Option("fp32", "--dtype", help="fp64, fp32, fp16, bf16, fp8, int8, fp4."),
         batch: int = typer.Option(1, "--batch", help="Batched GEMM: this many independent products."),
         tf32: bool = typer.Option(False, "--tf32", help="fp32 inputs on the TF32 tensor roof."),
         gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
         out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """C[m,n] = A[m,k]·B[k,n]: 2·m·n·k FLOP over (m·k + k·n + m·n)·size bytes."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("gemm", m, n, k, dtype.lower(), batch=batch, tf32=tf32)
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def conv2d(batch: int = typer.Option(1, "--batch"), height: int = typer.Option(..., "--height"),
           width: int = typer.Option(..., "--width"), in_channels: int = typer.Option(..., "--in-channels"),
           out_channels: int = typer.Option(..., "--out-channels"),
           kernel_size: int = typer.Option(3, "--kernel-size"), stride: int = typer.Option(1, "--stride"),
           padding: Optional[int] = typer.Option(None, "--padding", help="Default: kernel-size // 2 ('same')."),
           dtype: str = typer.Option("fp32", "--dtype"),
           gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
           out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """Direct 2-D convolution (NHWC, groups 1, no bias): every input, weight and output element moved once."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("conv2d", batch, height, width, in_channels, out_channels, kernel_size, stride=stride,
                        padding=padding, dtype=dtype.lower())
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def elementwise(elements: int = typer.Option(..., "--elements"), inputs: int = typer.Option(1, "--inputs"),
                outputs: int = typer.Option(1, "--outputs"),
                flop_per_element: float = typer.Option(1.0, "--flop-per-element"),
                dtype: str = typer.Option("fp32", "--dtype"),
                gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
                out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """An element-wise map: elements·flop_per_element FLOP over elements·(inputs + outputs)·size bytes."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("elementwise", elements, inputs=inputs, outputs=outputs,
                        flop_per_element=flop_per_element, dtype=dtype.lower())
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def layernorm(rows: int = typer.Option(..., "--rows"), cols: int = typer.Option(..., "--cols"),
              dtype: str = typer.Option("fp32", "--dtype"),
              gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
              out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """LayerNorm over the last dimension: 8 FLOP per element, x and y moved once, gamma and beta read once."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("layernorm", rows, cols, dtype.lower())
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def softmax(rows: int = typer.Option(..., "--rows"), cols: int = typer.Option(..., "--cols"),
            dtype: str = typer.Option("fp32", "--dtype"),
            gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
            out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """Softmax over the last dimension: 5 FLOP per element, x and y moved once."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("softmax", rows, cols, dtype.lower())
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def llm(params: float = typer.Option(..., "--params", help="Parameter count, e.g. 70e9."),
        phase: str = typer.Option("decode", "--phase", help="decode (one token per sequence) or prefill."),
        batch: int = typer.Option(1, "--batch"),
        seq: int = typer.Option(1, "--seq", help="Decode: positions in the KV cache; prefill: prompt length."),
        dtype: str = typer.Option("fp16", "--dtype", help="Activation (compute) type."),
        weight_dtype: Optional[str] = typer.Option(None, "--weight-dtype", help="Weight-only quantisation, e.g. "
                                                                                "int4 for W4A16."),
        layers: Optional[int] = typer.Option(None, "--layers"),
        hidden: Optional[int] = typer.Option(None, "--hidden", help="Model width: adds the attention FLOP."),
        kv_heads: Optional[int] = typer.Option(None, "--kv-heads"),
        head_dim: Optional[int] = typer.Option(None, "--head-dim"),
        gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
        out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """A transformer forward step: 2 FLOP per parameter per token over the weights (+ the KV cache) once."""
    from ..modeling import workload
    from .common import user_errors

    with user_errors():
        work = workload("llm", params, phase=phase, batch=batch, seq=seq, dtype=dtype.lower(),
                        weight_dtype=weight_dtype.lower() if weight_dtype else None, layers=layers, hidden=hidden,
                        kv_heads=kv_heads, head_dim=head_dim)
    _emit(work, gpu, ceilings, json_out, out, fmt)


@model_app.command()
def points(file: Path = typer.Argument(..., click_type=PATH,
                                       help="CSV or TOML of name, flop, bytes[, kernel][, roof]."),
           roof: str = typer.Option("tensor", "--roof", help="Compute roof of points that name none: fp32, "
                                                             "tensor (dense FP16), tensor_fp8, ..."),
           gpu: List[str] = _gpu_option(), ceilings: Optional[str] = _CEIL, json_out: Optional[str] = _JSON,
           out: Optional[str] = _OUT, fmt: Optional[str] = _FMT) -> None:
    """FLOP and byte counts made elsewhere (thop, fvcore, PyTorch's FLOP counter, by hand)."""
    from ..modeling import read_points
    from .common import user_errors

    with user_errors():
        frame = read_points(file, default_roof=roof)
    _emit(frame, gpu, ceilings, json_out, out, fmt, inputs=[file])
