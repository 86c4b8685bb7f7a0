#!/bin/bash
# the three families whose records the broadcast price moved most, as the twenty-fifth session's families.sh ran
# them (pruner,default, seed 0, 128 trials, no re-measurement), at 488e42e (the analyzer of 2206481)
cd /tmp/s26/head2
for wl in bmm-12x128x128x64-nt conv2d-1x64x56x56-f128-k3s2 dense-128x768x3072; do
PYTHONPATH=/tmp/s26/head2 /work/main/.venv/bin/pruner-ms bench --suite cpu --workloads $wl --strategies pruner,default --seeds 0 --trials 128 --trials-per-iter 32 --no-models --no-progress --remeasure-passes 0 --out /tmp/bench26/families > /tmp/bench26/families_$wl.log 2>&1
done
touch /tmp/bench26/families.done
