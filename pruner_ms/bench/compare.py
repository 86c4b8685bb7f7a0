"""Side-by-side tuning comparisons: same workload, trial budget, seed, builder and runner."""
from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import time

import numpy as np

STRATEGIES = ("pruner", "default", "default-short-warmup")


def make_strategy(name: str, cores: int, pruner_kwargs: dict | None = None):
    """(strategy, cost_model) for a named configuration, as tune_tir would receive them."""
    from tvm.s_tir import meta_schedule as ms

    from ..strategy import PrunerSearch

    if name == "pruner":
        return PrunerSearch(**(pruner_kwargs or {})), ms.cost_model.XGBModel(num_tuning_cores=cores)
    if name == "default":  # exactly what tune_tir builds from strategy="evolutionary", cost_model="xgb"
        return ms.search_strategy.EvolutionarySearch(), ms.cost_model.XGBModel(num_tuning_cores=cores)
    if name == "default-short-warmup":  # the default with the XGBoost warm-up PrunerSearch uses (0)
        return ms.search_strategy.EvolutionarySearch(), ms.cost_model.XGBModel(
            num_tuning_cores=cores, num_warmup_samples=0)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")


def run_one(workload, strategy: str, *, trials: int, seed: int, trials_per_iter: int, work_dir: str,
            progress: bool = True, pruner_kwargs: dict | None = None) -> dict:
    """Tune ``workload`` with one strategy; return its timeline, best latency and numpy check."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from ..hardware import host_cpu_spec
    from ..integration.timeline import Timeline, TimedStrategy, TimelineCallback
    from ..integration.workarounds import WarmPoolBuilder, detach_unnamed_log_handlers

    spec = host_cpu_spec()
    target = tvm.target.Target(spec.target())
    strat, cost_model = make_strategy(strategy, spec.cores, pruner_kwargs)
    timeline = Timeline(trials, progress=progress, desc=f"{workload.name} {strategy} seed={seed}")
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [TimelineCallback(timeline)]
    builder = WarmPoolBuilder(max_workers=spec.cores)
    detach_unnamed_log_handlers()
    timeline.restart()
    db = ms.tune_tir(
        workload.func, target, work_dir, max_trials_global=trials, num_trials_per_iter=trials_per_iter,
        builder=builder, cost_model=cost_model, strategy=TimedStrategy(strat, timeline),
        measure_callbacks=callbacks, seed=seed, num_tuning_cores=spec.cores,
    )
    wall = time.perf_counter() - timeline.start
    timeline.close()
    check = check_against_numpy(db, workload, target)
    return {
        "workload": workload.name, "strategy": strategy, "seed": seed, "trials": timeline.trials,
        "wall_seconds": wall, "best_seconds": timeline.best, "batches": timeline.batches,
        "round_seconds": timeline.round_seconds, **check,
    }


def check_against_numpy(db, workload, target) -> dict:
    """Compile the best record and compare its output with the numpy reference."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    sch = ms.tir_integration.compile_tir(db, workload.func, target)
    if sch is None:
        return {"numpy_ok": False, "max_abs_error": None, "error": "no valid record"}
    ex = tvm.compile(sch.mod, target=target)
    rng = np.random.default_rng(0)
    inputs = workload.make_inputs(rng)
    args = [tvm.runtime.tensor(x) for x in inputs] + [tvm.runtime.empty(workload.output_shape, "float32")]
    ex["main"](*args)
    ref = workload.reference(*inputs)
    err = float(np.max(np.abs(args[-1].numpy() - ref)))
    ok = bool(np.allclose(args[-1].numpy(), ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max()))))
    return {"numpy_ok": ok, "max_abs_error": err}


def time_to_reach(run: dict, latency: float) -> float | None:
    """Seconds until ``run`` first measured a program at least as fast as ``latency``."""
    for b in run["batches"]:
        if b["best"] <= latency:
            return b["seconds"]
    return None


def trials_to_reach(run: dict, latency: float) -> int | None:
    for b in run["batches"]:
        if b["best"] <= latency:
            return b["trials"]
    return None


