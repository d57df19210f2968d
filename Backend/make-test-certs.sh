#!/usr/bin/env bash
# Make a throwaway PKI for serving the reference backend over HTTPS in tests, the demo and the
# benchmarks (never for anything real: the keys are unencrypted and the CA signs anything).
#
#   ./make-test-certs.sh DIR [--san IP:10.0.0.1|DNS:name]...
#
# Writes into DIR (created if needed; existing files are replaced):
#   ca.pem, ca-key.pem                the certificate authority (CN "Courier test CA")
#   server.pem, server-key.pem        the server, for 127.0.0.1, ::1, localhost and each --san
#   server.pin                        the server key's pin, sha256/BASE64 (OkHttp's spelling)
#   other.pem, other-key.pem          another server certificate from the same CA, with
#   other.pin                         another key: what a pin refuses (a mis-issued certificate)
#   client.pem, client-key.pem        a client certificate for mutual TLS (CN "alice")
# Each certificate is valid for 7 days; the keys are mode 0600, the rest 0644.
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 64; }
case "$1" in -h|--help) usage; exit 0 ;; esac
dir="$1"; shift
sans="IP:127.0.0.1,IP:::1,DNS:localhost"
while [ $# -gt 0 ]; do
  case "$1" in
    --san) sans="$sans,${2:?--san needs a value}"; shift 2 ;;
    --san=*) sans="$sans,${1#*=}"; shift ;;
    *) echo "make-test-certs.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done
mkdir -p "$dir"
cd "$dir"
umask 077
curve=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
# Quiet unless something fails: openssl's progress goes to a log shown on failure.
log=$(mktemp)
trap 'rm -f "$log" ./*.csr ./*.ext' EXIT
run() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }; }

run openssl req -x509 "${curve[@]}" -keyout ca-key.pem -out ca.pem -days 7 \
  -subj "/CN=Courier test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

# A certificate signed by the CA: issue NAME SUBJECT EXTENSIONS
issue() {
  local name=$1 subject=$2 extensions=$3
  run openssl req -new "${curve[@]}" -keyout "$name-key.pem" -out "$name.csr" -subj "$subject"
  printf '%s\n' "$extensions" >"$name.ext"
  run openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -set_serial "0x$(openssl rand -hex 8)" \
    -days 7 -extfile "$name.ext" -out "$name.pem"
}
# The pin of a key: the SHA-256 of its DER SubjectPublicKeyInfo, base64.
pin() {
  printf 'sha256/%s\n' "$(openssl pkey -in "$1-key.pem" -pubout -outform DER | openssl dgst -sha256 -binary | openssl base64 -A)" >"$1.pin"
}
server_ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$sans"
issue server "/CN=Courier test server" "$server_ext"
issue other "/CN=Courier test server" "$server_ext"
issue client "/CN=alice" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
pin server
pin other
chmod 644 ca.pem server.pem other.pem client.pem server.pin other.pin
