#!/usr/bin/env bash
# Serve an independent tus 1.0.0 server (tuspyserver, from PyPI) on loopback, for interop tests.
#
#   ./tus-peer.sh PORT DIR        # tus endpoint http://127.0.0.1:PORT/files, uploads stored in DIR
#   ./tus-peer.sh --setup-only    # only create/refresh Backend/.venv-tus-peer
#
# The virtualenv Backend/.venv-tus-peer is created on first use (that takes a while: wait for
# GET /health) and reinstalled whenever tus-peer-requirements.txt or the Python version changes.
# The server ends itself when the process that started it ends (COURIER_BACKEND_EXIT_WITH_PARENT,
# on unless set to 0). Docs/tus.md says what it speaks.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv-tus-peer"
REQS="$HERE/tus-peer-requirements.txt"
PYTHON="${COURIER_BACKEND_PYTHON:-python3}"

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
log() { echo "[tus-peer] $*" >&2; }

SETUP_ONLY=0
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --setup-only) SETUP_ONLY=1 ;;
  "") usage >&2; exit 64 ;;
  *)
    [ $# -eq 2 ] || { usage >&2; exit 64; }
    PORT="$1"; DIR="$2"
    case "$PORT" in ''|*[!0-9]*) log "PORT must be a number, got '$PORT'"; exit 64 ;; esac
    ;;
esac

setup_venv() {
  local stamp_want stamp_have=""
  stamp_want="$( { cat "$REQS"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    stamp_have="$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)"
    [ "$stamp_have" = "$stamp_want" ] && return 0
  fi
  if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    # Same as run.sh: Debian's python3 needs python3-venv; run.sh installs it when it can.
    "$HERE/setup.sh"
  fi
  log "creating virtualenv $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  log "installing $(basename "$REQS")"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQS" >&2
  echo "$stamp_want" > "$VENV/.requirements.sha256"
}

# Serialize concurrent setups (two peers started at once must not build the venv twice).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$HERE/.venv-tus-peer.lock"
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

mkdir -p "$DIR"
export COURIER_BACKEND_EXIT_WITH_PARENT="${COURIER_BACKEND_EXIT_WITH_PARENT:-1}"
cd "$HERE"
exec "$VENV/bin/python" -m courier_backend.tus_peer --host 127.0.0.1 --port "$PORT" --dir "$DIR"
