"""Noise-aware scoring of tuning runs: re-measure the programs that decide a comparison.

A run's "final best" is the minimum over ~100 noisy measurements, so it is biased low (the winner's
curse), and a comparison of two runs that end within the noise of each other is decided by luck.
This module takes, for each run, the programs that improved its best-so-far curve plus its top few,
builds each distinct program once, and re-measures all of them round-robin (so drift hits every run
alike) several times. The curves are then rebuilt from the re-measured latencies.

Each pass gives the programs freshly allocated arguments (same values, other addresses and physical
pages): some programs' latency depends on where their buffers lie (a 1x1 conv2d program of the CPU
suite: 1.27-1.37 ms with one allocation, 0.97-1.00 ms with another, steady within each;
``docs/results/cold_share_s29``), and with one allocation for every pass a program was judged by one
draw of that layout. It does not remove a slower state that lasts a whole process (the same suite's
first-batch program re-measured at 1.21-1.25 ms in two invocations and 1.52-1.76 ms in two others).
"""
from __future__ import annotations

import math
import statistics

import numpy as np

from ..integration.measured_latency import record_seconds


def measured_programs(run: dict, work_dir: str, workload) -> list[dict]:
    """Every valid record of ``run`` with the search time at which its batch finished.

    Records come back from the database sorted by latency; their mean run time matches the
    latency the timeline recorded, which gives each one its batch.
    """
    from tvm.s_tir import meta_schedule as ms

    when: dict[float, tuple[float, int]] = {}
    for b in run["batches"]:
        for lat in b["latencies"]:
            when.setdefault(round(lat, 15), (b["seconds"], b["trials"]))
    out = []
    for rec in ms.database.JSONDatabase(work_dir=work_dir).get_all_tuning_records():
        lat = record_seconds(rec)
        if not math.isfinite(lat):  # failed build or run
            continue
        seconds, trials = when.get(round(lat, 15), (math.nan, -1))
        out.append({"trace": rec.trace, "latency": lat, "seconds": seconds, "trials": trials})
    return out


def decisive(programs: list[dict], top: int) -> list[dict]:
    """The programs that improved the running best, plus the ``top`` fastest."""
    by_time = sorted(programs, key=lambda p: (p["seconds"], p["latency"]))
    keep, best = [], math.inf
    for p in by_time:
        if p["latency"] < best:
            best = p["latency"]
            keep.append(p)
    keep += sorted(programs, key=lambda p: p["latency"])[:top]
    return list({id(p): p for p in keep}.values())


def remeasure_runs(workload, runs_with_dirs: list[tuple[dict, str]], *, top: int = 8, passes: int = 5,
                   number: int = 3, min_repeat_ms: int = 100, log=print) -> dict[int, list[dict]]:
    """Re-measure the decisive programs of several runs of one workload, interleaved.

    Returns, per run (by position), its decisive programs with ``remeasured`` latencies (median of
    ``passes`` round-robin passes; structurally equal programs share one measurement).
    """
    import tvm
    import tvm_ffi

    from ..hardware import host_cpu_spec
    from ..integration.database import compiled_schedule

    target = tvm.target.Target(host_cpu_spec().target())
    per_run: dict[int, list[dict]] = {}
    evaluators: dict[int, object] = {}  # structural hash -> time evaluator
    for i, (run, wd) in enumerate(runs_with_dirs):
        progs = decisive(measured_programs(run, wd, workload), top)
        for p in progs:
            sch = compiled_schedule(workload.func, p["trace"])
            key = int(tvm_ffi.structural_hash(sch.mod))
            p["key"] = key
            if key not in evaluators:
                ex = tvm.compile(sch.mod, target=target)
                evaluators[key] = ex.mod.time_evaluator("main", tvm.cpu(), number=number, repeat=1,
                                                        min_repeat_ms=min_repeat_ms)
        per_run[i] = progs
    log(f"{workload.name}: re-measuring {len(evaluators)} distinct programs x {passes} passes")
    samples: dict[int, list[float]] = {k: [] for k in evaluators}
    for _ in range(passes):
        # allocated while the last pass's are still held, so they cannot reuse that memory
        args = fresh_arguments(workload)
        for k, ev in evaluators.items():
            samples[k].append(ev(*args).mean)
    for progs in per_run.values():
        for p in progs:
            p["remeasured"] = statistics.median(samples[p["key"]])
            del p["trace"]
    return per_run


def fresh_arguments(workload) -> list:
    """The workload's inputs (always the same values, seed 0) and an output, newly allocated."""
    import tvm

    args = [tvm.runtime.tensor(x) for x in workload.make_inputs(np.random.default_rng(0))]
    args.append(tvm.runtime.empty(workload.output_shape, workload.output_dtype))
    return args


def curve(programs: list[dict], key: str) -> list[tuple[float, int, float]]:
    """Best-so-far (seconds, trials, latency) steps by ``key`` ("latency" or "remeasured")."""
    steps, best = [], math.inf
    for p in sorted(programs, key=lambda p: p["seconds"]):
        if p[key] < best:
            best = p[key]
            steps.append((p["seconds"], p["trials"], best))
    return steps


def reach(steps: list[tuple[float, int, float]], latency: float) -> tuple[float | None, int | None]:
    for seconds, trials, best in steps:
        if best <= latency:
            return seconds, trials
    return None, None
