#!/usr/bin/env bash
# Your GPU's benchmark suite, headless, on a machine with an NVIDIA GPU.
#
#   bench/gpu_check.sh [OUT_JSON] [--cpu-ok] [--preset small|large|tiny|cpu|auto]
#                      [--vram-budget-gb N] [--depth-seconds S] [--timeout S]
#
# Uses a Python that is already there — $PYTHON if set, else the first of python3, python and
# .venv/bin/python whose torch sees a CUDA GPU — and installs nothing (a GPU box has its own
# CUDA PyTorch; the suite needs only torch, numpy and nvidia-ml-py, no Streamlit or plotly).
# Runs `python -m core.gpu.bench` (copy bandwidth, context vs speed with and without a VRAM
# budget, dense vs MoE with energy); the JSON at OUT_JSON (default results/gpu_check.json) is
# rewritten after every part and depth. At the time limit (default 600 s) the run gets SIGTERM,
# stops cleanly and keeps what it measured. Without a GPU it stops with a clear message, unless
# --cpu-ok is given, in which case it runs the CPU preset instead. Every argument (numbers
# finite and above zero, a known preset, an OUT_JSON that can really be written) is checked
# before anything else: a bad one is one line on stderr and exit status 2.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUT="results/gpu_check.json"
CPU_OK=0
PRESET="auto"
BUDGET_GB=""
DEPTH_SECONDS=""
LIMIT=600
need_value() { [[ $# -ge 2 && -n "$2" ]] || { echo "gpu_check: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu-ok) CPU_OK=1 ;;
    --preset) need_value "$@"; PRESET="$2"; shift ;;
    --vram-budget-gb) need_value "$@"; BUDGET_GB="$2"; shift ;;
    --depth-seconds) need_value "$@"; DEPTH_SECONDS="$2"; shift ;;
    --timeout) need_value "$@"; LIMIT="$2"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "gpu_check: unknown option: $1" >&2; exit 2 ;;
    *) OUT="$1" ;;
  esac
  shift
done
[[ "$LIMIT" =~ ^[1-9][0-9]*$ ]] || { echo "gpu_check: --timeout must be a whole number of seconds ≥ 1" >&2; exit 2; }

# A Python whose torch imports, preferring one that sees CUDA.
cuda_of() { "$1" -c 'import torch; print(1 if torch.cuda.is_available() else 0)' 2>/dev/null || echo none; }
CANDIDATES=()
if [[ -n "${PYTHON:-}" ]]; then CANDIDATES=("$PYTHON"); else CANDIDATES=(python3 python "$ROOT/.venv/bin/python"); fi
PY=""; PY_CPU=""
for cand in "${CANDIDATES[@]}"; do
  command -v "$cand" >/dev/null 2>&1 || [[ -x "$cand" ]] || continue
  case "$(cuda_of "$cand")" in
    1) PY="$cand"; break ;;
    0) [[ -z "$PY_CPU" ]] && PY_CPU="$cand" ;;
  esac
done

# Every argument is checked before anything else happens (one line, exit status 2): the preset,
# finite positive numbers, and an output path that can really be written.
CHECK_PY="${PY:-$PY_CPU}"
if [[ -n "$CHECK_PY" ]]; then
  CHECK=(--check --preset "$PRESET" --out "$OUT")
  [[ -n "$BUDGET_GB" ]] && CHECK+=(--vram-budget-gb "$BUDGET_GB")
  [[ -n "$DEPTH_SECONDS" ]] && CHECK+=(--depth-seconds "$DEPTH_SECONDS")
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$CHECK_PY" -m core.gpu.bench "${CHECK[@]}" || exit 2
fi

DEVICE="cuda"
if [[ -z "$PY" ]]; then
  if [[ $CPU_OK -eq 1 && -n "$PY_CPU" ]]; then
    echo "gpu_check: no Python here has a torch that sees a CUDA GPU — running on the CPU because of --cpu-ok" >&2
    PY="$PY_CPU"; DEVICE="cpu"
    [[ "$PRESET" == "auto" ]] && PRESET="cpu"
  elif [[ -z "$PY_CPU" ]]; then
    echo "gpu_check: FAILED — no Python with torch found (tried: ${CANDIDATES[*]}). Set PYTHON=/path/to/python." >&2
    exit 3
  else
    echo "gpu_check: FAILED — $PY_CPU has torch, but it sees no CUDA GPU." >&2
    "$PY_CPU" -c "import torch; print('  torch', torch.__version__, '| built for CUDA', torch.version.cuda)" >&2 || true
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >&2 || echo "  nvidia-smi: no NVIDIA driver found" >&2
    echo "  Use a CUDA build of torch (PYTHON=/path/to/python), or pass --cpu-ok for a CPU-only run." >&2
    exit 4
  fi
fi
"$PY" - <<'EOF' >&2 || true
import importlib.util, torch
print("gpu_check: torch", torch.__version__, "| CUDA", torch.version.cuda,
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")
if importlib.util.find_spec("pynvml") is None:
    print("gpu_check: nvidia-ml-py is not installed: no device card, no energy (pip install nvidia-ml-py)")
EOF

ARGS=(--preset "$PRESET" --device "$DEVICE" --out "$OUT")
[[ -n "$DEPTH_SECONDS" ]] && ARGS+=(--depth-seconds "$DEPTH_SECONDS")
if [[ -n "$BUDGET_GB" ]]; then
  ARGS+=(--vram-budget-gb "$BUDGET_GB")
elif [[ "$DEVICE" == "cuda" ]]; then
  # Default: pretend the card is smaller than the cache needs, so the spill shows
  # (8 GiB for the small preset, 16 GiB for the large one; auto picks by VRAM like the CLI does).
  if [[ "$PRESET" == "auto" ]]; then
    PRESET="$("$PY" -c 'import torch; print("large" if torch.cuda.get_device_properties(0).total_memory >= 20 * 1024**3 else "small")')"
    ARGS[1]="$PRESET"
  fi
  case "$PRESET" in
    small) ARGS+=(--vram-budget-gb 8) ;;
    large) ARGS+=(--vram-budget-gb 16) ;;
    *) ;;
  esac
fi

echo "gpu_check: $PY -m core.gpu.bench ${ARGS[*]}  (limit ${LIMIT} s)" >&2
START=$(date +%s)
set +e
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" timeout --signal=TERM --kill-after=60 "$LIMIT" "$PY" -m core.gpu.bench "${ARGS[@]}"
CODE=$?
set -e
ELAPSED=$(( $(date +%s) - START ))
case "$CODE" in
  0) echo "gpu_check: done in ${ELAPSED} s; results in $OUT" >&2 ;;
  124|143) echo "gpu_check: stopped at the ${LIMIT} s limit after ${ELAPSED} s; what was measured is in $OUT" >&2 ;;
  130) echo "gpu_check: interrupted after ${ELAPSED} s; what was measured is in $OUT" >&2 ;;
  *) echo "gpu_check: FAILED with exit status $CODE after ${ELAPSED} s (partial results, if any, in $OUT)" >&2 ;;
esac
exit "$CODE"
