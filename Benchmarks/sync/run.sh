#!/usr/bin/env bash
# Sync benchmarks (Docs/benchmarks/sync.md), one run, one backend, reset between measurements:
#  1. creates: N queued creates sent by `courier sync`, against peer.py (python http.client,
#     keep-alive) sending the same requests: courier sequential vs the peer on one connection,
#     courier with replay_concurrency C vs the peer on C connections;
#  2. edits: N edits spread over RECORDS records (N / RECORDS each, queued round by round, each
#     on the version the one before made), the same four runs;
#  3. cold start of `courier articles list --offline` with N cached articles, vs fetching the
#     same list from the backend with curl.
# Usage: Benchmarks/sync/run.sh [N] (default 10000). Environment: CONFIG=release for a release
# courier (the timed binary), RECORDS (default 1000), CONCURRENCY (default 4), ENQUEUE_CONFIG
# (the set-up tool's build, default debug: it is not timed), ONLY=creates|edits, REPEAT (each
# measurement's repetitions, default 3: medians are reported, courier and peer alternating who
# goes first), COURIER_BIN (a
# courier binary to time instead of this tree's) and ENQUEUE_BIN (the set-up tool built against
# that courier's sources, whose store it must write).
set -euo pipefail
N=${1:-10000}
CONFIG=${CONFIG:-debug}
ENQUEUE_CONFIG=${ENQUEUE_CONFIG:-debug}
RECORDS=${RECORDS:-1000}
CONCURRENCY=${CONCURRENCY:-4}
ONLY=${ONLY:-}
REPEAT=${REPEAT:-3}
PER=$((N / RECORDS))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
swift build --scratch-path .build -c "$CONFIG" --product courier >/dev/null
# The enqueuer is an executable of the Courier package (Tests/SyncEnqueueProbe, decision 2304).
swift build --scratch-path .build -c "$ENQUEUE_CONFIG" --product sync-bench-enqueue >/dev/null
# COURIER_BIN: another courier to time instead (the "before" runs of Docs/benchmarks/sync.md).
COURIER="${COURIER_BIN:-$ROOT/.build/$CONFIG/courier}"
ENQUEUE="${ENQUEUE_BIN:-$ROOT/.build/$ENQUEUE_CONFIG/sync-bench-enqueue}"
WORK=$(mktemp -d /tmp/courier-sync-bench.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_LOG_LEVEL=warning \
  Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
trap 'kill $BACKEND 2>/dev/null || true; wait $BACKEND 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.2; done

now() { date +%s.%N; }
reset() { curl -sf -X POST "http://127.0.0.1:$PORT/__reset" >/dev/null; }
# A fresh data folder, logged in: a fresh client.
client() {
  local dir="$WORK/client-$1"
  rm -rf "$dir"
  echo secret | "$COURIER" --base-url "http://127.0.0.1:$PORT" --data-dir "$dir" \
    login --username alice --password-stdin >/dev/null
  echo "$dir"
}
# courier sync of what DIR holds, with CONCURRENCY; checks that all EXPECTED were sent.
timed_sync() {
  local dir="$1" concurrency="$2" expected="$3" t0 t1
  t0=$(now)
  COURIER_REPLAY_CONCURRENCY="$concurrency" "$COURIER" --base-url "http://127.0.0.1:$PORT" \
    --data-dir "$dir" sync --json >"$WORK/sync.json"
  t1=$(now)
  python3 -c "import json; r=json.load(open('$WORK/sync.json')); assert r['sent']==$expected and r['pending']==0, r"
  echo "$t1 - $t0" | bc -l
}
ratio() { echo "$1 / $2" | bc -l; }
# Cold start of `courier articles list --offline` over the N articles DIR holds (just synced,
# so the server holds the same N), against curl fetching them.
list_cold_start() {
  local dir="$1" t0 t1 token
  local -a list_runs=() curl_runs=()
  for _ in 1 2 3 4 5; do
    t0=$(now); "$COURIER" --base-url "http://127.0.0.1:$PORT" --data-dir "$dir" articles list --offline >/dev/null; t1=$(now)
    list_runs+=("$(echo "$t1 - $t0" | bc -l)")
  done
  token=$(curl -s -X POST -H 'Content-Type: application/json' \
    -d '{"username":"alice","password":"secret"}' "http://127.0.0.1:$PORT/auth/token" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  for _ in 1 2 3 4 5; do
    t0=$(now); curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$PORT/articles" >/dev/null; t1=$(now)
    curl_runs+=("$(echo "$t1 - $t0" | bc -l)")
  done
  list_median=$(printf '%s\n' "${list_runs[@]}" | sort -n | sed -n 3p)
  curl_median=$(printf '%s\n' "${curl_runs[@]}" | sort -n | sed -n 3p)
}

declare -A result

# One measurement of a scenario: courier's replay and the peer's, in the given order.
measure() {
  local scenario="$1" concurrency="$2" first="$3" dir c p
  run_courier() {
    reset
    dir=$(client "$scenario-$concurrency")
    if [ "$scenario" = creates ]; then
      "$ENQUEUE" creates "$dir" "$N" >/dev/null
      c=$(timed_sync "$dir" "$concurrency" "$N")
      if [ "$concurrency" = 1 ] && [ -z "${list_median:-}" ]; then list_cold_start "$dir"; fi
    else
      "$ENQUEUE" creates "$dir" "$RECORDS" >/dev/null
      "$COURIER" --base-url "http://127.0.0.1:$PORT" --data-dir "$dir" sync --json >/dev/null
      "$ENQUEUE" edits "$dir" "$PER" >/dev/null
      c=$(timed_sync "$dir" "$concurrency" "$((RECORDS * PER))")
    fi
  }
  run_peer() {
    reset
    if [ "$scenario" = creates ]; then
      p=$(python3 Benchmarks/sync/peer.py 127.0.0.1 "$PORT" creates "$N" "$concurrency")
    else
      p=$(python3 Benchmarks/sync/peer.py 127.0.0.1 "$PORT" edits "$RECORDS" "$PER" "$concurrency")
    fi
  }
  if [ "$first" = courier ]; then run_courier; run_peer; else run_peer; run_courier; fi
  result[courier_${scenario}_$concurrency]+=" $c"
  result[peer_${scenario}_$concurrency]+=" $p"
}
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for repeat in $(seq "$REPEAT"); do
  # Alternate who goes first, so a burst of load on the machine does not always hit one side.
  first=courier
  if [ $((repeat % 2)) = 0 ]; then first=peer; fi
  for scenario in creates edits; do
    if [ -n "$ONLY" ] && [ "$ONLY" != "$scenario" ]; then continue; fi
    for concurrency in 1 "$CONCURRENCY"; do
      measure "$scenario" "$concurrency" "$first"
    done
  done
done

printf 'build: %s, N=%d, records=%d, concurrency=%d, %s, %d cores, load %s\n' "$CONFIG" "$N" \
  "$RECORDS" "$CONCURRENCY" "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for scenario in creates edits; do
  for concurrency in 1 "$CONCURRENCY"; do
    runs_c=${result[courier_${scenario}_$concurrency]:-}
    runs_p=${result[peer_${scenario}_$concurrency]:-}
    [ -n "$runs_c" ] || continue
    c=$(median "$runs_c")
    p=$(median "$runs_p")
    # Each repetition's courier/peer ratio (the two ran back to back): their median is what a
    # burst of load on the shared machine moves least.
    pairs=$(paste <(printf '%s\n' $runs_c) <(printf '%s\n' $runs_p) | awk '{ printf "%.3f ", $1 / $2 }')
    printf '%-7s %s connection(s): courier %.2f s (%.0f ops/s), peer %.2f s (%.0f ops/s), ratio of medians %.2f, median of ratios %.2f  [courier:%s; peer:%s; ratios: %s]\n' \
      "$scenario" "$concurrency" "$c" "$(ratio "$N" "$c")" "$p" "$(ratio "$N" "$p")" "$(ratio "$c" "$p")" \
      "$(median "$pairs")" "$runs_c" "$runs_p" "$pairs"
  done
done

if [ -n "${list_median:-}" ]; then
  printf 'list --offline cold start (median of 5): %.3f s; curl GET /articles (median of 5): %.3f s; ratio %.2f\n' \
    "$list_median" "$curl_median" "$(ratio "$list_median" "$curl_median")"
fi
