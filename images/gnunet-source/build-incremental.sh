#!/bin/sh
# Build libgnunetutil incrementally in a persistent build tree (archbench.images.incremental).
# Runs in a build container of the toolchain image, with two Docker volumes: the build tree
# of one (source repository x architecture x toolchain x build options) key at TREE, and the
# ccache of that toolchain at CCACHE_DIR.
#
# usage: build-incremental.sh KEY SOURCE TREE OUT [build-libgnunetutil.sh options...]
#
#   KEY     the tree's key (hex): the stamp names it, a tree stamped with another is not used
#   SOURCE  the prepared source tree (only read)
#   TREE    the volume's mount point: TREE/b is build-libgnunetutil.sh's BUILD, TREE/STAMP and
#           TREE/MANIFEST say that it is whole
#   OUT     gets prefix.tar (the installed prefix, packed reproducibly: names sorted, mtime 0,
#           owner 0:0), build-info.txt, state (clean or incremental, and why), ccache.txt
#           (this build's hits and misses, from CCACHE_STATSLOG)
#
# Why each step:
#   - The tree is used only when STAMP names KEY and every file under TREE/b still has the
#     sha256 MANIFEST lists: a build killed midway (kill -9, a lost engine, a full disk)
#     leaves no STAMP, since STAMP and MANIFEST are removed before anything is touched and
#     written last; a byte flipped in an object fails the check. Either way the tree is
#     emptied and built clean (ccache, whose own entries carry checksums, keeps that short).
#   - A tree is never shared by two builds at once: the host holds a lock per tree
#     (archbench.images.incremental).
set -eu
prog=build-incremental.sh
[ $# -ge 4 ] || { echo "usage: $prog KEY SOURCE TREE OUT [options...]" >&2; exit 2; }
key=$1 source_dir=$2 tree=$3 out=$4
shift 4
printf '%s\n' "$key" | grep -Eqx '[0-9a-f]{16,64}' || { echo "$prog: KEY '$key' is not hex" >&2; exit 2; }
mkdir -p "$out" "$tree"
here=$(dirname "$0")

state=''
if [ ! -f "$tree/STAMP" ]; then
  if [ -n "$(ls -A "$tree")" ]; then
    state='clean (the tree had no stamp: an earlier build did not finish)'
  else
    state='clean (new tree)'
  fi
elif [ "$(cat "$tree/STAMP")" != "$key" ]; then
  state='clean (the tree was stamped with another key)'
elif ! (cd "$tree" && sha256sum --quiet --strict -c MANIFEST) > "$out/manifest-check.log" 2>&1; then
  state="clean (the tree differs from its manifest: $(head -n 1 "$out/manifest-check.log"))"
elif [ -n "$(cd "$tree" && find b -type f | LC_ALL=C sort | LC_ALL=C comm -23 - MANIFEST.files)" ]; then
  state='clean (the tree has files its manifest does not list)'
else
  state=incremental
fi
echo "$prog: $state" >&2
# From here until the end the tree is not whole.
rm -f "$tree/STAMP" "$tree/MANIFEST" "$tree/MANIFEST.files"
sync
if [ "$state" != incremental ]; then
  find "$tree" -mindepth 1 -delete
fi
printf '%s\n' "$state" > "$out/state"

# This build's own ccache counts: CCACHE_STATSLOG (set by the host to a file in OUT) logs
# each compilation; the cache's global counters would mix in concurrent builds.
rm -f "${CCACHE_STATSLOG:-/nonexistent}"
sh "$here/build-libgnunetutil.sh" --incremental "$@" "$source_dir" "$tree/b" /opt/gnunet
cp "$tree/b/build-info.txt" /opt/gnunet/build-info.txt
count() { grep -cx "$1" "${CCACHE_STATSLOG:-/nonexistent}" 2>/dev/null || :; }
printf 'direct_cache_hit\t%s\npreprocessed_cache_hit\t%s\ncache_miss\t%s\n' \
  "$(count direct_cache_hit)" "$(count preprocessed_cache_hit)" "$(count cache_miss)" \
  > "$out/ccache.txt"

# The manifest: every file under b, its sha256; STAMP last.
(cd "$tree" && find b -type f | LC_ALL=C sort > MANIFEST.files.part \
  && tr '\n' '\0' < MANIFEST.files.part | xargs -0 -r sha256sum > MANIFEST.part)
sync
mv "$tree/MANIFEST.files.part" "$tree/MANIFEST.files"
mv "$tree/MANIFEST.part" "$tree/MANIFEST"
printf '%s\n' "$key" > "$tree/STAMP.part"
sync
mv "$tree/STAMP.part" "$tree/STAMP"

cp /opt/gnunet/build-info.txt "$out/build-info.txt"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
  -C /opt/gnunet -cf "$out/prefix.tar.part" .
mv "$out/prefix.tar.part" "$out/prefix.tar"
echo "$prog: done ($state)" >&2
