#!/bin/sh
# Build ONLY libgnunetutil (and optionally GNUnet's perf_crypto_rsa) from a GNUnet source tree
# and install its headers, the library and gnunetutil.pc under a prefix, for archbench's
# blindsig driver (harness/Makefile: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig,
# LDFLAGS=-Wl,-rpath,PREFIX/lib).
#
# usage: build-libgnunetutil.sh [--cross-file FILE | --host TRIPLET] [--deb-arch ARCH]
#                               [--perf] [--taler] [--jobs N] SOURCE BUILD PREFIX
#
#   SOURCE  a GNUnet tree, only read: a meson tree (0.21 and later: meson.build at the top;
#           a git checkout, with or without .git, submodules not needed) or an autotools
#           release tarball's tree (0.19/0.20: configure and the generated GANA headers,
#           e.g. Debian's gnunet_0.20.0.orig.tar.xz)
#   BUILD   an empty or absent directory outside SOURCE: gets the copy of SOURCE (src/),
#           the build tree (meson/ or the copy itself for autotools) and the logs (*.log)
#   PREFIX  absolute install prefix: PREFIX/include/gnunet/*.h, PREFIX/lib/libgnunetutil.so*,
#           PREFIX/lib/pkgconfig/gnunetutil.pc; with --perf also
#           PREFIX/libexec/gnunet-perf/perf_crypto_rsa
#   --cross-file FILE  meson cross file (meson trees): cross-compile for its host machine
#   --host TRIPLET     autotools --host (autotools trees): cross-compile for TRIPLET
#   --deb-arch ARCH    Debian architecture whose dpkg-buildflags to use; default: the build
#                      machine's, or TRIPLET's with --host; required with --cross-file
#   --perf             also build GNUnet's own perf_crypto_rsa (the gnunet-perf suite),
#                      unpatched, into PREFIX/libexec/gnunet-perf with a PROVENANCE file;
#                      a failure is written to BUILD-FAILED there and the library's build
#                      goes on. perf_crypto_cs is not built: no target upstream since 0.21
#                      (FIXME FTBFS), and 0.19/0.20's does not compile as shipped
#   --jobs N           parallel jobs (default: the number of CPUs)
#   --taler            also build libgnunetjson, libgnunetcurl and libgnunetpq (meson trees),
#                      which the Taler exchange's src/util links or checks for, into PREFIX/lib
#   --incremental      (meson trees) BUILD may hold an earlier build of this script with the
#                      same options: SOURCE is synced into BUILD/src with rsync -rlpc --delete
#                      (by checksum, without -t: an unchanged file keeps its old mtime, so
#                      ninja recompiles only what changed), meson setup runs only when BUILD
#                      has no build.ninja or the version changed (--reconfigure; else
#                      `ninja build.ninja` regenerates it where a meson.build changed, so
#                      that meson's introspection names the library's new file), and
#                      `ninja -t cleandead` removes outputs no longer in the build graph.
#                      build-info.txt then has no build_seconds, so that the same code gives
#                      the same bytes (images/gnunet-source/build-incremental.sh)
#
# Why each step:
#   - The tree is copied (without .git) and built from the copy: the user's tree, dirty or
#     not, is never written to.  GNUnet's scripts/get_version.sh, which meson runs in the
#     source root, would otherwise run `git describe --tags` (any tag, e.g.
#     last-gnunet-0.20-compatible) and write .version into it.
#   - .version: kept if the tree has one; else written from `git describe --tags
#     --match 'v[0-9]*' --dirty` of SOURCE.  Anything that is not x.y.z[suffix] is refused:
#     get_version.sh turns it into GNUNET_MINOR_VERSION "unknown" (0 in #if) or a string no
#     #if can read, and blindsig picks its API from those macros.
#   - doc/handbook/meson.build: the handbook is a git submodule from 0.24 on and the root
#     meson.build always enters doc/handbook; an empty file where it is missing lets a
#     library-only build configure, and nothing later uses what the handbook defines.
#   - --buildtype=plain with Debian's dpkg-buildflags CFLAGS/CPPFLAGS/LDFLAGS: GNUnet's
#     project() sets no default, so meson's default buildtype=debug (-O0 -g) would apply,
#     and a source build would then be compared with Debian's -O2 packages: that compares
#     compilers' optimisation levels, not GNUnet versions.
#   - `meson compile gnunetutil` builds that library and what it needs, nothing else; the
#     install is by hand because `meson install` builds and installs the whole tree.  The
#     headers are what meson would install into include/gnunet (meson introspect
#     --installed), gnunet_config.h (generated) among them.
#   - autotools: configure (--host when cross), then make in src/include and for
#     libgnunetutil.la only; the tarball's generated files are used as shipped.
#
# Exit status: 0 on success, 2 on a bad argument, 1 when a step fails (its log named).
set -eu

