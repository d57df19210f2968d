#!/usr/bin/env bash
# A fleet coming back from an outage (Docs/benchmarks/fleet.md): CLIENTS `courier sync --watch`
# processes, each with its own data directory and K writes queued offline, against the reference
# backend answering 503 to everything for OUTAGE_SECONDS, then recovering. Reports the requests
# the server received during the outage, the time from recovery until every write is at the
# server, and checks every write arrived exactly once. Then the simulation (fleet-sim).
# Usage: Benchmarks/fleet/run.sh [CLIENTS=50] [OUTAGE_SECONDS=60]
#   K=5 writes per client; RETRY_AFTER=<s> makes the outage's 503s carry Retry-After;
#   DRAIN_TIMEOUT=900 s; CONFIG=release (scratch .build-release) or debug (.build); the
#   benchmark programs come from the benchmarks package (Benchmarks/Package.swift), scratch
#   Benchmarks/<the same name>.
# Loopback only; every process it starts is ended on exit (trap EXIT).
set -euo pipefail
CLIENTS=${1:-50}
OUTAGE=${2:-60}
K=${K:-5}
CONFIG=${CONFIG:-release}
DRAIN_TIMEOUT=${DRAIN_TIMEOUT:-900}
RETRY_AFTER=${RETRY_AFTER:-}
[ "$CLIENTS" -ge 1 ] && [ "$CLIENTS" -le 500 ] || { echo "CLIENTS must be 1...500" >&2; exit 64; }
[ "$OUTAGE" -ge 0 ] && [ "$OUTAGE" -le 600 ] || { echo "OUTAGE_SECONDS must be 0...600" >&2; exit 64; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SCRATCH=.build
[ "$CONFIG" = release ] && SCRATCH=.build-release
# courier, and the two probes of the Courier package (Tests/SyncEnqueueProbe,
# Tests/FleetSimulation: they drive package-level pieces, decision 2304).
for product in courier sync-bench-enqueue fleet-sim; do
  swift build --scratch-path "$SCRATCH" -c "$CONFIG" --product "$product" >/dev/null
done
BIN="$ROOT/$SCRATCH/$CONFIG"
BENCH_BIN="$BIN"
CHECK=(python3 "$ROOT/Benchmarks/fleet/check.py")
WORK=$(mktemp -d /tmp/courier-fleet-bench.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
WATCHERS=()
BACKEND=
cleanup() {
  for pid in "${WATCHERS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${WATCHERS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$BACKEND" ]; then kill "$BACKEND" 2>/dev/null || true; wait "$BACKEND" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_EXIT_WITH_PARENT=1 \
  Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
for _ in $(seq 300); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.2; done
now() { date +%s.%N; }

# 1. Each client: its own data dir, a session, K writes queued offline (nothing sent).
: >"$WORK/ids"
for i in $(seq "$CLIENTS"); do
  dir="$WORK/c$i"
  echo secret | "$BIN/courier" --base-url "$BASE" --data-dir "$dir" \
    login --username alice --password-stdin >/dev/null
  "$BENCH_BIN/sync-bench-enqueue" creates "$dir" "$K" >/dev/null
  "$BIN/courier" --base-url "$BASE" --data-dir "$dir" articles list --offline --json |
    python3 -c 'import json,sys; [print(a["id"]) for a in json.load(sys.stdin)["articles"]]' >>"$WORK/ids"
done
TOKEN=$(curl -sf -X POST -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' "$BASE/auth/token" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
queued=$(wc -l <"$WORK/ids")
[ "$queued" -eq $((CLIENTS * K)) ] || { echo "queued $queued writes, expected $((CLIENTS * K))" >&2; exit 1; }

# 2. The outage: every request answers 503 until cleared.
chaos='{"fail_all": true, "status": 503}'
[ -n "$RETRY_AFTER" ] && chaos="{\"fail_all\": true, \"status\": 503, \"retry_after\": $RETRY_AFTER}"
curl -sf -X POST -H 'Content-Type: application/json' -d "$chaos" "$BASE/__chaos" >/dev/null
log0=$("${CHECK[@]}" logcount "$BASE")
t_start=$(now)
for i in $(seq "$CLIENTS"); do
  "$BIN/courier" --base-url "$BASE" --data-dir "$WORK/c$i" sync --watch --json \
    >"$WORK/c$i.out" 2>"$WORK/c$i.err" &
  WATCHERS+=($!)
done
sleep "$OUTAGE"

# 3. Recovery: clear the outage, time until every write is at the server.
log1=$("${CHECK[@]}" logcount "$BASE")
curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$BASE/__chaos" >/dev/null
t_clear=$(now)
outage_stats=$("${CHECK[@]}" outage "$BASE" "$log0" "$log1")
t_drained=$("${CHECK[@]}" drain "$BASE" "$TOKEN" "$WORK/ids" "$DRAIN_TIMEOUT")
drain=$(printf '%.2f' "$(echo "$t_drained - $t_clear" | bc -l)")
log2=$("${CHECK[@]}" logcount "$BASE")
verify=$("${CHECK[@]}" verify "$BASE" "$TOKEN" "$WORK/ids") || { echo "$verify"; exit 1; }

# 4. SIGTERM every watcher; each must exit by itself, at once.
t0=$(now)
for pid in "${WATCHERS[@]}"; do kill -TERM "$pid"; done
exited=0
for pid in "${WATCHERS[@]}"; do wait "$pid" && exited=$((exited + 1)) || true; done
t1=$(now)
WATCHERS=()
pending_left=$(for i in $(seq "$CLIENTS"); do
  grep '"pending"' "$WORK/c$i.out" | tail -1 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["pending"])' || echo "?"
done | awk '$1 == "?" {unknown++} {s += $1} END {print s (unknown ? " (" unknown " unknown)" : "")}')

printf 'build: %s, %d clients x %d writes, outage %s s%s, %s, %d cores, %s\n' "$CONFIG" "$CLIENTS" "$K" \
  "$OUTAGE" "${RETRY_AFTER:+ (Retry-After: $RETRY_AFTER)}" "$(uname -r)" "$(nproc)" "$(date -u +%FT%TZ)"
printf 'outage: %.1f s measured; requests received during it: %s\n' "$(echo "$t_clear - $t_start" | bc -l)" "$outage_stats"
printf 'requests per client during the outage: %.1f\n' "$(echo "($log1 - $log0) / $CLIENTS" | bc -l)"
printf 'drain after recovery: %s s (every write at the server); requests after recovery (GETs are the drain poll): %s\n' \
  "$drain" "$("${CHECK[@]}" outage "$BASE" "$log1" "$log2")"
printf 'exactly once: %s\n' "$verify"
printf 'SIGTERM: %d of %d watchers exited 0 in %.2f s; writes still pending in their last state: %s\n' \
  "$exited" "$CLIENTS" "$(echo "$t1 - $t0" | bc -l)" "$pending_left"
echo
# 5. The simulation: the same outage, then none (the AWS blog's plain contention), then a
# one-hour outage (calls per client), then the same outage with `Retry-After: 5` on every 503.
for run in "${SIM_OUTAGE:-$OUTAGE} 0" "0 0" "3600 0" "${SIM_OUTAGE:-$OUTAGE} 5"; do
  read -r outage retry_after <<<"$run"
  "$BENCH_BIN/fleet-sim" "${SIM_CLIENTS:-10000}" "${SIM_CAPACITY:-250}" "$outage" "${SIM_SEED:-1}" \
    "$retry_after"
  echo
done
