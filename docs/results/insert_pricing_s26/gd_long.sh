#!/bin/bash
# issue #10: gemm-512 and dense-128x768x768 at 384 trials with the insert pricing (worktree at 2206481),
# after the conv2d's runs; seeds 0,1 in one invocation (the order alternates with the seed index)
while [ ! -f /tmp/bench26/conv_long.done ]; do sleep 10; done
cd /tmp/s26/head
export PYTHONPATH=/tmp/s26/head
B=/work/main/.venv/bin/pruner-ms
for wl in gemm-512x512x512 dense-128x768x768; do
$B bench --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench26/gd_long > /tmp/bench26/gd_long_$wl.log 2>&1
done
touch /tmp/bench26/gd_long.done
