"""The analyzer's top 25 of every record in WORK_DIRS (estimate, measured, measured / best, decisions),
then the 25 fastest measured with their rank by the analyzer:
`PYTHONPATH=. python docs/results/guarded_loops_s28/analyzer_top.py WORK_DIRS`."""
import sys, math
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.integration.resume import open_database
rows=[]; an=None
for wd in sys.argv[1:]:
    db=open_database(wd, repair_tail=False)
    for rec in db.get_all_tuning_records():
        s=record_seconds(rec)
        if not math.isfinite(s): continue
        an = an or analyzer_for_target(rec.target)
        sch=compiled_schedule(rec.workload.mod, rec.trace)
        est=an.estimate_seconds(sch.mod)
        dec=[str(v) for v in rec.trace.decisions.values()]
        rows.append((s, est, wd.split('/')[-2]+wd.split('/')[-1], " ".join(dec)))
rows.sort(key=lambda r: r[1])
best=min(r[0] for r in rows)
print("analyzer's top 25: est ms, measured ms, measured/best")
for r in rows[:25]: print(f"{r[1]*1e3:7.3f} {r[0]*1e3:7.3f} {r[0]/best:5.2f} {r[2]:9s} {r[3]}")
rows.sort(key=lambda r: r[0])
print("measured top 25: rank by analyzer")
est_sorted=sorted(r[1] for r in rows)
for r in rows[:25]: print(f"{r[1]*1e3:7.3f} {r[0]*1e3:7.3f} rank {est_sorted.index(r[1])} {r[2]:9s} {r[3]}")
