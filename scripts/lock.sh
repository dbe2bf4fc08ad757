#!/usr/bin/env bash
# Refresh the virtualenv's lock files from pyproject.toml: run it after changing a
# dependency (or to take newer releases), then commit requirements/*.lock.
#   requirements/main.lock  what `invoke bench` needs (scripts/setup-host.sh)
#   requirements/dev.lock   that plus the dev extras (scripts/setup-host.sh --tests)
# Both are universal (one file for Debian 12's Python 3.11 and Debian 13's 3.13: uv
# writes environment markers where versions differ) and carry every file's sha256, so
# setup-host.sh installs with pip's --require-hashes. uv comes with the dev extras.
set -euo pipefail
cd "$(dirname "$0")/.."
uv=.venv/bin/uv
[ -x "$uv" ] || { echo "scripts/lock.sh: $uv is missing; run scripts/setup-host.sh --tests first" >&2; exit 1; }
common=(--universal --python-version 3.11 --generate-hashes --quiet
        --custom-compile-command "bash scripts/lock.sh")
"$uv" pip compile "${common[@]}" pyproject.toml requirements/build.in -o requirements/main.lock
"$uv" pip compile "${common[@]}" --extra dev pyproject.toml requirements/build.in \
  -o requirements/dev.lock
echo "requirements/main.lock, requirements/dev.lock written"
