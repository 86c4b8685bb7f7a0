#!/bin/bash
# thirty-third session, commit f975d32 in a worktree: git worktree add /tmp/s33/head f975d32 --detach
for wl in gemm-512x512x512 dense-128x768x768 conv2d-1x128x28x28-f128-k3 bmm-12x128x128x64-nt \
          dense-128x768x3072 conv2d-1x64x56x56-f64-k3 dwconv2d-1x144x56x56-k3s1 \
          conv2d-1x64x56x56-f128-k3s2 conv2d-bias-relu-1x256x14x14-f256-k3; do
  echo "== $wl $(date -u +%T)"
  (cd /tmp/s33/head && PYTHONPATH=/tmp/s33/head PRUNER_MS_CACHE_DIR=/tmp/bench33/cache /work/main/.venv/bin/python \
     -m pruner_ms.cli bench --suite cpu --workloads $wl --strategies pruner,default --seeds 0,1,2 --trials 128 \
     --trials-per-iter 32 --no-models --no-progress --out /tmp/bench33/suite_cpu_issue10_s33)
  [ -e /tmp/bench33/STOP ] && break
done
echo "== done $(date -u +%T)"
# after the session's CI, 02:57-03:12 UTC: the stride-2 conv2d, same worktree, same --out
(cd /tmp/s33/head && PYTHONPATH=/tmp/s33/head PRUNER_MS_CACHE_DIR=/tmp/bench33/cache /work/main/.venv/bin/python \
   -m pruner_ms.cli bench --suite cpu --workloads conv2d-1x64x56x56-f128-k3s2 --strategies pruner,default --seeds 0,1,2 \
   --trials 128 --trials-per-iter 32 --no-models --no-progress --out /tmp/bench33/suite_cpu_issue10_s33)
