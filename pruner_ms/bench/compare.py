"""Side-by-side tuning comparisons: same workload, trial budget, seed, builder and runner."""
from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import time

import numpy as np

STRATEGIES = ("pruner", "pruner-pacm", "pruner-moa", "default", "default-short-warmup")


def make_strategy(name: str, cores: int, pruner_kwargs: dict | None = None, pacm_checkpoint: str | None = None):
    """(strategy, cost_model) for a named configuration, as tune_tir would receive them.

    ``pruner`` verifies with XGBoost, ``pruner-pacm`` with a fresh PaCM trained online,
    ``pruner-moa`` with PaCM adapted by MoA from ``pacm_checkpoint`` (an offline-trained model).
    """
    from tvm.s_tir import meta_schedule as ms

    from ..strategy import PrunerSearch

    if name == "pruner":
        return PrunerSearch(**(pruner_kwargs or {})), ms.cost_model.XGBModel(num_tuning_cores=cores)
    if name in ("pruner-pacm", "pruner-moa"):
        from ..cost_model import PaCM

        if name == "pruner-moa" and not pacm_checkpoint:
            raise ValueError("strategy 'pruner-moa' needs a pretrained PaCM checkpoint (--pacm-checkpoint); "
                             "train one with `python -m pruner_ms.cost_model.train WORK_DIR... --out ckpt.pt`")
        model = PaCM(pretrained=pacm_checkpoint) if name == "pruner-moa" else PaCM()
        return PrunerSearch(**(pruner_kwargs or {})), model
    if name == "default":  # exactly what tune_tir builds from strategy="evolutionary", cost_model="xgb"
        return ms.search_strategy.EvolutionarySearch(), ms.cost_model.XGBModel(num_tuning_cores=cores)
    if name == "default-short-warmup":  # the default with the XGBoost warm-up PrunerSearch uses (0)
        return ms.search_strategy.EvolutionarySearch(), ms.cost_model.XGBModel(
            num_tuning_cores=cores, num_warmup_samples=0)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")


def run_one(workload, strategy: str, *, trials: int, seed: int, trials_per_iter: int, work_dir: str,
            progress: bool = True, pruner_kwargs: dict | None = None, target=None, builder=None,
            runner="local", space="post-order-apply", cores: int | None = None, check: bool = True,
            pacm_checkpoint: str | None = None) -> dict:
    """Tune ``workload`` with one strategy; return its timeline, best latency and numpy check.

    ``target`` defaults to this CPU (``host_cpu_spec().target()``) and ``builder`` to the builder
    :func:`pruner_ms.tune_tir` picks for the target; ``runner`` and ``space`` go to ``ms.tune_tir``.
    """
    from tvm.s_tir import meta_schedule as ms

    from ..hardware import host_cpu_spec
    from ..integration.timeline import TimedStrategy, Timeline, TimelineCallback
    from ..integration.tune import default_builder
    from ..integration.workarounds import detach_unnamed_log_handlers, normalize_target

    target = normalize_target(target if target is not None else host_cpu_spec().target())
    cores = cores or host_cpu_spec().cores
    strat, cost_model = make_strategy(strategy, cores, pruner_kwargs, pacm_checkpoint)
    timeline = Timeline(trials, progress=progress, desc=f"{workload.name} {strategy} seed={seed}")
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [TimelineCallback(timeline)]
    builder = builder if builder is not None else default_builder(target, max_workers=cores)
    detach_unnamed_log_handlers()
    timeline.restart()
    db = ms.tune_tir(
        workload.func, target, work_dir, max_trials_global=trials, num_trials_per_iter=trials_per_iter,
        builder=builder, runner=runner, space=space, cost_model=cost_model,
        strategy=TimedStrategy(strat, timeline), measure_callbacks=callbacks, seed=seed, num_tuning_cores=cores,
    )
    wall = time.perf_counter() - timeline.start
    timeline.close()
    result = check_against_numpy(db, workload, target) if check else {"numpy_ok": True, "max_abs_error": None}
    return {
        "workload": workload.name, "strategy": strategy, "seed": seed, "trials": timeline.trials,
        "wall_seconds": wall, "best_seconds": timeline.best, "batches": timeline.batches,
        "round_seconds": timeline.round_seconds, **result,
    }


