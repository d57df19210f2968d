#!/usr/bin/env bash
# Before and after a change to the replay (Docs/benchmarks/sync.md): two courier binaries each
# replay the same scenario, back to back in every repetition (alternating which goes first),
# against one reference backend reset before each. Reports each side's wall time and the
# `courier sync` process's CPU (user + system, /usr/bin/time), and the after/before ratio of
# each pair. CPU is what the client pays, and moves least when other work shares the machine;
# the wall time also holds the backend's share of two cores.
# Usage: Benchmarks/sync/ab.sh BEFORE_BIN AFTER_BIN [N] (default 10000). Environment: RECORDS
# (1000), CONCURRENCY (4: each scenario runs on 1 connection, then on this many), REPEAT (3),
# ONLY=creates|edits, ENQUEUE_BIN (default: this tree's sync-bench-enqueue, built in release;
# the store format must be both binaries').
set -euo pipefail
BEFORE=$(readlink -f "$1")
AFTER=$(readlink -f "$2")
N=${3:-10000}
RECORDS=${RECORDS:-1000}
CONCURRENCY=${CONCURRENCY:-4}
REPEAT=${REPEAT:-3}
ONLY=${ONLY:-}
PER=$((N / RECORDS))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ -z "${ENQUEUE_BIN:-}" ]; then
  # The enqueuer is an executable of the Courier package (Tests/SyncEnqueueProbe, decision 2304).
  swift build --scratch-path .build -c release --product sync-bench-enqueue >/dev/null
fi
ENQUEUE="${ENQUEUE_BIN:-$ROOT/.build/release/sync-bench-enqueue}"
WORK=$(mktemp -d /tmp/courier-sync-ab.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_LOG_LEVEL=warning \
  Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
trap 'kill $BACKEND 2>/dev/null || true; wait $BACKEND 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.2; done
URL="http://127.0.0.1:$PORT"

# A fresh data folder holding the scenario's queue, logged in with BIN; prints the folder.
prepare() {
  local bin="$1" scenario="$2" dir="$WORK/client"
  rm -rf "$dir"
  curl -sf -X POST "$URL/__reset" >/dev/null
  echo secret | "$bin" --base-url "$URL" --data-dir "$dir" login --username alice \
    --password-stdin >/dev/null
  if [ "$scenario" = creates ]; then
    "$ENQUEUE" creates "$dir" "$N" >/dev/null
  else
    "$ENQUEUE" creates "$dir" "$RECORDS" >/dev/null
    "$bin" --base-url "$URL" --data-dir "$dir" sync --json >/dev/null
    "$ENQUEUE" edits "$dir" "$PER" >/dev/null
  fi
  echo "$dir"
}

# `BIN sync` of the prepared queue on CONNECTIONS; prints "wall cpu" in seconds.
timed() {
  local bin="$1" scenario="$2" connections="$3" dir expected=$N
  dir=$(prepare "$bin" "$scenario")
  [ "$scenario" = edits ] && expected=$((RECORDS * PER))
  COURIER_REPLAY_CONCURRENCY="$connections" /usr/bin/time -f '%e %U %S' -o "$WORK/time" \
    "$bin" --base-url "$URL" --data-dir "$dir" sync --json >"$WORK/sync.json"
  python3 -c "import json; r=json.load(open('$WORK/sync.json')); assert r['sent']==$expected and r['pending']==0, r"
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$WORK/time"
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'N=%d, records=%d, repeat=%d, %s, %d cores, load at start %s\n' "$N" "$RECORDS" "$REPEAT" \
  "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for scenario in creates edits; do
  if [ -n "$ONLY" ] && [ "$ONLY" != "$scenario" ]; then continue; fi
  for connections in 1 "$CONCURRENCY"; do
    bw=() bc=() aw=() ac=() rw=() rc=()
    for repeat in $(seq "$REPEAT"); do
      order="before after"
      if [ $((repeat % 2)) = 0 ]; then order="after before"; fi
      for side in $order; do
        if [ "$side" = before ]; then
          result=$(timed "$BEFORE" "$scenario" "$connections")
          bw+=("${result% *}") bc+=("${result#* }")
        else
          result=$(timed "$AFTER" "$scenario" "$connections")
          aw+=("${result% *}") ac+=("${result#* }")
        fi
      done
      rw+=("$(echo "${aw[-1]} / ${bw[-1]}" | bc -l)") rc+=("$(echo "${ac[-1]} / ${bc[-1]}" | bc -l)")
    done
    printf '%-7s %s connection(s): wall before %.2f s, after %.2f s, after/before %.3f (pairs %s); CPU before %.2f s, after %.2f s, after/before %.3f (pairs %s)  [wall before: %s; after: %s; CPU before: %s; after: %s]\n' \
      "$scenario" "$connections" "$(median "${bw[@]}")" "$(median "${aw[@]}")" "$(median "${rw[@]}")" \
      "$(printf '%.3f ' "${rw[@]}")" "$(median "${bc[@]}")" "$(median "${ac[@]}")" "$(median "${rc[@]}")" \
      "$(printf '%.3f ' "${rc[@]}")" "${bw[*]}" "${aw[*]}" "${bc[*]}" "${ac[*]}"
  done
done
printf 'load at end %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
