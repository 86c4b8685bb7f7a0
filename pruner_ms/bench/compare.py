"""Side-by-side tuning comparisons: same workload, trial budget, seed, builder and runner."""
from __future__ import annotations

import json
import logging
import math
import os
import statistics
import tempfile
import time

import numpy as np

logger = logging.getLogger("pruner_ms")

STRATEGIES = ("pruner", "pruner-paper", "pruner-pacm", "pruner-moa", "default", "default-short-warmup",
              "evolutionary-analyzer", "evolutionary-draft")


def _choose_from() -> str:
    """The list of strategies and how to pass PrunerSearch options, for error messages."""
    return (f"choose from {', '.join(STRATEGIES)} "
            "(PrunerSearch options follow as +key=value, e.g. pruner+draft_every=4)")


def _bench_target(target):
    """The target a benchmark tunes for: ``target`` checked, or this CPU's (``host_cpu_spec().target()``)."""
    from ..hardware import host_cpu_spec
    from ..integration.workarounds import normalize_target

    return normalize_target(target if target is not None else host_cpu_spec().target())


def split_strategy(name: str) -> tuple[str, dict]:
    """A strategy name and its keyword options: ``"pruner+draft_every=4+local_parents=0"`` is ``pruner``
    with ``draft_every=4, local_parents=0`` (values read as JSON, else kept as text), so an ablation is
    a strategy of its own in every table and work dir. ``pruner*`` names take PrunerSearch keywords,
    ``evolutionary-draft`` EvolutionaryDraftSearch's.

    Raises
    ------
    ValueError
        An unknown base name, options on a strategy that takes none, an option that is not
        ``key=value`` or a key the strategy does not take.
    """
    import inspect

    from ..strategy import EvolutionaryDraftSearch, PrunerSearch

    base, *parts = name.split("+")
    if base not in STRATEGIES:
        raise ValueError(f"unknown strategy {base!r}; {_choose_from()}")
    cls = PrunerSearch if base.startswith("pruner") else EvolutionaryDraftSearch if base == "evolutionary-draft" else None
    if parts and cls is None:
        raise ValueError(f"strategy {name!r}: +key=value options are PrunerSearch or EvolutionaryDraftSearch "
                         f"keywords; {base!r} takes none")
    keywords = set(inspect.signature(cls._cls.__init__).parameters) - {"self"} if cls is not None else set()
    options = {}
    for part in parts:
        key, sep, text = part.partition("=")
        if not sep or key not in keywords:
            raise ValueError(f"strategy {name!r}: {part!r} is not key=value with a {cls._cls.__name__} keyword "
                             f"({', '.join(sorted(keywords))})")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return base, options


