#!/usr/bin/env bash
# Create or refresh Backend/.venv only (for CI); idempotent.
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/run.sh" --setup-only
