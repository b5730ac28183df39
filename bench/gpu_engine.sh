#!/usr/bin/env bash
# The gpu engine tier from offline bundles, in one prepared script (see bench/gpu_engine.py).
#
#   bench/gpu_engine.sh [--cpu-only] [--cpu-engine] [--versions 0.5.18,0.5.22] [--bundles DIR]
#
# Here (no nvidia-smi, or --cpu-only): builds the device bundles into .bundles/sglang-<v> (cp312,
# the lent H200 image; each must be <= 60 MiB), builds a bundle for this machine's Python over a
# `cpu` engine environment's torch ($HARNESS_CPU_ENGINE_DIR or $HARNESS_ENGINE_DIR), installs it
# offline into a scratch store and runs the params table in it.
# On the GPU machine (nvidia-smi present): installs .bundles/sglang-<v> offline over the machine's
# python3 (its torch + CUDA) and runs the params and n>1 tables against the real engine on the GPU.
# One bundle travels per device call (the 64 MiB carry limit): --versions 0.5.18, then 0.5.22.
# Writes report.md and report.json under $OUT when set, else reports/gpu-engine/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${HARNESS_BENCH_PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ] && ! command -v nvidia-smi >/dev/null 2>&1; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONUNBUFFERED=1
# On the GPU machine the environments are made from the interpreter that holds torch.
if command -v nvidia-smi >/dev/null 2>&1; then export HARNESS_ENGINE_PYTHON=${HARNESS_ENGINE_PYTHON:-$(command -v python3)}; fi
if command -v nvidia-smi >/dev/null 2>&1; then limit=540; else limit=1800; fi  # a device call runs <= 600 s
exec timeout "${HARNESS_BENCH_TIMEOUT:-$limit}" "$PY" bench/gpu_engine.py "$@"
