#!/usr/bin/env bash
# Issue 27's upload benchmark (decision 2704): a queued upload of SIZE_MIB (default 48) MiB over
# a RATE (default 40mbit) `tc tbf` veth, `courier sync` killed with -9 KILLS (default 3) times at
# random moments, then run to the end, against three servers in the same run:
#   (a) tus: the third-party `resumable-upload` 0.3.0 server from PyPI (a virtualenv this
#       script makes; it reads each PATCH whole before storing any of it, so a PATCH cut short
#       is lost entirely);
#   (b) tus: the reference backend's /uploads (Courier sends sha256 checksums, which it offers:
#       a PATCH cut short is discarded whole too);
#   (c) the IETF draft: the reference backend's second port (the form to /photos, made
#       resumable by its 104; the server keeps what a cut or taken-over request carried).
# Each row: the stored file's SHA-256 against the original's, and the bytes that crossed the
# link into the server's namespace for that server's port (iptables, IP and TCP headers
# included) divided by the file's size. The kill moments are random points in the transfer
# (uniform in wire bytes over the file's size, sorted; the same points for every server of the
# run), drawn from SEED (printed; set it to repeat a run; the same seed does not repeat where in
# a piece a kill lands, which decides what it costs: compare rules over several seeds). The last
# column is what the reference backend received of the case's requests and did not keep (its
# upload trace, COURIER_BACKEND_UPLOAD_TRACE; "–" for the third-party server).
#
#   Benchmarks/upload-resume/peers.sh [SIZE_MIB [KILLS]]
#
# Environment: RATE, SEED, SERVERS (default abc: which of the three to measure), KEEP=1 to keep
# the work folder (servers' logs and data, trace.jsonl, events: the bytes counted at each start
# and kill, caseN-runK.log: each run's output, caseN-killK.ss: the killed client's sockets),
# VERBOSE=1 (courier --verbose in the runs' logs, each line timed), COURIER=path to the courier
# binary (default: the debug build of this checkout, `swift build --show-bin-path`; the link is
# the bottleneck at 40 Mbit/s), BASELINE=path to another courier binary measured in the same run
# on the same kill points ("before" rows).
# Needs root (network namespaces, tc, iptables) and python3 with venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SIZE_MIB="${1:-48}"
KILLS="${2:-3}"
RATE="${RATE:-40mbit}"
SEED="${SEED:-$RANDOM}"
SIZE=$((SIZE_MIB * 1024 * 1024))
PY="$ROOT/Backend/.venv/bin/python"
[ -x "$PY" ] || bash "$ROOT/Backend/run.sh" --setup-only >/dev/null
[ "$(id -u)" = 0 ] || { echo "peers: needs root" >&2; exit 1; }
COURIER="${COURIER:-$(cd "$ROOT" && swift build --show-bin-path)/courier}"
. "$ROOT/Benchmarks/lib/link.sh"
[ -x "$COURIER" ] || { echo "peers: no courier at $COURIER" >&2; exit 1; }
BEFORE="${BASELINE:-}"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "peers: BASELINE=$BEFORE is not executable" >&2; exit 1; }

# The third-party server, in a virtualenv of its own (kept between runs).
PEER_VENV="${PEER_VENV:-$ROOT/Benchmarks/upload-resume/.venv-resumable-upload}"
if [ ! -x "$PEER_VENV/bin/resumable-upload" ]; then
  python3 -m venv "$PEER_VENV"
  "$PEER_VENV/bin/pip" install -q "resumable-upload==0.3.0"
fi

WORK="$(mktemp -d /tmp/courier-peers.XXXXXX)"
SRV="cpr-$$-s"
CLI="cpr-$$-c"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  bench_unlink "$SRV" "$CLI"
  if [ "${KEEP:-0}" = 1 ]; then echo "peers: kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# A .jpg name: the form's target takes images only, and the name gives the part its type.
FILE="$WORK/payload.jpg"
head -c "$SIZE" /dev/urandom >"$FILE"
SHA="$(sha256sum "$FILE" | cut -d' ' -f1)"
# The kill points, in wire bytes since the first run of a server began.
mapfile -t POINTS < <(awk -v n="$KILLS" -v s="$SIZE" -v seed="$SEED" \
  'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%d\n", 1048576 + rand() * (s - 2097152) }' | sort -n)

