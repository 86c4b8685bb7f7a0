#!/usr/bin/env bash
# Create .venv with everything pruner_ms needs. torch==2.13.0 goes first: it is the CPU build
# available locally, while an unpinned torch pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
.venv/bin/python -m pip install -q torch==2.13.0 2>&1 | grep -v "is ignored" || true
.venv/bin/python -m pip install -q -e ".[test,plot]" 2>&1 | grep -v "is ignored" || true
.venv/bin/python -c "import pruner_ms, tvm, torch, xgboost; print('pruner_ms', pruner_ms.__version__, 'tvm', tvm.__version__, 'torch', torch.__version__)"
