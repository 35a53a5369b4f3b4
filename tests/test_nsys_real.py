"""`--nsys` on real Nsight Systems timelines: ../shared/nsys-samples/llm-perf-opt (its SOURCES.tsv).

The pair: nsys 2025 kernel summaries of DeepSeek-OCR on an RTX 5090 (the whole run, five NVTX-gated stages, and an
earlier run), and ncu 2025.1.1 details exports `ncu-v2/kernel_00NN/ncu.details.csv` of the whole run's top-20
kernels, kernel_00NN being the NN-th row of the whole run's summary (largest Total Time first). ncu prints those
names without namespaces and casts (`void Kernel2<…>(Params)`), nsys with them (`void cutlass::Kernel2<…>(T1::Params)`).

Every expected number is read here from the files with the csv module: a kernel's time is its row's `Total Time
(ns)`; in any timeline of the app the profiled kernels are the rows whose `Name` is one of the whole run's top-20
names (nsys spells a kernel the same way in all its summaries), so the profiled share is the sum of those rows'
Total Time over the sum of every row's.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import ncu_roofline
from ncu_roofline.pipeline.timeline_names import normal_form

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT.parent / "shared" / "nsys-samples" / "llm-perf-opt"
GPU = "NVIDIA GeForce RTX 5090"  # SOURCES.tsv: the RTX 5090 (CC 12.0); the details pages do not name it
TIMELINES = ("dsocr-all-stage", "dsocr-per-stage-clip", "dsocr-per-stage-decode", "dsocr-per-stage-prefill",
             "dsocr-per-stage-projector", "dsocr-per-stage-sam", "examples-summary")

pytestmark = [pytest.mark.conformance,
              pytest.mark.skipif(not PAIR.is_dir(), reason="../shared/nsys-samples is not present")]


def _summary(stem: str) -> list[tuple[str, int, int]]:
    """(Name, Total Time ns, Instances) of each row of a cuda_gpu_kern_sum CSV, in file order."""
    with open(PAIR / f"{stem}_cuda_gpu_kern_sum.csv", newline="") as handle:
        return [(r["Name"], int(r["Total Time (ns)"]), int(r["Instances"])) for r in csv.DictReader(handle)]


def _profiled() -> list[tuple[str, str, str]]:
    """(Kernel Name, Grid Size, Block Size) of kernel_0001 … kernel_0020, from their details pages."""
    out = []
    for folder in sorted((PAIR / "ncu-v2").iterdir()):
        with open(folder / "ncu.details.csv", newline="") as handle:
            row = next(csv.DictReader(handle))
        out.append((row["Kernel Name"], row["Grid Size"], row["Block Size"]))
    return out


@pytest.fixture(scope="module")
def reports() -> list[str]:
    return [str(folder / "ncu.details.csv") for folder in sorted((PAIR / "ncu-v2").iterdir())]


@pytest.fixture(scope="module")
def whole_run(reports):
    return ncu_roofline.analyze(reports, gpu=GPU, nsys=PAIR / "dsocr-all-stage_cuda_gpu_kern_sum.csv")


def _group(result, name: str, grid: str):
    k = result.kernels
    hit = k[(k["kernel_name"] == name) & (k["grid"].astype(str).str.replace(" ", "") == grid.replace(" ", ""))]
    assert len(hit) == 1, (name, grid)
    return hit.iloc[0]


def test_every_profiled_kernel_of_the_pair_finds_its_own_timeline_row(whole_run):
    """kernel_00NN is row NN: its app time and launches are that row's, matched by the normal form (ncu and nsys
    spell all 20 differently, so none is exact), and the largest kernel (row 1, 24.9 % of the run) is profiled."""
    rows = _summary("dsocr-all-stage")
    total_ns = sum(ns for _, ns, _ in rows)
    for (name, grid, _), (nsys_name, ns, instances) in zip(_profiled(), rows[:20]):
        group = _group(whole_run, name, grid)
        assert group["app_match"] == "normalised" and name != nsys_name
        assert group["app_launches"] == instances
        assert group["app_time_s"] == pytest.approx(ns * 1e-9, rel=1e-12)
        assert group["app_time_share"] == pytest.approx(ns / total_ns, rel=1e-12)
        assert group["app_headroom_s"] == pytest.approx((1 - group["roofline_fraction"]) * ns * 1e-9, rel=1e-12)
    assert whole_run.app.unprofiled["name"].isin([n for n, _, _ in rows[:20]]).sum() == 0
    assert len(whole_run.app.unprofiled) == len(rows) - 20


@pytest.mark.parametrize("stem", TIMELINES)
def test_the_profiled_share_of_every_real_timeline_is_the_hand_sum(reports, stem):
    """Per timeline: the share of the rows whose name is one of the whole run's top 20, within 0.1 % (it is exact
    here); none of those rows is listed as not profiled; every group nsys saw has app time."""
    top = {name for name, _, _ in _summary("dsocr-all-stage")[:20]}
    rows = _summary(stem)
    expected = sum(ns for name, ns, _ in rows if name in top) / sum(ns for _, ns, _ in rows)
    result = ncu_roofline.analyze(reports, gpu=GPU, nsys=PAIR / f"{stem}_cuda_gpu_kern_sum.csv")
    assert result.app.profiled_share == pytest.approx(expected, rel=1e-3)
    assert not result.app.unprofiled["name"].isin(top).any()
    assert set(result.app.unprofiled["name"]) == {name for name, _, _ in rows if name not in top}
    seen = {normal_form(name) for name, _, _ in rows if name in top}
    weighted = result.kernels[result.kernels["app_time_s"].notna()]
    assert {normal_form(n) for n in weighted["kernel_name"]} == seen
    assert set(result.kernels["app_match"]) <= {"normalised", "other_template", "absent"}


def test_the_projector_stage_is_five_percent_not_all_of_it(reports):
    """The projector stage ran two kernels: Kernel2<…32x32_64x1…> 33 696 ns (never profiled) and the bf16 copy
    kernel 1 792 ns (kernel_0008): 1792 / 35488 = 5.05 %. The profiled Kernel2 instances share only the base name
    `Kernel2` with it: never credited with its time."""
    result = ncu_roofline.analyze(reports, gpu=GPU, nsys=PAIR / "dsocr-per-stage-projector_cuda_gpu_kern_sum.csv")
    assert result.app.profiled_share == pytest.approx(1792 / (33696 + 1792), rel=1e-12)
    kernel2 = result.kernels[result.kernels["kernel_name"].str.startswith("void Kernel2<")]
    assert len(kernel2) == 3 and set(kernel2["app_match"]) == {"other_template"}
    assert kernel2["app_time_s"].isna().all()
    assert result.app.unprofiled["name"].str.contains("32x32_64x1").tolist() == [True]
    note = next(n for n in result.notes if "share only their base name" in n)
    assert "32x32_64x1" in note


def test_the_markdown_says_how_names_matched_citing_the_tables_ranks(whole_run):
    """All 20 groups matched by the normal form: the Markdown names them by the ranks of its own table."""
    markdown = whole_run.markdown(top=20)
    ranks = ", ".join(f"#{r}" for r in range(1, 11))
    assert f"Timeline names matched other than exactly: normalised {ranks} and 10 more" in markdown
    unprofiled = markdown.split("Not profiled", 1)[1].split("\n\n", 1)[0]
    largest = _summary("dsocr-all-stage")[0][0]  # the gemvx kernel, 24.9 % of the run, profiled as kernel_0001
    assert "(int)7" in largest and "(int)7" not in unprofiled and "93 kernels" in unprofiled


SQLITE = ROOT.parent / "shared" / "nsys-samples"


@pytest.mark.parametrize("relative", ["cutlass-benchmark/report1.sqlite", "kmeans/report2.sqlite"])
def test_real_sqlite_exports_are_summed_as_their_own_group_by(relative):
    """nsys 2023.2 (A40, one 2 kB CUTLASS name) and an old schema without mangledName (RTX 3080, OpenACC): per
    demangled name and shape, the launches and summed `end - start` that sqlite3 gives on the file itself."""
    import sqlite3

    from ncu_roofline.readers.nsys import read_timeline

    path = SQLITE / relative
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        expected = {(name, f"({gx}, {gy}, {gz})"): (n, ns) for name, gx, gy, gz, n, ns in db.execute(
            "SELECT s.value, gridX, gridY, gridZ, count(*), sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL "
            "AS k JOIN StringIds AS s ON s.id = k.demangledName GROUP BY s.value, gridX, gridY, gridZ")}
    timeline = read_timeline(path)
    got = {}
    for row in timeline.kernels.itertuples(index=False):
        n, t = got.get((row.name, row.grid), (0, 0.0))
        got[(row.name, row.grid)] = (n + row.instances, t + row.time_s)
    assert set(got) == set(expected) and timeline.notes == []
    for key, (n, ns) in expected.items():
        assert got[key][0] == n and got[key][1] == pytest.approx(ns * 1e-9, rel=1e-12)


@pytest.mark.parametrize("relative", ["cardiac/report1.sqlite", "kmeans/report1.sqlite"])
def test_real_sqlite_exports_without_kernels_are_refused_in_one_line(relative):
    from ncu_roofline.core.errors import InputError
    from ncu_roofline.readers.nsys import read_timeline

    with pytest.raises(InputError, match="no CUPTI_ACTIVITY_KIND_KERNEL table"):
        read_timeline(SQLITE / relative)