bench_link "$SRV" "$CLI" 10.215.0 "$RATE"

BPORT=18181
IPORT=18182
RPORT=18183
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_EXIT_WITH_PARENT=1 \
  COURIER_BACKEND_UPLOAD_TRACE="$WORK/trace.jsonl" \
  COURIER_BACKEND_MAX_UPLOAD=$((SIZE + (1 << 20))) \
  ip netns exec "$SRV" bash "$ROOT/Backend/run.sh" --host 0.0.0.0 --port "$BPORT" \
  --ietf-port "$IPORT" >"$WORK/backend.log" 2>&1 &
PIDS+=($!)
mkdir -p "$WORK/peer"
(cd "$WORK/peer" && exec ip netns exec "$SRV" "$PEER_VENV/bin/resumable-upload" serve \
  --host 0.0.0.0 --port "$RPORT" --upload-dir "$WORK/peer/files" --db-path "$WORK/peer/db" \
  --log-level WARNING) >"$WORK/peer.log" 2>&1 &
PIDS+=($!)
wait_http() { bench_wait_http peers "$1" "$SRV"; }
wait_http "http://127.0.0.1:$BPORT/health"
wait_http "http://127.0.0.1:$IPORT/health"
wait_http "http://127.0.0.1:$RPORT/files"
bench_count "$SRV" "$BPORT" "$IPORT" "$RPORT"
counted() { bench_counted_in "$SRV" "$1"; }  # PORT → bytes counted into the server's namespace
# note PORT TEXT: a line in the work folder's events (time, bytes counted for PORT, TEXT), beside
# the backend's upload trace ($WORK/trace.jsonl), kept with KEEP=1.
note() { echo "$(date +%s.%N) $(counted "$1") ${LOGS##*/}: $2" >>"$WORK/events"; }
LOGS="$WORK/case"
stamped() { perl -MTime::HiRes=time -ne '$| = 1; printf "%.3f %s", time, $_'; }  # each line, timed

# run_killed PORT COMMAND...: runs COMMAND and kills it with -9 when the bytes counted for
# PORT since the start reach each kill point, then runs it to the end. Prints
# "wire_bytes seconds exit kills_that_landed".
run_killed() {
  local port="$1"
  shift
  local base start end landed=0 n=0
  base="$(counted "$port")"
  start="$(date +%s.%N)"
  for point in "${POINTS[@]}"; do
    n=$((n + 1))
    note "$port" "run $n starts"
    "$@" > >(stamped >"$LOGS-run$n.log") 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null && [ $(($(counted "$port") - base)) -lt "$point" ]; do
      sleep 0.01
    done
    if kill -9 "$pid" 2>/dev/null; then landed=$((landed + 1)); fi
    note "$port" "run $n killed (point $point)"
    # What the killed process left in the kernel: the client's sockets to the port, their
    # state and send queue (an orphan in FIN-WAIT still sends its queue; see the trace).
    ip netns exec "$CLI" ss -tni "dport = :$port" >"$LOGS-kill$n.ss" 2>&1 || true
    wait "$pid" 2>/dev/null || true
  done
  local code=0
  n=$((n + 1))
  note "$port" "run $n starts (to the end)"
  "$@" > >(stamped >"$LOGS-run$n.log") 2>&1 || code=$?
  note "$port" "run $n ended ($code)"
  cp "$LOGS-run$n.log" "$WORK/run.log"
  end="$(date +%s.%N)"
  echo "$(($(counted "$port") - base)) $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') $code $landed"
}

# stored_sha DIR MARKER: the SHA-256 of the newest file of SIZE bytes under DIR written after
# MARKER was made ("none" when there is none).
stored_sha() {
  local found
  found="$(find "$1" -type f -size "${SIZE}c" -newer "$2" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-)"
  if [ -n "$found" ]; then sha256sum "$found" | cut -d' ' -f1; else echo none; fi
}

