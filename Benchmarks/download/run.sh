#!/usr/bin/env bash
# Download benchmarks (issue 25, decisions 2500 and 2501), release build, each row against its
# peer in the same run:
#
#   1. Loopback: the reference backend serves a placed photo (`POST /__photos`, deterministic
#      bytes) of each size in LOOPBACK_SIZES; `curl -o FILE` and `courier download --output
#      FILE` fetch it, ROUNDS times each, alternating. Wall time, throughput, CPU time (user +
#      system, all threads, from /usr/bin/time) and private memory (Private_Clean + Private_Dirty
#      of /proc/PID/smaps_rollup, sampled every 20 ms during the run; the largest sample) of each. Courier's time includes its HEAD and the SHA-256 of the
#      whole file against the backend's Repr-Digest; curl checks nothing. A third row,
#      "curlsync", is `curl -o FILE && sync FILE`: curl's file made durable, as courier's is
#      (fsync before its rename), so the disk's share of the time shows.
#   2. Over a rate-limited link: the backend in one network namespace, courier in another, a
#      veth between them with `tc tbf` at RATE (as Benchmarks/upload-resume). `courier download`
#      of SIZE_MIB is killed with -9 KILLS times at random moments (random points of the file,
#      on the server's byte count), then runs to the end. The file's SHA-256 must equal the
#      server's; bytes on the wire = iptables counters in the server's namespace (IP and TCP
#      headers included) of both directions, divided by the file's size.
#
#   Benchmarks/download/run.sh [SIZE_MIB [KILLS]]     # default: 1024 3
#
# Environment: RATE (default 400mbit: 1 GiB in about 25 s a run), LOOPBACK_SIZES (default
# "1 64 SIZE_MIB"), ROUNDS (default 3), SKIP_BUILD=1 to reuse the release build, SKIP_LINK=1 or
# SKIP_LOOPBACK=1 to run one part only, SEED for the kill points (default: random, printed),
# COURIER_PEER=/path/to/another/courier to measure a second build in the loopback part, in the
# same rounds (rows "peer": an older commit, say).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SIZE_MIB="${1:-1024}"
KILLS="${2:-3}"
RATE="${RATE:-400mbit}"
LOOPBACK_SIZES="${LOOPBACK_SIZES:-1 64 $SIZE_MIB}"
ROUNDS="${ROUNDS:-3}"
SEED="${SEED:-$RANDOM}"
SIZE=$((SIZE_MIB * 1024 * 1024))
PY="$ROOT/Backend/.venv/bin/python"
[ -x "$PY" ] || bash "$ROOT/Backend/run.sh" --setup-only >/dev/null

. "$ROOT/Benchmarks/lib/link.sh"
COURIER="$(bench_release_courier download)"

WORK="$(mktemp -d /tmp/courier-download-bench.XXXXXX)"
SRV="cdl-$$-s"
CLI="cdl-$$-c"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  bench_unlink "$SRV" "$CLI"
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_http() { bench_wait_http download "$@"; }

# place PORT ID MIB [NETNS] → the photo's SHA-256 (hex)
place() {
  local run=()
  [ -z "${4:-}" ] || run=(ip netns exec "$4")
  "${run[@]}" curl -sf -X POST "http://127.0.0.1:$1/__photos" -H 'Content-Type: application/json' \
    -d "{\"id\":\"$2\",\"size\":$(($3 * 1048576)),\"seed\":7}" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["sha256"])'
}

# measure OUT_PREFIX COMMAND...: runs it under /usr/bin/time, sampling the command's private
# memory every 20 ms; writes OUT_PREFIX.secs, OUT_PREFIX.kib (the largest sample) and
# OUT_PREFIX.cpu (user + system seconds of the command, all its threads), returns its exit code.
measure() {
  local out="$1"
  shift
  local start end peak=0 kib pid child="" code=0
  start="$(date +%s.%N)"
  /usr/bin/time -f "%U %S" -o "$out.time" "$@" >"$out.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [ -n "$child" ] || child="$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{ print $1 }')"
    if [ -n "$child" ]; then
      kib="$(awk '/^Private_(Clean|Dirty):/ { s += $2 } END { print s + 0 }' "/proc/$child/smaps_rollup" 2>/dev/null || echo 0)"
      [ "${kib:-0}" -gt "$peak" ] && peak="$kib"
    fi
    sleep 0.02
  done
  wait "$pid" || code=$?
  end="$(date +%s.%N)"
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' >"$out.secs"
  echo "$peak" >"$out.kib"
  awk '{ print $1 + $2 }' "$out.time" >"$out.cpu"
  return "$code"
}

