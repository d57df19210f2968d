#!/usr/bin/env bash
# End-to-end test of courier-tui in tmux against the reference backend, offline for real.
#
#   Tests/TUI/e2e.sh PATH/TO/courier-tui        (as root; run by TUIEndToEndTests)
#
# The backend runs in one network namespace, courier-tui (in a shell in tmux) in another,
# joined by a veth pair with private addresses that exist only inside the two namespaces.
# "The network goes down" is the backend side of the veth going down: the TUI side loses its
# carrier, which is what a pulled cable or a lost Wi-Fi looks like to the path monitor.
# Every wait polls for a condition with a deadline; nothing sleeps a fixed time to synchronise.
# Everything created (namespaces, veth, tmux server, backend, temporary files) is removed on exit.
set -euo pipefail

BIN="${1:?usage: e2e.sh PATH/TO/courier-tui}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

if [ "$(id -u)" != 0 ]; then
  echo "FAIL: e2e.sh must run as root (it creates network namespaces); CI runs as root." >&2
  exit 2
fi
for tool in tmux ip curl python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "FAIL: no courier-tui at $BIN" >&2; exit 2; }

ID=$$
NS_B="ctb$ID"            # the backend's namespace
NS_T="ctt$ID"            # the interface's namespace
VETH_B="vb$ID"
VETH_T="vt$ID"
NET=$(( ID % 250 + 1 ))
ADDR_B="10.213.$NET.1"
ADDR_T="10.213.$NET.2"
PORT=8080
URL="http://$ADDR_B:$PORT"
SOCK="courier-e2e-$ID"   # a private tmux server
WORK="$(mktemp -d /tmp/courier-tui-e2e.XXXXXX)"
BACKEND_PID=""

