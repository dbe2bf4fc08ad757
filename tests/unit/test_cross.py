"""Cross-compiled drivers and the apt cache: planning, rendering, parsing, validation."""

from __future__ import annotations

import shlex
import string
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench.images import GnunetBuild, benchmark, build_context, cross
from archbench.platforms import Arch
from archbench.sources import ResolvedSource

SLIM = (
    "gcc",
    "libc6-dev",
    "make",
    "pkgconf",
    "python3",
    "libgnunet-dev",
    "libsodium-dev",
    "openssl",
    "libssl-dev",
    "gnupg",
)


def _plan(arch: Arch = Arch.ARM64, packages: tuple[str, ...] = SLIM) -> cross.CrossPlan:
    plan = cross.plan_cross(
        arch,
        Arch.AMD64,
        packages,
        "archbench-base/debian-trixie:amd64",
        emulated=True,
        gnunet_perf=False,
    )
    assert plan is not None
    return plan


def test_plan_splits_the_slim_profile_into_dev_and_runtime_packages() -> None:
    plan = _plan()
    assert plan.dev_packages == ("libgnunet-dev:arm64", "libsodium-dev:arm64", "libssl-dev:arm64")
    assert plan.runtime_packages == ("python3", "openssl", "gnupg")
    assert plan.toolchain == "crossbuild-essential-arm64"
    assert plan.triplet == "aarch64-linux-gnu"


@pytest.mark.parametrize(
    ("arch", "debian", "triplet"),
    [
        (Arch.ARMV7, "armhf", "arm-linux-gnueabihf"),
        (Arch.PPC64LE, "ppc64el", "powerpc64le-linux-gnu"),
        (Arch.RISCV64, "riscv64", "riscv64-linux-gnu"),
    ],
)
def test_plan_names_debian_architecture_and_triplet(arch: Arch, debian: str, triplet: str) -> None:
    plan = _plan(arch)
    assert plan.debian_arch == debian and plan.triplet == triplet
    assert plan.dev_packages[0] == f"libgnunet-dev:{debian}"


def test_qualified_and_pinned_dev_packages_keep_their_pin() -> None:
    plan = _plan(packages=("libgnunet-dev=0.20.0-7", "libssl-dev:arm64", "python3"))
    assert plan.dev_packages == ("libgnunet-dev:arm64=0.20.0-7", "libssl-dev:arm64")


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"emulated": False}, "native target"),
        ({"gnunet_perf": True}, "gnunet-perf compiles in the image"),
        ({"build_arch": Arch.ARM64}, "no Debian cross toolchains for this engine"),
        ({"packages": (*SLIM, "build-essential")}, "profile wants a build environment"),
        ({"packages": ("python3", "gcc")}, "nothing to cross-install"),
    ],
)
def test_no_cross_stage_where_it_does_not_apply(kwargs: dict[str, object], why: str) -> None:
    args: dict[str, object] = {
        "emulated": True,
        "gnunet_perf": False,
        "build_arch": Arch.AMD64,
        "packages": SLIM,
    } | kwargs
    plan = cross.plan_cross(
        Arch.RISCV64,
        args.pop("build_arch"),  # type: ignore[arg-type]
        args.pop("packages"),  # type: ignore[arg-type]
        "archbench-base/debian-trixie:amd64",
        **args,  # type: ignore[arg-type]
    )
    assert plan is None, why


def test_cross_stage_dockerfile_installs_toolchain_and_compiles_with_the_triplet() -> None:
    df = benchmark.render_cross_dockerfile(_plan(Arch.PPC64LE))
    lines = df.splitlines()
    assert "FROM archbench-base/debian-trixie:amd64" in lines
    assert "RUN dpkg --add-architecture ppc64el \\" in lines
    assert "      crossbuild-essential-ppc64el make pkgconf \\" in lines
    assert "      libgnunet-dev:ppc64el \\" in lines
    assert "    make CC=powerpc64le-linux-gnu-gcc \\" in lines
    assert (
        " && PKG_CONFIG_LIBDIR=/usr/lib/powerpc64le-linux-gnu/pkgconfig:/usr/share/pkgconfig \\"
        in lines
    )
    assert (
        " && sh /opt/archbench/cross/runtime-packages.sh powerpc64le-linux-gnu ppc64el \\" in lines
    )
    assert "build_kind\\tcross" in df


