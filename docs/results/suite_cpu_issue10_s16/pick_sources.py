#!/usr/bin/env python
"""Where PrunerSearch's improvements come from: per round index and pick source (local search,
ranked drafts/model picks, random picks), how many picks, in how many rounds the source's best beat
everything measured before that round, and the median of its best over the best so far.

A batch lists its latencies in pick order: local picks first, then the ranked ones (drafts and
model picks interleaved), then the random ones (``round_profiles[i]["picks_*"]`` gives the counts).

    python docs/results/suite_cpu_issue10_s16/pick_sources.py docs/results/suite_cpu_issue10_s1*/**/suite.json
"""
import collections
import json
import math
import statistics
import sys

FAILED = 1e9  # a failed program's latency in the suite's batches is MetaSchedule's 1e10


def main(paths):
    rows = collections.defaultdict(lambda: {"runs": 0, "picks": 0, "improved": 0, "ratio": []})
    for path in paths:
        for run in json.load(open(path))["runs"]:
            if run["strategy"] != "pruner":
                continue
            best = math.inf
            for index, (batch, prof) in enumerate(zip(run["batches"], run["round_profiles"])):
                lat = [x if x and x < FAILED else math.inf for x in batch["latencies"]]
                n_local = prof.get("picks_local", 0)
                n_ranked = prof.get("picks_draft", 0) + prof.get("picks_model", 0)
                parts = {"local": lat[:n_local], "ranked": lat[n_local:n_local + n_ranked],
                         "random": lat[n_local + n_ranked:]}
                for source, xs in parts.items():
                    row = rows[(index, source)]
                    row["runs"] += 1
                    row["picks"] += len(xs)
                    if xs and index > 0:
                        row["improved"] += min(xs) < best
                        row["ratio"].append(min(xs) / best)
                best = min([best, *lat])
    print("| round | source | runs | picks | rounds whose best beat all before | median best / best so far |")
    print("|---|---|---|---|---|---|")
    for (index, source), row in sorted(rows.items()):
        ratio = f"{statistics.median(row['ratio']):.3f}" if row["ratio"] else "-"
        improved = row["improved"] if index > 0 and row["picks"] else "-"
        print(f"| {index} | {source} | {row['runs']} | {row['picks']} | {improved} | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1:])
