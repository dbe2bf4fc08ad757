"""``openssl-speed`` suite: the container's ``openssl speed -mr`` (standard library only).

Each measurement is one ``openssl speed -elapsed -mr -seconds S`` process for ONE
algorithm (and, for ``-evp`` ones, one buffer size via ``-bytes``), optionally with
``-multi N``. One algorithm per process keeps every record unambiguous: OpenSSL's
``+R`` lines carry the key size in bits but not the curve name (P-256 and
brainpoolP256r1 both print ``256``), the ``-evp`` ``+R`` line carries no buffer size,
and with ``-multi`` the children's lines interleave.

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
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suite_common import Progress, SuiteError, SuiteOutcome, check_keys, make_row, run_command

SUITE = "openssl-speed"

TIME_TOLERANCE = (0.5, 3.0)
"""A record's time in s must lie within these multiples of the requested ``-seconds``."""


@dataclass(frozen=True)
class Algorithm:
    """One selectable algorithm: our config name is also ``openssl speed``'s argument.

    Attributes:
        name: config and command-line name (``rsa2048``, ``ecdsabrp512r1``,
            ``aes-128-gcm``; for ``-evp`` ones the EVP name passed to ``-evp``).
        kind: ``rsa``, ``ecdsa``, ``ecdh``, ``eddsa`` or ``evp``.
        scheme: row ``scheme`` (``RSA``, ``ECDSA``, ``ECDH``, ``Ed25519``, ``X25519``,
            ``AES-128-GCM``, ``SHA-256``).
        operations: row operations in OpenSSL's test order (``sign``, ``verify``).
        bits: the ``<bits>`` field OpenSSL prints in ``+R``/``+DTP`` (0 for evp):
            modulus bits, curve field bits, 253 for X25519/Ed25519, 456 for Ed448.
        key_bits: RSA modulus size in bits, else None.
        param: curve name for EC/EdDSA/X25519 rows, else None (evp rows get ``16 B``).
    """

    name: str
    kind: str
    scheme: str
    operations: tuple[str, ...]
    bits: int = 0
    key_bits: int | None = None
    param: str | None = None


def _algorithms() -> dict[str, Algorithm]:
    table: list[Algorithm] = [
        Algorithm(f"rsa{b}", "rsa", "RSA", ("sign", "verify"), b, key_bits=b)
        for b in (1024, 2048, 3072, 4096, 7680, 15360)
    ]
    curves = [
        ("p256", 256, "P-256"),
        ("p384", 384, "P-384"),
        ("p521", 521, "P-521"),
        ("brp256r1", 256, "brainpoolP256r1"),
        ("brp384r1", 384, "brainpoolP384r1"),
        ("brp512r1", 512, "brainpoolP512r1"),
    ]
    table += [
        Algorithm(f"ecdsa{c}", "ecdsa", "ECDSA", ("sign", "verify"), b, param=p)
        for c, b, p in curves
    ]
    table += [Algorithm(f"ecdh{c}", "ecdh", "ECDH", ("derive",), b, param=p) for c, b, p in curves]
    table += [
        Algorithm("ecdhx25519", "ecdh", "X25519", ("derive",), 253, param="Curve25519"),
        Algorithm("ecdhx448", "ecdh", "X448", ("derive",), 448, param="Curve448"),
        Algorithm("ed25519", "eddsa", "Ed25519", ("sign", "verify"), 253),
        Algorithm("ed448", "eddsa", "Ed448", ("sign", "verify"), 456),
        Algorithm("aes-128-gcm", "evp", "AES-128-GCM", ("encrypt",)),
        Algorithm("aes-256-gcm", "evp", "AES-256-GCM", ("encrypt",)),
        Algorithm("sha256", "evp", "SHA-256", ("hash",)),
    ]
    return {a.name: a for a in table}


ALGORITHMS: dict[str, Algorithm] = _algorithms()
"""Selectable algorithms by config name."""

DEFAULT_ALGORITHMS: tuple[str, ...] = (
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "ecdsap256",
    "ecdsap384",
    "ecdsap521",
    "ecdsabrp256r1",
    "ecdsabrp384r1",
    "ecdsabrp512r1",
    "ecdhp256",
    "ecdhp384",
    "ecdhp521",
    "ecdhbrp256r1",
    "ecdhbrp384r1",
    "ecdhbrp512r1",
    "ecdhx25519",
    "ed25519",
    "ed448",
    "aes-128-gcm",
    "aes-256-gcm",
    "sha256",
)
DEFAULT_EVP_SIZES: tuple[int, ...] = (16, 64, 256, 1024, 8192, 16384)
"""OpenSSL's own default ``-evp`` buffer sizes in bytes."""

