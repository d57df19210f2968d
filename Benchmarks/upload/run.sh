#!/usr/bin/env bash
# Upload benchmark: `courier upload --no-compress` through each transport against the discard
# sink, next to `curl -F file=@…` in the same run. Measures wall time and peak RSS with
# /usr/bin/time -v and prints ratios against curl. Peak RSS is flat when the largest file's
# row is close to the smallest's.
#
#   Benchmarks/upload/run.sh [SIZES_MIB...]      # default: 1 100 1024
#
# Environment: ROUNDS (default 1), SKIP_BUILD=1 to reuse .build/release/courier.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1 100 1024)
ROUNDS="${ROUNDS:-1}"
PY="$ROOT/Backend/.venv/bin/python"
[ -x "$PY" ] || bash "$ROOT/Backend/run.sh" --setup-only >/dev/null

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$ROOT" && swift build -c release --product courier --scratch-path .build >&2)
fi
COURIER="$ROOT/.build/release/courier"

WORK="$(mktemp -d /tmp/courier-upload-bench.XXXXXX)"
SINK_PID=""
cleanup() {
  [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
(cd "$ROOT/Backend" && exec "$PY" -m courier_backend.sink --port "$PORT") >"$WORK/sink.log" 2>&1 &
SINK_PID=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
  sleep 0.1
done
URL="http://127.0.0.1:$PORT/"

# measure NAME COMMAND...: prints "seconds kib exit" from /usr/bin/time -v.
measure() {
  local out="$WORK/time.txt"
  local code=0
  /usr/bin/time -v "$@" >"$WORK/stdout.txt" 2>"$out" || code=$?
  local wall kib
  wall="$(grep 'Elapsed (wall clock)' "$out" | awk '{print $NF}')"
  kib="$(grep 'Maximum resident set size' "$out" | awk '{print $NF}')"
  # m:ss.cc or h:mm:ss → seconds
  local secs
  secs="$(echo "$wall" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')"
  # What the sink says it received (body bytes), to check the whole body went through.
  local got
  got="$(grep -o '"received": *[0-9]*' "$WORK/stdout.txt" | grep -o '[0-9]*$' || echo 0)"
  echo "$secs $kib $code ${got:-0}"
}

printf '| file | tool | seconds | MiB/s | peak RSS MiB | time ÷ curl | RSS ÷ curl | exit | bytes received |\n'
printf '|---:|---|---:|---:|---:|---:|---:|---:|---:|\n'
for size in "${SIZES[@]}"; do
  FILE="$WORK/payload-$size.bin"
  head -c "$((size * 1024 * 1024))" /dev/urandom >"$FILE"
  cat "$FILE" >/dev/null
  for round in $(seq 1 "$ROUNDS"); do
    read -r c_s c_k c_x c_r < <(measure curl -sS -F "title=bench" -F "file=@$FILE" "$URL")
    rows=("curl -F|$c_s|$c_k|$c_x|$c_r")
    for transport in curl urlsession; do
      read -r s k x r < <(measure env HOME="$WORK" COURIER_DATA_DIR="$WORK/data-$transport" \
        "$COURIER" --base-url "http://127.0.0.1:$PORT" --transport "$transport" --timeout 600 upload "$FILE" --no-compress --to "$URL")
      rows+=("courier --transport $transport|$s|$k|$x|$r")
    done
    for row in "${rows[@]}"; do
      IFS='|' read -r name s k x r <<<"$row"
      awk -v size="$size" -v name="$name" -v s="$s" -v k="$k" -v x="$x" -v cs="$c_s" -v ck="$c_k" \
        -v r="$round" -v got="$r" 'BEGIN {
          rate = (s > 0) ? size / s : 0
          printf "| %d MiB | %s (round %d) | %.2f | %.0f | %.1f | %.2f | %.2f | %d | %s |\n",
            size, name, r, s, rate, k / 1024, (cs > 0 ? s / cs : 0), k / ck, x, got
        }'
    done
  done
  rm -f "$FILE"
done
