#!/usr/bin/env python
"""The CPU analyzer's roofline with its terms combined by a p-norm instead of their maximum, rescored
on recorded programs (no builds, no runs).

``estimate_nest`` prices a nest at max(compute, L1/L2/L3 miss time, TLB time) plus its parallel
launch cost: perfect overlap of the terms, so every program whose largest term is the same ties,
whatever its other terms (on this session's GEMMs and the GEMV, the analyzer's top 8 are such ties).
Here each nest is re-priced at (sum of term^p)^(1/p) + launch from the symbols the analyzer already
returns, for each p given (inf: the analyzer as it is), and each ranking is compared with the
recorded latencies: per run (a work dir) Spearman and best of the top 8 / best, and pooled per
workload (every record of every work dir given).

    python docs/results/suite_cpu_issue10_s19/rescore_overlap.py WORK_DIR... --p inf,8,4,2 --out rows.json
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.getcwd())

TERMS = ("compute_s", "l1_miss_s", "l2_miss_s", "l3_miss_s", "tlb_s")


def nest_terms(work_dir: str) -> list[tuple[str, float, list[list[float]]]]:
    """(workload, recorded seconds, per nest [terms..., launch]) for every valid record."""
    from tvm.s_tir import Schedule

    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.integration.database import workload_name
    from pruner_ms.integration.measured_latency import record_seconds
    from pruner_ms.integration.resume import open_database

    rows, analyzers = [], {}
    for rec in open_database(work_dir, repair_tail=False).get_all_tuning_records():
        seconds = record_seconds(rec)
        if not math.isfinite(seconds):
            continue
        target = str(rec.target)
        analyzers.setdefault(target, analyzer_for_target(rec.target))
        sch = Schedule(rec.workload.mod)
        rec.trace.apply_to_schedule(sch, remove_postproc=False)
        est = analyzers[target].analyze(sch.mod)
        nests = [[float(n.symbols.get(t, 0.0)) for t in TERMS] + [float(n.symbols.get("launch_s", 0.0))]
                 for n in est.nests]
        rows.append((workload_name(rec.workload.mod), seconds, nests))
    return rows


def combined(nests: list[list[float]], p: float) -> float:
    total = 0.0
    for *terms, launch in nests:
        total += (max(terms) if math.isinf(p) else sum(t ** p for t in terms) ** (1.0 / p)) + launch
    return total


def metrics(estimates: list[float], latencies: list[float], top: int = 8) -> dict:
    import numpy as np

    from pruner_ms.strategy.trust import spearman

    e, t = np.array(estimates), np.array(latencies)
    order = np.argsort(e, kind="mergesort")
    return {"spearman": float(spearman(e, t)), "top_best": float(t[order[:top]].min() / t.min())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work_dirs", nargs="+")
    ap.add_argument("--p", default="inf,8,4,2")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    ps = [float(x) for x in args.p.split(",")]
    pooled = collections.defaultdict(list)
    per_run = collections.defaultdict(lambda: collections.defaultdict(list))
    for wd in args.work_dirs:
        rows = nest_terms(wd)
        by_wl = collections.defaultdict(list)
        for wl, sec, nests in rows:
            by_wl[wl].append((sec, nests))
            pooled[wl].append((sec, nests))
        for wl, items in by_wl.items():
            if len(items) < 8:
                continue
            for p in ps:
                per_run[wl][p].append(metrics([combined(n, p) for _, n in items], [s for s, _ in items]))
    out = {}
    print("| workload | p | runs: median Spearman | runs: median top 8 / best | pooled Spearman | pooled top 8 / best |")
    print("|---|---|---|---|---|---|")
    for wl in sorted(pooled):
        for p in ps:
            runs = per_run[wl][p]
            pool = metrics([combined(n, p) for _, n in pooled[wl]], [s for s, _ in pooled[wl]])
            row = {"runs": len(runs), "run_spearman": statistics.median(r["spearman"] for r in runs) if runs else None,
                   "run_top_best": statistics.median(r["top_best"] for r in runs) if runs else None,
                   "pooled": pool, "programs": len(pooled[wl])}
            out.setdefault(wl, {})[str(p)] = row
            print(f"| {wl} | {p:g} | {row['run_spearman']:+.2f} | {row['run_top_best']:.2f} | "
                  f"{pool['spearman']:+.2f} | {pool['top_best']:.2f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
