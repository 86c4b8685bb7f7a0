#!/usr/bin/env python
"""How full the fullest L1 set gets within one step of a GEMM program's outermost reduction loop,
against how far the program's measured latency is from the analyzer's estimate. Nothing is built
or run: each record is replayed as MetaSchedule compiled it and its compute nest read.

Within one iteration of the outermost reduction loop, a register-tiled GEMM touches a tile of C (to
reuse in the next iteration), rows of A and rows of B. The lines of every access are enumerated
from the loops' strides (buffers assumed to start on a page, as large allocations do) and counted
per L1 set (sets and ways from the machine: 64 x 8 on this one). With 2 KiB rows, 32 rows of one
column fall into 2 sets, 16 lines each, twice the ways: they cannot stay in L1 between iterations.

    PYTHONPATH=. python docs/results/set_conflicts_s27/set_pressure.py WORK_DIR... [--ways 8 --sets 64]
"""
import argparse
import math
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "insert_pricing_s26", "gemm_tail"))
import _paths  # noqa: F401,E402
from pruner_ms.analysis import analyzer_for_target, extract_nests  # noqa: E402
from pruner_ms.integration.database import compiled_schedule  # noqa: E402
from pruner_ms.integration.measured_latency import record_seconds  # noqa: E402
from records import best_records, decisions  # noqa: E402

LINE = 64


def set_loads(nest, first: int, sets: int) -> np.ndarray:
    """Lines per L1 set touched by loops ``first..`` of ``nest`` (all accesses, each from set 0)."""
    total = np.zeros(sets)
    for access in nest.accesses:
        offsets = np.zeros(1, dtype=np.int64)
        for j in range(first, len(nest.loops)):
            step = access.elem_stride(j) * access.dtype_bytes
            if step:
                offsets = (offsets[:, None] + step * np.arange(nest.loops[j].extent)[None, :]).ravel()
                offsets = np.unique(offsets // LINE) * LINE  # lines, not bytes, matter
        total += np.bincount((np.unique(offsets // LINE) % sets).astype(np.int64), minlength=sets)
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--ways", type=int, default=8)
    parser.add_argument("--sets", type=int, default=64)
    args = parser.parse_args()
    rows, analyzers = [], {}
    for run in args.runs:
        for rec in best_records(run):
            if not math.isfinite(record_seconds(rec)):
                continue
            analyzer = analyzers.setdefault(str(rec.target), analyzer_for_target(rec.target))
            mod = compiled_schedule(rec.workload.mod, rec.trace).mod
            est = analyzer.analyze(mod)
            symbols = max(est.nests, key=lambda n: n.symbols["flops"]).symbols
            nest = max(extract_nests(mod["main"]), key=lambda n: n.float_ops * math.prod(l.extent for l in n.loops))
            first = next((j for j, red in enumerate(nest.reduction_loops) if red), len(nest.loops)) + 1
            load = set_loads(nest, first, args.sets)
            rows.append(dict(ms=record_seconds(rec) * 1e3, est=est.seconds * 1e3, resident=symbols["register_resident"],
                             bound=symbols["bound"], fullest=int(load.max()), lines=int(load.sum()), d=decisions(rec)))
    print(f"{len(rows)} programs; fullest L1 set within one step of the outermost reduction loop "
          f"({args.sets} sets x {args.ways} ways), against measured / analyzer")
    buckets = [(0, args.ways), (args.ways + 1, 2 * args.ways), (2 * args.ways + 1, 4 * args.ways), (4 * args.ways + 1, 10**9)]
    print("| priced register-resident | lines in the fullest set | programs | median measured ms | median analyzer ms "
          "| median ratio | ratio > 2 |")
    print("|---|---|---|---|---|---|---|")
    for resident in (True, False):
        for lo, hi in buckets:
            rs = [r for r in rows if r["resident"] == resident and lo <= r["fullest"] <= hi]
            if not rs:
                continue
            ratios = [r["ms"] / r["est"] for r in rs]
            print(f"| {resident} | {lo}-{hi if hi < 10**9 else ''} | {len(rs)} | {statistics.median(r['ms'] for r in rs):.2f} | "
                  f"{statistics.median(r['est'] for r in rs):.2f} | {statistics.median(ratios):.2f} | "
                  f"{sum(x > 2 for x in ratios)} |")
    print("\nat the analyzer's ceiling (estimate within 5 % of its best), slowest first:")
    floor = min(r["est"] for r in rows)
    for r in sorted((r for r in rows if r["est"] <= 1.05 * floor), key=lambda r: -r["ms"])[:30]:
        print(f"  {r['ms']:.2f} ms  fullest set {r['fullest']:3d}  lines {r['lines']:5d}  {r['d']}")


if __name__ == "__main__":
    main()
