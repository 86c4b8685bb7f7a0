#!/usr/bin/env python
"""Host-side cost of tensor-core tuning without a GPU: PrunerSearch vs MetaSchedule's default.

Tunes an fp16 GEMM on MetaSchedule's ``cuda-tensorcore`` space for an A100 target with the real
design space, mutators, postprocs, cost model and builds (tvm.compile + nvcc, ``CudaBuilder``), in one
process, same trials and seed for every strategy. Measurement is replaced by a SYNTHETIC runner that
returns a deterministic pseudo-latency derived from each program's structural hash: the numbers say
nothing about kernel speed, only about host time per measured candidate.

    python scripts/tc_host_time.py --trials 64 --trials-per-iter 32 --seeds 0 --out results/tc_host_time.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=1024, help="GEMM size M=N=K (fp16 inputs)")
    p.add_argument("--acc", default="float32", choices=["float32", "float16"], help="accumulator dtype")
    p.add_argument("--target", default="nvidia/nvidia-a100", help="CUDA target tag")
    p.add_argument("--strategies", default="pruner,default", help="comma list of pruner, default")
    p.add_argument("--trials", type=int, default=64)
    p.add_argument("--trials-per-iter", type=int, default=32)
    p.add_argument("--seeds", default="0")
    p.add_argument("--out", default="results/tc_host_time.json")
    a = p.parse_args(argv)
    if a.trials <= 0 or a.trials_per_iter <= 0:
        p.error("--trials and --trials-per-iter must be positive")

    import logging
    import tempfile

    import tvm
    import tvm.s_tir.tensor_intrin
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.bench.compare import run_one
    from pruner_ms.bench.workloads import gemm_fp16
    from pruner_ms.hardware import host_cpu_spec
    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.runners import SyntheticLatencyRunner

    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    cores = host_cpu_spec().cores
    target = tvm.target.Target(a.target, host=tvm.target.Target({"kind": "llvm", "num-cores": cores}))
    wl = gemm_fp16(a.size, a.size, a.size, acc_dtype=a.acc)
    root = tempfile.mkdtemp(prefix="pruner_ms_tc_")
    print("NOTE: latencies are SYNTHETIC (a hash of each program), not measurements; only host times mean anything.")
    runs = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        for strategy in a.strategies.split(","):
            builder = CudaBuilder(max_workers=cores)
            runner = SyntheticLatencyRunner(builder)
            space = ms.space_generator.PostOrderApply(sch_rules="cuda-tensorcore", postprocs="cuda-tensorcore",
                                                      mutator_probs="cuda-tensorcore")
            t = time.perf_counter()
            r = run_one(wl, strategy, trials=a.trials, seed=seed, trials_per_iter=a.trials_per_iter,
                        work_dir=os.path.join(root, strategy, str(seed)), target=target, builder=builder,
                        runner=runner, space=space, cores=cores, check=False)
            wall = time.perf_counter() - t
            stats = builder.stats.as_dict()
            n = max(1, r["trials"])
            search = sum(r["round_seconds"])
            row = {
                "strategy": strategy, "seed": seed, "trials": r["trials"], "wall_s": wall,
                "search_s": search, "host_s_per_candidate": wall / n, "search_s_per_candidate": search / n,
                "round_seconds": r["round_seconds"], "build_stats": stats,
                "build_errors": sum(b["build_errors"] for b in r["batches"]),
            }
            runs.append(row)
            print(f"{strategy} seed={seed}: {r['trials']} candidates, {wall:.0f} s host ({wall / n:.2f} s each), "
                  f"search {search:.0f} s ({search / n:.2f} s each), rounds "
                  f"{[round(x) for x in r['round_seconds']]}, builds ok {stats['ok']}/{stats['built']} "
                  f"({stats['ok_workaround']} with the wmma workaround), {stats['wall_sec_per_build']:.2f} s wall per build",
                  flush=True)
    ratios = {}
    for s in {r["seed"] for r in runs}:
        by = {r["strategy"]: r for r in runs if r["seed"] == s}
        if "pruner" in by and "default" in by:
            ratios[s] = {k: by["pruner"][k] / by["default"][k] for k in ("host_s_per_candidate", "search_s_per_candidate")}
    summary = {k: statistics.median(v[k] for v in ratios.values()) for k in ("host_s_per_candidate", "search_s_per_candidate")} if ratios else {}
    print("pruner / default, median over seeds:", {k: round(v, 3) for k, v in summary.items()})
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"meta": {"argv": sys.argv, "host": platform.node(), "cores": cores, "synthetic_latency": True,
                            "workload": wl.name, "target": a.target},
                   "ratios_by_seed": ratios, "median_ratio": summary, "runs": runs}, f, indent=1, default=str)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
