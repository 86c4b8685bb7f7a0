#!/bin/bash
# thirty-second session, commit 7bd92f2 in a worktree: git worktree add /tmp/s32/head 7bd92f2 --detach
S=evolutionary-draft+population_size=256+genetic_num_iters=2,pruner,default
for spec in gemv:dense-1x768x3072 fam:gemm-256x1024x256 fam:dwconv2d-1x96x112x112-k3s2 fam:conv2d-1x256x56x56-f64-k1; do
  out=${spec%%:*}; wl=${spec#*:}
  echo "== $wl $(date -u +%T)"
  (cd /tmp/s32/head && PYTHONPATH=/tmp/s32/head PRUNER_MS_CACHE_DIR=/tmp/bench32/cache /work/main/.venv/bin/python \
     -m pruner_ms.cli bench --suite cpu --workloads $wl --strategies $S --seeds 0,1,2 --trials 128 \
     --trials-per-iter 32 --no-models --no-progress --out /tmp/bench32/${out}_s32)
done
echo "== done $(date -u +%T)"
