"""Test helper: the section listing of a report, straight from NVIDIA's wheel (what the charts of each section read).

Only tests need it (to check our definitions against Nsight Compute's own sections), so it lives here, not in the
reader.
"""

from __future__ import annotations

from pathlib import Path

from ncu_roofline.core.errors import InputError
from ncu_roofline.readers.ncu_rep import (MISSING_WHEEL, _import_ncu_report, _load, _loadable, _one_line,
                                          _quiet_native_stderr, scan_report)


def report_sections(path: Path) -> list[dict[str, list[str]]]:
    """For each launch (index = `launch_id`), the section identifiers in the report and, per section, the names
    its `body_metrics()` lists (in order, without repeats): exactly the inputs of that section's charts."""
    path = Path(path)
    layout = scan_report(path)
    try:
        module = _import_ncu_report()
    except ImportError:
        raise InputError(path, MISSING_WHEEL) from None
    with _loadable(path, layout.compressed) as load_path, _quiet_native_stderr():
        _ctx, actions = _load(module, path, load_path)
        try:
            out = []
            for action in actions:
                sections: dict[str, list[str]] = {}
                for section in action.sections():
                    names = sections.setdefault(section.identifier(), [])
                    for metric in section.body_metrics():
                        if metric is not None and metric.name() not in names:
                            names.append(metric.name())
                out.append(sections)
            return out
        except Exception as exc:
            raise InputError(path, f"corrupt Nsight Compute report: {_one_line(exc)}") from None


def section_body_metrics(path: Path, launch_id: int = 0) -> dict[str, list[str]]:
    """Section identifier -> its `body_metrics()` names, for one launch of the report (default: the first)."""
    sections = report_sections(path)
    if not 0 <= launch_id < len(sections):
        raise InputError(path, f"no launch {launch_id} in the report ({len(sections)} launches)")
    return sections[launch_id]
