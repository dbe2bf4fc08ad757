"""Log and output parsing is linear by construction, proven without a clock (issue 23).

Every regular expression of the log importer (``archbench/upstream/gnunet_log.py``,
``log_import.py``) and of the harness output parsers (``harness/abh/suites/*_output.py``)
is parsed with Python's own regex parser and checked:

* a pattern applied with ``match``/``fullmatch`` (one attempt at one place) may hold
  unbounded repeats only when they are possessive (``*+``, ``++``, Python 3.11+) or
  inside an atomic group: such a repeat never gives back what it took, so an attempt
  visits each character a bounded number of times;
* a pattern scanned over text (``search``, ``finditer``, ``findall``, ``sub``,
  ``split``) tries every position, so its repeats must all be bounded (at most
  :data:`MAX_BOUND`): each attempt then costs O(1) and a scan O(n).

Which way a module applies a pattern is read from its source. The line parsers that
need more than that (GNUnet's ``perf_crypto_*`` and Taler's ``test_helper_*`` lines)
use no pattern at all (:func:`archbench.upstream.gnunet_log.parse_timing_line`: ``rfind``,
``endswith`` and digit scans); a property test shows it reads what the old patterns read.
"""

from __future__ import annotations

import importlib
import inspect
import re
from types import ModuleType
from typing import Any

import pytest
from abh.suites import (
    blindsig_output,
    gnupg_output,
    openssl_speed_output,
    rsa_large_output,
    sodium_output,
)
from hypothesis import given
from hypothesis import strategies as st

from archbench.errors import ResultsError
from archbench.upstream import gnunet_log, log_import
from archbench.upstream.wording import (
    PERF_CRYPTO_CS_WORDING,
    PERF_CRYPTO_RSA_WORDING,
    TEST_HELPER_KINDS,
)

# Python 3.11+'s own regex parser and its opcodes (untyped, private: read only here).
sre: Any = importlib.import_module("re._constants")
sre_parse: Any = importlib.import_module("re._parser")

MODULES: tuple[ModuleType, ...] = (
    gnunet_log,
    log_import,
    blindsig_output,
    gnupg_output,
    openssl_speed_output,
    rsa_large_output,
    sodium_output,
)
MAX_BOUND = 64
"""Largest bounded repeat a scanned pattern may hold."""
SCANS = ("search", "finditer", "findall", "sub", "subn", "split")


def _patterns(module: ModuleType) -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, re.Pattern)
        or (isinstance(value, tuple) and value and all(isinstance(v, re.Pattern) for v in value))
    }


def _scanned(module: ModuleType, name: str) -> bool:
    source = inspect.getsource(module)
    # NAME.search(, and loops over a tuple of patterns: "for pattern in NAME" then pattern.search
    if re.search(rf"\b{name}\.({'|'.join(SCANS)})\(", source):
        return True
    loop = re.search(rf"for (\w+) in {name}\b", source)
    return bool(loop and re.search(rf"\b{loop.group(1)}\.({'|'.join(SCANS)})\(", source))


def _repeats(items: Any, atomic: bool = False) -> list[tuple[str, int, int, bool]]:
    """(kind, min, max, possessive-or-atomic) of every repeat in a parsed pattern."""
    found: list[tuple[str, int, int, bool]] = []
    for op, av in items:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, body = av
            found.append((str(op), low, high, atomic or op is sre.POSSESSIVE_REPEAT))
            found += _repeats(body, atomic or op is sre.POSSESSIVE_REPEAT)
        elif op is sre.ATOMIC_GROUP:
            found += _repeats(av, True)
        elif op is sre.SUBPATTERN:
            found += _repeats(av[-1], atomic)
        elif op is sre.BRANCH:
            for branch in av[1]:
                found += _repeats(branch, atomic)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            found += _repeats(av[1], atomic)
        elif op is sre.GROUPREF_EXISTS:
            for branch in av[1:]:
                if branch is not None:
                    found += _repeats(branch, atomic)
    return found


CASES = [
    (module.__name__, name, pattern)
    for module in MODULES
    for name, value in _patterns(module).items()
    for pattern in (value if isinstance(value, tuple) else (value,))
]


def test_the_audit_sees_every_pattern() -> None:
    names = {(m, n) for m, n, _ in CASES}
    assert ("archbench.upstream.gnunet_log", "_DURATION") in names
    assert ("archbench.upstream.gnunet_log", "_KEYSIZE_SETTING") in names
    assert ("abh.suites.openssl_speed_output", "_R_PKEY") in names
    assert ("abh.suites.gnupg_output", "_VERSION_RE") in names
    assert len(CASES) >= 12


