#!/usr/bin/env python
"""How much CPU time building a run's measured programs takes, by the unroll step MetaSchedule sampled.

Every record of each work dir given is replayed (with its postprocessing) and compiled with
``tvm.compile`` for this machine's target; the process CPU time of each build is grouped by the
``meta_schedule.unroll_explicit`` decision (0, 16, 64, 512). Prints per work dir
``{unroll step: (programs, median s, total s)}`` and the total, and writes every row
(unroll step, build CPU s, measured s or null for a failed program) to ``<this script>.json``. CPU time, not wall time, so
another process on the machine changes it little.

    python docs/results/suite_cpu_issue10_s16/build_cost.py WORK_DIR [WORK_DIR ...]
"""
import collections
import json
import math
import statistics
import sys
import time

import tvm
from tvm.s_tir import Schedule

import pruner_ms
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.integration.resume import open_database


def unroll_step(trace):
    """The unroll step the trace's categorical decision picked (None if it has none)."""
    for inst in trace.insts:
        if inst.kind.name == "SampleCategorical":
            return [int(x) for x in inst.attrs[0]][int(trace.decisions[inst])]
    return None


def main(work_dirs):
    target = tvm.target.Target(pruner_ms.host_cpu_spec().target())
    out = {}
    for wd in work_dirs:
        rows = []
        for rec in open_database(wd, repair_tail=False).get_all_tuning_records():
            sch = Schedule(rec.workload.mod)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
            start = time.process_time()
            tvm.compile(sch.mod, target=target)
            cpu = time.process_time() - start
            measured = record_seconds(rec)
            rows.append((unroll_step(rec.trace), cpu, measured if math.isfinite(measured) else None))
        groups = collections.defaultdict(list)
        for step, cpu, _ in rows:
            groups[step].append(cpu)
        summary = {step: (len(v), round(statistics.median(v), 3), round(sum(v), 1))
                   for step, v in sorted(groups.items(), key=lambda kv: -1 if kv[0] is None else kv[0])}
        print(wd, summary, "total", round(sum(cpu for _, cpu, _ in rows), 1))
        out[wd] = rows
    json.dump(out, open(sys.argv[0] + ".json", "w"))


if __name__ == "__main__":
    main(sys.argv[1:])
