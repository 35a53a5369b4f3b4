"""`ncu-roofline project PROFILE --to GPU [--to GPU ...]`: analyse as `analyze` does, place the measured work on
each target's roofs (`Analysis.project`), write the JSON, Markdown and `-o` files as one set, print the table."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..render.outputs import always_written
from .common import CEILINGS, CLOCK, GPU, GROUP_BY, PATH, SUMMARY_MD


def project(
    inputs: List[str] = typer.Argument(..., click_type=PATH,
                                     help="ncu --csv exports, .ncu-rep reports, folders or globs."),
    to: List[str] = typer.Option(..., "--to", click_type=PATH, help="A target GPU of the built-in table (see `ncu-roofline "
                                                   "ceilings`) or a ceilings FILE.toml; repeatable."),
    gpu: Optional[str] = GPU,
    ceilings: Optional[str] = CEILINGS,
    clock: str = CLOCK,
    group_by: str = GROUP_BY,
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernel groups whose name matches this regex."),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Leave out kernel groups matching this regex."),
    nsys: Optional[str] = typer.Option(None, "--nsys", click_type=PATH, help="Nsight Systems timeline of the run (as for analyze): "
                                                            "the run's totals weighted by the whole run's time."),
    nsys_device: Optional[int] = typer.Option(None, "--nsys-device", help="Only this GPU of a multi-GPU --nsys."),
    partial: bool = typer.Option(False, "--partial", help="Project what can be: kernels whose work has no roof "
                                                          "on a target stay listed as not projectable (else exit 2)."),
    rows: int = typer.Option(10, "--rows", min=1, help="Kernel groups listed in the terminal."),
    top: int = typer.Option(20, "--top", min=1, help="Kernel groups drawn in the chart."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", click_type=PATH,
                                          help=f"Write {always_written('projection')} here."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
    summary_md_arg: Optional[str] = SUMMARY_MD,
    json_arg: Optional[str] = typer.Option(None, "--json", click_type=PATH,
                                           help="Write the projection as JSON here ('-' for stdout)."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
) -> None:
    """What this run would take on other GPUs: the measured work on their roofs, as two stated models."""
    from .common import checked_text, grouping, output_options, say, say_written, stdout, user_errors, write_run

    with user_errors():
        options = output_options("projection", out_arg, fmt, summary_md=summary_md_arg, json=json_arg)
        out, summary_md, json_out, formats = options.out, options.summary_md, options.json, options.formats
        groups = grouping(group_by)
        targets = [checked_text(t, "--to") for t in to]
        ceilings, nsys = checked_text(ceilings, "--ceilings"), checked_text(nsys, "--nsys")
        _targets(targets)  # an unknown target fails before any input is read
        from .. import analyze as run_analysis
        from ..analysis import project as run_projection

        result = run_analysis(inputs, gpu=gpu, ceilings=ceilings, clock=clock, **groups, kernel=kernel,
                              exclude=exclude, nsys=nsys, nsys_device=nsys_device)
        projected = run_projection(result, targets)
        projection = projected.projection
        _refuse(projected, inputs, partial=partial)
        from ..render.projection.console import projection_table, run_lines, status_lines

        written, to_stdout = write_run(projected.input_paths, out, lambda: projected.bundle(formats=formats, top=top),
                                       [(summary_md, lambda: projected.markdown(top=rows)), (json_out, projected.json)],
                                       subject="projection")
        sys.stdout.write(to_stdout)
        if str(json_out) != "-":
            shown = min(rows, len(result.kernels))
            stdout.print(projection_table(projection.kernels, top=rows, width=stdout.width, wide=wide,
                                          title=f"measured on {projection.source_gpu}; top {shown} by "
                                                f"{'app_headroom_s' if result.app is not None else 'headroom'}"))
            for line in [*status_lines(projection.kernels, top=rows), *run_lines(projection.runs)]:
                say(line)
            say("A model, not a measurement: the assumptions are in every output's metadata and "
                "docs/projection.md.")
            say_written(written)


def _targets(names: list[str]):
    """Every --to checked before the profile is read: table rows by name, `.toml` files as ceilings files."""
    from ..core.errors import InputError
    from ..analysis import check_targets

    try:
        return check_targets(names)
    except InputError as error:  # the table's advice names --gpu; here the option is --to
        raise InputError(error.path, error.message.replace("pass --gpu", "pass --to")
                         .replace("--ceilings FILE.toml", "--to FILE.toml")) from None


def _refuse(projected, inputs: list[str], *, partial: bool) -> None:
    """Exit 2 with one line where a target can take nothing, or (without --partial) lacks a roof some work needs."""
    from ..core.errors import InputError

    source = inputs[0] if len(inputs) == 1 else None
    projected.refuse_unplaceable(source)
    if partial:
        return
    projection = projected.projection
    lacking = projection.kernels[projection.kernels["status"].str.contains("not projectable", regex=False)]
    if len(lacking):
        first = lacking.iloc[0]
        why = next(p for p in str(first["status"]).split("; ") if p.startswith("not projectable"))
        raise InputError(source, f"{why.removeprefix('not projectable: ')} for the work of "
                                 f"{len(set(lacking['rank']))} kernel group(s) (choose another --to, give one a "
                                 "ceilings FILE.toml with that roof, or --partial to list them as not projectable)")