def check_strategies(names) -> None:
    """Raise ``ValueError`` naming every entry of ``names`` that is not a strategy (see :func:`split_strategy`)."""
    unknown = [s for s in names if s.split("+")[0] not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; {_choose_from()}")
    for name in names:
        split_strategy(name)


class ProtocolError(ValueError):
    """A comparison that would not be fair as asked: a used work dir, or results that cannot be merged."""


def make_strategy(name: str, cores: int, pruner_kwargs: dict | None = None, pacm_checkpoint: str | None = None):
    """(strategy, cost_model) for a named configuration, as tune_tir would receive them.

    ``pruner`` verifies with XGBoost, ``pruner-paper`` too but with the paper's verify stage
    (:data:`~pruner_ms.strategy.pruner_search.PAPER_VERIFY`, overridden by ``pruner_kwargs``),
    ``pruner-pacm`` with a fresh PaCM trained online, ``pruner-moa`` with PaCM adapted by MoA from
    ``pacm_checkpoint`` (an offline-trained model). Baselines: ``default`` (MetaSchedule's
    evolutionary search with XGBoost), ``default-short-warmup`` (the same without XGBoost warm-up),
    ``evolutionary-analyzer`` (the evolutionary search with the symbolic analyzer as its cost model:
    the analyzer without Draft-then-Verify) and ``evolutionary-draft``
    (:class:`~pruner_ms.strategy.EvolutionaryDraftSearch`: those drafts verified by XGBoost). A
    ``pruner*`` name may carry PrunerSearch options (``pruner+draft_every=4``, :func:`split_strategy`;
    they override ``pruner_kwargs``), ``evolutionary-draft`` its own (``+genetic_num_iters=2``).
    """
    from tvm.s_tir import meta_schedule as ms

    from ..strategy import PrunerSearch

    name, options = split_strategy(name)
    pruner_kwargs = {**(pruner_kwargs or {}), **options}
    if name in ("pruner", "pruner-paper"):  # XGBoost without its random warm-up (verify_cost_model)
        from ..integration.tune import verify_cost_model
        from ..strategy.pruner_search import PAPER_VERIFY

        strategy = PrunerSearch(**{**(PAPER_VERIFY if name == "pruner-paper" else {}), **pruner_kwargs})
        return strategy, verify_cost_model("xgb", strategy, num_tuning_cores=cores)
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
    if name == "evolutionary-analyzer":
        from ..cost_model import SymbolicCostModel

        return ms.search_strategy.EvolutionarySearch(), SymbolicCostModel()
    if name == "evolutionary-draft":  # the same drafts, verified by XGBoost (no warm-up, as PrunerSearch's)
        from ..integration.tune import verify_cost_model
        from ..strategy import EvolutionaryDraftSearch

        strategy = EvolutionaryDraftSearch(**options)
        return strategy, verify_cost_model("xgb", strategy, num_tuning_cores=cores)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")


def run_one(workload, strategy: str, *, trials: int, seed: int, trials_per_iter: int, work_dir: str,
            progress: bool = True, pruner_kwargs: dict | None = None, target=None, builder=None,
            runner="local", space="post-order-apply", cores: int | None = None, check: bool = True,
            pacm_checkpoint: str | None = None, extra_callbacks: list | None = None, stop=None) -> dict:
    """Tune ``workload`` with one strategy; return its timeline, best latency and numpy check.

    ``target`` defaults to this CPU (``host_cpu_spec().target()``) and ``builder`` to the builder
    :func:`pruner_ms.tune_tir` picks for the target; ``runner`` and ``space`` go to ``ms.tune_tir``.
    ``extra_callbacks`` are measure callbacks run after the default ones and the timeline's. ``stop``
    (a callable, checked before each search round) ends the run early when it returns true
    (:class:`~pruner_ms.bench.stop_when.StopWhen`); the result's ``stopped_early`` says whether it did.
    """
    from tvm.s_tir import meta_schedule as ms

    from ..hardware import host_cpu_spec
    from ..integration.timeline import TimedStrategy, Timeline, TimelineCallback
    from ..integration.runners import start_runner
    from ..integration.tune import default_builder
    from ..integration.workarounds import meta_schedule_logging, tensor_intrinsics_for

    target = _bench_target(target)
    cores = cores or host_cpu_spec().cores
    strat, cost_model = make_strategy(strategy, cores, pruner_kwargs, pacm_checkpoint)
    stopper = None
    if stop is not None:
        from .stop_when import StopWhen

        strat = stopper = StopWhen(strat, stop)
    timeline = Timeline(trials, progress=progress, desc=f"{workload.name} {strategy} seed={seed}")
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [TimelineCallback(timeline)]
    callbacks += list(extra_callbacks or [])
    builder = builder if builder is not None else default_builder(target, max_workers=cores)
    timeline.restart()
    # with progress bars, they replace MetaSchedule's per-batch console tables (full logs stay in work_dir)
    with meta_schedule_logging(logging.WARNING if progress else None), tensor_intrinsics_for(target):
        db = ms.tune_tir(
            workload.func, target, work_dir, max_trials_global=trials, num_trials_per_iter=trials_per_iter,
            builder=builder, runner=start_runner(runner), space=space, cost_model=cost_model,
            strategy=TimedStrategy(strat, timeline), measure_callbacks=callbacks, seed=seed,
            num_tuning_cores=cores,
        )
    wall = time.perf_counter() - timeline.start
    timeline.close()
    result = {"numpy_ok": True, "max_abs_error": None}
    if check:
        try:
            result = check_against_numpy(db, workload, target)
        except Exception as err:  # noqa: BLE001  (the tuning data stays; the failed check is recorded)
            error = f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[-1]}"
            logger.warning("%s %s seed=%s: the numpy check of the best program failed: %s",
                           workload.name, strategy, seed, error)
            result = {"numpy_ok": False, "max_abs_error": None, "error": error}
    return {
        "workload": workload.name, "strategy": strategy, "seed": seed, "trials": timeline.trials,
        "wall_seconds": wall, "best_seconds": timeline.best, "batches": timeline.batches,
        "round_seconds": timeline.round_seconds, "round_profiles": timeline.round_profiles,
        # stopped by ``stop`` with trials still to go (MetaSchedule may ask once more after the last batch)
        "stopped_early": bool(stopper is not None and stopper.stopped and timeline.trials < trials), **result,
    }


