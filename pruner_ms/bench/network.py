"""Whole-network benchmarks: a model tuned end to end by a strategy and a task scheduler.

Each run tunes every task of the model in a fresh work_dir with the same total trial budget, then
compiles, runs and checks the model against torch (:func:`~pruner_ms.integration.relax.compile_model`).
Its tuning curve is the network's *weighted latency* after each measured batch,
``sum(task weight x best latency of the task so far)`` (what MetaSchedule's task table calls "Total
latency"), defined once every task has a valid program; the end-to-end latency of the compiled model
(``tuned_ms``) is measured at the end only. Time-to-quality compares the curves: the baseline's whole
tuning time over the time the other run needs to reach the baseline's final weighted latency.

A row is labelled ``strategy/task_scheduler`` (``default/gradient`` is MetaSchedule's own: evolutionary
search, XGBoost, the gradient scheduler); ``zero-measure`` is the compile with zero measurements
(:func:`~pruner_ms.integration.relax.draft_model`), whose "tuning" time is the drafting.
"""
from __future__ import annotations

import math
import os
import statistics

ZERO_MEASURE = "zero-measure"
BASELINE = "default/gradient"


def row_label(strategy: str, task_scheduler: str | None) -> str:
    """``strategy/task_scheduler``, or ``zero-measure``."""
    return strategy if strategy == ZERO_MEASURE else f"{strategy}/{task_scheduler or 'gradient'}"


def weighted_latency_curve(batches: list[dict], weights: list[float]) -> list[tuple[float, int, float]]:
    """(seconds, trials, weighted latency in seconds) after each batch of a network's run, from the
    timeline's batches (each with its ``task`` index into ``weights``); points start once every task
    has a valid best."""
    best = [math.inf] * len(weights)
    curve = []
    for b in batches:
        task = b.get("task")
        if task is None or not 0 <= task < len(weights):
            raise ValueError(f"batch at {b.get('seconds')} s has task {task!r}, not one of the {len(weights)} "
                             "tasks; the curve needs the timeline of a run that tuned every task")
        best[task] = min([best[task], *b["latencies"]])
        if all(math.isfinite(x) for x in best):
            curve.append((b["seconds"], b["trials"], sum(w * x for w, x in zip(weights, best))))
    return curve


def model_runs(spec: dict, strategies: list[str], *, task_schedulers=None, zero_measure=None) -> list[tuple]:
    """The (strategy, task scheduler) pairs :func:`run_model` makes for a model entry, the
    zero-measurement compile last as ``("zero-measure", None)`` (see there)."""
    zero_measure = bool(spec.get("zero_measure", False) if zero_measure is None else zero_measure)
    if spec.get("runs") and not task_schedulers:  # the entry's own list, for the strategies asked for
        configs = [(s, ts or "gradient") for s, _, ts in (label.partition("/") for label in spec["runs"])
                   if s in strategies]
    else:
        schedulers = list(task_schedulers or spec.get("task_schedulers") or ["gradient"])
        configs = [(s, ts) for s in strategies for ts in schedulers]
    return configs + ([(ZERO_MEASURE, None)] if zero_measure else [])


