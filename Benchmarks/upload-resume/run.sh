#!/usr/bin/env bash
# Resumable upload benchmarks (issue 13, decisions 1301 and 1302), every row against its peer
# in the same run, release build:
#
#   1. Interrupted over a rate-limited link: the reference backend (tus) and the discard sink
#      (multipart) in one network namespace, courier in another, a veth between them with
#      `tc tbf` at RATE. The client is killed with -9 each time another SIZE/(N+1) bytes have
#      crossed the link since the last kill, N times, then runs to the end:
#        - tus: `courier upload --queue --resumable` once, then `courier sync` (killed N times,
#          then to the end): each run resumes where the server stopped;
#        - multipart (today's restart from zero): `courier upload --no-compress` (killed N times,
#          then to the end).
#      Bytes on the wire = what iptables counted into the server's namespace (IP headers
#      included), divided by the file's size. Needs root.
#   2. Uninterrupted on loopback, wall time and peak RSS (/usr/bin/time -v) of `curl -F` and
#      `courier upload --no-compress` to the discard sink, `courier upload --resumable` (also of
#      a file touched just before, which is hashed) and `courier sync` of a queued upload to the
#      tus discard sink (courier_backend.tus_sink: no disk, no checksum extension), for each
#      size (flat memory: the rows of two sizes match).
#
#   Benchmarks/upload-resume/run.sh [SIZE_MIB [INTERRUPTIONS]]   # default: 1024 5
#
# Environment: RATE (default 400mbit), LOOPBACK_SIZES (default "100 SIZE"), ROUNDS of part 2
# (default 3; on a shared machine read the ratios of each round), SKIP_BUILD=1 to
# reuse the release build, SKIP_LINK=1 or SKIP_LOOPBACK=1 to run one part only, BASELINE=path
# to another courier binary (a release build of an earlier commit) measured beside this one in
# the same run: its rows are marked "before".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SIZE_MIB="${1:-1024}"
KILLS="${2:-5}"
RATE="${RATE:-400mbit}"
LOOPBACK_SIZES="${LOOPBACK_SIZES:-100 $SIZE_MIB}"
ROUNDS="${ROUNDS:-3}"
SIZE=$((SIZE_MIB * 1024 * 1024))
PY="$ROOT/Backend/.venv/bin/python"
[ -x "$PY" ] || bash "$ROOT/Backend/run.sh" --setup-only >/dev/null

. "$ROOT/Benchmarks/lib/link.sh"
COURIER="$(bench_release_courier upload-resume)"
BEFORE="${BASELINE:-}"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "upload-resume: BASELINE=$BEFORE is not executable" >&2; exit 1; }

WORK="$(mktemp -d /tmp/courier-upload-resume.XXXXXX)"
SRV="cur-$$-s"
CLI="cur-$$-c"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  bench_unlink "$SRV" "$CLI"
  rm -rf "$WORK"
}
trap cleanup EXIT

FILE="$WORK/payload.bin"
head -c "$SIZE" /dev/urandom >"$FILE"
SHA="$(sha256sum "$FILE" | cut -d' ' -f1)"

wait_http() { bench_wait_http upload-resume "$@"; }

