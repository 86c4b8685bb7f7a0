#!/usr/bin/env bash
# The GPU host's side of issue 13: put together the bundle scripts/gpu_bundle.sh made, check the GPU,
# TVM and nvcc, and run the tensor-core benchmark. Two device calls, the second at once after the first
# (the machine keeps files that git ignores only ~30 s after a call):
#
#   scripts/gpu_run.sh stage 1                      call 1: carries .gpu_bundle/manifest.json + site.tar.xz.part1
#   scripts/gpu_run.sh run --out "$OUT" [--small]   call 2: carries .gpu_bundle/manifest.json + site.tar.xz.part2
#
# run: unpacks into $PRUNER_MS_SITE (default /tmp/pruner_ms_site; nothing goes into the system site),
# sets PYTHONPATH, checks `import tvm, xgboost`, tvm.cuda(0).exist, nvcc and a C++ compiler, then runs
# python -m pruner_ms.bench.gpu, which writes OUT/gpu_bench.json after every run (OUT/gpu_run.log: the log).
# Options of run: --small, --budget S (seconds for the whole call, default 330), --size, --strategies,
# --seeds, --trials, --workloads (passed to the benchmark); --synthetic SPEC rehearses the whole run without a GPU
# (SYNTHETIC latencies; for checking the set-up here). Also: `unpack` (unpack and import only; no GPU
# needed), `check` (unpack, then the GPU checks, no benchmark). Environment: PYTHON (default python3),
# PRUNER_MS_BUNDLE (default .gpu_bundle), PRUNER_MS_STAGE (default /tmp/pruner_ms_bundle), PRUNER_MS_SITE.
set -euo pipefail
START=$(date +%s)
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python3}
BUNDLE=${PRUNER_MS_BUNDLE:-.gpu_bundle}
STAGE=${PRUNER_MS_STAGE:-/tmp/pruner_ms_bundle}
SITE=${PRUNER_MS_SITE:-/tmp/pruner_ms_site}
say() { echo "gpu_run.sh: $*"; }
die() { echo "gpu_run.sh: $*" >&2; exit 1; }
[[ $# -ge 1 ]] || die "usage: scripts/gpu_run.sh stage N | run --out DIR [--small] | unpack | check (see --help)"
CMD=$1; shift

setup_env() {
  export PYTHONPATH="$SITE:$REPO${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
  # tvm_ffi would JIT-build a torch DLPack extension in every process (builder and runner workers too)
  export TVM_FFI_DISABLE_TORCH_C_DLPACK=${TVM_FFI_DISABLE_TORCH_C_DLPACK:-1}
  # libtvm_runtime_cuda.so needs libcudart.so.13: from the loader's cache, or a CUDA toolkit, or torch's wheels
  if ! ldconfig -p 2>/dev/null | grep -q 'libcudart\.so\.13 '; then
    local d
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
             $("$PY" -c 'import glob,sys; print(" ".join(sorted({p.rsplit("/",1)[0] for s in sys.path for p in glob.glob(s+"/nvidia/*/lib/libcudart.so.13")})))' 2>/dev/null); do
      if [[ -e $d/libcudart.so.13 ]]; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
    done
  fi
  # ... and the driver's libcuda.so.1 (this workplace mounts the driver under /usr/local/nvidia)
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
      if [[ -e $d/libcuda.so.1 ]]; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
    done
  fi
}

unpack_site() {
  "$PY" "$REPO/scripts/gpu_bundle.py" unpack --bundle "$BUNDLE" --stage "$STAGE" --site "$SITE" || exit 1
  setup_env
  "$PY" -c 'import tvm, tvm_ffi, xgboost; print("gpu_run.sh: python", __import__("sys").version.split()[0], "| tvm", tvm.__version__, "| tvm_ffi", tvm_ffi.__version__, "| xgboost", xgboost.__version__)' \
    || die "the bundle in $SITE does not import (above); check the host's numpy/scipy/ml_dtypes, or rebuild the bundle with scripts/gpu_bundle.sh"
}

gpu_checks() {  # $1: "synthetic" skips what needs the GPU
  if [[ ${1:-} != synthetic ]]; then
    command -v nvidia-smi >/dev/null && nvidia-smi -L || die "no NVIDIA GPU found (nvidia-smi); the benchmark measures on a GPU"
  fi
  command -v nvcc >/dev/null || die "nvcc not found on PATH; CudaBuilder compiles every candidate with it"
  say "$(nvcc --version | grep release)"
  command -v "${CXX:-g++}" >/dev/null || command -v c++ >/dev/null \
    || die "no C++ compiler (g++/c++): the runner links each built artifact with one (tvm.runtime.load_module)"
  if [[ ${1:-} != synthetic ]]; then
    "$PY" -m pruner_ms.bench.gpu --check-env || die "the GPU check failed (above)"
  fi
}

case "$CMD" in
  -h|--help) sed -n '2,17p' "$0" ;;
  stage)
    [[ $# -eq 1 ]] || die "usage: scripts/gpu_run.sh stage N (the part this call carries)"
    "$PY" "$REPO/scripts/gpu_bundle.py" stage "$1" --bundle "$BUNDLE" --stage "$STAGE" || exit 1
    say "next, at once: scripts/gpu_run.sh run --out \"\$OUT\" (carrying the next part; README.md, 'GPU host run (issue 13)')"
    # cheap facts for the log while the next call comes
    { command -v nvidia-smi >/dev/null && nvidia-smi -L; } || say "warning: nvidia-smi finds no GPU"
    { command -v nvcc >/dev/null && nvcc --version | grep release; } || say "warning: nvcc is not on PATH"
    "$PY" -c 'import sys, numpy, scipy, ml_dtypes, psutil, cloudpickle, tqdm, torch; print("gpu_run.sh: host python", sys.version.split()[0], "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__, "torch", torch.__version__)' \
      || say "warning: a package the bundle relies on the host for is missing (above)"
    ;;
  unpack) unpack_site ;;
  check) unpack_site; gpu_checks ;;
  run)
    OUT_DIR="" BUDGET=330 ARGS=() MODE=gpu
    while [[ $# -gt 0 ]]; do
      case "$1" in
        --out) OUT_DIR=$2; shift ;;
        --small) ARGS+=(--size small) ;;
        --budget) BUDGET=$2; shift ;;
        --strategies|--seeds|--trials|--size|--workloads) ARGS+=("$1" "$2"); shift ;;
        --synthetic) ARGS+=(--synthetic "$2"); MODE=synthetic; shift ;;
        *) die "run: unknown option $1 (see --help)" ;;
      esac
      shift
    done
    [[ -n $OUT_DIR ]] || die "run needs --out DIR (on the device machine: --out \"\$OUT\")"
    mkdir -p "$OUT_DIR"
    unpack_site
    gpu_checks "$MODE"
    LEFT=$(( BUDGET - ($(date +%s) - START) ))
    (( LEFT > 60 )) || die "only ${LEFT} s of the ${BUDGET} s budget left after the set-up; raise --budget"
    say "set-up took $(( $(date +%s) - START )) s; benchmark budget ${LEFT} s"
    set -o pipefail
    RC=0
    "$PY" -m pruner_ms.bench.gpu ${ARGS[@]+"${ARGS[@]}"} --budget-s "$LEFT" --out "$OUT_DIR/gpu_bench.json" 2>&1 \
      | tee "$OUT_DIR/gpu_run.log" || RC=$?
    JSON=$OUT_DIR/gpu_bench.json
    if [[ -f $JSON ]] && (( $(stat -c %s "$JSON") > 15 * 1024 * 1024 )); then  # a file over 16 MiB does not come back
      "$PY" -c $'import lzma, shutil, sys\nwith open(sys.argv[1], "rb") as i, lzma.open(sys.argv[1] + ".xz", "wb") as o:\n    shutil.copyfileobj(i, o)' "$JSON" \
        && rm "$JSON" && say "compressed $JSON to $JSON.xz (over 15 MiB)"
    fi
    say "done in $(( $(date +%s) - START )) s, benchmark exit status $RC; files: $(ls "$OUT_DIR" | tr '\n' ' ')"
    exit "$RC"
    ;;
  *) die "unknown command $CMD; use stage N, run, unpack or check" ;;
esac
