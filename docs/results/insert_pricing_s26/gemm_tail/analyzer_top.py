#!/usr/bin/env python
"""Where the analyzer misranks a workload's recorded programs: its top K with their measured latency
and the measured best K with the analyzer's rank, with the compute nest's symbols.

    PYTHONPATH=. python docs/results/insert_pricing_s26/gemm_tail/analyzer_top.py WORK_DIR... [--top 8]
"""
import argparse
import math

import numpy as np

import _paths  # noqa: F401
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, decisions, replayed

KEYS = ["vector_lanes", "accumulator_chains", "register_resident", "bound", "compute_s", "l1_miss_s", "l2_miss_s", "tlb_s"]

parser = argparse.ArgumentParser()
parser.add_argument("runs", nargs="+")
parser.add_argument("--top", type=int, default=8)
args = parser.parse_args()
rows, analyzers = [], {}
for run in args.runs:
    for rec in best_records(run):
        seconds = record_seconds(rec)
        if not math.isfinite(seconds):
            continue
        analyzer = analyzers.setdefault(str(rec.target), analyzer_for_target(rec.target))
        est = analyzer.analyze(replayed(rec).mod)
        decided = decisions(rec)
        compute = max(est.nests, key=lambda nest: nest.symbols["flops"]).symbols
        rows.append((seconds * 1e3, est.seconds * 1e3, decided, compute))
measured, estimated = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
rank_measured, rank_estimated = measured.argsort().argsort(), estimated.argsort().argsort()


def show(i: int) -> None:
    ms, est, decided, symbols = rows[i]
    print(f"  measured {ms:.3f} ms (rank {rank_measured[i]}), analyzer {est:.3f} ms (rank {rank_estimated[i]}) {decided} "
          + " ".join(f"{k}={round(symbols[k] * 1e3, 3) if k.endswith('_s') else symbols[k]}" for k in KEYS))


print(f"{len(rows)} programs; best measured {measured.min():.3f} ms")
print(f"== the analyzer's top {args.top}")
for i in estimated.argsort()[: args.top]:
    show(i)
print(f"== the measured top {args.top}")
for i in measured.argsort()[: args.top]:
    show(i)
