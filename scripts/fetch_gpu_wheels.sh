#!/usr/bin/env bash
# Download the wheels scripts/bench_gpu.sh installs on an offline GPU host (CPython 3.12, x86-64 Linux).
#   scripts/fetch_gpu_wheels.sh [DIR]   (default .whl)
# torch, numpy, tqdm, cloudpickle and psutil are expected on the GPU host already.
set -euo pipefail
DIR=${1:-.whl}
mkdir -p "$DIR"
for pkg in apache-tvm==0.27.0.post1 apache-tvm-ffi==0.1.14.post1 xgboost-cpu==3.2.0; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$DIR" "$pkg"
done
ls -la "$DIR"
