#!/usr/bin/env bash
# Durable enqueue rate of the local stores against the machine's raw fdatasync rate (4 KiB
# write + fdatasync, appended to a growing file and over one block), measured in the same run,
# interleaved, as ratios. Each store operation is an applyAndEnqueue (a record
# write plus an outbox entry) that is on disk when the call returns.
#
#   Benchmarks/stores/run.sh [count per run] [rounds]
#
# BENCH_DIR chooses the directory (default: a fresh one under /var/tmp, same disk as ~).
set -euo pipefail
count=${1:-2000}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
swift build -c release --scratch-path .build --product courier-store-crash-probe >/dev/null
probe=$(swift build -c release --scratch-path .build --show-bin-path)/courier-store-crash-probe
base=${BENCH_DIR:-$(mktemp -d /var/tmp/courier-store-bench.XXXXXX)}
trap 'rm -rf "$base"' EXIT
results="$base/results.jsonl"
: >"$results"
for round in $(seq 1 "$rounds"); do
  for adapter in fdatasync fdatasync-overwrite sqlite sqlite-normal file; do
    dir="$base/$round-$adapter"
    mkdir -p "$dir"
    "$probe" bench "$adapter" "$dir" "$count" | sed "s/^{/{\"round\":$round,/" >>"$results"
    rm -rf "$dir"
  done
done
echo "filesystem: $(df -T "$base" | awk 'NR==2 {print $2 " on " $1}'), kernel $(uname -r)"
echo "count per run: $count, rounds: $rounds"
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["adapter"], []).append(r)
raw = {r["round"]: r["per_second"] for r in by["fdatasync"]}
over = {r["round"]: r["per_second"] for r in by["fdatasync-overwrite"]}
print("| what | ops/s (median) | range | p50 µs | p99 µs | ÷ raw append fdatasync | ÷ raw overwrite fdatasync |")
print("|---|---|---|---|---|---|---|")
for name in ["fdatasync", "fdatasync-overwrite", "sqlite", "sqlite-normal", "file"]:
    runs = by[name]
    rate = statistics.median(r["per_second"] for r in runs)
    lo, hi = min(r["per_second"] for r in runs), max(r["per_second"] for r in runs)
    p50 = statistics.median(r["p50_us"] for r in runs)
    p99 = statistics.median(r["p99_us"] for r in runs)
    ratio = statistics.median(r["per_second"] / raw[r["round"]] for r in runs)
    ratio2 = statistics.median(r["per_second"] / over[r["round"]] for r in runs)
    print(f"| {name} | {rate:,.0f} | {lo:,.0f}–{hi:,.0f} | {p50:,.0f} | {p99:,.0f} | {ratio:.2f} | {ratio2:.2f} |")
PY
