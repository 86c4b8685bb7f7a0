"""Benchmark suites (``configs/suites/*.json``): every workload and model, every strategy and seed, in
one run, written as JSON, a Markdown table and tuning-curve PNGs.

A suite file holds ``workloads`` (``{"op", "args", "name"?}``, see
:func:`~pruner_ms.bench.workloads.workload_from_spec`), optional ``models`` (names from
:mod:`~pruner_ms.bench.models`, tuned end to end), the ``target`` (``"host"`` for this CPU, or a dict
or tag), an optional ``space`` and default ``trials`` / ``trials_per_iter``.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import time

from ..hardware.paths import configs_dir


class SuiteError(ValueError):
    """A suite that cannot be loaded or run as given."""


def suite_path(name_or_path: str) -> str:
    if os.path.exists(name_or_path):
        return name_or_path
    path = os.path.join(configs_dir(), "suites", f"{name_or_path}.json")
    if not os.path.exists(path):
        names = sorted(f[:-5] for f in os.listdir(os.path.join(configs_dir(), "suites")) if f.endswith(".json"))
        raise SuiteError(f"no suite {name_or_path!r}: give a JSON file or one of {', '.join(names)}")
    return path


def load_suite(name_or_path: str) -> dict:
    path = suite_path(name_or_path)
    try:
        with open(path, encoding="utf-8") as f:
            suite = json.load(f)
    except ValueError as err:
        raise SuiteError(f"{path} is not valid JSON: {err}") from None
    if not suite.get("workloads") and not suite.get("models"):
        raise SuiteError(f"{path} lists no workloads and no models")
    suite.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    return suite


def suite_target(suite: dict):
    from ..hardware import host_cpu_spec
    from ..integration.workarounds import normalize_target

    target = suite.get("target", "host")
    if target == "host":
        return normalize_target(host_cpu_spec().target())
    if isinstance(target, str) and "/" in target:  # a tag: attach this machine as the host
        import tvm

        return tvm.target.Target(target, host=host_cpu_spec().target())
    return normalize_target(target)


def run_suite(suite: dict, *, strategies: list[str], seeds: list[int], out_dir: str, trials: int | None = None,
              trials_per_iter: int | None = None, runner="local", progress: bool = True,
              remeasure_passes: int = 0, include_models: bool = True, only: list[str] | None = None,
              log=print) -> dict:
    """Run a suite and write ``suite.json``, ``suite.md`` and ``curves/*.png`` under ``out_dir``."""
    from ..integration.cuda import TENSOR_CORE_SPACE, check_runner, tensor_core_space
    from ..integration.runners import make_runner
    from .compare import compare
    from .workloads import workload_from_spec

    target = suite_target(suite)
    runner = make_runner(runner)
    check_runner(target, runner)
    space = suite.get("space", "post-order-apply")
    if space == TENSOR_CORE_SPACE:
        space = tensor_core_space()
    trials = trials or int(suite.get("trials", 128))
    trials_per_iter = trials_per_iter or int(suite.get("trials_per_iter", 32))
    workloads = [workload_from_spec(spec) for spec in suite.get("workloads", [])]
    if only:
        workloads = [w for w in workloads if any(o in w.name for o in only)]
    os.makedirs(out_dir, exist_ok=True)
    start = time.time()
    runs, summaries = [], {}
    if workloads:
        runs, summaries = compare(
            workloads, strategies, trials=trials, seeds=seeds, trials_per_iter=trials_per_iter,
            work_root=os.path.join(out_dir, "work"), progress=progress, remeasure_passes=remeasure_passes,
            target=target, runner=runner, space=space, log=log)
    models = []
    if include_models and str(target.kind.name) == "llvm":
        for spec in suite.get("models", []):
            if only and not any(o in spec["model"] for o in only):
                continue
            models += run_model(spec, strategies, seeds, target, out_dir, runner=runner, progress=progress, log=log)
    result = {"suite": suite.get("name"), "target": str(target), "strategies": strategies, "seeds": seeds,
              "trials": trials, "trials_per_iter": trials_per_iter, "seconds": time.time() - start,
              "runs": runs, "summaries": summaries, "models": models}
    with open(os.path.join(out_dir, "suite.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(out_dir, "suite.md"), "w", encoding="utf-8") as f:
        f.write(format_suite(result) + "\n")
    from .plots import plot_curves

    result["plots"] = plot_curves(runs, os.path.join(out_dir, "curves"), log=log)
    return result


def run_model(spec: dict, strategies: list[str], seeds: list[int], target, out_dir: str, *, runner="local",
              progress: bool = True, log=print) -> list[dict]:
    """Tune a suite model end to end with each strategy; tuned latency, tuning time, error vs torch."""
    from ..integration.relax import compile_model
    from ..integration.timeline import Timeline, TimelineCallback
    from .compare import make_strategy
    from .models import load_model

    out = []
    model, inputs = load_model(spec["model"])
    trials = int(spec.get("trials", 128))
    for seed in seeds:
        for name in strategies:
            strategy, cost_model = make_strategy(name, int(target.attrs.get("num-cores", 0) or os.cpu_count() or 1))
            timeline = Timeline(trials, progress=progress, desc=f"{spec['model']} {name} seed={seed}")
            report = compile_model(
                model, inputs, target, os.path.join(out_dir, "work", spec["model"], name, str(seed)),
                max_trials_global=trials, num_trials_per_iter=int(spec.get("trials_per_iter", 32)),
                strategy=strategy, cost_model=cost_model, runner=runner, seed=seed,
                callbacks=[TimelineCallback(timeline)])
            timeline.close()
            row = {"model": spec["model"], "strategy": name, "seed": seed, "trials": trials,
                   "tuning_seconds": report.tuning_seconds, "tuned_ms": _ms(report.tuned_seconds),
                   "untuned_ms": _ms(report.untuned_seconds), "torch_ms": _ms(report.torch_seconds),
                   "max_abs_error": report.max_abs_error, "untuned_tasks": report.untuned_tasks,
                   "tasks": [t.__dict__ for t in report.tasks]}
            log(f"{spec['model']} {name} seed={seed}: tuned {row['tuned_ms']:.3f} ms (untuned {row['untuned_ms']:.3f}, "
                f"torch {row['torch_ms']:.3f}) in {report.tuning_seconds:.0f} s, max abs error {report.max_abs_error:.2g}")
            out.append(row)
    return out


def _ms(seconds):
    return None if seconds is None else seconds * 1e3


def format_suite(result: dict) -> str:
    """One row per workload and strategy: final latency, speed-up to quality vs each baseline, trials."""
    runs, summary = result["runs"], result["summaries"].get("measured", {})
    lines = [(f"# Suite `{result['suite']}`: {', '.join(result['strategies'])}; seeds {result['seeds']}; "
              f"{result['trials']} trials per workload ({result['trials_per_iter']} per round)"), ""]
    if runs:
        bases = sorted({r["strategy"] for r in runs if not r["strategy"].startswith("pruner")})
        head = ["workload", "strategy", "final best (ms), median of seeds", "GFLOP/s"]
        for b in bases:
            head += [f"time-to-quality speed-up vs {b} (median)", f"trials to reach {b}'s final (per seed)"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for wl in sorted({r["workload"] for r in runs}, key=lambda w: [r["workload"] for r in runs].index(w)):
            for strat in sorted({r["strategy"] for r in runs if r["workload"] == wl}):
                mine = [r for r in runs if r["workload"] == wl and r["strategy"] == strat]
                best = statistics.median(r["best_seconds"] for r in mine)
                gflops = mine[0].get("flops", 0) / best / 1e9 if math.isfinite(best) and best > 0 else 0.0
                cells = [wl, strat, f"{best * 1e3:.3f}", f"{gflops:.1f}"]
                for b in bases:
                    item = summary.get(f"{wl} vs {b}") if strat == "pruner" else summary.get(f"{wl} {strat} vs {b}")
                    if item is None:
                        cells += ["", ""]
                        continue
                    trials = ", ".join(str(r["ours_trials_to_reach"]) if r["ours_seconds_to_reach"] is not None
                                       else "not reached" for r in item["seeds"])
                    cells += [f"**{item['median_speedup']:.2f}x**", trials]
                lines.append("| " + " | ".join(cells) + " |")
    if result.get("models"):
        lines += ["", ("| model | strategy | seed | tuned (ms) | untuned (ms) | torch eager (ms) | tuning (s) | "
                       "max abs error | untuned tasks |"), "|---|---|---|---|---|---|---|---|---|"]
        for m in result["models"]:
            lines.append(f"| {m['model']} | {m['strategy']} | {m['seed']} | {_fmt(m['tuned_ms'])} | "
                         f"{_fmt(m['untuned_ms'])} | {_fmt(m['torch_ms'])} | {m['tuning_seconds']:.0f} | "
                         f"{_fmt(m['max_abs_error'], '.2g')} | {', '.join(m['untuned_tasks']) or 'none'} |")
    return "\n".join(lines)


def _fmt(value, spec: str = ".3f") -> str:
    return "" if value is None else format(value, spec)
