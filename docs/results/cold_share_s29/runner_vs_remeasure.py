"""One recorded program timed the ways a benchmark times it: by MetaSchedule's LocalRunner (a fresh
worker process, randomly filled arguments: the tuning-time latency) several times, and in this process
with ``time_evaluator`` as ``pruner_ms.bench.remeasure`` does (the workload's inputs), with the
arguments allocated at several different addresses (a few MiB of other allocations before them).

    PYTHONPATH=. python docs/results/cold_share_s29/runner_vs_remeasure.py WORKLOAD WORK_DIR MS [MS ...]

WORKLOAD is a CPU suite workload name, WORK_DIR a run's work dir, MS the tuning-time latencies (ms, to
0.001) of the records to time.
"""
import math
import statistics
import sys

import tvm
from tvm.s_tir import meta_schedule as ms

from pruner_ms.bench.remeasure import fresh_arguments
from pruner_ms.bench.suite import load_suite, select_workloads
from pruner_ms.bench.workloads import workload_from_spec
from pruner_ms.hardware import host_cpu_spec
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.integration.resume import open_database


def main(name, wd, *wanted):
    wl = [w if not isinstance(w, dict) else workload_from_spec(w) for w in load_suite("cpu")["workloads"]]
    wl = select_workloads(wl, names=[name])[0]
    target = tvm.target.Target(host_cpu_spec().target())
    want = [float(x) for x in wanted]
    recs = [r for r in open_database(wd, repair_tail=False).get_all_tuning_records()
            if math.isfinite(record_seconds(r)) and any(abs(record_seconds(r) * 1e3 - w) < 0.0005 for w in want)]
    builder, runner = ms.builder.LocalBuilder(timeout_sec=300), ms.runner.LocalRunner()
    for rec in recs:
        sch = compiled_schedule(wl.func, rec.trace)
        built = builder.build([ms.builder.BuilderInput(sch.mod, target)])[0]
        if built.error_msg:
            raise RuntimeError(f"build failed: {built.error_msg}")
        arg_info = ms.arg_info.ArgInfo.from_prim_func(sch.mod["main"])
        runs = []
        for _ in range(5):
            res = runner.run([ms.runner.RunnerInput(built.artifact_path, "cpu", arg_info)])[0].result()
            if res.error_msg:
                raise RuntimeError(f"run failed: {res.error_msg}")
            runs.append(statistics.mean(float(x) for x in res.run_secs) * 1e3)
        ex = tvm.compile(sch.mod, target=target)
        ev = ex.mod.time_evaluator("main", tvm.cpu(), number=3, repeat=1, min_repeat_ms=100)
        here = {}
        for shift_mib in (0, 1, 3, 7):
            ballast = tvm.runtime.empty((shift_mib * 262144 + 16,), "float32")  # moves the next allocations
            args = fresh_arguments(wl)
            here[shift_mib] = [ev(*args).mean * 1e3 for _ in range(5)]
            del ballast
        print(f"record {record_seconds(rec) * 1e3:.3f} ms | LocalRunner x5: " + " ".join(f"{x:.3f}" for x in runs)
              + " | in process, args after N MiB: "
              + "; ".join(f"{k}: " + " ".join(f"{x:.3f}" for x in v) for k, v in here.items()), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
