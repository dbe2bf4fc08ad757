"""Valid input is taken as written (issue 23, kind 7), and the strict loaders are exact.

YAML merge keys work (duplicates are checked after merging); the strict JSON loader
reads every document without duplicate keys, non-finite numbers, lone surrogates or
control characters exactly as ``json.loads`` does (a property test), and neutralises
control characters into visible escapes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hostile_cases import GOOD_MATRIX
from hypothesis import given
from hypothesis import strategies as st

from archbench import matrix
from archbench.errors import MatrixError, ResultsError
from archbench.inputs import CONTROL, decode, load_json, load_yaml, neutralise


def test_yaml_merge_keys_are_applied_and_explicit_keys_win() -> None:
    text = "base: &b {a: 1, b: 2}\nmore: &m {b: 9, c: 3}\nx: {<<: [*b, *m], b: 5}\n"
    assert load_yaml(text, "m.yml", MatrixError)["x"] == {"a": 1, "b": 5, "c": 3}


def test_a_matrix_may_share_target_settings_through_a_merge_key() -> None:
    text = GOOD_MATRIX.replace(
        "  - {name: amd64-trixie, arch: amd64, base: deb, profile: slim}",
        "  - &t {name: amd64-trixie, arch: amd64, base: deb, profile: slim}\n"
        "  - {<<: *t, name: amd64-other}",
    )
    names = [t.name for t in matrix.parse(text, "m.yml").targets]
    assert names == ["amd64-trixie", "amd64-other", "arm64-noble"]


def test_a_key_twice_beside_a_merge_is_still_refused() -> None:
    with pytest.raises(MatrixError, match=r"(?s)duplicate key 'a'.*line 1, column 23"):
        load_yaml("x: {<<: {a: 1}, a: 2, a: 3}", "m.yml", MatrixError)


def test_a_tab_before_an_inline_comment_is_taken_as_yaml_allows() -> None:
    # YAML separates a comment by spaces or tabs; PyYAML alone refused the tab (issue 32).
    text = "version: 1\nsuite: x\t# why\nimage: 'a\t# kept'\t\t# c\n\t# a comment line\n"
    assert load_yaml(text, "m.yml", MatrixError) == {
        "version": 1,
        "suite": "x",
        "image": "a\t# kept",
    }
    matrix.parse(GOOD_MATRIX.replace("version: 1\n", "version: 1\t# one\n"), "m.yml")


def test_a_tab_elsewhere_still_names_line_and_column() -> None:
    with pytest.raises(
        MatrixError, match=r"(?s)'\\t' that cannot start any token.*line 2, column 9"
    ):
        load_yaml("version: 1\nsuite: x\tmore\n", "m.yml", MatrixError)


def test_one_byte_order_mark_rule_for_every_file() -> None:
    bom = "\ufeff"
    assert load_yaml(bom + "a: 1\n", "m.yml", MatrixError) == {"a": 1}
    text = decode(b"\xef\xbb\xbf" + b'{"a": 1}', "r.json", ResultsError, "the results file")
    assert load_json(text, "r.json", ResultsError) == {"a": 1}
    # Only the first BOM is a mark; one inside is text.
    assert decode(b"\xef\xbb\xbfx\xef\xbb\xbf", "f", ResultsError, "f") == "x\ufeff"


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=12)
)
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _neutral(value: Any) -> Any:
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, list):
        return [_neutral(v) for v in value]
    if isinstance(value, dict):
        return {neutralise(k): _neutral(v) for k, v in value.items()}
    return value


@given(_DOCS)
def test_the_strict_loader_reads_what_json_reads_with_controls_made_visible(doc: Any) -> None:
    text = json.dumps(doc)
    if isinstance(doc, dict) and len({neutralise(k) for k in doc}) != len(doc):
        return  # two keys that differ only in control characters: refused, see below
    loaded = load_json(text, "f.json", ResultsError)
    assert loaded == _neutral(json.loads(text))
    assert not any(CONTROL.search(s) for s in _strings(loaded))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return []