def check_against_numpy(db, workload, target) -> dict:
    """Compile the best record, run it on the target's device and compare with the numpy reference."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from ..integration.workarounds import compile_with_wmma_workaround

    sch = ms.tir_integration.compile_tir(db, workload.func, target)
    if sch is None:
        return {"numpy_ok": False, "max_abs_error": None, "error": "no valid record"}
    ex, _ = compile_with_wmma_workaround(sch.mod, target)  # as CudaBuilder built it
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
    latencies measured while tuning) lets re-measured latencies decide instead. Each comparison also
    reports the wall time per measured trial of both (``wall_seconds / trials``) and its ratio, the
    best latency of the first measured batch of both (tuning-time) and its ratio, and the mean over
    rounds of each number in our strategy's ``round_profiles`` (``ours_round_profile``).
    """
    from .remeasure import reach

    curves = curves if curves is not None else [batch_curve(r) for r in runs]
    out: dict = {}
    by_key = {(r["workload"], r["strategy"], r["seed"]): (r, c) for r, c in zip(runs, curves)}
    workloads = sorted({r["workload"] for r in runs})
    for wl in workloads:
        seeds = sorted({r["seed"] for r in runs if r["workload"] == wl})
        for base in bases:
            rows, profiles = [], []
            for s in seeds:
                if (wl, ours, s) not in by_key or (wl, base, s) not in by_key or not by_key[(wl, base, s)][1]:
                    continue
                (p, pc), (b, bc) = by_key[(wl, ours, s)], by_key[(wl, base, s)]
                target = bc[-1][2]
                t_ours, n_ours = reach(pc, target)
                t_base = b["batches"][-1]["seconds"] if b["batches"] else math.nan
                t_base_reach = reach(bc, target)[0]
                ours_best = pc[-1][2] if pc else math.inf
                spt_ours, spt_base = seconds_per_trial(p), seconds_per_trial(b)
                first_ours, first_base = first_batch_best(p), first_batch_best(b)
                profiles += p.get("round_profiles") or []
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
                    "ours_s_per_trial": spt_ours,
                    "baseline_s_per_trial": spt_base,
                    "s_per_trial_ratio": _ratio(spt_ours, spt_base),
                    "ours_first_batch_ms": first_ours * 1e3,
                    "baseline_first_batch_ms": first_base * 1e3,
                    "first_batch_ratio": _ratio(first_ours, first_base),
                    "ours_round_profile": profile_means(p.get("round_profiles") or []),
                })
            if rows:
                out[f"{wl} vs {base}"] = {
                    "median_speedup": statistics.median(r["speedup"] for r in rows),
                    "median_speedup_vs_reach": statistics.median(r["speedup_vs_reach"] for r in rows),
                    "median_final_ratio": statistics.median(r["final_ratio"] for r in rows),
                    "median_ours_s_per_trial": _median(r["ours_s_per_trial"] for r in rows),
                    "median_baseline_s_per_trial": _median(r["baseline_s_per_trial"] for r in rows),
                    "median_s_per_trial_ratio": _median(r["s_per_trial_ratio"] for r in rows),
                    "median_first_batch_ratio": _median(r["first_batch_ratio"] for r in rows),
                    "ours_round_profile": profile_means(profiles),
                    "seeds": rows,
                }
    return out


def seconds_per_trial(run: dict) -> float:
    """Wall seconds (search + build + measure) per measured trial; nan for a run that measured nothing."""
    return run["wall_seconds"] / run["trials"] if run.get("trials") else math.nan


