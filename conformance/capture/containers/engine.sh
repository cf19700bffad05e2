#!/usr/bin/env bash
# kafka-conformance container engine: a Docker-compatible API for the testcontainers backend.
#
#   container-engine up       use a daemon that answers; else install Podman (Debian packages,
#                             root), write its config and start `podman system service` on a
#                             unix socket; prints the environment to use (sh `export` lines)
#   container-engine env      print the environment of the engine that answers (exit 1: none)
#   container-engine status   say which engine answers, and whether this script started it
#   container-engine down     stop the socket service `up` started (containers are kept)
#   container-engine install  only install the packages and write the config
#
# Nothing is done where a Docker or Podman daemon already answers: $DOCKER_HOST, then
# /var/run/docker.sock, /run/podman/podman.sock and $XDG_RUNTIME_DIR/podman/podman.sock.
# The service started here listens on $KAFKA_CONFORMANCE_ENGINE_SOCKET
# (default /run/kafka-conformance/podman.sock); its pid and log sit beside the socket.
# Its Podman configuration is a file of its own, given to Podman with CONTAINERS_CONF, so a
# machine-wide /etc/containers/containers.conf is never changed:
#   default_ulimits within the hard limits root has here (Podman's defaults cannot be set),
#   runtime = "runc" (crun refuses a hybrid cgroup v1/v2 host).
# Exit status: 0 ok, 1 no engine (env/status), 2 usage, 3 cannot install (not root, apt failed).
set -euo pipefail

SOCK=${KAFKA_CONFORMANCE_ENGINE_SOCKET:-/run/kafka-conformance/podman.sock}
STATE=$(dirname "$SOCK")
PIDFILE=$STATE/podman-service.pid
LOG=$STATE/podman-service.log
CONF=$STATE/containers.conf
PACKAGES="podman runc conmon netavark aardvark-dns containernetworking-plugins fuse-overlayfs
slirp4netns uidmap catatonit busybox-static iptables"

say() { printf 'container-engine: %s\n' "$*" >&2; }

# ping URL: 0 when a Docker-compatible API answers GET /_ping at a unix:// or tcp:// URL
ping() {
    python3 - "$1" <<'PY' 2>/dev/null
import socket, sys
url = sys.argv[1]
try:
    if url.startswith("unix://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(url[len("unix://"):])
    elif url.startswith("tcp://"):
        host, _, port = url[len("tcp://"):].rstrip("/").rpartition(":")
        s = socket.create_connection((host, int(port)), timeout=3)
    else:
        sys.exit(1)
    s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    sys.exit(0 if data.startswith(b"HTTP/1.") and b" 200 " in data.split(b"\r\n", 1)[0] + b" " else 1)
except OSError:
    sys.exit(1)
PY
}

# the first daemon that answers, as a URL; empty when none does
find_engine() {
    local c
    for c in "${DOCKER_HOST:-}" unix:///var/run/docker.sock unix:///run/podman/podman.sock \
             ${XDG_RUNTIME_DIR:+unix://$XDG_RUNTIME_DIR/podman/podman.sock} "unix://$SOCK"; do
        [ -n "$c" ] || continue
        if ping "$c"; then printf '%s\n' "$c"; return 0; fi
    done
    return 0
}

print_env() {
    local url=$1
    echo "export DOCKER_HOST=$url"
    # the kit removes every container it starts itself; Ryuk's image cannot be pulled offline
    echo "export TESTCONTAINERS_RYUK_DISABLED=true"
    case $url in
        unix://*)
            # a local daemon: published ports are on this host (testcontainers would otherwise
            # guess from /.dockerenv-like hints that it runs inside a container)
            echo "export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1"
            echo "export TESTCONTAINERS_CONNECTION_MODE=docker_host" ;;
    esac
}

ours_running() {
    [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

install() {
    local missing="" p
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        if [ "$(id -u)" != 0 ]; then
            say "missing Debian packages:$missing; run this script as root, or install them:"
            say "  sudo apt-get install -y --no-install-recommends$missing"
            exit 3
        fi
        command -v apt-get >/dev/null || { say "no apt-get: install Podman (or Docker) yourself"; exit 3; }
        say "installing$missing (Debian packages)"
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y -q --no-install-recommends $missing >"$STATE/apt.log" 2>&1; then
            apt-get update -q >>"$STATE/apt.log" 2>&1 || true
            apt-get install -y -q --no-install-recommends $missing >>"$STATE/apt.log" 2>&1 || {
                say "apt-get install failed; last lines of $STATE/apt.log:"; tail -n 20 "$STATE/apt.log" >&2; exit 3; }
        fi
    fi
    local nofile nproc
    nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
    [ "$nofile" = unlimited ] || [ "$nofile" -gt 20000 ] && nofile=20000
    [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
    cat > "$CONF.tmp" <<CONF
# written by kafka-conformance's container-engine script (used through CONTAINERS_CONF)
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
CONF
    mv "$CONF.tmp" "$CONF"
}

up() {
    local url
    url=$(find_engine)
    if [ -n "$url" ]; then
        [ "$url" = "unix://$SOCK" ] || say "a daemon answers at $url: using it"
        print_env "$url"; return 0
    fi
    install
    rm -f "$SOCK"
    say "starting podman system service on unix://$SOCK (log: $LOG)"
    CONTAINERS_CONF=$CONF setsid nohup podman system service --time=0 "unix://$SOCK" \
        </dev/null >"$LOG" 2>&1 9>&- &
    echo $! > "$PIDFILE"
    local i
    for i in $(seq 1 150); do
        if ping "unix://$SOCK"; then print_env "unix://$SOCK"; return 0; fi
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
        sleep 0.2
    done
    say "podman system service did not answer; last lines of $LOG:"; tail -n 20 "$LOG" >&2
    down; exit 3
}

down() {
    if ours_running; then
        local pid i
        pid=$(cat "$PIDFILE")
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        say "stopped podman system service (pid $pid)"
    fi
    rm -f "$PIDFILE" "$SOCK"
}

cmd=${1:-up}
case $cmd in -h|--help|help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
mkdir -p "$STATE"
exec 9>"$STATE/engine.lock"
flock 9
case $cmd in
    up) up ;;
    env) url=$(find_engine); [ -n "$url" ] || { say "no engine answers"; exit 1; }; print_env "$url" ;;
    status)
        url=$(find_engine)
        if [ -z "$url" ]; then echo "no engine answers"; exit 1; fi
        if [ "$url" = "unix://$SOCK" ] && ours_running; then
            echo "$url (podman system service started by this script, pid $(cat "$PIDFILE"))"
        else echo "$url"; fi ;;
    down) down ;;
    install) install ;;
    *) say "unknown command $cmd (up | env | status | down | install)"; exit 2 ;;
esac
