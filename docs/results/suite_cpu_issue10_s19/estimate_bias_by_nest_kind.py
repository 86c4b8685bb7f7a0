#!/usr/bin/env python
"""How far the CPU analyzer's estimate is from the recorded latency, by the kind of a program's
costliest nest: ``vec``/``scalar`` (its vector lanes above 1 or not) and ``res`` (a register-resident
reduction micro-kernel), ``chain`` (a reduction whose accumulator is priced as a dependent chain) or
``ew`` (no reduction). Per workload and kind: programs, median estimate / measured, and the best
measured program of that kind against the workload's best. Run from the repository root:

    python docs/results/suite_cpu_issue10_s19/estimate_bias_by_nest_kind.py /tmp/bench18/suite_cpu_issue10_s18/work/*/*/*
"""
import collections
import math
import os
import statistics
import sys

sys.path.insert(0, os.getcwd())


def main() -> None:
    from tvm.s_tir import Schedule

    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.integration.measured_latency import record_seconds
    from pruner_ms.integration.resume import open_database

    analyzer = None
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for wd in sys.argv[1:]:
        workload = wd.rstrip("/").split("/")[-3]  # .../<workload>/<strategy>/<seed>
        for rec in open_database(wd, repair_tail=False).get_all_tuning_records():
            seconds = record_seconds(rec)
            if not math.isfinite(seconds):
                continue
            sch = Schedule(rec.workload.mod)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
            analyzer = analyzer or analyzer_for_target(rec.target)
            est = analyzer.analyze(sch.mod)
            sy = max(est.nests, key=lambda n: n.seconds).symbols
            kind = ("vec" if sy["vector_lanes"] > 1 else "scalar") + {True: "-res", False: "-chain", None: "-ew"}[sy["register_resident"]]
            rows[workload][kind].append((est.seconds, seconds))
    for workload, kinds in sorted(rows.items()):
        best = min(m for v in kinds.values() for _, m in v)
        cells = [f"{k}: n={len(v)} est/meas {statistics.median(e / m for e, m in v):.2f} best {min(m for _, m in v) / best:.2f}"
                 for k, v in sorted(kinds.items())]
        print(workload, " | ".join(cells))


if __name__ == "__main__":
    main()
