#!/usr/bin/env bash
# The IETF resumable uploads draft driven by hand with curl (Docs/ietf-upload.md):
# creation with Upload-Complete: ?1 cut short by curl's own time limit, the 104's Location read
# from `curl -v`, offset retrieval with HEAD, an append killed with -9 after a progress 104, HEAD
# again, the rest appended with PATCH, and the photo's SHA-256 compared with the file's.
#
#   tests/ietf_curl.sh MAIN_URL IETF_URL WORK_DIR
set -euo pipefail
MAIN="${1:?main server URL}"; IETF="${2:?IETF server URL}"; WORK="${3:?work dir}"
mkdir -p "$WORK"
fail() { echo "ietf_curl: FAIL: $*" >&2; exit 1; }

TOKEN="$(curl -sS -X POST "$IETF/auth/token" -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' | sed -n 's/.*"access_token": *"\([^"]*\)".*/\1/p')"
[ -n "$TOKEN" ] || fail "no access token"
FILE="$WORK/upload.bin"
head -c 4194304 /dev/urandom > "$FILE"
WANT="$(sha256sum "$FILE" | cut -d' ' -f1)"

# 1. Creation: the whole file, but at 1 MiB/s and for 2.5 s only, so it is cut at ~2.4 MiB (past
#    the server's first 1 MiB confirmation, however slowly the machine starts curl).
set +e
curl -sS -v -X POST "$IETF/photos?title=curl" -H "Authorization: Bearer $TOKEN" \
  -H 'Upload-Draft-Interop-Version: 8' -H 'Upload-Complete: ?1' \
  -H 'Content-Type: application/octet-stream' -H 'Content-Disposition: inline; filename="upload.bin"' \
  --data-binary @"$FILE" --limit-rate 1M --max-time 2.5 -o "$WORK/create.out" 2> "$WORK/create.err"
RC=$?
set -e
[ "$RC" = 28 ] || fail "the creation was meant to be cut by --max-time (curl exit 28), got $RC: $(cat "$WORK/create.err")"
grep -q '^< HTTP/1.1 104 Upload Resumption Supported' "$WORK/create.err" || fail "no 104 in curl -v: $(cat "$WORK/create.err")"
grep -qi '^< Upload-Draft-Interop-Version: 8' "$WORK/create.err" || fail "the 104 has no Upload-Draft-Interop-Version"
LOCATION="$(grep -i '^< Location:' "$WORK/create.err" | head -1 | sed 's/^< [Ll]ocation: *//' | tr -d '\r')"
[ -n "$LOCATION" ] || fail "the 104 has no Location"
echo "104 Location: $LOCATION"

# 2. Offset retrieval: HEAD, once the server has seen the cut (a HEAD sooner would take over from
#    the creation still reading what curl sent: the test hook says when it ended).
for _ in $(seq 1 100); do
  curl -sS "$IETF/__ietf/uploads" | grep -q '"writing": true' || break
  sleep 0.1
done
curl -sS -I "$LOCATION" -H "Authorization: Bearer $TOKEN" -H 'Upload-Draft-Interop-Version: 8' > "$WORK/head.out"
OFFSET="$(grep -i '^Upload-Offset:' "$WORK/head.out" | sed 's/^[^:]*: *//' | tr -d '\r')"
grep -q '^HTTP/1.1 204' "$WORK/head.out" || fail "HEAD: $(cat "$WORK/head.out")"
grep -qi '^Upload-Complete: ?0' "$WORK/head.out" || fail "HEAD: not ?0: $(cat "$WORK/head.out")"
[ -n "$OFFSET" ] && [ "$OFFSET" -gt 0 ] && [ "$OFFSET" -lt 4194304 ] || fail "HEAD offset $OFFSET"
echo "HEAD Upload-Offset: $OFFSET"

# 3. An append killed with -9 once the server has confirmed some of it (a progress 104 in -v).
tail -c +"$((OFFSET + 1))" "$FILE" > "$WORK/part.bin"
curl -sS -v -X PATCH "$LOCATION" -H "Authorization: Bearer $TOKEN" -H 'Upload-Draft-Interop-Version: 8' \
  -H 'Content-Type: application/partial-upload' -H "Upload-Offset: $OFFSET" -H 'Upload-Complete: ?1' \
  -H 'Expect:' --data-binary @"$WORK/part.bin" --limit-rate 512K -o /dev/null 2> "$WORK/killed.err" &
CURL_PID=$!
for _ in $(seq 1 100); do
  grep -qi '^< Upload-Offset:' "$WORK/killed.err" && break
  sleep 0.1
done
kill -9 "$CURL_PID"
wait "$CURL_PID" 2>/dev/null || true
CONFIRMED="$(grep -i '^< Upload-Offset:' "$WORK/killed.err" | tail -1 | sed 's/^< [^:]*: *//' | tr -d '\r')"
[ -n "$CONFIRMED" ] || fail "no progress 104 before the kill: $(cat "$WORK/killed.err")"
grep -qi '^< Upload-Draft-Interop-Version: 8' "$WORK/killed.err" || fail "a progress 104 without the interop version"
for _ in $(seq 1 100); do
  curl -sS "$IETF/__ietf/uploads" | grep -q '"writing": true' || break
  sleep 0.1
done
curl -sS -I "$LOCATION" -H "Authorization: Bearer $TOKEN" -H 'Upload-Draft-Interop-Version: 8' > "$WORK/head2.out"
OFFSET2="$(grep -i '^Upload-Offset:' "$WORK/head2.out" | sed 's/^[^:]*: *//' | tr -d '\r')"
[ -n "$OFFSET2" ] && [ "$OFFSET2" -ge "$CONFIRMED" ] && [ "$OFFSET2" -lt 4194304 ] \
  || fail "after the kill: HEAD offset $OFFSET2, last confirmed $CONFIRMED"
echo "append killed with -9: last 104 said $CONFIRMED, HEAD says $OFFSET2"
OFFSET="$OFFSET2"

# 4. Append the rest and complete.
tail -c +"$((OFFSET + 1))" "$FILE" > "$WORK/rest.bin"
curl -sS -v -X PATCH "$LOCATION" -H "Authorization: Bearer $TOKEN" -H 'Upload-Draft-Interop-Version: 8' \
  -H 'Content-Type: application/partial-upload' -H "Upload-Offset: $OFFSET" -H 'Upload-Complete: ?1' \
  --data-binary @"$WORK/rest.bin" -o "$WORK/patch.out" 2> "$WORK/patch.err"
grep -q '^< HTTP/1.1 200' "$WORK/patch.err" || fail "PATCH: $(cat "$WORK/patch.err")"
grep -qi '^< Upload-Complete: ?1' "$WORK/patch.err" || fail "PATCH: no Upload-Complete: ?1"
GOT="$(sed -n 's/.*"sha256": *"\([0-9a-f]*\)".*/\1/p' "$WORK/patch.out")"
[ "$GOT" = "$WANT" ] || fail "SHA-256 $GOT != $WANT"
PHOTO="$(sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' "$WORK/patch.out")"
curl -sS "$MAIN/photos/$PHOTO" -H "Authorization: Bearer $TOKEN" -o "$WORK/photo.bin"
[ "$(sha256sum "$WORK/photo.bin" | cut -d' ' -f1)" = "$WANT" ] || fail "the stored photo differs"
echo "ietf_curl: ok (resumed from $OFFSET of 4194304 bytes, SHA-256 $WANT)"
