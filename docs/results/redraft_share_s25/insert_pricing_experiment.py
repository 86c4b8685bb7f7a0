"""Rescore recorded programs with the experimental insert pricing (``insert_pricing_experiment.patch``:
a vector access that does not span the vectorized loop costs one scalar load, a contiguous vector of
a lane count that is not a power of two costs a load per power-of-two piece and a lane insert per
extra piece, a ``share`` of the inserts on the FMA pipes, the rest on their own port), through
``scripts/analyzer_on_records.py``. The patch applies to ``pruner_ms/analysis/cpu_model.py`` of commit
305f95c; this script applies it to a copy in a temporary folder, leaving the package as it is.

Usage: PYTHONPATH=. python insert_pricing_experiment.py on|off SHARE WORK_DIR... [--pool] [--top K]
"""
import importlib.util
import os
import runpy
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as tmp:  # the patched copy is only read while it is loaded
    model = os.path.join(tmp, "exp_model.py")
    shutil.copy("pruner_ms/analysis/cpu_model.py", model)
    subprocess.run(["patch", "-s", model, os.path.join(here, "insert_pricing_experiment.patch")], check=True)
    spec = importlib.util.spec_from_file_location("exp_model", model)
    exp_model = importlib.util.module_from_spec(spec)
    sys.modules["exp_model"] = exp_model  # its dataclasses look their module up
    spec.loader.exec_module(exp_model)

import pruner_ms.analysis.analyzer as analyzer  # noqa: E402

analyzer.estimate_nest = exp_model.estimate_nest
exp_model.EXP["on"] = sys.argv[1] != "off"
exp_model.EXP["share"] = float(sys.argv[2])
sys.argv = ["analyzer_on_records.py"] + sys.argv[3:]
runpy.run_path("scripts/analyzer_on_records.py", run_name="__main__")
