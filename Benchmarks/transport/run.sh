#!/usr/bin/env bash
# Transport benchmark: a multipart upload of a file with each transport against `curl -F`, all
# to the same loopback discard sink, side by side in one run; then 1,000 small sequential
# requests on one connection against `curl` with a config file of 1,000 URLs.
#
#   Benchmarks/transport/run.sh [SIZES_MIB...]     # default: 1 100 1024
#   REPEAT=3 Benchmarks/transport/run.sh 1 100      # runs per cell (median reported)
#
# Prints a Markdown table (wall time, throughput, ratio to `curl -F`, peak RSS from
# /usr/bin/time -v). Needs: the Backend venv (Backend/setup.sh), curl, /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"

SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1 100 1024)
REPEAT="${REPEAT:-3}"
REQUESTS="${REQUESTS:-1000}"
WORK="$(mktemp -d /tmp/courier-transport-bench.XXXXXX)"
SINK_PID=""
cleanup() {
  [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

Backend/setup.sh >/dev/null 2>&1
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build \
  --product courier-transport-bench >/dev/null 2>&1
BENCH="$PWD/Benchmarks/.build/release/courier-transport-bench"

PORT="$(Backend/.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
(cd Backend && exec .venv/bin/python -m courier_backend.sink --port "$PORT" 2>/dev/null) &
SINK_PID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.05; done
URL="http://127.0.0.1:$PORT"
BOUNDARY="courier-bench-boundary-7d1f0a"

# One run under /usr/bin/time -v: prints "seconds max_rss_kib" (seconds as the tool reports the
# transfer itself; process start-up excluded for every tool, curl's own %{time_total} included).
measure() {
  local kind="$1"; shift
  local out="$WORK/out" tv="$WORK/time"
  /usr/bin/time -v -o "$tv" "$@" >"$out" 2>/dev/null
  local rss seconds
  rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tv")"
  case "$kind" in
    curl) seconds="$(tail -c 64 "$out" | grep -o 'time=[0-9.]*' | tail -1 | cut -d= -f2)" ;;
    *) seconds="$(grep -o '"seconds":[0-9.]*' "$out" | cut -d: -f2)" ;;
  esac
  echo "$seconds $rss"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# courier transport benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| size | tool | median s | MiB/s | × curl -F | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
for mib in "${SIZES[@]}"; do
  payload="$WORK/payload-$mib.bin"
  body="$WORK/body-$mib.multipart"
  head -c "$((mib * 1048576))" /dev/urandom >"$payload"
  # The whole multipart body on disk, as URLSession needs it (and curl-file uses it too).
  prep_start="$(date +%s.%N)"
  {
    printf -- '--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\nContent-Type: application/octet-stream\r\n\r\n' "$BOUNDARY" "$(basename "$payload")"
    cat "$payload"
    printf -- '\r\n--%s--\r\n' "$BOUNDARY"
  } >"$body"
  prep="$(echo "$(date +%s.%N) - $prep_start" | bc -l)"
  sync  # no writeback of the new files competing with the runs
  bytes="$(stat -c %s "$body")"
  declare -A secs=() rsss=()
  for tool in curl-F curl-segments curl-file urlsession-file; do
    times=(); peaks=()
    for _ in $(seq "$REPEAT"); do
      case "$tool" in
        curl-F) r="$(measure curl curl -s -o /dev/null -w 'time=%{time_total}' -F "file=@$payload;type=application/octet-stream" "$URL/upload")" ;;
        curl-segments) r="$(measure bench "$BENCH" upload --transport curl-segments --url "$URL" --payload "$payload" --boundary "$BOUNDARY")" ;;
        curl-file) r="$(measure bench "$BENCH" upload --transport curl --url "$URL" --body "$body" --boundary "$BOUNDARY")" ;;
        urlsession-file) r="$(measure bench "$BENCH" upload --transport urlsession --url "$URL" --body "$body" --boundary "$BOUNDARY")" ;;
      esac
      times+=("${r% *}"); peaks+=("${r#* }")
    done
    secs[$tool]="$(printf '%s\n' "${times[@]}" | median)"
    rsss[$tool]="$(printf '%s\n' "${peaks[@]}" | sort -n | tail -1)"
  done
  for tool in curl-F curl-segments curl-file urlsession-file; do
    s="${secs[$tool]}"
    rate="$(echo "$bytes / 1048576 / $s" | bc -l)"
    ratio="$(echo "${secs[curl-F]} / $s" | bc -l)"
    printf '| %s MiB | %s | %.3f | %.0f | %.2f | %.1f |\n' "$mib" "$tool" "$s" "$rate" "$ratio" "$(echo "${rsss[$tool]} / 1024" | bc -l)"
  done
  printf '| %s MiB | (writing the body file for *-file) | %.3f | | | |\n' "$mib" "$prep"
  rm -f "$payload" "$body"
done

echo
echo "| $REQUESTS sequential GETs, one connection | median s | requests/s | × curl | peak RSS MiB |"
echo "|---|---|---|---|---|"
config="$WORK/urls.conf"
for i in $(seq 0 $((REQUESTS - 1))); do printf 'url = "%s/r/%d"\noutput = "/dev/null"\n' "$URL" "$i"; done >"$config"
declare -A rsec=() rrss=()
for tool in curl curl-transport urlsession-transport; do
  times=(); peaks=()
  for _ in $(seq "$REPEAT"); do
    case "$tool" in
      curl)
        start="$(date +%s.%N)"
        /usr/bin/time -v -o "$WORK/time" curl -s -K "$config" 2>/dev/null
        t="$(echo "$(date +%s.%N) - $start" | bc -l)"
        p="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time")"
        r="$t $p" ;;
      curl-transport) r="$(measure bench "$BENCH" requests --transport curl --url "$URL" --count "$REQUESTS")" ;;
      urlsession-transport) r="$(measure bench "$BENCH" requests --transport urlsession --url "$URL" --count "$REQUESTS")" ;;
    esac
    times+=("${r% *}"); peaks+=("${r#* }")
  done
  rsec[$tool]="$(printf '%s\n' "${times[@]}" | median)"
  rrss[$tool]="$(printf '%s\n' "${peaks[@]}" | sort -n | tail -1)"
done
for tool in curl curl-transport urlsession-transport; do
  s="${rsec[$tool]}"
  printf '| %s | %.3f | %.0f | %.2f | %.1f |\n' "$tool" "$s" "$(echo "$REQUESTS / $s" | bc -l)" "$(echo "${rsec[curl]} / $s" | bc -l)" "$(echo "${rrss[$tool]} / 1024" | bc -l)"
done
