"""The taler-helper suite under the counting QEMU: the security module's instructions.

``test_helper_cs``/``_rsa`` start ``taler-exchange-secmod-cs``/``-rsa`` themselves, from
``<prefix>/bin`` of the prefix variable (``TALER_PREFIX``, ``TALER_EXCHANGE_PREFIX``). A
child exec'd by a guest runs under binfmt_misc's static QEMU, which cannot load plugins,
so counting mode gives the test a *shadow prefix* (:func:`make_shadow_prefix`): symbolic
links to everything of the real prefix, except the two secmods, which link to the counting
layer's wrapper :data:`EXEC_COUNTED` (``images/counter/exec-counted``; ``/tmp`` is
``noexec``), told by the environment (:func:`wrapper_env`) to put the real prefix back in
the variable and ``exec`` the secmod under the counting layer's QEMU with the plugin in
process mode (``process=on``, plugin version 3, ``images/counter/archbench_count.c``). The
test program itself runs as before (not counted).

Process mode counts every instruction of the secmod process per vCPU (one per guest
thread; vCPU 0 is the main thread) and how often each translation block executed
(:func:`parse_process_count`). In the secmods of exchange 0.9.2 to 0.14.1 the main thread
runs GNUnet's scheduler: start-up, configuration, key generation and announcements,
accepting connections, shutdown; each client connection has a thread of its own that
reads the requests, signs (single requests; CS also derives R on request) and sends the
replies, and batch requests go to worker threads. So (:func:`secmod_counts`):

* **signing**: the instructions of every thread but the main one, divided by the
  signatures the secmod computed: the executions of the entry block of libgnunetutil's
  ``GNUNET_CRYPTO_rsa_sign_blinded`` / ``GNUNET_CRYPTO_cs_sign_derive`` (a call always
  starts a translation block at the function's first instruction);
* **key generation**: the main thread's instructions divided by the calls of
  ``GNUNET_CRYPTO_rsa_private_key_create`` / ``GNUNET_CRYPTO_cs_private_key_generate``.

Standard library only (runs under the image's ``python3``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abh.suites import count_symbols, counting
from abh.suites.common import SuiteError, make_row
from abh.suites.count_symbols import MapEntry
from abh.suites.counting import COUNT_FORMAT, CountError

SECMODS = {
    "test_helper_cs": "taler-exchange-secmod-cs",
    "test_helper_rsa": "taler-exchange-secmod-rsa",
}
"""The security module each test starts (from ``<prefix>/bin``)."""
SIGN_FUNCTIONS = {"CS": "GNUNET_CRYPTO_cs_sign_derive", "RSA": "GNUNET_CRYPTO_rsa_sign_blinded"}
"""libgnunetutil's function that computes one blind signature, per scheme (the call the
secmods of exchange 0.9.2 to 0.14.1 make per signature)."""
KEYGEN_FUNCTIONS = {
    "CS": "GNUNET_CRYPTO_cs_private_key_generate",
    "RSA": "GNUNET_CRYPTO_rsa_private_key_create",
}
"""libgnunetutil's function that makes one denomination key, per scheme."""
SUITE_ROWS = "taler-helper"
"""The suite of the counted rows (scheme and operation named freely, like sodium's)."""
TOP_FUNCTIONS = 8
"""Functions of the whole secmod process kept per run (``extra["counts"]``)."""

SIGNING_NOTE = (
    "{secmod}'s instructions per signature over whole runs of {test}, counted under QEMU "
    "by archbench's plugin in process mode: everything its threads other than the main "
    "one executed (the client connection threads: reading each request, {extra}signing, "
    "encoding and sending the reply; the batch workers), divided by the signatures it "
    "computed ({function} calls; the test's requests that fail on purpose, for revoked "
    "or unknown keys, add their handling but no signature); the test program is not "
    "counted"
)
KEYGEN_NOTE = (
    "{secmod}'s main thread per key it generated ({function} calls) over whole runs of "
    "{test}: key generation together with the process's start-up, configuration, key "
    "announcements, accepting connections and shutdown"
)


@dataclass(frozen=True)
class ProcessCount:
    """The plugin's process-mode output (``process=on``).

    ``vcpus``: instructions per vCPU index (0: the main thread; an index is reused by
    a later thread once its thread ended); ``execs``: per translation-block start
    address, ``(executions, instructions)`` summed over its translations; ``total``:
    the plugin's sum of ``vcpus``.
    """

    plugin_version: str
    plugin_api: int
    target: str
    vcpus: dict[int, int]
    execs: dict[int, tuple[int, int]]
    maps: tuple[MapEntry, ...]
    guest_base: int | None
    total: int


