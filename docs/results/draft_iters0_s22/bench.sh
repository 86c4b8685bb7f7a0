#!/bin/bash
# Round 1's genetic redraft is what keeps PrunerSearch's search above the default's on GEMM-like workloads
# (5-7 s against 2.3 s per run, docs/results/native_sampling_s22). What it buys: pruner against
# pruner+draft_iters=0 (drafts are the analyzer's ranking of the sampled population, no genetic search)
# and the default, on gemm-512 only (session time). A worktree at 52f67e7 in /tmp/s22/native, nothing else timed meanwhile.
cd /tmp/s22/native
for wl in gemm-512x512x512; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s22/native PRUNER_MS_CACHE_DIR=/tmp/bench22/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,pruner+draft_iters=0,default --seeds 0,1,2 --trials 128 \
      --trials-per-iter 32 --no-models --no-progress --out /tmp/bench22/draft_iters0_s22
done
echo "=== done $(date -u +%H:%M:%S)"
