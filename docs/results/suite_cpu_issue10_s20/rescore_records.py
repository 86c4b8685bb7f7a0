#!/usr/bin/env python
"""Re-price the recorded programs of benchmark work dirs with the CPU model of a given checkout.

Step 1 (``--cache``): replay every valid record of the work dirs (``.../<run>/work/<workload>/<strategy>/<seed>``,
as ``pruner-ms bench`` lays them out) once and pickle the loop nests the analyzer extracts, with the
recorded latency. Step 2: estimate every program with ``pruner_ms.analysis.cpu_model`` of ``--repo``
(so two checkouts are compared on the same nests and the same hardware spec, the one of the machine
that made the cache) and print, per workload: Spearman against the recorded latencies (pooled over
runs), pairwise accuracy, and the best recorded latency among the estimate's top 8 against the best
(per run: median and mean over runs; pooled). Run from the repository root:

    python docs/results/suite_cpu_issue10_s20/rescore_records.py --cache nests.pkl /tmp/bench18/suite_cpu_issue10_s18/work/*/*/* /tmp/bench19/suite_cpu_issue10_s19/work/*/*/*
    python docs/results/suite_cpu_issue10_s20/rescore_records.py --cache nests.pkl --repo /path/to/old/checkout --out before.json
    python docs/results/suite_cpu_issue10_s20/rescore_records.py --cache nests.pkl --repo . --out after.json
    python docs/results/suite_cpu_issue10_s20/rescore_records.py --compare before.json after.json
"""
import argparse
import collections
import json
import math
import os
import pickle
import statistics
import sys

TOP = 8


def cache(path: str, work_dirs: list[str]) -> None:
    sys.path.insert(0, os.getcwd())
    from tvm.s_tir import Schedule

    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.analysis.analyzer import _prim_funcs, _program_bytes
    from pruner_ms.analysis.loop_nest import extract_nests
    from pruner_ms.integration.measured_latency import record_seconds
    from pruner_ms.integration.resume import open_database

    rows, spec = [], None
    for wd in work_dirs:
        *_, run, _, workload, strategy, seed = wd.rstrip("/").split("/")
        for rec in open_database(wd, repair_tail=False).get_all_tuning_records():
            seconds = record_seconds(rec)
            if not math.isfinite(seconds):
                continue
            sch = Schedule(rec.workload.mod)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
            spec = spec or analyzer_for_target(rec.target).spec
            nests = [n for f in _prim_funcs(sch.mod) for n in extract_nests(f)]
            rows.append(dict(run=run, workload=workload, strategy=strategy, seed=seed, seconds=seconds,
                             nests=nests, program_bytes=_program_bytes(nests)))
    with open(path, "wb") as f:
        pickle.dump(dict(spec=spec, rows=rows), f)
    print(f"{len(rows)} programs from {len(work_dirs)} work dirs -> {path}")


def rescore(path: str, repo: str) -> dict:
    sys.path.insert(0, os.path.abspath(repo))
    import numpy as np
    from scipy.stats import spearmanr

    from pruner_ms.analysis import cpu_model
    from pruner_ms.cost_model.train import pairwise_accuracy

    with open(path, "rb") as f:
        data = pickle.load(f)
    runs, pooled = collections.defaultdict(list), collections.defaultdict(list)
    for r in data["rows"]:
        est = sum(cpu_model.estimate_nest(n, data["spec"], program_bytes=r["program_bytes"]).seconds for n in r["nests"])
        runs[(r["workload"], r["run"], r["strategy"], r["seed"])].append((est, r["seconds"]))
        pooled[r["workload"]].append((est, r["seconds"]))

    def top_over_best(pairs):
        return min(m for _, m in sorted(pairs, key=lambda t: t[0])[:TOP]) / min(m for _, m in pairs)

    out = {}
    for workload, pairs in sorted(pooled.items()):
        est, meas = np.array([e for e, _ in pairs]), np.array([m for _, m in pairs])
        per_run = [top_over_best(v) for k, v in runs.items() if k[0] == workload]
        out[workload] = dict(programs=len(pairs), runs=len(per_run), spearman=float(spearmanr(est, meas)[0]),
                             pairwise=float(pairwise_accuracy(-est, -meas)),
                             top_run_median=float(statistics.median(per_run)), top_run_mean=float(np.mean(per_run)),
                             top_pooled=float(top_over_best(pairs)))
    return dict(repo=os.path.abspath(repo), cpu_model=cpu_model.__file__, workloads=out)


def compare(before: dict, after: dict) -> None:
    print(f"| workload | programs (runs) | Spearman | pairwise acc. | top {TOP} / best, per run median | per run mean | pooled |")
    print("|---|---|---|---|---|---|---|")
    for w, b in before["workloads"].items():
        a = after["workloads"][w]
        cells = [f"{b[k]:+.3f} -> {a[k]:+.3f}" if k == "spearman" else f"{b[k]:.3f} -> {a[k]:.3f}"
                 for k in ("spearman", "pairwise", "top_run_median", "top_run_mean", "top_pooled")]
        print(f"| {w} | {b['programs']} ({b['runs']}) | " + " | ".join(cells) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("work_dirs", nargs="*")
    p.add_argument("--cache", help="the pickle of replayed nests: written when work dirs are given, read otherwise")
    p.add_argument("--repo", help="the checkout whose CPU model prices the cached nests")
    p.add_argument("--out", help="write the per-workload metrics here (JSON)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="a Markdown table of two --out files")
    a = p.parse_args()
    if a.compare:
        before, after = (json.load(open(f)) for f in a.compare)
        compare(before, after)
    elif a.work_dirs:
        cache(a.cache, a.work_dirs)
    else:
        res = rescore(a.cache, a.repo)
        for w, m in res["workloads"].items():
            print(w, {k: round(v, 3) for k, v in m.items()})
        if a.out:
            with open(a.out, "w") as f:
                json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
