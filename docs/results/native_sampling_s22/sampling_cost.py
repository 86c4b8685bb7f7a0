"""A draft's random samples, replayed and analyzed, five ways (N samples of WORKLOAD, 2 threads, twice,
the order reversed the second time; prints the best of the two per way):

    python sampling_cost.py [WORKLOAD] [N]        # default gemm-512 1536; nothing else should run

A: Population.sample in Python replays, scored in the replay workers (the path before 52f67e7)
D: Population.sample in Python replays, then analyzed in sequence
C: TVM's C++ sampler in chunks of 256 on one background thread, the calling thread analyzing each
   chunk (2 C++ threads: not reproducible); "C cxx seq": all samples first, then the analysis
E: Population.sample with native_sampling (52f67e7: one one-thread NativeSampler per replay thread,
   chunks of 128, the calling thread analyzing the chunk before)
"""
import sys, time, threading, queue
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "draft_cost_s21"))
from draft_cost import setup
import tvm_ffi
from tvm.s_tir import meta_schedule as ms
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.strategy.population import Population

wl = sys.argv[1] if len(sys.argv) > 1 else "gemm-512"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1536
ctx, spaces, target = setup(wl, 2)
an = analyzer_for_target(target)

def score(c):
    an.analyze(c.sch.mod)

def E(seed):
    pop = Population(ctx, np.random.default_rng(seed), num_threads=2, native_sampling=True)
    with pop.scoring(score):
        out = pop.sample(spaces, N)
    pop.close()
    return len(out)

def A(seed, interval=None):
    old = sys.getswitchinterval()
    if interval: sys.setswitchinterval(interval)
    try:
        pop = Population(ctx, np.random.default_rng(seed), num_threads=2, native_sampling=False)
        with pop.scoring(score):
            out = pop.sample(spaces, N)
        pop.close()
    finally:
        sys.setswitchinterval(old)
    return len(out)

def D(seed):
    pop = Population(ctx, np.random.default_rng(seed), num_threads=2, native_sampling=False)
    out = pop.sample(spaces, N)
    for c in out: score(c)
    pop.close()
    return len(out)

es = ms.search_strategy.EvolutionarySearch()
es_ctx = ms.TuneContext(ctx.mod, target=target, space_generator=ms.space_generator.PostOrderApply(),
                        search_strategy=es, num_threads=2, rand_state=1)
es_ctx.pre_tuning(10**6, 32, es_ctx.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.RandomModel())
cxx = tvm_ffi.get_global_func("s_tir.meta_schedule.SearchStrategyEvolutionarySearchSampleInitPopulation")

def C(seed, chunk=256):
    q = queue.Queue()
    def producer():
        for _ in range(N // chunk):
            q.put(list(cxx(es, chunk)))
        q.put(None)
    th = threading.Thread(target=producer); th.start()
    n = 0
    while (batch := q.get()) is not None:
        for sch in batch:
            tvm_ffi.structural_hash(sch.mod); an.analyze(sch.mod); n += 1
    th.join()
    return n

def Cseq(seed):
    schs = list(cxx(es, N)); 
    for sch in schs: tvm_ffi.structural_hash(sch.mod); an.analyze(sch.mod)
    return len(schs)

runs = [("A current", lambda s: A(s)), ("D seq", D), ("C cxx pipelined", C), ("C cxx seq", Cseq), ("E Population native", E)]
res = {k: [] for k, _ in runs}
for rep in range(2):
    order = runs if rep % 2 == 0 else runs[::-1]
    for name, fn in order:
        t = time.perf_counter(); n = fn(rep); dt = time.perf_counter() - t
        res[name].append(dt); print(f"{name:18s} rep {rep}: {dt:.2f} s for {n}", flush=True)
print(wl, N)
for k, v in res.items(): print(f"{k:18s} {min(v):.2f} s (runs: {', '.join(f'{x:.2f}' for x in v)})")
