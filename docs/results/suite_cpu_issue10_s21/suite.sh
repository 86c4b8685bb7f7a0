#!/bin/bash
# The whole CPU suite (13 workloads) at one commit, one session: a worktree at 6c7318a in /tmp/s21/head
# (the analyzer of 98b92f1; later commits touch only docs), nothing else timed meanwhile.
# As run: the loop was stopped after it had started conv2d-1x64x56x56-f64-k3 (02:07 UTC; session time ran
# short), so the last three workloads below were not run this session.
cd /tmp/s21/head
for wl in gemm-512x512x512 dense-1x768x3072 conv2d-1x256x56x56-f64-k1 dwconv2d-1x144x56x56-k3s1 gemm-256x1024x256 \
          dense-128x768x768 conv2d-1x64x56x56-f128-k3s2 bmm-12x128x128x64-nt dwconv2d-1x96x112x112-k3s2 \
          conv2d-1x64x56x56-f64-k3 dense-128x768x3072 conv2d-bias-relu-1x256x14x14-f256-k3 conv2d-1x128x28x28-f128-k3; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s21/head PRUNER_MS_CACHE_DIR=/tmp/bench21/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1,2 --trials 128 --trials-per-iter 32 \
      --no-models --no-progress --out /tmp/bench21/suite_cpu_issue10_s21
done
echo "=== done $(date -u +%H:%M:%S)"
