"""The NERSC metric-split TensorFlow capture (12 parts of 559 launches each): aligned launch by launch on (kernel
name, k-th occurrence), exactly 559 launches, and summaries that agree with the Parquet tables."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app

CLIMATE = "DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp"
GPU = "Tesla V100-SXM2-16GB"
PART = "out.fp16.lag1.train.{}.txt"


def rows_of(path):
    """(lines before the header, header, rows) of a details page."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    return lines[:start], rows[0], rows[1:]


def write_rows(path, head, header, rows):
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text("\n".join(head) + "\n" + out.getvalue())


def test_summaries_agree_with_the_parquet_tables(samples, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["analyze", str(samples / CLIMATE), "--gpu", GPU, "-o", str(out),
                                      "--json", str(tmp_path / "s.json"), "--summary-md", str(tmp_path / "s.md"),
                                      "--rows", "5"])
    assert result.exit_code == 0, result.output
    launches = pd.read_parquet(out / "launches.parquet")
    kernels = pd.read_parquet(out / "kernels.parquet")
    summary = json.loads((tmp_path / "s.json").read_text())
    # 12 parts x 559 launches: 559 launch rows, and the kernel table adds up to the same 559
    assert len(launches) == 559 and int(kernels["launches"].sum()) == 559
    assert summary["totals"]["launches"] == 559 and summary["totals"]["kernels"] == len(kernels)
    # launch rows aligned by name hold no values: the totals are the kernels' (which hold those kernels' sums), and
    # over the other launches the launch rows add up to their kernels
    by_name = launches["status"].str.startswith("alignment: by name")
    assert summary["totals"]["time_s"] == pytest.approx(kernels["time_s"].sum(), rel=1e-12)
    assert summary["totals"]["headroom_s"] == pytest.approx(kernels["headroom_s"].sum(), rel=1e-12)
    aligned = ~kernels["status"].str.contains("alignment: by name")
    assert launches.loc[~by_name, "time_s"].sum() == pytest.approx(kernels.loc[aligned, "time_s"].sum(), rel=1e-12)
    assert launches.loc[by_name, ["time_s", "headroom_s"]].isna().all().all()
    assert summary["totals"]["kernels_unknown_headroom"] == 0
    markdown = (tmp_path / "s.md").read_text()
    assert f"**{len(kernels)} kernels**, 559 launches" in markdown
    assert "559 launches" in result.output
    # the run says how the parts were aligned: 25 launches sit at another ID in some part
    assert "25 of the 559 launches had a different launch ID in some part" in summary["notes"][0]
    assert "25 of the 559 launches had a different launch ID" in markdown
    import pyarrow.parquet as pq

    stored = json.loads(pq.read_metadata(out / "kernels.parquet").metadata[b"ncu_roofline.notes"])
    assert stored == summary["notes"]


def test_a_name_counted_differently_in_two_parts_keeps_its_own_counters_only(samples, tmp_path):
    source = samples / CLIMATE
    parts = {m: tmp_path / PART.format(m) for m in ("dram__bytes.sum", "sm__cycles_elapsed.avg.per_second",
                                                   "sm__cycles_elapsed.avg")}
    for metric, path in parts.items():
        path.write_text((source / PART.format(metric)).read_text())
    # in the cycles part, the launch at ID 3 is renamed to the kernel of ID 4: one name occurs once more there,
    # the other once less; every other name has the same count in all three parts
    head, header, rows = rows_of(parts["sm__cycles_elapsed.avg"])
    name = {r[0]: r[4] for r in rows}
    renamed, target = name["3"], name["4"]
    assert renamed != target
    rows = [r[:4] + [target] + r[5:] if r[0] == "3" else r for r in rows]
    write_rows(parts["sm__cycles_elapsed.avg"], head, header, rows)
    counts = pd.Series([r[4] for r in rows_of(parts["dram__bytes.sum"])[2]]).value_counts()
    assert counts[renamed] >= 2  # the renamed name still occurs in every part: still one capture
    uneven = int(counts[renamed] + counts[target])

    result = analyze(sorted(parts.values()), gpu=GPU)
    launches = result.launches
    assert len(launches) == 559
    lost = launches["status"].str.contains("not aligned with the other parts")
    # the launches of the two names in the first part (dram__bytes) keep its counters, and only those
    assert int(lost.sum()) == uneven
    assert set(launches.loc[lost, "kernel_name"]) == {renamed, target}
    assert launches.loc[lost, "bytes_dram"].notna().all() and launches.loc[lost, "time_s"].isna().all()
    by_name = launches["status"].str.startswith("alignment: by name")
    assert launches.loc[~lost & ~by_name, "time_s"].notna().all()
    # the run note counts them: those launches, and 2 x that many rows of the other two parts left out
    assert (f"{uneven} launches of 2 kernel name(s) occurring a different number of times in different parts "
            f"could not be aligned") in result.notes[0]
    assert f"and {2 * uneven} rows of the other parts are not used" in result.notes[0]
