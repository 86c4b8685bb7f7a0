#!/usr/bin/env bash
# Download the wheels the offline GPU host lacks (CPython 3.12, x86-64 Linux): apache-tvm, its FFI pinned
# below 0.1.15 (0.1.15.x segfaults in save_json), xgboost-cpu and tornado (TVM's RPC tracker).
#   scripts/fetch_gpu_wheels.sh [DIR]   (default .whl)
# torch, numpy, scipy, ml_dtypes, typing_extensions, tqdm, cloudpickle and psutil are on the GPU host
# already. scripts/gpu_bundle.sh packs these wheels into parts that fit a device call.
set -euo pipefail
DIR=${1:-.whl}
PY=${PYTHON:-python3}
mkdir -p "$DIR"
for pkg in apache-tvm==0.27.0.post1 apache-tvm-ffi==0.1.14.post1 xgboost-cpu==3.2.0 tornado==6.6.1; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DIR" "$pkg"
done
ls -la "$DIR"
