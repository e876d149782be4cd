#!/usr/bin/env bash
# Lint the Japanese catalogs' msgstr with textlint (issue 41): the rules and the reason for every rule
# turned off are in .textlintrc.json; the versions are pinned in package.json and package-lock.json.
#   scripts/textlint.sh            # install from the lock when node_modules is missing, extract, lint
# Node and npm come from Debian (apt-get install nodejs npm; .ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/textlint ]; then
  npm ci --no-audit --no-fund
fi
out="${TEXTLINT_OUT:-artifacts/textlint}"
[ -x .venv/bin/python ] || scripts/ensure-venv.sh requirements.txt  # Babel reads the catalogs
.venv/bin/python -m scripts.textlint_catalog "$out" >/dev/null
node_modules/.bin/textlint "$out"/*.md
echo "textlint: 0 errors in the Japanese catalogs ($(ls "$out"/*.md | wc -l) files)"
