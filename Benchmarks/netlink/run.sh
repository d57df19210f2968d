#!/usr/bin/env bash
# Benchmarks the netlink path monitor against iproute2 in namespaces it creates and removes.
#   sudo Benchmarks/netlink/run.sh [TOGGLES=400] [RESYNC_REPEATS=100]
# Results go to stdout; copy them into Docs/benchmarks/netlink.md with the command.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOGGLES=${1:-400}
REPEATS=${2:-100}
# The probe is an executable of the Courier package (Tests/NetlinkProbe): it reads the
# monitor's package-level statistics and times its snapshots (decision 2304).
swift build -c release --scratch-path .build --product courier-netlink-probe >&2
PROBE=.build/release/courier-netlink-probe

A=cnlbench-$$-a
B=cnlbench-$$-b
R=cnlbench-$$-r
BATCH=$(mktemp)
cleanup() {
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  ip netns del "$R" 2>/dev/null || true
  rm -f "$BATCH"
}
trap cleanup EXIT

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cores, toggles=$TOGGLES repeats=$REPEATS"

# Latency: va (monitor side, 10.77.0.1/24, up) <-> vb (peer, 10.77.0.2/24, up).
ip netns add "$A"
ip netns add "$B"
ip -n "$A" link add va type veth peer name vb netns "$B"
ip -n "$B" addr add 10.77.0.2/24 dev vb
ip -n "$B" link set vb up
ip -n "$A" addr add 10.77.0.1/24 dev va
ip -n "$A" link set va up
timeout 600 "$PROBE" latency "$A" "$B" "$TOGGLES"

# Resynchronisation: 1,000 addresses and 1,000 routes on one end of a veth pair (this kernel
# has no dummy driver).
ip netns add "$R"
ip -n "$R" link add d0 type veth peer name d1
ip -n "$R" link set d1 up
ip -n "$R" link set d0 up
ip -n "$R" addr add 10.91.255.1/16 dev d0
for i in $(seq 0 999); do
  echo "address add 10.90.$((i / 250)).$((i % 250 + 1))/32 dev d0"
  echo "route add 10.92.$((i / 250)).$((i % 250 + 1))/32 via 10.91.255.2 dev d0"
done > "$BATCH"
echo "route add default via 10.91.255.2 dev d0" >> "$BATCH"
ip -n "$R" -batch "$BATCH"
echo "resync namespace: $(ip -n "$R" -o addr show | wc -l) addresses, $(ip -n "$R" route show table all | wc -l) routes (all tables)"
ip netns exec "$R" timeout 300 "$PROBE" resync "$REPEATS"
