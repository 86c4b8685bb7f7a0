#!/bin/bash
# issue #10: two genetic iterations in the verify stage (draft bar kept), screened on the conv2d at the long budget (worktree at 511b234)
while [ ! -f /tmp/bench25/long.done ]; do sleep 10; done
cd /tmp/s25/head
PYTHONPATH=/tmp/s25/head /work/main/.venv/bin/pruner-ms bench --suite cpu --workloads conv2d-1x128x28x28-f128-k3 \
  --strategies pruner+verify_iters=2,default --seeds 0,1 --trials 384 --trials-per-iter 32 --no-models --no-progress \
  --out /tmp/bench25/verify2_conv > /tmp/bench25/verify2_conv.log 2>&1
echo done > /tmp/bench25/verify2.done
