#!/usr/bin/env bash
# The command-line benchmark of issue 14 (Docs/benchmarks/cli.md): each `courier` command
# against its peer, in one run, each number the minimum of RUNS fresh processes (peak RSS: the
# maximum), then a table of ratios with their goals and PASS/MISS.
#
#   Benchmarks/cli/run.sh
#
# Environment (defaults in brackets):
#   RUNS [20]            runs of each start-up, write and list row
#   N [10000]            articles cached for `articles list --offline`
#   UPLOAD_MIB ["1 1024"] upload sizes, in MiB (the first and the last make the "flat" row)
#   UPLOAD_RUNS [3]      runs of each upload
#   IMAGE_RUNS [9]       runs of each 24 MP JPEG → 2048 px, in IMAGE_ROUNDS [3] interleaved
#                        rounds
#   SKIP_BUILD=1         reuse the binaries of the last run (in .build/cli-bench)
#   DYNAMIC=0            neither build nor measure the dynamic-runtime courier (a second full
#                        release build, for the reference table only)
#   BASELINE=FILE        another courier binary (e.g. one built at an earlier commit with
#                        scripts/release-build) measured beside this one on every row: the
#                        "before" column of the same run
#   ROWS ["startup list add upload image"]  the groups of rows to run, e.g. ROWS=add for the
#                        offline write alone (the backend still starts: the client logs in)
#
# It builds `courier` in release twice, with the Swift runtime linked statically (as
# scripts/install does: the binary measured) and dynamically (the build before issue 14, for
# reference; in .build/dynamic-stdlib), builds its peers (measure.c, fsync-peer.c,
# fsync-peer.swift with -static-stdlib, hello.swift with -static-stdlib and without), starts the
# reference backend and the discard sink on free loopback ports, and stops them at the end.
# Every binary measured is evicted from the page cache first and run once unmeasured
# (MEASURE_WARMUP=1), so that each is measured with its pages read in the same way. The offline write runs in a network namespace it creates (only a
# loopback, down) and deletes; without root it says so and uses a closed port instead.
set -euo pipefail
RUNS="${RUNS:-20}"
N="${N:-10000}"
read -r -a UPLOAD_SIZES <<<"${UPLOAD_MIB:-1 1024}"
UPLOAD_RUNS="${UPLOAD_RUNS:-3}"
IMAGE_RUNS="${IMAGE_RUNS:-9}"
IMAGE_ROUNDS="${IMAGE_ROUNDS:-3}"
ROWS="${ROWS:-startup list add upload image}"
want() { [[ " $ROWS " == *" $1 "* ]]; }
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"
OUT="$ROOT/.build/cli-bench"
mkdir -p "$OUT"
PY="$ROOT/Backend/.venv/bin/python"
[ -x "$PY" ] || bash "$ROOT/Backend/run.sh" --setup-only >/dev/null
CONVERT=/usr/bin/convert # the real ImageMagick, not a stand-in earlier on PATH
for tool in gcc curl vipsthumbnail vips "$CONVERT" ip; do
  command -v "$tool" >/dev/null || { echo "cli bench: $tool missing (run scripts/setup)" >&2; exit 1; }
done

DYNAMIC="${DYNAMIC:-1}"
if [ "${SKIP_BUILD:-0}" != 1 ] && [ "$DYNAMIC" = 1 ]; then
  echo "cli bench: building courier (release, dynamic Swift runtime)..." >&2
  # A scratch folder of its own: switching .build between the two recompiles every module.
  swift build -c release --scratch-path .build/dynamic-stdlib --product courier >&2
  cp "$(swift build -c release --scratch-path .build/dynamic-stdlib --show-bin-path)/courier" \
    "$OUT/courier-dynamic"
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "cli bench: building courier as scripts/install does (scripts/release-build)..." >&2
  release_bin="$(scripts/release-build courier)" # its own statement: a failure stops here
  cp "$release_bin/courier" "$OUT/courier-static"
  echo "cli bench: building the peers..." >&2
  gcc -O2 -o "$OUT/measure" Benchmarks/cli/measure.c
  gcc -O2 -o "$OUT/peakmem" Benchmarks/memory/peakmem.c
  gcc -O2 -o "$OUT/fsync-peer" Benchmarks/cli/fsync-peer.c
  swiftc -O -static-stdlib Benchmarks/cli/fsync-peer.swift -o "$OUT/fsync-peer-swift" 2>/dev/null
  swiftc -O -static-stdlib Benchmarks/cli/hello.swift -o "$OUT/hello-static" 2>/dev/null
  swiftc -O Benchmarks/cli/hello.swift -o "$OUT/hello-dynamic"