def parse_process_count(text: str) -> ProcessCount:
    """Parse a process-mode plugin output.

    Raises:
        CountError: no or a wrong header, an ``error`` line, a malformed line, no
            ``total`` line (the secmod did not exit through QEMU's exit path), or a
            total that is not the sum of the ``vcpu`` lines.
    """
    lines = text.splitlines()
    if not lines:
        raise CountError("secmod counter output is empty (the plugin did not start)")
    head = lines[0].split("\t")
    if len(head) != 4 or head[0] != COUNT_FORMAT or not head[2].isdigit():
        raise CountError(f"secmod counter output line 1: not an {COUNT_FORMAT} header")
    vcpus: dict[int, int] = {}
    execs: dict[int, tuple[int, int]] = {}
    maps: list[MapEntry] = []
    base: int | None = None
    total: int | None = None
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        kind = fields[0]
        if kind == "error":
            raise CountError(f"secmod counter output line {lineno}: plugin error: {line[6:]}")
        try:
            if kind == "vcpu" and len(fields) == 3:
                vcpus[int(fields[1])] = vcpus.get(int(fields[1]), 0) + int(fields[2])
            elif kind == "exec" and len(fields) == 4:
                addr, n, insns = int(fields[1], 16), int(fields[2]), int(fields[3])
                old = execs.get(addr, (0, 0))
                execs[addr] = (old[0] + n, old[1] + insns)
            elif kind == "map" and len(fields) == 6:
                lo, hi, off = (int(f, 16) for f in (fields[1], fields[2], fields[4]))
                maps.append(MapEntry(lo, hi, off, fields[5]))
            elif kind == "base" and len(fields) == 2:
                base = int(fields[1], 16)
            elif kind == "total" and len(fields) == 2:
                total = int(fields[1])
            else:
                raise ValueError(kind)
        except ValueError:
            raise CountError(f"secmod counter output line {lineno}: malformed: {line!r}") from None
        if min((int(f) for f in fields[1:] if f.isdigit()), default=0) < 0:
            raise CountError(f"secmod counter output line {lineno}: negative: {line!r}")
    if total is None:
        raise CountError(
            "secmod counter output has no total line: the secmod did not exit through "
            "QEMU (killed hard?)"
        )
    if total != sum(vcpus.values()):
        raise CountError(
            f"secmod counter output: total {total} is not the sum of its vCPUs "
            f"({sum(vcpus.values())})"
        )
    return ProcessCount(head[1], int(head[2]), head[3], vcpus, execs, tuple(maps), base, total)


def entry_calls(
    count: ProcessCount, names: Sequence[str], symbolizer: count_symbols.Symbolizer
) -> dict[str, int]:
    """How often each function of ``names`` was called: the executions of the
    translation blocks that start at its first instruction (0 when never)."""
    wanted = set(names)
    calls = dict.fromkeys(names, 0)
    for addr, (n, _) in count.execs.items():
        name = symbolizer.entry(addr)
        if name is not None and name in wanted:
            calls[name] += n
    return calls


def secmod_counts(
    count: ProcessCount, scheme: str, symbolizer: count_symbols.Symbolizer | None = None
) -> dict[str, Any]:
    """One run's figures: the main thread's and the other threads' instructions, the
    signing and key-generation calls, and the process's top functions.

    Returns:
        ``{"main_thread": int, "other_threads": int, "total": int, "threads": int
        (vCPU indices that ran), "signatures": int, "keys_generated": int,
        "top_functions": [{"library", "function", "instructions"}, ...]}``.

    Raises:
        CountError: no ``base`` line (no attribution: plugin API >= 2).
    """
    if count.guest_base is None:
        raise CountError("secmod counter output has no base line (plugin API 1 needed)")
    sym = symbolizer or count_symbols.Symbolizer(count.maps, count.guest_base)
    sign, keygen = SIGN_FUNCTIONS[scheme], KEYGEN_FUNCTIONS[scheme]
    calls = entry_calls(count, [sign, keygen], sym)
    attributed = sym.attribute({a: insns for a, (_, insns) in count.execs.items()})
    top = count_symbols.top_functions(attributed, TOP_FUNCTIONS)
    main = count.vcpus.get(0, 0)
    return {
        "main_thread": main,
        "other_threads": count.total - main,
        "total": count.total,
        "threads": len(count.vcpus),
        "signatures": calls[sign],
        "keys_generated": calls[keygen],
        "top_functions": [
            {
                "library": t["library"],
                "function": t["function"],
                "instructions": round(float(str(t["instructions_per_op"]))),
            }
            for t in top
        ],
    }


