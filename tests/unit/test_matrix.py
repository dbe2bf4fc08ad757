from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REPO

from archbench.errors import MatrixError
from archbench.matrix import load, parse
from archbench.platforms import Arch

GOOD = """
version: 1
defaults:
  blindsig: {iterations: 10, repetitions: 3, rsa_bits: [2048, 1024]}
bases:
  deb: {source: bootstrap, suite: trixie}
  ubu: {source: pull, image: "ubuntu:24.04"}
profiles:
  slim: {packages: [gcc]}
targets:
  - {name: a, arch: amd64, base: deb}
  - name: r
    arch: riscv64
    base: ubu
    emulate: true
    suites: {blindsig: {repetitions: 5}}
"""


def _err(text: str) -> str:
    with pytest.raises(MatrixError) as info:
        parse(text, "m.yml")
    return str(info.value)


def test_shipped_matrix_has_all_five_architectures() -> None:
    m = load(REPO / "matrix.yml")
    assert {t.arch for t in m.targets} == set(Arch)
    assert all(m.bases[t.base].source == "bootstrap" for t in m.targets)
    assert m.bases["debian-trixie"].suite == "trixie"


def test_defaults_merge_per_key() -> None:
    m = parse(GOOD)
    a, r = m.targets
    assert a.suites.blindsig is not None and r.suites.blindsig is not None
    assert a.suites.blindsig.rsa_bits == (1024, 2048)  # sorted
    assert r.suites.blindsig.repetitions == 5
    assert r.suites.blindsig.iterations == 10
    assert r.emulate is True and a.emulate is None
    assert r.arch is Arch.RISCV64


def test_unknown_key_names_path_allowed_keys_and_suggestion() -> None:
    msg = _err(GOOD.replace("emulate: true", "emualte: true"))
    assert msg.startswith("m.yml: invalid matrix")
    assert "targets[1] (r).emualte: unknown key 'emualte'" in msg
    assert "did you mean 'emulate'?" in msg
    assert "allowed: name, arch, base, profile, emulate, cpuset, cpus, host, suites" in msg


def test_unknown_key_in_defaults_is_reported_once() -> None:
    msg = _err(GOOD.replace("iterations: 10", "iteratons: 10"))
    assert msg.count("unknown key") == 1 and "(1 problem(s))" in msg
    assert "defaults.blindsig.iteratons" in msg and "did you mean 'iterations'?" in msg


def test_unknown_key_in_a_named_base() -> None:
    msg = _err(GOOD.replace("suite: trixie", "suite: trixie, mirorr: x"))
    assert "bases.deb.mirorr: unknown key 'mirorr'" in msg
    assert "did you mean 'mirror'?" in msg


def test_unknown_architecture_suggests_the_closest() -> None:
    msg = _err(GOOD.replace("arch: riscv64", "arch: riscv"))
    assert "targets[1] (r).arch: unknown architecture 'riscv'" in msg
    assert "allowed: amd64, arm64, riscv64, ppc64le, armv7" in msg
    assert "did you mean 'riscv64'?" in msg


def test_wrong_type_names_the_value() -> None:
    msg = _err(GOOD.replace("repetitions: 5", "repetitions: '5'"))
    assert (
        "targets[1] (r).suites.blindsig.repetitions: must be a whole number (got '5', a str)" in msg
    )
    assert "got '5', a str" in msg


def test_duplicate_target_name() -> None:
    msg = _err(GOOD.replace("name: r", "name: a"))
    assert "targets[1] (a).name: duplicate target name 'a'" in msg


def test_duplicate_yaml_key_is_an_error_not_last_wins() -> None:
    msg = _err(
        GOOD.replace(
            "  slim: {packages: [gcc]}", "  slim: {packages: [gcc]}\n  slim: {packages: [x]}"
        )
    )
    assert "duplicate key 'slim'" in msg


