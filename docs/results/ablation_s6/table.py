import json, sys, statistics, collections
d = json.load(open(sys.argv[1]))
S = d["summaries"]["remeasured"]
runs = d["runs"]
search = collections.defaultdict(list)
for r in runs:
    search[(r["workload"], r["strategy"])].append(sum(r.get("round_seconds") or []))
wls = sorted({r["workload"] for r in runs})
strats = ["pruner", "pruner+cold_ranked=true"]
print("| workload | strategy | speed-up vs default (median; per seed) | final / default's | final / pruner's | search s per run (default's) |")
print("|---|---|---|---|---|---|")
for wl in wls:
    base = statistics.mean(search[(wl, "default")])
    for st in strats:
        k = f"{wl} vs default" if st == "pruner" else f"{wl} {st} vs default"
        s = S[k]
        vp = S.get(f"{wl} {st} vs pruner")
        per = ", ".join(f"{x['speedup']:.2f}" for x in s["seeds"])
        print(f"| {wl} | {st} | {s['median_speedup']:.2f}x ({per}) | {s['median_final_ratio']:.3f} | "
              f"{vp['median_final_ratio']:.3f} |" if vp else f"| {wl} | {st} | {s['median_speedup']:.2f}x ({per}) | {s['median_final_ratio']:.3f} | 1 |", end="")
        print(f" {statistics.mean(search[(wl, st)]):.1f} ({base:.1f}) |")
print()
print("| workload | strategy | 1st batch arrives, s (per seed) | round 0 search s (per seed) | 1st batch re-measured / default's final (per seed) |")
print("|---|---|---|---|---|")
for wl in wls:
    for st in strats + ["default"]:
        rs = sorted((r for r in runs if r["workload"] == wl and r["strategy"] == st), key=lambda r: r["seed"])
        finals = {r["seed"]: min(x["remeasured"] for x in r["remeasured"]) for r in runs if r["workload"] == wl and r["strategy"] == "default"}
        a = ", ".join("%.0f" % r["batches"][0]["seconds"] for r in rs)
        b = ", ".join("%.1f" % r["round_seconds"][0] for r in rs)
        c = ", ".join("%.3f" % (r["remeasured"][0]["remeasured"] / finals[r["seed"]]) for r in rs)
        print(f"| {wl} | {st} | {a} | {b} | {c} |")
