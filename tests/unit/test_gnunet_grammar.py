"""The ``gnunet:`` key of profiles and targets, and ``--gnunet SOURCE`` (issue 20).

Both forms go through the same models: the same value gives the same model and
is refused with the same words. Property tests: any text or YAML value ends in
a model whose strings match their grammars, or in a MatrixError naming the key
or flag; never another exception.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archbench.errors import MatrixError
from archbench.inputs import (
    GIT_REF,
    check_git_ref,
    check_git_url,
    check_local_path,
    check_sha256,
    check_tarball_location,
)
from archbench.matrix import (
    DEBIAN_GNUNET,
    GnunetDebian,
    GnunetGit,
    GnunetPath,
    GnunetSource,
    GnunetTarball,
    Matrix,
    load,
    parse,
    parse_gnunet,
)

SHA = "77102aa83fdb40abf2bf7434869abd7feb53f692a2d9bd4cf86a48e33f29a196"
URL = "https://git.gnunet.org/gnunet.git"

MATRIX = """\
version: 1
bases:
  deb: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [gcc]}
  src: {packages: [gcc], gnunet: PROFILE}
targets:
  - {name: a, arch: amd64, base: deb}
  - {name: b, arch: amd64, base: deb, profile: src}
  - {name: c, arch: amd64, base: deb, profile: src, gnunet: TARGET}