def run_model(spec: dict, strategies: list[str], seeds: list[int], target, out_dir: str, *, runner="local",
              task_schedulers: tuple[str, ...] | None = None, zero_measure: bool | None = None,
              progress: bool = True, done=(), log=print) -> list[dict]:
    """Tune a suite model end to end with each strategy and task scheduler (and, with
    ``zero_measure``, compile it once per seed with zero measurements); one row per run.

    ``spec``: ``model`` (a :mod:`~pruner_ms.bench.models` name), ``trials`` (total), ``trials_per_iter``,
    ``trials_per_task`` (a task's cap; default: an even share, which leaves a task scheduler nothing to
    decide), ``task_schedulers`` and ``zero_measure`` (defaults for the keywords of the same names:
    ``("gradient",)`` and False), or instead of ``task_schedulers`` the ``runs`` to make, as labels
    (``["default/gradient", "pruner/headroom", ...]``; those whose strategy is not in ``strategies``
    are left out, and ``task_schedulers`` given here overrides them: every strategy with each
    scheduler). The order of the runs alternates with the seed
    (:func:`~pruner_ms.bench.compare.run_order`); ``(model, label, seed)`` keys in ``done`` are not run
    again.
    """
    from ..integration.relax import compile_model
    from ..integration.timeline import Timeline, TimelineCallback, TimedStrategy
    from ..task_scheduler import make_task_scheduler
    from .compare import check_fresh_work_dir, make_strategy, run_order
    from .models import load_model

    configs = model_runs(spec, strategies, task_schedulers=task_schedulers, zero_measure=zero_measure)
    for _, name in configs:
        if name is not None:
            make_task_scheduler(name)  # an unknown name fails before anything runs
    labels = {row_label(s, ts): (s, ts) for s, ts in configs}
    out = []
    model, inputs = load_model(spec["model"])
    trials = int(spec.get("trials", 128))
    per_iter = int(spec.get("trials_per_iter", 32))
    cores = int(target.attrs.get("num-cores", 0) or os.cpu_count() or 1)
    for i, seed in enumerate(seeds):
        for pos, label in enumerate(run_order(list(labels), i)):
            strategy_name, scheduler = labels[label]
            if (spec["model"], label, int(seed)) in done:
                log(f"{spec['model']} {label} seed={seed}: already in the merged results; not run again")
                continue
            work_dir = os.path.join(out_dir, "work", spec["model"], label.replace("/", "-"), str(seed))
            check_fresh_work_dir(work_dir)
            timeline = Timeline(trials, progress=progress and strategy_name != ZERO_MEASURE,
                                desc=f"{spec['model']} {label} seed={seed}")
            if strategy_name == ZERO_MEASURE:
                report = compile_model(model, inputs, target, work_dir, max_trials_global=trials, seed=seed,
                                       zero_measure=True)
            else:
                strategy, cost_model = make_strategy(strategy_name, cores)
                report = compile_model(
                    model, inputs, target, work_dir, max_trials_global=trials,
                    max_trials_per_task=spec.get("trials_per_task"), num_trials_per_iter=per_iter,
                    strategy=TimedStrategy(strategy, timeline), cost_model=cost_model, runner=runner, seed=seed,
                    callbacks=[TimelineCallback(timeline)], task_scheduler=make_task_scheduler(scheduler))
            timeline.close()
            weights = [t.weight for t in report.tasks]
            curve = weighted_latency_curve(timeline.batches, weights) if timeline.batches else []
            row = {"model": spec["model"], "strategy": strategy_name, "task_scheduler": scheduler, "label": label,
                   "seed": seed, "order": pos, "trials": sum(t.trials for t in report.tasks),
                   "tuning_seconds": report.tuning_seconds, "tuned_ms": _ms(report.tuned_seconds),
                   "untuned_ms": _ms(report.untuned_seconds), "torch_ms": _ms(report.torch_seconds),
                   "max_abs_error": report.max_abs_error, "untuned_tasks": report.untuned_tasks,
                   # the drafts' latencies are the analyzer's estimates: only the compiled model is measured
                   "weighted_ms": None if strategy_name == ZERO_MEASURE else
                   _ms(sum(t.weight * (t.best_seconds or math.inf) for t in report.tasks)),
                   "curve": [[s, n, x * 1e3] for s, n, x in curve], "round_seconds": timeline.round_seconds,
                   "tasks": [t.__dict__ for t in report.tasks]}
            log(f"{spec['model']} {label} seed={seed}: tuned {_fmt(row['tuned_ms'])} ms (untuned "
                f"{_fmt(row['untuned_ms'])}, torch {_fmt(row['torch_ms'])}), weighted {_fmt(row['weighted_ms'])} ms, "
                f"in {report.tuning_seconds:.0f} s, max abs error {_fmt(report.max_abs_error, '.2g')}")
            out.append(row)
    return out


def row_key(row: dict) -> tuple[str, str, int]:
    """(model, label, seed); rows written before task schedulers were recorded count as ``gradient``."""
    return row["model"], row.get("label") or row_label(row["strategy"], row.get("task_scheduler")), int(row["seed"])


