"""Per batch of one run's work_dir: build seconds, search-and-run seconds (from MetaSchedule's task
scheduler log) and the batch's best and median measured latency (ms, as recorded, not re-measured).

Usage: python3 batches.py WORK_DIR [WORK_DIR ...]   (each a ``.../<strategy>/<seed>`` folder)
"""
import datetime
import json
import statistics
import sys
from pathlib import Path


def batch_seconds(log: Path) -> list[tuple[int, int]]:
    """(build s, run + next search s) per batch, from the 'Sending' lines' timestamps."""
    stamps = [datetime.datetime.strptime(line.split()[1], "%H:%M:%S")
              for line in log.read_text().splitlines() if "Sending" in line]
    out = []
    for i in range(0, len(stamps) - 1, 2):
        after = (stamps[i + 2] - stamps[i + 1]).seconds if i + 2 < len(stamps) else -1
        out.append(((stamps[i + 1] - stamps[i]).seconds, after))
    return out


def batch_latencies(records: Path, size: int = 32) -> list[tuple[float, float]]:
    lat = []
    for line in records.read_text().splitlines():
        secs = json.loads(line)[1][1] or [1e10]
        lat.append(1e3 * sum(secs) / len(secs))
    return [(min(lat[i:i + size]), statistics.median(lat[i:i + size])) for i in range(0, len(lat), size)]


for wd in map(Path, sys.argv[1:]):
    print(wd)
    best = float("inf")
    times = batch_seconds(next((wd / "logs").glob("*task_scheduler.log")))
    for k, (lo, med) in enumerate(batch_latencies(wd / "database_tuning_record.json")):
        best = min(best, lo)
        build, after = times[k] if k < len(times) else (-1, -1)
        print(f"  batch {k:2d}: build {build:4d} s, run+search {after:4d} s, best {lo:.3f} ms, "
              f"median {med:.3f} ms, best so far {best:.3f} ms")