# ---------------------------------------------------------------------------------------------
if [ "${SKIP_LOOPBACK:-0}" != 1 ]; then
  LPORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  COURIER_BACKEND_DATA="$WORK/lbackend" COURIER_BACKEND_EXIT_WITH_PARENT=1 COURIER_BACKEND_LOG_LEVEL=warning \
    bash "$ROOT/Backend/run.sh" --port "$LPORT" >"$WORK/lbackend.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$LPORT/health"
  LDIR="$WORK/lclient"
  mkdir -p "$LDIR"
  LC=(env HOME="$LDIR" XDG_CONFIG_HOME="$LDIR/cfg" "$COURIER" --base-url "http://127.0.0.1:$LPORT" --data-dir "$LDIR" --timeout 600)
  "${LC[@]}" login --username alice --password secret >/dev/null
  TOKEN="$(curl -sf -X POST "http://127.0.0.1:$LPORT/auth/token" -H 'Content-Type: application/json' \
    -d '{"username":"alice","password":"secret"}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"

  echo "## 1. Loopback: courier download vs curl -o, $ROUNDS rounds each"
  echo
  echo "| size | client | round | exit | wall s | MB/s | CPU s (user+sys) | private memory peak MiB |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
  declare -A TOTAL_SECS TOTAL_CPU
  for mib in $LOOPBACK_SIZES; do
    sha="$(place "$LPORT" "bench-$mib" "$mib")"
    url="http://127.0.0.1:$LPORT/photos/bench-$mib"
    for round in $(seq 1 "$ROUNDS"); do
      for client in curl curlsync courier ${COURIER_PEER:+peer}; do
        target="$WORK/out-$client-$mib.bin"
        rm -f "$target"
        code=0
        if [ "$client" = curl ]; then
          measure "$WORK/m" curl -sf -H "Authorization: Bearer $TOKEN" -o "$target" "$url" || code=$?
        elif [ "$client" = curlsync ]; then
          # The same, then the file made durable (fsync), as courier does before its rename.
          measure "$WORK/m" sh -c 'curl -sf -H "Authorization: Bearer $1" -o "$2" "$3" && sync "$2"' \
            sh "$TOKEN" "$target" "$url" || code=$?
        elif [ "$client" = courier ]; then
          measure "$WORK/m" "${LC[@]}" download "/photos/bench-$mib" --output "$target" || code=$?
        else
          measure "$WORK/m" "${LC[@]/#$COURIER/$COURIER_PEER}" download "/photos/bench-$mib" --output "$target" || code=$?
        fi
        secs="$(cat "$WORK/m.secs")"
        kib="$(cat "$WORK/m.kib")"
        got="$(sha256sum "$target" 2>/dev/null | cut -d' ' -f1 || true)"
        [ "$got" = "$sha" ] || { echo "download: $client's $mib MiB file differs from the server's" >&2; cat "$WORK/m.log" >&2; exit 1; }
        cpu="$(cat "$WORK/m.cpu")"
        TOTAL_SECS["$client-$mib"]="$(awk -v a="${TOTAL_SECS["$client-$mib"]:-0}" -v b="$secs" 'BEGIN { print a + b }')"
        TOTAL_CPU["$client-$mib"]="$(awk -v a="${TOTAL_CPU["$client-$mib"]:-0}" -v b="$cpu" 'BEGIN { print a + b }')"
        awk -v m="$mib" -v c="$client" -v r="$round" -v e="$code" -v s="$secs" -v k="$kib" -v u="$cpu" \
          'BEGIN { printf "| %d MiB | %s | %d | %d | %.3f | %.0f | %.2f | %.1f |\n", m, c, r, e, s, m * 1.048576 / s, u, k / 1024 }'
        rm -f "$target"
      done
    done
    rm -f "$WORK/lbackend/photos/bench-$mib"
  done
  echo
  for mib in $LOOPBACK_SIZES; do
    awk -v m="$mib" -v c="${TOTAL_SECS["curl-$mib"]}" -v d="${TOTAL_SECS["courier-$mib"]}" \
      -v u="${TOTAL_CPU["curl-$mib"]}" -v v="${TOTAL_CPU["courier-$mib"]}" \
      'BEGIN { printf "%d MiB: courier download throughput ÷ curl -o = %.2f (sum of the rounds); CPU time courier ÷ curl = %.2f\n", m, c / d, (u > 0 ? v / u : 0) }'
    awk -v m="$mib" -v c="${TOTAL_SECS["curlsync-$mib"]}" -v d="${TOTAL_SECS["courier-$mib"]}" \
      'BEGIN { printf "%d MiB: courier download throughput ÷ (curl -o, then sync FILE) = %.2f\n", m, c / d }'
    [ -z "${COURIER_PEER:-}" ] || awk -v m="$mib" -v c="${TOTAL_SECS["curl-$mib"]}" -v d="${TOTAL_SECS["peer-$mib"]}" \
      -v u="${TOTAL_CPU["curl-$mib"]}" -v v="${TOTAL_CPU["peer-$mib"]}" \
      'BEGIN { printf "%d MiB: peer courier (COURIER_PEER) throughput ÷ curl -o = %.2f; CPU time peer ÷ curl = %.2f\n", m, c / d, (u > 0 ? v / u : 0) }'
  done
  echo
