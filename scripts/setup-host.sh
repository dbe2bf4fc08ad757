#!/usr/bin/env bash
# Prepare a fresh Debian 12/13 machine, as root, for archbench:
#   system packages (Docker engine, QEMU user emulation, debootstrap, mmdebstrap), a
#   running dockerd, apt-cacher-ng, binfmt_misc with the qemu handlers, and a virtualenv
#   in .venv with archbench installed.
# --tests: also what the test suite needs (README.md's test command): GNUnet headers and
#   a compiler for the native harness tests, TeX Live and poppler for the report compile
#   test, sshd for the ssh:// host test, curl, and the dev extras (pytest, ruff, mypy,
#   mkdocs). Left out of `invoke bench`'s setup, they are most of its download.
# Idempotent: a second run only checks. Mirrors and registries are the tools' defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

# Long quiet steps (apt, pip) keep their output in a log and say every 15 s what they
# do, so a first run is never silent for long; on failure the log's end is shown.
step_log=/var/log/archbench-setup.log
: >"$step_log"
quietly() {
  local what=$1 pid t=0 last shown=""
  shift
  say "$what"
  "$@" >>"$step_log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    t=$((t + 1))
    if [ $((t % 15)) -eq 0 ]; then
      # || true: an empty log (grep finds no line) must not end the script (set -e).
      last=$({ grep -v '^WARNING: Location' "$step_log" || true; } | tail -n 1 \
        | tr -cd '[:print:]' | cut -c1-90)
      if [ -n "$last" ] && [ "$last" != "$shown" ]; then
        say "$what, ${t}s in: $last"
        shown=$last
      else
        say "$what, ${t}s in (no new output)"
      fi
    fi
  done
  if ! wait "$pid"; then
    echo "[setup] $what failed; the end of $step_log:" >&2
    tail -n 20 "$step_log" >&2
    exit 1
  fi
}

tests=0
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  *) echo "usage: scripts/setup-host.sh [--tests]" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  echo "scripts/setup-host.sh must run as root (it installs packages and starts dockerd)" >&2
  exit 1
fi

# mmdebstrap: the base images' bootstrap (archbench.images.bases); arch-test: mmdebstrap's
# check of a foreign architecture (a Recommends, which --no-install-recommends drops:
# without it a riscv64 bootstrap stops with "install arch-test for foreign architecture
# support"); debootstrap: the fallback where mmdebstrap is missing (Debian 11 and older).
packages=(docker.io qemu-user-static mmdebstrap arch-test debootstrap python3 python3-venv)
if [ "$tests" = 1 ]; then
  # texlive + poppler-utils: the report compile test (pdflatex, pdftoppm);
  # curl: the taler-helper recipe's fetch test; openssh-server (+ client): the ssh:// host
  # test, whose fixture starts its own sshd on a loopback port; gcc, make, pkgconf and the
  # -dev packages: the native harness tests; chromium: the results page's browser test
  # (headless, from disk).
  # git: the tests of git sources (a pristine machine has none); dpkg-dev: the tests of
  # the GNUnet build script (dpkg-buildflags); shellcheck: actionlint checks the CI
  # workflow's run: scripts with it (tests/unit/test_ci_workflow.py).
  packages+=(curl chromium openssh-client openssh-server git dpkg-dev shellcheck
             gcc make pkgconf libgnunet-dev libsodium-dev
             texlive-latex-base texlive-latex-recommended texlive-latex-extra
             texlive-fonts-recommended poppler-utils)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] || ! command -v docker >/dev/null; then
  # --error-on=any: an index that cannot be fetched stops here, not as "no such package".
  quietly "apt-get update" apt-get update --error-on=any
  # Debian 13 moved the docker client into docker-cli, a Recommends of docker.io that
  # --no-install-recommends drops (Debian 12's docker.io carries the client itself).
  if ! command -v docker >/dev/null && apt-cache show docker-cli >/dev/null 2>&1; then
    missing+=(docker-cli)
  fi
  say "installing: ${missing[*]}"
  quietly "installing ${#missing[@]} packages" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
  if [[ " ${missing[*]} " == *" openssh-server "* ]] && [ -d /run/systemd/system ]; then
    # The package starts a system sshd on port 22; the tests need only the binary.
    say "openssh-server installed for the tests; leaving its system service off"
    systemctl disable --now ssh >/dev/null 2>&1 || true
  fi
