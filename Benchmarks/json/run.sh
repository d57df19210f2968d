#!/usr/bin/env bash
# What a large list refresh pays for JSON (Docs/benchmarks/json.md): json-bench (Tests/JSONBench,
# an executable of the Courier package: it reaches the store's writer, which is package-level,
# decision 2304) built in release mode, then run on a list of about MEGABYTES, RUNS times.
# Usage: Benchmarks/json/run.sh [MEGABYTES] [RUNS] (5, 7). BEFORE_BIN=path runs a json-bench
# built from another checkout too, alternating with this one, for a before/after table: the
# probe's file uses only what the parser and the writer have always offered.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
MEGABYTES=${1:-5}
RUNS=${2:-7}
swift build --scratch-path .build -c release --product json-bench >/dev/null
AFTER="$ROOT/.build/release/json-bench"
for round in 1 2 3; do
  if [ -n "${BEFORE_BIN:-}" ]; then
    echo "before round $round: $("$BEFORE_BIN" "$MEGABYTES" "$RUNS")"
  fi
  echo "after  round $round: $("$AFTER" "$MEGABYTES" "$RUNS")"
done
