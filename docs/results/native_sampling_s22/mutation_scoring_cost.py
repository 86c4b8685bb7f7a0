"""One mutation of each of N sampled programs, scored by the analyzer in the replay workers, or after
all mutations in the calling thread, or not at all (2 threads, twice, the order reversed the second time):

    python mutation_scoring_cost.py WORKLOAD N      # nothing else should run
"""
import sys, time, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "draft_cost_s21"))
from draft_cost import setup
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.strategy.population import Population
wl = sys.argv[1]; N = int(sys.argv[2])
ctx, spaces, target = setup(wl, 2)
an = analyzer_for_target(target)
base = Population(ctx, np.random.default_rng(0), num_threads=2).sample(spaces, N)
def score(c): an.analyze(c.sch.mod)
def workers(seed):
    pop = Population(ctx, np.random.default_rng(seed), num_threads=2)
    with pop.scoring(score):
        kids = pop.mutate_many(base)
    pop.close(); return sum(k is not None for k in kids)
def after(seed):
    pop = Population(ctx, np.random.default_rng(seed), num_threads=2)
    kids = pop.mutate_many(base)
    for k in kids:
        if k is not None: score(k)
    pop.close(); return sum(k is not None for k in kids)
def nothing(seed):
    pop = Population(ctx, np.random.default_rng(seed), num_threads=2)
    kids = pop.mutate_many(base); pop.close(); return sum(k is not None for k in kids)
runs = [("mutate, score in workers", workers), ("mutate, then score", after), ("mutate only", nothing)]
res = {k: [] for k, _ in runs}
for rep in range(2):
    for name, fn in (runs if rep % 2 == 0 else runs[::-1]):
        t = time.perf_counter(); n = fn(rep + 10); dt = time.perf_counter() - t
        res[name].append(dt); print(f"{name:26s} rep {rep}: {dt:.2f} s for {n}", flush=True)
for k, v in res.items(): print(f"{wl} {k:26s} {min(v):.2f} s (runs: {', '.join(f'{x:.2f}' for x in v)})")
