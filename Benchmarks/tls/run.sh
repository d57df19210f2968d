#!/usr/bin/env bash
# What TLS costs a `courier` command (Docs/benchmarks/tls.md): the same request over plain HTTP
# and over HTTPS on loopback, against the reference backend, each row the minimum of ROUNDS × RUNS
# fresh processes (Benchmarks/cli/measure.c: wall and CPU time; the rows interleaved round by
# round, so that a busy moment of the machine falls on all of them), beside curl making the same request
# with the same CA. A command is one process and one connection, so each HTTPS run pays one full
# handshake (ECDSA P-256 certificates from Backend/make-test-certs.sh, TLS 1.3).
#
#   Benchmarks/tls/run.sh
#
# Environment (defaults in brackets):
#   RUNS [10]        runs of each row in a round
#   ROUNDS [5]       rounds
#   COURIER [built]  the courier binary measured; by default `swift build -c release` builds it
#
# Rows: `get /health` and `articles list` (a session token, the list refreshed from the
# server) over http://, over https:// trusting the test CA (--ca-bundle), with a pin (--pin),
# and with a client certificate against a backend that requires one (mutual TLS); then curl's
# `GET /health` over each. Three backends on free loopback ports: plain, TLS, mutual TLS.
set -euo pipefail
RUNS="${RUNS:-10}"
ROUNDS="${ROUNDS:-5}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"
OUT="$ROOT/.build/tls-bench"
mkdir -p "$OUT"
gcc -O2 -o "$OUT/measure" Benchmarks/cli/measure.c
if [ -z "${COURIER:-}" ]; then
  echo "tls bench: building courier (release)..." >&2
  swift build -c release --product courier >&2
  COURIER="$(swift build -c release --show-bin-path)/courier"
fi
bash Backend/run.sh --setup-only >/dev/null 2>&1

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
bash Backend/make-test-certs.sh "$WORK/pki"
PKI="$WORK/pki"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CURL_TLS=(--cacert "$PKI/ca.pem")
CURL_MTLS=(--cacert "$PKI/ca.pem" --cert "$PKI/client.pem" --key "$PKI/client-key.pem")
# start NAME [run.sh arguments...]: a backend of its own on a free port, in PORT (not in a
# subshell: the backend ends with its parent).
start() {
  local name="$1"
  shift
  PORT="$(free_port)"
  COURIER_BACKEND_DATA="$WORK/backend-$name" COURIER_BACKEND_EXIT_WITH_PARENT=1 \
    COURIER_BACKEND_LOG_LEVEL=warning bash Backend/run.sh --port "$PORT" "$@" \
    >"$WORK/backend-$name.log" 2>&1 &
  PIDS+=($!)
}
start http
HTTP="http://127.0.0.1:$PORT"
start tls --tls "$PKI"
TLS="https://127.0.0.1:$PORT"
start mtls --tls "$PKI" --client-certs required
MTLS="https://127.0.0.1:$PORT"
for _ in $(seq 600); do
  if curl -fsS "$HTTP/health" >/dev/null 2>&1 && curl -fsS "${CURL_TLS[@]}" "$TLS/health" >/dev/null 2>&1 &&
    curl -fsS "${CURL_MTLS[@]}" "$MTLS/health" >/dev/null 2>&1; then
    break
  fi
  sleep 0.1
done

TLS_FLAGS=(--ca-bundle "$PKI/ca.pem")
PIN_FLAGS=(--ca-bundle "$PKI/ca.pem" --pin "$(cat "$PKI/server.pin")")
MTLS_FLAGS=(--ca-bundle "$PKI/ca.pem" --client-certificate "$PKI/client.pem" --client-key "$PKI/client-key.pem")
# client NAME URL FLAGS...: a data folder logged in to URL with FLAGS, holding 20 articles.
client() {
  local name="$1" url="$2"
  shift 2
  local dir="$WORK/client-$name"
  mkdir -m 700 "$dir"
  echo secret | HOME="$dir" "$COURIER" --base-url "$url" --data-dir "$dir" "$@" \
    login --username alice --password-stdin >/dev/null
  for i in $(seq 20); do
    HOME="$dir" "$COURIER" --base-url "$url" --data-dir "$dir" "$@" \
      articles add --title "Article $i" --body "Body $i" >/dev/null
  done
}
client http "$HTTP"
client tls "$TLS" "${TLS_FLAGS[@]}"
client mtls "$MTLS" "${MTLS_FLAGS[@]}"

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
# measure NAME COMMAND...: appends "NAME wall_s cpu_s" (the minimum of RUNS runs, one warm-up).
measure() {
  local name="$1" line
  shift
  line="$(MEASURE_WARMUP=1 "$OUT/measure" "$RUNS" "$@")"
  read -r wall cpu _ <<<"$line"
  printf '%s\t%s\t%s\n' "$name" "$wall" "$cpu" >>"$RESULTS"
  echo "tls bench: $name: wall $wall s, cpu $cpu s" >&2
}
# The courier command line of each client.
C_HTTP=(env HOME="$WORK/client-http" "$COURIER" --base-url "$HTTP" --data-dir "$WORK/client-http")
C_TLS=(env HOME="$WORK/client-tls" "$COURIER" --base-url "$TLS" --data-dir "$WORK/client-tls")
C_MTLS=(env HOME="$WORK/client-mtls" "$COURIER" --base-url "$MTLS" --data-dir "$WORK/client-mtls")
for round in $(seq "$ROUNDS"); do
  echo "tls bench: round $round of $ROUNDS" >&2
  measure "courier get, http" "${C_HTTP[@]}" get /health
  measure "courier get, https" "${C_TLS[@]}" "${TLS_FLAGS[@]}" get /health
  measure "courier get, https + pin" "${C_TLS[@]}" "${PIN_FLAGS[@]}" get /health
  measure "courier get, mutual TLS" "${C_MTLS[@]}" "${MTLS_FLAGS[@]}" get /health
  measure "courier articles list, http" "${C_HTTP[@]}" articles list
  measure "courier articles list, https" "${C_TLS[@]}" "${TLS_FLAGS[@]}" articles list
  measure "courier articles list, mutual TLS" "${C_MTLS[@]}" "${MTLS_FLAGS[@]}" articles list
  measure "curl get, http" curl -fsS -o /dev/null "$HTTP/health"
  measure "curl get, https" curl -fsS -o /dev/null "${CURL_TLS[@]}" "$TLS/health"
  measure "curl get, https + pin" curl -fsS -o /dev/null "${CURL_TLS[@]}" \
    --pinnedpubkey "$(sed 's#^sha256/#sha256//#' "$PKI/server.pin")" "$TLS/health"
  measure "curl get, mutual TLS" curl -fsS -o /dev/null "${CURL_MTLS[@]}" "$MTLS/health"
done

python3 - "$RESULTS" "$((RUNS * ROUNDS))" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
runs = sys.argv[2]
table = {}
for name, wall, cpu in rows:
    best = table.get(name, (float("inf"), float("inf")))
    table[name] = (min(best[0], float(wall) * 1000), min(best[1], float(cpu) * 1000))
print(f"| row (minimum of {runs} processes) | wall ms | CPU ms | wall over the http row |")
print("|---|---:|---:|---:|")
for name, (wall, cpu) in table.items():
    tool, what, transport = name.split(" ")[0], " ".join(name.split(", ")[0].split(" ")[1:]), name.split(", ")[1]
    base = table.get(f"{tool} {what}, http")
    extra = f"{wall - base[0]:+.1f} ms" if base and transport != "http" else ""
    print(f"| {name} | {wall:.1f} | {cpu:.1f} | {extra} |")
PY