def test_benchmark_image_of_a_cross_build_installs_runtime_only_and_compiles_nothing(
    tmp_path: Path,
) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    built = cross.CrossBuild(
        _plan(),
        "sha256:2",
        (("cross/harness/blindsig", b"\x7fELF"), ("cross/harness/build-info.txt", b"cc\tx\n")),
        ("python3", "openssl", "gnupg", "libgnunet0.20t64:arm64=0.20.0-7"),
    )
    spec = benchmark.plan_image(
        Arch.ARM64, "slim", SLIM, "archbench-base/t:arm64", "sha256:1", harness, cross=built
    )
    df = spec.dockerfile
    assert "installed here (python3 openssl gnupg libgnunet0.20t64:arm64=0.20.0-7)," in df
    assert "COPY cross/harness/ /opt/archbench/harness/" in df
    assert "make" not in df and "gcc" not in df and "libgnunet-dev" not in df
    with tarfile.open(fileobj=build_context(spec)) as tar:
        modes = {m.name: m.mode for m in tar.getmembers()}
    assert modes["cross/harness/blindsig"] == 0o755
    assert modes["cross/harness/build-info.txt"] == 0o644
    plain = benchmark.plan_image(
        Arch.ARM64, "slim", SLIM, "archbench-base/t:arm64", "sha256:1", harness
    )
    assert "RUN make -C /opt/archbench/harness" in plain.dockerfile
    assert plain.content_hash != spec.content_hash
    rebuilt = cross.CrossBuild(
        built.plan, "sha256:3", (("cross/harness/blindsig", b"\x7fELF2"),), built.install
    )
    other = benchmark.plan_image(
        Arch.ARM64, "slim", SLIM, "archbench-base/t:arm64", "sha256:1", harness, cross=rebuilt
    )
    assert other.content_hash != spec.content_hash


