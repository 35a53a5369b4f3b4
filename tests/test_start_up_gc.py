"""`analyze` imports pandas and the pipeline with the cyclic collector paused and what they made frozen
(cli.common.imports_without_gc), checked by what `gc` says in a fresh process, not by time."""

from __future__ import annotations

import subprocess
import sys

from conftest import FIXTURES

FRESH = """
import gc, sys, weakref
from ncu_roofline.cli.common import imports_without_gc

before = gc.get_freeze_count()
with imports_without_gc():
    paused = not gc.isenabled()
    import pandas
frozen = gc.get_freeze_count() - before


class Node:
    pass


a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after the imports: the collector still frees it
alive = weakref.ref(a)
del a, b
gc.collect()
with imports_without_gc():  # pandas is loaded now: nothing is paused or frozen again
    paused_again = not gc.isenabled()
print(paused, gc.isenabled(), frozen, alive() is None, paused_again, gc.get_freeze_count() - before - frozen)
"""


def test_the_first_pandas_import_runs_without_the_collector_and_is_frozen():
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, check=True)
    paused, enabled, frozen, freed, paused_again, frozen_again = out.stdout.split()
    assert (paused, enabled, freed, paused_again, frozen_again) == ("True", "True", "True", "False", "0")
    assert int(frozen) > 10_000  # pandas' modules, classes and functions: far more than this module's few


def test_analyze_freezes_its_imports_and_leaves_the_collector_on():
    code = ("import gc, sys; from ncu_roofline.cli import run_command_line; "
            f"code = run_command_line(['analyze', {str(FIXTURES / 'example_h100_raw.csv')!r}, '--rows', '0']); "
            "print(code, gc.isenabled(), gc.get_freeze_count(), 'pandas' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    code, enabled, frozen, pandas_loaded = out.stderr.split()[-4:]
    assert (code, enabled, pandas_loaded) == ("0", "True", "True")
    assert int(frozen) > 10_000
