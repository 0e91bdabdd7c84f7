#!/usr/bin/env bash
# Install Redis, the broker `dagsmith serve --executor celery` starts beside its Celery workers
# (include/dagsmith/airflow/serve.py). Idempotent: a machine that has it is left as it is.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

present() { command -v redis-server >/dev/null 2>&1; }
version() { redis-server --version | cut -d' ' -f1-3; }

install_unless_present "install redis-server as root (Debian/Ubuntu: apt-get install redis-server; Fedora: dnf \
install redis); dagsmith serve --executor celery refuses to start without it" redis-server