def test_cross_image_is_named_after_its_target_but_built_for_the_engine(tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    status = b"Package: libc6\nStatus: install ok installed\n"
    spec = benchmark.plan_cross_image(_plan(Arch.ARMV7), "sha256:9", status, harness)
    assert spec.arch is Arch.AMD64
    assert spec.tag == f"archbench/cross:armv7-{spec.content_hash[:16]}"
    assert (
        benchmark.plan_cross_image(_plan(Arch.ARMV7), "sha256:8", status, harness).tag != spec.tag
    )
    assert benchmark.plan_cross_image(_plan(Arch.ARMV7), "sha256:9", b"", harness).tag != spec.tag
    with tarfile.open(fileobj=build_context(spec)) as tar:
        assert "cross/runtime-packages.sh" in tar.getnames()
        conf = tar.extractfile("cross/target-apt.conf")
        assert conf is not None
        text = conf.read().decode()
        status_file = tar.extractfile("cross/target-status")
        assert status_file is not None and status_file.read() == status
    assert 'APT::Architecture "armhf";' in text and "#clear APT::Architectures;" in text
    assert 'Dir::State::status "/opt/archbench/target/status";' in text


def test_runtime_packages_are_parsed_and_checked() -> None:
    text = "libc6:arm64=2.41-12+deb13u5\nlibgnunet0.20t64:arm64=0.20.0-7\n\n"
    assert cross.parse_runtime_packages(text, "arm64") == (
        "libc6:arm64=2.41-12+deb13u5",
        "libgnunet0.20t64:arm64=0.20.0-7",
    )
    for bad in ("libc6:armhf=2.41", "libc6=2.41", "libc6:arm64=2.41; rm -rf /", "", "-x:arm64=1"):
        with pytest.raises(ValueError, match=r"runtime-packages\.txt"):
            cross.parse_runtime_packages(bad, "arm64")


@given(st.text(max_size=40))
def test_runtime_package_lines_never_carry_shell_syntax(text: str) -> None:
    try:
        lines = cross.parse_runtime_packages(text, "arm64")
    except ValueError:
        return
    for line in lines:
        assert shlex.quote(line) == line and ":arm64=" in line


URL = "http://mirror.invalid/debian/pool/main/p/python3.13/python3.13_3.13.5-2_arm64.deb"
DEB = f"{URL} python3.13_3.13.5-2_arm64.deb SHA256:{'a' * 64}"


def test_debs_are_parsed_and_checked() -> None:
    assert cross.parse_debs(f"{DEB}\n\n") == (DEB,)
    epoch = DEB.replace("_3.13.5-2", "_1%3a3.13.5-2")
    assert cross.parse_debs(epoch) == (epoch,)
    for bad in (
        "",
        DEB.replace("SHA256:" + "a" * 64, "SHA256:abc"),
        DEB.replace(" python3.13_", " ../python3.13_"),
        DEB.replace("http://", "ftp://"),
        DEB + " extra",
        "'" + DEB,
        DEB.replace(" python3.13_3.13.5-2_arm64.deb", " x;rm.deb"),
    ):
        with pytest.raises(ValueError, match=r"debs\.txt"):
            cross.parse_debs(bad)


@given(st.text(alphabet=string.printable, max_size=200))
def test_debs_lines_are_three_plain_words(text: str) -> None:
    try:
        lines = cross.parse_debs(text)
    except ValueError:
        return
    for line in lines:
        words = line.split(" ")
        assert len(words) == 3 and all(shlex.quote(w) == w for w in words[1:])
        assert "'" not in line and '"' not in line and "$" not in line and ".." not in line


def test_emulated_stage_fetches_checked_debs_and_installs_them_with_apt(tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    built = cross.CrossBuild(_plan(), "sha256:2", (("cross/debs.txt", DEB.encode()),), ("python3",))
    spec = benchmark.plan_image(
        Arch.ARM64, "slim", SLIM, "archbench-base/t:arm64", "sha256:1", harness, cross=built
    )
    assert "apt-get update" not in spec.dockerfile
    assert "COPY cross/debs.txt /tmp/archbench-debs.txt" in spec.dockerfile
    assert '      set -- "$@" "$url" "/tmp/archbench-debs/$file" "$sha256"; \\' in spec.dockerfile
    assert ' && /usr/lib/apt/apt-helper download-file "$@" \\' in spec.dockerfile
    assert " && apt-get install -y --no-install-recommends /tmp/archbench-debs/*.deb \\" in (
        spec.dockerfile
    )


def test_only_cross_built_drivers_are_executable_in_the_context() -> None:
    assert cross.is_driver_path("cross/harness/blindsig")
    assert cross.is_driver_path("cross/harness/sodium_bench")
    assert not cross.is_driver_path("harness/blindsig")
    assert not cross.is_driver_path("cross/harness/runtime-packages.txt")


def test_build_only_packages() -> None:
    assert cross.is_build_only("gcc") and cross.is_build_only("libssl-dev:arm64=3")
    assert not cross.is_build_only("python3") and not cross.is_build_only("libssl3t64")


# The apt proxy: http://HOST:PORT only.


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://172.17.0.1:3142", "http://172.17.0.1:3142"),
        ("http://172.17.0.1:3142/", "http://172.17.0.1:3142"),
        ("http://cache.internal:3142", "http://cache.internal:3142"),
        ("http://[fd00::1]:3142", "http://[fd00::1]:3142"),
        ("", None),
    ],
)
def test_apt_proxy_accepts_http_host_port(value: str, expected: str | None) -> None:
    assert cross.check_apt_proxy(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "https://172.17.0.1:3142",
        "http://172.17.0.1",
        "http://user:pw@172.17.0.1:3142",
        "http://172.17.0.1:3142/debian",
        "http://172.17.0.1:99999",
        "http://172.17.0.1:0",
        "http://[zz::1]:3142",
        "http://-x:3142",
        "http://300.1.1.1:3142",
        " http://172.17.0.1:3142",
        "http://172.17.0.1:3142\n",
        "http://a b:3142",
        "http://a;b:3142",
    ],
)
def test_apt_proxy_refuses_anything_else_naming_the_setting(value: str) -> None:
    with pytest.raises(
        ValueError, match=r"apt_proxy: .* is not an apt proxy; allowed: http://HOST:PORT"
    ):
        cross.check_apt_proxy(value)


_HOST_CHARS = string.ascii_letters + string.digits + "-.:[]@/ ;$`'\"\\\n?#%"


@given(st.text(alphabet=_HOST_CHARS, max_size=30), st.integers(min_value=-5, max_value=70000))
def test_apt_proxy_accepted_values_are_plain_http_urls(host: str, port: int) -> None:
    value = f"http://{host}:{port}"
    try:
        got = cross.check_apt_proxy(value)
    except ValueError as exc:
        assert "apt_proxy" in str(exc)
        return
    assert got == value
    assert 1 <= port <= 65535
    # Nothing a shell or Dockerfile would interpret (brackets only around IPv6).
    assert set(got) <= set(string.ascii_letters + string.digits + "-.:/[]")
    assert "@" not in got and "/" not in got.removeprefix("http://")
    assert cross.build_args(got) == {"http_proxy": got}


