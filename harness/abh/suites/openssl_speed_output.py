"""Parsing ``openssl speed -elapsed -mr`` output for the ``openssl-speed`` suite.

Record formats (recorded from OpenSSL 1.1.1w, 3.0.19 and 3.5.9; see
``tests/fixtures/openssl-speed/README.txt``). With ``-mr`` the children/processes
print these to stderr (all three versions); the ``+F`` summaries and, with
``-multi``, ``Forked child``/``Got: ...`` go to stdout. Both streams are parsed.

``+DTP:<bits>:<what>:<kind>:<seconds>``
    header before a public-key test: ``2048:private:rsa`` (1.1.1, 3.0) or
    ``2048:private:rsa sign`` (3.5) for RSA sign, ``public:rsa[ verify]`` for
    verify, ``256:sign:ecdsa``, ``384::ecdh``, ``253:sign:Ed25519``. OpenSSL 3.5
    adds ``+DTP:rsa2048:keygen:<seconds>`` style headers for its KEM/signature tests.
``+R<k>:<count>:<bits>[:<name>]:<time>``
    public-key result: test number ``k``, ``count`` operations in ``time`` s
    (2 decimals). ``name`` is present for EdDSA (``Ed25519``). ``k`` depends on the
    version: RSA sign/verify are R1/R2 everywhere, ECDSA R5/R6 (1.1.1, 3.0) or R7/R8
    (3.5), ECDH R7 or R9, EdDSA R8/R9 or R10/R11. OpenSSL 3.5's extra RSA tests
    (encrypt R3, decrypt R4, KEM R15-R17, signature R18-R20, ``<bits>`` = ``rsa2048``)
    are kept in ``extra`` but not reported.
``+DT:<evp name>:<seconds>:<bytes>`` and ``+R:<count>:<evp name>:<time>``
    ``-evp`` header and result (time with 6 decimals).
``+H``, ``+F<k>``
    summaries; ignored: their numbering and field lists differ between versions
    (3.5's ``+F2`` has four RSA fields, 1.1.1's and 3.0's two; ``-evp`` is ``+F:22``
    in 1.1.1 and ``+F:25`` in 3.x) and with ``-multi`` they are the parent's sums.

Times are printed with 2 decimals (10 ms), so a public-key sample is resolved to
0.33 % with ``-seconds 3``. OpenSSL 3.5 runs, for every ``rsa<bits>`` name, eight
more tests than sign/verify (encrypt, decrypt, KEM and signature-API tests with a
key generation each), so an RSA process takes about 10 x ``seconds`` there (and the
key generations can take minutes for RSA-15360 under emulation: see ``timeout_s``).

Mapping ``+R<k>`` to an operation without a per-version table: within one
process for one algorithm, OpenSSL numbers its tests in the order it runs them, so
the lowest-numbered records with a numeric ``<bits>`` field are the algorithm's first
tests: sign then verify (RSA, ECDSA, EdDSA), or derive (ECDH). For single-process
runs each mapped record is also checked against the ``+DTP`` header printed just
before it, so a layout change fails loudly instead of mislabelling rows.

``-multi N``: OpenSSL forks N children that each run the whole test list and print
their own ``+R`` lines (N per test, interleaved); the parent's ``+F`` lines are the
sum of the children's rates (fixture ``openssl35-multi2-sha256-1024``:
701186048 + 699346944 = 1400532992 bytes/s). A ``-multi`` row therefore has
``ops_per_block`` = the sum of the children's counts and a sample time
``T = sum(n_i) / sum(n_i / t_i)``, so that ``ops_per_block / T`` equals OpenSSL's
aggregate rate. With ``-elapsed`` every ``t_i`` is the requested seconds to within
the 10 ms print resolution, so ``T`` is the common wall time of the N processes.

Plausibility: with ``-elapsed`` a test stops at the first operation ending after the
``-seconds`` alarm, so a record's time ``t`` must lie in ``[0.5 S, 3 S]``
(``TIME_TOLERANCE``), or above it only when the overrun is explained by operations
in flight: ``t - S <= 2 t / n`` (one RSA-15360 sign under emulation can take longer
than ``S``). Counts must be >= 1. Recorded with ``-seconds 1``: RSA-2048 sign and
every other reported test 0.99 s to 1.02 s, single and ``-multi 2``, in all three
versions; the longest seen was OpenSSL 3.5's (unreported) RSA-7680 key generation,
1 operation in 4.85 s, which the overrun rule accepts.

Pure functions over recorded text (``tests/fixtures/openssl-speed/``); nothing
here runs openssl. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from abh.suites.openssl_speed_algorithms import Algorithm

TIME_TOLERANCE = (0.5, 3.0)
"""A record's time in s must lie within these multiples of the requested ``-seconds``."""