def check_against_numpy(db, workload, target) -> dict:
    """Compile the best record, run it on the target's device and compare with the numpy reference."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    sch = ms.tir_integration.compile_tir(db, workload.func, target)
    if sch is None:
        return {"numpy_ok": False, "max_abs_error": None, "error": "no valid record"}
    ex = tvm.compile(sch.mod, target=target)
    dev = tvm.cuda(0) if target.kind.name == "cuda" else tvm.cpu(0)
    rng = np.random.default_rng(0)
    inputs = workload.make_inputs(rng)
    args = [tvm.runtime.tensor(x, device=dev) for x in inputs]
    args.append(tvm.runtime.empty(workload.output_shape, workload.output_dtype, device=dev))
    ex["main"](*args)
    out = args[-1].numpy().astype(np.float64)
    ref = workload.reference(*inputs).astype(np.float64)
    err = float(np.max(np.abs(out - ref)))
    ok = bool(np.allclose(out, ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max()))))
    return {"numpy_ok": ok, "max_abs_error": err}


def batch_curve(run: dict) -> list[tuple[float, int, float]]:
    """A run's best-so-far curve as measured during tuning: (seconds, trials, best latency) per batch."""
    return [(b["seconds"], b["trials"], b["best"]) for b in run["batches"]]


def summarize(runs: list[dict], curves: list | None = None) -> dict:
    """Every PrunerSearch variant (``pruner*``) against every baseline: speed-ups and final ratios.

    Baselines of ``pruner`` are the non-PrunerSearch strategies; the other variants (``pruner-pacm``,
    ``pruner-moa``) are also compared with ``pruner`` (XGBoost verification).
    """
    out: dict = {}
    names = {r["strategy"] for r in runs}
    for ours in sorted(n for n in names if n.startswith("pruner")):
        bases = {n for n in names if not n.startswith("pruner")} | ({"pruner"} & names if ours != "pruner" else set())
        for key, item in _summarize_pair(runs, ours, sorted(bases), curves).items():
            out[key if ours == "pruner" else key.replace(" vs ", f" {ours} vs ", 1)] = item
    return out


