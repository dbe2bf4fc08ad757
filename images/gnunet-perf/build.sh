#!/bin/sh
# Build GNUnet's own perf_crypto_rsa and perf_crypto_cs for the gnunet-perf suite, from
# Debian's source package of the libgnunetutil installed in this image (same version),
# with archbench's minimal patch (perf-crypto-0.20.patch, next to this script) and shim
# headers for the two files GNUnet's build generates or needs a server for.
#
# Never fails the image build: when the source cannot be had (Debian's mirrors drop old
# source packages; bookworm's gnunet source is gone) or the patch does not apply, the
# reason goes to /opt/archbench/gnunet-perf/BUILD-FAILED and the suite reports it at run
# time, while the image's other suites work as before. On success PROVENANCE records the
# source package, the patch's sha256 and the compiler flags.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=/opt/archbench/gnunet-perf
srclist=/etc/apt/sources.list.d/archbench-deb-src.list
srcdeb822=/etc/apt/sources.list.d/archbench-deb-src.sources
work=$(mktemp -d)
cflags="-O2"
mkdir -p "$out"

cleanup() {
  rm -rf "$work" "$srclist" "$srcdeb822" /var/lib/apt/lists/*
}
fail() {
  printf '%s\n' "$*" > "$out/BUILD-FAILED"
  echo "gnunet-perf: not built: $*" >&2
  cleanup
  exit 0
}

src=$(dpkg-query -W -f='${source:Package}=${source:Version}' libgnunet-dev 2>/dev/null)
[ -n "$src" ] || fail "libgnunet-dev is not installed: the target's profile must include it"

# deb-src twins of the image's own apt sources: one-line (debootstrap) and deb822 (Ubuntu).
sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
  2>/dev/null > "$srclist"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && [ "$f" != "$srcdeb822" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >> "$srcdeb822"
done
[ -s "$srclist" ] || [ -s "$srcdeb822" ] || fail "no apt source to derive a deb-src entry from"

apt-get update -qq >/dev/null 2>&1 || fail "apt-get update with deb-src entries failed"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patch \
  >/dev/null 2>&1 || fail "cannot install 'patch'"
(cd "$work" && apt-get source --download-only "$src" >/dev/null 2>&1) \
  || fail "the source package $src is not on the mirror (deb-src); GNUnet's perf programs need it"

# The two sources from the upstream tarball; Debian's own patches must not touch them,
# or the programs would not be those of the installed library.
python3 - "$work" <<'PY' || fail "cannot extract the perf sources (see the build log)"
import sys, tarfile
from pathlib import Path

work = Path(sys.argv[1])
(orig,) = work.glob("*.orig.tar.*")
wanted = {"src/util/perf_crypto_cs.c", "src/util/perf_crypto_rsa.c"}
with tarfile.open(orig) as tar:
    for member in tar.getmembers():
        inner = member.name.split("/", 1)[-1]
        if inner in wanted and member.isfile():
            member.name = inner
            tar.extract(member, work / "tree", filter="data")
            wanted.discard(inner)
if wanted:
    sys.exit(f"{orig.name} lacks {', '.join(sorted(wanted))}")
for debian in work.glob("*.debian.tar.*"):
    with tarfile.open(debian) as tar:
        for member in tar.getmembers():
            if member.name.startswith("debian/patches/") and member.isfile():
                text = tar.extractfile(member).read().decode("utf-8", "replace")
                if "perf_crypto_" in text:
                    sys.exit(f"Debian's {member.name} changes a perf_crypto source")
PY

patch -d "$work/tree" -p1 --quiet --forward < "$here/perf-crypto-0.20.patch" \
  || fail "archbench's perf-crypto-0.20.patch does not apply to $src"

for program in perf_crypto_rsa perf_crypto_cs; do
  # shellcheck disable=SC2086  # cflags is a word list
  gcc $cflags -I"$here" -I/usr/include/gnunet "$work/tree/src/util/$program.c" \
    -o "$out/$program" -lgnunetutil || fail "$program does not compile against $src"
done

{
  echo "source=$src"
  echo "patch=perf-crypto-0.20.patch sha256 $(sha256sum "$here/perf-crypto-0.20.patch" | cut -d' ' -f1)"
  echo "cflags=$cflags"
} > "$out/PROVENANCE"
cleanup
echo "gnunet-perf: built perf_crypto_rsa and perf_crypto_cs from $src"
