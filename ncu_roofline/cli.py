"""The `ncu-roofline` command: parses arguments and calls the library; it computes nothing itself.

Exit codes: 0 success, 1 a gate the user asked for failed, 2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import typer

from .errors import InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Hierarchical roofline analysis of Nsight Compute (ncu) exports and reports.")
ceilings_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                           help="The built-in GPU ceiling table.")
app.add_typer(ceilings_app, name="ceilings")
from .cli_model import ceilings_compare, model_app  # noqa: E402  (the analytic commands live in their own module)

app.add_typer(model_app, name="model")
ceilings_app.command("compare")(ceilings_compare)

from .cli_io import _formats, chart_link, stderr, stdout, user_errors  # noqa: E402


@app.command()
def analyze(
    inputs: List[Path] = typer.Argument(..., help="ncu --csv exports, .ncu-rep reports, folders or globs."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write Parquet tables and the chart here."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table."),
    ceilings: Optional[Path] = typer.Option(None, "--ceilings", help="TOML file of roofs that override others."),
    clock: str = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'."),
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn and labelled in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png."),
    group_by: str = typer.Option("kernel", "--group-by", help="'kernel', 'nvtx' (kernel within NVTX range) or "
                                                              "'op' (PyTorch operator, from emit_nvtx ranges)."),
    nvtx_include: Optional[str] = typer.Option(None, "--nvtx-include", help="Only launches whose NVTX path "
                                                                           "matches this glob."),
    summary_md: Optional[Path] = typer.Option(None, "--summary-md", help="Write a Markdown summary here."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the JSON summary here ('-' for stdout)."),
    open_html: bool = typer.Option(False, "--open", help="Open roofline.html in a browser (needs -o)."),
    history: Optional[Path] = typer.Option(None, "--history", help="Append this run to the history dataset here."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="The run's id in --history (default: from CI's "
                                                                "environment, e.g. GITHUB_RUN_ID-ATTEMPT)."),
    label: List[str] = typer.Option([], "--label", help="Label the run in --history, repeatable: key=value."),
    replace: bool = typer.Option(False, "--replace", help="Replace the run if --run-id is already in --history."),
    points: Optional[Path] = typer.Option(None, "--points", help="CSV/TOML of analytic points (name, flop, bytes"
                                                                 "[, kernel regex]) drawn beside the kernels."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the outputs even when no kernel can be "
                                                                  "placed on a roofline (otherwise exit 2)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernel groups whose name matches this regex."),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Leave out kernel groups matching this regex."),
    sort: str = typer.Option("headroom", "--sort", help="Rank by 'headroom', 'time' or 'fraction' (lowest first)."),
    precision: Optional[str] = typer.Option(None, "--precision", help="Also one chart per precision, e.g. "
                                                                      "fp32,fp16,tensor,fp64 (needs -o)."),
) -> None:
    """Analyse ncu output: rank kernels by the time a perfect kernel would save."""
    from . import analyze as run_analysis
    from .render.console import print_summary

    with user_errors():
        if group_by not in {"kernel", "nvtx", "op"}:
            raise InputError(None, f"--group-by must be 'kernel', 'nvtx' or 'op', not {group_by!r}")
        if history is not None:  # a bad or taken run id, or a bad label, fails before any input is read
            from .history import prepare_run

            run_id, labels = prepare_run(history, run_id, label, replace=replace)
        with _progress(inputs) as progress:
            result = run_analysis(inputs, gpu=gpu, ceilings=ceilings, clock=clock, group_by_nvtx=group_by == "nvtx",
                                  group_by_op=group_by == "op",
                                  nvtx_include=nvtx_include, progress=progress, points=points,
                                  allow_empty=allow_empty, kernel=kernel, exclude=exclude, sort=sort)
        if result.model_points is not None:
            unmatched = result.model_points.loc[result.model_points["matched_kernels"] == 0, "name"].tolist()
            if unmatched:
                stderr.print(f"ncu-roofline: {len(unmatched)} point(s) match no kernel (drawn unjoined): "
                             + ", ".join(unmatched), markup=False, highlight=False, soft_wrap=True)
        written: list[Path] = []
        if out is not None:
            written = result.write(out, formats=_formats(fmt), top=top, precisions=_formats(precision))
        if history is not None:
            from .history import append_analysis

            append_analysis(history, result, run_id=run_id, labels=labels, replace=replace)
        _emit(summary_md, lambda: result.markdown(top=rows or 10, chart=chart_link(written, summary_md)),
              result.input_paths)
        _emit(json_out, lambda: result.json(top=rows or 10), result.input_paths)
        if rows and str(json_out) != "-":
            print_summary(result.kernels, top=rows, console=stdout,
                          title=f"{len(result.kernels)} kernels, {result.launch_count} launches — "
                                f"top {min(rows, len(result.kernels))} by {sort}")
            from .render.markdown import totals_sentence
            from .totals import run_totals

            stdout.print(totals_sentence(run_totals(result.kernels, result.launches)) + ".", highlight=False,
                         markup=False)
            for note in result.notes:
                stdout.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
            if result.model_points is not None:
                from .render.model_console import model_match_table

                stdout.print(model_match_table(result.kernels, top=rows))
            for path in written:
                stdout.print(f"wrote {path}", highlight=False)
            if history is not None:
                stdout.print(f"appended run {run_id} to {history}", highlight=False)
        if open_html:
            if out is None:
                raise InputError(None, "--open needs -o DIR (the chart is written there)")
            import webbrowser

            webbrowser.open((out / "roofline.html").resolve().as_uri())


@app.command()
def show(
    outdir: Path = typer.Argument(..., help="A folder `analyze -o` wrote."),
    kernel: str = typer.Argument(..., help="The kernel group: its rank, or a regex matching one name."),
) -> None:
    """One kernel group's drill-down: launches, derived numbers with their definitions, roofs and sources."""
    from .render.drilldown import print_drilldown

    with user_errors():
        print_drilldown(outdir, kernel, stdout)


