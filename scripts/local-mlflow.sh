#!/usr/bin/env bash
# Run a command against a real local MLflow tracking server (sqlite backend store, artifacts served from a local
# folder, a free port), the server in its own venv (.venv-mlflow) so it leaves dagsmith's pins alone.
#
#   scripts/local-mlflow.sh .venv/bin/python -m pytest tests/registry/test_mlflow_server.py
#
# The first run installs MLflow into .venv-mlflow (about 2 minutes). The command runs with MLFLOW_TRACKING_URI set;
# the server and its store (a temporary folder) go when it ends.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${DAGSMITH_MLFLOW_VENV:-$ROOT/.venv-mlflow}"
SYSTEM_PYTHON="${SYSTEM_PYTHON:-python3}"
LOG="${TMPDIR:-/tmp}/dagsmith-local-mlflow.log"

log() { printf '[local-mlflow] %s\n' "$*" >&2; }

(($# > 0)) || { log "usage: $0 COMMAND [ARG...]"; exit 2; }

if [[ ! -x "$VENV/bin/mlflow" ]]; then
    log "installing MLflow into $VENV (first run only) ..."
    start=$SECONDS
    "$SYSTEM_PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r "$ROOT/scripts/local-mlflow-requirements.txt"
    log "installed in $((SECONDS - start)) s"
fi

STATE="$(mktemp -d "${TMPDIR:-/tmp}/dagsmith-mlflow.XXXXXX")"
PORT="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$VENV/bin/mlflow" server --host 127.0.0.1 --port "$PORT" --workers 1 \
    --backend-store-uri "sqlite:///$STATE/mlflow.db" --artifacts-destination "$STATE/artifacts" \
    >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; rm -rf "$STATE"' EXIT

for _ in $(seq 120); do
    curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER" 2>/dev/null || { log "the server failed to start:"; tail -20 "$LOG" >&2; exit 1; }
    sleep 1
done
log "MLflow at http://127.0.0.1:$PORT (log: $LOG)"

export MLFLOW_TRACKING_URI="http://127.0.0.1:$PORT"
"$@"
