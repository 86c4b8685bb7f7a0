#!/bin/bash
# `pruner-ms tune --workload gemm-64 --trials 8` from a fresh work_dir, timed, alternating two trees:
#   bash docs/results/startup_s33/startup.sh BEFORE_TREE AFTER_TREE [ROUNDS]
# (each tree a checkout or worktree; the calibration cache is shared and warm, as for a user's second run)
before=$1; after=$2; rounds=${3:-4}
export PRUNER_MS_CACHE_DIR=${PRUNER_MS_CACHE_DIR:-/tmp/startup_cache}
py=${PYTHON:-$(pwd)/.venv/bin/python}
(cd "$after" && PYTHONPATH="$after" $py -m pruner_ms.cli tune --workload gemm-64 --trials 8 --work-dir /tmp/startup_warm >/dev/null 2>&1)
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 1 ]; then order="$before $after"; else order="$after $before"; fi
  for tree in $order; do
    rm -rf /tmp/startup_wd
    s=$(date +%s.%N)
    (cd "$tree" && PYTHONPATH="$tree" $py -m pruner_ms.cli tune --workload gemm-64 --trials 8 --work-dir /tmp/startup_wd >/dev/null 2>&1) || echo "FAILED: $tree"
    e=$(date +%s.%N)
    echo "round $i $([ "$tree" = "$before" ] && echo before || echo after) $(echo "$e - $s" | bc) s"
  done
done
