"""The exchange source (``taler:`` / ``--taler``): grammar, resolution, image plan, planning,
and the taler-helper suite's runs and rows (the thesis's security-module table).

The build itself runs against the real engine in
``tests/integration/test_taler_source_docker.py``.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
from pathlib import Path

import pytest
from abh.suites import taler_helper
from abh.suites.common import SuiteError
from helpers import REPO, result

from archbench.errors import MatrixError, SourceError
from archbench.images import (
    TALER_BUILD_PACKAGES,
    GnunetBuild,
    TalerBuild,
    benchmark,
    cross,
    plan_image,
)
from archbench.images.benchmark import source_packages
from archbench.matrix import GnunetGit, GnunetPath, GnunetTarball, parse, parse_taler
from archbench.platforms import Arch
from archbench.report.sections import EMULATED_HELPER_NOTE, row_notes, taler_item
from archbench.report.versions import gnunet_label
from archbench.result import AppendixRow, HarnessDocument, Row, Setup, SuiteRun
from archbench.run import plan
from archbench.sources import ResolvedSource, prepare_taler_tree, resolve_taler
from archbench.upstream import add_taler_helper_rows

LOGS = REPO / "tests" / "fixtures" / "upstream-logs"
SHA = "a" * 64


def exchange_tarball(tmp_path: Path, version: str = "0.14.0", sentinel: bool = True) -> Path:
    """A small tarball shaped like the shared exchange archives (one top folder)."""
    files = {
        "configure.ac": f"AC_INIT([taler-exchange],[{version}],[taler-bug@gnunet.org])\n",
        "src/util/test_helper_cs.c": "int main(void){return 0;}\n",
    }
    if sentinel:
        files["src/util/test_helper_rsa.c"] = "int main(void){return 0;}\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"taler-exchange-{version}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path = tmp_path / f"taler-exchange-{version}.tar.gz"
    path.write_bytes(buffer.getvalue())
    return path


def matrix(taler: str, arch: str = "amd64", gnunet: str = "") -> str:
    return f"""
version: 1
bases: {{deb: {{source: bootstrap, suite: trixie}}}}
profiles:
  slim: {{packages: [gcc, libgnunet-dev]}}
targets:
  - name: t
    arch: {arch}
    base: deb
    {gnunet}
    taler: {taler}
    suites: {{blindsig: {{enabled: false}}, taler-helper: {{rsa_bits: [1024, 2048]}}}}