fi

if ! command -v docker >/dev/null; then
  echo "[setup] there is no docker client (command 'docker') after installing docker.io;" \
    "install the package that has it (docker-cli on Debian 13)" >&2
  exit 1
fi
if ! docker info >/dev/null 2>&1; then
  if [ -d /run/systemd/system ]; then
    say "starting docker with systemd"
    systemctl start docker
  else
    say "starting dockerd (log: /var/log/archbench-dockerd.log)"
    nohup dockerd >/var/log/archbench-dockerd.log 2>&1 &
  fi
  for t in $(seq 1 180); do
    docker info >/dev/null 2>&1 && break
    if [ $((t % 15)) -eq 0 ]; then say "waiting for dockerd, ${t}s"; fi
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "[setup] dockerd did not come up in 180 s; the end of its log:" >&2
    tail -n 15 /var/log/archbench-dockerd.log >&2 2>/dev/null || true
    exit 1
  fi
fi
say "docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) is up"

# apt-cacher-ng: one package cache for every debootstrap and image build, all architectures
# (invoke.yaml apt_proxy: auto uses it when it listens on port 3142). Debian mirrors are
# remapped to the backend in backends_debian: this machine's own mirror from its apt sources.
if ! dpkg-query -W -f='${Status}' apt-cacher-ng 2>/dev/null | grep -q "install ok installed"; then
  echo "apt-cacher-ng apt-cacher-ng/tunnelenable boolean false" | debconf-set-selections
  quietly "installing apt-cacher-ng (package cache for builds)" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends apt-cacher-ng
fi
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /^https?:/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
acng_restart=0
if [ -n "$mirror" ] && [ "$(cat /etc/apt-cacher-ng/backends_debian 2>/dev/null)" != "${mirror%/}/" ]; then
  echo "${mirror%/}/" > /etc/apt-cacher-ng/backends_debian
  acng_restart=1
fi
if [ -d /run/systemd/system ]; then
  systemctl enable -q apt-cacher-ng
  if [ "$acng_restart" = 1 ]; then systemctl restart apt-cacher-ng; else systemctl start apt-cacher-ng; fi
elif [ "$acng_restart" = 1 ] || ! /etc/init.d/apt-cacher-ng status >/dev/null 2>&1; then
  /etc/init.d/apt-cacher-ng restart >/dev/null
fi
say "apt-cacher-ng is up on port 3142"

if [ ! -x .venv/bin/python ]; then
  quietly "creating .venv with $(python3 --version)" python3 -m venv .venv
fi
# The virtualenv is installed from a lock file (exact versions, every file's sha256:
# requirements/*.lock, refreshed by scripts/lock.sh), so a new release of a dependency
# cannot change what a first run installs. Reinstall whenever the lock changed since the
# last install; the dev lock (a superset) the first time --tests asks for it.
lock=requirements/main.lock
probe="import archbench, invoke, matplotlib, plotly"
if [ "$tests" = 1 ] || [ -e .venv/.archbench-dev ]; then
  lock=requirements/dev.lock
  probe="$probe, pytest, mypy"
fi
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ "$(cat .venv/.archbench-lock.sha256 2>/dev/null)" != "$want" ] \
   || ! .venv/bin/python -c "$probe" 2>/dev/null; then
  # --no-compile: Python writes the bytecode of what it imports when first imported;
  # compiling every file of plotly, pandas and scipy up front took minutes on 2 cores.
  quietly "installing archbench's dependencies from $lock into .venv" \
    .venv/bin/pip install --no-compile --require-hashes --no-deps -r "$lock"
  # archbench itself, editable, built by the locked setuptools (no download).
  quietly "installing archbench into .venv" .venv/bin/pip install --no-deps --no-build-isolation -e .
  echo "$want" > .venv/.archbench-lock.sha256
  if [ "$lock" = requirements/dev.lock ]; then touch .venv/.archbench-dev; fi
fi

# binfmt_misc and the qemu handlers, through archbench's own preflight.
.venv/bin/invoke doctor --fix --arch arm64,armv7,riscv64,ppc64le
say "ready"
