#!/usr/bin/env python
"""Where a draft's time goes on this machine: TVM's replay of a candidate, the analyzer, and how the two
share the cores when they run in threads of one process or in two processes.

    python draft_cost.py [--workload gemm-512] [--n 400]

Prints, per candidate of the workload's design space (PostOrderApply, this CPU's target):
  1. one replay (Schedule, trace, postprocs, structural hash) and its parts, single-threaded;
  2. one analyzer evaluation (``SymbolicAnalyzer.analyze``), single-threaded;
  3. threads of one process: analysis of N programs in one thread while another replays N samples,
     and two threads replaying N samples each, against each alone;
  4. the same pairs as two processes started together;
  5. sampling 1,536 programs with ``Population.sample`` (2 threads) against TVM's C++ sampler of
     ``EvolutionarySearch`` (``SearchStrategyEvolutionarySearchSampleInitPopulation``, 2 threads).
Nothing else should run meanwhile.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time

import numpy as np


def setup(workload: str, num_threads: int):
    import tvm
    from tvm.s_tir import meta_schedule as ms

    import pruner_ms
    from pruner_ms.bench.workloads import get_workload

    wl = get_workload(workload)
    target = tvm.target.Target(pruner_ms.host_cpu_spec().target())
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), num_threads=num_threads, rand_state=1)
    return ctx, ctx.generate_design_space(), target


def replay_parts(ctx, spaces, n: int) -> None:
    import tvm_ffi
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import Trace

    posts = list(ctx.space_generator.postprocs)
    traces = [Trace(s.trace.insts, {}) for s in spaces]
    parts = {"Schedule()": 0.0, "trace": 0.0, **{type(p).__name__: 0.0 for p in posts}, "hash": 0.0}
    for i in range(n):
        t = time.perf_counter()
        sch = Schedule(ctx.mod, seed=i + 1, debug_mask=0)
        parts["Schedule()"] += time.perf_counter() - t
        t = time.perf_counter()
        traces[i % len(traces)].apply_to_schedule(sch, remove_postproc=True)
        sch.enter_postproc()
        parts["trace"] += time.perf_counter() - t
        for p in posts:
            t = time.perf_counter()
            ok = p.apply(sch)
            parts[type(p).__name__] += time.perf_counter() - t
            if not ok:
                break
        t = time.perf_counter()
        tvm_ffi.structural_hash(sch.mod)
        parts["hash"] += time.perf_counter() - t
    total = sum(parts.values())
    print(f"1. replay: {total / n * 1e3:.2f} ms per candidate: "
          + ", ".join(f"{k} {v / n * 1e3:.2f}" for k, v in parts.items()))


def jobs(ctx, spaces, target, n: int):
    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.strategy.population import Population

    analyzer = analyzer_for_target(target)
    mods = [c.sch.mod for c in Population(ctx, np.random.default_rng(0)).sample(spaces, n)]

    def analyze():
        for m in mods:
            analyzer.analyze(m)

    def replay(seed=1):
        Population(ctx, np.random.default_rng(seed)).sample(spaces, n)

    return {"analyze": analyze, "replay": replay}


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def in_threads(fns) -> tuple[float, list[float]]:
    spent = [0.0] * len(fns)

    def run(i):
        spent[i] = timed(fns[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t, spent


def child(args) -> None:
    ctx, spaces, target = setup(args.workload, 1)
    job = jobs(ctx, spaces, target, args.n)[args.child]
    time.sleep(max(0.0, args.start_at - time.time()))  # both processes start their job together
    print(f"{timed(job):.3f}")


def in_processes(args, names: list[str]) -> list[float]:
    start_at = time.time() + 25.0  # after both have imported TVM and sampled their inputs
    procs = [subprocess.Popen([sys.executable, __file__, "--workload", args.workload, "--n", str(args.n),
                               "--child", name, "--start-at", str(start_at)], stdout=subprocess.PIPE, text=True)
             for name in names]
    return [float(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="gemm-512")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    import tvm_ffi

    from pruner_ms.strategy.population import Population

    ctx, spaces, target = setup(args.workload, 2)
    print(f"{args.workload} on {target}, {args.n} candidates per job")
    replay_parts(ctx, spaces, args.n)
    j = jobs(ctx, spaces, target, args.n)
    alone = {k: timed(f) for k, f in j.items()}
    print(f"2. analyzer: {alone['analyze'] / args.n * 1e3:.2f} ms per program "
          f"(replay via Population: {alone['replay'] / args.n * 1e3:.2f} ms)")
    wall, (a, r) = in_threads([j["analyze"], j["replay"]])
    print(f"3. threads: analyze || replay: wall {wall:.2f} s (alone: {alone['analyze']:.2f} + {alone['replay']:.2f} = "
          f"{alone['analyze'] + alone['replay']:.2f} s; analyze took {a:.2f}, replay {r:.2f})")
    wall, (r1, r2) = in_threads([j["replay"], lambda: j["replay"](2)])
    print(f"   threads: replay || replay: wall {wall:.2f} s (alone {2 * alone['replay']:.2f} s in sequence)")
    a, r = in_processes(args, ["analyze", "replay"])
    print(f"4. processes: analyze || replay: analyze {a:.2f} s, replay {r:.2f} s")
    r1, r2 = in_processes(args, ["replay", "replay"])
    print(f"   processes: replay || replay: {r1:.2f} s, {r2:.2f} s")

    from tvm.s_tir import meta_schedule as ms

    es = ms.search_strategy.EvolutionarySearch()
    es_ctx = ms.TuneContext(ctx.mod, target=target, space_generator=ms.space_generator.PostOrderApply(),
                            search_strategy=es, num_threads=2, rand_state=1)
    es_ctx.pre_tuning(10**6, 32, es_ctx.generate_design_space(), ms.database.MemoryDatabase(),
                      ms.cost_model.RandomModel())
    sample = tvm_ffi.get_global_func("s_tir.meta_schedule.SearchStrategyEvolutionarySearchSampleInitPopulation")
    cxx = timed(lambda: sample(es, 1536))
    py = timed(lambda: Population(ctx, np.random.default_rng(0), num_threads=2).sample(spaces, 1536))
    print(f"5. 1,536 samples, 2 threads: Population.sample {py:.2f} s, TVM's C++ sampler {cxx:.2f} s")


if __name__ == "__main__":
    main()