fi
COURIER="$OUT/courier-static"
MEASURE="$OUT/measure"
BEFORE="${BASELINE:-}"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "cli bench: BASELINE=$BEFORE is not executable" >&2; exit 1; }
# Out of the page cache, then read back by a warm-up run in each measure.
DYNAMIC_BIN=()
if [ "$DYNAMIC" = 1 ]; then DYNAMIC_BIN=("$OUT/courier-dynamic"); fi
"$PY" - "$COURIER" ${DYNAMIC_BIN[@]+"${DYNAMIC_BIN[@]}"} "$OUT/hello-static" "$OUT/hello-dynamic" \
  "$OUT/fsync-peer" "$OUT/fsync-peer-swift" ${BEFORE:+"$BEFORE"} <<'PYEOF'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PYEOF
export MEASURE_WARMUP=1
if ldd "$COURIER" | grep -q libswiftCore; then
  echo "cli bench: $COURIER is not linked statically" >&2
  exit 1
fi

WORK="$(mktemp -d /tmp/courier-cli-bench.XXXXXX)"
NETNS="courier-cli-bench-$$"
BACKEND=""
SINK=""
cleanup() {
  for pid in $BACKEND $SINK; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  ip netns delete "$NETNS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() {
  for _ in $(seq 300); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "cli bench: nothing answers at $1" >&2
  exit 1
}

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
# measure NAME RUNS COMMAND...: appends "NAME wall cpu rss_kib" to the results. The runner
# itself starts inside WRAP (e.g. `ip netns exec NS`), so what WRAP costs is not measured.
WRAP=()
measure() {
  local name="$1" runs="$2"
  shift 2
  local line
  line="$("${WRAP[@]}" "$MEASURE" "$runs" "$@")"
  printf '%s\t%s\n' "$name" "${line// /$'\t'}" >>"$RESULTS"
  echo "cli bench: $name: $line" >&2
}

# private NAME RUNS COMMAND...: appends "mem:NAME private_kib anonymous_kib rss_kib", the largest of
# RUNS runs of Benchmarks/memory/peakmem: what the process's peak cost the machine (its private,
# dirty pages, sampled from /proc/PID/smaps_rollup every millisecond) beside its peak resident
# set, which also counts clean file pages (code) that the page cache holds anyway. Measured in
# runs of their own, since the sampling costs the parent CPU the timed rows must not see.
private() {
  local name="$1" runs="$2" line rss private anonymous best=0 best_anon=0 best_rss=0
  shift 2
  for _ in $(seq "$runs"); do
    line="$("${WRAP[@]}" "$OUT/peakmem" "$@" 2>/dev/null)"
    read -r rss private anonymous _ <<<"$line"
    ((private > best)) && best=$private
    ((anonymous > best_anon)) && best_anon=$anonymous
    ((rss > best_rss)) && best_rss=$rss
  done
  printf 'mem:%s\t%s\t%s\t%s\n' "$name" "$best" "$best_anon" "$best_rss" >>"$RESULTS"
  echo "cli bench: $name: private $best KiB, anonymous $best_anon KiB, peak RSS $best_rss KiB" >&2
}

