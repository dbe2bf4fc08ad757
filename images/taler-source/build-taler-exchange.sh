#!/bin/sh
# Build GNU Taler exchange's src/util (libtalerutil, taler-exchange-secmod-cs/-rsa and their
# benchmarks test_helper_cs/test_helper_rsa) against a GNUnet under GNUNET_PREFIX, and install
# src/util under PREFIX (the tests exec the installed secmods and read their configuration
# there). The harness's taler-helper suite runs the tests from TREE/src/util afterwards.
#
# usage: build-taler-exchange.sh [--host TRIPLET] [--jobs N] TREE PREFIX GNUNET_PREFIX
#
#   TREE           an exchange source tree (configure.ac, not autoreconf'ed), built in place:
#                  archbench hands over a copy (images/taler-source/README.md)
#   PREFIX         absolute install prefix of the exchange (TALER_PREFIX or
#                  TALER_EXCHANGE_PREFIX at run time, whichever this version reads)
#   GNUNET_PREFIX  where GNUnet's headers and libgnunet{util,json,curl,pq} are
#                  (/usr for Debian's libgnunet-dev; /opt/gnunet for a source build)
#   --host TRIPLET cross-compile for TRIPLET (configure --host)
#   --jobs N       parallel jobs (default: the number of CPUs)
#
# Why each step (checked by hand: ../shared/taler/README.md of the project's machines):
#   - autoreconf -fi: a git archive of the exchange has no configure.
#   - configure --disable-doc: the archives carry empty texinfo stubs only.
#   - only src/util is built: outside it 0.14.x trees lack GANA codes; the benchmarks
#     need nothing else. libpq-dev and libgnunetpq are configure checks only.
#   - make -C src/util install: the tests exec PREFIX/bin/taler-exchange-secmod-* and the
#     secmods read PREFIX/share/taler*/config.d.
#   - TREE/archbench-taler.txt records the version, the prefix variable this version's
#     os_installation.c reads (TALER_PREFIX up to 0.14.0, TALER_EXCHANGE_PREFIX in 0.14.1),
#     the GNUnet it was built against and the build's seconds, for the harness.
#
# Exit status: 0 on success, 2 on a bad argument, 1 when a step fails: the step is named and
# the last 25 lines of its log (the compiler's last lines) go to stderr.
set -eu

prog=build-taler-exchange.sh
die_usage() {
  echo "$prog: $*" >&2
  echo "usage: $prog [--host TRIPLET] [--jobs N] TREE PREFIX GNUNET_PREFIX" >&2
  exit 2
}
die() {
  echo "$prog: $*" >&2
  exit 1
}
started=$(date +%s)
step() {
  name=$1 log=$2
  shift 2
  echo "$prog: $name" >&2
  t0=$(date +%s)
  if ! "$@" > "$log" 2>&1; then
    tail -n 25 "$log" >&2 || :
    die "taler-exchange $version: step '$name' failed (log: $log; its last lines are above)"
  fi
  echo "$prog: $name took $(( $(date +%s) - t0 )) s" >&2
}

host='' jobs=''
while [ $# -gt 0 ]; do
  case $1 in
    --host)
      [ $# -ge 2 ] || die_usage "--host needs a triplet"
      host=$2; shift 2 ;;
    --jobs)
      [ $# -ge 2 ] || die_usage "--jobs needs a number"
      jobs=$2; shift 2 ;;
    --) shift; break ;;
    -*) die_usage "unknown option '$1'" ;;
    *) break ;;
  esac
