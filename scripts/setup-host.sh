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

# mmdebstrap: the base images' bootstrap (archbench.build.bases); debootstrap: its
# fallback where mmdebstrap is missing (Debian 11 and older).
packages=(docker.io qemu-user-static mmdebstrap debootstrap python3 python3-venv)
if [ "$tests" = 1 ]; then
  # texlive + poppler-utils: the report compile test (pdflatex, pdftoppm);
  # curl: the taler-helper recipe's fetch test; openssh-server (+ client): the ssh:// host
  # test, whose fixture starts its own sshd on a loopback port; gcc, make, pkgconf and the
  # -dev packages: the native harness tests; chromium: the results page's browser test
  # (headless, from disk).
  packages+=(curl chromium openssh-client openssh-server
             gcc make pkgconf libgnunet-dev libsodium-dev
             texlive-latex-base texlive-latex-recommended texlive-latex-extra
             texlive-fonts-recommended poppler-utils)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [[ " ${missing[*]} " == *" openssh-server "* ]] && [ -d /run/systemd/system ]; then
    # The package starts a system sshd on port 22; the tests need only the binary.
    say "openssh-server installed for the tests; leaving its system service off"
    systemctl disable --now ssh >/dev/null 2>&1 || true
  fi
fi

if ! docker info >/dev/null 2>&1; then
  if [ -d /run/systemd/system ]; then
    say "starting docker with systemd"
    systemctl start docker
  else
    say "starting dockerd (log: /var/log/archbench-dockerd.log)"
    nohup dockerd >/var/log/archbench-dockerd.log 2>&1 &
  fi
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up; see /var/log/archbench-dockerd.log" >&2; exit 1; }
fi
say "docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) is up"

# apt-cacher-ng: one package cache for every debootstrap and image build, all architectures
# (invoke.yaml apt_proxy: auto uses it when it listens on port 3142). Debian mirrors are
# remapped to the backend in backends_debian: this machine's own mirror from its apt sources.
if ! dpkg-query -W -f='${Status}' apt-cacher-ng 2>/dev/null | grep -q "install ok installed"; then
  say "installing apt-cacher-ng (package cache for builds)"
  echo "apt-cacher-ng apt-cacher-ng/tunnelenable boolean false" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends apt-cacher-ng >/dev/null
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
  say "creating .venv"
  python3 -m venv .venv
fi
# Reinstall whenever pyproject.toml (the dependency list) changed since the last install,
# and add the dev extras the first time --tests asks for them.
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
extras=""
probe="import archbench, invoke, matplotlib, plotly"
if [ "$tests" = 1 ] || [ -e .venv/.archbench-dev ]; then
  extras="[dev]"
  probe="$probe, pytest, mypy"
fi
if [ "$(cat .venv/.archbench-pyproject.sha256 2>/dev/null)" != "$want" ] \
   || ! .venv/bin/python -c "$probe" 2>/dev/null; then
  say "installing archbench${extras:+ with its dev extras} into .venv"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".${extras}"
  echo "$want" > .venv/.archbench-pyproject.sha256
  if [ -n "$extras" ]; then touch .venv/.archbench-dev; fi
fi

# binfmt_misc and the qemu handlers, through archbench's own preflight.
.venv/bin/invoke doctor --fix --arch arm64,armv7,riscv64,ppc64le
say "ready"
