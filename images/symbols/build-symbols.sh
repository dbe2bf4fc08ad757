#!/bin/sh
# Symbol files for Debian's stripped libraries (archbench.images.symbols, docs/counting.md).
#
#   build-symbols.sh rebuild ARCH TRIPLET OUT SOURCE VERSION BINARY LIBRARY
#     Rebuilds Debian source package SOURCE=VERSION for ARCH (cross-built when ARCH is not
#     this machine's) with DEB_BUILD_OPTIONS=nostrip and Debian's own flags otherwise
#     (same optimisation, so the code is the code Debian ships), and keeps the library
#     LIBRARY (a file name glob, e.g. 'libgcrypt.so.20.*') of binary package BINARY with
#     its symbol table (debug sections dropped: the names are what counting needs).
#   build-symbols.sh dbg ARCH TRIPLET OUT PACKAGE VERSION
#     Unpacks Debian's PACKAGE-dbg=VERSION (libc6-dbg) for ARCH: its detached debug files
#     under usr/lib/debug/.build-id, kept by build-id with their symbol tables.
#
# A package whose build fails is recorded in OUT/failures.tsv (name, version, reason) and
# counting then names that library's code as before; the image is still made, so a build
# that cannot work is not tried again. What may work later (a download: no network, a
# mirror without the file) fails the image instead, which is then tried again next time.
# Each file made is recorded in OUT/origins.tsv: path under OUT, source, version, arch, how.
set -u
mode=$1 arch=$2 triplet=$3 out=$4
shift 4
mkdir -p "$out"
# Debian's buildds build in /build/reproducible-path (trixie; the source tree's path can
# reach the code only through -ffile-prefix-map, which maps it away, but build where they do).
work=/build/reproducible-path
rm -rf "$work" && mkdir -p "$work"
log=/tmp/build-symbols.log

fail() {
    printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$out/failures.tsv"
    tail -n 30 "$log" >&2 2>/dev/null
    rm -rf "$work" "$log"
    exit 0
}

abort() {  # a download failed: fail the image (tried again next time), nothing recorded
    echo "build-symbols.sh: $1" >&2
    tail -n 30 "$log" >&2 2>/dev/null
    exit 1
}

keep_symbols() {  # FILE DEST: DEST = FILE without debug sections, symbol table kept
    "$triplet-objcopy" --strip-debug "$1" "$2" || cp "$1" "$2"
}

case "$mode" in
rebuild)
    src=$1 version=$2 binary=$3 library=$4
    cd "$work" || fail "$src" "$version" "no work folder"
    here=$(dpkg --print-architecture)
    cross=""
    [ "$arch" = "$here" ] || cross="-a$arch"
    echo "== $src $version for $arch: source and build dependencies"
    apt-get source --only-source "$src=$version" > "$log" 2>&1 \
        || abort "apt-get source $src=$version failed"
    apt-get build-dep -y --no-install-recommends --arch-only ${cross:+"$cross"} -Pnocheck,nodoc \
        --only-source "$src=$version" >> "$log" 2>&1 \
        || abort "the build dependencies of $src=$version for $arch cannot be installed"
    cd "$work/$src-"*/ || fail "$src" "$version" "no source tree"
    echo "== $src $version for $arch: dpkg-buildpackage -B $cross (nostrip)"
    started=$(date +%s)
    DEB_BUILD_OPTIONS="nostrip nocheck nodoc parallel=$(nproc)" DEB_BUILD_PROFILES="nocheck nodoc" \
        dpkg-buildpackage -B ${cross:+"$cross"} -uc -us -j"$(nproc)" >> "$log" 2>&1 \
        || fail "$src" "$version" "dpkg-buildpackage failed: $(tail -n 1 "$log")"
    took=$(( $(date +%s) - started ))
    found=$(find "debian/$binary" -name "$library" -type f | head -n 1)
    [ -n "$found" ] || fail "$src" "$version" "the build made no $library in debian/$binary"
    name=$(basename "$found")
    keep_symbols "$found" "$out/$name"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$src" "$version" "$arch" \
        "rebuilt from source, DEB_BUILD_OPTIONS=nostrip, ${cross:+cross-}built in ${took} s" \
        >> "$out/origins.tsv"
    echo "== $name: $(wc -c < "$out/$name") bytes, build ${took} s"
    ;;
dbg)
    package=$1 version=$2
    cd "$work" || fail "$package" "$version" "no work folder"
    apt-get download "$package:$arch=$version" > "$log" 2>&1 \
        || abort "apt-get download $package:$arch=$version failed"
    dpkg-deb -x ./*.deb unpacked >> "$log" 2>&1 || fail "$package" "$version" "dpkg-deb -x failed"
    [ -d unpacked/usr/lib/debug/.build-id ] \
        || fail "$package" "$version" "no usr/lib/debug/.build-id in $package"
    cd unpacked/usr/lib/debug || fail "$package" "$version" "no debug folder"
    find .build-id -name '*.debug' -type f | while read -r f; do
        mkdir -p "$out/$(dirname "$f")"
        keep_symbols "$f" "$out/$f"
        printf '%s\t%s\t%s\t%s\t%s\n' "${f#./}" "$package" "$version" "$arch" \
            "Debian's detached debug file" >> "$out/origins.tsv"
    done
    ;;
*)
    echo "build-symbols.sh: unknown mode $mode" >&2
    exit 64
    ;;
esac
rm -rf "$work" "$log"
