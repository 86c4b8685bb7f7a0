#!/bin/bash
S=evolutionary-draft,pruner,default
for wl in dense-128x768x768 dense-1x768x3072 bmm-12x128x128x64-nt conv2d-1x64x56x56-f128-k3s2; do
  echo "== $wl $(date -u +%T)"
  (cd /tmp/s31/head && PYTHONPATH=/tmp/s31/head PRUNER_MS_CACHE_DIR=/tmp/bench31/cache /work/main/.venv/bin/python \
     -m pruner_ms.cli bench --suite cpu --workloads $wl --strategies $S --seeds 0,1 --trials 128 \
     --trials-per-iter 32 --no-models --no-progress --out /tmp/bench31/evo_fam_s31)
done
echo "== done $(date -u +%T)"
