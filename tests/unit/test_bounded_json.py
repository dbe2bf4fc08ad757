"""The bounded JSON reader's fast path reads what its checked path reads.

:func:`archbench.inputs.load_json` reads a text that has nothing to clean and no number
that could overflow without a Python call per string and per number; every other text
goes through the checked path (:func:`archbench.inputs.bounded._load_checked`). For any
text, both must give the same data, or the same error; and :func:`json_depth` must count
what the tokenizer it replaced counted.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.errors import ResultsError
from archbench.inputs import load_json
from archbench.inputs.bounded import MAX_DEPTH, _load_checked, json_depth

# Strings with what the reader cleans (C0, DEL, C1, bidi marks, separators), what it
# refuses (lone surrogates) and what it keeps (tab, newline, quotes, backslashes).
_CHARS = st.sampled_from(
    [
        *'ab é\t\n\r"\\/{}[]e1',
        *("\x00", "\x07", "\x08", "\x0c", "\x1b", "\x7f", "\x85"),
        *("\u202e", "\u2028", "\u200e", "\ud800", "€", "😀"),
    ]
)
_TEXT = st.lists(_CHARS, max_size=12).map("".join)
_NUMBER = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
)
_VALUE = st.recursive(
    st.none() | st.booleans() | _NUMBER | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)
# Number literals json.dumps never writes: exponents, huge mantissas, overflow.
_LITERAL = st.sampled_from(
    ["1e308", "2e308", "1e400", "-1e400", "1E+999", "1e-400", "1.5e10", "9" * 310,
     "9" * 309 + ".0", "0.5", "NaN", "Infinity", "-Infinity", "1e07", "12345678901234567890"]
)  # fmt: skip


def _read(reader: Any, text: str) -> tuple[str, Any]:
    """What ``reader`` makes of ``text``: ("ok", data) or ("error", its message)."""
    try:
        if reader is load_json:
            return "ok", load_json(text, "f.json", ResultsError)
        return "ok", reader(text)
    except ResultsError as exc:
        return "error", str(exc).removeprefix("f.json: ")
    except (ValueError, RecursionError) as exc:
        kind = "not valid JSON" if isinstance(exc, json.JSONDecodeError) else "a value cannot be"
        return "error", kind


def _same(text: str) -> None:
    fast = _read(load_json, text)
    checked = _read(_load_checked, text)
    if fast[0] == "ok" or checked[0] == "ok":
        assert fast == checked, text
    else:  # both refused: for the same reason
        assert fast[1].startswith(checked[1]) or checked[1] in fast[1], (fast, checked)


@settings(max_examples=150, deadline=None)
@given(_VALUE, st.booleans())
def test_any_document_reads_the_same_on_either_path(value: Any, ascii_only: bool) -> None:
    # ensure_ascii writes every non-ASCII character as \uXXXX: the escapes' path.
    _same(json.dumps(value, ensure_ascii=ascii_only))


@settings(max_examples=100, deadline=None)
@given(_LITERAL, _TEXT, st.booleans())
def test_numbers_and_duplicates_are_refused_alike(literal: str, key: str, twice: bool) -> None:
    body = f"{json.dumps(key)}: {literal}"
    text = "{" + body + (", " + body if twice else "") + ', "s": "1e400 and 2e308"}'
    _same(text)
    _same(f"[{literal}, {json.dumps(key)}]")


def test_a_results_file_takes_the_fast_path_and_an_escape_does_not() -> None:
    plain = '{"a": [1, 2.5, "x\\ty"], "b": {"c": "sha256:3e8f1e123"}}'
    assert load_json(plain, "f", ResultsError) == json.loads(plain)
    escaped = '{"a": "\\u001b[2J", "b": "\\b"}'
    assert load_json(escaped, "f", ResultsError) == {"a": "\\x1b[2J", "b": "\\x08"}
    with pytest.raises(ResultsError, match="too large for a float"):
        load_json('{"a": 1e400}', "f", ResultsError)
    with pytest.raises(ResultsError, match="duplicate key 'a'"):
        load_json('{"a": 1, "a": 2}', "f", ResultsError)


_TOKENS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{}]', re.DOTALL)


def _reference_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """The tokenizer json_depth had: strings and brackets, left to right."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif bracket in "]}":
            depth -= 1
    return deepest


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*'[]{}"\\ab,:', '"x]"', '"\\""', '"[{"']), max_size=60))
def test_depth_counts_the_brackets_outside_strings(parts: list[str]) -> None:
    text = "".join(parts)
    assert json_depth(text) == _reference_depth(text)
    assert json_depth("[" * (MAX_DEPTH + 5)) == _reference_depth("[" * (MAX_DEPTH + 5))