prog=build-libgnunetutil.sh
die_usage() {
  echo "$prog: $*" >&2
  echo "usage: $prog [--cross-file FILE | --host TRIPLET] [--deb-arch ARCH] [--perf] [--taler] [--jobs N] SOURCE BUILD PREFIX" >&2
  exit 2
}
die() {
  echo "$prog: $*" >&2
  exit 1
}
# step NAME LOG COMMAND...: run COMMAND with its output in LOG; on failure name both.
# Each step says how long it took, so that a build log shows where the time went.
started=$(date +%s)
step() {
  name=$1 log=$2
  shift 2
  echo "$prog: $name" >&2
  t0=$(date +%s)
  if ! "$@" > "$log" 2>&1; then
    tail -n 25 "$log" >&2 || :
    die "$name failed (log: $log)"
  fi
  echo "$prog: $name took $(( $(date +%s) - t0 )) s" >&2
}
# perf_step NAME LOG COMMAND...: like step, but a failure is recorded in $perf_failed for
# the gnunet-perf suite to report, and the library's build goes on.
perf_failed=''
perf_step() {
  name=$1 log=$2
  shift 2
  echo "$prog: $name" >&2
  if ! "$@" > "$log" 2>&1; then
    tail -n 25 "$log" >&2 || :
    perf_failed="$name failed in the image build: $(grep -m 1 -i 'error' "$log" || tail -n 1 "$log")"
    echo "$prog: $name failed (log: $log); the gnunet-perf suite will say so, the library is built" >&2
  fi
}
absolute() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$(pwd)" "$1" ;;
  esac
}

cross_file='' host='' deb_arch='' perf=0 taler=0 jobs='' incremental=0
while [ $# -gt 0 ]; do
  case $1 in
    --cross-file)
      [ $# -ge 2 ] || die_usage "--cross-file needs a file"
      cross_file=$2; shift 2 ;;
    --host)
      [ $# -ge 2 ] || die_usage "--host needs a triplet"
      host=$2; shift 2 ;;
    --deb-arch)
      [ $# -ge 2 ] || die_usage "--deb-arch needs an architecture"
      deb_arch=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    --taler) taler=1; shift ;;
    --incremental) incremental=1; shift ;;
    --jobs)
      [ $# -ge 2 ] || die_usage "--jobs needs a number"
      jobs=$2; shift 2 ;;
    --) shift; break ;;
    -*) die_usage "unknown option '$1'" ;;
    *) break ;;
  esac
