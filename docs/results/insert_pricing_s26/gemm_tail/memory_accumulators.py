#!/usr/bin/env python
"""Which recorded GEMM programs that the analyzer prices as register-resident micro-kernels keep
their accumulators in memory in the compiled code (a load and a store per FMA: stores per FMA >= 0.5
in the innermost loop with FMAs), against their decisions and against one candidate rule: a loop
inside the accumulator loop that moves the output and is unrolled by LLVM only (not by TVM's unroll
pragma). Compiles every program (about 0.1 s each); nothing runs.

    PYTHONPATH=. python docs/results/insert_pricing_s26/gemm_tail/memory_accumulators.py WORK_DIR...
"""
import math
import re
import sys

import numpy as np
import tvm

import _paths  # noqa: F401
import pruner_ms.analysis.cpu_model as cpu_model
from pruner_ms.analysis import analyzer_for_target, extract_nests
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, decisions, replayed
from test_analyzer import _innermost_fma_loop


def llvm_only_unrolled_output_loop(nest) -> bool:
    """Whether a loop inside the accumulator loop moves the output and is unrolled by LLVM alone."""
    loops, n = nest.loops, len(nest.loops)
    v = loops[-1].extent if loops[-1].kind == "vectorized" else 1
    unrolled = cpu_model._unrolled_loops(loops)
    by_llvm = cpu_model.LLVM_FULL_UNROLL_ITERS
    cpu_model.LLVM_FULL_UNROLL_ITERS = 0  # what TVM's pragma unrolls alone
    try:
        by_tvm = cpu_model._unrolled_loops(loops)
    finally:
        cpu_model.LLVM_FULL_UNROLL_ITERS = by_llvm
    r = cpu_model._accumulator_loop(loops, nest.reduction_loops, unrolled, v)
    out = [a for a in nest.accesses if a.is_write][0]
    return any(out.spans[:, j].any() and unrolled[j] and not by_tvm[j] for j in range(r + 1, n) if not (j == n - 1 and v > 1))


rows, analyzers = [], {}
for run in sys.argv[1:]:
    for rec in best_records(run):
        if not math.isfinite(record_seconds(rec)):
            continue
        analyzer = analyzers.setdefault(str(rec.target), analyzer_for_target(rec.target))
        sch = replayed(rec)
        est = analyzer.analyze(sch.mod)
        if not max(est.nests, key=lambda nest: nest.symbols["flops"]).symbols["register_resident"]:
            continue
        loop, _ = _innermost_fma_loop(tvm.compile(sch.mod, target=rec.target).mod.inspect_source("asm"))
        stores = len(re.findall(r"vmov\w+\s+%[xyz]mm\d+, -?\d*\(", loop)) / len(re.findall(r"vfmadd", loop))
        nest = max(extract_nests(sch.mod["main"]), key=lambda nest: nest.float_ops * math.prod(l.extent for l in nest.loops))
        d = decisions(rec)
        rows.append(dict(ms=record_seconds(rec) * 1e3, est=est.seconds * 1e3, memory=stores >= 0.5, d=d,
                         k1=d[2][1], between=d[0][2] * d[1][2], unroll=d[3], llvm_only=llvm_only_unrolled_output_loop(nest)))
memory = [r for r in rows if r["memory"]]
print(f"{len(rows)} programs priced register-resident; {len(memory)} keep their accumulators in memory")
print(f"measured median {np.median([r['ms'] for r in memory]):.2f} ms (analyzer {np.median([r['est'] for r in memory]):.2f}); "
      f"the others {np.median([r['ms'] for r in rows if not r['memory']]):.2f} ms "
      f"(analyzer {np.median([r['est'] for r in rows if not r['memory']]):.2f})")
for key in ("unroll", "k1", "between", "llvm_only"):
    print(key + ":", ", ".join(f"{v}: {sum(r['memory'] for r in rows if r[key] == v)}/{sum(1 for r in rows if r[key] == v)}"
                                for v in sorted({r[key] for r in rows})))
print("in memory, fastest first: measured ms, analyzer ms, decisions")
for r in sorted(memory, key=lambda r: r["ms"]):
    print(f"  {r['ms']:.2f} {r['est']:.2f} {r['d']}")