def counted_rows(
    test: str, bits: int | None, runs: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The rows of one test and key size from its runs' :func:`secmod_counts`.

    ``runs``: ``{"seconds": float, **secmod_counts}`` per run. Two rows:
    ``secmod_signing`` (other threads / signatures) and ``secmod_key_generation``
    (main thread / keys), each with one count per run rescaled to the first run's
    operations (``ops_per_block``; the test asks the same of every run), ``samples_ns``
    the run's wall time under the counting QEMU, and a ``note`` saying what was counted.

    Raises:
        SuiteError: a run computed no signature or generated no key (nothing to
            divide by: the functions were not found or not called).
    """
    scheme = "RSA" if bits is not None else "CS"
    secmod = SECMODS[test]
    out: list[dict[str, Any]] = []
    for operation, part, ops_key, function, note in (
        ("secmod_signing", "other_threads", "signatures", SIGN_FUNCTIONS[scheme], SIGNING_NOTE),
        (
            "secmod_key_generation",
            "main_thread",
            "keys_generated",
            KEYGEN_FUNCTIONS[scheme],
            KEYGEN_NOTE,
        ),
    ):
        ops = [int(r[ops_key]) for r in runs]
        if not ops or min(ops) < 1:
            raise SuiteError(
                f"counting {test}{f' RSA-{bits}' if bits else ''}: no {function} call "
                f"counted in a run ({ops}); is the secmod linked against libgnunetutil?"
            )
        per_block = ops[0]
        counts = [
            max(1, round(int(r[part]) * per_block / n)) for r, n in zip(runs, ops, strict=True)
        ]
        row = make_row(
            SUITE_ROWS,
            scheme,
            operation,
            [max(1, round(float(r["seconds"]) * 1e9)) for r in runs],
            per_block,
            key_bits=bits,
        )
        row["instructions"] = counts
        row["note"] = note.format(
            secmod=secmod,
            test=test,
            function=function,
            extra="deriving R on request, " if scheme == "CS" else "",
        )
        out.append(row)
    return out


EXEC_COUNTED = "exec-counted"
"""The counting layer's wrapper (``images/counter/exec-counted``) that runs the program
its link is named after under the counting QEMU in process mode."""
PREFIX_VARIABLES = ("TALER_PREFIX", "TALER_EXCHANGE_PREFIX")
"""The prefix variables the exchange's versions read (the wrapper exports them)."""


def wrapper_env(
    session: counting.CountSession, out: Path, real: Path, variables: Sequence[str]
) -> dict[str, str]:
    """The environment that tells :data:`EXEC_COUNTED` how to run the real program.

    ``out``: the plugin's output file; ``real``: the real prefix, which the wrapper puts
    back into ``variables`` (the secmod reads its configuration under it).

    Raises:
        ValueError: ``out`` has a comma (QEMU splits plugin arguments at commas), a
            variable is not a known prefix variable, or as
            :func:`counting.check_cpu_model`.
    """
    counting.check_cpu_model(session.cpu)
    if "," in str(out):
        raise ValueError(f"plugin output path {out} must not contain a comma")
    unknown = [v for v in variables if v not in PREFIX_VARIABLES]
    if unknown or not variables:
        raise ValueError(f"prefix variables {list(variables)}: allowed {PREFIX_VARIABLES}")
    return {
        "ARCHBENCH_COUNT_DIR": str(session.counter.directory),
        "ARCHBENCH_COUNT_QEMU": session.counter.qemu,
        "ARCHBENCH_COUNT_CPU": session.cpu,
        "ARCHBENCH_COUNT_OUT": str(out),
        "ARCHBENCH_COUNT_REAL": str(real),
        "ARCHBENCH_COUNT_VARS": " ".join(variables),
    }


def make_shadow_prefix(real: Path, shadow: Path, wrapped: Sequence[str], wrapper: Path) -> None:
    """A prefix at ``shadow`` that is ``real`` except ``bin/<name>`` of ``wrapped``.

    Every entry of ``real`` is a symbolic link, except ``bin``: a folder of links to
    ``real/bin``'s files, where each name of ``wrapped`` links to ``wrapper`` instead
    (the harness's ``/tmp`` is ``noexec``: what runs must live in the image).

    Raises:
        SuiteError: ``real/bin`` lacks a wrapped program, or ``wrapper`` is missing.
    """
    if not wrapper.is_file():
        raise SuiteError(f"{wrapper} is missing: the counting layer predates secmod counting")
    shadow.mkdir(parents=True)
    for entry in sorted(real.iterdir()):
        if entry.name != "bin":
            (shadow / entry.name).symlink_to(entry)
    (shadow / "bin").mkdir()
    for entry in sorted((real / "bin").iterdir()):
        if entry.name not in wrapped:
            (shadow / "bin" / entry.name).symlink_to(entry)
    for name in wrapped:
        if not (real / "bin" / name).is_file():
            raise SuiteError(f"{real / 'bin' / name} is missing: the secmod was not installed")
        (shadow / "bin" / name).symlink_to(wrapper)


def read_run(out: Path, scheme: str) -> dict[str, Any]:
    """Parse the plugin output of one secmod run and compute :func:`secmod_counts`.

    Raises:
        CountError: missing or malformed output (the message names the file).
    """
    try:
        text = out.read_text(encoding="utf-8")
    except OSError as exc:
        raise CountError(
            f"secmod counter output {out}: {exc.strerror} (did the test start it?)"
        ) from exc
    return secmod_counts(parse_process_count(text), scheme)