def first_batch_best(run: dict) -> float:
    """Best latency of the first measured batch (tuning-time; inf when the run measured nothing valid)."""
    return run["batches"][0]["best"] if run.get("batches") else math.inf


def _ratio(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def _median(values) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(finite) if finite else math.nan


def profile_means(profiles: list) -> dict[str, float]:
    """Mean per key over the rounds that have a profile; only numeric values, only keys present."""
    sums: dict[str, list[float]] = {}
    for prof in profiles:
        for k, v in (prof or {}).items():
            if isinstance(v, (int, float)) and math.isfinite(v):
                sums.setdefault(k, []).append(float(v))
    return {k: statistics.mean(v) for k, v in sums.items()}


def format_profile(profile: dict[str, float]) -> str:
    """``sample_s 0.41, mutate_s 0.2, ...`` (``total_s`` last); empty for no profile."""
    keys = sorted(profile, key=lambda k: (k == "total_s", k))
    return ", ".join(f"{k} {profile[k]:.3g}" for k in keys)


def format_runs(runs: list[dict]) -> str:
    """Markdown table, one row per run (``order``: the run's position among its seed's strategies)."""
    lines = ["| workload | strategy | seed | order | best (ms) | GFLOP/s | trials | wall (s) | search s/round | "
             "numpy |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rs = statistics.mean(r["round_seconds"]) if r["round_seconds"] else float("nan")
        gflops = r.get("flops", 0) / r["best_seconds"] / 1e9 if math.isfinite(r["best_seconds"]) else 0
        order = "" if r.get("order") is None else r["order"] + 1
        lines.append(f"| {r['workload']} | {r['strategy']} | {r['seed']} | {order} | {r['best_seconds'] * 1e3:.3f} | "
                     f"{gflops:.1f} | {r['trials']} | {r['wall_seconds']:.0f} | {rs:.2f} | "
                     f"{'ok' if r['numpy_ok'] else 'FAIL'} (err {r['max_abs_error']}) |")
    return "\n".join(lines)


def format_summary(summary: dict) -> str:
    """Markdown table of the speed-ups, one row per seed and a median row per comparison."""
    lines = ["| comparison | seed | baseline best (ms) | ours best (ms) | ours s (trials) to reach | "
             "baseline total s | baseline s to own best | speed-up | strict speed-up | search s/round ours / base | "
             "wall s/trial ours / base | 1st batch best ours / base (ms) | our round profile (mean) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, item in summary.items():
        for row in item["seeds"]:
            reach = (f"{row['ours_seconds_to_reach']:.0f} ({row['ours_trials_to_reach']})"
                     if row["ours_seconds_to_reach"] is not None else "not reached")
            lines.append(
                f"| {key} | {row['seed']} | {row['baseline_best_ms']:.3f} | {row['ours_best_ms']:.3f} | {reach} | "
                f"{row['baseline_seconds']:.0f} | {row['baseline_seconds_to_own_best']:.0f} | "
                f"{row['speedup']:.2f}x | {row['speedup_vs_reach']:.2f}x | "
                f"{_num(row['ours_round_s'])} / {_num(row['baseline_round_s'])} | "
                f"{_num(row.get('ours_s_per_trial'))} / {_num(row.get('baseline_s_per_trial'))} | "
                f"{_num(row.get('ours_first_batch_ms'), '.3f')} / "
                f"{_num(row.get('baseline_first_batch_ms'), '.3f')} | |")
        lines.append(f"| **{key}: median** | | | | | | | **{item['median_speedup']:.2f}x** | "
                     f"**{item['median_speedup_vs_reach']:.2f}x** | "
                     f"final latency ratio {item['median_final_ratio']:.3f} | "
                     f"ratio {_num(item.get('median_s_per_trial_ratio'), '.2f')} | "
                     f"ratio {_num(item.get('median_first_batch_ratio'), '.3f')} | "
                     f"{format_profile(item.get('ours_round_profile') or {})} |")
    return "\n".join(lines)


def _num(value, spec: str = ".2f") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def format_report(runs: list[dict], summaries: dict[str, dict]) -> str:
    """The runs table, then one speed-up table per view ("measured", "remeasured")."""
    titles = {"measured": "Speed-ups from the latencies measured while tuning",
              "remeasured": "Speed-ups from re-measured latencies (decisive programs of every run, "
                            "built once, measured round-robin in several fresh processes, mean over processes of "
                            "the median of passes)"}
    parts = [format_runs(runs)]
    for view, summary in summaries.items():
        parts += [f"**{titles.get(view, view)}**", format_summary(summary)]
    for wl in mixed_invocations(runs):
        parts.append(f"Warning: {MIXED_WARNING.format(workload=wl)}")
    return "\n\n".join(parts)


MIXED_WARNING = ("the runs of {workload} come from more than one invocation, so their re-measured latencies were "
                 "measured in separate sessions and are not strictly comparable; run all strategies and seeds of a "
                 "workload in one invocation for re-measured numbers")


def run_order(strategies: list[str], seed_index: int) -> list[str]:
    """The order in which one seed runs the strategies: as given for even seed indices, reversed for odd.

    Neither strategy always runs first (on a cold machine) or last (on a warm one).
    """
    return list(strategies) if seed_index % 2 == 0 else list(reversed(strategies))


def run_key(run: dict) -> tuple[str, str, int]:
    """``(workload, strategy, seed)``: what identifies a run when results are merged."""
    return run["workload"], run["strategy"], int(run["seed"])


def mixed_invocations(runs: list[dict]) -> list[str]:
    """Workloads with re-measured runs that come from more than one invocation."""
    seen: dict[str, set] = {}
    for r in runs:
        if r.get("remeasured") is not None:
            seen.setdefault(r["workload"], set()).add(r.get("invocation"))
    return [wl for wl, ids in seen.items() if len(ids) > 1]


def summarize_views(runs: list[dict]) -> dict[str, dict]:
    """Summaries of ``runs``: "measured" (tuning-time latencies) and, when every run carries re-measured
    programs, "remeasured"."""
    from .remeasure import curve

    out = {"measured": summarize(runs)}
    if runs and all(r.get("remeasured") is not None for r in runs):
        out["remeasured"] = summarize(runs, curves=[curve(r["remeasured"], "remeasured") for r in runs])
    return out


def load_for_merge(path: str, expected: dict, *, settings_key: str | None = None) -> dict:
    """An earlier result at ``path`` to merge new runs into (``{}`` when there is no file).

    ``expected`` holds the settings that must match (e.g. trials, trials_per_iter), read from the
    file's top level or from its ``settings_key`` dict (``"meta"`` for :func:`save`'s files).

    Raises
    ------
    ProtocolError
        The file does not parse, or was made with other settings.
    """
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as err:
        raise ProtocolError(f"cannot merge into {path}: not valid JSON ({err}); remove it or choose another --out"
                            ) from None
    have = data.get(settings_key, {}) if settings_key else data
    diff = {k: (have.get(k), v) for k, v in expected.items() if have.get(k) != v}
    if diff:
        detail = ", ".join(f"{k}: {old!r} there, {new!r} now" for k, (old, new) in diff.items())
        raise ProtocolError(f"cannot merge into {path}: it holds results of another set-up ({detail}); runs with "
                            "different budgets are not comparable. Use the same settings, or choose another --out")
    return data


def check_fresh_work_dir(work_dir: str) -> None:
    """Refuse a work dir that exists and is not empty (MetaSchedule would resume from its records)."""
    if os.path.isdir(work_dir) and os.listdir(work_dir):
        raise ProtocolError(
            f"work dir {work_dir} already exists and is not empty: the run would start from another run's tuning "
            "records. Remove it or choose another --work-dir/--out")


def compare(workloads: list, strategies: list[str], *, trials: int, seeds: list[int],
            trials_per_iter: int, work_root: str | None = None, progress: bool = True,
            pruner_kwargs: dict | None = None, remeasure_passes: int = 2, remeasure_processes: int = 5,
            pacm_checkpoint: str | None = None,
            target=None, runner="local", space="post-order-apply", done=(), log=print
            ) -> tuple[list[dict], dict[str, dict]]:
    """Run every (workload, seed, strategy) in one process and summarize.

    ``workloads`` are names (:data:`.workloads.WORKLOADS`) or :class:`.workloads.Workload` objects;
    ``target`` (default: this CPU), ``runner`` and ``space`` apply to every run. Seed number ``i`` (in
    ``seeds`` order) runs the strategies in the given order when ``i`` is even and reversed when it is
    odd (:func:`run_order`); each run records its position as ``run["order"]``. Every run tunes in
    its own ``work_root/<workload>/<strategy>/<seed>``, which must not exist or be empty (default
    ``work_root``: a fresh temporary directory). ``done`` lists ``(workload, strategy, seed)`` keys
    that are not run (already measured in an earlier invocation whose results are being merged).

    Returns the runs and the summaries: "measured" (the tuning-time latencies) and, unless
    ``remeasure_passes`` is 0, "remeasured" (see :mod:`.remeasure`, local CPU runs only; the runs of
    one workload are re-measured together, after all of them are tuned, in ``remeasure_processes``
    fresh processes of ``remeasure_passes`` round-robin passes each).

    Raises
    ------
    ProtocolError
        A run's work dir already holds something; checked for every run before any tuning starts.
    ValueError
        An unknown strategy name.
    """
    from .remeasure import remeasure_runs
    from .workloads import get_workload

    check_strategies(strategies)
    if remeasure_passes > 0 and remeasure_processes < 1:
        raise ValueError(f"remeasure_processes must be >= 1 when re-measuring, got {remeasure_processes}")
    work_root = work_root or tempfile.mkdtemp(prefix="pruner_ms_compare_")
    done = {(str(w), str(s), int(n)) for w, s, n in done}
    plan = []  # per workload: (seed, position, strategy, work_dir) still to run
    for wl in workloads:
        wl = get_workload(wl) if isinstance(wl, str) else wl
        todo = []
        for i, seed in enumerate(seeds):
            for pos, strategy in enumerate(run_order(strategies, i)):
                if (wl.name, strategy, int(seed)) in done:
                    log(f"{wl.name} {strategy} seed={seed}: already in the merged results; not run again")
                    continue
                wd = os.path.join(work_root, wl.name, strategy, str(seed))
                check_fresh_work_dir(wd)
                todo.append((seed, pos, strategy, wd))
        plan.append((wl, todo))
    if not any(todo for _, todo in plan):
        return [], {"measured": {}}

    from ..integration.workarounds import tensor_intrinsics_for

    invocation = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    runs = []
    # the tensor intrinsics the target's rules can name, registered before any clock starts (for the
    # local CPU only the CPU ones: 0.3 s instead of the 30-50 s of all of them)
    with tensor_intrinsics_for(_bench_target(target)):
        for wl, todo in plan:
            wl_runs = []
            for seed, pos, strategy, wd in todo:
                run = run_one(wl, strategy, trials=trials, seed=seed, trials_per_iter=trials_per_iter,
                              work_dir=wd, progress=progress, pruner_kwargs=pruner_kwargs,
                              pacm_checkpoint=pacm_checkpoint, target=target, runner=runner, space=space)
                run.update(flops=wl.flops, work_dir=wd, order=pos, invocation=invocation)
                wl_runs.append(run)
                log(f"{wl.name} {strategy} seed={seed} (position {pos + 1}): best {run['best_seconds'] * 1e3:.3f} ms "
                    f"after {run['trials']} trials, {run['wall_seconds']:.0f} s, "
                    f"numpy {'ok' if run['numpy_ok'] else 'FAIL'}")
            if remeasure_passes > 0 and wl_runs:
                per_run = remeasure_runs(wl, [(r, r["work_dir"]) for r in wl_runs], processes=remeasure_processes,
                                         passes=remeasure_passes, log=log)
                for i, r in enumerate(wl_runs):
                    r.update(remeasured=per_run[i], remeasure_passes=remeasure_passes,
                             remeasure_processes=remeasure_processes)
            runs += wl_runs
    return runs, summarize_views(runs)


def save(path: str, runs: list[dict], summaries: dict, meta: dict) -> None:
    """Write ``{"meta", "summaries", "runs"}`` as JSON at ``path`` (folders made as needed)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "summaries": summaries, "runs": runs}, f, indent=1, default=str)
