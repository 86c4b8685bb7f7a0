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

from ..hardware.paths import config_file, config_files


class SuiteError(ValueError):
    """A suite that cannot be loaded or run as given."""


def suite_path(name_or_path: str) -> str:
    if os.path.exists(name_or_path):
        return name_or_path
    path = config_file("suites", name_or_path)
    if path is None:
        names = [p.stem for p in config_files("suites")]
        raise SuiteError(f"no suite {name_or_path!r}: give a JSON file or one of {', '.join(names)}")
    return str(path)


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


def select_workloads(workloads: list, *, names: list[str] | None = None, only: list[str] | None = None,
                     models: list[str] = ()) -> list:
    """The suite workloads to run.

    Parameters
    ----------
    workloads : list of Workload
        The suite's workloads.
    names : list of str, optional
        Exact names: suite workload names, short names of :data:`.workloads.WORKLOADS` that build a
        suite workload (e.g. ``dwconv-s2``) or suite model names (``models``; kept for the caller).
    only : list of str, optional
        An entry equal to a workload's name selects that workload only; any other entry selects every
        workload whose name contains it.

    Raises
    ------
    SuiteError
        A name in ``names`` is none of the suite's workloads or models.
    """
    from .workloads import WORKLOADS

    by_name = {w.name: w for w in workloads}
    if names:
        chosen = set()
        for n in names:
            full = n if n in by_name or n in models else (WORKLOADS[n]().name if n in WORKLOADS else None)
            if full not in by_name and full not in models:
                raise SuiteError(f"workload {n!r} is not in this suite; its workloads: {', '.join(by_name)}"
                                 + (f"; models: {', '.join(models)}" if models else ""))
            chosen.add(full)
        workloads = [w for w in workloads if w.name in chosen]
    if only:
        exact = {o for o in only if o in by_name}
        subs = [o for o in only if o not in by_name]
        workloads = [w for w in workloads if w.name in exact or any(o in w.name for o in subs)]
    return workloads


