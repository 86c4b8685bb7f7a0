#!/bin/bash
S=evolutionary-draft,evolutionary-draft+population_size=256+genetic_num_iters=2,default
for wl in gemm-256x1024x256 dwconv2d-1x96x112x112-k3s2 conv2d-1x256x56x56-f64-k1; do
  echo "== $wl $(date -u +%T)"
  (cd /tmp/s31/cheap && PYTHONPATH=/tmp/s31/cheap PRUNER_MS_CACHE_DIR=/tmp/bench31/cache /work/main/.venv/bin/python \
     -m pruner_ms.cli bench --suite cpu --workloads $wl --strategies $S --seeds 0,1 --trials 128 \
     --trials-per-iter 32 --no-models --no-progress --out /tmp/bench31/evo_cheap_s31)
done
echo "== done $(date -u +%T)"
