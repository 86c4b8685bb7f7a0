#!/bin/bash
# PrunerSearch with TVM's C++ sampler (native_sampling, the default from 52f67e7) against the Python
# replays it replaces (pruner+native_sampling=false) and MetaSchedule's default, on the three workloads
# whose wall s/trial missed issue #10's bar in the twenty-first session. A worktree at 52f67e7 in
# /tmp/s22/native, nothing else timed meanwhile; re-measured, alternating order, fresh work dirs.
cd /tmp/s22/native
for wl in gemm-512x512x512 gemm-256x1024x256 bmm-12x128x128x64-nt; do
  echo "=== $wl $(date -u +%H:%M:%S)"
  PYTHONPATH=/tmp/s22/native PRUNER_MS_CACHE_DIR=/tmp/bench22/cache /work/main/.venv/bin/python -m pruner_ms.cli bench \
      --suite cpu --workloads $wl --strategies pruner,pruner+native_sampling=false,default --seeds 0,1,2 --trials 128 \
      --trials-per-iter 32 --no-models --no-progress --out /tmp/bench22/native_sampling_s22
done
echo "=== done $(date -u +%H:%M:%S)"