cleanup() {
  set +e
  tmux -L "$SOCK" kill-server 2>/dev/null
  if [ -n "$BACKEND_PID" ]; then
    kill "$BACKEND_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$BACKEND_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$BACKEND_PID" 2>/dev/null
  fi
  # Processes still inside the namespaces (uvicorn's children) go with them.
  for ns in "$NS_B" "$NS_T"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*" >&2
  echo "--- pane:" >&2
  tmux -L "$SOCK" capture-pane -p -t e2e 2>/dev/null >&2 || true
  echo "--- backend log (tail):" >&2
  tail -20 "$WORK/backend.log" >&2 2>/dev/null || true
  exit 1
}
pane() { tmux -L "$SOCK" capture-pane -p -t e2e; }
# The header is the pane's first line.
header() { pane | head -1; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds or the deadline.
wait_for() {
  local seconds="$1" what="$2"
  shift 2
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  while [ "$(date +%s%N)" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  fail "timed out after ${seconds}s waiting for: $what"
}
pane_has() { pane | grep -qF -- "$1"; }
pane_lacks() { ! pane | grep -qF -- "$1"; }
header_has() { header | grep -qF -- "$1"; }
header_clear() { ! header | grep -qE 'Offline|pending|Syncing'; }
# A list row with TITLE and the pending mark (*): list and header may be drawn apart, so wait.
flagged_pending() { pane | grep -F -- "$1" | grep -qF '*'; }
not_flagged_pending() { pane | grep -qF -- "$1" && ! flagged_pending "$1"; }
type_text() { tmux -L "$SOCK" send-keys -t e2e -l -- "$1"; }
key() { tmux -L "$SOCK" send-keys -t e2e "$@"; }
in_t() { ip netns exec "$NS_T" "$@"; }
millis() { echo $(( $(date +%s%N) / 1000000 )); }

step "network: $NS_B ($ADDR_B) <-> $NS_T ($ADDR_T)"
ip netns add "$NS_B"
ip netns add "$NS_T"
ip link add "$VETH_B" type veth peer name "$VETH_T"
ip link set "$VETH_B" netns "$NS_B"
ip link set "$VETH_T" netns "$NS_T"
ip -n "$NS_B" link set lo up
ip -n "$NS_T" link set lo up
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
ip -n "$NS_T" addr add "$ADDR_T/24" dev "$VETH_T"
ip -n "$NS_B" link set "$VETH_B" up
ip -n "$NS_T" link set "$VETH_T" up
# The path monitor wants a default route: the backend's side is the interface's gateway.
ip -n "$NS_T" route add default via "$ADDR_B" dev "$VETH_T"

step "backend in $NS_B"
mkdir -p "$WORK/backend"
ip netns exec "$NS_B" env COURIER_BACKEND_HOOKS=all COURIER_BACKEND_DATA="$WORK/backend" \
  COURIER_BACKEND_EXIT_WITH_PARENT=1 \
  bash "$ROOT/Backend/run.sh" --host "$ADDR_B" --port "$PORT" >"$WORK/backend.log" 2>&1 &
BACKEND_PID=$!
wait_for 90 "the backend's /health" in_t curl -sf --max-time 2 "$URL/health"
TOKEN=$(in_t curl -sf --max-time 5 -H 'Content-Type: application/json' \
  -d '{"username":"alice","password":"secret"}' "$URL/auth/token" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
[ -n "$TOKEN" ] || fail "no token from /auth/token"

server_has_title() {
  in_t curl -sf --max-time 3 -H "Authorization: Bearer $TOKEN" "$URL/articles" |
    python3 -c 'import json,sys; t=sys.argv[1]; sys.exit(0 if any(a["title"]==t for a in json.load(sys.stdin)) else 1)' "$1"
}
log_has_write() {
  in_t curl -sf --max-time 3 "$URL/__log" | python3 -c '
import json, sys
log = json.load(sys.stdin)
log = log.get("log", log) if isinstance(log, dict) else log
sys.exit(0 if any(e["method"] in ("PUT", "POST") and e["path"].startswith("/articles")
                  and 200 <= int(e["status"]) < 300 for e in log) else 1)'
}
count_writes() {
  in_t curl -sf --max-time 3 "$URL/__log" | python3 -c '
import json, sys
log = json.load(sys.stdin)
log = log.get("log", log) if isinstance(log, dict) else log
print(sum(1 for e in log if e["method"] in ("PUT", "POST") and e["path"].startswith("/articles")
          and 200 <= int(e["status"]) < 300))'
}

step "courier-tui in tmux in $NS_T"
mkdir -p "$WORK/home" "$WORK/data"
tmux -L "$SOCK" -f /dev/null new-session -d -s e2e -x 100 -y 30 \
  "ip netns exec $NS_T env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm-256color HOME=$WORK/home \
   PS1='e2e\$ ' bash --noprofile --norc -i"
wait_for 30 "the shell prompt" pane_has 'e2e$'
# Everything the app reads comes from the command line and these variables, nothing from $HOME.
# The backend is on the test's own link, not loopback: the token may go there over plain http
# (decision 2431).
type_text "export COURIER_TOKEN='$TOKEN' COURIER_ALLOW_INSECURE_HTTP=1 NO_COLOR=1; stty -a > $WORK/stty.before; $BIN --base-url $URL --data-dir $WORK/data; echo TUI-EXIT=\$?; stty -a > $WORK/stty.after"
key Enter
wait_for 60 "the interface's key hints" pane_has 'q quit'

TITLE_ON="Online article $ID"
TITLE_OFF="Offline article $ID"

if [ "${E2E_PATH_ONLY:-0}" != 1 ]; then
  step "add an article online and see it, then see it on the server"
  key a
  wait_for 30 "the add form" pane_has 'Title'
  type_text "$TITLE_ON"; key Enter; type_text "written online"; key Enter
  wait_for 30 "the new article in the list" pane_has "$TITLE_ON"
  wait_for 60 "the article on the server" server_has_title "$TITLE_ON"
  wait_for 30 "no pending badge" header_clear

  step "upload a photo and see it uploaded, then find it in the server's log"
  convert -size 320x240 xc:steelblue "$WORK/photo.jpg" 2>/dev/null ||
    python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9"))' "$WORK/photo.jpg"
  key u
  wait_for 30 "the upload prompt" pane_has 'Path of the photo'
  type_text "$WORK/photo.jpg"; key Enter
  wait_for 30 "the upload line saying uploaded" pane_has 'photo.jpg  uploaded.'
  log_has_photo() {
    in_t curl -sf --max-time 3 "$URL/__log" | python3 -c '
import json, sys
log = json.load(sys.stdin)
log = log.get("log", log) if isinstance(log, dict) else log
sys.exit(0 if any(e["method"] == "POST" and e["path"] == "/photos" and int(e["status"]) == 201
                  for e in log) else 1)'
  }
  wait_for 30 "POST /photos 201 in the server's log" log_has_photo
fi

step "take the network down (the backend's side of the veth)"
start=$(millis)
ip -n "$NS_B" link set "$VETH_B" down
wait_for 10 "Offline in the header" header_has 'Offline'
elapsed=$(( $(millis) - start ))
echo "   Offline shown after $elapsed ms"
# The aim is under a second (debounce 500 ms); the bound leaves room for a loaded 2-core machine.
[ "$elapsed" -le "${E2E_OFFLINE_BOUND_MS:-2000}" ] || fail "Offline took $elapsed ms to show"

if [ "${E2E_PATH_ONLY:-0}" != 1 ]; then
  step "add an article offline: it shows, pending"
  key a
  wait_for 30 "the add form" pane_has 'Title'
  type_text "$TITLE_OFF"; key Enter; type_text "written offline"; key Enter
  wait_for 30 "the offline article in the list" pane_has "$TITLE_OFF"
  wait_for 30 "Offline · 1 pending" header_has 'Offline · 1 pending'
  wait_for 30 "the offline article flagged pending (*)" flagged_pending "$TITLE_OFF"
fi

step "bring the network back"
start=$(millis)
ip -n "$NS_B" link set "$VETH_B" up
header_online() { ! header | grep -qF Offline; }
wait_for 30 "the Offline badge gone" header_online
echo "   Offline gone after $(( $(millis) - start )) ms"

if [ "${E2E_PATH_ONLY:-0}" != 1 ]; then
  step "the pending article reaches the server and the badge goes away"
  wait_for 30 "the offline article on the server" server_has_title "$TITLE_OFF"
  wait_for 30 "no pending badge" header_clear
  wait_for 30 "the synced article no longer flagged pending" not_flagged_pending "$TITLE_OFF"
  log_has_write || fail "the server's /__log shows no article write"
  echo "   article writes in /__log: $(count_writes)"
fi

step "quit and find the terminal restored"
key q
wait_for 30 "the shell after quitting" pane_has 'TUI-EXIT=0'
wait_for 30 "stty -a after" test -s "$WORK/stty.after"
diff "$WORK/stty.before" "$WORK/stty.after" >&2 || fail "stty -a differs after quitting"
# The alternate screen is left: the shell's own lines are back on the pane.
pane_has "export COURIER_TOKEN" || fail "the pane does not show the shell's screen again"

if [ "${E2E_PATH_ONLY:-0}" != 1 ]; then
  step "start again offline: the first frame shows the saved articles"
  ip -n "$NS_B" link set "$VETH_B" down
  type_text "clear; $BIN --base-url $URL --data-dir $WORK/data; echo TUI-AGAIN=\$?"
  key Enter
  wait_for 60 "the saved articles" pane_has "$TITLE_OFF"
  wait_for 30 "the article added online in the saved copy" pane_has "$TITLE_ON"
  wait_for 30 "Offline in the header" header_has 'Offline'
  wait_for 60 "the saved-copy label" pane_has 'Saved copy'
  step "the network comes back: the list is the server's again, with no key"
  ip -n "$NS_B" link set "$VETH_B" up
  wait_for 30 "the Offline badge gone" header_online
  saved_gone() { ! pane | grep -qF 'Saved copy'; }
  wait_for 30 "the saved-copy label gone after the refresh" saved_gone
  wait_for 30 "the offline article in the refreshed list" pane_has "$TITLE_OFF"
  key q
  wait_for 30 "the shell after quitting again" pane_has 'TUI-AGAIN=0'
fi
echo "PASS"
