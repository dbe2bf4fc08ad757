"""Property-based tests of the matrix loader and the grammars (Hypothesis).

The loader's contract for any input: it returns a valid :class:`Matrix`
whose shell-, argv- and Dockerfile-bound strings all match their grammar,
or raises :class:`MatrixError`; never another exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archbench.errors import MatrixError
from archbench.inputs import (
    DEBIAN_SUITE,
    IMAGE_REFERENCE,
    PACKAGE,
    check_base_name,
    check_image,
    check_mirror,
    check_name,
    check_package,
    check_target_name,
)
from archbench.matrix import Matrix, parse

BASE = {
    "version": 1,
    "bases": {
        "deb": {"source": "bootstrap", "suite": "trixie"},
        "ubu": {"source": "pull", "image": "ubuntu:24.04"},
    },
    "profiles": {"slim": {"packages": ["gcc"]}},
    "targets": [{"name": "a", "arch": "amd64", "base": "deb"}],
}

# Text that leans on what matters: shell metacharacters, options, look-alikes, controls.
SPICY = st.sampled_from([*";$`'\"\\|&<>(){}[]*?!~#%=:@/ \t\n\r\x00-+.,_", "с", "ｇ", "\u200b"])
HOSTILE_TEXT = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.one_of(SPICY, st.characters(max_codepoint=0x7F)), max_size=80),
    st.from_regex(PACKAGE, fullmatch=True),
    st.from_regex(IMAGE_REFERENCE, fullmatch=True),
    st.from_regex(DEBIAN_SUITE, fullmatch=True),
)


def check_grammars(m: Matrix) -> None:
    """Every string that reaches a shell, argv, Dockerfile or file name matches its grammar."""
    for name, base in m.bases.items():
        assert check_base_name(name) == name
        if base.suite is not None:
            assert re.fullmatch(DEBIAN_SUITE, base.suite) and not base.suite.startswith("-")
        if base.mirror is not None:
            check_mirror(base.mirror)
        if base.image is not None:
            assert IMAGE_REFERENCE.fullmatch(base.image)
    for name, profile in m.profiles.items():
        check_name(name)
        for package in profile.packages:
            assert PACKAGE.fullmatch(package) and package.isascii()
    for t in m.targets:
        check_target_name(t.name)
        check_name(t.profile)
        check_base_name(t.base)


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc: Any = json.loads(json.dumps(BASE))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return dict(doc)


FIELDS: list[tuple[Any, ...]] = [
    ("profiles", "slim", "packages", 0),
    ("bases", "deb", "suite"),
    ("bases", "deb", "mirror"),
    ("bases", "deb", "variant"),
    ("bases", "ubu", "image"),
    ("targets", 0, "name"),
    ("targets", 0, "base"),
    ("targets", 0, "profile"),
    ("targets", 0, "cpuset"),
]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=HOSTILE_TEXT)
def test_any_field_value_gives_a_checked_matrix_or_our_error(
    field: tuple[Any, ...], value: str
) -> None:
    text = yaml.safe_dump(_with(field, value), allow_unicode=True)
    try:
        m = parse(text, "m.yml")
    except MatrixError as exc:
        assert str(exc).startswith("m.yml: ")
        assert "errors.pydantic.dev" not in str(exc)
        return
    check_grammars(m)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(key=HOSTILE_TEXT)
def test_any_base_or_profile_key_is_checked(key: str) -> None:
    doc = _with(("bases", key), {"source": "bootstrap", "suite": "trixie"})
    doc["profiles"][key] = {"packages": ["gcc"]}
    try:
        m = parse(yaml.safe_dump(doc, allow_unicode=True), "m.yml")
    except MatrixError:
        return
    check_grammars(m)


YAML_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    HOSTILE_TEXT,
)
YAML_VALUES = st.recursive(
    YAML_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from([*BASE, "defaults", "hosts", "pools", "blindsig"]), HOSTILE_TEXT
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=YAML_VALUES)
def test_any_yaml_document_gives_a_matrix_or_our_error(doc: Any) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    try:
        m = parse(text, "m.yml")
    except MatrixError:
        return
    check_grammars(m)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(st.sampled_from(list(BASE)), YAML_VALUES, max_size=4))
def test_good_documents_with_parts_replaced_give_a_matrix_or_our_error(
    doc: dict[str, Any],
) -> None:
    merged = {**BASE, **doc}
    text = yaml.safe_dump(merged, allow_unicode=True)
    try:
        m = parse(text, "m.yml")
    except MatrixError:
        return
    check_grammars(m)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_gives_a_matrix_or_our_error(text: str) -> None:
    try:
        m = parse(text, "m.yml")
    except MatrixError:
        return
    check_grammars(m)


@settings(max_examples=300, deadline=None)
@given(value=st.from_regex(PACKAGE, fullmatch=True))
def test_package_grammar_accepts_what_it_describes(value: str) -> None:
    if len(value) <= 200 and value.isascii():
        assert check_package(value) == value


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(value=st.from_regex(IMAGE_REFERENCE, fullmatch=True))
def test_image_references_are_single_tokens(value: str) -> None:
    try:
        check_image(value)
    except ValueError:
        return
    assert not value.startswith("-") and not any(c.isspace() for c in value)
    assert not set(value) & set(";$`'\"\\|&<>(){}*?!")
