#!/bin/bash
cd /tmp/s20/head
for wl in gemm-256x1024x256 dense-1x768x3072 gemm-512x512x512 dense-128x768x768 conv2d-1x64x56x56-f64-k3 conv2d-1x256x56x56-f64-k1; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s20/head PRUNER_MS_CACHE_DIR=/tmp/bench20/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1,2 --trials 128 --trials-per-iter 32 \
      --no-models --no-progress --out /tmp/bench20/suite_cpu_issue10_s20
done
echo "=== done $(date -u +%H:%M:%S)"
