#!/usr/bin/env bash
# Start the course app at http://localhost:8501 (sets up .venv on first use).
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-venv.sh requirements.txt
exec .venv/bin/python -m streamlit run app.py "$@"
