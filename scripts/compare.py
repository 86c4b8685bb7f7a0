#!/usr/bin/env python
"""Compare PrunerSearch with MetaSchedule's default on the local CPU, side by side in one run.

Example (the README's main job):
    python scripts/compare.py --workloads gemm-512 --trials 128 --seeds 0

Strategies alternate their order with the seed (as given for the 1st, 3rd, ... seed, reversed for the
others), every run tunes in its own empty work dir, and re-measured latencies (5 fresh processes x 2
round-robin passes, mean over processes) are reported next to the tuning-time ones. --merge-into FILE
adds this invocation's runs to an earlier result (same --trials and --trials-per-iter) and skips the
runs it already holds.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    from pruner_ms.bench.compare import (STRATEGIES, ProtocolError, check_strategies, compare, format_report,
                                         load_for_merge, run_key, save, summarize_views)
    from pruner_ms.bench.workloads import WORKLOADS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default="gemm-512", help=f"comma list of {', '.join(WORKLOADS)}")
    p.add_argument("--strategies", default="pruner,default", help=f"comma list of {', '.join(STRATEGIES)}")
    p.add_argument("--trials", type=int, default=128, help="trial budget per run")
    p.add_argument("--trials-per-iter", type=int, default=32, help="programs measured per round (all strategies)")
    p.add_argument("--seeds", default="0", help="comma list of seeds")
    p.add_argument("--population", type=int, default=None, help="PrunerSearch population_size override")
    p.add_argument("--draft-size", type=int, default=None, help="PrunerSearch draft_size override")
    p.add_argument("--work-dir", default=None, help="where the tuning databases go (default: a temp dir)")
    p.add_argument("--out", default="results/compare.json", help="JSON output path")
    p.add_argument("--merge-into", default=None, metavar="FILE",
                   help="merge into this earlier JSON result (made with the same --trials and --trials-per-iter): "
                        "keep its runs, skip the (workload, strategy, seed) it holds, write the union there "
                        "(replaces --out)")
    p.add_argument("--remeasure-passes", type=int, default=2,
                   help="after tuning, re-measure each run's decisive programs this many times, round-robin, in "
                        "each of --remeasure-processes fresh processes (0: report tuning-time latencies only)")
    p.add_argument("--remeasure-processes", type=int, default=5,
                   help="fresh processes the re-measurement runs in (mean over them; default 5)")
    p.add_argument("--pacm-checkpoint", default=None,
                   help="pretrained PaCM for the pruner-moa strategy (python -m pruner_ms.cost_model.train ...)")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    if a.trials <= 0 or a.trials_per_iter <= 0:
        p.error("--trials and --trials-per-iter must be positive")
    if a.remeasure_passes < 0:
        p.error("--remeasure-passes must be 0 or more")
    if a.remeasure_processes < 1:
        p.error("--remeasure-processes must be 1 or more")
    kw = {}
    if a.population:
        kw["population_size"] = a.population
    if a.draft_size:
        kw["draft_size"] = a.draft_size
    seeds = [int(s) for s in a.seeds.split(",")]
    bad = [w for w in a.workloads.split(",") if w not in WORKLOADS]
    if bad:
        p.error(f"unknown workloads {bad}; choose from {', '.join(WORKLOADS)}")
    try:
        check_strategies(a.strategies.split(","))
    except ValueError as err:
        p.error(str(err))
    settings = {"trials": a.trials, "trials_per_iter": a.trials_per_iter}
    out = a.merge_into or a.out
    t = time.time()
    try:
        previous = load_for_merge(a.merge_into, settings, settings_key="meta") if a.merge_into else {}
        runs, _ = compare(a.workloads.split(","), a.strategies.split(","), trials=a.trials, seeds=seeds,
                          trials_per_iter=a.trials_per_iter, work_root=a.work_dir,
                          progress=not a.no_progress, pruner_kwargs=kw, remeasure_passes=a.remeasure_passes,
                          remeasure_processes=a.remeasure_processes,
                          pacm_checkpoint=a.pacm_checkpoint, done=[run_key(r) for r in previous.get("runs", [])])
    except ProtocolError as err:
        print(f"compare.py: error: {err}", file=sys.stderr)
        return 2
    runs = previous.get("runs", []) + runs
    summaries = summarize_views(runs)
    table = format_report(runs, summaries)
    print("\n" + table)
    meta = {"argv": sys.argv, "host": platform.node(), "python": platform.python_version(),
            "total_seconds": time.time() - t, "pruner_kwargs": kw, **settings}
    if previous:
        meta["merged"] = previous.get("meta", {}).get("merged", []) + [{k: v for k, v in previous["meta"].items()
                                                                        if k != "merged"}]
    from pruner_ms.hardware import host_cpu_spec

    meta["cpu"] = host_cpu_spec().target()
    save(out, runs, summaries, meta)
    with open(os.path.splitext(out)[0] + ".md", "w", encoding="utf-8") as f:
        f.write(table + "\n")
    print(f"\nwrote {out}")
    return 0 if all(r["numpy_ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
