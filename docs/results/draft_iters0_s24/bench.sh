#!/bin/bash
# Redrafts without the analyzer's genetic search (draft_iters=0) on the workloads whose wall time per trial
# was above 1.05x the default's (gemm-256, bmm), the one with the lowest speed-up after them (stride-2
# depthwise conv2d) and the GEMV (where the analyzer steers the search most): PrunerSearch as committed,
# PrunerSearch with draft_iters=0, MetaSchedule's default; 3 seeds, 128 trials, 32 per round, re-measured,
# alternating order, fresh work dirs. A worktree at 21f4a92 in /tmp/s24/head, nothing else timed meanwhile.
# (The twenty-third session started this run at 2dbdcc6, the same search code; its results were lost
# with that session's machine.)
cd /tmp/s24/head
for wl in gemm-256x1024x256 bmm-12x128x128x64-nt dwconv2d-1x96x112x112-k3s2 dense-1x768x3072; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s24/head PRUNER_MS_CACHE_DIR=/tmp/bench24/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,pruner+draft_iters=0,default --seeds 0,1,2 --trials 128 \
      --trials-per-iter 32 --no-models --no-progress --out /tmp/bench24/draft_iters0_s24
done
echo "=== done $(date -u +%H:%M:%S)"
