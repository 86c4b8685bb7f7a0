"""Noise-aware scoring of tuning runs: re-measure the programs that decide a comparison.

A run's "final best" is the minimum over ~100 noisy measurements, so it is biased low (the winner's
curse), and a comparison of two runs that end within the noise of each other is decided by luck.
This module takes, for each run, the programs that improved its best-so-far curve plus its top few,
builds each distinct program once, and re-measures all of them round-robin (so drift hits every run
alike) several times. The curves are then rebuilt from the re-measured latencies.

Each pass gives the programs freshly allocated arguments (same values, other addresses and physical
pages): some programs' latency depends on where their buffers lie (a 1x1 conv2d program of the CPU
suite: 1.27-1.37 ms with one allocation, 0.97-1.00 ms with another, steady within each;
``docs/results/cold_share_s29``). A slower state can also last a whole process (the same suite's
first-batch program re-measured at 1.21-1.25 ms in two invocations and 1.52-1.76 ms in two others,
which moved a speed-up between 1.8x and 3.8x). That state is the process's address layout: with
address-space randomization off (``setarch -R``) the program times 1.17-1.27 ms in 10 of 10 processes,
with it on 1.20-1.26 ms in 3 of 10 and 1.56-1.87 ms in 7 (``docs/results/remeasure_layout_s30``). A
program deployed in a process gets one layout at random, so the passes run in several fresh
processes, one after the other, and a program's latency is the mean over processes of its median in
each: its expected latency over layouts.
"""
from __future__ import annotations

import json
import math
import os
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


def remeasure_runs(workload, runs_with_dirs: list[tuple[dict, str]], *, top: int = 8, processes: int = 5,
                   passes: int = 2, number: int = 3, min_repeat_ms: int = 100, log=print) -> dict[int, list[dict]]:
    """Re-measure the decisive programs of several runs of one workload, interleaved, in fresh processes.

    Each distinct program (structurally equal programs share one measurement) is compiled once here
    and timed in ``processes`` new Python processes, one after the other, each running ``passes``
    round-robin passes over all of them on newly allocated arguments (:func:`measure_in_child`). A
    program's ``remeasured`` latency is the mean over the processes of its median within each (each
    process draws one address layout; see the module's text); its per-process medians are kept as
    ``remeasured_per_process``. Returns, per run (by position), its decisive programs.
    """
    import tempfile

    import tvm
    import tvm_ffi

    from ..hardware import host_cpu_spec
    from ..integration.database import compiled_schedule

    if processes < 1 or passes < 1:
        raise ValueError(f"remeasure_runs: processes and passes must be >= 1, got {processes} and {passes}")
    target = tvm.target.Target(host_cpu_spec().target())
    per_run: dict[int, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="pruner_ms_remeasure_") as tmp:
        libraries: dict[int, str] = {}  # structural hash -> shared library
        for i, (run, wd) in enumerate(runs_with_dirs):
            progs = decisive(measured_programs(run, wd, workload), top)
            for p in progs:
                sch = compiled_schedule(workload.func, p.pop("trace"))
                key = int(tvm_ffi.structural_hash(sch.mod))
                p["key"] = key
                if key not in libraries:
                    libraries[key] = os.path.join(tmp, f"program{len(libraries)}.so")
                    tvm.compile(sch.mod, target=target).export_library(libraries[key])
            per_run[i] = progs
        inputs = os.path.join(tmp, "inputs.npz")
        np.savez(inputs, *workload.make_inputs(np.random.default_rng(0)))
        spec = {"libraries": {str(k): v for k, v in libraries.items()}, "inputs": inputs,
                "output_shape": list(workload.output_shape), "output_dtype": str(workload.output_dtype),
                "passes": passes, "number": number, "min_repeat_ms": min_repeat_ms}
        log(f"{workload.name}: re-measuring {len(libraries)} distinct programs in {processes} fresh processes "
            f"x {passes} passes")
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        per_process: dict[int, list[float]] = {k: [] for k in libraries}
        for n in range(processes):
            out_path = os.path.join(tmp, f"samples{n}.json")
            _run_child(spec_path, out_path)
            with open(out_path, encoding="utf-8") as f:
                for k, samples in json.load(f).items():
                    per_process[int(k)].append(statistics.median(samples))
    for progs in per_run.values():
        for p in progs:
            p["remeasured_per_process"] = per_process[p["key"]]
            p["remeasured"] = statistics.fmean(per_process[p["key"]])
    return per_run


def _run_child(spec_path: str, out_path: str) -> None:
    """Run :func:`measure_in_child` in a new interpreter that imports this package as this one does."""
    import subprocess
    import sys

    from ..child_environment import child_environment

    done = subprocess.run([sys.executable, "-m", "pruner_ms.bench.remeasure", spec_path, out_path],
                          env=child_environment(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"re-measurement process failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")


def measure_in_child(spec_path: str, out_path: str) -> None:
    """Time every library of a :func:`remeasure_runs` spec, ``passes`` round-robin passes, and write
    ``{key: [seconds per pass]}`` to ``out_path``. Each pass allocates the arguments anew."""
    import tvm

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    with np.load(spec["inputs"]) as npz:
        inputs = [npz[f"arr_{i}"] for i in range(len(npz.files))]
    evaluators = {k: tvm.runtime.load_module(path).time_evaluator(
                      "main", tvm.cpu(), number=spec["number"], repeat=1, min_repeat_ms=spec["min_repeat_ms"])
                  for k, path in spec["libraries"].items()}
    samples: dict[str, list[float]] = {k: [] for k in evaluators}
    for _ in range(spec["passes"]):
        # allocated while the last pass's are still held, so they cannot reuse that memory
        args = allocate_arguments(inputs, spec["output_shape"], spec["output_dtype"])
        for k, ev in evaluators.items():
            samples[k].append(ev(*args).mean)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(samples, f)


def fresh_arguments(workload) -> list:
    """The workload's inputs (always the same values, seed 0) and an output, newly allocated."""
    return allocate_arguments(workload.make_inputs(np.random.default_rng(0)), workload.output_shape,
                              workload.output_dtype)


def allocate_arguments(inputs, output_shape, output_dtype) -> list:
    """New device tensors holding ``inputs``, then an uninitialised output."""
    import tvm

    args = [tvm.runtime.tensor(x) for x in inputs]
    args.append(tvm.runtime.empty(output_shape, output_dtype))
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


if __name__ == "__main__":
    import sys

    from ..integration.workarounds.torch_import import import_tvm_without_torch

    import_tvm_without_torch()  # a deployed program's process has no torch (and it saves 2-3 s per process)
    measure_in_child(*sys.argv[1:])
