#!/usr/bin/env bash
# Install bubblewrap, the sandbox the local runtime runs every microservice in (include/dagsmith/runtime/sandbox.py),
# with util-linux's setpriv and prlimit beside it. Idempotent: a machine that has them is left as it is.
set -euo pipefail

log() { printf '[setup-sandbox] %s\n' "$*"; }

if command -v bwrap >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; then
    log "$(bwrap --version) already installed"
    exit 0
fi
if [[ $EUID -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "error: install bubblewrap and util-linux as root (Debian/Ubuntu: apt-get install bubblewrap util-linux;" \
        "Fedora: dnf install bubblewrap util-linux); the local runtime refuses to run services without them" >&2
    exit 1
fi
log "installing bubblewrap (apt) ..."
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap util-linux >/dev/null
log "$(bwrap --version) installed in $((SECONDS - start)) s"
