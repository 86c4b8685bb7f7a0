#!/usr/bin/env bash
# Tensor-core benchmark on one NVIDIA GPU, offline: PrunerSearch vs MetaSchedule's default on fp16
# GEMMs (same trials, seed, builder, runner), each best latency against cuBLAS; writes one JSON.
#
#   scripts/bench_gpu.sh [--small] [--wheels DIR] [--out FILE]
#
# Needs: python3 with torch (CUDA) and numpy, nvcc, a C++ compiler, and a folder of wheels for what
# is missing (apache-tvm, apache-tvm-ffi<0.1.15, xgboost; scripts/fetch_gpu_wheels.sh downloads them
# on a machine with PyPI access). Installs into a private folder, never touches the system site.
# Full size: two GEMMs (4096^3 and 32x11008x4096), 64 trials each, ~5-6 min on a 16-core host (estimated);
# --small: 1024^3 and 16x4096x4096, 32 trials, ~2-3 min. For the offline GPU host of this project
# (64 MiB per call, no wheel folder fits), use scripts/gpu_bundle.sh + scripts/gpu_run.sh (README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=.whl SIZE=full OUT=results/gpu_bench.json PY=${PYTHON:-python3}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --small) SIZE=small ;;
    --wheels) WHEELS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "bench_gpu.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 \
  || { echo "bench_gpu.sh: no NVIDIA GPU found (nvidia-smi); this benchmark measures on a GPU" >&2; exit 1; }
command -v nvcc >/dev/null || { echo "bench_gpu.sh: nvcc not found; the builder compiles kernels with it" >&2; exit 1; }
SITE=${PRUNER_MS_SITE:-/tmp/pruner_ms_site}
if ! PYTHONPATH="$SITE" "$PY" -c "import tvm, xgboost" 2>/dev/null; then
  ls "$WHEELS"/apache_tvm-*.whl >/dev/null 2>&1 \
    || { echo "bench_gpu.sh: no apache_tvm wheel in $WHEELS; run scripts/fetch_gpu_wheels.sh $WHEELS where PyPI is reachable" >&2; exit 1; }
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHEELS"/*.whl
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TVM_FFI_DISABLE_TORCH_C_DLPACK=1
exec "$PY" -m pruner_ms.bench.gpu --size "$SIZE" --out "$OUT"
