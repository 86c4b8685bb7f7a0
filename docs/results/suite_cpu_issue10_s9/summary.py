"""Per-workload summary of a suite run against issue #10's bars, from suite.json (re-measured latencies).

    python3 docs/results/suite_cpu_issue10_s9/summary.py docs/results/suite_cpu_issue10_s9/suite.json

Columns: the median time-to-quality speed-up over seeds (each seed), the final-latency ratio
(each seed), the wall-time-per-measured-trial ratio, the host time inside the search
(``round_seconds`` summed over the run) and the rest of the run's wall time (build, run, cost-model
update), mean over seeds, ours then the default's; the first batch's best against the default's
first batch; the analyzer trust at the end (mean of the last round over seeds). Then the medians
over workloads and the bars of the issue (median >= 3x, none below 1.5x, final <= 1, wall <= 1.05x).
"""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
runs, summ = d["runs"], d["summaries"]["remeasured"]


def per_run(wl, strategy):
    rs = [r for r in runs if r["workload"] == wl and r["strategy"] == strategy]
    search = [sum(r.get("round_seconds") or []) for r in rs]
    rest = [r["wall_seconds"] - s for r, s in zip(rs, search)]
    trust = [r["round_profiles"][-1].get("trust") for r in rs if (r.get("round_profiles") or [None])[-1]]
    trust = [t for t in trust if t is not None]
    return statistics.mean(search), statistics.mean(rest), (statistics.mean(trust) if trust else None)


print("| workload | median speed-up (per seed) | final ratio (per seed) | wall s/trial ratio | "
      "search s / rest s per run (ours; default) | 1st batch ratio | trust |")
print("|---|---|---|---|---|---|---|")
rows = []
for key, s in sorted(summ.items()):
    wl, base = key.split(" vs ")
    ours = next(st for st in d["strategies"] if st != base)
    sp = ", ".join(f"{x['speedup']:.2f}" for x in s["seeds"])
    fr = ", ".join(f"{x['final_ratio']:.3f}" for x in s["seeds"])
    (o_s, o_r, trust), (b_s, b_r, _) = per_run(wl, ours), per_run(wl, base)
    rows.append((s["median_speedup"], s["median_final_ratio"], s["median_s_per_trial_ratio"]))
    print(f"| {wl} | **{s['median_speedup']:.2f}x** ({sp}) | {s['median_final_ratio']:.3f} ({fr}) | "
          f"{s['median_s_per_trial_ratio']:.2f} | {o_s:.0f} / {o_r:.0f}; {b_s:.0f} / {b_r:.0f} | "
          f"{s['median_first_batch_ratio']:.3f} | {'' if trust is None else f'{trust:.2f}'} |")
if rows:
    med = statistics.median
    print()
    print(f"Median over the {len(rows)} workloads of the per-workload median speed-up: "
          f"**{med(r[0] for r in rows):.2f}x** (bar: >= 3x); below 1.5x: {sum(r[0] < 1.5 for r in rows)} "
          f"(bar: 0); median final ratio above 1: {sum(r[1] > 1 for r in rows)} (bar: 0); "
          f"wall s/trial ratio above 1.05: {sum(r[2] > 1.05 for r in rows)} (bar: 0).")
