#!/usr/bin/env bash
# Lesson 10's benchmark suite, headless, on a machine with an NVIDIA GPU.
#
#   bench/gpu_check.sh [OUT_JSON] [--cpu-ok] [--preset small|large|tiny|cpu|auto] [--vram-budget-gb N]
#
# Makes (or reuses) a venv, installs a CUDA build of torch and nvidia-ml-py, checks that
# the driver and CUDA both see a GPU, then runs `python -m core.gpu.bench` (copy bandwidth,
# context vs speed with and without a VRAM budget, dense vs MoE with energy) and writes
# the JSON to OUT_JSON (default results/gpu_check.json). It stops with a clear message when
# there is no GPU, unless --cpu-ok is given, in which case it runs the CPU preset instead.
# Meant to finish in well under five minutes; a 10-minute hard limit guards the run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUT="results/gpu_check.json"
CPU_OK=0
PRESET="auto"
BUDGET_GB=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu-ok) CPU_OK=1 ;;
    --preset) PRESET="$2"; shift ;;
    --vram-budget-gb) BUDGET_GB="$2"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "unknown option: $1" >&2; exit 64 ;;
    *) OUT="$1" ;;
  esac
  shift
done

VENV="${GPU_CHECK_VENV:-$ROOT/.venv-gpu}"
PY="${PYTHON:-python3}"
NO_GPU=0

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  if [[ $CPU_OK -eq 1 ]]; then
    echo "gpu_check: no NVIDIA GPU (nvidia-smi finds none) — running the CPU preset because of --cpu-ok" >&2
    NO_GPU=1
  else
    echo "gpu_check: FAILED — no NVIDIA GPU found (nvidia-smi is missing or lists no GPU)." >&2
    echo "           Run on a machine with an NVIDIA driver, or pass --cpu-ok for a CPU-only run." >&2
    exit 3
  fi
else
  nvidia-smi -L
fi

if [[ $NO_GPU -eq 1 && -z "${GPU_CHECK_VENV:-}" && -x "$ROOT/.venv/bin/python" ]]; then
  # CPU-only run: the project's own venv (CPU torch) will do; no multi-GB CUDA wheel.
  # shellcheck disable=SC1091
  source "$ROOT/.venv/bin/activate"
else
  if [[ ! -x "$VENV/bin/python" ]]; then
    echo "gpu_check: creating $VENV" >&2
    "$PY" -m venv "$VENV"
  fi
  # shellcheck disable=SC1091
  source "$VENV/bin/activate"
  python -m pip install --quiet --upgrade pip
  # On Linux x86-64 the default torch wheel from PyPI is the CUDA build (it brings its own CUDA runtime).
  python -m pip install --quiet "torch==2.13.0" "nvidia-ml-py>=12.535" "numpy>=2.0,<3"
fi

CUDA_OK="$(python - <<'EOF'
import torch
print(1 if torch.cuda.is_available() else 0)
EOF
)"
DEVICE="cuda"
if [[ "$CUDA_OK" != "1" ]]; then
  if [[ $CPU_OK -eq 1 ]]; then
    DEVICE="cpu"
    [[ "$PRESET" == "auto" ]] && PRESET="cpu"
  else
    echo "gpu_check: FAILED — the driver sees a GPU but PyTorch does not (torch.cuda.is_available() is False)." >&2
    python -c "import torch; print('torch', torch.__version__, 'built for CUDA', torch.version.cuda)" >&2
    exit 4
  fi
fi

ARGS=(--preset "$PRESET" --device "$DEVICE" --out "$OUT")
if [[ -n "$BUDGET_GB" ]]; then
  ARGS+=(--vram-budget-gb "$BUDGET_GB")
elif [[ "$DEVICE" == "cuda" ]]; then
  # Default: pretend the card is smaller than the cache needs, so the spill shows
  # (8 GiB for the small preset, 16 GiB for the large one; auto picks by VRAM like the CLI does).
  if [[ "$PRESET" == "auto" ]]; then
    VRAM_MIB="$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n1 | tr -d ' ')"
    if [[ "${VRAM_MIB:-0}" -ge 20480 ]]; then PRESET="large"; else PRESET="small"; fi
    ARGS=(--preset "$PRESET" --device "$DEVICE" --out "$OUT")
  fi
  case "$PRESET" in
    small) ARGS+=(--vram-budget-gb 8) ;;
    large) ARGS+=(--vram-budget-gb 16) ;;
    *) ;;
  esac
fi

mkdir -p "$(dirname "$OUT")"
echo "gpu_check: python -m core.gpu.bench ${ARGS[*]}" >&2
START=$(date +%s)
timeout 600 python -m core.gpu.bench "${ARGS[@]}"
echo "gpu_check: done in $(( $(date +%s) - START )) s; results in $OUT" >&2
