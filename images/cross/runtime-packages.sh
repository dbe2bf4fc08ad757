#!/bin/sh
# Print, one per line, the Debian packages (name:arch=version) that own the shared
# libraries the cross-built drivers need (their ELF NEEDED entries), so the emulated
# stage installs exactly these runtime libraries, at exactly these versions.
#   sh runtime-packages.sh [--own DIR] TRIPLET DEBIAN_ARCH BINARY...
# --own DIR[:DIR...]: libraries found in these folders come with the image (a libgnunetutil
# built from source into its prefix, the exchange's libtalerutil), so no package is looked
# up for them. A BINARY that does not
# exist is skipped (the optional drivers, perf_crypto_rsa).
set -eu
own=''
if [ "${1:-}" = --own ]; then
  own=$2
  shift 2
fi
triplet=$1 debian_arch=$2
shift 2
for bin in "$@"; do
  [ -f "$bin" ] || continue
  "$triplet-readelf" -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
done | sort -u | while read -r lib; do
  mine=''
  if [ -n "$own" ]; then
    for dir in $(printf '%s\n' "$own" | tr ':' ' '); do
      [ -e "$dir/$lib" ] && mine=1
    done
  fi
  [ -z "$mine" ] || continue
  owner=$(dpkg -S "*/$triplet/$lib" 2>/dev/null | sed -n "s/^\([^:]*\):$debian_arch: .*/\1/p" | head -n 1)
  if [ -z "$owner" ]; then
    echo "runtime-packages.sh: no $debian_arch package owns $lib" >&2
    exit 1
  fi
  line="$owner:$debian_arch=$(dpkg-query -W -f '${Version}' "$owner:$debian_arch")"
  # The line becomes an apt-get argument in the emulated stage: Debian's grammar only.
  if ! printf '%s\n' "$line" | grep -Eqx '[a-z0-9][a-z0-9+.-]*:[a-z0-9]+=[A-Za-z0-9.+~:-]+'; then
    echo "runtime-packages.sh: refusing $line" >&2
    exit 1
  fi
  printf '%s\n' "$line"
done | sort -u