# 1. Start-up: --version and status, static and dynamic, against the Swift hellos.
# HOME for the config file's place, set for the runner rather than through `env`, whose own
# start (0.7 ms here) is not courier's.
export HOME="$WORK"
if want startup; then
echo "cli bench: start-up..." >&2
measure hello-static "$RUNS" "$OUT/hello-static"
measure hello-dynamic "$RUNS" "$OUT/hello-dynamic"
# curl's own start (issue 22: courier's start-up stays below it).
measure curl-version "$RUNS" curl --version
measure version-static "$RUNS" "$COURIER" --version
if [ "$DYNAMIC" = 1 ]; then measure version-dynamic "$RUNS" "$OUT/courier-dynamic" --version; fi
measure status-static "$RUNS" "$COURIER" --data-dir "$WORK/status" status
if [ "$DYNAMIC" = 1 ]; then
  measure status-dynamic "$RUNS" "$OUT/courier-dynamic" --data-dir "$WORK/status" status
fi
if [ -n "$BEFORE" ]; then
  measure version-base "$RUNS" "$BEFORE" --version
  measure status-base "$RUNS" "$BEFORE" --data-dir "$WORK/status" status
fi
fi

# 2. The backend, a logged-in client with N cached articles, and curl's list for comparison.
PORT="$(free_port)"
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_LOG_LEVEL=warning \
  Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
BASE_URL="http://127.0.0.1:$PORT"
wait_http "$BASE_URL/health"
C=("$COURIER" --base-url "$BASE_URL")
echo secret | "${C[@]}" --data-dir "$WORK/list" login --username alice --password-stdin >/dev/null
echo secret | "${C[@]}" --data-dir "$WORK/offline" login --username alice --password-stdin >/dev/null
echo secret | "${C[@]}" --data-dir "$WORK/offline-base" login --username alice --password-stdin \
  >/dev/null
if want list; then
echo "cli bench: seeding $N articles..." >&2
"$PY" Benchmarks/sync/peer.py 127.0.0.1 "$PORT" creates "$N" 1 >/dev/null
"${C[@]}" --data-dir "$WORK/list" articles list >/dev/null # fetches and caches them
"${C[@]}" --data-dir "$WORK/list" articles list --offline --json >"$WORK/offline.json"
got="$("$PY" -c 'import json,sys; print(len(json.loads(open(sys.argv[1]).readline())["articles"]))' "$WORK/offline.json")"
[ "$got" -ge "$N" ] || { echo "cli bench: the cache holds $got articles, not $N" >&2; exit 1; }
TOKEN="$(curl -s -X POST -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' "$BASE_URL/auth/token" |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
curl -sf -H "Authorization: Bearer $TOKEN" "$BASE_URL/articles" >/dev/null # warm
echo "cli bench: list ($got cached)..." >&2
measure list-offline "$RUNS" "${C[@]}" --data-dir "$WORK/list" articles list --offline
measure curl-list "$RUNS" curl -sf -H "Authorization: Bearer $TOKEN" "$BASE_URL/articles"
if [ -n "$BEFORE" ]; then
  # Its own cache, written by itself: an older build may not read a newer store's schema.
  echo secret | "$BEFORE" --base-url "$BASE_URL" --data-dir "$WORK/list-base" login \
    --username alice --password-stdin >/dev/null
  "$BEFORE" --base-url "$BASE_URL" --data-dir "$WORK/list-base" articles list >/dev/null
  measure list-offline-base "$RUNS" "$BEFORE" --base-url "$BASE_URL" --data-dir "$WORK/list-base" \
    articles list --offline
fi
fi

# 3. A write with no usable path, against start-up + one fdatasync.
if want add; then
echo "cli bench: offline write..." >&2
if [ "$(id -u)" = 0 ] && ip netns add "$NETNS" 2>/dev/null; then
  OFFLINE_HOW="network namespace, only lo, down"
  IN_NS=(ip netns exec "$NETNS")
else
  OFFLINE_HOW="base URL on a closed loopback port (no root for a namespace)"
  IN_NS=()
  BASE_URL="http://127.0.0.1:$(free_port)"
  C=("$COURIER" --base-url "$BASE_URL")
