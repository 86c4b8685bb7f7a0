#!/bin/bash
cd /tmp/s19/head
for wl in gemm-512x512x512 dense-128x768x768 gemm-256x1024x256 conv2d-1x64x56x56-f128-k3s2 dense-1x768x3072; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s19/head PRUNER_MS_CACHE_DIR=/tmp/bench19/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1,2 --trials 128 --trials-per-iter 32 \
      --no-models --no-progress --out /tmp/bench19/suite_cpu_issue10_s19
done
echo "=== done $(date -u +%H:%M:%S)"
