#!/usr/bin/env bash
# Set up the virtualenv, then run the backend's pytest suite. Extra arguments go to pytest.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$HERE/setup.sh"
cd "$HERE"
exec "$HERE/.venv/bin/python" -m pytest "$@"
