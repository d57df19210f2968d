#!/usr/bin/env bash
# CourierOpenAPI against APIClient: 10,000 GET /articles/{id} per side, each decoded into a value
# (the generated `Components.Schemas.Article` on one side, a Decodable struct through
# JSONDecoder on the other), in interleaved rounds in one process, one session (libcurl,
# retry, auth) and one reference backend (uvicorn, one worker). Release build.
#
#   Benchmarks/openapi/run.sh                 # REQUESTS=10000 ROUNDS=10
#
# Prints the machine and its load, then courier-openapi-bench's table (Docs/benchmarks/openapi.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"
REQUESTS="${REQUESTS:-10000}"
ROUNDS="${ROUNDS:-10}"
WORK="$(mktemp -d /tmp/courier-openapi-bench.XXXXXX)"
BACKEND=""
cleanup() {
  if [ -n "$BACKEND" ]; then
    kill "$BACKEND" 2>/dev/null || true
    wait "$BACKEND" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

scripts/mirrors
Backend/setup.sh >/dev/null 2>&1
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build \
  --product courier-openapi-bench >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; exit 1; }
BENCH="$PWD/Benchmarks/.build/release/courier-openapi-bench"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# run.sh execs uvicorn: this pid is the server's, whose CPU the bench reads.
COURIER_BACKEND_DATA="$WORK/backend" COURIER_BACKEND_LOG_LEVEL=warning \
  Backend/run.sh --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND=$!
for _ in $(seq 300); do
  curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  kill -0 "$BACKEND" 2>/dev/null || { cat "$WORK/backend.log" >&2; exit 1; }
  sleep 0.1
done

echo "# CourierOpenAPI vs APIClient — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load before $(cut -d' ' -f1-3 /proc/loadavg)"
echo
/usr/bin/time -f "client process: %e s wall, %U s user, %S s system, max RSS %M KiB" \
  "$BENCH" --url "http://127.0.0.1:$PORT" --requests "$REQUESTS" --rounds "$ROUNDS" \
  --backend-pid "$BACKEND"
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
