#!/bin/sh
# Resolve, natively, what the emulated stage installs: run with APT_CONFIG pointing at
# target-apt.conf (the target's architecture and dpkg status), it downloads the .debs
# apt would install into the target base and writes one line per .deb to OUT:
#   URL FILE SHA256:<hex>
# (the SHA256 of the file apt fetched and checked against the signed package lists).
#   sh resolve-debs.sh OUT PACKAGE...
set -eu
out=$1
shift
archives=/opt/archbench/target/cache/archives
apt-get update
apt-get install -y --print-uris "$@" > /tmp/archbench-uris.txt
apt-get install -y --download-only "$@"
: > "$out"
sed -n "s/^'\([^']*\)' \([^ ]*\) [0-9]* [^ ]*\$/\1 \2/p" /tmp/archbench-uris.txt |
  while read -r url file; do
    sha256=$(sha256sum "$archives/$file" | cut -d ' ' -f 1)
    printf '%s %s SHA256:%s\n' "$url" "$file" "$sha256" >> "$out"
  done
if [ ! -s "$out" ]; then
  echo "resolve-debs.sh: apt resolved no package to install" >&2
  exit 1
fi
rm -rf /opt/archbench/target/lists /opt/archbench/target/cache /tmp/archbench-uris.txt