def summarize(runs: list[dict], ours: str = "pruner") -> dict:
    """Per workload and baseline: speed-ups (median over seeds) and final-latency ratios.

    ``speedup`` follows the paper: the baseline's whole search time divided by the time our strategy
    needs to reach the baseline's final best latency. ``speedup_vs_reach`` is stricter: it divides the
    time the baseline itself needed to reach its final best.
    """
    out: dict = {}
    by_key = {(r["workload"], r["strategy"], r["seed"]): r for r in runs}
    workloads = sorted({r["workload"] for r in runs})
    for wl in workloads:
        seeds = sorted({r["seed"] for r in runs if r["workload"] == wl})
        for base in sorted({r["strategy"] for r in runs if r["workload"] == wl} - {ours}):
            rows = []
            for s in seeds:
                p, b = by_key.get((wl, ours, s)), by_key.get((wl, base, s))
                if p is None or b is None:
                    continue
                target = b["best_seconds"]
                t_ours = time_to_reach(p, target)
                t_base = b["batches"][-1]["seconds"] if b["batches"] else math.nan
                t_base_reach = time_to_reach(b, target)
                rows.append({
                    "seed": s,
                    "baseline_best_ms": target * 1e3,
                    "ours_best_ms": p["best_seconds"] * 1e3,
                    "final_ratio": p["best_seconds"] / target,
                    "ours_seconds_to_reach": t_ours,
                    "ours_trials_to_reach": trials_to_reach(p, target),
                    "baseline_seconds": t_base,
                    "baseline_seconds_to_own_best": t_base_reach,
                    "speedup": (t_base / t_ours) if t_ours else 0.0,
                    "speedup_vs_reach": (t_base_reach / t_ours) if t_ours else 0.0,
                    "ours_round_s": statistics.mean(p["round_seconds"]) if p["round_seconds"] else None,
                    "baseline_round_s": statistics.mean(b["round_seconds"]) if b["round_seconds"] else None,
                })
            if rows:
                out[f"{wl} vs {base}"] = {
                    "median_speedup": statistics.median(r["speedup"] for r in rows),
                    "median_speedup_vs_reach": statistics.median(r["speedup_vs_reach"] for r in rows),
                    "median_final_ratio": statistics.median(r["final_ratio"] for r in rows),
                    "seeds": rows,
                }
    return out


def format_table(runs: list[dict], summary: dict) -> str:
    """Markdown tables: one row per run, then the speed-ups."""
    lines = ["| workload | strategy | seed | best (ms) | GFLOP/s | trials | wall (s) | search s/round | numpy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rs = statistics.mean(r["round_seconds"]) if r["round_seconds"] else float("nan")
        gflops = r.get("flops", 0) / r["best_seconds"] / 1e9 if math.isfinite(r["best_seconds"]) else 0
        lines.append(f"| {r['workload']} | {r['strategy']} | {r['seed']} | {r['best_seconds'] * 1e3:.3f} | "
                     f"{gflops:.1f} | {r['trials']} | {r['wall_seconds']:.0f} | {rs:.2f} | "
                     f"{'ok' if r['numpy_ok'] else 'FAIL'} (err {r['max_abs_error']}) |")
    lines += ["", "| comparison | seed | baseline best (ms) | ours best (ms) | ours s (trials) to reach | "
                  "baseline total s | baseline s to own best | speed-up | strict speed-up | search s/round ours / base |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for key, item in summary.items():
        for row in item["seeds"]:
            reach = (f"{row['ours_seconds_to_reach']:.0f} ({row['ours_trials_to_reach']})"
                     if row["ours_seconds_to_reach"] is not None else "not reached")
            lines.append(
                f"| {key} | {row['seed']} | {row['baseline_best_ms']:.3f} | {row['ours_best_ms']:.3f} | {reach} | "
                f"{row['baseline_seconds']:.0f} | {row['baseline_seconds_to_own_best']:.0f} | "
                f"{row['speedup']:.2f}x | {row['speedup_vs_reach']:.2f}x | "
                f"{row['ours_round_s']:.2f} / {row['baseline_round_s']:.2f} |")
        lines.append(f"| **{key}: median** | | | | | | | **{item['median_speedup']:.2f}x** | "
                     f"**{item['median_speedup_vs_reach']:.2f}x** | final latency ratio {item['median_final_ratio']:.3f} |")
    return "\n".join(lines)


def compare(workloads: list[str], strategies: list[str], *, trials: int, seeds: list[int],
            trials_per_iter: int, work_root: str | None = None, progress: bool = True,
            pruner_kwargs: dict | None = None, log=print) -> tuple[list[dict], dict]:
    """Run every (workload, seed, strategy) in one process and summarize."""
    import logging

    import tvm.s_tir.tensor_intrin  # noqa: F401  (pay the 20-50 s import once, before any clock starts)

    if progress:  # the tqdm bars replace MetaSchedule's per-batch console tables (full logs stay in work_dir)
        logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)

    from .workloads import get_workload

    work_root = work_root or tempfile.mkdtemp(prefix="pruner_ms_compare_")
    runs = []
    for wl_name in workloads:
        for seed in seeds:
            for strategy in strategies:
                wl = get_workload(wl_name)
                wd = os.path.join(work_root, wl_name, strategy, str(seed))
                run = run_one(wl, strategy, trials=trials, seed=seed, trials_per_iter=trials_per_iter,
                              work_dir=wd, progress=progress, pruner_kwargs=pruner_kwargs)
                run["flops"] = wl.flops
                runs.append(run)
                log(f"{wl_name} {strategy} seed={seed}: best {run['best_seconds'] * 1e3:.3f} ms after "
                    f"{run['trials']} trials, {run['wall_seconds']:.0f} s, numpy {'ok' if run['numpy_ok'] else 'FAIL'}")
    return runs, summarize(runs)


def save(path: str, runs: list[dict], summary: dict, meta: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "summary": summary, "runs": runs}, f, indent=1, default=str)