fi
WRAP=("${IN_NS[@]}")
# In ADD_ROUNDS rounds (default 5) of RUNS / ADD_ROUNDS runs each, the four interleaved: this
# row is a few milliseconds and most of it one fdatasync, whose latency drifts on this machine
# (virtual disk) by more than the margin the goal leaves; each side is the minimum of all its
# RUNS runs as before, but taken over the same span of time.
ADD_ROUNDS=${ADD_ROUNDS:-5}
per_round=$(((RUNS + ADD_ROUNDS - 1) / ADD_ROUNDS))
for _ in $(seq "$ADD_ROUNDS"); do
  measure add-offline "$per_round" "${C[@]}" --data-dir "$WORK/offline" articles add --title "offline"
  measure fsync-peer "$per_round" "$OUT/fsync-peer" "$WORK/offline/peer.log"
  measure fsync-peer-swift "$per_round" "$OUT/fsync-peer-swift" "$WORK/offline/peer-swift.log"
  if [ -n "$BEFORE" ]; then
    measure add-offline-base "$per_round" "$BEFORE" --base-url "$BASE_URL" \
      --data-dir "$WORK/offline-base" articles add --title "offline"
  fi
done
# How many times an add syncs a file, over TRACED more adds (strace, when installed): the
# commit's one sync (decision 1411: no sync of the folder for a kept log), and apart from it the
# adds that also fold the kept log into the database file once it passes 100 pages (decision
# 1403, about one add in 25): those are the ones that sync the database file itself. Each add's
# entry is "SYNCS:FOLDED". 30 adds, so that the run sees at least one fold.
TRACED=30
SYNCS=""
traced=0
if command -v strace >/dev/null; then
  for i in $(seq "$TRACED"); do
    "${IN_NS[@]}" strace -f -qq -y -e trace=fsync,fdatasync -o "$WORK/add-$i.strace" \
      "${C[@]}" --data-dir "$WORK/offline" articles add --title "offline" >/dev/null
  done
  SYNCS="$(for i in $(seq "$TRACED"); do
    printf '%s:%s ' "$(grep -cE 'f(data)?sync\(' "$WORK/add-$i.strace" || true)" \
      "$(grep -cE 'f(data)?sync\([0-9]+<[^>]*\.sqlite>\)' "$WORK/add-$i.strace" || true)"
  done)"
  traced=$TRACED
fi
WRAP=()
# Every offline add was saved and queued, none sent (each round's warm-up run and the traced ones too).
expected=$((ADD_ROUNDS * (per_round + 1) + traced))
pending="$("$COURIER" --data-dir "$WORK/offline" --json outbox |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pending"])')"
[ "$pending" = "$expected" ] || { echo "cli bench: $pending writes queued, not $expected" >&2; exit 1; }
printf 'syncs\t%s\t0\t0\n' "$(echo "${SYNCS:-0}" | tr ' ' ',' | sed 's/,$//')" >>"$RESULTS"
fi
kill "$BACKEND" && wait "$BACKEND" 2>/dev/null || true
BACKEND=""

# 4. Uploads to the discard sink: courier --no-compress against curl -F.
if want upload || want image; then
SPORT="$(free_port)"
(cd Backend && exec "$PY" -m courier_backend.sink --port "$SPORT") >"$WORK/sink.log" 2>&1 &
SINK=$!
SINK_URL="http://127.0.0.1:$SPORT/"
wait_http "$SINK_URL"
fi
if want upload; then
for size in "${UPLOAD_SIZES[@]}"; do
  echo "cli bench: upload $size MiB..." >&2
  head -c "$((size * 1024 * 1024))" /dev/urandom >"$WORK/payload.bin"
  cat "$WORK/payload.bin" >/dev/null
  measure "upload-curl-$size" "$UPLOAD_RUNS" curl -sS -F title=bench -F "file=@$WORK/payload.bin" "$SINK_URL"
  measure "upload-courier-$size" "$UPLOAD_RUNS" "$COURIER" --base-url "http://127.0.0.1:$SPORT" \
    --data-dir "$WORK/upload" --timeout 600 upload "$WORK/payload.bin" --no-compress --to "$SINK_URL"
  if [ -n "$BEFORE" ]; then
    measure "upload-base-$size" "$UPLOAD_RUNS" "$BEFORE" --base-url "http://127.0.0.1:$SPORT" \
      --data-dir "$WORK/upload" --timeout 600 upload "$WORK/payload.bin" --no-compress \
      --to "$SINK_URL"
  fi
  private "upload-curl-$size" "$UPLOAD_RUNS" curl -sS -F title=bench -F "file=@$WORK/payload.bin" \
    "$SINK_URL"
  private "upload-courier-$size" "$UPLOAD_RUNS" "$COURIER" --base-url "http://127.0.0.1:$SPORT" \
    --data-dir "$WORK/upload" --timeout 600 upload "$WORK/payload.bin" --no-compress --to "$SINK_URL"
  rm -f "$WORK/payload.bin"
