#!/bin/bash
# A deeper local search at the long budget: PrunerSearch as committed (local_steps=2), PrunerSearch with
# local_steps=4 (hill-climbing around the 8 best measured programs for 4 steps instead of 2) and
# MetaSchedule's default, on the dense layer where the twenty-second session's long-budget check failed
# (docs/results/long_budget_s22: 0x on seed 1); 384 trials, 32 per round, 2 seeds, re-measured,
# alternating order, fresh work dirs. A worktree at 21f4a92 in /tmp/s24/head, nothing else timed meanwhile.
cd /tmp/s24/head
wl=dense-128x768x768
echo "=== $wl $(date -u +%H:%M:%S)"
PYTHONPATH=/tmp/s24/head PRUNER_MS_CACHE_DIR=/tmp/bench24/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
    --suite cpu --workloads $wl --strategies pruner,pruner+local_steps=4,default --seeds 0,1 --trials 384 \
    --trials-per-iter 32 --no-models --no-progress --out /tmp/bench24/local_steps_s24
echo "=== done $(date -u +%H:%M:%S)"
