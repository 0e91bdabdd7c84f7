#!/usr/bin/env bash
# Prepare the container runtime dagsmith runs microservices in (see include/dagsmith/runtime/docker.py):
#   1. podman + runc + debootstrap (apt), configured as /work/shared/ENVIRONMENT.md "Containers" verified;
#   2. `podman system service` serving the Docker API on $DAGSMITH_PODMAN_SOCKET (default /run/dagsmith/podman.sock);
#   3. the runtime image dagsmith-runtime:py311 from runtime/Dockerfile on Debian bookworm's Python 3.11: a venv at
#      /opt/venv with the catalog's pinned requirements, dagsmith_kit, and a non-root user dagsmith (uid 10001).
# No registry is reachable, so the base layer is a debootstrap root filesystem imported into podman.
# Idempotent and safe to run concurrently (flock): every phase checks before it acts, so a re-run takes seconds.
# The runtime image is rebuilt only when its fingerprint (runtime/, dagsmith_kit sources) changes.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SOCKET="${DAGSMITH_PODMAN_SOCKET:-/run/dagsmith/podman.sock}"
CACHE="${DAGSMITH_CACHE_DIR:-/var/cache/dagsmith}"
RUNTIME_IMAGE="dagsmith-runtime:py311"
BASE_IMAGE="dagsmith-runtime:base"
MIRROR="http://deb.debian.org/debian"
HOST_CA="/etc/ssl/certs/ca-certificates.crt"
SERVICE_LOG="$(dirname "$SOCKET")/podman-service.log"
SERVICE_PID="$(dirname "$SOCKET")/podman-service.pid"

die() { log "error: $*" >&2; exit 1; }

# Run one phase and print how long it took.
phase() {
    local name="$1" start=$SECONDS
    shift
    log "$name ..."
    "$@"
    log "$name done in $((SECONDS - start)) s"
}

