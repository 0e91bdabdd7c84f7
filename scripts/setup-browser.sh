#!/usr/bin/env bash
# Install the headless browser the UI tests drive (tests/deploy/browser.py): Debian's chromium, which Playwright
# launches by its path. Playwright's own browser download is not used: it needs hosts this machine cannot reach.
# Idempotent: a machine that has /usr/bin/chromium is left as it is.
set -euo pipefail

log() { printf '[setup-browser] %s\n' "$*"; }

if command -v chromium >/dev/null 2>&1; then
    log "$(chromium --version 2>/dev/null || echo chromium) already installed"
    exit 0
fi
command -v apt-get >/dev/null 2>&1 || { log "error: install Debian's chromium package (no apt-get here)" >&2; exit 1; }
log "installing chromium (apt) ..."
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
log "$(chromium --version) installed in $((SECONDS - start)) s"
