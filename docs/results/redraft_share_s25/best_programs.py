"""The best recorded programs of tuning runs, with their decisions and the analyzer's estimate (the
analyzer of each record's target), to compare what the default found with what PrunerSearch found
(run on the machine that measured them).

Usage: PYTHONPATH=. python best_programs.py RUN (WORK_DIR/<workload>/<strategy>/<seed> or best_records/NAME) ... [--top K]
"""
import argparse

from pruner_ms.analysis import analyzer_for_target
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, decisions, replayed

parser = argparse.ArgumentParser()
parser.add_argument("runs", nargs="+")
parser.add_argument("--top", type=int, default=6)
args = parser.parse_args()
analyzers = {}
for run in args.runs:
    print(f"== {run}: recorded ms, analyzer ms, decisions (tiles, unroll, compute location)")
    for rec in best_records(run)[: args.top]:
        analyzer = analyzers.setdefault(str(rec.target), analyzer_for_target(rec.target))
        decided = decisions(rec)
        print(f"{1e3 * record_seconds(rec):.3f} {1e3 * analyzer.estimate_seconds(replayed(rec).mod):.3f} {decided}")