done
fi

# 5. A 24 MP JPEG to a 2048 px long edge: courier's compression path (upload to the sink,
#    which compresses first) against vipsthumbnail, as Benchmarks/compression makes it.
if want image; then
echo "cli bench: 24 MP JPEG..." >&2
"$CONVERT" -seed 11 -size 1500x1000 plasma:fractal -depth 8 "$WORK/p.png"
vips resize "$WORK/p.png" "$WORK/up.v" 4 --kernel lanczos3
vips gaussnoise "$WORK/n.v" 6000 4000 --sigma 10 --mean 0
vips add "$WORK/up.v" "$WORK/n.v" "$WORK/s.v"
vips cast "$WORK/s.v" "$WORK/c.v" uchar
vips jpegsave "$WORK/c.v" "$WORK/photo.jpg" --Q 92
rm -f "$WORK"/*.v "$WORK/p.png"
# In IMAGE_ROUNDS rounds of IMAGE_RUNS / IMAGE_ROUNDS runs a side, interleaved, as the add row
# is: the row's CPU goal leaves 5 %, and one side's block of three runs moved by more than that
# against the other's (1.07× in one block, 0.97–1.02× in blocks of ten, the same binaries).
per_image_round=$(((IMAGE_RUNS + IMAGE_ROUNDS - 1) / IMAGE_ROUNDS))
for _ in $(seq "$IMAGE_ROUNDS"); do
  measure image-vipsthumbnail "$per_image_round" vipsthumbnail "$WORK/photo.jpg" -s 2048 \
    -o "$WORK/thumb.jpg[Q=70,strip,optimize_coding]"
  measure image-courier "$per_image_round" "$COURIER" --base-url "http://127.0.0.1:$SPORT" \
    --data-dir "$WORK/upload" upload "$WORK/photo.jpg" --to "$SINK_URL"
  if [ -n "$BEFORE" ]; then
    measure image-base "$per_image_round" "$BEFORE" --base-url "http://127.0.0.1:$SPORT" \
      --data-dir "$WORK/upload" upload "$WORK/photo.jpg" --to "$SINK_URL"
  fi
done
private image-vipsthumbnail "$per_image_round" vipsthumbnail "$WORK/photo.jpg" -s 2048 \
  -o "$WORK/thumb.jpg[Q=70,strip,optimize_coding]"
private image-courier "$per_image_round" "$COURIER" --base-url "http://127.0.0.1:$SPORT" \
  --data-dir "$WORK/upload" upload "$WORK/photo.jpg" --to "$SINK_URL"
if [ -n "$BEFORE" ]; then
  private image-base "$per_image_round" "$BEFORE" --base-url "http://127.0.0.1:$SPORT" \
    --data-dir "$WORK/upload" upload "$WORK/photo.jpg" --to "$SINK_URL"
fi
# The same work counted in instructions (callgrind, one run a side; IMAGE_CALLGRIND=0 skips it):
# a count does not move with the machine, where the CPU time's minimum moved by ±5 % from run to
# run. valgrind cannot read lld's debug information: a copy without it, same code.
if [ "${IMAGE_CALLGRIND:-1}" = 1 ] && command -v valgrind >/dev/null; then
  echo "cli bench: 24 MP JPEG under callgrind..." >&2
  instructions() {
    local name="$1" count
    shift
    count="$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
      sed -n 's/.*I *refs: *//p' | tr -d ,)"
    [ -n "$count" ] || { echo "cli bench: callgrind of $name gave no count" >&2; exit 1; }
    printf 'instr:%s\t%s\t0\t0\n' "$name" "$count" >>"$RESULTS"
    echo "cli bench: $name: $count instructions" >&2
  }
  objcopy --strip-debug "$COURIER" "$WORK/courier-nodebug"
  instructions image-vipsthumbnail vipsthumbnail "$WORK/photo.jpg" -s 2048 \
    -o "$WORK/thumb.jpg[Q=70,strip,optimize_coding]"
  instructions image-courier "$WORK/courier-nodebug" --base-url "http://127.0.0.1:$SPORT" \
    --data-dir "$WORK/upload" upload "$WORK/photo.jpg" --to "$SINK_URL"
