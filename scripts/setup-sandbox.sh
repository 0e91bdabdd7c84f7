#!/usr/bin/env bash
# Install bubblewrap, the sandbox the local runtime runs every microservice in (include/dagsmith/runtime/sandbox.py),
# with util-linux's setpriv and prlimit beside it. Idempotent: a machine that has them is left as it is.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

present() { command -v bwrap >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; }
version() { bwrap --version; }

install_unless_present "install bubblewrap and util-linux as root (Debian/Ubuntu: apt-get install bubblewrap \
util-linux; Fedora: dnf install bubblewrap util-linux); the local runtime refuses to run services without them" \
    bubblewrap util-linux
