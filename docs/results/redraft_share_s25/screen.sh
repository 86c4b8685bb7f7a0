#!/bin/bash
# issue #10: the redraft reservation screened on the conv2d's seed 1 at the long budget (worktree at 511b234)
cd /tmp/s25/head
PYTHONPATH=/tmp/s25/head /work/main/.venv/bin/pruner-ms bench --suite cpu --workloads conv2d-1x128x28x28-f128-k3 \
  --strategies pruner,pruner+redraft_share=0.25,pruner+redraft_share=0.5,default --seeds 1 --trials 384 \
  --trials-per-iter 32 --no-models --no-progress --out /tmp/bench25/redraft_conv_s1
