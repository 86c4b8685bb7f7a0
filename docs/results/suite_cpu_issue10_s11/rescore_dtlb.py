#!/usr/bin/env python
"""scripts/analyzer_on_records.py with the CPU analyzer's first-level DTLB term changed, for the
ablation of ``DTLB_USABLE_FRACTION`` (pruner_ms.analysis.cpu_model):

    python rescore_dtlb.py FRACTION WORK_DIR... --out rows.json   # FRACTION: a number, or "off"

"off" gives the CPU spec the analyzer uses (the host's, or a family file's for a record whose target names
another ``mcpu``) a DTLB of 1e9 entries, so no first-level DTLB lookup is priced."""
import dataclasses
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
from pruner_ms.analysis import cpu_model  # noqa: E402
from pruner_ms.hardware import cpu as cpu_hardware  # noqa: E402

fraction, sys.argv = sys.argv[1], [sys.argv[0]] + sys.argv[2:]
if fraction == "off":

    def _without_dtlb(spec_source):
        return lambda *args, **kwargs: dataclasses.replace(spec_source(*args, **kwargs), dtlb_entries=10**9)

    # analyzer_for_target imports both from pruner_ms.hardware.cpu when it is called
    cpu_hardware.host_cpu_spec = _without_dtlb(cpu_hardware.host_cpu_spec)
    cpu_hardware.load_cpu_spec = _without_dtlb(cpu_hardware.load_cpu_spec)
else:
    cpu_model.DTLB_USABLE_FRACTION = float(fraction)
runpy.run_path(os.path.join(os.getcwd(), "scripts", "analyzer_on_records.py"), run_name="__main__")
