"""Measured latency against the contiguous runs a program reads side by side, and the analyzer's ranking
with and without its prefetch-stream term (docs/results/prefetch_streams_s31/README.md).

    python docs/results/prefetch_streams_s31/streams.py WORK_DIR...
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np

from pruner_ms.analysis import SymbolicAnalyzer, analyzer_for_target
from pruner_ms.integration.records import read_work_dir
from pruner_ms.strategy.trust import spearman

BUCKETS = ((1, 8), (8, 16), (16, 24), (24, 32), (32, 48), (48, 64), (64, 128), (128, 256), (256, 10**9))


def main(work_dirs: list[str]) -> None:
    runs, lat, est_on, est_off, rho_on, rho_off = [], [], [], [], [], []
    for wd in work_dirs:
        (wl,) = read_work_dir(wd)
        on = analyzer_for_target(wl.target)
        off = SymbolicAnalyzer(dataclasses.replace(on.spec, prefetch_streams=10**9))
        ok = np.isfinite(wl.latencies)
        mods = [c.sch.mod for c, o in zip(wl.candidates, ok) if o]
        e_on = [on.analyze(m) for m in mods]
        e_off = np.array([off.estimate_seconds(m) for m in mods])
        runs += [max(n.symbols["concurrent_runs"] for n in e.nests) for e in e_on]
        secs = wl.latencies[ok]
        lat += list(secs)
        rho_on.append(spearman(-np.array([e.seconds for e in e_on]), -secs))
        rho_off.append(spearman(-e_off, -secs))
        print(f"{wd}: {ok.sum()} programs, Spearman {rho_off[-1]:+.2f} without the term, {rho_on[-1]:+.2f} with it "
              f"(prefetch_streams {on.spec.prefetch_streams})")
    runs, lat = np.array(runs), np.array(lat) * 1e3
    print(f"\nmean Spearman: {np.mean(rho_off):+.3f} without, {np.mean(rho_on):+.3f} with\n")
    print("| contiguous runs read side by side | programs | measured ms: min | median |")
    print("|---|---|---|---|")
    for lo, hi in BUCKETS:
        m = (runs >= lo) & (runs < hi)
        if m.any():
            print(f"| {lo}-{hi - 1 if hi < 10**9 else 'more'} | {m.sum()} | {lat[m].min():.3f} | {np.median(lat[m]):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
