#!/usr/bin/env bash
# Install Redis, the broker `dagsmith serve --executor celery` starts beside its Celery workers
# (include/dagsmith/airflow/serve.py). Idempotent: a machine that has it is left as it is.
set -euo pipefail

log() { printf '[setup-celery] %s\n' "$*"; }

if command -v redis-server >/dev/null 2>&1; then
    log "$(redis-server --version | cut -d' ' -f1-3) already installed"
    exit 0
fi
if [[ $EUID -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "error: install redis-server as root (Debian/Ubuntu: apt-get install redis-server; Fedora: dnf install" \
        "redis); dagsmith serve --executor celery refuses to start without it" >&2
    exit 1
fi
log "installing redis-server (apt) ..."
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends redis-server >/dev/null
log "$(redis-server --version | cut -d' ' -f1-3) installed in $((SECONDS - start)) s"