# Possessive repeats (Python 3.11+) give nothing back, so a fullmatch is linear in the
# line whatever it holds (tests/unit/hostile/test_linear_patterns.py checks every one).
_R_PKEY = re.compile(r"\+R(\d++):(-?+\d++):([^:]++):(?:([^:]++):)?+(\d++(?:\.\d++)?+)")
_R_EVP = re.compile(r"\+R:(-?+\d++):([^:]++):(\d++(?:\.\d++)?+)")
_DTP = re.compile(r"\+DTP:([^:]*+):([^:]*+):(?:([^:]*+):)?+(\d++)")
_DT = re.compile(r"\+DT:([^:]++):(\d++):(\d++)")


@dataclass(frozen=True)
class SpeedRecord:
    """One ``+R`` line.

    Attributes:
        index: ``k`` of ``+R<k>`` (public-key tests), None for the ``-evp`` ``+R:`` form.
        count: operations counted (may be <= 0 in broken output).
        label: the ``<bits>`` field (``2048``, ``rsa2048``) or the EVP name.
        seconds: the record's time in s (wall time with ``-elapsed``).
        line: the line as printed.
        header: the ``+DTP``/``+DT`` line printed just before it on the same stream,
            or None.
    """

    index: int | None
    count: int
    label: str
    seconds: float
    line: str
    header: str | None


@dataclass
class SpeedOutput:
    """The records of one ``openssl speed -mr`` process.

    Attributes:
        records: ``+R`` lines in stream order (stdout first, then stderr).
        headers: ``+DTP`` and ``+DT`` lines.
        malformed: lines starting with ``+R``/``+DT`` that match no known format.
        lines: every line starting with ``+`` (records, headers, ``+F``, ``+H``), in
            stream order, stdout first.
    """

    records: list[SpeedRecord] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def parse_speed_output(stdout: str, stderr: str) -> SpeedOutput:
    """Pick the ``+R``, ``+DTP`` and ``+DT`` lines out of both streams of one process.

    Other lines (``+F``, ``+H``, ``Forked child``, ``Got: ...``, messages) are ignored.

    Returns:
        the parsed records; lines that look like records but do not parse are listed
        in ``malformed`` (never raises).
    """
    out = SpeedOutput()
    for stream in (stdout, stderr):
        header: str | None = None
        for raw in stream.splitlines():
            line = raw.strip()
            if line.startswith("+"):
                out.lines.append(line)
            if line.startswith("+DT"):
                if _DTP.fullmatch(line) or _DT.fullmatch(line):
                    header = line
                    out.headers.append(line)
                else:
                    out.malformed.append(line)
            elif line.startswith("+R"):
                m = _R_PKEY.fullmatch(line)
                if m:
                    rec = SpeedRecord(int(m[1]), int(m[2]), m[3], float(m[5]), line, header)
                    out.records.append(rec)
                    continue
                m = _R_EVP.fullmatch(line)
                if m:
                    out.records.append(
                        SpeedRecord(None, int(m[1]), m[2], float(m[3]), line, header)
                    )
                else:
                    out.malformed.append(line)
    return out


def header_operation(header: str) -> tuple[str, str] | None:
    """Classify a ``+DTP`` header as (kind, operation), e.g. ``("rsa", "sign")``.

    ``+DTP:2048:private:rsa:1`` and ``+DTP:2048:private:rsa sign:1`` -> rsa sign,
    ``public:rsa[ verify]`` -> rsa verify, ``256:sign:ecdsa`` -> ecdsa sign,
    ``384::ecdh`` -> ecdh derive, ``253:verify:Ed25519`` -> eddsa verify.

    Returns:
        None for other headers (OpenSSL 3.5's RSA encrypt/decrypt, KEM and signature
        tests, ``+DT`` evp headers).
    """
    m = _DTP.fullmatch(header)
    if not m or m[3] is None:
        return None
    what, kind = m[2], m[3]
    table = {
        ("private", "rsa"): ("rsa", "sign"),
        ("private", "rsa sign"): ("rsa", "sign"),
        ("public", "rsa"): ("rsa", "verify"),
        ("public", "rsa verify"): ("rsa", "verify"),
        ("sign", "ecdsa"): ("ecdsa", "sign"),
        ("verify", "ecdsa"): ("ecdsa", "verify"),
        ("", "ecdh"): ("ecdh", "derive"),
    }
    if kind in ("Ed25519", "Ed448") and what in ("sign", "verify"):
        return ("eddsa", what)
    return table.get((what, kind))


