#!/usr/bin/env python
"""How well the symbolic analyzer ranks the programs that tuning runs measured on this machine.

For every workload of every work_dir given, each valid record is replayed as MetaSchedule compiles it
(:func:`pruner_ms.integration.database.compiled_schedule`), the analyzer of the record's target
estimates it, and its estimates are compared with the latencies the run recorded: Spearman rank
correlation, pairwise accuracy (:func:`pruner_ms.cost_model.train.pairwise_accuracy`), and
the best recorded latency among the analyzer's top ``--top`` against the best of all (1.0: the
analyzer's top holds the best program). Nothing is built or run, so it is cheap and can read the
work_dirs of a benchmark after the fact; the latencies are tuning-time ones (one measurement each),
and a search's records are not a uniform sample of the space (MetaSchedule's default in its XGBoost
warm-up is close to one; PrunerSearch's records lean to the analyzer's own picks).

    python scripts/analyzer_on_records.py runs/suite/work/*/*/* --out analyzer_on_records.json
    python scripts/analyzer_on_records.py runs/suite/work/*/*/* --pool   # also one ranking per workload

A work_dir path ``.../<workload>/<strategy>/<seed>`` (as ``pruner-ms bench`` lays them out) is
grouped by workload and strategy in the table; any other path is its own group.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def score_work_dir(work_dir: str, *, top: int) -> list[dict]:
    """One row per workload of ``work_dir``: the analyzer against the recorded latencies."""
    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.integration.database import compiled_schedule, workload_name
    from pruner_ms.integration.measured_latency import record_seconds
    from pruner_ms.integration.resume import open_database, workload_key

    database = open_database(work_dir, repair_tail=False)
    rows, analyzers = [], {}
    groups = collections.defaultdict(list)
    for rec in database.get_all_tuning_records():
        groups[workload_key(rec.workload.mod)].append(rec)
    for records in groups.values():
        estimates, latencies, replay_failures, analyzer_failures = [], [], 0, 0
        for rec in records:
            seconds = record_seconds(rec)
            if not math.isfinite(seconds):
                continue
            target = str(rec.target)
            if target not in analyzers:
                analyzers[target] = analyzer_for_target(rec.target)
            try:
                sch = compiled_schedule(rec.workload.mod, rec.trace)
            except Exception as err:  # noqa: BLE001  (a record of another TVM version: counted, reported)
                replay_failures += 1
                print(f"{work_dir}: a record does not replay ({type(err).__name__}); left out", file=sys.stderr)
                continue
            try:
                estimates.append(float(analyzers[target].estimate_seconds(sch.mod)))
            except Exception as err:  # noqa: BLE001  (an analyzer failure is data here: counted, reported)
                analyzer_failures += 1
                print(f"{work_dir}: the analyzer failed on a program ({type(err).__name__}: {err})", file=sys.stderr)
                continue
            latencies.append(seconds)
        row = {"work_dir": work_dir, "workload": workload_name(records[0].workload.mod), "records": len(records),
               "scored": len(latencies), "replay_failures": replay_failures, "analyzer_failures": analyzer_failures}
        row.update(ranking_metrics(estimates, latencies, top=top), estimates=estimates, latencies=latencies)
        rows.append(row)
    return rows


def ranking_metrics(estimates, latencies, *, top: int) -> dict:
    """The analyzer's ``estimates`` against measured ``latencies`` (seconds): Spearman, pairwise
    accuracy, best latency of the analyzer's top ``top`` over the best; empty under two programs."""
    import numpy as np

    from pruner_ms.cost_model.train import pairwise_accuracy
    from pruner_ms.strategy.trust import spearman

    if len(latencies) < 2:
        return {}
    e, t = np.array(estimates), np.array(latencies)
    order = np.argsort(e, kind="mergesort")
    return {"spearman": spearman(e, t), "pairwise_accuracy": pairwise_accuracy(-e, 1.0 / t),
            "top_best_ratio": float(t[order[:top]].min() / t.min()), "best_ms": float(t.min() * 1e3)}


def group_of(work_dir: str) -> tuple[str, str]:
    """``(workload, strategy)`` from a ``.../<workload>/<strategy>/<seed>`` path, else the path."""
    parts = os.path.normpath(work_dir).split(os.sep)
    if len(parts) >= 3 and parts[-1].isdigit():
        return parts[-3], parts[-2]
    return work_dir, ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("work_dirs", nargs="+", help="MetaSchedule work_dirs (database_workload.json + database_tuning_record.json)")
    p.add_argument("--top", type=int, default=8, help="size of the analyzer's top set (default 8)")
    p.add_argument("--pool", action="store_true",
                   help="also rank each workload's records of all work_dirs together (the analyzer's top among "
                        "every program the runs measured)")
    p.add_argument("--out", default=None, help="JSON file for the rows")
    a = p.parse_args(argv)
    missing = [w for w in a.work_dirs if not os.path.isdir(w)]
    if missing:
        p.error(f"not a directory: {', '.join(missing)} (give the work_dirs of tuning runs)")
    rows = []
    for work_dir in a.work_dirs:
        rows += score_work_dir(work_dir, top=a.top)
    table = collections.defaultdict(list)
    for row in rows:
        if "spearman" in row:
            table[group_of(row["work_dir"])].append(row)
    print(f"| workload | records of | runs | programs scored | Spearman (median; per run) | pairwise accuracy | "
          f"best of analyzer's top {a.top} / best |")
    print("|---|---|---|---|---|---|---|")
    for (workload, strategy), group in sorted(table.items()):
        med = statistics.median
        per = ", ".join(f"{r['spearman']:+.2f}" for r in group)
        print(f"| {workload} | {strategy} | {len(group)} | {sum(r['scored'] for r in group)} | "
              f"{med(r['spearman'] for r in group):+.2f} ({per}) | "
              f"{med(r['pairwise_accuracy'] for r in group):.2f} | {med(r['top_best_ratio'] for r in group):.2f} |")
    if a.pool:
        pooled = collections.defaultdict(lambda: ([], [], set()))
        for row in rows:
            workload, strategy = group_of(row["work_dir"])
            estimates, latencies, strategies = pooled[workload if strategy else row["workload"]]
            estimates += row["estimates"]
            latencies += row["latencies"]
            strategies.add(strategy or row["work_dir"])
        print(f"\nPooled: every record of a workload in one ranking (all strategies and runs given)\n")
        print(f"| workload | records of | programs scored | Spearman | pairwise accuracy | "
              f"best of analyzer's top {a.top} / best |")
        print("|---|---|---|---|---|---|")
        for workload, (estimates, latencies, strategies) in sorted(pooled.items()):
            m = ranking_metrics(estimates, latencies, top=a.top)
            if m:
                print(f"| {workload} | {', '.join(sorted(strategies))} | {len(latencies)} | {m['spearman']:+.2f} | "
                      f"{m['pairwise_accuracy']:.2f} | {m['top_best_ratio']:.2f} |")
    failures = sum(r["replay_failures"] + r["analyzer_failures"] for r in rows)
    if failures:
        print(f"\n{failures} records left out (replay or analyzer failures; see stderr)")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            kept = [{k: v for k, v in row.items() if k not in ("estimates", "latencies")} for row in rows]
            json.dump({"argv": sys.argv, "top": a.top, "rows": kept}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
