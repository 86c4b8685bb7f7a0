#!/bin/bash
# a third seed of the conv2d at 384 trials (worktree at 488e42e: the analyzer of 2206481), pruner first
cd /tmp/s26/head2
PYTHONPATH=/tmp/s26/head2 /work/main/.venv/bin/pruner-ms bench --suite cpu --workloads conv2d-1x128x28x28-f128-k3 --strategies pruner,default --seeds 2 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench26/conv_long_s2 > /tmp/bench26/conv_long_s2.log 2>&1
touch /tmp/bench26/conv_long_s2.done
