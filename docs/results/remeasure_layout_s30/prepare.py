"""Build the 1x1 conv2d's first-batch program (and one more) as shared libraries + a spec for measure_in_child."""
import json, math, os
import numpy as np
import tvm
from pruner_ms.bench.suite import load_suite, select_workloads
from pruner_ms.bench.workloads import workload_from_spec
from pruner_ms.hardware import host_cpu_spec
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.integration.resume import open_database

os.makedirs("docs/results/remeasure_layout_s30/out", exist_ok=True)  # built programs, not committed
wd = "/tmp/bench29/cold_share_s29/work/conv2d-1x256x56x56-f64-k1/pruner/2"
wl = [workload_from_spec(w) if isinstance(w, dict) else w for w in load_suite("cpu")["workloads"]]
wl = select_workloads(wl, names=["conv2d-1x256x56x56-f64-k1"])[0]
target = tvm.target.Target(host_cpu_spec().target())
want = {"first": 1.233063, "later": 0.953111}
libs = {}
for rec in open_database(wd, repair_tail=False).get_all_tuning_records():
    ms_ = record_seconds(rec) * 1e3
    for name, w in want.items():
        if math.isfinite(ms_) and abs(ms_ - w) < 0.00001 and name not in libs:
            sch = compiled_schedule(wl.func, rec.trace)
            path = f"docs/results/remeasure_layout_s30/out/{name}.so"
            tvm.compile(sch.mod, target=target).export_library(path)
            libs[name] = path
            print(name, ms_, sch.mod.script()[:0])
np.savez("docs/results/remeasure_layout_s30/out/inputs.npz", *wl.make_inputs(np.random.default_rng(0)))
json.dump({"libraries": libs, "inputs": "docs/results/remeasure_layout_s30/out/inputs.npz", "output_shape": list(wl.output_shape),
           "output_dtype": str(wl.output_dtype), "passes": 3, "number": 3, "min_repeat_ms": 100},
          open("docs/results/remeasure_layout_s30/out/spec.json", "w"))