fi
fi

# The table.
echo
printf 'courier %s, %s, %d cores, load %s; RUNS=%s N=%s UPLOAD_MIB="%s" UPLOAD_RUNS=%s IMAGE_RUNS=%s\n' \
  "$("$COURIER" --version | cut -d' ' -f2)" "$(uname -r)" "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$RUNS" "$N" "${UPLOAD_SIZES[*]}" "$UPLOAD_RUNS" "$IMAGE_RUNS"
printf 'offline write: %s\n\n' "${OFFLINE_HOW:-not measured (ROWS)}"
"$PY" - "$RESULTS" "${UPLOAD_SIZES[0]}" "${UPLOAD_SIZES[${#UPLOAD_SIZES[@]}-1]}" "$BEFORE" <<'PYEOF'
import sys

rows = {}
rounds = {}
rounds_cpu = {}
counts = []
for line in open(sys.argv[1]):
    name, wall, cpu, rss = line.rstrip("\n").split("\t")
    if name.startswith("instr:"):
        rows[name] = (float(wall), 0.0, 0.0)
        continue
    if name.startswith("mem:"):
        # private, anonymous and resident KiB, as MiB
        rows[name] = (int(wall) / 1024, int(cpu) / 1024, int(rss) / 1024)
        continue
    if name == "syncs":
        counts = [tuple(int(x) for x in n.split(":")) for n in wall.split(",") if ":" in n]
        continue
    value = (float(wall), float(cpu), int(rss) / 1024)
    rounds.setdefault(name, []).append(value[0])
    rounds_cpu.setdefault(name, []).append(value[1])
    # Measured in several rounds (the offline add): the minimum of all of them, the most RSS.
    if name in rows:
        old = rows[name]
        value = (min(old[0], value[0]), min(old[1], value[1]), max(old[2], value[2]))
    rows[name] = value
small, large, baseline = sys.argv[2], sys.argv[3], sys.argv[4]
table = []


def row(what, courier, peer, value, goal, ok, before=""):
    verdict = "" if ok is None else "PASS" if ok else "MISS"
    table.append((what, before, courier, peer, value, goal, verdict))


def ms(name):
    return f"{rows[name][0] * 1000:.1f} ms" if name in rows else ""


def mib(name):
    return f"{rows[name][2]:.1f} MiB" if name in rows else ""


def private_mib(name):
    return f"{rows['mem:' + name][0]:.1f} MiB" if "mem:" + name in rows else ""


for command, name, base in (("--version", "version-static", "version-base"),
                            ("status", "status-static", "status-base")):
    if name not in rows:
        continue
    ratio = rows[name][0] / rows["hello-static"][0]
    row(f"`courier {command}` wall", ms(name), ms("hello-static") + " (static hello)",
        f"{ratio:.2f}×", "≤ 2× (issue 22; 1.5× in 14)", ratio <= 2, ms(base))
    if "curl-version" in rows:
        ratio = rows[name][0] / rows["curl-version"][0]
        row(f"`courier {command}` wall", ms(name), ms("curl-version") + " (`curl --version`)",
            f"{ratio:.2f}×", "≤ 1×", ratio <= 1, ms(base))
    row(f"`courier {command}` peak RSS", mib(name), mib("hello-static") + " (static hello)",
        mib(name), "≤ 16 MiB", rows[name][2] <= 16, mib(base))
