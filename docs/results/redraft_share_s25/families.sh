#!/bin/bash
# records of five more families on this machine kind, for rescoring the insert-pricing experiment (worktree at fc83b89; code of 305f95c)
cd /tmp/s25/head2
for wl in conv2d-1x256x56x56-f64-k1 dwconv2d-1x144x56x56-k3s1 bmm-12x128x128x64-nt conv2d-1x64x56x56-f128-k3s2 dense-128x768x3072; do
PYTHONPATH=/tmp/s25/head2 /work/main/.venv/bin/pruner-ms bench --suite cpu --workloads $wl --strategies pruner,default --seeds 0 --trials 128 --trials-per-iter 32 --no-models --no-progress --remeasure-passes 0 --out /tmp/bench25/families > /tmp/bench25/families_$wl.log 2>&1
done
echo done > /tmp/bench25/families.done
