#!/usr/bin/env bash
# Run the whole test suite (sets up .venv with the dev tools on first use).
# Extra arguments go to pytest, e.g. ./test.sh -m "not slow" for the quick subset.
# Two worker processes by default (TEST_WORKERS), each running whole test files (--dist loadfile:
# a file's servers and browser start once); ./test.sh -n 0 runs everything in one process.
# Browser tests need Debian's chromium (apt-get install chromium); without it they skip.
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-venv.sh requirements-dev.txt
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile "$@"
