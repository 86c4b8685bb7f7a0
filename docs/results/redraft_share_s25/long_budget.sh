#!/bin/bash
# issue #10 long-budget check with the redraft reservation (worktree at 511b234)
cd /tmp/s25/head
export PYTHONPATH=/tmp/s25/head
B=/work/main/.venv/bin/pruner-ms
$B bench --suite cpu --workloads conv2d-1x128x28x28-f128-k3 --strategies pruner,pruner+redraft_share=0.5,default --seeds 0 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench25/redraft_long > /tmp/bench25/long_conv.log 2>&1
for wl in gemm-512x512x512 dense-128x768x768; do
$B bench --suite cpu --workloads $wl --strategies pruner,pruner+redraft_share=0.5,default --seeds 0,1 --trials 384 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench25/redraft_long > /tmp/bench25/long_$wl.log 2>&1
done
echo done > /tmp/bench25/long.done
