#!/usr/bin/env bash
# Create .venv on first use and (re)install when a requirements file changes.
# Usage: scripts/ensure-venv.sh requirements.txt|requirements-dev.txt
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "Setting up .venv (first use) …"
  "$python" -m venv .venv
fi
stamp=".venv/.installed-$(basename "$req")"
want=$(cat "$req" requirements.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r "$req"
  echo "$want" > "$stamp"
fi
