"""examples/github-actions.yml works: its ncu-roofline `run:` steps, run with bash against the fixtures.

The GPU job and the `pip install` / `ncu` commands cannot run here; every other `run:` step of the CPU job runs
as GitHub would run it (`bash --noprofile --norc -eo pipefail`), with the job's `env:` and the artifact paths
pointed at fixtures/compare/. PyYAML is not a dependency, so the few parts read here are parsed by indentation.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-actions.yml"
BASE = ROOT / "fixtures" / "compare" / "base.csv"
HEAD = ROOT / "fixtures" / "compare" / "head.csv"
NOT_HERE = re.compile(r"(^|[\s;&|(])(ncu|pip|python -m pip)\s")  # the profiler and installs: not in a test


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], start: int, parent_indent: int) -> tuple[list[str], int]:
    """Lines after `start` indented deeper than `parent_indent` (blank lines kept), and the index after them."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > parent_indent):
        end += 1
    return lines[start + 1:end], end


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].strip()


def job_section(text: str, job: str) -> list[str]:
    lines = text.splitlines()
    jobs = next(i for i, line in enumerate(lines) if line.rstrip() == "jobs:")
    for i in range(jobs + 1, len(lines)):
        if lines[i].rstrip() == f"  {job}:":
            return _block(lines, i, 2)[0]
    raise KeyError(job)


def job_env(section: list[str]) -> dict[str, str]:
    start = next(i for i, line in enumerate(section) if line.strip() == "env:" and _indent(line) == 4)
    body, _ = _block(section, start, 4)
    pairs = (line.strip().split(":", 1) for line in body if line.strip() and not line.strip().startswith("#"))
    return {key.strip(): _scalar(value) for key, value in pairs}


def job_steps(section: list[str]) -> list[dict[str, str]]:
    """Each step's top-level keys; a `run: |` block is returned dedented, as the shell would get it."""
    start = next(i for i, line in enumerate(section) if line.strip() == "steps:")
    body, _ = _block(section, start, _indent(section[start]))
    steps: list[dict[str, str]] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.lstrip().startswith("- "):
            steps.append({})
            key_indent = _indent(line) + 2
            line = " " * key_indent + line.lstrip()[2:]
        stripped = line.strip()
        if steps and stripped and not stripped.startswith("#") and _indent(line) == key_indent:
            key, _, value = stripped.partition(":")
            if value.strip() in ("|", "|-", ">"):
                block, end = _block(body, i, key_indent)
                steps[-1][key] = textwrap.dedent("\n".join(block)).strip("\n") + "\n"
                i = end
                continue
            steps[-1][key] = _scalar(value)
        i += 1
    return steps


@pytest.fixture(scope="module")
def workflow() -> str:
    return WORKFLOW.read_text()


def test_gpu_job_profiles_exports_and_uploads(workflow):
    steps = job_steps(job_section(workflow, "profile"))
    script = "\n".join(step.get("run", "") for step in steps)
    assert re.search(r"^ncu --set full .*-o ncu/run ", script, re.M)
    assert re.search(r"^ncu --import ncu/run.ncu-rep --csv --page raw .*> ncu/run.csv", script, re.M)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["name"] == "Upload the report"


def test_cpu_job_installs_downloads_and_keeps_the_chart(workflow):
    section = job_section(workflow, "roofline")
    steps = job_steps(section)
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("actions/download-artifact") for u in uses)  # this run's report
    assert any(u.startswith("dawidd6/action-download-artifact") for u in uses)  # the baseline, from main
    assert any("pip install" in step.get("run", "") and "ncu-roofline" in step["run"] for step in steps)
    last = steps[-1]
    assert last["uses"].startswith("actions/upload-artifact") and last["if"] == "always()"
    assert {"HEAD_REPORT", "BASE_REPORT"} <= job_env(section).keys()
    assert "${{" not in "".join(step.get("run", "") for step in steps)  # runnable in a plain shell


RUN_URL = "https://github.com/owner/repo/actions/runs/42"


def run_cpu_job(workflow: str, tmp_path: Path, *, base: Path, head: Path) -> tuple[list[tuple[str, int]], Path]:
    """Run the CPU job's runnable steps in `tmp_path`; return (step name, exit code) pairs and the job summary."""
    section = job_section(workflow, "roofline")
    summary = tmp_path / "step_summary.md"
    summary.touch()
    env = {**os.environ, **job_env(section), "BASE_REPORT": str(base), "HEAD_REPORT": str(head),
           "GITHUB_STEP_SUMMARY": str(summary), "RUN_URL": RUN_URL,  # as GitHub expands the job's env
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    codes = []
    for step in job_steps(section):
        script = step.get("run")
        if script is None or NOT_HERE.search(script):
            continue
        path = tmp_path / f"step{len(codes)}.sh"
        path.write_text(script)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        codes.append((step.get("name", ""), done.returncode))
        assert done.returncode in (0, 1), f"{step.get('name')}: {done.stderr}"
    return codes, summary


@pytest.mark.slow
def test_cpu_job_fails_on_a_gate_and_writes_the_summary(workflow, tmp_path):
    # head.csv is slower on one gemm_tile shape (+20 %): 'time_s>+5%' fails, so the job fails
    codes, summary = run_cpu_job(workflow, tmp_path, base=BASE, head=HEAD)
    assert codes == [("Analyse this run", 0), ("Compare with the baseline and gate", 1)]
    text = summary.read_text()
    assert text.startswith("## ncu-roofline\n")  # the analyze summary first
    assert "## ncu-roofline compare" in text and "❌" in text and "`time_s>+5%`" in text
    # the chart link works in a job summary: the run's page (its artifacts), never a relative local path
    assert f"Chart: [{RUN_URL}]({RUN_URL})" in text and "](roofline/" not in text and "](compare." not in text
    assert {"roofline.html", "compare.html", "compare.parquet", "compare.md"} <= {
        p.name for p in (tmp_path / "roofline").iterdir()}


@pytest.mark.slow
def test_cpu_job_passes_when_nothing_changed(workflow, tmp_path):
    codes, summary = run_cpu_job(workflow, tmp_path, base=HEAD, head=HEAD)
    assert [code for _, code in codes] == [0, 0]
    assert "✅ **All 3 gates passed**" in summary.read_text()


def test_cpu_job_without_a_baseline_passes(workflow, tmp_path):
    codes, summary = run_cpu_job(workflow, tmp_path, base=tmp_path / "baseline" / "run.ncu-rep", head=HEAD)
    assert [code for _, code in codes] == [0, 0]
    assert "No baseline report yet" in summary.read_text()


def test_workflow_is_valid_yaml_when_pyyaml_is_installed(workflow):
    yaml = pytest.importorskip("yaml")
    document = yaml.safe_load(workflow)
    parsed = job_steps(job_section(workflow, "roofline"))
    assert [step.get("run") for step in document["jobs"]["roofline"]["steps"]] == [step.get("run") for step in parsed]
