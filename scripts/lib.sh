# Sourced by the scripts beside it, never run: their log lines, package installs on a fresh machine, and the local
# servers a command is run against. A script whose stdout belongs to the command it runs sets LOG_FD=2 first.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT="$(basename "$0" .sh)"

log() { printf '[%s] %s\n' "$SCRIPT" "$*" >&"${LOG_FD:-1}"; }

# install_unless_present HELP PACKAGE...: leave a machine where the calling script's `present` succeeds as it is;
# else install the Debian PACKAGEs as root with apt, or fail with HELP (how to install them) where that cannot be.
# Either way the calling script's `version` names what is installed.
install_unless_present() {
    local help="$1" start=$SECONDS
    shift
    if present; then
        log "$(version) already installed"
        return
    fi
    if [[ $EUID -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        log "error: $help" >&2
        exit 1
    fi
    log "installing $1 (apt) ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    log "$(version) installed in $((SECONDS - start)) s"
}

# make_venv VENV REQUIREMENTS WHAT: a venv of its own for a local server (WHAT, for the log), so the server's pins
# leave dagsmith's alone.
make_venv() {
    local start=$SECONDS
    log "installing $3 into $1 (first run only) ..."
    "${SYSTEM_PYTHON:-python3}" -m venv "$1"
    "$1/bin/python" -m pip install --quiet --upgrade pip
    "$1/bin/python" -m pip install --quiet -r "$2"
    log "installed in $((SECONDS - start)) s"
}

# free_port PYTHON: a TCP port free on 127.0.0.1 now.
free_port() {
    "$1" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve LOG URL COMMAND...: start the server COMMAND in the background (its output in LOG, its pid in SERVER) and
# wait up to 120 s for URL to answer; if the server dies first or never answers, show the end of LOG and exit.
serve() {
    local log_file="$1" url="$2"
    shift 2
    "$@" >"$log_file" 2>&1 &
    SERVER=$!
    for _ in $(seq 120); do
        curl -fsS "$url" >/dev/null 2>&1 && return
        kill -0 "$SERVER" 2>/dev/null || { log "the server failed to start; see $log_file"; tail -20 "$log_file" >&2; exit 1; }
        sleep 1
    done
    log "the server did not answer at $url within 120 s; see $log_file"
    tail -20 "$log_file" >&2
    exit 1
}

# stop_server: stop the server `serve` started, if it did; for the calling script's EXIT trap, set before `serve`.
stop_server() {
    [[ -n "${SERVER:-}" ]] || return 0
    kill "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null || true
}
