#!/usr/bin/env bash
# Benchmarks the D-Bus path facts: the latency from a NetworkManager property change (python-
# dbusmock on a private bus) to the `courier watch --json` line that shows it, and what the
# lazy loading of libsystemd saves at start-up (`courier --version`, `courier status` with and
# without a bus).
#   Benchmarks/pathfacts/run.sh [CHANGES=200] [STARTS=20]
# COURIER names the binary (default: the debug build, .build/debug/courier; build it first).
# Results go to stdout; copy them into Docs/benchmarks/pathfacts.md with the command.
set -euo pipefail
cd "$(dirname "$0")/../.."
COURIER=${COURIER:-.build/debug/courier}
[ -x "$COURIER" ] || { echo "run: no $COURIER (swift build first, or set COURIER)" >&2; exit 1; }
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# binary: $COURIER"
# Debian's python3-dbus and python3-dbusmock live in the system Python, not in a venv.
exec /usr/bin/python3 Benchmarks/pathfacts/bench.py "$COURIER" "${1:-200}" "${2:-20}"