def test_unknown_base_and_profile_references() -> None:
    msg = _err(GOOD.replace("base: ubu", "base: ubuu"))
    assert "targets[1] (r).base: unknown base 'ubuu'" in msg and "did you mean 'ubu'?" in msg
    msg = _err(
        GOOD.replace(
            "{name: a, arch: amd64, base: deb}", "{name: a, arch: amd64, base: deb, profile: slm}"
        )
    )
    assert "unknown profile 'slm'" in msg and "did you mean 'slim'?" in msg


def test_base_source_fields_are_checked() -> None:
    msg = _err(GOOD.replace('{source: pull, image: "ubuntu:24.04"}', "{source: pull}"))
    assert "a 'pull' base needs 'image'" in msg
    msg = _err(GOOD.replace("{source: bootstrap, suite: trixie}", "{source: bootstrap}"))
    assert "a 'bootstrap' base needs 'suite'" in msg


def test_rsa_bits_range() -> None:
    msg = _err(GOOD.replace("[2048, 1024]", "[2048, 100]"))
    assert "RSA key size 100 is not allowed" in msg


def test_bad_yaml_and_missing_file() -> None:
    msg = _err("version: 1\nbases: [\n")
    assert "not valid YAML" in msg and 'in "m.yml", line 3' in msg
    with pytest.raises(MatrixError, match=r"nope.yml: cannot read the matrix"):
        load(Path("nope.yml"))


def test_select_by_arch_and_name() -> None:
    m = parse(GOOD)
    assert [t.name for t in m.select(archs=[Arch.RISCV64])] == ["r"]
    assert [t.name for t in m.select(names=["a"])] == ["a"]
    with pytest.raises(MatrixError, match=r"no target named 'x'"):
        m.select(names=["x"])
    with pytest.raises(
        MatrixError, match=r"no target for architecture ppc64le; the matrix has: amd64, riscv64"
    ):
        m.select(archs=[Arch.PPC64LE])


HOSTS = GOOD.replace(
    "targets:",
    """hosts:
  arm-box: {url: "ssh://bench@arm.example.org", max_parallel_runs: 1}
  lab: {context: power9}
targets:""",
).replace("{name: a, arch: amd64, base: deb}", "{name: a, arch: amd64, base: deb, host: arm-box}")


def test_hosts_are_parsed_and_named_without_user() -> None:
    m = parse(HOSTS)
    host = m.host("arm-box")
    assert host is not None and host.url == "ssh://bench@arm.example.org"
    assert host.display == "ssh://arm.example.org"
    assert m.host("local") is None
    lab = m.hosts["lab"]
    assert lab.context == "power9" and lab.display == "context power9"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{url: 'ssh://bench:hunter2@arm.example.org'}", "a password must not be written"),
        ("{url: 'http://arm.example.org'}", "use unix://PATH, tcp://HOST:PORT or ssh://USER@HOST"),
        ("{url: 'tcp://arm.example.org'}", "tcp:// needs a port"),
        ("{url: 'ssh://a@b', context: c}", "give exactly one of 'url' and 'context'"),
        ("{url: 'ssh://a@b', tls: {verify: true}}", "'tls' applies to tcp:// hosts only"),
        ("{url: 'tcp://b:2376', tls: {ca_cert: /nonexistent/ca.pem}}", "ca_cert: no such file"),
        ("{url: 'tcp://b:2376', max_parallel_runs: 0}", "must be at least 1 (got 0)"),
        ("{url: 'tcp://b:2376', max_paralel_runs: 2}", "did you mean 'max_parallel_runs'?"),
    ],
)
def test_bad_hosts(entry: str, message: str) -> None:
    msg = _err(HOSTS.replace('{url: "ssh://bench@arm.example.org", max_parallel_runs: 1}', entry))
    assert "hosts.arm-box" in msg and message in msg


def test_unknown_host_reference() -> None:
    msg = _err(HOSTS.replace("host: arm-box", "host: arm-bx"))
    assert "targets[0] (a).host: unknown host 'arm-bx'" in msg and "did you mean 'arm-box'?" in msg


def test_without_defaults_targets_run_the_blindsig_suite_with_thesis_parameters() -> None:
    m = parse(
        GOOD.replace(
            "defaults:\n  blindsig: {iterations: 10, repetitions: 3, rsa_bits: [2048, 1024]}\n", ""
        )
    )
    suite = m.targets[0].suites.blindsig
    assert (
        suite is not None and suite.iterations == 10 and suite.rsa_bits == (1024, 2048, 3072, 4096)
    )