@dataclass(frozen=True)
class Measurement:
    """One operation's result in one process (aggregated over ``-multi`` children).

    Attributes:
        count: operations, summed over the children.
        seconds: time in s such that ``count / seconds`` is OpenSSL's aggregate rate
            (sum of the children's ``n_i / t_i``); the record's time for one process.
        lines: the ``+R`` lines it came from.
    """

    count: int
    seconds: float
    lines: tuple[str, ...]


Result = Measurement | str
"""A :class:`Measurement`, or the reason (str) why the record is impossible."""


def _plausible(rec: SpeedRecord, seconds: int) -> str | None:
    """None when ``rec`` is possible for ``-seconds seconds``, else the reason."""
    if rec.count < 1:
        return f"record {rec.line!r}: count {rec.count} (expected >= 1)"
    low, high = TIME_TOLERANCE[0] * seconds, TIME_TOLERANCE[1] * seconds
    overrun_ok = rec.seconds - seconds <= 2 * rec.seconds / rec.count
    if rec.seconds < low or (rec.seconds > high and not overrun_ok):
        return (
            f"record {rec.line!r}: time {rec.seconds:g} s is outside "
            f"[{low:g}, {high:g}] s for -seconds {seconds}"
        )
    return None


def _aggregate(recs: Sequence[SpeedRecord], processes: int, seconds: int, what: str) -> Result:
    if len(recs) != processes:
        lines = "; ".join(r.line for r in recs) or "none"
        return f"expected {processes} {what} record(s) (one per process), got {len(recs)}: {lines}"
    for rec in recs:
        reason = _plausible(rec, seconds)
        if reason:
            return reason
    count = sum(r.count for r in recs)
    rate = sum(r.count / r.seconds for r in recs)
    return Measurement(count, count / rate, tuple(r.line for r in recs))


def extract_measurements(
    algorithm: Algorithm,
    output: SpeedOutput,
    *,
    processes: int,
    seconds: int,
    size: int | None = None,
) -> dict[str, Result]:
    """Map one process's records to the algorithm's operations.

    Args:
        algorithm: what the process measured.
        output: its parsed output.
        processes: N of ``-multi N`` (1 without ``-multi``).
        seconds: the ``-seconds`` value asked for.
        size: ``-bytes`` value for ``-evp`` algorithms.

    Returns:
        operation -> :class:`Measurement`, or the reason string naming the offending
        record line when the records are missing, malformed or impossible.
    """
    ops = algorithm.operations
    if output.malformed:
        reason = f"malformed record line {output.malformed[0]!r}"
        return dict.fromkeys(ops, reason)
    if algorithm.kind == "evp":
        recs = [r for r in output.records if r.index is None]
        bad = [r for r in recs if r.label.lower() != algorithm.name]
        bad_dt = [h for h in output.headers if (m := _DT.fullmatch(h)) and int(m[3]) != size]
        if bad:
            return dict.fromkeys(ops, f"record {bad[0].line!r} is not {algorithm.name}")
        if bad_dt:
            return dict.fromkeys(ops, f"header {bad_dt[0]!r} is not for {size}-byte buffers")
        return dict.fromkeys(ops, _aggregate(recs, processes, seconds, f"+R ({algorithm.name})"))
    legacy = [r for r in output.records if r.index is not None and r.label.isdigit()]
    wrong = [r for r in legacy if int(r.label) != algorithm.bits]
    if wrong:
        return dict.fromkeys(
            ops, f"record {wrong[0].line!r} is not for {algorithm.bits} bits ({algorithm.name})"
        )
    indices = sorted({r.index for r in legacy if r.index is not None})
    results: dict[str, Result] = {}
    for pos, op in enumerate(ops):
        if pos >= len(indices):
            results[op] = f"no +R record for {algorithm.name} {op} in the output"
            continue
        index = indices[pos]
        recs = [r for r in legacy if r.index == index]
        if processes == 1:
            mismatch = [
                r
                for r in recs
                if r.header is None or header_operation(r.header) != (algorithm.kind, op)
            ]
            if mismatch:
                results[op] = (
                    f"record {mismatch[0].line!r} follows header {mismatch[0].header!r}, "
                    f"not a {algorithm.kind} {op} header: unknown openssl speed layout"
                )
                continue
        results[op] = _aggregate(recs, processes, seconds, f"+R{index}")
    return results
