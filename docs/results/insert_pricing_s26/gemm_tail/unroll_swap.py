#!/usr/bin/env python
"""The GEMM programs that keep their accumulators in memory, with the unroll decision swapped to
TVM's largest (``max_step`` 512) and to none: stores per FMA in the innermost loop with FMAs and the
measured time of each (this host, median of 5 repeats; output checked against numpy).

    PYTHONPATH=. python docs/results/insert_pricing_s26/gemm_tail/unroll_swap.py WORK_DIR...
"""
import math
import re
import sys

import numpy as np
import tvm

import _paths  # noqa: F401
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, decisions
from test_analyzer import _innermost_fma_loop

PROGRAMS = [  # decisions (tiles i, j, k, unroll) of memory_accumulators.txt, measured 6-12 ms
    [[1, 64, 2, 4], [8, 4, 1, 16], [64, 8], 0],
    [[4, 32, 1, 4], [16, 1, 1, 32], [256, 2], 0],
    [[16, 2, 2, 8], [16, 1, 2, 16], [128, 4], 0],
    [[8, 2, 8, 4], [1, 32, 1, 16], [256, 2], 1],
]


found = {}
for run in sys.argv[1:]:
    for rec in best_records(run):
        decided = decisions(rec)
        if math.isfinite(record_seconds(rec)) and decided in PROGRAMS and str(decided) not in found:
            found[str(decided)] = rec
print("| decisions | recorded ms | unroll decision | stores / FMA | measured ms |")
print("|---|---|---|---|---|")
for key, rec in found.items():
    unroll_inst = [inst for inst in rec.trace.decisions if len(inst.outputs) == 1 and not hasattr(rec.trace.decisions[inst], "__len__")][-1]
    for choice in (0, 3, int(rec.trace.decisions[unroll_inst])):
        sch = compiled_schedule(rec.workload.mod, rec.trace.with_decision(unroll_inst, choice, remove_postproc=False))
        ex = tvm.compile(sch.mod, target=rec.target)
        loop, _ = _innermost_fma_loop(ex.mod.inspect_source("asm"))
        stores = len(re.findall(r"vmov\w+\s+%[xyz]mm\d+, -?\d*\(", loop)) / len(re.findall(r"vfmadd", loop))
        a, b = (np.random.default_rng(0).random((512, 512), dtype=np.float32) for _ in range(2))
        args = [tvm.runtime.tensor(a), tvm.runtime.tensor(b), tvm.runtime.empty((512, 512), "float32")]
        ms = ex.mod.time_evaluator("main", tvm.cpu(), number=3, repeat=5, min_repeat_ms=50)(*args).median * 1e3
        np.testing.assert_allclose(args[2].numpy(), a @ b, rtol=1e-3, atol=1e-2)
        print(f"| {key} | {record_seconds(rec) * 1e3:.2f} | {choice} | {stores:.2f} | {ms:.2f} |", flush=True)