fi

# ---------------------------------------------------------------------------------------------
if [ "${SKIP_LINK:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "download: part 2 needs root (SKIP_LINK=1 to skip)" >&2; exit 1; }
  bench_link "$SRV" "$CLI" 10.215.0 "$RATE"
  BPORT=18091
  COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_EXIT_WITH_PARENT=1 COURIER_BACKEND_LOG_LEVEL=warning \
    ip netns exec "$SRV" bash "$ROOT/Backend/run.sh" --host 0.0.0.0 --port "$BPORT" >"$WORK/backend.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$BPORT/health" "$SRV"
  bench_count "$SRV" "$BPORT"
  counted() { bench_counted_in "$SRV" "$BPORT"; }  # bytes into the server's namespace
  sent() { bench_counted_out "$SRV" "$BPORT"; }    # and out of it, for the backend's port
  SHA="$(place "$BPORT" big "$SIZE_MIB" "$SRV")"
  DDIR="$WORK/client"
  mkdir -p "$DDIR"
  # Plain http to the server's link address: allowed for this measurement (decision 2431).
  CMD=(env HOME="$DDIR" XDG_CONFIG_HOME="$DDIR/cfg" COURIER_ALLOW_INSECURE_HTTP=1 ip netns exec "$CLI"
    "$COURIER" --base-url "http://10.215.0.1:$BPORT" --data-dir "$DDIR" --timeout 600)
  "${CMD[@]}" login --username alice --password secret >/dev/null 2>&1
  # KILLS random points of the file, sorted, from SEED.
  mapfile -t POINTS < <("$PY" -c "
import random
r = random.Random($SEED)
print('\n'.join(str(p) for p in sorted(r.randrange($SIZE // 20, $SIZE * 19 // 20) for _ in range($KILLS))))")
  base_in="$(counted)"
  base_out="$(sent)"
  start="$(date +%s.%N)"
  for point in "${POINTS[@]}"; do
    "${CMD[@]}" download /photos/big --output "$DDIR/downloads/big" >"$WORK/run.log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ $(($(sent) - base_out)) -lt "$point" ]; do sleep 0.02; done
    kill -9 "$pid" 2>/dev/null || { echo "download: the run ended before its kill at $point" >&2; cat "$WORK/run.log" >&2; exit 1; }
    wait "$pid" 2>/dev/null || true
    echo "killed at $(($(sent) - base_out)) bytes sent (point $point), partial $(stat -c %s "$DDIR/downloads/.big.courier-partial" 2>/dev/null || echo 0)" >&2
  done
  code=0
  "${CMD[@]}" --json download /photos/big --output "$DDIR/downloads/big" >"$WORK/run.log" 2>&1 || code=$?
  end="$(date +%s.%N)"
  wire_in=$(($(counted) - base_in))
  wire_out=$(($(sent) - base_out))
  got="$(sha256sum "$DDIR/downloads/big" 2>/dev/null | cut -d' ' -f1 || true)"
  # The same, uninterrupted: the link's own pace and overhead.
  rm -f "$DDIR/downloads/big"
  b_in="$(counted)"; b_out="$(sent)"; s0="$(date +%s.%N)"
  code0=0
  "${CMD[@]}" --json download /photos/big --output "$DDIR/downloads/big" >"$WORK/run0.log" 2>&1 || code0=$?
  e0="$(date +%s.%N)"
  w0=$(($(counted) - b_in + $(sent) - b_out))
  got0="$(sha256sum "$DDIR/downloads/big" 2>/dev/null | cut -d' ' -f1 || true)"
  echo "uninterrupted run: $(tail -1 "$WORK/run0.log")" >&2
  [ "$got0" = "$SHA" ] || echo "download: the uninterrupted run's file differs from the server's" >&2

  echo "## 2. $SIZE_MIB MiB over a $RATE tbf link, courier download killed -9 $KILLS times (seed $SEED)"
  echo
  echo "| run | exit | server→client bytes | client→server bytes | all ÷ file size | wall s |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk -v c="$code" -v o="$wire_out" -v i="$wire_in" -v s="$SIZE" -v a="$start" -v b="$end" \
    'BEGIN { printf "| killed %s times, then to the end | %d | %d | %d | %.4f | %.1f |\n", "'"$KILLS"'", c, o, i, (o + i) / s, b - a }'
  awk -v c="$code0" -v w="$w0" -v s="$SIZE" -v a="$s0" -v b="$e0" \
    'BEGIN { printf "| not interrupted | %d | | | %.4f | %.1f |\n", c, w / s, b - a }'
  echo
  if [ "$got" = "$SHA" ]; then
    echo "SHA-256 of the file equals the server's: $SHA"
  else
    echo "download: the file's SHA-256 ($got) differs from the server's ($SHA)" >&2
    cat "$WORK/run.log" >&2
    exit 1
  fi
fi
