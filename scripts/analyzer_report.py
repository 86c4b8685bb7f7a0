#!/usr/bin/env python
"""Per-family quality of the symbolic analyzer against measurement, on the CPU suite's workloads.

For each workload this draws the paper's draft population (1536 random programs from the design
spaces), runs PrunerSearch's draft (the analyzer-driven genetic search, 2 iterations, 512 drafts
kept) and measures three sets of programs on this machine:

* ``random``: 32 programs drawn uniformly from the population (an unbiased sample of the space);
* ``ranked``: the analyzer's top 32 of the population, without the genetic search;
* ``drafts``: the top 32 drafts of the genetic search (what PrunerSearch measures first).

It reports the analyzer's Spearman correlation and pairwise accuracy against measured throughput on
the ``random`` set (ties and failures left out), and the cold-start check: the best measured latency
of ``drafts`` (and of ``ranked``) divided by the best of ``random`` (below 1: the analyzer wins).

    python scripts/analyzer_report.py --suite cpu --out docs/results/analyzer_report/before.json

Every program is compiled in this process and timed with ``time_evaluator`` (median of
``--passes`` round-robin passes over all programs of a workload, so drift hits every set alike).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def pairwise_accuracy(score, throughput) -> float:
    """Share of program pairs with distinct measured throughput that the scores order correctly."""
    import numpy as np

    s, t = np.asarray(score, float), np.asarray(throughput, float)
    i, j = np.triu_indices(len(s), 1)
    keep = t[i] != t[j]
    if not keep.any():
        return math.nan
    return float(np.mean(np.sign(s[i] - s[j])[keep] == np.sign(t[i] - t[j])[keep]))


def report_workload(wl, *, seed: int, per_set: int, passes: int, random_set: int | None = None,
                    save_dir: str | None = None, log=print) -> dict:
    import numpy as np
    import tvm
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.hardware import host_cpu_spec
    from pruner_ms.strategy.pruner_search import PrunerSearch
    from pruner_ms.strategy.trust import spearman

    target = tvm.target.Target(host_cpu_spec().target())
    mod = tvm.IRModule({"main": wl.func})
    strategy = PrunerSearch(adaptive_trust=False)
    ctx = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply", search_strategy=strategy,
                         num_threads=int(target.attrs["num-cores"]), rand_state=seed)
    spaces = ctx.space_generator.generate_design_space(mod)
    search = strategy._inst  # noqa: SLF001  (the Python object behind the FFI wrapper)
    search.pre_tuning(per_set, per_set, spaces, None, None)
    t0 = time.perf_counter()
    search._draft()  # noqa: SLF001  (the draft stage alone, as PrunerSearch runs it in round 0)
    draft_s = time.perf_counter() - t0
    pool = search.random_pool
    rng = np.random.default_rng(seed)
    pool_scores = search._analyzer_scores(pool)  # noqa: SLF001
    sets = {
        "random": [pool[i] for i in rng.permutation(len(pool))[:random_set or per_set]],
        "ranked": [pool[i] for i in np.argsort(-pool_scores)[:per_set]],
        "drafts": [c for _, c in search.drafts[:per_set]],
    }
    args = [tvm.runtime.tensor(x) for x in wl.make_inputs(np.random.default_rng(0))]
    evaluators, failed = {}, set()
    for cands in sets.values():
        for c in cands:
            if c.key in evaluators or c.key in failed:
                continue
            try:
                ex = tvm.compile(c.sch.mod, target=target)
                evaluators[c.key] = ex.mod.time_evaluator("main", tvm.cpu(), number=3, repeat=1, min_repeat_ms=50)
            except Exception as err:  # noqa: BLE001  (a program that does not build is a data point: failed)
                log(f"  build failed: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
                failed.add(c.key)
    out_arr = tvm.runtime.empty(wl.output_shape, wl.output_dtype)
    times: dict[int, list[float]] = {k: [] for k in evaluators}
    for _ in range(passes):
        for k, ev in evaluators.items():
            times[k].append(ev(*args, out_arr).mean)
    latency = {k: statistics.median(v) for k, v in times.items()}
    analyzer_s = {c.key: 1.0 / max(float(search._analyzer_cache.get(c.key, 0.0)), 1e-30)  # noqa: SLF001
                  for cands in sets.values() for c in cands}
    search.post_tuning()
    row: dict = {"workload": wl.name, "draft_s": draft_s, "population": len(pool), "programs": len(evaluators),
                 "build_failures": len(failed)}
    for name, cands in sets.items():
        lats = [latency[c.key] for c in cands if c.key in latency]
        row[f"{name}_best_ms"] = 1e3 * min(lats) if lats else math.nan
        row[f"{name}_median_ms"] = 1e3 * statistics.median(lats) if lats else math.nan
    rnd = [c for c in sets["random"] if c.key in latency]
    score = np.array([1.0 / analyzer_s[c.key] for c in rnd])
    thr = np.array([1.0 / latency[c.key] for c in rnd])
    row["spearman"] = spearman(score, thr) if len(rnd) > 2 else math.nan
    row["pairwise_accuracy"] = pairwise_accuracy(score, thr) if len(rnd) > 1 else math.nan
    row["drafts_vs_random"] = row["drafts_best_ms"] / row["random_best_ms"]
    row["ranked_vs_random"] = row["ranked_best_ms"] / row["random_best_ms"]
    best_key = min(latency, key=latency.get) if latency else None
    if best_key is not None:
        row["fastest_measured_ms"] = 1e3 * latency[best_key]
        row["fastest_analyzer_ms"] = 1e3 * analyzer_s[best_key]
    row["programs_measured"] = [  # per program: set, analyzer and measured ms, the bounding term per nest
        {"set": name, "analyzer_ms": 1e3 * analyzer_s[c.key], "measured_ms": 1e3 * latency[c.key],
         "bounds": [f"{n.name}:{n.symbols['bound']}"
                    for n in search.analyzer.analyze(c.sch.mod).nests]}
        for name, cands in sets.items() for c in cands if c.key in latency]
    row["analyzer_over_measured_median"] = statistics.median(analyzer_s[k] / latency[k] for k in latency) if latency else math.nan
    if save_dir:  # the measured programs themselves, so that a changed analyzer can be re-scored on them
        os.makedirs(save_dir, exist_ok=True)
        saved = [{"set": name, "measured_ms": 1e3 * latency[c.key],
                  "trace": tvm.ir.save_json(c.sch.trace.as_json(remove_postproc=False))}
                 for name, cands in sets.items() for c in cands if c.key in latency]
        with open(os.path.join(save_dir, f"{wl.name}.json"), "w") as f:
            json.dump({"workload": wl.name, "seed": seed, "passes": passes, "programs": saved}, f)
    return row


def rescore_workload(path: str, wl, *, top: int = 8, target: dict | None = None) -> dict:
    """The current analyzer on programs measured earlier (``--save-programs``): no measurement.
    ``target``: the analyzer of this LLVM target (that of the machine that measured them) instead of
    the host's.

    Spearman and pairwise accuracy over the saved ``random`` set; ``top_pick``: the best measured
    latency among the analyzer's ``top`` picks of all saved programs over the best of them all, and
    ``random_pick``: the same ratio expected of ``top`` programs drawn at random from the pool.
    """
    import numpy as np
    from tvm import s_tir
    import tvm

    from pruner_ms.hardware import host_cpu_spec
    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.strategy.trust import spearman

    with open(path) as f:
        saved = json.load(f)["programs"]
    analyzer = analyzer_for_target(tvm.target.Target(target or host_cpu_spec().target()))
    est, meas, sets = [], [], []
    for p in saved:
        sch = s_tir.Schedule(wl.func)
        s_tir.schedule.Trace.apply_json_to_schedule(tvm.ir.load_json(p["trace"]), sch)
        est.append(analyzer.estimate_seconds(sch.mod))
        meas.append(p["measured_ms"] * 1e-3)
        sets.append(p["set"])
    est, meas = np.array(est), np.array(meas)
    rnd = np.array([s == "random" for s in sets])
    order = np.argsort(est, kind="stable")
    best = meas.min()
    # expected best of `top` uniform draws without replacement: sum over sorted latencies
    srt = np.sort(meas)
    n, k = len(srt), min(top, len(srt))
    from math import comb
    p_min = np.array([comb(n - 1 - i, k - 1) / comb(n, k) for i in range(n)])
    return {"workload": wl.name, "programs": int(n),
            "spearman": spearman(1 / est[rnd], 1 / meas[rnd]),
            "pairwise_accuracy": pairwise_accuracy(1 / est[rnd], 1 / meas[rnd]),
            "top_pick": float(meas[order[:k]].min() / best),
            "random_pick": float((p_min * srt).sum() / best),
            "analyzer_over_measured_median": float(np.median(est / meas))}


def format_report(rows: list[dict]) -> str:
    head = ("| workload | Spearman (32 random) | pairwise acc. | best of top-32 drafts / best of 32 random | "
            "top-32 ranked (no GA) / random | best ms: drafts, ranked, random | analyzer/measured (median) | draft s |")
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {r['spearman']:.2f} | {r['pairwise_accuracy']:.2f} | "
            f"**{r['drafts_vs_random']:.2f}** {'win' if r['drafts_vs_random'] < 1 else 'LOSS'} | "
            f"{r['ranked_vs_random']:.2f} | {r['drafts_best_ms']:.3f}, {r['ranked_best_ms']:.3f}, "
            f"{r['random_best_ms']:.3f} | {r['analyzer_over_measured_median']:.2f} | {r['draft_s']:.1f} |")
    wins = sum(r["drafts_vs_random"] < 1 for r in rows)
    lines.append("")
    lines.append(f"Cold-start check won on {wins} of {len(rows)} workloads; median Spearman "
                 f"{statistics.median(r['spearman'] for r in rows):.2f}.")
    return "\n".join(lines)


def format_rescore_comparison(before: list[dict], after: list[dict]) -> str:
    """A before -> after table of two ``--rescore`` results over the same saved programs."""
    prior = {r["workload"]: r for r in before}
    rows = [(prior[r["workload"]], r) for r in after if r["workload"] in prior]
    lines = ["| workload | programs | Spearman | pairwise acc. | top-8 pick / best (random 8) |", "|---|---|---|---|---|"]
    for b, a in rows:
        lines.append(f"| {a['workload']} | {a['programs']} | {b['spearman']:+.2f} → {a['spearman']:+.2f} | "
                     f"{b['pairwise_accuracy']:.2f} → {a['pairwise_accuracy']:.2f} | "
                     f"{b['top_pick']:.2f} → **{a['top_pick']:.2f}** ({a['random_pick']:.2f}) |")
    med = statistics.median
    lines += ["", f"- {len(rows)} workloads. Median Spearman {med(b['spearman'] for b, _ in rows):.2f} → "
                  f"{med(a['spearman'] for _, a in rows):.2f} (better on {sum(a['spearman'] > b['spearman'] for b, a in rows)}, "
                  f"worse on {sum(a['spearman'] < b['spearman'] for b, a in rows)}); the top-8 pick beats 8 random "
                  f"programs on {sum(b['top_pick'] < b['random_pick'] for b, _ in rows)} → "
                  f"{sum(a['top_pick'] < a['random_pick'] for _, a in rows)}."]
    return "\n".join(lines)


def format_comparison(before: list[dict], after: list[dict]) -> str:
    """A before -> after table of two reports over the same workloads (and seed)."""
    if after and "top_pick" in after[0]:
        return format_rescore_comparison(before, after)
    prior = {r["workload"]: r for r in before}
    lines = ["| workload | Spearman | pairwise acc. | top-32 drafts / 32 random | top-32 ranked / 32 random |",
             "|---|---|---|---|---|"]
    rows = [(prior[r["workload"]], r) for r in after if r["workload"] in prior]
    for b, a in rows:
        lines.append(f"| {a['workload']} | {b['spearman']:+.2f} → {a['spearman']:+.2f} | "
                     f"{b['pairwise_accuracy']:.2f} → {a['pairwise_accuracy']:.2f} | "
                     f"{b['drafts_vs_random']:.2f} → **{a['drafts_vs_random']:.2f}** | "
                     f"{b['ranked_vs_random']:.2f} → **{a['ranked_vs_random']:.2f}** |")
    med = statistics.median
    lines += ["", f"- {len(rows)} workloads. Median Spearman {med(b['spearman'] for b, _ in rows):.2f} → "
                  f"{med(a['spearman'] for _, a in rows):.2f}; better on "
                  f"{sum(a['spearman'] > b['spearman'] for b, a in rows)}. Genetic drafts beat random on "
                  f"{sum(b['drafts_vs_random'] < 1 for b, _ in rows)} → {sum(a['drafts_vs_random'] < 1 for _, a in rows)}; "
                  f"the ranked population on {sum(b['ranked_vs_random'] < 1 for b, _ in rows)} → "
                  f"{sum(a['ranked_vs_random'] < 1 for _, a in rows)}."]
    return "\n".join(lines)


def main(argv=None) -> int:
    from pruner_ms.bench.suite import load_suite, select_workloads
    from pruner_ms.bench.workloads import workload_from_spec

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="cpu")
    p.add_argument("--workloads", default=None, help="comma-separated names (default: all of the suite)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-set", type=int, default=32)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--random", type=int, default=None, help="size of the random set (default: --per-set)")
    p.add_argument("--save-programs", default=None, metavar="DIR",
                   help="also keep every measured program (trace + latency) in DIR/<workload>.json")
    p.add_argument("--rescore", default=None, metavar="DIR",
                   help="no measurement: score the programs saved in DIR with the current analyzer")
    p.add_argument("--target", default=None, metavar="TARGET",
                   help="with --rescore: the analyzer of this LLVM target, a JSON dict (e.g. '{\"kind\": \"llvm\", "
                        "\"mcpu\": \"rocketlake\", \"num-cores\": 2}', that of the machine that measured the "
                        "programs) instead of the host's")
    p.add_argument("--compare", nargs=2, default=None, metavar=("BEFORE", "AFTER"),
                   help="no measurement: print the before -> after table of two report JSON files")
    p.add_argument("--out", default=None, help="JSON file; the Markdown table goes next to it (.md)")
    a = p.parse_args(argv)
    suite = load_suite(a.suite)
    workloads = [w if not isinstance(w, dict) else workload_from_spec(w) for w in suite["workloads"]]
    workloads = select_workloads(workloads, names=a.workloads.split(",") if a.workloads else None)
    if a.compare:
        with open(a.compare[0]) as f0, open(a.compare[1]) as f1:
            print(format_comparison(json.load(f0)["rows"], json.load(f1)["rows"]))
        return 0
    if a.target and not a.rescore:
        p.error("--target only applies to --rescore (a measuring report uses this machine's target)")
    if a.rescore:
        try:
            target = json.loads(a.target) if a.target else None
        except json.JSONDecodeError as err:
            p.error(f"--target {a.target!r} is not JSON ({err}); give a target dict, e.g. "
                    "'{\"kind\": \"llvm\", \"mcpu\": \"rocketlake\", \"num-cores\": 2}'")
        rows = []
        for wl in workloads:
            path = os.path.join(a.rescore, f"{wl.name}.json")
            if os.path.exists(path):
                r = rescore_workload(path, wl, target=target)
                rows.append(r)
                print(f"{r['workload']:40s} n={r['programs']:3d} spearman {r['spearman']:+.2f} pairwise "
                      f"{r['pairwise_accuracy']:.2f} top-8 pick {r['top_pick']:.2f} (random {r['random_pick']:.2f}) "
                      f"analyzer/measured {r['analyzer_over_measured_median']:.2f}", flush=True)
        if a.out:
            os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
            with open(a.out, "w") as f:
                json.dump({"command": " ".join(["python", "scripts/analyzer_report.py", *(argv or sys.argv[1:])]),
                           "kind": "rescore", "rows": rows}, f, indent=1)
        return 0
    if not a.out:
        p.error("--out is required unless --rescore is given")
    rows = []
    if os.path.exists(a.out):  # merge: a long report may be split across invocations
        with open(a.out) as f:
            rows = json.load(f)["rows"]
    for wl in workloads:
        rows = [r for r in rows if r["workload"] != wl.name]
        print(f"{wl.name}: drafting and measuring", flush=True)
        rows.append(report_workload(wl, seed=a.seed, per_set=a.per_set, passes=a.passes, random_set=a.random,
                                    save_dir=a.save_programs))
        print(format_report(rows[-1:]).splitlines()[2], flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump({"command": " ".join(["python", "scripts/analyzer_report.py", *(argv or sys.argv[1:])]),
                       "seed": a.seed, "per_set": a.per_set, "passes": a.passes, "rows": rows}, f, indent=1)
        with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
            f.write(format_report(rows) + "\n")
    print(format_report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
