"""The analyzer's symbols per leaf nest for the best recorded program of each run given (compute,
per-level miss time, lanes, accumulator chains): why it prices one program above another.

Usage: PYTHONPATH=. python explain_best.py RUN (WORK_DIR/<workload>/<strategy>/<seed> or best_records/NAME) ... [--ir]
"""
import sys
import tvm
from tvm.s_tir import Schedule
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records
an = analyzer_for_target(tvm.target.Target({"kind": "llvm", "num-cores": 2}))
for run in [a for a in sys.argv[1:] if not a.startswith("--")]:
    rec = best_records(run)[0]
    sch = Schedule(rec.workload.mod)
    rec.trace.apply_to_schedule(sch, remove_postproc=False)
    est = an.analyze(sch.mod)
    print("==", run[-30:], record_seconds(rec) * 1e3)
    for ne in est.nests:
        s = ne.symbols
        print(ne.name, {k: (round(v * 1e3, 3) if k.endswith("_s") else (round(v, 3) if isinstance(v, float) else v)) for k, v in s.items()})
    print(sch.mod.script()[-2500:] if "--ir" in sys.argv else "")
