#!/bin/sh
# archbench recipe "taler-helper": build GNUnet and taler-exchange from pinned
# release tarballs and the exchange's security-module benchmarks
# test_helper_rsa / test_helper_cs (run later by harness/abh/suites/taler_helper.py).
#
#   taler-helper.sh GNUNET_VERSION GNUNET_URL GNUNET_SHA256 \
#                   EXCHANGE_VERSION EXCHANGE_URL EXCHANGE_SHA256
#
# UNTESTED on archbench's own machines: they cannot reach the upstream
# sources. The fetch and checksum steps are tested (file:// URLs); the build
# steps follow the projects' documented ./configure && make && make install.
# Environment: ARCHBENCH_RECIPE_DIR (default /opt/archbench/taler),
# ARCHBENCH_RECIPE_STEPS=fetch to stop after fetching and checking.
set -eu

DIR=${ARCHBENCH_RECIPE_DIR:-/opt/archbench/taler}
PREFIX=/usr/local

fail() {
	echo "archbench recipe taler-helper: $*" >&2
	exit 1
}

[ $# -eq 6 ] || fail "expected 6 arguments (version, url, sha256 of gnunet, then of the exchange), got $#"

fetch() { # name version url sha256
	name=$1 version=$2 url=$3 sum=$4
	command -v curl >/dev/null 2>&1 || fail "curl is not installed: add curl to the profile's packages"
	mkdir -p "$DIR/src" "$DIR/$name"
	file="$DIR/src/$name-$version.tar"
	if ! curl -fsSL --retry 2 -o "$file" "$url" 2>"$DIR/src/$name.curl.log"; then
		fail "cannot fetch $name $version from $url ($(tail -n 1 "$DIR/src/$name.curl.log")). The recipe needs the upstream release tarball: set profiles.<profile>.recipe.$name.url in matrix.yml to a copy this engine can reach (a local mirror). This recipe is untested on archbench's CI machines, which cannot reach upstream (docs/taler-recipe.md)."
	fi
	got=$(sha256sum "$file" | cut -d ' ' -f 1)
	[ "$got" = "$sum" ] || fail "$url has sha256 $got, not the pinned $sum: refusing to build an unpinned $name"
	tar -xf "$file" -C "$DIR/$name" --strip-components=1 || fail "$url is not a tar archive"
	echo "$version" >"$DIR/$name-version"
}

fetch gnunet "$1" "$2" "$3"
fetch exchange "$4" "$5" "$6"
[ "${ARCHBENCH_RECIPE_STEPS:-all}" = fetch ] && exit 0

jobs=$(nproc 2>/dev/null || echo 1)
cd "$DIR/gnunet"
./configure --prefix="$PREFIX" --disable-documentation || fail "gnunet $1: configure failed"
make -j"$jobs" && make install && ldconfig || fail "gnunet $1: build failed"
cd "$DIR/exchange"
./configure --prefix="$PREFIX" --with-gnunet="$PREFIX" || fail "taler-exchange $4: configure failed"
make -j"$jobs" && make install && ldconfig || fail "taler-exchange $4: build failed"
make -C src/util test_helper_rsa test_helper_cs || fail "taler-exchange $4: test_helper_* failed to build"