ROWS=()
CASES=0
# case NAME BINARY PORT BASE_URL STORE_DIR LOGIN UPLOAD_ARGS...
measure_case() {
  local name="$1" binary="$2" port="$3" base="$4" store="$5" login="$6"
  shift 6
  local dir="$WORK/client-$RANDOM$RANDOM"
  CASES=$((CASES + 1))
  LOGS="$WORK/case$CASES"
  echo "$name" >"$LOGS.name"
  mkdir -p "$dir"
  touch "$dir/marker"
  local cmd=(env HOME="$dir" XDG_CONFIG_HOME="$dir/cfg" COURIER_ALLOW_INSECURE_HTTP=1
    ip netns exec "$CLI" "$binary" --base-url "$base" --data-dir "$dir" --timeout 600)
  [ "${VERBOSE:-0}" != 1 ] || cmd+=(--verbose)
  if [ "$login" = 1 ]; then "${cmd[@]}" login --username alice --password secret >/dev/null 2>&1; fi
  "${cmd[@]}" upload --queue --no-compress --json "$@" "$FILE" >"$WORK/queued.json" 2>&1 || {
    echo "peers: $name: queueing failed" >&2; cat "$WORK/queued.json" >&2; return 1; }
  local wire secs code landed traced
  traced=0
  [ ! -f "$WORK/trace.jsonl" ] || traced="$(wc -l <"$WORK/trace.jsonl")"
  read -r wire secs code landed < <(run_killed "$port" "${cmd[@]}" sync)
  # What the reference backend received of this case's upload requests and did not keep (its
  # trace; the third-party server has none): a piece cut or taken over, or a cut checksummed one.
  local dropped="–"
  if [ "$store" = "$WORK/backend" ]; then
    dropped="$(tail -n +"$((traced + 1))" "$WORK/trace.jsonl" 2>/dev/null |
      "$PY" -c 'import json, sys; print(sum(e["received"] - e["kept"] for e in map(json.loads, sys.stdin)))')"
  fi
  local stored
  stored="$(stored_sha "$store" "$dir/marker")"
  ROWS+=("$name|$code|$landed|$wire|$secs|$([ "$stored" = "$SHA" ] && echo yes || echo "NO ($stored)")|$dropped")
  if [ "$code" != 0 ]; then echo "peers: $name: the last sync exited $code" >&2; cat "$WORK/run.log" >&2; fi
}

for which in after before; do
  if [ "$which" = after ]; then bin="$COURIER"; label=""; else
    [ -n "$BEFORE" ] || continue
    bin="$BEFORE"; label="before: "
  fi
  [[ "${SERVERS:-abc}" != *a* ]] || measure_case "${label}(a) resumable-upload 0.3.0 (tus, PyPI)" "$bin" "$RPORT" \
    "http://10.215.0.1:$BPORT" "$WORK/peer/files" 0 --resumable --to "http://10.215.0.1:$RPORT/files"
  [[ "${SERVERS:-abc}" != *b* ]] || measure_case "${label}(b) reference backend, tus" "$bin" "$BPORT" \
    "http://10.215.0.1:$BPORT" "$WORK/backend" 1 --resumable
  [[ "${SERVERS:-abc}" != *c* ]] || measure_case "${label}(c) reference backend, IETF draft" "$bin" "$IPORT" \
    "http://10.215.0.1:$IPORT" "$WORK/backend" 1
done

echo "## $SIZE_MIB MiB queued, over a $RATE tbf link, courier sync killed -9 $KILLS times (seed $SEED)"
echo
echo "Kill points (wire bytes since the first sync): ${POINTS[*]}"
echo
echo "| server | exit | kills landed | wire bytes | ÷ file size | wall s | stored SHA-256 = original | received, not kept |"
echo "|---|---:|---:|---:|---:|---:|---|---:|"
for row in "${ROWS[@]}"; do
  IFS='|' read -r name code landed wire secs same dropped <<<"$row"
  awk -v n="$name" -v c="$code" -v l="$landed" -v w="$wire" -v s="$SIZE" -v t="$secs" -v ok="$same" -v d="$dropped" \
    'BEGIN { printf "| %s | %d | %d | %d | %.3f | %.1f | %s | %s |\n", n, c, l, w, w / s, t, ok, d }'
done
