#!/usr/bin/env bash
# Start the Courier reference backend (uvicorn, one worker).
#
#   ./run.sh [--host H] [--port P]     # defaults: $COURIER_BACKEND_HOST or 127.0.0.1, $COURIER_BACKEND_PORT or 8080
#   ./run.sh --tls DIR [--client-certs required|optional]   # HTTPS with make-test-certs.sh's DIR
#   ./run.sh --setup-only              # only create/refresh the virtualenv (what setup.sh does)
#   ./run.sh --ietf-port P             # also the IETF resumable uploads draft on port P (0: a free one)
#   ./run.sh --ietf-port 0 --ietf-port-file F   # ... and write the port it got to F
#
# The virtualenv Backend/.venv is created on first use and reinstalled whenever
# requirements.txt (or the Python version) changes. With --tls, uvicorn serves HTTPS with
# DIR/server.pem and DIR/server-key.pem; --client-certs makes it ask for a client certificate
# signed by DIR/ca.pem (mutual TLS), required or optional. --ietf-port starts, in the same process,
# the h11 server of courier_backend/ietf.py (Docs/ietf-upload.md; plain HTTP only); it says
# "[courier-backend] IETF resumable uploads on http://HOST:PORT" on stdout once it listens.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PYTHON="${COURIER_BACKEND_PYTHON:-python3}"
HOST="${COURIER_BACKEND_HOST:-127.0.0.1}"
PORT="${COURIER_BACKEND_PORT:-8080}"
SETUP_ONLY=0
TLS_DIR=""
CLIENT_CERTS=""
IETF_PORT="${COURIER_BACKEND_IETF_PORT:-}"
IETF_PORT_FILE="${COURIER_BACKEND_IETF_PORT_FILE:-}"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --host) HOST="${2:?--host needs a value}"; shift 2 ;;
    --host=*) HOST="${1#*=}"; shift ;;
    --port) PORT="${2:?--port needs a value}"; shift 2 ;;
    --port=*) PORT="${1#*=}"; shift ;;
    --tls) TLS_DIR="${2:?--tls needs a folder}"; shift 2 ;;
    --tls=*) TLS_DIR="${1#*=}"; shift ;;
    --client-certs) CLIENT_CERTS="${2:?--client-certs needs required or optional}"; shift 2 ;;
    --client-certs=*) CLIENT_CERTS="${1#*=}"; shift ;;
    --ietf-port) IETF_PORT="${2:?--ietf-port needs a value}"; shift 2 ;;
    --ietf-port=*) IETF_PORT="${1#*=}"; shift ;;
    --ietf-port-file) IETF_PORT_FILE="${2:?--ietf-port-file needs a path}"; shift 2 ;;
    --ietf-port-file=*) IETF_PORT_FILE="${1#*=}"; shift ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done

log() { echo "[courier-backend] $*" >&2; }

ensure_venv_support() {
  # Debian's python3 needs python3-venv for `python3 -m venv` (ensurepip).
  if "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-venv (ensurepip missing)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq python3-venv >&2
  else
    log "error: '$PYTHON -m venv' is unavailable; install python3-venv"; exit 1
  fi
}

setup_venv() {
  local stamp_want stamp_have=""
  stamp_want="$( { cat "$HERE/requirements.txt"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    stamp_have="$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)"
    [ "$stamp_have" = "$stamp_want" ] && return 0
  fi
  ensure_venv_support
  if ! { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; } || [ -n "$stamp_have" ]; then
    # Missing, broken, or built for other requirements / another Python: start clean.
    log "creating virtualenv $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  log "installing requirements"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt" >&2
  echo "$stamp_want" > "$VENV/.requirements.sha256"
}

# Serialize concurrent setups (two run.sh started at once must not build the venv twice).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$HERE/.venv.lock"
  flock 9
  setup_venv
  flock -u 9
  exec 9>&-
else
  setup_venv
fi

if [ "$SETUP_ONLY" = 1 ]; then
  log "virtualenv ready: $VENV"
  exit 0
fi

TLS_ARGS=()
if [ -n "$TLS_DIR" ]; then
  TLS_DIR="$(cd "$TLS_DIR" && pwd)"
  TLS_ARGS=(--ssl-certfile "$TLS_DIR/server.pem" --ssl-keyfile "$TLS_DIR/server-key.pem")
  case "$CLIENT_CERTS" in
    "") ;;
    required) TLS_ARGS+=(--ssl-ca-certs "$TLS_DIR/ca.pem" --ssl-cert-reqs 2) ;;
    optional) TLS_ARGS+=(--ssl-ca-certs "$TLS_DIR/ca.pem" --ssl-cert-reqs 1) ;;
    *) echo "run.sh: --client-certs takes required or optional, not $CLIENT_CERTS" >&2; exit 64 ;;
  esac
elif [ -n "$CLIENT_CERTS" ]; then
  echo "run.sh: --client-certs needs --tls" >&2; exit 64
fi

if [ -n "$IETF_PORT" ]; then
  if [ -n "$TLS_DIR" ]; then echo "run.sh: --ietf-port serves plain HTTP; it does not go with --tls" >&2; exit 64; fi
  export COURIER_BACKEND_IETF_PORT="$IETF_PORT" COURIER_BACKEND_IETF_HOST="${COURIER_BACKEND_IETF_HOST:-$HOST}"
  [ -n "$IETF_PORT_FILE" ] && export COURIER_BACKEND_IETF_PORT_FILE="$IETF_PORT_FILE"
elif [ -n "$IETF_PORT_FILE" ]; then
  echo "run.sh: --ietf-port-file needs --ietf-port" >&2; exit 64
fi

cd "$HERE"
exec "$VENV/bin/python" -m uvicorn courier_backend.app:app --app-dir "$HERE" \
  --host "$HOST" --port "$PORT" --workers 1 --log-level "${COURIER_BACKEND_LOG_LEVEL:-info}" \
  ${TLS_ARGS[@]+"${TLS_ARGS[@]}"}
