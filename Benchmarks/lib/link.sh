# Sourced by the benchmarks that run a server and a client over a rate-limited link, or wait for
# a server to answer: one definition of the namespaces, the veth, the tbf shaping and the byte
# counters, so every benchmark measures over the same kind of link.
#
#   . "$ROOT/Benchmarks/lib/link.sh"
#   bench_release_courier NAME          → prints the release courier (SKIP_BUILD=1: the last build)
#   bench_wait_http NAME URL [NETNS]    → waits (60 s at most) until URL answers, else exits 1
#   bench_link SRV CLI NET RATE         → namespaces SRV and CLI, veth vs (NET.1) – vc (NET.2), a
#                                         default route from CLI, tbf at RATE both ways
#   bench_count SRV PORT...             → counts the bytes of those ports into and out of SRV
#   bench_counted_in SRV PORT           → bytes counted into SRV for PORT (IP + TCP headers)
#   bench_counted_out SRV PORT          → bytes counted out of SRV from PORT
#   bench_unlink SRV CLI                → deletes both namespaces (for a cleanup trap)

bench_release_courier() { # NAME
  local bin
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    bin="$("$ROOT/scripts/release-build" courier)"
  else
    bin="$(cd "$ROOT" && swift build -c release --static-swift-stdlib --show-bin-path)"
  fi
  [ -x "$bin/courier" ] || { echo "$1: no release courier at $bin/courier" >&2; exit 1; }
  echo "$bin/courier"
}

bench_wait_http() { # NAME URL [NETNS]
  local run=()
  [ -z "${3:-}" ] || run=(ip netns exec "$3")
  for _ in $(seq 1 600); do
    "${run[@]}" curl -s -o /dev/null "$2" && return 0
    sleep 0.1
  done
  echo "$1: $2 never answered" >&2
  exit 1
}

bench_link() { # SRV CLI NET RATE
  ip netns add "$1"
  ip netns add "$2"
  ip -n "$1" link add vs type veth peer name vc netns "$2"
  ip -n "$1" addr add "$3.1/24" dev vs
  ip -n "$2" addr add "$3.2/24" dev vc
  local ns
  for ns in "$1" "$2"; do ip -n "$ns" link set lo up; done
  ip -n "$1" link set vs up
  ip -n "$2" link set vc up
  ip -n "$2" route add default via "$3.1" dev vc
  ip netns exec "$2" tc qdisc replace dev vc root tbf rate "$4" burst 256kb latency 100ms
  ip netns exec "$1" tc qdisc replace dev vs root tbf rate "$4" burst 256kb latency 100ms
}

bench_count() { # SRV PORT...
  local srv="$1" port
  shift
  for port in "$@"; do
    ip netns exec "$srv" iptables -A INPUT -i vs -p tcp --dport "$port" -j ACCEPT
    ip netns exec "$srv" iptables -A OUTPUT -o vs -p tcp --sport "$port" -j ACCEPT
  done
}

bench_counted_in() { # SRV PORT
  ip netns exec "$1" iptables -nvx -L INPUT | awk -v p="dpt:$2" '$0 ~ p { s += $2 } END { printf "%d\n", s }'
}

bench_counted_out() { # SRV PORT
  ip netns exec "$1" iptables -nvx -L OUTPUT | awk -v p="spt:$2" '$0 ~ p { s += $2 } END { printf "%d\n", s }'
}

bench_unlink() { # SRV CLI
  ip netns del "$1" 2>/dev/null || true
  ip netns del "$2" 2>/dev/null || true
}
