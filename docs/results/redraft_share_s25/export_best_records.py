"""Copy the 8 best records of each tuning run given into small JSON databases (NAME_workload.json,
NAME_tuning_record.json), so the programs behind a finding can be rebuilt without re-tuning.

Usage: PYTHONPATH=. python export_best_records.py OUT_DIR NAME WORK_DIR/<workload>/<strategy>/<seed> [NAME RUN ...]
"""
import sys

from tvm.s_tir import meta_schedule as ms

from pruner_ms.integration.measured_latency import record_seconds
from records import best_records

out = sys.argv[1]
for name, run in zip(sys.argv[2::2], sys.argv[3::2]):
    recs = best_records(run)[:8]
    dst = ms.database.JSONDatabase(f"{out}/{name}_workload.json", f"{out}/{name}_tuning_record.json")
    for r in recs:
        dst.commit_tuning_record(ms.database.TuningRecord(r.trace, dst.commit_workload(r.workload.mod), r.run_secs,
                                                          r.target, r.args_info))
    print(name, len(recs), [round(record_seconds(r) * 1e3, 3) for r in recs])