@pytest.mark.parametrize(
    ("module", "name", "pattern"), CASES, ids=[f"{m}.{n}" for m, n, _ in CASES]
)
def test_every_pattern_is_linear_by_construction(
    module: str, name: str, pattern: re.Pattern[str]
) -> None:
    repeats = _repeats(sre_parse.parse(pattern.pattern, pattern.flags))
    owner = next(m for m in MODULES if m.__name__ == module)
    if _scanned(owner, name):
        unbounded = [r for r in repeats if r[2] > MAX_BOUND]
        assert not unbounded, f"{name} is scanned over text but repeats without bound"
    else:
        giving_back = [r for r in repeats if r[2] > MAX_BOUND and not r[3]]
        assert not giving_back, f"{name}: an unbounded repeat that can backtrack: {pattern.pattern}"


def test_the_timing_lines_use_no_pattern() -> None:
    source = inspect.getsource(gnunet_log.parse_timing_line)
    assert not re.search(r"\bre\.|\.search\(|\.match\(|_[A-Z]+\.", source)


def _old_pattern(kind: str) -> re.Pattern[str]:
    """The importer's patterns before issue 23 (cubic on long whitespace), for comparison."""

    def alternatives(words: Any) -> str:
        return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))

    if kind == "rsa":
        return re.compile(
            r"(?:^|\s)(?P<count>\d+)x (?P<bits>\d+)-"
            rf"(?P<what>{alternatives(PERF_CRYPTO_RSA_WORDING)}) took (?P<time>.+?)\s*$"
        )
    if kind == "cs":
        return re.compile(
            r"(?:^|\s)(?P<count>\d+)x "
            rf"(?P<what>{alternatives(PERF_CRYPTO_CS_WORDING)}) took (?P<time>.+?)\s*$"
        )
    return re.compile(
        rf"(?:^|\s)(?P<count>\d+) \((?P<kind>{alternatives([*TEST_HELPER_KINDS, 'batch'])})\) "
        r"signature operations took (?P<time>[^()]+?)\s*(?P<total>\(total real time\))?\s*$"
    )


_WORDS = st.sampled_from(
    [
        *(f"{{c}}x {{b}}-{w}" for w in PERF_CRYPTO_RSA_WORDING),
        *(f"{{c}}x {w}" for w in PERF_CRYPTO_CS_WORDING),
        *(f"{{c}} ({k}) signature operations" for k in [*TEST_HELPER_KINDS, "batch"]),
    ]
)
_BITS = st.text("0123456789", min_size=0, max_size=5)
_NOISE = st.text(" \tx-()0123456789msµ", max_size=8)


@given(_NOISE, _WORDS, _BITS, _BITS, _NOISE, st.sampled_from(["", " (total real time)", " "]))
def test_the_timing_line_reads_what_the_old_patterns_read(
    prefix: str, phrase: str, count: str, bits: str, time: str, tail: str
) -> None:
    line = f"{prefix}{phrase.format(c=count, b=bits)} took {time}{tail}"
    new = gnunet_log.parse_timing_line(line)
    old = next(
        (
            (kind, m)
            for kind in ("rsa", "cs", "helper")
            if (m := _old_pattern(kind).search(line)) is not None
        ),
        None,
    )
    if old is None:
        assert new is None, line
        return
    kind, m = old
    assert new is not None, line
    assert new.form == kind, line
    assert new.count == m.group("count")
    assert new.time == m.group("time").strip()
    if kind == "rsa":
        assert (new.bits, new.what) == (m.group("bits"), m.group("what"))


@pytest.mark.parametrize(
    "line",
    [
        " " * 1_000_000,
        "10x " + " " * 1_000_000 + "took 5 ms",
        "1" * 1_000_000 + "x 2048-signing took 34 ms",
        "100 (sequential) signature operations took " + " " * 1_000_000 + "(total real time)",
        " took" * 200_000,
    ],
    ids=["spaces", "spaces-after-count", "digits", "helper-spaces", "took-repeated"],
)
def test_a_megabyte_line_is_one_pass(line: str) -> None:
    # No clock: the proof is the construction above; this runs the long lines through
    # every function of a scan once (a cubic pattern would not finish within the test).
    gnunet_log.parse_timing_line(line)
    with pytest.raises(ResultsError):
        gnunet_log.scan_log(line, "perf_crypto_rsa.log")