done
[ $# -eq 3 ] || die_usage "expected TREE PREFIX GNUNET_PREFIX, got $# argument(s)"
tree=$1 prefix=$2 gnunet=$3
[ -f "$tree/configure.ac" ] && [ -f "$tree/src/util/test_helper_rsa.c" ] \
  || die_usage "TREE '$tree' is not an exchange tree with src/util/test_helper_rsa.c"
for path in "$prefix" "$gnunet"; do
  case $path in
    /*) ;;
    *) die_usage "'$path' must be an absolute path" ;;
  esac
  case $path in
    *[!A-Za-z0-9._/+-]*) die_usage "'$path' has characters other than A-Z a-z 0-9 . _ / + -" ;;
  esac
done
[ -f "$gnunet/include/gnunet/gnunet_util_lib.h" ] \
  || die_usage "GNUNET_PREFIX '$gnunet' has no include/gnunet/gnunet_util_lib.h"
if [ -n "$host" ]; then
  printf '%s\n' "$host" | grep -Eqx '[a-z0-9_]+(-[a-z0-9_.]+){1,3}' \
    || die_usage "--host '$host' is not a GNU triplet (like riscv64-linux-gnu)"
fi
if [ -n "$jobs" ]; then
  printf '%s\n' "$jobs" | grep -Eqx '[1-9][0-9]{0,3}' || die_usage "--jobs '$jobs' is not a number from 1 to 9999"
else
  jobs=$(nproc 2>/dev/null || echo 1)
fi
tree=$(cd "$tree" && pwd -P)
version=$(sed -n 's/^AC_INIT(\[taler-exchange\],[[:space:]]*\[\([^]]*\)\].*/\1/p' "$tree/configure.ac" | head -n 1)
[ -n "$version" ] || die "TREE's configure.ac names no taler-exchange version"
# The environment variable this version's libtalerutil reads for its installation prefix.
prefix_var=$(sed -n 's/.*\.env_varname = "\([A-Z_]*\)".*/\1/p' "$tree/src/util/os_installation.c" | head -n 1)
[ -n "$prefix_var" ] || prefix_var=TALER_PREFIX

gnunet_version=$(sed -n 's/^#define GNUNET_VERSION "\(.*\)"$/\1/p' "$gnunet/include/gnunet/gnunet_config.h" 2>/dev/null || :)
[ -n "$gnunet_version" ] || gnunet_version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$gnunet/include/gnunet/gnunet_config.h" 2>/dev/null || :)

# A GNUnet outside the linker's paths (a source build: meson installs no .la files, so
# libtool adds no run path for it) is found at run time through an rpath.
if [ "$gnunet" != /usr ]; then
  LDFLAGS="${LDFLAGS:-} -Wl,-rpath,$gnunet/lib"
  export LDFLAGS
fi
set -- --prefix="$prefix" --with-gnunet="$gnunet" --disable-doc
if [ -n "$host" ]; then
  set -- "$@" --host="$host"
fi
logs=$tree/archbench-logs
mkdir -p "$logs"
cd "$tree"
step "autoreconf -fi" "$logs/autoreconf.log" autoreconf -fi
step "configure (taler-exchange $version against GNUnet ${gnunet_version:-?} in $gnunet)" \
  "$logs/configure.log" ./configure "$@"
step "make -C src/util (libtalerutil, secmods, test_helper_*)" "$logs/make.log" \
  make -C src/util -j "$jobs" libtalerutil.la taler-exchange-secmod-cs taler-exchange-secmod-rsa \
  test_helper_cs test_helper_rsa
step "make -C src/util install" "$logs/install.log" make -C src/util -j "$jobs" install
[ -x "$prefix/bin/taler-exchange-secmod-cs" ] && [ -x "$prefix/bin/taler-exchange-secmod-rsa" ] \
  || die "taler-exchange $version: the install left no $prefix/bin/taler-exchange-secmod-cs/-rsa"
seconds=$(( $(date +%s) - started ))
printf 'version\t%s\nprefix\t%s\nprefix_variable\t%s\ngnunet_prefix\t%s\ngnunet_version\t%s\nbuild_seconds\t%s\n' \
  "$version" "$prefix" "$prefix_var" "$gnunet" "$gnunet_version" "$seconds" > "$tree/archbench-taler.txt"
echo "$prog: built taler-exchange $version src/util against GNUnet ${gnunet_version:-?} in $seconds s" >&2
