#!/usr/bin/env bash
# Install the headless browser the UI tests drive (tests/deploy/browser.py): Debian's chromium, which Playwright
# launches by its path. Playwright's own browser download is not used: it needs hosts this machine cannot reach.
# Idempotent: a machine that has /usr/bin/chromium is left as it is.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

present() { command -v chromium >/dev/null 2>&1; }
version() { chromium --version 2>/dev/null || echo chromium; }

install_unless_present "install Debian's chromium package as root (apt-get install chromium)" chromium