@given(st.text(max_size=60))
def test_apt_proxy_never_raises_anything_but_value_error(value: str) -> None:
    try:
        got = cross.check_apt_proxy(value)
    except ValueError:
        return
    assert got is None or got.startswith("http://")


def test_no_proxy_no_build_args() -> None:
    assert cross.build_args(None) == {}


def test_runtime_packages_script_output_grammar_matches_the_parser() -> None:
    script = (benchmark.TEMPLATE_DIR / "cross" / "runtime-packages.sh").read_text()
    assert cross.RUNTIME_LINE.pattern in script


def test_apt_proxy_setting_off_auto_and_bad_values() -> None:
    from archbench.errors import MatrixError
    from archbench.images import resolve_apt_proxy

    assert resolve_apt_proxy(None, "") is None
    assert resolve_apt_proxy(None, "off") is None
    assert resolve_apt_proxy(None, "auto") is None  # no local engine
    assert resolve_apt_proxy(None, "http://10.0.0.1:3142/") == "http://10.0.0.1:3142"
    with pytest.raises(
        MatrixError, match=r"invoke.yaml archbench.apt_proxy: .*; or 'auto' or 'off'"
    ):
        resolve_apt_proxy(None, "https://10.0.0.1:3142")


def test_arm64_builds_use_the_fast_pointer_authentication_of_qemu(tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    arm = benchmark.plan_image(
        Arch.ARM64, "slim", SLIM, "archbench-base/t:arm64", "sha256:1", harness
    )
    assert "ARG QEMU_CPU=max,pauth-impdef=on" in arm.dockerfile.splitlines()
    for arch in (Arch.AMD64, Arch.ARMV7, Arch.RISCV64, Arch.PPC64LE):
        other = benchmark.plan_image(arch, "slim", SLIM, "archbench-base/t:x", "sha256:1", harness)
        assert "QEMU_CPU" not in other.dockerfile
    assert cross.build_env(Arch.ARM64) == {"QEMU_CPU": "max,pauth-impdef=on"}
    assert cross.build_env(Arch.RISCV64) == {}


def _source_plan(
    arch: Arch = Arch.RISCV64, perf: bool = False, system: str = "meson"
) -> cross.CrossPlan:
    plan = cross.plan_cross(
        arch,
        Arch.AMD64,
        benchmark.source_packages(SLIM),
        "archbench-base/debian-trixie:amd64",
        emulated=True,
        gnunet_perf=perf,
        gnunet=cross.GnunetCross(system, perf=perf),
    )
    assert plan is not None
    return plan


def test_a_source_build_cross_installs_its_dependencies_and_runs_its_tools_natively() -> None:
    plan = _source_plan()
    assert "libgnunet-dev:riscv64" not in plan.dev_packages
    for dev in ("libgcrypt20-dev:riscv64", "libsodium-dev:riscv64", "libidn2-dev:riscv64"):
        assert dev in plan.dev_packages
    # Tools the build machine runs are never qualified with the target's architecture.
    assert plan.native_tools == ("dpkg-dev", "python3", "meson", "ninja-build")
    assert not any(p.startswith(("dpkg-dev", "meson", "ninja")) for p in plan.dev_packages)
    assert "meson" not in plan.runtime_packages and "python3" in plan.runtime_packages
    assert plan.gnunet_build_args == (
        "--cross-file", "/opt/archbench/cross/meson-cross.ini", "--deb-arch", "riscv64",
    )  # fmt: skip
    autotools = _source_plan(Arch.ARMV7, perf=True, system="autotools")
    assert autotools.gnunet_build_args == (
        "--host", "arm-linux-gnueabihf", "--deb-arch", "armhf", "--perf",
    )  # fmt: skip
    # gnunet-perf builds from the same source in the stage: it does not prevent it.
    assert _source_plan(perf=True).gnunet is not None
    with pytest.raises(ValueError, match="no GNUnet source"):
        _ = _plan().gnunet_build_args


@pytest.mark.parametrize(
    ("arch", "family", "cpu"),
    [
        (Arch.ARM64, "aarch64", "aarch64"),
        (Arch.ARMV7, "arm", "armv7"),
        (Arch.RISCV64, "riscv64", "riscv64"),
        (Arch.PPC64LE, "ppc64", "ppc64le"),
    ],
)
def test_meson_cross_file_names_the_toolchain_and_the_host_machine(
    arch: Arch, family: str, cpu: str
) -> None:
    import configparser

    ini = configparser.ConfigParser()
    ini.read_string(cross.meson_cross_file(arch))
    triplet = arch.value.triplet
    assert ini["binaries"]["c"] == f"'{triplet}-gcc'"
    # The build machine's pkg-config, pointed at the target's multiarch .pc folders.
    assert ini["binaries"]["pkg-config"] == "'pkg-config'"
    assert ini["properties"]["pkg_config_libdir"] == (
        f"['/usr/lib/{triplet}/pkgconfig', '/usr/share/pkgconfig']"
    )
    assert ini["properties"]["needs_exe_wrapper"] == "false"
    assert ini["host_machine"]["cpu_family"] == f"'{family}'"
    assert ini["host_machine"]["cpu"] == f"'{cpu}'"
    assert ini["host_machine"]["endian"] == "'little'"


def test_the_cross_stage_builds_the_library_before_the_drivers(tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    resolved = ResolvedSource(
        kind="tarball", location="/x.tar.gz", sha256="ab" * 32, version="0.27.0"
    )
    build = GnunetBuild(resolved, b"tree")
    plan = _source_plan()
    spec = benchmark.plan_cross_image(plan, "sha256:9", b"", harness, gnunet=build)
    text = spec.dockerfile
    assert f"# libgnunetutil from source ({resolved.content_key})" in text
    assert "      meson \\" in text and "      libgcrypt20-dev:riscv64 \\" in text
    assert "--cross-file /opt/archbench/cross/meson-cross.ini --deb-arch riscv64" in " ".join(
        line.strip(" \\") for line in text.splitlines()
    )
    assert text.index("build-libgnunetutil.sh") < text.index("make CC=riscv64-linux-gnu-gcc")
    assert "LDFLAGS=-Wl,-rpath,/opt/gnunet/lib" in text
    # autotools' configure --host takes pkg-config from the environment.
    assert (
        "PKG_CONFIG=pkg-config PKG_CONFIG_LIBDIR=/usr/lib/riscv64-linux-gnu/pkgconfig:"
        "/usr/share/pkgconfig" in text
    )
    assert "runtime-packages.sh --own /opt/gnunet/lib" in text
    assert "tar -C /opt/gnunet -cf /opt/archbench/gnunet-prefix.tar ." in text
    files = dict(spec.files)
    assert files["gnunet-source/gnunet-src.tar"] == b"tree"
    meson = files["cross/meson-cross.ini"]
    assert isinstance(meson, bytes) and b"needs_exe_wrapper = false" in meson
    # The tree is in the stage's hash; a stage without the source refuses one.
    other = benchmark.plan_cross_image(
        plan, "sha256:9", b"", harness, gnunet=GnunetBuild(resolved, b"t2")
    )
    assert other.content_hash != spec.content_hash
    with pytest.raises(ValueError, match="GNUnet source"):
        benchmark.plan_cross_image(_plan(Arch.RISCV64), "sha256:9", b"", harness, gnunet=build)
    with pytest.raises(ValueError, match="GNUnet source"):
        benchmark.plan_cross_image(plan, "sha256:9", b"", harness)


def test_apt_saying_the_mirror_lacks_a_package_is_read_out_of_the_log() -> None:
    # Lines as apt 2.6 (bookworm) and 2.9 (trixie) print them, in a build log's tail.
    tail = """
    Reading package lists...
    E: Unable to locate package libmicrohttpd-dev:armhf
    E: Package 'libpq-dev:armhf' has no installation candidate
    E: Version '1.2' for 'libsodium-dev:armhf' was not found
     libgnunet-dev:ppc64el : Depends: libgnunetutil17:ppc64el but it is not installable
    E: Failed to fetch http://deb.example/pool/main/z/zlib/zlib1g_1.3_ppc64el.deb  404  Not Found
    E: Unable to locate package libmicrohttpd-dev:armhf
    """
    assert cross.missing_packages(tail) == (
        "libmicrohttpd-dev:armhf",
        "libpq-dev:armhf",
        "libsodium-dev:armhf",
        "libgnunet-dev:ppc64el",
        "zlib1g_1.3_ppc64el.deb",
    )
    # A compile error names no package.
    assert cross.missing_packages("util.c:12: error: 'x' undeclared\nmake: *** [all] 2") == ()


@given(st.text(max_size=400))
def test_reading_apt_lines_never_fails(text: str) -> None:
    found = cross.missing_packages(text)
    assert len(set(found)) == len(found)
    assert all(name and not name.isspace() for name in found)
