#!/bin/bash
# issue #10: the conv2d at 384 trials with the insert pricing (worktree at 2206481): seed 1 first
# (pruner,default: the seed trapped before), then seed 0 (default,pruner: the order alternates)
cd /tmp/s26/head
export PYTHONPATH=/tmp/s26/head
B=/work/main/.venv/bin/pruner-ms
W=conv2d-1x128x28x28-f128-k3
$B bench --suite cpu --workloads $W --strategies pruner,default --seeds 1 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench26/conv_long > /tmp/bench26/conv_long_s1.log 2>&1
$B bench --suite cpu --workloads $W --strategies default,pruner --seeds 0 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench26/conv_long > /tmp/bench26/conv_long_s0.log 2>&1
touch /tmp/bench26/conv_long.done