CONFIG_KEYS = ("algorithms", "evp_sizes", "seconds", "multi", "repeat", "timeout_s")


# --------------------------------------------------------------------------- config


def _int_list(key: str, value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise SuiteError(f"{SUITE}: {key} = {value!r}: expected a non-empty list of {what}")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise SuiteError(f"{SUITE}: {key} item {item!r}: expected {what}")
        if item in out:
            raise SuiteError(f"{SUITE}: {key} lists {item} twice")
        out.append(item)
    return out


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SuiteError(f"{SUITE}: {key} = {value!r}: expected an integer >= 1")
    return value


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults.

    Keys (all optional):
        algorithms: list of names from :data:`ALGORITHMS` (default
            :data:`DEFAULT_ALGORITHMS`).
        evp_sizes: buffer sizes in bytes for ``-evp`` algorithms, one process each
            (default 16, 64, 256, 1024, 8192, 16384).
        seconds: ``-seconds`` per test, integer s >= 1 (default 3).
        multi: process counts; 1 = a single process, N > 1 adds ``-multi N``
            (default [1]).
        repeat: how many times the whole run is repeated; each repetition is one
            sample of every row (default 1).
        timeout_s: wall-clock limit per ``openssl`` process in s (default 300).

    Returns:
        the settings with defaults filled in (JSON-able).

    Raises:
        SuiteError: unknown key, or a value of the wrong type or range; the message
            names the key, the value and what is allowed.
    """
    check_keys(SUITE, config, CONFIG_KEYS)
    algorithms = config.get("algorithms", list(DEFAULT_ALGORITHMS))
    if not isinstance(algorithms, list) or not algorithms:
        raise SuiteError(f"{SUITE}: algorithms = {algorithms!r}: expected a non-empty list")
    names: list[str] = []
    for name in algorithms:
        if name not in ALGORITHMS:
            raise SuiteError(
                f"{SUITE}: unknown algorithm {name!r} in algorithms; allowed: "
                + ", ".join(ALGORITHMS)
            )
        if name in names:
            raise SuiteError(f"{SUITE}: algorithms lists {name!r} twice")
        names.append(name)
    timeout = config.get("timeout_s", 300)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}: expected a number of s > 0")
    return {
        "algorithms": names,
        "evp_sizes": _int_list(
            "evp_sizes", config.get("evp_sizes", list(DEFAULT_EVP_SIZES)), "byte counts >= 1"
        ),
        "seconds": _positive_int("seconds", config.get("seconds", 3)),
        "multi": _int_list("multi", config.get("multi", [1]), "process counts >= 1"),
        "repeat": _positive_int("repeat", config.get("repeat", 1)),
        "timeout_s": timeout,
    }


# --------------------------------------------------------------------------- parsing

_R_PKEY = re.compile(r"\+R(\d+):(-?\d+):([^:]+):(?:([^:]+):)?(\d+(?:\.\d+)?)")
_R_EVP = re.compile(r"\+R:(-?\d+):([^:]+):(\d+(?:\.\d+)?)")
_DTP = re.compile(r"\+DTP:([^:]*):([^:]*):(?:([^:]*):)?(\d+)")
_DT = re.compile(r"\+DT:([^:]+):(\d+):(\d+)")


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


# --------------------------------------------------------------------------- running


def speed_argv(algorithm: Algorithm, seconds: int, processes: int, size: int | None) -> list[str]:
    """The ``openssl speed`` command line for one measurement.

    ``-elapsed`` makes OpenSSL divide by wall-clock time instead of user CPU time.
    """
    argv = ["openssl", "speed", "-elapsed", "-mr", "-seconds", str(seconds)]
    if processes > 1:
        argv += ["-multi", str(processes)]
    if algorithm.kind == "evp":
        argv += ["-bytes", str(size), "-evp", algorithm.name]
    else:
        argv.append(algorithm.name)
    return argv


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"


@dataclass
class Cell:
    """One future row: one algorithm, operation, ``-multi`` count and buffer size.

    Attributes:
        results: one :data:`Result` per repetition, in order.
        wall_ns: the openssl process's wall time in ns per repetition (whole process,
            all its tests; only used for invalid rows without a measurement).
    """

    algorithm: Algorithm
    operation: str
    processes: int
    size: int | None
    results: list[Result] = field(default_factory=list)
    wall_ns: list[int] = field(default_factory=list)


def build_row(cell: Cell, repeat: int) -> dict[str, Any] | None:
    """Turn one cell's repetitions into a row (None: invalid with no time to carry).

    Counts differ between repetitions, so ``ops_per_block`` is the first repetition's
    count ``n_0`` and each sample is rescaled to it: ``t_i * n_0 / n_i`` (in ns), with
    the raw counts in ``block_ops`` when ``repeat`` > 1. An invalid repetition makes
    the row invalid; its samples are then the valid repetitions' times, or else the
    openssl processes' wall times with ``ops_per_block`` 1.
    """
    alg = cell.algorithm
    good = [r for r in cell.results if isinstance(r, Measurement)]
    reasons = [(i, r) for i, r in enumerate(cell.results) if isinstance(r, str)]
    kwargs: dict[str, Any] = {
        "key_bits": alg.key_bits,
        "param": alg.param if cell.size is None else f"{cell.size} B",
        "bytes_per_op": cell.size,
        "processes": cell.processes,
        "repetitions_requested": repeat,
    }
    if reasons:
        i, reason = reasons[0]
        kwargs["valid"] = False
        kwargs["invalid_reason"] = f"repetition {i}: {reason}" if repeat > 1 else reason
    if good:
        n0 = good[0].count
        samples = [round(m.seconds * 1e9 * n0 / m.count) for m in good]
        if repeat > 1:
            kwargs["block_ops"] = [m.count for m in good]
        return make_row(SUITE, alg.scheme, cell.operation, samples, n0, **kwargs)
    walls = [w for w in cell.wall_ns if w > 0]
    if not walls:
        return None
    return make_row(SUITE, alg.scheme, cell.operation, walls, 1, **kwargs)


def run(config: dict[str, Any], warn: Callable[[str], None]) -> SuiteOutcome:
    """Measure every configured algorithm, size and process count ``repeat`` times.

    Repetitions are the outer loop, so drift over the run spreads over all rows.

    Returns:
        rows (``samples_ns`` = wall ns per block of ``ops_per_block`` operations),
        ``tools["openssl"]`` = ``openssl version -a`` output, and ``extra["runs"]``
        with every process's argv and record lines.

    Raises:
        SuiteError: no ``openssl`` CLI (Debian package ``openssl``), a process exited
            non-zero (the message has its stderr tail) or timed out.
    """
    cfg = normalize_config(config)
    if shutil.which("openssl") is None:
        raise SuiteError(
            "openssl CLI not found; add the Debian package 'openssl' to the target's profile"
        )
    version = run_command(["openssl", "version", "-a"], 30)
    if version.returncode != 0:
        raise SuiteError(f"openssl version -a failed: {_tail(version.stderr)}")
    seconds: int = cfg["seconds"]
    cells: dict[tuple[str, str, int, int | None], Cell] = {}
    runs: list[dict[str, Any]] = []
    per_pass = sum(
        len(cfg["evp_sizes"]) if ALGORITHMS[name].kind == "evp" else 1 for name in cfg["algorithms"]
    )
    progress = Progress(SUITE, cfg["repeat"] * len(cfg["multi"]) * per_pass)
    for rep in range(cfg["repeat"]):
        for processes in cfg["multi"]:
            for name in cfg["algorithms"]:
                alg = ALGORITHMS[name]
                sizes: list[int | None] = list(cfg["evp_sizes"]) if alg.kind == "evp" else [None]
                for size in sizes:
                    argv = speed_argv(alg, seconds, processes, size)
                    progress.step(
                        f"{name}"
                        + (f" {size} B" if size is not None else "")
                        + (f" -multi {processes}" if processes > 1 else "")
                        + (f" (run {rep + 1})" if cfg["repeat"] > 1 else "")
                    )
                    res = run_command(argv, float(cfg["timeout_s"]))
                    if res.returncode != 0:
                        raise SuiteError(
                            f"{' '.join(argv)} exited with status {res.returncode}: "
                            f"{_tail(res.stderr)}"
                        )
                    output = parse_speed_output(res.stdout, res.stderr)
                    runs.append(
                        {
                            "argv": argv,
                            "repetition": rep,
                            "elapsed_ns": res.elapsed_ns,
                            "lines": output.lines,
                        }
                    )
                    found = extract_measurements(
                        alg, output, processes=processes, seconds=seconds, size=size
                    )
                    for op, result in found.items():
                        cell = cells.setdefault(
                            (name, op, processes, size), Cell(alg, op, processes, size)
                        )
                        cell.results.append(result)
                        cell.wall_ns.append(res.elapsed_ns)
    rows: list[dict[str, Any]] = []
    for cell in cells.values():
        row = build_row(cell, cfg["repeat"])
        if row is None:
            warn(f"{SUITE}: {cell.algorithm.name} {cell.operation}: no usable time; row omitted")
        else:
            rows.append(row)
    return SuiteOutcome(
        rows=rows,
        parameters=cfg,
        tools={"openssl": version.stdout.strip()},
        extra={"runs": runs},
    )
