#!/usr/bin/env bash
# Run a command against a real local MLflow tracking server (sqlite backend store, artifacts served from a local
# folder, a free port), the server in its own venv (.venv-mlflow) so it leaves dagsmith's pins alone.
#
#   scripts/local-mlflow.sh .venv/bin/python -m pytest tests/registry/test_mlflow_server.py
#
# The first run installs MLflow into .venv-mlflow (about 2 minutes). The command runs with MLFLOW_TRACKING_URI set;
# the server and its store (a temporary folder) go when it ends.
set -euo pipefail
LOG_FD=2
source "$(dirname "$0")/lib.sh"

VENV="${DAGSMITH_MLFLOW_VENV:-$ROOT/.venv-mlflow}"
LOG="${TMPDIR:-/tmp}/dagsmith-local-mlflow.log"

(($# > 0)) || { log "usage: $0 COMMAND [ARG...]"; exit 2; }

[[ -x "$VENV/bin/mlflow" ]] || make_venv "$VENV" "$ROOT/scripts/local-mlflow-requirements.txt" MLflow

STATE="$(mktemp -d "${TMPDIR:-/tmp}/dagsmith-mlflow.XXXXXX")"
PORT="$(free_port "$VENV/bin/python")"
trap 'stop_server; rm -rf "$STATE"' EXIT
serve "$LOG" "http://127.0.0.1:$PORT/health" "$VENV/bin/mlflow" server --host 127.0.0.1 --port "$PORT" --workers 1 \
    --backend-store-uri "sqlite:///$STATE/mlflow.db" --artifacts-destination "$STATE/artifacts"
log "MLflow at http://127.0.0.1:$PORT (log: $LOG)"

export MLFLOW_TRACKING_URI="http://127.0.0.1:$PORT"
"$@"
