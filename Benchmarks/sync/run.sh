#!/usr/bin/env bash
# Sync benchmarks (Docs/benchmarks/sync.md):
#  1. replay rate: N queued creates sent by `courier sync` vs a plain sequential keep-alive
#     client (peer.py, python http.client) sending the same requests, same backend, same run;
#  2. cold start of `courier articles list --offline` with N cached articles, vs fetching the
#     same list from the backend with curl (the network path it spares the user).
# Usage: Benchmarks/sync/run.sh [N] (default 10000). CONFIG=release for a release build.
set -euo pipefail
N=${1:-10000}
CONFIG=${CONFIG:-debug}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
swift build --scratch-path .build -c "$CONFIG" --product courier >/dev/null
swift build --package-path Benchmarks --scratch-path Benchmarks/.build -c "$CONFIG" \
  --product sync-bench-enqueue >/dev/null
BIN="$ROOT/.build/$CONFIG"
BENCH_BIN="$ROOT/Benchmarks/.build/$CONFIG"
WORK=$(mktemp -d /tmp/courier-sync-bench.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
COURIER_BACKEND_DATA="$WORK/backend" Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
trap 'kill $BACKEND 2>/dev/null || true; wait $BACKEND 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.2; done
C=("$BIN/courier" --base-url "http://127.0.0.1:$PORT" --data-dir "$WORK/client")
echo secret | "${C[@]}" login --username alice --password-stdin >/dev/null

now() { date +%s.%N; }
"$BENCH_BIN/sync-bench-enqueue" "$WORK/client" "$N"
t0=$(now); "${C[@]}" sync --json >"$WORK/sync.json"; t1=$(now)
courier_replay=$(echo "$t1 - $t0" | bc -l)
python3 -c "import json,sys; r=json.load(open('$WORK/sync.json')); assert r['sent']==$N and r['pending']==0, r"

"${C[@]}" articles list --json >/dev/null
list_runs=()
for _ in 1 2 3 4 5; do
  t0=$(now); "${C[@]}" articles list --offline >/dev/null; t1=$(now)
  list_runs+=("$(echo "$t1 - $t0" | bc -l)")
done
list_median=$(printf '%s\n' "${list_runs[@]}" | sort -n | sed -n 3p)
TOKEN=$(curl -s -X POST -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' "http://127.0.0.1:$PORT/auth/token" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
curl_runs=()
for _ in 1 2 3 4 5; do
  t0=$(now); curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/articles" >/dev/null; t1=$(now)
  curl_runs+=("$(echo "$t1 - $t0" | bc -l)")
done
curl_median=$(printf '%s\n' "${curl_runs[@]}" | sort -n | sed -n 3p)

curl -sf -X POST "http://127.0.0.1:$PORT/__reset" >/dev/null
peer_replay=$(python3 Benchmarks/sync/peer.py 127.0.0.1 "$PORT" "$N")

printf 'build: %s, N=%d, %s, %d cores\n' "$CONFIG" "$N" "$(uname -r)" "$(nproc)"
printf 'replay  courier sync: %.2f s (%.0f ops/s)\n' "$courier_replay" "$(echo "$N / $courier_replay" | bc -l)"
printf 'replay  peer.py     : %.2f s (%.0f ops/s)\n' "$peer_replay" "$(echo "$N / $peer_replay" | bc -l)"
printf 'replay  ratio courier/peer: %.2f\n' "$(echo "$courier_replay / $peer_replay" | bc -l)"
printf 'list --offline cold start (median of 5): %.3f s; curl GET /articles (median of 5): %.3f s; ratio %.2f\n' \
  "$list_median" "$curl_median" "$(echo "$list_median / $curl_median" | bc -l)"
