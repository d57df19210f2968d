#!/usr/bin/env bash
# Multipart upload benchmarks (Docs/benchmarks/upload.md).
#   Benchmarks/upload-bench.sh write [SIZE_MIB...]   body-file throughput and peak RSS vs cat/cp
#   Benchmarks/upload-bench.sh threshold [RUNS]      in-memory vs temp-file bodies via URLSession:
#                                                    time, then peak RSS growth of one upload
# Builds multipart-bench (Tests/MultipartProbe, an executable of the Courier package: it drives the
# package-level multipart writer, decision 2304) in release mode, and a Go sink on 127.0.0.1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
swift build --scratch-path .build -c release --product multipart-bench >&2
bench="$root/.build/release/multipart-bench"
work="$(mktemp -d /tmp/upload-bench.XXXXXX)"
sink_pid=""
cleanup() { [[ -n "$sink_pid" ]] && kill "$sink_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

seconds() {
  local start end
  start=$(date +%s.%N); "$@"; end=$(date +%s.%N)
  printf '%.3f' "$(echo "$end - $start" | bc)"
}

format_row='
import json, sys
mib, rnd, r = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
chunk, secs, rate = r["chunk"] // 1024, r["seconds"], r["mib_per_s"]
peak, before = r["peak_rss_kib"] / 1024, r["rss_before_kib"] / 1024
print(f"| {mib} MiB | multipart-bench, {chunk} KiB chunks (round {rnd}) "
      f"| {secs:.3f} | {rate} | {peak:.1f} MiB (before: {before:.1f}) |")
'

case "${1:-write}" in
write)
  shift || true
  sizes=("${@:-200 1024}")
  echo "| source | tool | seconds | MiB/s | peak RSS |"
  echo "|---:|---|---:|---:|---:|"
  for mib in ${sizes[@]}; do
    src="$work/source-$mib.bin"
    head -c "$((mib * 1048576))" /dev/urandom > "$src"
    cat "$src" > /dev/null   # warm the page cache: every tool reads from memory
    for round in 1 2 3; do
      t=$(seconds sh -c "cat '$src' > /dev/null")
      echo "| $mib MiB | cat > /dev/null (round $round) | $t | $(echo "$mib / $t" | bc) | - |"
      t=$(seconds cp "$src" "$work/copy.bin"); rm -f "$work/copy.bin"
      echo "| $mib MiB | cp (round $round) | $t | $(echo "$mib / $t" | bc) | - |"
      for chunk in 65536 262144 1048576; do
        line=$("$bench" write "$src" "$work/body.bin" "$chunk")
        rm -f "$work/body.bin"
        python3 -c "$format_row" "$mib" "$round" "$line"
      done
    done
    rm -f "$src"
  done
  ;;
threshold)
  runs="${2:-30}"
  (cd "$root/Benchmarks/sink" && GOFLAGS=-mod=mod GOPROXY=off go build -o "$work/sink" .) >&2
  port=$((20000 + $$ % 20000))
  "$work/sink" "127.0.0.1:$port" & sink_pid=$!
  for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
  "$bench" threshold "http://127.0.0.1:$port/upload" "$runs"
  echo
  echo "| body | peak RSS growth: memory | peak RSS growth: file |"
  echo "|---:|---:|---:|"
  for size in 65536 262144 1048576 4194304 16777216 67108864; do
    m=$("$bench" peak "http://127.0.0.1:$port/upload" "$size" memory | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["growth_kib"] / 1024, 1))')
    f=$("$bench" peak "http://127.0.0.1:$port/upload" "$size" file | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["growth_kib"] / 1024, 1))')
    echo "| $((size / 1024)) KiB | $m MiB | $f MiB |"
  done
  ;;
*) echo "usage: $0 write [SIZE_MIB...] | threshold [RUNS]" >&2; exit 64 ;;
esac