"""


# ---------------------------------------------------------------- grammar


def test_taler_takes_the_gnunet_grammar_without_debian(tmp_path: Path) -> None:
    m = parse(matrix(f"{{tarball: ex.tar.gz, sha256: {SHA}}}"), "m.yml", base_dir=tmp_path)
    source = m.taler(m.targets[0])
    assert isinstance(source, GnunetTarball)
    assert source.tarball == str(tmp_path / "ex.tar.gz")
    assert m.targets[0].suites.get("taler-helper").rsa_bits == (1024, 2048)  # type: ignore[union-attr]
    git = parse_taler("git+file:///srv/exchange.git@v0.14.0")
    assert isinstance(git, GnunetGit) and git.ref == "v0.14.0"
    assert isinstance(parse_taler(str(tmp_path)), GnunetPath)
    with pytest.raises(MatrixError, match=r"--taler: 'debian': Debian has no taler-exchange"):
        parse_taler("debian")
    with pytest.raises(MatrixError, match=r"a tarball is pinned by its sha256"):
        parse_taler("/x/taler-exchange-0.14.0.tar.gz")
    with pytest.raises(MatrixError, match=r"targets\[0\] \(t\)\.taler: taler 'debian' is not"):
        parse(matrix("debian"), "m.yml")
    with pytest.raises(MatrixError, match=r"tarball is pinned by its sha256: add sha256"):
        parse(matrix("{tarball: ex.tar.gz, sha: abc}"), "m.yml")
    with pytest.raises(MatrixError, match=r"unknown key 'shaa'; allowed: tarball, sha256"):
        parse(matrix(f"{{tarball: ex.tar.gz, sha256: {SHA}, shaa: 1}}"), "m.yml")
    with pytest.raises(MatrixError, match=r"a taler mapping needs one of the keys tarball"):
        parse(matrix("{url: x}"), "m.yml")


# ---------------------------------------------------------------- resolving


def test_a_tarball_is_checked_then_versioned_from_configure_ac(tmp_path: Path) -> None:
    path = exchange_tarball(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    resolved = resolve_taler(GnunetTarball(tarball=str(path), sha256=digest), tmp_path / "w")
    assert (resolved.project, resolved.version) == ("taler", "0.14.0")
    assert resolved.content_key == f"taler/1 tarball {digest} version 0.14.0"
    tree = prepare_taler_tree(resolved, tmp_path / "tree")
    assert (tree.root / "src/util/test_helper_rsa.c").is_file()
    with pytest.raises(SourceError, match=f"sha256 differs: expected {SHA} .*got {digest}"):
        resolve_taler(GnunetTarball(tarball=str(path), sha256=SHA), tmp_path / "w")


def test_a_tree_without_the_benchmarks_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    path = exchange_tarball(tmp_path, sentinel=False)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    resolved = resolve_taler(GnunetTarball(tarball=str(path), sha256=digest), tmp_path / "w")
    with pytest.raises(SourceError, match=r"no src/util/test_helper_rsa.c"):
        prepare_taler_tree(resolved, tmp_path / "tree")
    assert not (tmp_path / "tree").exists()


def test_a_gnunet_tarball_is_not_an_exchange(tmp_path: Path) -> None:
    path = tmp_path / "gnunet.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("gnunet-0.22.2/configure.ac")
        data = b"AC_INIT([gnunet],[0.22.2])\n"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(SourceError, match=r"no AC_INIT\(\[taler-exchange\],\[VERSION\]\)"):
        resolve_taler(GnunetTarball(tarball=str(path), sha256=digest), tmp_path / "w")


# ---------------------------------------------------------------- image and planning


def test_the_image_builds_the_exchange_against_its_gnunet(tmp_path: Path) -> None:
    path = exchange_tarball(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    resolved = resolve_taler(GnunetTarball(tarball=str(path), sha256=digest), tmp_path / "w")
    build = TalerBuild(resolved, b"tar bytes")
    spec = plan_image(Arch.AMD64, "slim", ("gcc", "libgnunet-dev"), "b", "sha256:1", taler=build)
    text = spec.dockerfile
    assert "build-taler-exchange.sh /opt/archbench/taler/exchange /opt/taler /usr" in text
    assert f"taler/1 tarball {digest}" in text
    assert ("taler-source/taler-src.tar", b"tar bytes") in spec.files
    # configure stops without jq and jinja2; GNUnet's meson defines gnunetpq only with libpq.
    assert all(f"      {p} \\" in text for p in ("jq", "python3-jinja2", "libpq-dev", "autoconf"))
    plain = plan_image(Arch.AMD64, "slim", ("gcc", "libgnunet-dev"), "b", "sha256:1")
    assert "taler" not in plain.dockerfile
    assert spec.tag != plain.tag
    other = TalerBuild(resolved, b"other bytes")
    assert plan_image(Arch.AMD64, "slim", ("gcc",), "b", "sha256:1", taler=other).tag != spec.tag


def test_an_emulated_target_cross_compiles_the_exchange_in_its_cross_stage(
    tmp_path: Path,
) -> None:
    m = parse(matrix(f"{{tarball: ex.tar.gz, sha256: {SHA}}}", "riscv64"), "m.yml")
    (p,) = plan(m, m.targets, {"local": Arch.AMD64})
    assert p.emulated and isinstance(p.taler, GnunetTarball)
    packages = source_packages(("gcc", "python3", "libgnunet-dev"))
    packages += tuple(x for x in TALER_BUILD_PACKAGES if x.endswith("-dev") and x not in packages)
    gnunet = cross.GnunetCross("meson")
    plan_ = cross.plan_cross(
        Arch.RISCV64,
        Arch.AMD64,
        packages,
        "archbench-base/debian-trixie:amd64",
        emulated=True,
        gnunet_perf=False,
        gnunet=gnunet,
        taler=True,
    )
    assert plan_ is not None and plan_.taler
    assert "libpq-dev:riscv64" in plan_.dev_packages and "jq" in plan_.native_tools
    assert "jq" not in plan_.runtime_packages and "python3" in plan_.runtime_packages
    assert plan_.gnunet_build_args[-1] == "--taler"
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    resolved = ResolvedSource(
        kind="tarball", location="/g.tar.gz", sha256="ab" * 32, version="0.22.2"
    )
    path = exchange_tarball(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    taler = TalerBuild(
        resolve_taler(GnunetTarball(tarball=str(path), sha256=digest), tmp_path / "w"), b"ex"
    )
    spec = benchmark.plan_cross_image(
        plan_, "sha256:9", b"", harness, gnunet=GnunetBuild(resolved, b"tree"), taler=taler
    )
    text = " ".join(line.strip(" \\") for line in spec.dockerfile.splitlines())
    assert (
        "build-taler-exchange.sh --host riscv64-linux-gnu /opt/archbench/taler/exchange "
        "/opt/taler /opt/gnunet" in text
    )
    assert (
        "tar -C / -cf /opt/archbench/taler-prefix.tar opt/taler opt/archbench/taler/exchange"
        in text
    )
    assert "runtime-packages.sh --own /opt/gnunet/lib:/opt/taler/lib" in text
    assert "/opt/archbench/taler/exchange/src/util/.libs/test_helper_rsa" in text
    assert text.index("build-libgnunetutil.sh") < text.index("build-taler-exchange.sh")
    # No empty line inside a RUN's continuation (Docker warns, and will refuse it).
    assert "\\\n\n" not in spec.dockerfile
    assert text.index("build-taler-exchange.sh") < text.index("COPY cross/target-status")
    assert dict(spec.files)["taler-source/taler-src.tar"] == b"ex"
    with pytest.raises(ValueError, match="exchange source exactly when its plan says so"):
        benchmark.plan_cross_image(
            plan_, "sha256:9", b"", harness, gnunet=GnunetBuild(resolved, b"")
        )


# ---------------------------------------------------------------- the suite


FAKE_TEST = """#!/bin/sh
# Stands in for test_helper_*: shows where it ran and with what, then prints a saved log.
echo "cwd=$(pwd) tmp=$TMPDIR prefix=${TALER_PREFIX:-none}" \\
  "xprefix=${TALER_EXCHANGE_PREFIX:-none}" >&2
