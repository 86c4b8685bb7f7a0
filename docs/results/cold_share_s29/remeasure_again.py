"""Re-measure the decisive programs of a suite result again, with the re-measurement of the code on
PYTHONPATH, and write a copy of the result with those latencies (for `ablation_s7/table.py`).

    PYTHONPATH=. python docs/results/cold_share_s29/remeasure_again.py SUITE_JSON OUT_JSON [WORKLOAD ...]

Only the named workloads (default: all) are re-measured and kept in the copy.
"""
import json
import sys

from pruner_ms.bench.remeasure import remeasure_runs
from pruner_ms.bench.suite import load_suite, select_workloads
from pruner_ms.bench.workloads import workload_from_spec


def main(src, dst, *names):
    d = json.load(open(src))
    names = names or sorted({r["workload"] for r in d["runs"]})
    d["runs"] = [r for r in d["runs"] if r["workload"] in names]
    suite = [w if not isinstance(w, dict) else workload_from_spec(w) for w in load_suite(d["suite"])["workloads"]]
    for name in names:
        runs = [r for r in d["runs"] if r["workload"] == name]
        per_run = remeasure_runs(select_workloads(suite, names=[name])[0], [(r, r["work_dir"]) for r in runs], passes=5)
        for i, r in enumerate(runs):
            r["remeasured"] = per_run[i]
    json.dump(d, open(dst, "w"), indent=1, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:])