# ---------------------------------------------------------------------------------------------
if [ "${SKIP_LINK:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "upload-resume: part 1 needs root (SKIP_LINK=1 to skip)" >&2; exit 1; }
  bench_link "$SRV" "$CLI" 10.214.0 "$RATE"
  BPORT=18081
  SPORT=18082
  COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_EXIT_WITH_PARENT=1 \
    ip netns exec "$SRV" bash "$ROOT/Backend/run.sh" --host 0.0.0.0 --port "$BPORT" >"$WORK/backend.log" 2>&1 &
  PIDS+=($!)
  (cd "$ROOT/Backend" && COURIER_BACKEND_EXIT_WITH_PARENT=1 exec ip netns exec "$SRV" "$PY" -m courier_backend.sink --host 0.0.0.0 --port "$SPORT") >"$WORK/sink.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$BPORT/health" "$SRV"
  wait_http "http://127.0.0.1:$SPORT/" "$SRV"
  bench_count "$SRV" "$BPORT" "$SPORT"
  counted() { bench_counted_in "$SRV" "$1"; }  # PORT → bytes counted into the server's namespace
  # Plain http to the server's link address (not loopback): allowed, as this measures the
  # upload itself, without TLS (decision 2431).
  client() { # DATA_DIR BASE_URL [BINARY]: the courier command line in the client's namespace, as CMD
    CMD=(env HOME="$1" XDG_CONFIG_HOME="$1/cfg" COURIER_ALLOW_INSECURE_HTTP=1 ip netns exec "$CLI"
      "${3:-$COURIER}" --base-url "$2" --data-dir "$1" --timeout 600)
  }
  # run_interrupted PORT COMMAND... (an external command, so that `&` gives its own pid): kills
  # it with -9 each time another SIZE/(KILLS+1)
  # bytes crossed the link since the last kill, KILLS times, then runs it to the end. Prints
  # "wire_bytes seconds exit".
  run_interrupted() {
    local port="$1" kills="$2"
    shift 2
    local step=$((SIZE / (kills + 1))) start end mark base
    base="$(counted "$port")"
    start="$(date +%s.%N)"
    for kill_number in $(seq 1 "$kills"); do
      mark="$(counted "$port")"
      "$@" >"$WORK/run.log" 2>&1 &
      local pid=$!
      while kill -0 "$pid" 2>/dev/null && [ $(($(counted "$port") - mark)) -lt "$step" ]; do
        sleep 0.02
      done
      kill -9 "$pid" 2>/dev/null || { echo "upload-resume: run $kill_number ended before its kill" >&2; cat "$WORK/run.log" >&2; exit 1; }
      wait "$pid" 2>/dev/null || true
    done
    local code=0
    "$@" >"$WORK/run.log" 2>&1 || code=$?
    end="$(date +%s.%N)"
    echo "$(($(counted "$port") - base)) $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') $code"
  }
  TUS_DIR="$WORK/client-tus"
  MP_DIR="$WORK/client-multipart"
  mkdir -p "$TUS_DIR" "$MP_DIR"
  BASE="http://10.214.0.1:$BPORT"
  SINK="http://10.214.0.1:$SPORT"
  client "$TUS_DIR" "$BASE"
  "${CMD[@]}" login --username alice --password secret >/dev/null 2>&1
  "${CMD[@]}" upload --queue --resumable --json "$FILE" >"$WORK/queued.json" 2>/dev/null
  read -r tus_wire tus_secs tus_code < <(run_interrupted "$BPORT" "$KILLS" "${CMD[@]}" sync)
  stored="$(ip netns exec "$SRV" curl -s "http://127.0.0.1:$BPORT/__uploads")"
  # The same, uninterrupted: the link's own pace for each protocol.
  "${CMD[@]}" upload --queue --resumable --json "$FILE" >/dev/null 2>&1
  read -r tus0_wire tus0_secs tus0_code < <(run_interrupted "$BPORT" 0 "${CMD[@]}" sync)
  if [ -n "$BEFORE" ]; then
    BT_DIR="$WORK/client-tus-before"
    mkdir -p "$BT_DIR"
    client "$BT_DIR" "$BASE" "$BEFORE"
    "${CMD[@]}" login --username alice --password secret >/dev/null 2>&1
    "${CMD[@]}" upload --queue --resumable --json "$FILE" >/dev/null 2>&1
    read -r btus_wire btus_secs btus_code < <(run_interrupted "$BPORT" "$KILLS" "${CMD[@]}" sync)
    "${CMD[@]}" upload --queue --resumable --json "$FILE" >/dev/null 2>&1
    read -r btus0_wire btus0_secs btus0_code < <(run_interrupted "$BPORT" 0 "${CMD[@]}" sync)
  fi
  client "$MP_DIR" "$SINK"
  read -r mp_wire mp_secs mp_code < <(run_interrupted "$SPORT" "$KILLS" "${CMD[@]}" \
    upload --no-compress --to "$SINK/" "$FILE")
  read -r mp0_wire mp0_secs mp0_code < <(run_interrupted "$SPORT" 0 "${CMD[@]}" \
    upload --no-compress --to "$SINK/" "$FILE")

  echo "## 1. $SIZE_MIB MiB over a $RATE link, killed -9 $KILLS times (every $((SIZE / (KILLS + 1) / 1048576)) MiB on the wire)"
  echo
  echo "| client | exit | wire bytes | ÷ file size | wall s |"
  echo "|---|---:|---:|---:|---:|"
  awk -v w="$tus_wire" -v s="$SIZE" -v t="$tus_secs" -v c="$tus_code" 'BEGIN { printf "| tus: queued, then courier sync (resumes) | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
  awk -v w="$mp_wire" -v s="$SIZE" -v t="$mp_secs" -v c="$mp_code" 'BEGIN { printf "| multipart: courier upload (restarts from 0) | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
  awk -v w="$tus0_wire" -v s="$SIZE" -v t="$tus0_secs" -v c="$tus0_code" 'BEGIN { printf "| tus, not interrupted | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
  awk -v w="$mp0_wire" -v s="$SIZE" -v t="$mp0_secs" -v c="$mp0_code" 'BEGIN { printf "| multipart, not interrupted | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
  if [ -n "$BEFORE" ]; then
    awk -v w="$btus_wire" -v s="$SIZE" -v t="$btus_secs" -v c="$btus_code" 'BEGIN { printf "| before: tus, queued, then courier sync (resumes) | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
    awk -v w="$btus0_wire" -v s="$SIZE" -v t="$btus0_secs" -v c="$btus0_code" 'BEGIN { printf "| before: tus, not interrupted | %d | %d | %.3f | %.1f |\n", c, w, w / s, t }'
  fi
  echo
  echo "tus ÷ multipart, wire bytes: $(awk -v a="$tus_wire" -v b="$mp_wire" 'BEGIN { printf "%.3f", a / b }')"
  if echo "$stored" | grep -q '"state":"completed"'; then
    echo "stored by the backend: completed, $(echo "$stored" | grep -o '"bytes_received":[0-9]*' | head -1) (file SHA-256 $SHA)"
  else
    echo "upload-resume: the tus upload did not complete: $stored" >&2
  fi
  echo
fi

# ---------------------------------------------------------------------------------------------
if [ "${SKIP_LOOPBACK:-0}" != 1 ]; then
  LPORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  TPORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  (cd "$ROOT/Backend" && COURIER_BACKEND_EXIT_WITH_PARENT=1 exec "$PY" -m courier_backend.sink --port "$LPORT") >"$WORK/lsink.log" 2>&1 &
  PIDS+=($!)
  (cd "$ROOT/Backend" && COURIER_BACKEND_EXIT_WITH_PARENT=1 exec "$PY" -m courier_backend.tus_sink --port "$TPORT") >"$WORK/tsink.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$LPORT/"
  wait_http "http://127.0.0.1:$TPORT/"
  # Before each measured command: dirty pages written back and the blocks of any delivered
  # queued upload freed (a detached process does it, decision 1303), so no row pays for the
  # one before it.
  settle() {
    sync
    for _ in $(seq 1 600); do
      compgen -G "$WORK/*/queued-uploads/*.sent" >/dev/null || break
      sleep 0.05
    done
  }
  measure() { # COMMAND... → "seconds kib exit cpu_seconds"
    local code=0
    settle
    /usr/bin/time -v "$@" >"$WORK/stdout.txt" 2>"$WORK/time.txt" || code=$?
    local wall kib user sys
    wall="$(grep 'Elapsed (wall clock)' "$WORK/time.txt" | awk '{print $NF}')"
    kib="$(grep 'Maximum resident set size' "$WORK/time.txt" | awk '{print $NF}')"
    user="$(grep 'User time (seconds)' "$WORK/time.txt" | awk '{print $NF}')"
    sys="$(grep 'System time (seconds)' "$WORK/time.txt" | awk '{print $NF}')"
    echo "$(echo "$wall" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }') $kib $code $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
  }
  echo "## 2. Uninterrupted on loopback (discard sinks)"
  echo
  echo "CPU s: user + system time of the client alone, which the other processes on a shared"
  echo "machine do not change as much as the wall time."
  echo
  echo "| file | client | exit | seconds | MiB/s | peak RSS MiB | CPU s | time ÷ multipart | CPU ÷ multipart | RSS ÷ multipart |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for mib in $LOOPBACK_SIZES; do
    LFILE="$WORK/loop-$mib.bin"
    head -c "$((mib * 1024 * 1024))" /dev/urandom >"$LFILE"
    cat "$LFILE" >/dev/null
    for round in $(seq 1 "$ROUNDS"); do
    rows=()
    read -r s k x c < <(measure curl -sS -F "title=bench" -F "file=@$LFILE" "http://127.0.0.1:$LPORT/")
    rows+=("curl -F|$s|$k|$x|$c")
    read -r ms mk mx mc < <(measure env HOME="$WORK" "$COURIER" --base-url "http://127.0.0.1:$LPORT" \
      --data-dir "$WORK/lm-$mib" --timeout 600 upload --no-compress --to "http://127.0.0.1:$LPORT/" "$LFILE")
    rows+=("courier upload (multipart)|$ms|$mk|$mx|$mc")
    read -r s k x c < <(measure env HOME="$WORK" "$COURIER" --base-url "http://127.0.0.1:$TPORT" \
      --data-dir "$WORK/lt-$mib" --timeout 600 upload --resumable --no-compress \
      --to "http://127.0.0.1:$TPORT/files/" "$LFILE")
    rows+=("courier upload --resumable (tus)|$s|$k|$x|$c")
    # Changed a moment before: its times cannot vouch for it, so it is hashed (decision 1303).
    # The touch runs inside the measured command (a shell, a few milliseconds more).
    read -r s k x c < <(measure env HOME="$WORK" sh -c 'touch "$1" && shift && exec "$@"' sh \
      "$LFILE" "$COURIER" --base-url "http://127.0.0.1:$TPORT" --data-dir "$WORK/lh-$mib" \
      --timeout 600 upload --resumable --no-compress --to "http://127.0.0.1:$TPORT/files/" \
      "$LFILE")
    rows+=("courier upload --resumable, file touched just before (hashed)|$s|$k|$x|$c")
    read -r s k x c < <(measure env HOME="$WORK" "$COURIER" --base-url "http://127.0.0.1:$TPORT" \
      --data-dir "$WORK/lq-$mib" upload --queue --resumable --no-compress \
      --to "http://127.0.0.1:$TPORT/files/" "$LFILE")
    rows+=("courier upload --queue (keeps a copy)|$s|$k|$x|$c")
    read -r s k x c < <(measure env HOME="$WORK" "$COURIER" --base-url "http://127.0.0.1:$TPORT" \
      --data-dir "$WORK/lq-$mib" --timeout 600 sync)
    rows+=("courier sync of it (tus)|$s|$k|$x|$c")
    if [ -n "$BEFORE" ]; then
      read -r s k x c < <(measure env HOME="$WORK" "$BEFORE" --base-url "http://127.0.0.1:$TPORT" \
        --data-dir "$WORK/bt-$mib" --timeout 600 upload --resumable --no-compress \
        --to "http://127.0.0.1:$TPORT/files/" "$LFILE")
      rows+=("before: courier upload --resumable (tus)|$s|$k|$x|$c")
      read -r s k x c < <(measure env HOME="$WORK" "$BEFORE" --base-url "http://127.0.0.1:$TPORT" \
        --data-dir "$WORK/bq-$mib" upload --queue --resumable --no-compress \
        --to "http://127.0.0.1:$TPORT/files/" "$LFILE")
      rows+=("before: courier upload --queue (keeps a copy)|$s|$k|$x|$c")
      read -r s k x c < <(measure env HOME="$WORK" "$BEFORE" --base-url "http://127.0.0.1:$TPORT" \
        --data-dir "$WORK/bq-$mib" --timeout 600 sync)
      rows+=("before: courier sync of it (tus)|$s|$k|$x|$c")
    fi
    for row in "${rows[@]}"; do
      IFS='|' read -r name s k x c <<<"$row"
      awk -v mib="$mib" -v name="$name" -v s="$s" -v k="$k" -v x="$x" -v c="$c" -v ms="$ms" \
        -v mk="$mk" -v mc="$mc" -v r="$round" 'BEGIN {
        printf "| %d MiB | %s (round %d) | %d | %.2f | %.0f | %.1f | %.2f | %.2f | %.2f | %.2f |\n",
          mib, name, r, x, s, (s > 0 ? mib / s : 0), k / 1024, c, (ms > 0 ? s / ms : 0),
          (mc > 0 ? c / mc : 0), k / mk }'
    done
    rm -rf "$WORK/lm-$mib" "$WORK/lt-$mib" "$WORK/lh-$mib" "$WORK/lq-$mib" "$WORK/bt-$mib" \
      "$WORK/bq-$mib"
    done
    rm -f "$LFILE"
  done
fi