grep RSA_KEYSIZE *.conf >&2 || :
mkdir -p test_helper_home && ls test_helper_home >&2 && touch test_helper_home/key-$$
cat '%s' >&2
"""


def fake_exchange(root: Path, prefix_variable: str | None) -> Path:
    util = root / "exchange" / "src" / "util"
    util.mkdir(parents=True)
    for test, log in (
        ("test_helper_rsa", "test_helper_rsa-2048.log"),
        ("test_helper_cs", "test_helper_cs.log"),
    ):
        (util / test).write_text(FAKE_TEST % (LOGS / log))
        (util / test).chmod(0o755)
        (util / f"{test}.conf").write_text("[coin_1]\nCIPHER = RSA\nRSA_KEYSIZE = 2048\n")
    if prefix_variable:
        (root / "exchange" / "archbench-taler.txt").write_text(
            f"version\t0.14.1\nprefix\t/opt/taler\nprefix_variable\t{prefix_variable}\n"
            "gnunet_version\t0.24.3\n"
        )
    return util


def test_each_size_runs_in_its_own_scratch_with_the_versions_prefix_variable(
    tmp_path: Path,
) -> None:
    fake_exchange(tmp_path, "TALER_EXCHANGE_PREFIX")
    config = taler_helper.normalize_config({"rsa_bits": [2048, 1024], "repetitions": 2})
    assert config["rsa_bits"] == [1024, 2048]
    outcome = taler_helper.run(config, print, taler_dir=tmp_path)
    runs = outcome.extra["runs"]
    assert [(r["test"], r["rsa_bits"], r["repetition"]) for r in runs] == [
        ("test_helper_rsa", 1024, 1),
        ("test_helper_rsa", 1024, 2),
        ("test_helper_rsa", 2048, 1),
        ("test_helper_rsa", 2048, 2),
        ("test_helper_cs", None, 1),
        ("test_helper_cs", None, 2),
    ]
    first = [line.split() for line in runs[0]["log"].splitlines()[:3]]
    cwd = first[0][0].removeprefix("cwd=")
    assert first[0][1] == f"tmp={cwd}"
    # sun_path is 108 bytes: the runtime folder's sockets must fit under the scratch.
    assert len(cwd) <= len("/tmp/tXXXXXXXX/r1024-1")
    assert first[0][2:] == ["prefix=none", "xprefix=/opt/taler"]
    assert first[1] == ["RSA_KEYSIZE", "=", "1024"]
    # Every run starts with an empty key home (a kept one outlives its keys' validity),
    # in a scratch of its own.
    assert all(not r["log"].splitlines()[2].startswith("key-") for r in runs)
    assert runs[2]["log"].splitlines()[1].split() == ["RSA_KEYSIZE", "=", "2048"]
    assert len({r["log"].split()[0] for r in runs}) == len(runs)
    assert not Path(cwd).exists()  # scratch removed
    assert outcome.extra["failures"] == []
    assert outcome.tools == {"taler-exchange": "0.14.1", "gnunet (exchange's)": "0.24.3"}
    assert outcome.extra["prefix_variable"] == "TALER_EXCHANGE_PREFIX"


def test_a_failing_run_is_recorded_and_the_others_are_kept(tmp_path: Path) -> None:
    util = fake_exchange(tmp_path, "TALER_PREFIX")
    rsa = util / "test_helper_rsa"
    # The first RSA run fails as test_helper_rsa does when a key outlives its validity.
    rsa.write_text(
        "#!/bin/sh\n[ -e ../failed ] || { touch ../failed; echo 'Assertion failed' >&2; exit 5; }\n"
        + rsa.read_text().split("\n", 1)[1]
    )
    warnings: list[str] = []
    config = taler_helper.normalize_config({"rsa_bits": [1024], "repetitions": 2})
    outcome = taler_helper.run(config, warnings.append, taler_dir=tmp_path)
    assert [(r["test"], r["repetition"]) for r in outcome.extra["runs"]] == [
        ("test_helper_rsa", 2),
        ("test_helper_cs", 1),
        ("test_helper_cs", 2),
    ]
    (failure,) = outcome.extra["failures"]
    assert failure.startswith("test_helper_rsa RSA-1024 (run 1) exited with status 5")
    assert warnings == [failure]
    (util / "test_helper_cs").write_text("#!/bin/sh\nexit 1\n")
    rsa.write_text("#!/bin/sh\nexit 1\n")
    with pytest.raises(SuiteError, match=r"no run of the tests succeeded: test_helper_rsa"):
        taler_helper.run(config, print, taler_dir=tmp_path)


def test_a_secmod_left_running_neither_holds_the_run_nor_outlives_it(tmp_path: Path) -> None:
    util = fake_exchange(tmp_path, "TALER_PREFIX")
    pid_file = tmp_path / "secmod.pid"
    # As test_helper_rsa that ended early under QEMU: its secmod (here a sleep holding the
    # test's stdout and stderr) is still running when the test exits.
    for test in ("test_helper_rsa", "test_helper_cs"):
        body = (util / test).read_text().split("\n", 1)[1]
        (util / test).write_text(f"#!/bin/sh\nsleep 300 &\necho $! > '{pid_file}'\n{body}")
    config = taler_helper.normalize_config({"rsa_bits": [1024], "repetitions": 1, "timeout_s": 60})
    started = time.monotonic()
    outcome = taler_helper.run(config, print, taler_dir=tmp_path)
    assert time.monotonic() - started < 30  # not the sleep's 300 s, nor the timeout's 60
    assert [r["test"] for r in outcome.extra["runs"]] == ["test_helper_rsa", "test_helper_cs"]
    assert "signature operations took" in outcome.extra["runs"][0]["log"]
    pid = int(pid_file.read_text())
    # Killed with the test's session: gone, or a zombie waiting for its reaper. SIGKILL is
    # delivered after killpg returns, so a loaded machine may need a moment to show it.
    state = Path(f"/proc/{pid}/stat")

    def dead() -> bool:
        try:
            return state.read_text().split(") ", 1)[1].startswith("Z")
        except FileNotFoundError:
            return True

    deadline = time.monotonic() + 10
    while not dead() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead()


def test_a_run_past_its_timeout_is_a_failure_and_the_others_go_on(tmp_path: Path) -> None:
    util = fake_exchange(tmp_path, "TALER_PREFIX")
    (util / "test_helper_rsa").write_text("#!/bin/sh\nexec sleep 300\n")
    warnings: list[str] = []
    config = taler_helper.normalize_config({"rsa_bits": [1024], "repetitions": 1, "timeout_s": 1})
    outcome = taler_helper.run(config, warnings.append, taler_dir=tmp_path)
    assert [r["test"] for r in outcome.extra["runs"]] == ["test_helper_cs"]
    (failure,) = outcome.extra["failures"]
    assert failure.startswith("test_helper_rsa RSA-1024 (run 1): ")
    assert failure.endswith("test_helper_rsa did not finish within 1 s")
    assert warnings == [failure]
    # A test killed by a signal says which (armv7's test_helper_rsa under QEMU: SIGBUS).
    (util / "test_helper_rsa").write_text("#!/bin/sh\nkill -BUS $$\n")
    outcome = taler_helper.run(config, print, taler_dir=tmp_path)
    (failure,) = outcome.extra["failures"]
    assert failure.startswith("test_helper_rsa RSA-1024 (run 1) was killed by SIGBUS (signal 7)")


def test_settings_are_checked() -> None:
    with pytest.raises(SuiteError, match=r"rsa_bits = \[512\]; allowed: integers 1024..16384"):
        taler_helper.normalize_config({"rsa_bits": [512]})
    with pytest.raises(SuiteError, match=r"repetitions = 0; allowed: an integer 1..100"):
        taler_helper.normalize_config({"repetitions": 0})
    with pytest.raises(SuiteError, match=r"RSA_KEYSIZE line"):
        taler_helper.secmod_config("[coin_1]\n", "test_helper_rsa", 1024)
    assert taler_helper.prefix_env({}) == {
        "TALER_PREFIX": "/usr/local",
        "TALER_EXCHANGE_PREFIX": "/usr/local",
    }


def document(extra: dict[str, object]) -> HarnessDocument:
    return HarnessDocument(
        format="archbench-harness",
        version=1,
        harness_version="0.3.0",
        started_at="2026-11-30T00:00:00Z",
        duration_s=1.0,
        setup=Setup(cpu_model="c", cores=2, machine="x86_64", kernel="k", os="o", packages={}),
        rows=(),
        suites={"taler-helper": SuiteRun(parameters={}, extra=extra)},
    )


def test_every_line_becomes_a_sample_with_its_meaning_in_the_note() -> None:
    rsa = (LOGS / "test_helper_rsa-2048.log").read_text()
    cs = (LOGS / "test_helper_cs.log").read_text()
    runs = [
        {"test": "test_helper_rsa", "rsa_bits": 1024, "repetition": i, "log": rsa} for i in (1, 2)
    ] + [{"test": "test_helper_cs", "rsa_bits": None, "repetition": 1, "log": cs}]
    rows = add_taler_helper_rows(document({"runs": runs, "cpus": 2, "forked_clients": 8})).rows
    by = {(r.scheme, r.key_bits, r.operation, r.ops_per_block): r for r in rows}
    # The log file name says 2048, but the run's own size is what the row keeps.
    seq = by[("RSA", 1024, "helper_sequential_signing", 100)]
    par = by[("RSA", 1024, "helper_parallel_signing", 100)]
    total = by[("RSA", 1024, "helper_parallel_signing", 800)]
    assert len(seq.samples_ns) == 2 and len(total.samples_ns) == 2
    clients = sum("100 (parallel)" in line for line in rsa.splitlines())
    assert len(par.samples_ns) == 2 * clients
    assert seq.note is not None and "sum of the 100 calls' latencies" in seq.note
    assert par.note is not None and "one sample per client" in par.note
    assert "gave the test 2 CPU(s), fewer than its 8 forked clients" in par.note
    assert total.note is not None and "wall time from the first fork" in total.note
    assert "fewer than" in total.note and "fewer than" not in seq.note
    assert ("CS", None, "helper_sequential_signing", 100) in by
    many = add_taler_helper_rows(document({"runs": runs, "cpus": 8, "forked_clients": 8})).rows
    assert all("fewer than" not in (r.note or "") for r in many)


def test_a_run_without_a_size_sets_the_suites_error() -> None:
    runs = [{"test": "test_helper_rsa", "rsa_bits": None, "repetition": 1, "log": "x"}]
    after = add_taler_helper_rows(document({"runs": runs}))
    assert after.rows == ()
    error = after.suites["taler-helper"].error
    assert error is not None and "rsa_bits None is not a key size" in error


# ---------------------------------------------------------------- the report


def test_notes_under_the_table_say_what_a_sample_is_and_what_emulation_measures() -> None:
    helper = [
        Row.model_validate(
            {
                "suite": "security-module",
                "scheme": "RSA",
                "key_bits": 1024,
                "operation": op,
                "ops_per_block": ops,
                "samples_ns": [141_000_000],
                "valid": True,
                "note": f"note of {ops} {op}",
            }
        )
        for op, ops in (("helper_sequential_signing", 100), ("helper_parallel_signing", 800))
    ]
    keys = [
        AppendixRow("helper_sequential_signing", 100, "RSA", 1024),
        AppendixRow("helper_parallel_signing", 800, "RSA", 1024),
    ]
    native = result("n", "amd64", "x86_64", "c", helper)
    assert row_notes(native, keys) == (
        "100 sequential signature operations: note of 100 helper_sequential_signing",
        "800 parallel signature operations: note of 800 helper_parallel_signing",
    )
    emulated = result("e", "riscv64", "riscv64", "c", helper, emulated=True)
    assert row_notes(emulated, keys)[-1] == EMULATED_HELPER_NOTE
    assert "QEMU user emulation of the secmod" in EMULATED_HELPER_NOTE
    source = {
        "kind": "tarball",
        "location": "/t/taler-exchange-0.14.0.tar.gz",
        "sha256": "cee7" * 16,
        "version": "0.14.0",
    }
    assert native.execution is not None
    execution = native.execution.model_copy(update={"taler_source": source})
    assert taler_item(execution) == (
        (
            "taler-exchange (security modules)",
            "0.14.0 (built from tarball taler-exchange-0.14.0.tar.gz, sha256 cee7cee7cee7)",
        ),
    )


def test_an_emulated_source_build_without_the_driver_still_names_its_gnunet() -> None:
    r = result("e", "riscv64", "riscv64", "c", [], emulated=True)
    assert r.execution is not None
    setup = r.harness.setup.model_copy(update={"packages": {}, "gnunet_version": None})
    source = {"kind": "tarball", "location": "/g/gnunet-0.22.2.tar.gz", "version": "0.22.2"}
    r = r.model_copy(
        update={
            "harness": r.harness.model_copy(update={"setup": setup}),
            "execution": r.execution.model_copy(update={"gnunet_source": source}),
        }
    )
    assert gnunet_label(r) == "GNUnet 0.22.2 built from tarball"
