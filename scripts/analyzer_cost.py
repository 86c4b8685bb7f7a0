#!/usr/bin/env python
"""Cost per candidate of the symbolic analyzer versus MetaSchedule's XGBoost model (which it saves
calls to): XGBoost's cost includes its PerStoreFeature extraction, as in a real search.

    python scripts/analyzer_cost.py --workloads gemm-512,conv2d-resnet --candidates 256
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.bench.workloads import get_workload
    from pruner_ms.hardware import host_cpu_spec

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default="gemm-512,conv2d-resnet")
    p.add_argument("--candidates", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="results/analyzer_cost.json")
    a = p.parse_args(argv)
    spec = host_cpu_spec()
    target = tvm.target.Target(spec.target())
    analyzer = SymbolicAnalyzer(spec)
    rows = []
    for name in a.workloads.split(","):
        wl = get_workload(name)
        ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                             space_generator=ms.space_generator.PostOrderApply(),
                             search_strategy=ms.search_strategy.ReplayTrace(), num_threads=spec.cores, rand_state=1)
        ctx.pre_tuning(a.candidates, a.candidates, ctx.generate_design_space(), ms.database.MemoryDatabase(),
                       ms.cost_model.RandomModel())
        cands = ctx.generate_measure_candidates()
        xgb = ms.cost_model.XGBModel(num_warmup_samples=0, num_tuning_cores=spec.cores)
        train = cands[:64]
        xgb.update(ctx, train, [ms.runner.RunnerResult([1e-3 * (1 + (i * 7919) % 13)], None) for i in range(len(train))])
        t_an, t_xgb = [], []
        for _ in range(a.repeats):
            t = time.perf_counter()
            for c in cands:
                analyzer.estimate_seconds(c.sch.mod)
            t_an.append((time.perf_counter() - t) / len(cands))
            t = time.perf_counter()
            xgb.predict(ctx, cands)
            t_xgb.append((time.perf_counter() - t) / len(cands))
        row = {"workload": wl.name, "candidates": len(cands), "analyzer_ms": 1e3 * float(np.median(t_an)),
               "xgb_predict_ms": 1e3 * float(np.median(t_xgb))}
        row["ratio_xgb_over_analyzer"] = row["xgb_predict_ms"] / row["analyzer_ms"]
        rows.append(row)
        print(f"{wl.name}: analyzer {row['analyzer_ms']:.2f} ms/candidate, XGBoost (features + predict) "
              f"{row['xgb_predict_ms']:.2f} ms/candidate, ratio {row['ratio_xgb_over_analyzer']:.2f}x "
              f"({spec.cores} cores, median of {a.repeats})")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
