#!/bin/bash
cd /tmp/s27/head
for wl in dense-1x768x3072 conv2d-1x256x56x56-f64-k1 dwconv2d-1x144x56x56-k3s1 gemm-256x1024x256 \
          dwconv2d-1x96x112x112-k3s2 dense-128x768x768 gemm-512x512x512 bmm-12x128x128x64-nt \
          conv2d-1x64x56x56-f128-k3s2 conv2d-bias-relu-1x256x14x14-f256-k3 dense-128x768x3072 \
          conv2d-1x64x56x56-f64-k3 conv2d-1x128x28x28-f128-k3; do
  echo "$(date -u +%H:%M:%S) start $wl"
  PYTHONPATH=/tmp/s27/head PRUNER_MS_CACHE_DIR=/tmp/bench27/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1,2 --trials 128 --trials-per-iter 32 \
      --no-models --no-progress --out /tmp/bench27/suite_cpu_issue10_s27 > /tmp/bench27/log_$wl.txt 2>&1
  echo "$(date -u +%H:%M:%S) end $wl rc=$?"
done
touch /tmp/bench27/suite.done