done
[ $# -eq 3 ] || die_usage "expected SOURCE BUILD PREFIX, got $# argument(s)"
source_dir=$1 build_dir=$2 prefix=$3

# ---- arguments
[ -d "$source_dir" ] || die_usage "SOURCE '$source_dir' is not a directory"
source_dir=$(cd "$source_dir" && pwd -P)
if [ -f "$source_dir/meson.build" ]; then
  kind=meson
elif [ -x "$source_dir/configure" ] && [ -f "$source_dir/src/util/Makefile.in" ]; then
  kind=autotools
elif [ -f "$source_dir/configure.ac" ]; then
  die_usage "SOURCE '$source_dir' is an autotools tree without configure (a git checkout of 0.20 or older): use its release tarball, which ships configure and the generated GANA headers"
else
  die_usage "SOURCE '$source_dir' is not a GNUnet tree (no meson.build, no configure)"
fi
case $prefix in
  /*) ;;
  *) die_usage "PREFIX '$prefix' must be an absolute path" ;;
esac
case $prefix in
  *[!A-Za-z0-9._/+-]*) die_usage "PREFIX '$prefix' has characters other than A-Z a-z 0-9 . _ / + -" ;;
esac
[ "$prefix" != / ] || die_usage "PREFIX must not be /"
build_dir=$(absolute "$build_dir")
case $build_dir in
  *[!A-Za-z0-9._/+-]*) die_usage "BUILD '$build_dir' has characters other than A-Z a-z 0-9 . _ / + -" ;;
esac
if [ -e "$build_dir" ]; then
  [ -d "$build_dir" ] || die_usage "BUILD '$build_dir' exists and is not a directory"
  [ "$incremental" = 1 ] || [ -z "$(ls -A "$build_dir")" ] || die_usage "BUILD '$build_dir' is not empty"
fi
if [ "$incremental" = 1 ]; then
  [ "$kind" = meson ] || die_usage "--incremental is for meson trees (GNUnet 0.21 and later)"
  command -v rsync >/dev/null 2>&1 || die "--incremental needs rsync"
fi
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd -P)
case $build_dir/ in
  "$source_dir"/*) die_usage "BUILD '$build_dir' is inside SOURCE: SOURCE is only read" ;;
esac
case $prefix/ in
  "$source_dir"/*) die_usage "PREFIX '$prefix' is inside SOURCE: SOURCE is only read" ;;
esac
if [ -n "$cross_file" ] && [ -n "$host" ]; then
  die_usage "--cross-file (meson) and --host (autotools) exclude each other"
fi
if [ -n "$cross_file" ]; then
  [ "$kind" = meson ] || die_usage "--cross-file is for meson trees; this autotools tree takes --host TRIPLET"
  [ -f "$cross_file" ] && [ -r "$cross_file" ] || die_usage "--cross-file '$cross_file' is not a readable file"
  cross_file=$(absolute "$cross_file")
  [ -n "$deb_arch" ] || die_usage "--cross-file needs --deb-arch ARCH (whose dpkg-buildflags to use)"
fi
if [ -n "$host" ]; then
  [ "$kind" = autotools ] || die_usage "--host is for autotools trees; this meson tree takes --cross-file FILE"
  printf '%s\n' "$host" | grep -Eqx '[a-z0-9_]+(-[a-z0-9_.]+){1,3}' \
    || die_usage "--host '$host' is not a GNU triplet (like riscv64-linux-gnu)"
fi
if [ -n "$deb_arch" ]; then
  printf '%s\n' "$deb_arch" | grep -Eqx '[a-z0-9]+(-[a-z0-9]+)*' \
    || die_usage "--deb-arch '$deb_arch' is not a Debian architecture name (like riscv64)"
fi
if [ -n "$jobs" ]; then
  printf '%s\n' "$jobs" | grep -Eqx '[1-9][0-9]{0,3}' || die_usage "--jobs '$jobs' is not a number from 1 to 9999"
else
  jobs=$(nproc 2>/dev/null || echo 1)
fi

command -v dpkg-buildflags >/dev/null 2>&1 || die "dpkg-buildflags not found: install dpkg-dev"
if [ -z "$deb_arch" ] && [ -n "$host" ]; then
  deb_arch=$(dpkg-architecture -t "$host" -q DEB_HOST_ARCH 2>/dev/null) \
    || die_usage "--host '$host': dpkg-architecture knows no Debian architecture for it; give --deb-arch"
fi
if [ -n "$deb_arch" ]; then
  DEB_HOST_ARCH=$deb_arch
  export DEB_HOST_ARCH
fi
# ---- the copy
copy=$build_dir/src
mkdir -p "$copy"
# From the copy, as in a Debian package build: -ffile-prefix-map maps it to ".".
CFLAGS=$(cd "$copy" && dpkg-buildflags --get CFLAGS)
CPPFLAGS=$(cd "$copy" && dpkg-buildflags --get CPPFLAGS)
LDFLAGS=$(cd "$copy" && dpkg-buildflags --get LDFLAGS)
export CFLAGS CPPFLAGS LDFLAGS
if [ "$incremental" = 1 ]; then
  # What this script adds to the copy (the handbook stub, meson's data stubs, .version) is
  # protected from --delete: deleting and re-making it would change its mtime and make
  # meson regenerate the build on every sync.
  set -- --filter='P /doc/handbook/meson.build' --filter='P /.version'
  if [ -f "$build_dir/stubbed.list" ]; then
    while read -r name; do
      set -- "$@" --filter="P /$name"
    done < "$build_dir/stubbed.list"
  fi
  echo "$prog: syncing $source_dir (without .git) into $copy (by checksum)" >&2
  rsync -rlpc --delete --exclude=/.git "$@" "$source_dir"/ "$copy"/
  # A .version the source has not (any longer) is written again below.
  if [ ! -f "$source_dir/.version" ] && [ "$kind" = meson ] && [ -f "$copy/.version" ] \
     && [ -d "$source_dir/.git" ]; then
    rm -f "$copy/.version"
  fi
else
  echo "$prog: copying $source_dir (without .git) to $copy" >&2
  (cd "$source_dir" && tar --exclude=.git -cf - .) | (cd "$copy" && tar -xf -)
fi

version_ok() {
  printf '%s\n' "$1" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+([-+~.][A-Za-z0-9.+~-]*)?'
}
if [ -f "$copy/.version" ]; then
  version=$(head -n 1 "$copy/.version")
  version_ok "$version" || die "SOURCE's .version says '$version', not x.y.z[suffix]: GNUnet would declare no usable version"
elif [ "$kind" = meson ]; then
  command -v git >/dev/null 2>&1 || die "SOURCE has no .version and git is not installed to describe it"
  version=$(git -C "$source_dir" describe --tags --match 'v[0-9]*' --dirty 2>/dev/null) \
    || die "SOURCE has no .version and 'git describe --tags --match v[0-9]*' finds no release tag (a shallow clone?): write .version into a copy or fetch the tags"
  version=${version#v}
  version_ok "$version" || die "git describe gives '$version', not x.y.z[suffix]"
  if [ "$(cat "$copy/.version" 2>/dev/null || :)" != "$version" ]; then
    printf '%s\n' "$version" > "$copy/.version"
  fi
else
  version=''
fi

# ---- build
if [ "$kind" = meson ]; then
  command -v meson >/dev/null 2>&1 || die "meson not found: install meson and ninja-build"
  [ -f "$copy/doc/handbook/meson.build" ] || { mkdir -p "$copy/doc/handbook" && : > "$copy/doc/handbook/meson.build"; }
  mb=$build_dir/meson
  set -- --prefix="$prefix" --libdir=lib --buildtype=plain --wrap-mode=nodownload
  if [ -n "$cross_file" ]; then
    set -- "$@" --cross-file "$cross_file"
  fi
  setup_needed=1
  if [ "$incremental" = 1 ] && [ -f "$mb/build.ninja" ]; then
    if [ "$(cat "$build_dir/configured-version" 2>/dev/null || :)" = "$version" ]; then
      # Regenerated now when a meson.build changed: `meson compile gnunetutil` names its
      # target from meson's introspection files, which only a regeneration updates (a
      # changed soversion would otherwise be asked for by its old file name).
      setup_needed=0
      step "meson setup kept ($version), regenerated if a meson.build changed" \
        "$build_dir/regenerate.log" ninja -C "$mb" build.ninja
    else
      step "meson setup --reconfigure ($version)" "$build_dir/setup.log" \
        meson setup --reconfigure "$@" "$mb" "$copy"
      setup_needed=0
    fi
  elif [ "$incremental" = 1 ]; then
    rm -rf "$mb"
  fi
  stubbed=''
  if [ "$incremental" = 1 ] && [ -f "$build_dir/stubbed.list" ]; then
    stubbed=" $(tr '\n' ' ' < "$build_dir/stubbed.list")"
    stubbed=${stubbed% }
  fi
  if [ "$setup_needed" = 1 ]; then
  # A data file a meson.build names but the tree lacks (a development snapshot taken
  # without README, COPYING and .conf files; archbench writes the literal ones before
  # the build, these are the computed names such as 'test_' + p + '.conf'): meson setup
  # names it; an empty one in the copy lets setup go on.  At most 64, inside the copy,
  # each listed in build-info.txt (stubbed_files).
  n_stubs=0
  while ! meson setup "$@" "$mb" "$copy" > "$build_dir/setup.log" 2>&1; do
    missing=$(sed -n "s|^\(.*\)meson.build:[0-9]*:[0-9]*: ERROR: File \([A-Za-z0-9_.+-]*\) does not exist\.\$|\1\2|p" "$build_dir/setup.log" | head -n 1)
    # meson names the file relative to the working directory (/ in an image build).
    missing=${missing#"$copy"/}
    missing=${missing#"${copy#/}"/}
    case $missing in
      /*|*..*) missing='' ;;
    esac
    if [ -z "$missing" ] || [ "$n_stubs" -ge 64 ] || [ -e "$copy/$missing" ] \
       || [ ! -d "$(dirname "$copy/$missing")" ]; then
      step "meson setup ($version, CFLAGS $CFLAGS)" "$build_dir/setup.log" meson setup "$@" "$mb" "$copy"
      break
    fi
    : > "$copy/$missing"
    stubbed="$stubbed $missing"
    n_stubs=$((n_stubs + 1))
    echo "$prog: meson setup needs $missing, absent from the tree: an empty one in the copy" >&2
    rm -rf "$mb"
  done
  echo "$prog: meson setup ($version, CFLAGS $CFLAGS) done" >&2
  fi
  if [ "$incremental" = 1 ]; then
    printf '%s\n' "$version" > "$build_dir/configured-version"
    if [ -n "$stubbed" ]; then
      printf '%s\n' $stubbed > "$build_dir/stubbed.list"
    else
      : > "$build_dir/stubbed.list"
    fi
  fi
  step "meson compile gnunetutil" "$build_dir/compile.log" meson compile -C "$mb" -j "$jobs" gnunetutil
  if [ "$taler" = 1 ]; then
    step "meson compile gnunetjson gnunetcurl gnunetpq (for the Taler exchange)" \
      "$build_dir/compile-taler.log" meson compile -C "$mb" -j "$jobs" gnunetjson gnunetcurl gnunetpq
  fi
  if [ "$perf" = 1 ]; then
    perf_step "meson compile perf_crypto_rsa" "$build_dir/perf.log" meson compile -C "$mb" -j "$jobs" perf_crypto_rsa
  fi
  if [ "$incremental" = 1 ]; then
    step "ninja -t cleandead" "$build_dir/cleandead.log" ninja -C "$mb" -t cleandead
    # An earlier version's soname links (libgnunetutil.so.18 -> its removed .so.18.0.0)
    # are no ninja outputs: dangling links go too, lest they join the prefix.
    find "$mb" -xtype l -delete
  fi
  step "meson introspect --installed" "$build_dir/installed.log" sh -c \
    'meson introspect "$1" --installed > "$2"' sh "$mb" "$build_dir/installed.json"
  mkdir -p "$prefix/include/gnunet" "$prefix/lib/pkgconfig"
  # The header files meson would install into PREFIX/include/gnunet.
  step "install headers" "$build_dir/install.log" python3 - "$build_dir/installed.json" "$prefix/include/gnunet" <<'PY'
import json, shutil, sys
from pathlib import Path

installed = json.loads(Path(sys.argv[1]).read_text())
dest = Path(sys.argv[2])
headers = [src for src, dst in installed.items()
           if Path(dst).parent == dest and src.endswith(".h")]
if not any(Path(h).name == "gnunet_config.h" for h in headers):
    sys.exit("meson would install no gnunet_config.h into " + str(dest))
for src in sorted(headers):
    shutil.copy2(src, dest / Path(src).name)
print(len(headers), "headers")
PY
  # libgnunetutil.so, .so.N (links) and .so.N.x.y; not the .so.N.x.y.p object directory.
  found=0
  for lib in "$mb"/src/lib/util/libgnunetutil.so*; do
    # -e: a link only when it leads to a file (no dangling link of another version).
    if [ -e "$lib" ] && { [ -L "$lib" ] || [ -f "$lib" ]; }; then
      cp -P "$lib" "$prefix/lib/"
      found=1
    fi
  done
  [ "$found" = 1 ] || die "meson built no $mb/src/lib/util/libgnunetutil.so* (log: $build_dir/compile.log)"
  if [ "$taler" = 1 ]; then
    for name in json curl pq; do
      found=0
      for lib in "$mb"/src/lib/$name/libgnunet$name.so*; do
        if [ -L "$lib" ] || [ -f "$lib" ]; then
          cp -P "$lib" "$prefix/lib/"
          found=1
        fi
      done
      [ "$found" = 1 ] || die "meson built no $mb/src/lib/$name/libgnunet$name.so* (log: $build_dir/compile-taler.log)"
    done
  fi
  pc=$mb/meson-private/gnunetutil.pc
  perf_bin=$mb/src/lib/util/perf_crypto_rsa
else
  command -v make >/dev/null 2>&1 || die "make not found"
  [ "$taler" = 0 ] || die_usage "--taler needs a meson tree (GNUnet 0.21 or later); for an older exchange use the base's libgnunet-dev (gnunet: debian)"
  set -- --prefix="$prefix" --libdir="$prefix/lib" --disable-documentation
  if [ -n "$host" ]; then
    set -- "$@" --host="$host"
  fi
  # Trixie's libgcrypt20-dev has no libgcrypt-config; the tarball's libgcrypt.m4 then needs
  # gpgrt-config named explicitly (Debian's 0.20.0-5 replaced that m4 file instead).
  if ! command -v libgcrypt-config >/dev/null 2>&1 && command -v gpgrt-config >/dev/null 2>&1; then
    GPGRT_CONFIG=$(command -v gpgrt-config)
    export GPGRT_CONFIG
  fi
  step "configure ($(cd "$copy" && ./configure --version | head -n 1), CFLAGS $CFLAGS)" \
    "$build_dir/configure.log" sh -c 'cd "$1" && shift && ./configure "$@"' sh "$copy" "$@"
  step "make -C src/include" "$build_dir/include.log" make -C "$copy/src/include" -j "$jobs"
  step "make libgnunetutil.la" "$build_dir/compile.log" make -C "$copy/src/util" -j "$jobs" libgnunetutil.la
  step "install headers" "$build_dir/install.log" make -C "$copy/src/include" install
  step "install libgnunetutil" "$build_dir/install-lib.log" make -C "$copy/src/util" install-libLTLIBRARIES
  if [ "$perf" = 1 ]; then
    # HAVE_BENCHMARKS (configure --enable-benchmarks) would also instrument libgnunetutil.
    perf_step "make perf_crypto_rsa" "$build_dir/perf.log" make -C "$copy/src/util" -j "$jobs" perf_crypto_rsa
  fi
  mkdir -p "$prefix/lib/pkgconfig"
  pc=$copy/pkgconfig/gnunetutil.pc
  perf_bin=$copy/src/util/.libs/perf_crypto_rsa
  [ -n "$version" ] || version=$(sed -n 's/^Version: *//p' "$pc")
fi

[ -f "$pc" ] || die "no gnunetutil.pc at $pc"
# The prefix= line first: ${prefix} is what the other paths derive from.
sed "s|^prefix=.*|prefix=$prefix|" "$pc" > "$prefix/lib/pkgconfig/gnunetutil.pc"

if [ "$perf" = 1 ]; then
  if [ "$kind" = meson ]; then
    cs_reason="not built: src/lib/util/meson.build has it commented out since 0.21 ('FIXME FTBFS')"
  else
    cs_reason="not built: 0.19/0.20's perf_crypto_cs.c calls GNUNET_CRYPTO_cs_r_derive without the seed its own library takes (images/gnunet-perf/perf-crypto-0.20.patch fixes that for Debian's source)"
  fi
  perf_dir=$prefix/libexec/gnunet-perf
  mkdir -p "$perf_dir"
  if [ -n "$perf_failed" ]; then
    printf '%s\n' "$perf_failed" > "$perf_dir/BUILD-FAILED"
  elif [ ! -x "$perf_bin" ]; then
    printf '%s\n' "GNUnet's build made no $perf_bin" > "$perf_dir/BUILD-FAILED"
  else
    cp "$perf_bin" "$perf_dir/perf_crypto_rsa"
    # meson links it with RUNPATH $ORIGIN/ (the library sits beside it in the build tree):
    # the same links beside the installed copy keep it on this libgnunetutil (libtool's
    # binary has RUNPATH PREFIX/lib already; the links do no harm there).
    for lib in "$prefix"/lib/libgnunetutil.so.*; do
      [ -f "$lib" ] || continue
      name=${lib##*/}
      ln -sf "../../lib/$name" "$perf_dir/$name"
    done
    # Read by the harness's gnunet-perf suite (harness/abh/suites/gnunet_perf.py).
    {
      echo "source=GNUnet $version ($kind build from source)"
      echo "programs=perf_crypto_rsa"
      echo "unavailable.perf_crypto_cs=$cs_reason"
      echo "rsa_bits=1024,2048,3072,4096"
      echo "cflags=$CFLAGS"
    } > "$perf_dir/PROVENANCE"
  fi
fi

# What the headers declare: blindsig decides its API from these macros.
header_version=$(sed -n 's/^#define GNUNET_VERSION "\(.*\)"$/\1/p' "$prefix/include/gnunet/gnunet_config.h")
[ -n "$header_version" ] && [ "$header_version" != unknown ] \
  || die "the installed gnunet_config.h declares no version ('$header_version')"
echo "$prog: installed libgnunetutil $header_version ($kind) under $prefix" >&2
seconds=$(( $(date +%s) - started ))
echo "$prog: built in $seconds s" >&2
printf 'kind\t%s\nversion\t%s\nheader_version\t%s\ncflags\t%s\nprefix\t%s\n' \
  "$kind" "$version" "$header_version" "$CFLAGS" "$prefix" > "$build_dir/build-info.txt"
if [ "$incremental" = 0 ]; then
  printf 'build_seconds\t%s\n' "$seconds" >> "$build_dir/build-info.txt"
fi
if [ -n "${stubbed:-}" ]; then
  printf 'stubbed_files\t%s\n' "${stubbed# }" >> "$build_dir/build-info.txt"
fi
