#!/bin/bash
# Issue #10's long-budget check at the current search code, on the two workloads of the twenty-second
# session's check not repeated by ../local_steps_s24 (which has the dense layer): the conv2d (0x on seed 1
# there) and gemm-512; PrunerSearch against MetaSchedule's default, 384 trials, 32 per round, 2 seeds,
# re-measured, alternating order, fresh work dirs. A worktree at 21f4a92 in /tmp/s24/head, nothing else
# timed meanwhile.
cd /tmp/s24/head
for wl in conv2d-1x128x28x28-f128-k3 gemm-512x512x512; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s24/head PRUNER_MS_CACHE_DIR=/tmp/bench24/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1 --trials 384 \
      --trials-per-iter 32 --no-models --no-progress --out /tmp/bench24/long_budget_s24
done
echo "=== done $(date -u +%H:%M:%S)"
