"""The analyzer's symbols per leaf nest for the best recorded program of each run given (compute,
per-level miss time, lanes, accumulator chains), with the analyzer of the record's target: why it
prices one program above another.

Usage: PYTHONPATH=. python explain_best.py RUN (WORK_DIR/<workload>/<strategy>/<seed> or best_records/NAME) ... [--ir]
"""
import sys

from pruner_ms.analysis import analyzer_for_target
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, replayed

for run in [a for a in sys.argv[1:] if not a.startswith("--")]:
    rec = best_records(run)[0]
    sch = replayed(rec)
    print("==", run[-30:], record_seconds(rec) * 1e3)
    for nest in analyzer_for_target(rec.target).analyze(sch.mod).nests:
        print(nest.name, {k: (round(v * 1e3, 3) if k.endswith("_s") else (round(v, 3) if isinstance(v, float) else v))
                          for k, v in nest.symbols.items()})
    print(sch.mod.script()[-2500:] if "--ir" in sys.argv else "")