if "add-offline" in rows:
    ratio = rows["add-offline"][0] / rows["fsync-peer-swift"][0]
    row("`courier articles add`, no usable path", ms("add-offline"),
        ms("fsync-peer-swift") + " (Swift start + fdatasync)", f"{ratio:.2f}×", "≤ 2×",
        ratio <= 2, ms("add-offline-base"))
    pairs = sorted(c / p for c, p in zip(rounds["add-offline"], rounds["fsync-peer-swift"]))
    if len(pairs) > 1:
        middle = (pairs[(len(pairs) - 1) // 2] + pairs[len(pairs) // 2]) / 2
        text = f"median {middle:.2f}× ({pairs[0]:.2f}–{pairs[-1]:.2f}×)"
        row(f"  the same, each of {len(pairs)} interleaved rounds (its minimums)", "", "", text,
            "shown, no goal", None)
    ratio = rows["add-offline"][0] / rows["fsync-peer"][0]
    row("  the same against the C peer", ms("add-offline"),
        ms("fsync-peer") + " (C start + fdatasync)", f"{ratio:.2f}×", "≤ 2×", ratio <= 2,
        ms("add-offline-base"))
if counts:
    # An add that synced the database file folded the kept log (1403): maintenance, shown
    # apart; every other add's syncs are its commit's.
    plain = [n for n, folded in counts if not folded]
    folds = [n for n, folded in counts if folded]
    if plain:
        mean = sum(plain) / len(plain)
        row(f"  fsync/fdatasync calls per add, {len(plain)} of {len(counts)} adds (strace)",
            f"{mean:.1f} (most {max(plain)})", "1 (the peers)", f"{mean:.1f}", "1",
            max(plain) == 1)
    commit = max(plain) if plain else 1
    fold = (f"{len(folds)} of {len(counts)} adds, {min(folds)}–{max(folds)} syncs each "
            f"({min(folds) - commit}–{max(folds) - commit} the fold's)"
            if folds else f"none in {len(counts)} adds")
    row("  the adds that also folded the kept log (1403)", fold, "", fold,
        "shown, no goal (maintenance)", None)
if "list-offline" in rows:
    ratio = rows["list-offline"][0] / rows["curl-list"][0]
    row("`courier articles list --offline`, N cached", ms("list-offline"),
        ms("curl-list") + " (curl GET, warm)", f"{ratio:.2f}×", "≤ 0.5×", ratio <= 0.5,
        ms("list-offline-base"))
for size in sorted({small, large}, key=int):
    if f"upload-courier-{size}" not in rows:
        continue
    c, p, b = f"upload-courier-{size}", f"upload-curl-{size}", f"upload-base-{size}"
    speed = rows[p][0] / rows[c][0]
    mb = int(size)
    # The issue's throughput goal is for 1 GiB; a small upload is mostly both sides' start-up.
    goal = mb >= 1024
    row(f"upload {size} MiB --no-compress, throughput", f"{mb / rows[c][0]:.0f} MiB/s",
        f"{mb / rows[p][0]:.0f} MiB/s (curl -F)", f"{speed:.2f}×",
        "≥ 1.0×" if goal else "shown, no goal (start-up)", speed >= 1.0 if goal else None,
        f"{mb / rows[b][0]:.0f} MiB/s" if b in rows else "")
    row(f"upload {size} MiB --no-compress, peak RSS", mib(c), mib(p) + " (curl -F)", mib(c),
        "≤ 24 MiB", rows[c][2] <= 24, mib(b))
    if "mem:" + c in rows:
        row(f"upload {size} MiB --no-compress, peak private memory", private_mib(c),
            private_mib(p) + " (curl -F)", f"{rows['mem:' + c][0] / rows['mem:' + p][0]:.2f}×",
            "shown (what the machine pays, 2302)", None)
if small != large and f"upload-courier-{large}" in rows:
    growth = rows[f"upload-courier-{large}"][2] - rows[f"upload-courier-{small}"][2]
    row(f"upload peak RSS, {large} MiB − {small} MiB", mib(f"upload-courier-{large}"),
        mib(f"upload-courier-{small}"), f"{growth:+.1f} MiB", "flat (≤ +2 MiB)", growth <= 2)
    large_mem, small_mem = f"mem:upload-courier-{large}", f"mem:upload-courier-{small}"
    if large_mem in rows and small_mem in rows:
        growth = rows[large_mem][0] - rows[small_mem][0]
        row(f"upload private memory, {large} MiB − {small} MiB",
            private_mib(f"upload-courier-{large}"), private_mib(f"upload-courier-{small}"),
            f"{growth:+.1f} MiB", "flat (≤ +2 MiB)", growth <= 2)
if "image-courier" in rows:
    ratio = rows["image-courier"][2] / rows["image-vipsthumbnail"][2]
    # Peak RSS counts clean code pages the page cache holds anyway (decision 2302): shown; the
    # goal is on private memory, what the process costs the machine.
    row("24 MP JPEG → 2048 px, peak RSS", mib("image-courier"), mib("image-vipsthumbnail") +
        " (vipsthumbnail)", f"{ratio:.2f}×", "shown (2302)", None, mib("image-base"))
    if "mem:image-courier" in rows:
        ratio = rows["mem:image-courier"][0] / rows["mem:image-vipsthumbnail"][0]
        row("24 MP JPEG → 2048 px, peak private memory", private_mib("image-courier"),
            private_mib("image-vipsthumbnail") + " (vipsthumbnail)", f"{ratio:.2f}×",
            "≤ 1.05× (2302)", ratio <= 1.05, private_mib("image-base"))
    ratio = rows["image-courier"][1] / rows["image-vipsthumbnail"][1]
    base_cpu = f"{rows['image-base'][1]:.2f} s" if "image-base" in rows else ""
    row("24 MP JPEG → 2048 px, CPU", f"{rows['image-courier'][1]:.2f} s",
        f"{rows['image-vipsthumbnail'][1]:.2f} s (vipsthumbnail)", f"{ratio:.2f}×", "≤ 1.05×",
        ratio <= 1.05, base_cpu)
    pairs = sorted(c / p for c, p in zip(rounds_cpu["image-courier"],
                                         rounds_cpu["image-vipsthumbnail"]))
    if len(pairs) > 1:
        middle = (pairs[(len(pairs) - 1) // 2] + pairs[len(pairs) // 2]) / 2
        row(f"  the same, each of {len(pairs)} interleaved rounds (its minimums)", "", "",
            f"median {middle:.2f}× ({pairs[0]:.2f}–{pairs[-1]:.2f}×)", "shown, no goal", None)
    if "instr:image-courier" in rows:
        c, p = rows["instr:image-courier"][0], rows["instr:image-vipsthumbnail"][0]
        row("  the same work in instructions (callgrind, one run a side)", f"{c / 1e9:.3f} G",
            f"{p / 1e9:.3f} G (vipsthumbnail)", f"{c / p:.3f}×", "shown, no goal", None)

if baseline:
    print(f"before: BASELINE={baseline}, measured in this run")
    print()
    print("| row | before | courier | peer | ratio / value | goal | |")
    print("|---|---:|---:|---:|---:|---|---|")
    for r in table:
        print("| " + " | ".join(r) + " |")
else:
    print("| row | courier | peer | ratio / value | goal | |")
    print("|---|---:|---:|---:|---|---|")
    for r in table:
        print("| " + " | ".join(r[:1] + r[2:]) + " |")
print()
print("Static vs dynamic Swift runtime, and the peers (reference, same run):")
print()
print("| command | wall | CPU | peak RSS |")
print("|---|---:|---:|---:|")
for name in ("hello-static", "hello-dynamic", "curl-version", "version-static", "version-base",
             "version-dynamic", "status-static", "status-base", "status-dynamic", "fsync-peer",
             "fsync-peer-swift"):
    if name not in rows:
        continue
    wall, cpu, rss = rows[name]
    print(f"| {name} | {wall * 1000:.1f} ms | {cpu * 1000:.1f} ms | {rss:.1f} MiB |")
PYEOF