def _summarize_pair(runs: list[dict], ours: str, bases: list[str], curves: list | None) -> dict:
    """Per workload and baseline: speed-ups (median over seeds) and final-latency ratios of ``ours``.

    ``speedup`` follows the paper: the baseline's whole search time divided by the time our strategy
    needs to reach the baseline's final best latency. ``speedup_vs_reach`` is stricter: it divides the
    time the baseline itself needed to reach its final best. ``curves`` (one per run, default: the
    latencies measured while tuning) lets re-measured latencies decide instead.
    """
    from .remeasure import reach

    curves = curves if curves is not None else [batch_curve(r) for r in runs]
    out: dict = {}
    by_key = {(r["workload"], r["strategy"], r["seed"]): (r, c) for r, c in zip(runs, curves)}
    workloads = sorted({r["workload"] for r in runs})
    for wl in workloads:
        seeds = sorted({r["seed"] for r in runs if r["workload"] == wl})
        for base in bases:
            rows = []
            for s in seeds:
                if (wl, ours, s) not in by_key or (wl, base, s) not in by_key or not by_key[(wl, base, s)][1]:
                    continue
                (p, pc), (b, bc) = by_key[(wl, ours, s)], by_key[(wl, base, s)]
                target = bc[-1][2]
                t_ours, n_ours = reach(pc, target)
                t_base = b["batches"][-1]["seconds"] if b["batches"] else math.nan
                t_base_reach = reach(bc, target)[0]
                ours_best = pc[-1][2] if pc else math.inf
                rows.append({
                    "seed": s,
                    "baseline_best_ms": target * 1e3,
                    "ours_best_ms": ours_best * 1e3,
                    "final_ratio": ours_best / target,
                    "ours_seconds_to_reach": t_ours,
                    "ours_trials_to_reach": n_ours,
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


def format_runs(runs: list[dict]) -> str:
    """Markdown table, one row per run."""
    lines = ["| workload | strategy | seed | best (ms) | GFLOP/s | trials | wall (s) | search s/round | numpy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rs = statistics.mean(r["round_seconds"]) if r["round_seconds"] else float("nan")
        gflops = r.get("flops", 0) / r["best_seconds"] / 1e9 if math.isfinite(r["best_seconds"]) else 0
        lines.append(f"| {r['workload']} | {r['strategy']} | {r['seed']} | {r['best_seconds'] * 1e3:.3f} | "
                     f"{gflops:.1f} | {r['trials']} | {r['wall_seconds']:.0f} | {rs:.2f} | "
                     f"{'ok' if r['numpy_ok'] else 'FAIL'} (err {r['max_abs_error']}) |")
    return "\n".join(lines)


def format_summary(summary: dict) -> str:
    """Markdown table of the speed-ups, one row per seed and a median row per comparison."""
    lines = ["| comparison | seed | baseline best (ms) | ours best (ms) | ours s (trials) to reach | "
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


def format_report(runs: list[dict], summaries: dict[str, dict]) -> str:
    """The runs table, then one speed-up table per view ("measured", "remeasured")."""
    titles = {"measured": "Speed-ups from the latencies measured while tuning",
              "remeasured": "Speed-ups from re-measured latencies (decisive programs of every run, "
                            "built once, measured round-robin, median of passes)"}
    parts = [format_runs(runs)]
    for view, summary in summaries.items():
        parts += [f"**{titles.get(view, view)}**", format_summary(summary)]
    return "\n\n".join(parts)


def compare(workloads: list, strategies: list[str], *, trials: int, seeds: list[int],
            trials_per_iter: int, work_root: str | None = None, progress: bool = True,
            pruner_kwargs: dict | None = None, remeasure_passes: int = 5, pacm_checkpoint: str | None = None,
            target=None, runner="local", space="post-order-apply", log=print) -> tuple[list[dict], dict[str, dict]]:
    """Run every (workload, seed, strategy) in one process and summarize.

    ``workloads`` are names (:data:`.workloads.WORKLOADS`) or :class:`.workloads.Workload` objects;
    ``target`` (default: this CPU), ``runner`` and ``space`` apply to every run. Returns the runs
    and the summaries: "measured" (the tuning-time latencies) and, unless ``remeasure_passes`` is 0,
    "remeasured" (see :mod:`.remeasure`, local CPU runs only).
    """
    import logging

    import tvm.s_tir.tensor_intrin  # noqa: F401  (pay the 20-50 s import once, before any clock starts)

    from .remeasure import curve, remeasure_runs
    from .workloads import get_workload

    if progress:  # the tqdm bars replace MetaSchedule's per-batch console tables (full logs stay in work_dir)
        logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    work_root = work_root or tempfile.mkdtemp(prefix="pruner_ms_compare_")
    runs = []
    for wl in workloads:
        wl = get_workload(wl) if isinstance(wl, str) else wl
        wl_name = wl.name
        wl_runs = []
        for seed in seeds:
            for strategy in strategies:
                wd = os.path.join(work_root, wl_name, strategy, str(seed))
                run = run_one(wl, strategy, trials=trials, seed=seed, trials_per_iter=trials_per_iter,
                              work_dir=wd, progress=progress, pruner_kwargs=pruner_kwargs,
                              pacm_checkpoint=pacm_checkpoint, target=target, runner=runner, space=space)
                run["flops"], run["work_dir"] = wl.flops, wd
                wl_runs.append(run)
                log(f"{wl_name} {strategy} seed={seed}: best {run['best_seconds'] * 1e3:.3f} ms after "
                    f"{run['trials']} trials, {run['wall_seconds']:.0f} s, numpy {'ok' if run['numpy_ok'] else 'FAIL'}")
        if remeasure_passes > 0:
            per_run = remeasure_runs(wl, [(r, r["work_dir"]) for r in wl_runs], passes=remeasure_passes, log=log)
            for i, r in enumerate(wl_runs):
                r["remeasured"] = per_run[i]
        runs += wl_runs
    summaries = {"measured": summarize(runs)}
    if remeasure_passes > 0:
        summaries["remeasured"] = summarize(runs, curves=[curve(r["remeasured"], "remeasured") for r in runs])
    return runs, summaries


def save(path: str, runs: list[dict], summaries: dict, meta: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "summaries": summaries, "runs": runs}, f, indent=1, default=str)