@app.command()
def compare(
    base: Path = typer.Argument(..., help="The baseline run: a CSV export, a .ncu-rep report or a folder."),
    head: Path = typer.Argument(..., help="The run to judge, in any of the same forms."),
    fail_on: List[str] = typer.Option([], "--fail-on", help="Gate, repeatable: 'time_s>+5%', "
                                                             "'roofline_fraction<-0.05', 'total:time_s>+2%'."),
    min_time: float = typer.Option(0.0, "--min-time", min=0.0, help="Judge and gate only kernels taking at least "
                                                                    "this many seconds in either run."),
    strict: bool = typer.Option(False, "--strict", help="Refuse runs that are not like for like (exit 2)."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write compare.parquet, .json, .vl.json, .html."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table."),
    ceilings: Optional[Path] = typer.Option(None, "--ceilings", help="TOML file of roofs that override others."),
    clock: str = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'."),
    group_by: str = typer.Option("kernel", "--group-by", help="'kernel' or 'nvtx' (kernel within NVTX range)."),
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal and the Markdown."),
    summary_md: Optional[Path] = typer.Option(None, "--summary-md", help="Write a Markdown summary here."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the comparison JSON here ('-' for stdout)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
) -> None:
    """Compare two runs kernel by kernel; exit 1 when a --fail-on gate fails."""
    from . import analyze as run_analysis
    from .compare import compare as run_compare
    from .gates import parse_gates
    from .render.compare_console import print_comparison
    from .render.compare_json import comparison_json
    from .render.compare_markdown import comparison_markdown
    from .render.compare_outputs import write_comparison

    with user_errors():
        gates = parse_gates(fail_on)  # a malformed gate fails before any input is read
        if group_by not in {"kernel", "nvtx"}:
            raise InputError(None, f"--group-by must be 'kernel' or 'nvtx', not {group_by!r}")
        runs = [run_analysis([path], gpu=gpu, ceilings=ceilings, clock=clock, group_by_nvtx=group_by == "nvtx",
                             allow_empty=True)
                for path in (base, head)]
        result = run_compare(*runs, min_time_s=min_time, gates=gates, strict=strict)
        for warning in result.warnings:
            stderr.print(f"ncu-roofline: warning: {warning}", markup=False, highlight=False, soft_wrap=True)
        info = result.info()
        written = []
        if out is not None:
            written = write_comparison(out, kernels=result.kernels, totals=result.totals, info=info,
                                       base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                                       ctx=result.chart_context(top), inputs=result.input_paths,
                                       formats=["vl.json", "html", *_formats(fmt)])
        _emit(summary_md, lambda: comparison_markdown(result.kernels, result.totals, info, top=rows or 10),
              result.input_paths)
        _emit(json_out, lambda: comparison_json(result.kernels, result.totals, info), result.input_paths)
        if str(json_out) != "-":
            print_comparison(result.kernels, result.totals, info, top=rows, console=stdout)
            for path in written:
                stdout.print(f"wrote {path}", highlight=False)
    if not result.passed:
        raise typer.Exit(1)


@ceilings_app.callback()
def ceilings_list(ctx: typer.Context,
                  as_json: bool = typer.Option(False, "--json", help="JSON instead of a table.")) -> None:
    """List the GPUs of the built-in ceiling table."""
    if ctx.invoked_subcommand is not None:
        return
    import json

    from .gpus import list_gpus, load_gpu_table
    from .render.console import gpu_table

    with user_errors():
        rows = list_gpus(load_gpu_table())
        if as_json:
            sys.stdout.write(json.dumps(rows, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_table(rows))


@ceilings_app.command("show")
def ceilings_show(name: str = typer.Argument(..., help="GPU name or alias, as in `ncu-roofline ceilings`."),
                  as_json: bool = typer.Option(False, "--json", help="JSON instead of text.")) -> None:
    """One GPU's roofs, each with its source."""
    import json

    from .gpus import describe_gpu, match_gpu
    from .render.gpu_detail import gpu_detail_view

    with user_errors():
        described = describe_gpu(match_gpu(name))
        if as_json:
            sys.stdout.write(json.dumps(described, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_detail_view(described))


@ceilings_app.command("template")
def ceilings_template(name: str = typer.Argument(..., help="The GPU's name, as its reports spell it."),
                      source: Optional[Path] = typer.Option(None, "--from", exists=True, dir_okay=False,
                                                            help="Prefill from this report's or export's own "
                                                                 "peaks (.ncu-rep or ncu CSV).")) -> None:
    """Print a --ceilings TOML file for a GPU the table lacks, to fill in (prefilled from a report with --from)."""
    from .ceilings_template import ceilings_template_text, report_peaks

    with user_errors():
        peaks, origin = report_peaks(source) if source else ({}, None)
        sys.stdout.write(ceilings_template_text(name, peaks, origin))


@app.command()
def metrics(arch: Optional[float] = typer.Option(None, "--arch", help="Compute capability, e.g. 9.0."),
            complete: bool = typer.Option(False, "--all", help="Every metric any definition can use."),
            as_list: bool = typer.Option(False, "--list", help="Only the comma-separated metric list.")) -> None:
    """Print the ncu command lines that collect what the analysis needs."""
    from .catalogue import load_catalogue
    from .collect import collection_metrics, metrics_flag, sections_flag

    catalogue = load_catalogue()
    if as_list:
        sys.stdout.write(",".join(collection_metrics(catalogue, arch, complete=complete)) + "\n")
        return
    stdout.print("# CSV export (raw page, base units):", highlight=False)
    stdout.print(f"ncu {metrics_flag(catalogue, arch, complete=complete)} --csv --page raw --print-units base "
                 "-o /dev/null ./app > run.csv", highlight=False, soft_wrap=True)
    stdout.print("# Binary report:", highlight=False)
    stdout.print(f"ncu --set full {sections_flag()} -o run ./app", highlight=False, soft_wrap=True)


@contextmanager
def _progress(inputs: list[Path]) -> Iterator[object]:
    """A progress bar on stderr for inputs that take a while; none when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from .cli_progress import ReadProgress

    with ReadProgress(inputs, stderr) as progress:
        yield progress


def _emit(dest: Optional[Path], text: Callable[[], str], inputs: list[Path]) -> None:
    """A summary to `dest` ('-': stdout), never over an input; nothing when no destination was asked for."""
    if dest is None:
        return
    if str(dest) == "-":
        sys.stdout.write(text())
        return
    from .render.files import write_atomic

    write_atomic(dest, text().encode(), inputs=inputs)


from .cli_history import register as _register_history  # noqa: E402  (history, batch: thin like the rest)

_register_history(app, user_errors=user_errors, stdout=stdout, stderr=stderr, formats=_formats, emit=_emit)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
