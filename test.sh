#!/usr/bin/env bash
# Run the whole test suite (sets up .venv with the dev tools on first use).
# Extra arguments go to pytest, e.g. ./test.sh -m "not slow" for the quick subset.
# Browser tests need Debian's chromium (apt-get install chromium); without it they skip.
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-venv.sh requirements-dev.txt
exec .venv/bin/python -m pytest "$@"
