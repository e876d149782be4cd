#!/usr/bin/env bash
# Start the course app at http://localhost:8501 (sets up .venv on first use).
#
# It listens on this machine only (.streamlit/config.toml: server.address 127.0.0.1). To host a
# class, pass the address to listen on and the host name your readers will type, e.g.
#   ./run.sh --server.address 0.0.0.0 --server.allowedHosts class.example.org
# Any other Streamlit option passes through the same way.
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-venv.sh requirements.txt
address="" hosts=""
previous=""
for arg in "$@"; do
  case "$previous" in --server.address) address="$arg" ;; esac
  case "$arg" in
    --server.address=*) address="${arg#*=}" ;;
    --server.allowedHosts*) hosts=yes ;;
  esac
  previous="$arg"
done
case "$address" in
  "" | 127.0.0.1 | localhost | ::1) ;;
  *) [ -n "$hosts" ] || echo "run.sh: readers on other machines will be refused until you also pass" \
       "--server.allowedHosts <the host name or address they type> (see .streamlit/config.toml)" >&2 ;;
esac
exec .venv/bin/python -m streamlit run app.py "$@"
