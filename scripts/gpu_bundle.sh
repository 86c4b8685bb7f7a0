#!/usr/bin/env bash
# Build the bundle the offline GPU host needs (issue 13): download the cp312 manylinux wheels it lacks
# (apache-tvm, apache-tvm-ffi<0.1.15, xgboost-cpu, tornado), unpack them into one site tree, leave out
# what tuning never loads, xz it and split it into parts that each fit one device call (64 MiB with the
# repository's working tree). Run it here, where PyPI is reachable; scripts/gpu_run.sh runs there.
#
#   scripts/gpu_bundle.sh [--parts N] [--out DIR] [--no-download]
#
# Writes DIR (default .gpu_bundle, git-ignored): site.tar.xz.part1..N, manifest.json (versions, sha256
# of each part and wheel), SHA256SUMS, and wheels/ (the downloads, which do not travel). Prints each
# call's size against the limit and fails if one does not fit. ~3 min on one core (xz, single-threaded).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.gpu_bundle PARTS=2 DOWNLOAD=1 PY=${PYTHON:-python3}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --parts) PARTS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --no-download) DOWNLOAD=0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "gpu_bundle.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
git check-ignore -q "$OUT/x" \
  || { echo "gpu_bundle.sh: $OUT is not ignored by git; add '/$OUT/' to .gitignore, or every call would send it" >&2; exit 1; }
if [[ $DOWNLOAD == 1 ]]; then
  rm -rf "$OUT/wheels"
  PYTHON=$PY bash scripts/fetch_gpu_wheels.sh "$OUT/wheels"
fi
"$PY" scripts/gpu_bundle.py build --wheels "$OUT/wheels" --out "$OUT" --parts "$PARTS"
echo "gpu_bundle.sh: wrote $OUT; the GPU host run is in README.md, section 'GPU host run (issue 13)'"
