#!/usr/bin/env python
"""The CPU analyzer's cost per program and its estimates, on recorded programs, for one checkout.

Replays every valid record of each work dir (as MetaSchedule compiles it), then times
``SymbolicAnalyzer.analyze`` over them (best of 3 passes per work dir) and writes every estimate, so
two checkouts can be compared program by program:

    python analyzer_speed.py --repo OLD_CHECKOUT --out old.json WORK_DIR...
    python analyzer_speed.py --repo NEW_CHECKOUT --out new.json WORK_DIR...
    python analyzer_speed.py --compare old.json new.json
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time


def measure(repo: str, work_dirs: list[str], out: str) -> None:
    sys.path.insert(0, repo)
    import pruner_ms
    from tvm.s_tir import Schedule

    if not pruner_ms.__file__.startswith(repo):
        raise SystemExit(f"pruner_ms imported from {pruner_ms.__file__}, not from --repo {repo}")
    from pruner_ms.analysis import analyzer_for_target
    from pruner_ms.integration.measured_latency import record_seconds
    from pruner_ms.integration.resume import open_database

    rows = {}
    for wd in work_dirs:
        mods, analyzer = [], None
        for rec in open_database(wd, repair_tail=False).get_all_tuning_records():
            if not math.isfinite(record_seconds(rec)):
                continue
            sch = Schedule(rec.workload.mod)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
            mods.append(sch.mod)
            analyzer = analyzer or analyzer_for_target(rec.target)
        best = math.inf
        for _ in range(3):
            t = time.perf_counter()
            estimates = [analyzer.analyze(m).seconds for m in mods]
            best = min(best, (time.perf_counter() - t) / max(1, len(mods)))
        rows[wd] = {"ms_per_program": best * 1e3, "estimates": estimates}
        print(f"{wd}: {len(mods)} programs, {best * 1e3:.3f} ms each", flush=True)
    with open(out, "w") as f:
        json.dump(rows, f)


def compare(old: str, new: str) -> None:
    a, b = json.load(open(old)), json.load(open(new))
    differ = total = 0
    for wd in a:
        pairs = list(zip(a[wd]["estimates"], b[wd]["estimates"]))
        total += len(pairs)
        differ += sum(x != y for x, y in pairs)
        print(f"{wd}: {a[wd]['ms_per_program']:.3f} -> {b[wd]['ms_per_program']:.3f} ms/program "
              f"({a[wd]['ms_per_program'] / b[wd]['ms_per_program']:.2f}x)")
    print(f"{differ} of {total} estimates differ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work_dirs", nargs="*")
    ap.add_argument("--repo")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
    else:
        measure(args.repo, args.work_dirs, args.out)


if __name__ == "__main__":
    main()