def run_suite(suite: dict, *, strategies: list[str], seeds: list[int], out_dir: str, trials: int | None = None,
              trials_per_iter: int | None = None, runner="local", progress: bool = True,
              remeasure_passes: int = 2, remeasure_processes: int = 5, include_models: bool = True,
              only: list[str] | None = None,
              workloads: list[str] | None = None, task_schedulers: list[str] | None = None,
              zero_measure: bool | None = None, log=print) -> dict:
    """Run a suite and write ``suite.json``, ``suite.md`` and ``curves/*.png`` under ``out_dir``.

    Runs follow :func:`~pruner_ms.bench.compare.compare`: strategies alternate their order with the
    seed, every run tunes in a fresh ``out_dir/work/<workload>/<strategy>/<seed>`` and, unless
    ``remeasure_passes`` is 0, the decisive programs of each workload's runs are re-measured together
    (``remeasure_processes`` fresh processes of ``remeasure_passes`` passes each) and the Markdown's
    speed-ups come from those latencies. ``workloads`` (exact names) and ``only``
    (see :func:`select_workloads`) pick a subset. Models run with every strategy and each of
    ``task_schedulers``, plus the zero-measurement compile with ``zero_measure``
    (:func:`~pruner_ms.bench.network.run_model`; ``None`` takes the model entry's own settings).

    Results of several invocations merge: when ``out_dir/suite.json`` exists (same suite, target,
    trials and trials_per_iter), its runs are kept, a (workload, strategy, seed) it already holds is
    not run again, and the files are rewritten for the union, summaries recomputed over all runs.
    Re-measurement happens per invocation, so run all strategies and seeds of one workload in one
    invocation for its re-measured numbers to be comparable (a workload whose runs come from
    several invocations gets a warning).

    Raises
    ------
    ProtocolError
        ``suite.json`` was made with other settings, or a run's work dir exists and is not empty.
    SuiteError
        A name in ``workloads`` is not in the suite.
    """
    from ..integration.runners import check_runner
    from ..integration.tensor_core import TENSOR_CORE_SPACE, tensor_core_space
    from ..integration.runners import make_runner
    from .compare import MIXED_WARNING, compare, load_for_merge, mixed_invocations, run_key, summarize_views
    from .provenance import code_provenance, describe_provenance
    from .workloads import workload_from_spec

    code = code_provenance()
    log(f"running {describe_provenance(code)}")
    target = suite_target(suite)
    local = isinstance(runner, str) and runner == "local"
    if remeasure_passes > 0 and (str(target.kind.name) != "llvm" or not local):
        log("re-measurement needs a local CPU target and runner; the tables use tuning-time latencies")
        remeasure_passes = 0
    runner = make_runner(runner)
    check_runner(target, runner)
    space = suite.get("space", "post-order-apply")
    if space == TENSOR_CORE_SPACE:
        space = tensor_core_space()
    trials = trials or int(suite.get("trials", 128))
    trials_per_iter = trials_per_iter or int(suite.get("trials_per_iter", 32))
    model_names = [m["model"] for m in suite.get("models", [])]
    selected = select_workloads([workload_from_spec(spec) for spec in suite.get("workloads", [])],
                                names=workloads, only=only, models=model_names)
    previous = load_for_merge(os.path.join(out_dir, "suite.json"), {
        "suite": suite.get("name"), "target": str(target), "trials": trials, "trials_per_iter": trials_per_iter})
    if previous:
        log(f"{out_dir}/suite.json holds {len(previous.get('runs', []))} runs and "
            f"{len(previous.get('models', []))} model runs from earlier invocations: merging")
    os.makedirs(out_dir, exist_ok=True)
    start = time.time()
    runs = []
    if selected:
        runs, _ = compare(
            selected, strategies, trials=trials, seeds=seeds, trials_per_iter=trials_per_iter,
            work_root=os.path.join(out_dir, "work"), progress=progress, remeasure_passes=remeasure_passes,
            remeasure_processes=remeasure_processes, target=target, runner=runner, space=space,
            done=[run_key(r) for r in previous.get("runs", [])], log=log)
    models = []
    if include_models and str(target.kind.name) == "llvm":
        from .network import row_key, run_model

        done = {row_key(m) for m in previous.get("models", [])}
        for spec in suite.get("models", []):
            if (only and not any(o in spec["model"] for o in only)) or (workloads and spec["model"] not in workloads):
                continue
            models += run_model(spec, strategies, seeds, target, out_dir, runner=runner, progress=progress,
                                task_schedulers=task_schedulers, zero_measure=zero_measure, done=done, log=log)
    runs = previous.get("runs", []) + runs
    summaries = summarize_views(runs)
    if remeasure_passes > 0 and runs and "remeasured" not in summaries:
        log("no re-measured view: some merged runs were tuned with --remeasure-passes 0; the tables use "
            "tuning-time latencies")
    for wl in mixed_invocations(runs):
        log(f"warning: {MIXED_WARNING.format(workload=wl)}")
    invocation = {"strategies": strategies, "seeds": seeds, "workloads": [w.name for w in selected],
                  "remeasure_passes": remeasure_passes,
                  "remeasure_processes": remeasure_processes, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
                  "seconds": time.time() - start, "code": code}
    result = {"suite": suite.get("name"), "target": str(target),
              "strategies": list(dict.fromkeys(previous.get("strategies", []) + list(strategies))),
              "seeds": sorted(set(previous.get("seeds", [])) | set(seeds)),
              "trials": trials, "trials_per_iter": trials_per_iter,
              "seconds": previous.get("seconds", 0.0) + invocation["seconds"],
              "invocations": previous.get("invocations", []) + [invocation],
              "runs": runs, "summaries": summaries, "models": previous.get("models", []) + models}
    with open(os.path.join(out_dir, "suite.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(out_dir, "suite.md"), "w", encoding="utf-8") as f:
        f.write(format_suite(result) + "\n")
    from .plots import plot_curves

    result["plots"] = plot_curves(runs, os.path.join(out_dir, "curves"), log=log)
    if result["models"]:
        from .plots import plot_model_curves

        result["plots"] += plot_model_curves(result["models"], os.path.join(out_dir, "curves"), log=log)
    return result


def format_suite(result: dict) -> str:
    """One row per workload and strategy: final latency, speed-up to quality vs each baseline, trials.

    With re-measured latencies (``summaries["remeasured"]``) the final bests and speed-ups come from
    them, and the header says so; otherwise from the latencies measured while tuning. Each row also
    shows the wall time per measured trial and the first batch's best (tuning-time), medians over
    seeds, and for PrunerSearch variants the mean of each number of their per-round profile. A
    ``Code:`` line names the package each invocation imported (:func:`~.provenance.code_provenance`),
    or warns when the invocations ran different code.
    """
    from .compare import (MIXED_WARNING, first_batch_best, format_profile, mixed_invocations, profile_means,
                          seconds_per_trial)
    from .provenance import describe_provenance

    runs, summaries = result["runs"], result["summaries"]
    remeasured = "remeasured" in summaries
    summary = summaries.get("remeasured" if remeasured else "measured", {})
    if remeasured:
        view = f"re-measured ({'; '.join(sorted({_remeasure_protocol(r) for r in runs}))})"
    else:
        view = "tuning-time (as measured while tuning)"
    lines = [(f"# Suite `{result['suite']}`: {', '.join(result['strategies'])}; seeds {result['seeds']}; "
              f"{result['trials']} trials per workload ({result['trials_per_iter']} per round)"), "",
             f"Latencies: {view}. Wall s/trial and first-batch best are tuning-time, medians over seeds.", ""]
    codes = list(dict.fromkeys(describe_provenance(i.get("code")) for i in result.get("invocations", [])))
    if codes:
        lines += [f"Code: {codes[0]}." if len(codes) == 1 else
                  "Warning: the invocations ran different code: " + "; ".join(codes) + ".", ""]
    if runs:
        bases = sorted({r["strategy"] for r in runs if not r["strategy"].startswith("pruner")})
        head = ["workload", "strategy", "final best (ms), median of seeds", "GFLOP/s", "wall s/trial",
                "1st batch best (ms)"]
        for b in bases:
            head += [f"time-to-quality speed-up vs {b} (median)", f"trials to reach {b}'s final (per seed)"]
        head.append("search round profile (mean)")
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for wl in dict.fromkeys(r["workload"] for r in runs):
            for strat in sorted({r["strategy"] for r in runs if r["workload"] == wl}):
                mine = [r for r in runs if r["workload"] == wl and r["strategy"] == strat]
                best = statistics.median(_final(r, remeasured) for r in mine)
                gflops = mine[0].get("flops", 0) / best / 1e9 if math.isfinite(best) and best > 0 else 0.0
                per_trial = statistics.median(seconds_per_trial(r) for r in mine)
                first = statistics.median(first_batch_best(r) for r in mine)
                cells = [wl, strat, f"{best * 1e3:.3f}", f"{gflops:.1f}", f"{per_trial:.2f}", f"{first * 1e3:.3f}"]
                for b in bases:
                    item = summary.get(f"{wl} vs {b}") if strat == "pruner" else summary.get(f"{wl} {strat} vs {b}")
                    if item is None:
                        cells += ["", ""]
                        continue
                    trials = ", ".join(str(r["ours_trials_to_reach"]) if r["ours_seconds_to_reach"] is not None
                                       else "not reached" for r in item["seeds"])
                    cells += [f"**{item['median_speedup']:.2f}x**", trials]
                cells.append(format_profile(profile_means([p for r in mine for p in r.get("round_profiles") or []])))
                lines.append("| " + " | ".join(cells) + " |")
        for wl in mixed_invocations(runs):
            lines += ["", f"Warning: {MIXED_WARNING.format(workload=wl)}."]
    if result.get("models"):
        from .network import format_models

        lines += ["", format_models(result["models"])]
    return "\n".join(lines)


def _remeasure_protocol(run: dict) -> str:
    """How ``run`` was re-measured, in words (runs of results made before re-measurement moved to fresh
    processes have no ``remeasure_processes``: they were re-measured in the tuning process)."""
    passes = run.get("remeasure_passes", "?")
    if "remeasure_processes" not in run:
        return f"median of {passes} round-robin passes in the tuning process"
    return f"mean over {run['remeasure_processes']} fresh processes of the median of {passes} round-robin passes"


def _final(run: dict, remeasured: bool) -> float:
    """A run's final best latency: its best re-measured program, or its best tuning-time latency."""
    if not remeasured:
        return run["best_seconds"]
    return min((p["remeasured"] for p in run.get("remeasured") or []), default=math.inf)


def _fmt(value, spec: str = ".3f") -> str:
    return "" if value is None else format(value, spec)
