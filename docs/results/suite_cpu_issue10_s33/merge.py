"""One suite.json from several: the runs of the chosen strategies in each, their summaries recomputed.

    PYTHONPATH=. python3 docs/results/suite_cpu_issue10_s33/merge.py OUT.json pruner,default IN.json...

Each workload's runs (and their re-measurement, done per workload in its own invocation) come whole
from one input; a workload found in two inputs is an error. The strategies the inputs ran besides
the chosen ones are left out (the summaries then compare only the chosen ones)."""
import json
import sys

from pruner_ms.bench.compare import summarize_views


def main(out: str, strategies: str, *inputs: str) -> None:
    keep = strategies.split(",")
    runs, sources, invocations = [], {}, []
    for path in inputs:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        for r in d["runs"]:
            if r["strategy"] not in keep:
                continue
            if sources.setdefault(r["workload"], path) != path:
                raise SystemExit(f"{r['workload']} is in {sources[r['workload']]} and {path}")
            runs.append(r)
        invocations += [{**i, "source": path} for i in d.get("invocations", [])]
    merged = {"strategies": keep, "seeds": sorted({r["seed"] for r in runs}),
              "trials": sorted({r["trials"] for r in runs}), "sources": sources, "invocations": invocations,
              "runs": runs, "summaries": summarize_views(runs)}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=1)
    print(f"wrote {out}: {len(runs)} runs of {len(sources)} workloads")


if __name__ == "__main__":
    main(*sys.argv[1:])
