"""Untrusted values and pydantic's validation errors said in archbench's words.

:func:`quote` cuts any value quoted in a message to a few dozen characters,
so a multi-megabyte string in a hostile file costs nothing to report.
Pydantic's ``str(ValidationError)`` carries links to errors.pydantic.dev and
the whole offending input; :func:`problem` turns one error into a short
phrase ("must be a whole number (got 'abc', a str)") with the input cut by
:func:`quote`. Every place a ValidationError can reach a user goes through here.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

QUOTE_LIMIT: Final = 80

CONTROL: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""Characters no stored text may carry raw: C0 controls but tab, newline and carriage
return (ESC starts the CSI and OSC sequences that clear a screen or retitle a window),
DEL (pdflatex stops at it), C1 controls, the line and paragraph separators, and the
bidirectional marks, embeddings, overrides and isolates (U+202E reverses what follows)."""
TERMINAL_CONTROL: Final = re.compile(CONTROL.pattern[:-1] + "\r]")
""":data:`CONTROL` and carriage return: what a line shown on a terminal may not carry."""


CREDENTIALS: Final = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)[^ \t\r\n/?#]{0,1024}@")
"""The user name and password of a URL (``https://user:pw@host``, ``ssh://me@host``): up
to the last ``@`` before the host's end, so a password holding ``@`` is covered whole.
Bounded repeats keep a search linear in the text's length."""


def redact_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it written ``***``
    (``https://user:pw@host/g.git`` -> ``https://***@host/g.git``).

    Every message and stored text that may hold a URL the user gave passes through here
    (:func:`quote`, the terminal's :func:`archbench.cli.terminal.safe_text`), so a
    password typed into a URL is never printed, logged or stored. Linear in ``len(text)``.
    """
    return CREDENTIALS.sub(r"\1***@", text) if "@" in text else text


def neutralise(text: str, pattern: re.Pattern[str] = CONTROL) -> str:
    """``text`` with every character of ``pattern`` (:data:`CONTROL`) as a visible escape.

    ``"a\x1b]0;x\x07"`` becomes ``"a\\x1b]0;x\\x07"`` and U+202E ``"\\u202e"``:
    ASCII text that shows what was there and passes through every table, CSV cell
    and LaTeX file. Linear in ``len(text)``; text without such characters is returned
    as it is.
    """
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to about ``limit`` characters (``'aaaa…' (5000 chars)``).

    Never formats more than ``limit`` characters of a string, so quoting a
    multi-megabyte value in an error costs nothing.
    """
    if isinstance(value, str):
        # Redacted before it is cut or escaped: neither may leave part of a password. Only
        # the head is looked at (a URL's credentials are at most 1 KiB), never a copy of all.
        size = len(value)
        value = redact_credentials(value[: limit + 1100])
        if size > limit:
            return f"{value[:limit]!r}… ({size} chars)"
    if isinstance(value, bytes) and len(value) > limit:
        return redact_credentials(f"{value[:limit]!r}… ({len(value)} bytes)")
    if isinstance(value, dict | list | tuple | set):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    text = redact_credentials(repr(value))
    return text if len(text) <= limit else text[:limit] + "…"


_PLAIN: Final[dict[str, str]] = {
    "missing": "required key missing",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "dict_type": "must be a mapping (key: value)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "model_type": "must be a mapping (key: value)",
    "model_attributes_type": "must be a mapping (key: value)",
    "none_required": "must be empty (null)",
    "frozen_instance": "cannot be changed",
}


def _ctx(err: Mapping[str, Any], key: str) -> Any:
    ctx = err.get("ctx") or {}
    return ctx.get(key)


def problem(err: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a phrase.

    Validators of ours raise ``ValueError`` with a complete message: that is
    kept (without pydantic's "Value error, " prefix). Type and range errors
    get our wording and the offending value, cut to a few dozen characters.
    """
    kind = str(err.get("type", ""))
    value = err.get("input")
    got = f" (got {quote(value)}, a {type(value).__name__})"
    if kind == "value_error":
        return str(err.get("msg", "")).removeprefix("Value error, ")
    if kind == "assertion_error":
        return str(err.get("msg", "")).removeprefix("Assertion failed, ")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return _PLAIN[kind]
    if kind == "string_type" and isinstance(value, bool | int | float):
        return _PLAIN[kind] + got + _unquoted(value)
    if kind in _PLAIN:
        return _PLAIN[kind] + got
    bounds = {
        "greater_than": "more than",
        "greater_than_equal": "at least",
        "less_than": "less than",
        "less_than_equal": "at most",
    }
    for name, words in bounds.items():
        if kind == name:
            limit = next(iter((err.get("ctx") or {}).values()), "?")
            return f"must be {words} {limit} (got {quote(value)})"
    if kind in {"too_short", "too_long"}:
        field = _ctx(err, "field_type") or "value"
        if kind == "too_short":
            return f"{field.lower()} needs at least {_ctx(err, 'min_length')} item(s)"
        return f"{field.lower()} may have at most {_ctx(err, 'max_length')} item(s)"
    if kind == "string_too_short":
        return f"must not be empty (at least {_ctx(err, 'min_length')} character(s))"
    if kind == "string_too_long":
        return f"is too long: at most {_ctx(err, 'max_length')} characters (got {quote(value)})"
    if kind == "string_pattern_mismatch":
        return f"{quote(value)} does not have the allowed form {_ctx(err, 'pattern')}"
    if kind == "literal_error":
        return f"must be one of {_ctx(err, 'expected')}{got}"
    if kind == "enum":
        return f"must be one of {_ctx(err, 'expected')}{got}"
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        return f"is not one of the allowed kinds{got}"
    # Unknown kinds: pydantic's own sentence, which never contains the link.
    return str(err.get("msg", kind)) + got


def _unquoted(value: bool | int | float) -> str:
    """Why YAML gave ``value`` where text was meant, and the fix (quote it)."""
    if isinstance(value, bool):
        words = "on, yes, y or true" if value else "off, no, n or false"
        example = "'on'" if value else "'off'"
        return (
            f": YAML reads an unquoted {words} as {str(value).lower()}; write the text "
            f"in quotes, e.g. {example}"
        )
    return f": YAML reads an unquoted {value!r} as a number; write it in quotes, e.g. '{value}'"


def location(loc: Sequence[str | int]) -> str:
    """``("targets", 1, "arch")`` as ``targets[1].arch``; ``<document>`` when empty."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in {"function-after", "function-before", "function-wrap"} or "[" in part:
            continue
        else:
            out += ("." if out else "") + part
    return out or "<document>"


def describe_problems(exc: ValidationError, limit: int = 5) -> str:
    """Up to ``limit`` problems of ``exc``, ``"at 'a.b': phrase"`` each, ``; ``-separated."""
    errors = exc.errors()
    parts = [f"at '{location(e['loc'])}': {problem(e)}" for e in errors[:limit]]
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or ``""`` when none is close.

    Closeness is :func:`difflib.get_close_matches`' ratio, at least 0.5.
    """
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""
