#!/usr/bin/env bash
# Host the course for a class: K course server processes behind nginx, started and stopped as one.
#
#   deploy/classroom.sh start [K] [PORT] [-- STREAMLIT OPTIONS]   K processes (default 2) behind
#                                       nginx on 127.0.0.1:PORT (default 8080); the processes listen
#                                       on 127.0.0.1:PORT+1 … PORT+K; options after -- go to each
#   deploy/classroom.sh stop            stop nginx and the processes this script started
#   deploy/classroom.sh status          what runs, where
#   deploy/classroom.sh pids            the processes' ids, for `python -m bench.load --url … --pid …`
#
# Environment: COURSE_LISTEN (nginx's address, default 127.0.0.1:PORT — e.g. 0.0.0.0:8080 for a
# classroom network), COURSE_CLASSROOM_DIR (state: config, pids, logs; default
# /tmp/course-classroom-UID), COURSE_PYTHON (default .venv/bin/python). Everything else in the
# environment (COURSE_PUBLIC=1, …) reaches the course processes. nginx is Debian's package
# (apt-get install nginx); it runs as its own instance with its config in the state folder and
# never touches /etc/nginx. Why the sessions are sticky by cookie: deploy/nginx.conf.template.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STATE=${COURSE_CLASSROOM_DIR:-${TMPDIR:-/tmp}/course-classroom-$(id -u)}
PY=${COURSE_PYTHON:-$ROOT/.venv/bin/python}
HEALTH_TIMEOUT_S=180

die() { echo "classroom: $*" >&2; exit 2; }

is_ours() {  # pid file → true when that process still runs and is what we started
    local pid
    [ -f "$1" ] || return 1
    pid=$(cat "$1")
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$2"
}

port_free() {  # as the servers bind: SO_REUSEADDR, so a just-stopped server's TIME_WAIT is no obstacle
    "$PY" -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

healthy() {
    "$PY" -c 'import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).read() == b"ok" else 1)' "$1" 2>/dev/null
}

nginx_cmd() { nginx -p "$STATE" -c "$STATE/nginx.conf" -e "$STATE/error.log" "$@"; }

start() {
    local k=2 port=8080 extra=()
    if [ $# -gt 0 ] && [ "$1" != "--" ]; then k=$1; shift; fi
    if [ $# -gt 0 ] && [ "$1" != "--" ]; then port=$1; shift; fi
    if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; extra=("$@"); fi
    [[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le 32 ] || die "K must be a whole number from 1 to 32, got '$k'"
    [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ $((port + k)) -le 65535 ] || die "bad port '$port'"
    command -v nginx >/dev/null || die "nginx is not installed (apt-get install nginx)"
    [ -x "$PY" ] || die "no Python at $PY (run ./run.sh once, or set COURSE_PYTHON)"
    if is_ours "$STATE/nginx.pid" nginx; then die "already running (see: $0 status); stop it first"; fi
    local listen=${COURSE_LISTEN:-127.0.0.1:$port}
    local ports=() i p
    for ((i = 0; i < k; i++)); do
        p=$((port + 1 + i))
        port_free "$p" || die "port $p is taken"
        ports+=("$p")
    done
    mkdir -p "$STATE/tmp"
    # one secret for all processes: a signed cookie (Streamlit's XSRF token) is valid on any of them
    local secret
    secret=$("$PY" -c 'import secrets; print(secrets.token_hex(32))')
    cd "$ROOT"  # the processes read .streamlit/config.toml from here
    for ((i = 0; i < k; i++)); do
        STREAMLIT_SERVER_COOKIE_SECRET=$secret setsid "$PY" -m streamlit run "$ROOT/app.py" \
            --server.port "${ports[i]}" --server.address 127.0.0.1 --server.headless true \
            --browser.gatherUsageStats false --server.fileWatcherType none "${extra[@]}" \
            >"$STATE/server-$i.log" 2>&1 </dev/null &
        echo $! >"$STATE/server-$i.pid"
    done
    local deadline=$((SECONDS + HEALTH_TIMEOUT_S))
    for ((i = 0; i < k; i++)); do
        until healthy "http://127.0.0.1:${ports[i]}/_stcore/health"; do
            if ! is_ours "$STATE/server-$i.pid" streamlit || [ $SECONDS -ge $deadline ]; then
                echo "classroom: course process $i did not start; its log: $STATE/server-$i.log" >&2
                tail -5 "$STATE/server-$i.log" >&2 || true
                stop
                exit 1
            fi
            sleep 0.5
        done
    done
    "$PY" "$ROOT/deploy/nginx_conf.py" "$STATE" "$listen" "${ports[@]}" >"$STATE/nginx.conf"
    nginx_cmd -t -q || { stop; die "nginx rejected $STATE/nginx.conf"; }
    nginx_cmd
    echo "the course is at http://$listen/ — $k processes on ports ${ports[*]}; state in $STATE"
}

stop() {
    local f pid n
    if is_ours "$STATE/nginx.pid" nginx; then
        nginx_cmd -s quit 2>/dev/null || kill "$(cat "$STATE/nginx.pid")" 2>/dev/null || true
        for ((n = 0; n < 50; n++)); do is_ours "$STATE/nginx.pid" nginx || break; sleep 0.1; done
    fi
    rm -f "$STATE/nginx.pid"
    for f in "$STATE"/server-*.pid; do
        [ -e "$f" ] || continue
        if is_ours "$f" streamlit; then
            pid=$(cat "$f")
            kill "$pid" 2>/dev/null || true
            for ((n = 0; n < 150; n++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$f"
    done
}

pids() {
    local f out=()
    for f in "$STATE"/server-*.pid; do
        if [ -e "$f" ] && is_ours "$f" streamlit; then out+=("$(cat "$f")"); fi
    done
    echo "${out[*]}"
}

status() {
    if is_ours "$STATE/nginx.pid" nginx; then
        echo "nginx: running (pid $(cat "$STATE/nginx.pid")), listening on $(grep -m1 -o 'listen [^;]*' "$STATE/nginx.conf" | cut -d' ' -f2)"
    else
        echo "nginx: not running"
    fi
    echo "course processes: $(pids)"
}

case ${1:-} in
    start) shift; start "$@" ;;
    stop) stop; echo "stopped" ;;
    status) status ;;
    pids) pids ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
