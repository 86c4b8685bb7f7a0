#!/bin/bash
# Issue #10's long-budget check: a GEMM, a conv2d and a dense layer at 384 trials (32 per round), 2 seeds,
# PrunerSearch against MetaSchedule's default, re-measured, alternating order, fresh work dirs. A worktree
# at aace852 in /tmp/s22/head (the analyzer of 98b92f1; later commits touch only docs), nothing else timed
# meanwhile.
cd /tmp/s22/head
for wl in gemm-512x512x512 dense-128x768x768 conv2d-1x128x28x28-f128-k3; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s22/head PRUNER_MS_CACHE_DIR=/tmp/bench22/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1 --trials 384 --trials-per-iter 32 \
      --no-models --no-progress --out /tmp/bench22/long_budget_s22
done
echo "=== done $(date -u +%H:%M:%S)"