install_packages() {
    local missing=() package
    for package in podman runc debootstrap curl; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if ((${#missing[@]} == 0)); then
        log "podman, runc, debootstrap and curl already installed"
        return
    fi
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# crun fails on this host (cgroup hybrid mode, RLIMIT_NOFILE/NPROC), hence runc and cgroupfs.
configure_podman() {
    local wanted
    wanted="$(mktemp)"
    cat >"$wanted" <<'EOF'
[containers]
cgroups = "enabled"
default_ulimits = []
pids_limit = 0
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
    if cmp -s "$wanted" /etc/containers/containers.conf; then
        rm -f "$wanted"
        log "/etc/containers/containers.conf up to date"
        return
    fi
    mkdir -p /etc/containers
    mv "$wanted" /etc/containers/containers.conf
    chmod 0644 /etc/containers/containers.conf
    log "wrote /etc/containers/containers.conf"
    stop_our_service  # a running service still has the old configuration
}

socket_answers() {
    [[ "$(curl -fsS --max-time 5 --unix-socket "$SOCKET" http://podman/_ping 2>/dev/null)" == "OK" ]]
}

stop_our_service() {
    [[ -f "$SERVICE_PID" ]] || return 0
    kill "$(cat "$SERVICE_PID")" 2>/dev/null || true
    rm -f "$SERVICE_PID"
    sleep 1
}

service_alive() {
    [[ -f "$SERVICE_PID" ]] && kill -0 "$(cat "$SERVICE_PID")" 2>/dev/null
}

# Whether the socket answers within $1 tries half a second apart.
answers_within() {
    local try
    for try in $(seq 1 "$1"); do
        socket_answers && return 0
        sleep 0.5
    done
    return 1
}

start_service() {
    # A live service slow to answer (a loaded machine) is waited for, never replaced: removing its socket under
    # running tests would leave them without an engine.
    if socket_answers || { service_alive && answers_within 20; }; then
        log "Docker API already answering on $SOCKET"
        return
    fi
    stop_our_service
    rm -f "$SOCKET"
    # fd 9 (the setup lock) is closed so the long-lived service does not hold it. It runs in its own folder:
    # conmon leaves marker files (an `oom` file after a memory kill) in its working directory.
    (
        cd "$(dirname "$SOCKET")" || exit 1
        setsid nohup podman system service --time=0 "unix://$SOCKET" >>"$SERVICE_LOG" 2>&1 </dev/null 9>&- &
        echo $! >"$SERVICE_PID"
    )
    answers_within 60 && { log "Docker API answering on $SOCKET"; return; }
    die "podman system service did not answer on $SOCKET within 30 s; see $SERVICE_LOG"
}

build_rootfs() {
    if [[ -f "$CACHE/rootfs/.dagsmith-complete" ]]; then
        log "reusing root filesystem $CACHE/rootfs"
        return
    fi
    rm -rf "$CACHE/rootfs" "$CACHE/rootfs.partial"
    mkdir -p "$CACHE"
    debootstrap --variant=minbase --include=python3-minimal,python3-venv,python3-pip,ca-certificates \
        bookworm "$CACHE/rootfs.partial" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || die "debootstrap failed; see $CACHE/debootstrap.log"
    rm -rf "$CACHE/rootfs.partial/var/cache/apt/archives/"*.deb "$CACHE/rootfs.partial/var/lib/apt/lists/"*
    touch "$CACHE/rootfs.partial/.dagsmith-complete"
    mv "$CACHE/rootfs.partial" "$CACHE/rootfs"
}

import_base() {
    if podman image exists "$BASE_IMAGE"; then
        log "$BASE_IMAGE present"
        return
    fi
    tar -C "$CACHE/rootfs" --exclude=./.dagsmith-complete -c . | podman import --quiet - "$BASE_IMAGE" >/dev/null
}

# What the runtime image is built from: its Dockerfile, the catalog's pins and dagsmith_kit's sources.
fingerprint() {
    {
        cat "$ROOT/runtime/Dockerfile" "$ROOT/runtime/requirements.txt"
        (cd "$ROOT/include" && find dagsmith_kit -name '*.py' | sort | xargs sha256sum)
    } | sha256sum | cut -c1-16
}

build_runtime_image() {
    local wanted current
    wanted="$(fingerprint)"
    current="$(podman image inspect --format '{{index .Labels "dagsmith.fingerprint"}}' "$RUNTIME_IMAGE" \
        2>/dev/null || true)"
    if [[ "$current" == "$wanted" ]]; then
        log "$RUNTIME_IMAGE up to date (fingerprint $wanted)"
        return
    fi
    log "building $RUNTIME_IMAGE (fingerprint $wanted, was '${current:-absent}')"
    mkdir -p "$CACHE/pip"
    # The host CA bundle lets pip through this machine's TLS proxy; it is mounted for RUN only, not baked in.
    podman build --network host --layers \
        --volume "$HOST_CA:/etc/ssl/certs/ca-certificates.crt:ro" \
        --volume "$CACHE/pip:/root/.cache/pip" \
        --label "dagsmith.fingerprint=$wanted" \
        --build-arg "BASE=$BASE_IMAGE" --file "$ROOT/runtime/Dockerfile" \
        --tag "$RUNTIME_IMAGE" "$ROOT" >"$CACHE/build.log" 2>&1 \
        || { tail -n 30 "$CACHE/build.log" >&2; die "image build failed; see $CACHE/build.log"; }
}

main() {
    [[ $EUID -eq 0 ]] || die "run as root (apt-get, rootful podman)"
    local start=$SECONDS
    mkdir -p "$(dirname "$SOCKET")"
    exec 9>"$(dirname "$SOCKET")/setup.lock"
    flock 9
    phase "packages" install_packages
    phase "podman configuration" configure_podman
    phase "Docker API service" start_service
    phase "root filesystem (debootstrap)" build_rootfs
    phase "base image import" import_base
    phase "runtime image build" build_runtime_image
    log "ready in $((SECONDS - start)) s: DOCKER_HOST=unix://$SOCKET image $RUNTIME_IMAGE"
}

main "$@"
