#!/usr/bin/env bash
# The response cache's costs (Docs/benchmarks/cache.md): bytes on the wire of a revalidated GET
# (a 304) against a refetch, and the cost per call of a cache hit against a plain GET.
# cache-bench (Tests/CacheBench, an executable of the Courier package: the caching middleware is
# package-level, decision 2304) talks to the reference backend through relay.py, which counts
# TCP payload bytes each way. GET /articles lists ARTICLES articles.
# Usage: Benchmarks/cache/run.sh [N] [ARTICLES] (500, 50); CONFIG=debug for a debug build.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${1:-500}
ARTICLES=${2:-50}
CONFIG=${CONFIG:-release}
swift build --scratch-path .build -c "$CONFIG" --product cache-bench >&2
BENCH="$(swift build --scratch-path .build -c "$CONFIG" --show-bin-path)/cache-bench"
WORK=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
RELAY_PORT=$(free_port)
COURIER_BACKEND_DATA="$WORK/backend" Backend/run.sh --host 127.0.0.1 --port "$PORT" \
  >"$WORK/backend.log" 2>&1 &
BACKEND=$!
python3 Benchmarks/cache/relay.py "$RELAY_PORT" "$PORT" "$WORK/relay.count" &
RELAY=$!
cleanup() {
  kill "$RELAY" 2>/dev/null || true
  # run.sh execs or waits for uvicorn: end the backend's process group member we started.
  pkill -P "$BACKEND" 2>/dev/null || true
  kill "$BACKEND" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 600); do
  curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  sleep 0.1
done
TOKEN=$(curl -fs -X POST -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' "http://127.0.0.1:$PORT/auth/token" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
for i in $(seq "$ARTICLES"); do
  curl -fs -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    -d "{\"id\":\"bench-$i\",\"title\":\"Article $i\",\"body\":\"$(printf 'x%.0s' $(seq 200))\"}" \
    "http://127.0.0.1:$PORT/articles"
done
wire() { cat "$WORK/relay.count"; }
echo "config=$CONFIG calls=$N articles=$ARTICLES $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in plain revalidate hit; do
  # The same run twice: with 0 calls (the warm-up alone) and with N; the difference is N calls.
  read -r d0 u0 < <(wire)
  "$BENCH" "http://127.0.0.1:$RELAY_PORT" "$TOKEN" "$WORK/data-$mode-0" "$mode" 0 >/dev/null
  read -r d1 u1 < <(wire)
  line=$("$BENCH" "http://127.0.0.1:$RELAY_PORT" "$TOKEN" "$WORK/data-$mode" "$mode" "$N")
  read -r d2 u2 < <(wire)
  down=$(( (d2 - d1) - (d1 - d0) ))
  up=$(( (u2 - u1) - (u1 - u0) ))
  echo "${line%\}},\"wire_down_bytes_per_call\":$(( down / N )),\"wire_up_bytes_per_call\":$(( up / N ))}"
done
