#!/usr/bin/env python
"""scripts/analyzer_on_records.py with the CPU analyzer's first-level DTLB term changed, for the
ablation of ``DTLB_USABLE_FRACTION`` (pruner_ms.analysis.cpu_model):

    python rescore_dtlb.py FRACTION WORK_DIR... --out rows.json   # FRACTION: a number, or "off"

"off" gives every CPU spec a DTLB of 1e9 entries (no first-level DTLB lookups priced)."""
import dataclasses
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
from pruner_ms.analysis import cpu_model  # noqa: E402
from pruner_ms.hardware import cpu as cpu_hardware  # noqa: E402

fraction, sys.argv = sys.argv[1], [sys.argv[0]] + sys.argv[2:]
if fraction == "off":
    _host = cpu_hardware.host_cpu_spec

    def _without_dtlb(*args, **kwargs):
        return dataclasses.replace(_host(*args, **kwargs), dtlb_entries=10**9)

    cpu_hardware.host_cpu_spec = _without_dtlb
else:
    cpu_model.DTLB_USABLE_FRACTION = float(fraction)
runpy.run_path(os.path.join(os.getcwd(), "scripts", "analyzer_on_records.py"), run_name="__main__")