SUITES = GOOD.replace(
    "  blindsig: {iterations: 10, repetitions: 3, rsa_bits: [2048, 1024]}\n",
    "  blindsig: {iterations: 10, repetitions: 3, rsa_bits: [2048, 1024]}\n"
    "  openssl-speed: {enabled: false, seconds: 2}\n"
    "  sodium: {repetitions: 16}\n",
).replace(
    "    suites: {blindsig: {repetitions: 5}}",
    "    suites: {blindsig: {enabled: false}, openssl-speed: {algorithms: [ecdsap521]}}",
)


def test_suites_inherit_defaults_and_a_named_suite_runs() -> None:
    a, r = parse(SUITES).targets
    # a: everything enabled in defaults; openssl-speed keeps its settings but does not run.
    assert list(a.suites.enabled()) == ["blindsig", "sodium"]
    assert a.suites.openssl_speed is not None and a.suites.openssl_speed.seconds == 2
    # r: naming openssl-speed under the target runs it, with the default seconds kept.
    assert list(r.suites.enabled()) == ["openssl-speed", "sodium"]
    assert r.suites.openssl_speed is not None
    assert (r.suites.openssl_speed.algorithms, r.suites.openssl_speed.seconds) == (
        ("ecdsap521",),
        2,
    )


def test_unknown_suite_key_and_algorithm_are_named() -> None:
    msg = _err(SUITES.replace("seconds: 2", "secnds: 2"))
    assert "defaults.openssl-speed.secnds: unknown key 'secnds'" in msg
    assert "did you mean 'seconds'?" in msg
    msg = _err(SUITES.replace("algorithms: [ecdsap521]", "algorithms: [ecdsabrp521r1]"))
    assert "targets[1] (r).suites.openssl-speed.algorithms" in msg
    assert "unknown algorithm 'ecdsabrp521r1'" in msg and "did you mean 'ecdsabrp512r1'?" in msg
    msg = _err(SUITES.replace("sodium: {repetitions: 16}", "sodum: {repetitions: 16}"))
    assert "defaults.sodum: unknown key 'sodum'" in msg and "did you mean 'sodium'?" in msg


def test_rsa_large_sizes_are_checked() -> None:
    msg = _err(SUITES.replace("sodium: {repetitions: 16}", "rsa-large: {bits: [2048, 20000]}"))
    assert "RSA key size 20000 is not allowed" in msg


def test_limits_per_operation_and_row_are_parsed_and_bad_ones_named() -> None:
    m = parse(GOOD + "limits:\n  signing: 1.02\n  RSA-4096 key generation: 1.5\n  CS blinding: 2\n")
    by_name = {(lim.scheme, lim.key_bits, lim.operation): lim.ratio for lim in m.row_limits}
    assert by_name == {
        (None, None, "signing"): 1.02,
        ("RSA", 4096, "key_generation"): 1.5,
        ("CS", None, "blinding"): 2.0,
    }
    assert parse(GOOD).row_limits == ()
    text = _err(GOOD + "limits:\n  sigining: 1.02\n")
    assert "m.yml" in text and "limits: 'sigining' is not an operation or row" in text
    assert "did you mean 'signing'?" in text
    assert "limit 0.98 is not a ratio in (1, 100]" in _err(GOOD + "limits: {signing: 0.98}\n")
    assert "only RSA rows have a key size" in _err(GOOD + "limits: {CS-2048 signing: 1.1}\n")


def test_symbol_files_are_off_unless_a_target_asks_for_them() -> None:
    m = parse(GOOD.replace("emulate: true", "emulate: true\n    symbol_files: true"), "m.yml")
    assert {t.name: t.symbol_files for t in m.targets} == {"a": False, "r": True}
    said = _err(GOOD.replace("emulate: true", "emulate: true\n    symbol_files: sometimes"))
    assert "symbol_files" in said and "sometimes" in said