def summarize_models(rows: list[dict], baseline: str = BASELINE) -> dict:
    """Per model and label, against ``baseline`` on the same seeds: time-to-quality speed-up on the
    weighted-latency curve (median and per seed; 0 where never reached), final end-to-end latency
    ratio (compiled model, ``tuned_ms``) and final weighted-latency ratio. ``zero-measure`` has no
    measured curve: its drafting time counts as reaching the baseline if its compiled model is at
    least as fast as the baseline's."""
    from .remeasure import reach

    by_key = {row_key(r): r for r in rows}
    out: dict = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        labels = list(dict.fromkeys(row_key(r)[1] for r in rows if r["model"] == model))
        for label in labels:
            if label == baseline:
                continue
            per_seed = []
            for (m, lab, seed), base in by_key.items():
                if m != model or lab != baseline or (model, label, seed) not in by_key or not base["curve"]:
                    continue
                ours = by_key[(model, label, seed)]
                goal = base["curve"][-1][2]
                if label == ZERO_MEASURE:  # nothing measured: the compiled model against the baseline's
                    e2e = _ratio(ours["tuned_ms"], base["tuned_ms"])
                    t = ours["tuning_seconds"] if e2e <= 1.0 else None
                else:
                    t = reach([tuple(p) for p in ours["curve"]], goal)[0]
                base_seconds = base["curve"][-1][0]
                per_seed.append({
                    "seed": seed, "speedup": base_seconds / t if t else 0.0, "seconds_to_reach": t,
                    "baseline_seconds": base_seconds,
                    "e2e_ratio": _ratio(ours["tuned_ms"], base["tuned_ms"]),
                    "weighted_ratio": _ratio(ours["weighted_ms"], base["weighted_ms"]),
                })
            if per_seed:
                out[f"{model}: {label} vs {baseline}"] = {
                    "median_speedup": statistics.median(s["speedup"] for s in per_seed),
                    "median_e2e_ratio": statistics.median(s["e2e_ratio"] for s in per_seed),
                    "seeds": per_seed,
                }
    return out


def format_models(rows: list[dict], baseline: str = BASELINE) -> str:
    """The model table: one row per run, then the speed-ups against ``baseline``."""
    lines = ["| model | strategy / task scheduler | seed | tuned (ms) | weighted (ms) | untuned (ms) | torch eager (ms) "
             "| tuning (s) | trials | max abs error | untuned tasks |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in rows:
        lines.append(f"| {m['model']} | {row_key(m)[1]} | {m['seed']} | {_fmt(m['tuned_ms'])} | "
                     f"{_fmt(m.get('weighted_ms'))} | {_fmt(m['untuned_ms'])} | {_fmt(m['torch_ms'])} | "
                     f"{m['tuning_seconds']:.0f} | {m.get('trials', '')} | {_fmt(m['max_abs_error'], '.2g')} | "
                     f"{', '.join(m['untuned_tasks']) or 'none'} |")
    summary = summarize_models(rows, baseline)
    if summary:
        lines += ["", f"Time to reach the weighted latency {baseline} ends with (its tuning time / ours; 0: never), "
                  "and the compiled model's latency against its:", "",
                  "| comparison | median speed-up (per seed) | end-to-end latency ratio (per seed) |", "|---|---|---|"]
        for key, item in summary.items():
            speedups = ", ".join(f"{s['speedup']:.2f}" for s in item["seeds"])
            ratios = ", ".join(_fmt(s["e2e_ratio"]) for s in item["seeds"])
            lines.append(f"| {key} | **{item['median_speedup']:.2f}x** ({speedups}) | "
                         f"{_fmt(item['median_e2e_ratio'])} ({ratios}) |")
    return "\n".join(lines)


def _ratio(a, b) -> float:
    return a / b if a is not None and b and math.isfinite(a) and math.isfinite(b) else math.nan


def _ms(seconds):
    return None if seconds is None or not math.isfinite(seconds) else seconds * 1e3


def _fmt(value, spec: str = ".3f") -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)
