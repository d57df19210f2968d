#!/usr/bin/env bash
# Cross-checks multipart bodies against three independent parsers (python-multipart, werkzeug,
# Go's mime/multipart). Creates its Python venv and builds its Go helper on first use.
# Usage: Tests/Crosscheck/crosscheck.sh MANIFEST_JSON   (see crosscheck.py for the format)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$here/requirements.txt" "$venv/requirements.installed"; then
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >&2; then
    echo "crosscheck: cannot create a Python venv with $python (install python3-venv?)" >&2
    exit 3
  fi
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2; then
    echo "crosscheck: cannot install $here/requirements.txt into $venv (is PyPI reachable?)" >&2
    rm -rf "$venv"
    exit 3
  fi
  cp "$here/requirements.txt" "$venv/requirements.installed"
fi

goparse="$here/.bin/goparse"
if [[ ! -x "$goparse" || "$here/goparse/main.go" -nt "$goparse" ]]; then
  if ! command -v go >/dev/null; then
    echo "crosscheck: go is not installed (apt-get install golang-go)" >&2
    exit 3
  fi
  (cd "$here/goparse" && GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local go build -o "$goparse" .) >&2 || {
    echo "crosscheck: go build of $here/goparse failed" >&2
    exit 3
  }
fi

exec "$venv/bin/python" "$here/crosscheck.py" "$1" "$goparse"
