"""Integrity digests inside results files: what proves a stored result is the one written.

Every results file archbench writes (:meth:`archbench.result.ResultStore.save`) carries
``"digest": "sha256:<hex>"``: sha256 over the canonical form of the file's content without
the digest itself (:func:`canonical`): the JSON as archbench reads it
(:func:`archbench.inputs.load_json`, which makes control characters visible) with object
keys sorted, no whitespace, non-ASCII characters escaped, and a float that is a whole number
written as that integer. Reformatting a file (indentation, key order, ``1.0`` vs ``1``,
``\\u00e9`` vs ``é``) keeps its digest; any edited, added or removed value (a count, a
sample, a row, a provenance field) breaks it, as does truncation (which also breaks the
JSON).

:func:`check_digest` runs on every read of a results file
(:func:`archbench.result.parse_checked`): a file whose digest does not match is refused
with a message naming it (a :class:`~archbench.errors.ResultsError`), so reports, the store's
index, ``invoke publish``'s merge and a bisection's reuse all see the same verdict. A file
without a digest (written before archbench wrote them, or by hand) is read, so reports
still show it, but its counts are never reused to decide a bisection
(:func:`archbench.run.find_count`).

The digest protects against accidents (an edit, a half-synced copy, an old backup
restored over a newer file); it is not a signature: whoever can write the file can write a
matching digest.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Final

from archbench.errors import ResultsError
from archbench.inputs import quote

DIGEST_KEY: Final = "digest"
"""The top-level key of a results file that holds its digest."""
DIGEST_PREFIX: Final = "sha256:"
DIGEST_FORM: Final = re.compile(r"sha256:[0-9a-f]{64}")


def _normal(value: Any) -> Any:
    """``value`` with every whole-number float as its integer (JSON has one number type)."""
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value


def canonical(data: dict[str, Any]) -> bytes:
    """The canonical bytes of a parsed results file ``data`` without its :data:`DIGEST_KEY`
    (module docs). Raises ValueError for a NaN or infinity (no JSON has them)."""
    body = {k: v for k, v in data.items() if k != DIGEST_KEY}
    text = json.dumps(
        _normal(body), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return text.encode("ascii")


def content_digest(data: dict[str, Any]) -> str:
    """``sha256:<hex>`` of :func:`canonical` ``data``."""
    return DIGEST_PREFIX + hashlib.sha256(canonical(data)).hexdigest()


def with_digest(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a result's JSON form) with its digest after ``format`` and ``version``."""
    body = {k: v for k, v in data.items() if k != DIGEST_KEY}
    head: dict[str, Any] = {k: body[k] for k in ("format", "version") if k in body}
    return {**head, DIGEST_KEY: content_digest(body), **body}


def check_digest(data: Any, source: str) -> str | None:
    """The digest of the parsed results file ``data`` (named ``source`` in messages) once
    checked against its content; None when it has none (an older file).

    Raises:
        ResultsError: the digest is not ``sha256:`` and 64 hex digits, or does not match
            the content: the file was edited or truncated since it was written.
    """
    if not isinstance(data, dict) or DIGEST_KEY not in data:
        return None
    stored = data[DIGEST_KEY]
    if not isinstance(stored, str) or not DIGEST_FORM.fullmatch(stored):
        raise ResultsError(
            f"{source}: 'digest' is {quote(stored)}; allowed is 'sha256:' and 64 lowercase "
            "hex digits, as archbench writes it. Restore the file or re-measure"
        )
    try:
        found = content_digest(data)
    except ValueError as exc:  # NaN or infinity: not JSON archbench wrote
        raise ResultsError(f"{source}: not a results file archbench wrote ({exc})") from exc
    if found != stored:
        raise ResultsError(
            f"{source}: its content does not match its digest (written {stored[:19]}…, "
            f"content {found[:19]}…): the file was edited or truncated since archbench "
            "wrote it. Restore it from where it came from, or remove the run and measure again"
        )
    return stored