"""


def _matrix(profile: str = "debian", target: str = "debian", source: str = "/m/m.yml") -> Matrix:
    return parse(MATRIX.replace("PROFILE", profile).replace("TARGET", target), source, Path("/m"))


def _err(profile: str = "debian", target: str = "debian") -> str:
    with pytest.raises(MatrixError) as info:
        _matrix(profile, target)
    return str(info.value)


def _flag_err(text: str) -> str:
    with pytest.raises(MatrixError) as info:
        parse_gnunet(text, base_dir=Path("/m"))
    return str(info.value)


# ---------------------------------------------------------------- the four forms


def test_four_forms_and_a_targets_key_wins() -> None:
    m = _matrix(f"{{tarball: ../g.tar.gz, sha256: {SHA}}}", f"{{git: {URL}, ref: v0.27.0}}")
    a, b, c = m.targets
    assert m.gnunet(a) is DEBIAN_GNUNET and m.gnunet(a).kind == "debian"
    assert m.gnunet(b) == GnunetTarball(tarball="/g.tar.gz", sha256=SHA)
    assert m.gnunet(c) == GnunetGit(git=URL, ref="v0.27.0")
    m = _matrix("{path: src/gnunet}", "debian")
    assert m.gnunet(m.targets[1]) == GnunetPath(path="/m/src/gnunet")
    # A target's debian wins over its profile's source.
    assert isinstance(m.gnunet(m.targets[2]), GnunetDebian)


def test_relative_paths_are_relative_to_the_matrix_file(tmp_path: Path) -> None:
    text = MATRIX.replace("PROFILE", "{path: ../gnunet}").replace(
        "TARGET", f"{{tarball: g.tar.gz, sha256: {SHA}}}"
    )
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "m.yml").write_text(text, encoding="utf-8")
    m = load(tmp_path / "conf" / "m.yml")
    assert m.gnunet(m.targets[1]) == GnunetPath(path=str(tmp_path / "gnunet"))
    target = m.gnunet(m.targets[2])
    assert isinstance(target, GnunetTarball) and not target.is_url
    assert target.tarball == str(tmp_path / "conf" / "g.tar.gz")
    # parse() finds the folder of the file its source names, too.
    m = parse(text, str(tmp_path / "conf" / "m.yml"))
    assert m.gnunet(m.targets[1]) == GnunetPath(path=str(tmp_path / "gnunet"))


def test_tilde_is_expanded_and_urls_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/dev")
    assert parse_gnunet("~/src/gnunet") == GnunetPath(path="/home/dev/src/gnunet")
    m = _matrix("{path: ~/src/gnunet}")
    assert m.gnunet(m.targets[1]) == GnunetPath(path="/home/dev/src/gnunet")
    tarball = parse_gnunet(f"https://ftp.gnu.org/gnu/gnunet/gnunet-0.27.0.tar.gz@sha256:{SHA}")
    assert isinstance(tarball, GnunetTarball) and tarball.is_url
    assert tarball.tarball == "https://ftp.gnu.org/gnu/gnunet/gnunet-0.27.0.tar.gz"


@pytest.mark.parametrize(
    ("text", "mapping"),
    [
        ("debian", "debian"),
        (f"../g.tar.gz@sha256:{SHA}", f"{{tarball: ../g.tar.gz, sha256: {SHA}}}"),
        (f"a@b/g.tgz@sha256:{SHA}", f"{{tarball: 'a@b/g.tgz', sha256: {SHA}}}"),
        (f"git+{URL}@v0.27.0", f"{{git: {URL}, ref: v0.27.0}}"),
        (
            "git+file:///srv/gnunet.git@2d16252969cf",
            "{git: 'file:///srv/gnunet.git', ref: 2d16252969cf}",
        ),
        ("src/gnunet", "{path: src/gnunet}"),
        ("./debian", "{path: ./debian}"),
    ],
)
def test_the_string_form_gives_the_model_of_the_mapping(text: str, mapping: str) -> None:
    m = _matrix(mapping)
    assert parse_gnunet(text, base_dir=Path("/m")) == m.gnunet(m.targets[1])


# ---------------------------------------------------------------- what is refused, and how


def test_unknown_key_names_the_path_the_allowed_keys_and_a_suggestion() -> None:
    msg = _err(f"{{tarball: g.tgz, sha256: {SHA}, sha265: x}}")
    assert msg.startswith("m.yml: invalid matrix") or msg.startswith("/m/m.yml: invalid matrix")
    assert (
        "profiles.src.gnunet.sha265: unknown key 'sha265'; allowed: tarball, sha256; "
        "did you mean 'sha256'?" in msg
    )
    msg = _err(target=f"{{git: {URL}, ref: v1, rev: v2}}")
    assert "targets[2] (c).gnunet.rev: unknown key 'rev'; allowed: git, ref" in msg


def test_a_mapping_of_no_kind_or_two_kinds() -> None:
    msg = _err("{tarbal: g.tgz, sha256: x}")
    assert "profiles.src.gnunet: a gnunet mapping needs one of the keys tarball, git or path" in msg
    assert "(got 'tarbal', 'sha256')" in msg and "did you mean 'tarball'?" in msg
    msg = _err(target=f"{{git: {URL}, path: /x}}")
    assert "targets[2] (c).gnunet: give one of tarball, git and path, not git and path" in msg
    assert "targets[2] (c).gnunet: give debian, {tarball: PATH-or-URL" in _err(target="[1, 2]")


def test_missing_sha256_and_ref_say_what_to_add() -> None:
    assert "profiles.src.gnunet: a tarball is pinned by its sha256: add sha256:" in _err(
        "{tarball: g.tgz}"
    )
    assert "profiles.src.gnunet: a git source needs ref: the tag, branch or commit" in _err(
        f"{{git: {URL}}}"
    )


def test_a_wrong_string_suggests_debian_or_the_mapping() -> None:
    assert "gnunet 'Debian' is not allowed; give debian," in _err("Debian")
    assert "did you mean 'debian'?" in _err("Debian")
    msg = _err("../g.tar.gz")
    assert "a tarball, git repository or directory is a mapping in matrix.yml" in msg


@pytest.mark.parametrize(
    ("mapping", "expect"),
    [
        ("{git: 'ssh://git@git.gnunet.org/gnunet.git', ref: v1}", "git URL 'ssh://***@git"),
        ("{git: 'git@git.gnunet.org:gnunet.git', ref: v1}", "ssh, git:// and http:// are not used"),
        ("{git: 'http://git.gnunet.org/gnunet.git', ref: v1}", "is not allowed"),
        ("{git: 'ext::sh -c id', ref: v1}", "is not allowed"),
        ("{git: 'https://-oProxyCommand=id/x', ref: v1}", "is not allowed"),
        ("{git: 'https://h/g.git', ref: -c}", "ref '-c' is not allowed"),
        ("{git: 'https://h/g.git', ref: 'a..b'}", "git check-ref-format"),
        ("{git: 'https://h/g.git', ref: 'v1@{0}'}", "ref 'v1@{0}' is not allowed"),
        ("{git: 'https://h/g.git', ref: 'x.lock'}", "is not allowed"),
        ("{tarball: 'file:///g.tgz', sha256: " + SHA + "}", "not a file:// URL"),
        ("{tarball: 'ftp://h/g.tgz', sha256: " + SHA + "}", "http(s)://"),
        ("{tarball: 'https://u:pw@h/g.tgz', sha256: " + SHA + "}", "tarball"),
        ("{tarball: g.tgz, sha256: " + SHA.upper() + "}", "64-digit lowercase sha256"),
        ("{tarball: g.tgz, sha256: abc}", "sha256 'abc' is not allowed"),
        ("{path: '-rf'}", "path '-rf' is not allowed"),
        ("{path: '$(id)'}", "path '$(id)' is not allowed"),
        ("{path: ''}", "path '' is not allowed"),
        ('{path: "a\\nb"}', "path 'a\\nb' is not allowed"),
        ('{path: "a\\u202eb"}', "is not allowed"),
        ("{path: ~nosuchuser-archbench/x}", "no such user to expand '~'"),
        ("{path: 3}", "must be a string"),
    ],
)
def test_every_string_is_checked_against_its_grammar(mapping: str, expect: str) -> None:
    msg = _err(target=mapping)
    assert "targets[2] (c).gnunet" in msg and expect in msg, msg


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("", "--gnunet: give a GNUnet source: debian, PATH-or-URL@sha256:<64 hex>"),
        ("git+https://h/g.git", "names no ref; give git+URL@REF"),
        ("git+https://h/g.git@", "ref '' is not allowed"),
        ("git+ssh://git@h/g.git@v1", "git URL 'ssh://***@h/g.git' is not allowed"),
        ("../g.tar.gz", "a tarball is pinned by its sha256"),
        ("https://h/g.tar.gz", "a tarball is pinned by its sha256"),
        ("g.tgz@sha256:ABC", "sha256 'ABC' is not allowed"),
        ("-x", "path '-x' is not allowed"),
        ("a;id", "path 'a;id' is not allowed"),
    ],
)
def test_the_string_form_is_refused_naming_the_flag(text: str, expect: str) -> None:
    msg = _flag_err(text)
    assert msg.startswith("--gnunet: ") and expect in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    ("text", "mapping"),
    [
        ("git+https://h/g.git@a..b", "{git: 'https://h/g.git', ref: 'a..b'}"),
        ("git+http://h/g.git@v1", "{git: 'http://h/g.git', ref: v1}"),
        ("g.tgz@sha256:abc", "{tarball: g.tgz, sha256: abc}"),
        ("-x", "{path: '-x'}"),
    ],
)
def test_the_string_form_and_the_mapping_are_refused_in_the_same_words(
    text: str, mapping: str
) -> None:
    flag = _flag_err(text).removeprefix("--gnunet: ")
    line = next(x for x in _err(target=mapping).splitlines() if "targets[2] (c).gnunet" in x)
    assert line.endswith(flag), (line, flag)


def test_the_grammar_of_each_string() -> None:
    assert check_git_url(URL) == URL
    assert check_git_url("file:///srv/g.git") == "file:///srv/g.git"
    assert check_git_url("https://[::1]:8443/g.git")
    for bad in (
        "file://host/g",
        "file:relative",
        "https://h:99999/g",
        "https://h/g#x",
        "https:///g",
    ):
        with pytest.raises(ValueError, match="is not allowed"):
            check_git_url(bad)
    for good in ("v0.27.0", "master", "refs/tags/v0.27.0", "HEAD", "a/b-c_d+e", "0" * 40):
        assert check_git_ref(good) == good
    assert check_sha256(SHA) == SHA
    assert check_tarball_location("a b/g.tgz") == "a b/g.tgz"
    assert check_local_path("jürgen/src (copy)") == "jürgen/src (copy)"


# ---------------------------------------------------------------- properties

SPICY = st.sampled_from([*";$`'\"\\|&<>(){}[]*?!~#%=:@/ \t\n\r\x00-+.,_", "с", "ｇ", "\u200b"])
HOSTILE = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.one_of(SPICY, st.characters(max_codepoint=0x7F)), max_size=80),
    st.from_regex(GIT_REF, fullmatch=True),
    st.builds(lambda a, b: f"git+{a}@{b}", st.sampled_from([URL, "file:///g", "ssh://x"]), SPICY),
    st.builds(lambda a: f"{a}@sha256:{SHA}", st.text(max_size=40)),
)


def check_model(source: GnunetSource) -> None:
    """The strings of a model that reach an argv match their grammars; paths are absolute."""
    if isinstance(source, GnunetGit):
        assert check_git_url(source.git) and check_git_ref(source.ref)
        assert not source.ref.startswith("-") and "@" not in source.git + source.ref
    elif isinstance(source, GnunetTarball):
        assert check_sha256(source.sha256)
        assert source.is_url or os.path.isabs(source.tarball)
        assert source.tarball.isprintable() and not source.tarball.startswith("-")
    elif isinstance(source, GnunetPath):
        assert os.path.isabs(source.path) and source.path.isprintable()
    else:
        assert isinstance(source, GnunetDebian)


@settings(max_examples=400, deadline=None)
@given(text=HOSTILE)
def test_any_string_gives_a_checked_source_or_an_error_naming_the_flag(text: str) -> None:
    try:
        source = parse_gnunet(text, base_dir=Path("/m"))
    except MatrixError as exc:
        msg = str(exc)
        assert msg.startswith("--gnunet: ") and "\n" not in msg and "\x00" not in msg
        assert "errors.pydantic.dev" not in msg and len(msg) < 2000
        return
    check_model(source)


YAML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), HOSTILE),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.one_of(st.sampled_from(["tarball", "sha256", "git", "ref", "path"]), HOSTILE),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=YAML_VALUES)
def test_any_yaml_value_gives_a_checked_source_or_an_error_naming_the_key(value: Any) -> None:
    text = MATRIX.replace("PROFILE", "debian").replace("TARGET", json.dumps(value))
    try:
        m = parse(yaml.safe_dump(yaml.safe_load(text), allow_unicode=True), "m.yml")
    except MatrixError as exc:
        msg = str(exc)
        assert msg.startswith("m.yml: ") and "errors.pydantic.dev" not in msg
        assert "targets[2] (c).gnunet" in msg, msg
        assert "gnunet[" not in msg  # the union's tags never show
        return
    check_model(m.gnunet(m.targets[2]))


@settings(max_examples=150, deadline=None)
@given(ref=st.one_of(st.from_regex(GIT_REF, fullmatch=True), st.text(max_size=20)))
def test_every_ref_we_accept_git_accepts(ref: str) -> None:
    try:
        check_git_ref(ref)
    except ValueError:
        return
    done = subprocess.run(
        ["git", "check-ref-format", "--allow-onelevel", ref], capture_output=True, check=False
    )
    assert done.returncode == 0, ref
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._+/-]*", ref)
