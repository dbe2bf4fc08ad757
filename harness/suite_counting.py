"""Instructions per block for the rsa-large and sodium suites (``--count-with``).

The drivers we own besides blindsig, ``rsa_large`` and ``sodium_bench``, take
``--count-markers``: every block that prints a line (rsa_large: ``keygen``,
``keygen_aborted``, ``calibrate``, ``sample``; sodium_bench: ``calib``,
``warmup``, ``sample``) is bracketed by the markers of ``count_marker.h``, in
print order. A :class:`CountSession` runs a driver under the counting QEMU
(``counting.counter_command``) and reads the plugin's counts; the functions
here pair the k-th count with the k-th block line and put each valid row's
counts in ``row["instructions"]``, one per ``samples_ns`` entry, as
``counting.attach_counts`` does for blindsig. Instructions per operation of a
block = count / ``ops_per_block``.

Suites that run programs archbench does not own (openssl speed, gpg, GNUnet's
perf programs, Taler's helpers) are not counted (:data:`COUNTED_SUITES`).

Standard library only (runs under the image's ``python3``); pure functions
except :meth:`CountSession.read` and :func:`start_session`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import counting

COUNTED_SUITES = ("blindsig", "rsa-large", "sodium")
"""Suites whose drivers mark their blocks; the others are "not counted"."""

RsaKey = tuple[int, str, str, int]
"""rsa_large block: (modulus bits, operation, line kind, index among its kind)."""
SodiumKey = tuple[str, str, int | None, str, int]
"""sodium_bench block: (scheme, operation, message bytes or None, line kind, index)."""


@dataclass(frozen=True)
class CountSession:
    """A checked counter for the suites' drivers: QEMU, CPU model, calibration record.

    ``work_dir`` receives one plugin output file per driver run.
    """

    counter: counting.Counter
    cpu: str
    work_dir: Path
    calibration: dict[str, Any]
    plugin_version: str
    plugin_api: int

    def command(self, argv: Sequence[str], label: str) -> tuple[list[str], Path]:
        """``argv`` (driver first) run under the counting QEMU with ``--count-markers``.

        Returns:
            (command line, path of the plugin output it will write).

        Raises:
            ValueError: ``label`` is not a plain file name part, or as
                ``counting.counter_command``.
        """
        if not label or not all(c.isalnum() or c in "-_." for c in label):
            raise ValueError(f"count label {label!r}: letters, digits and '-_.' only")
        out = self.work_dir / f"{label}.count"
        cmd = counting.counter_command(
            self.counter, self.cpu, out, Path(argv[0]), [*argv[1:], "--count-markers"]
        )
        return cmd, out

    def read(self, out: Path) -> counting.CountFile:
        """Parse the plugin output a :meth:`command` wrote.

        Raises:
            counting.CountError: missing, unreadable or malformed output.
        """
        try:
            text = out.read_text(encoding="utf-8")
        except OSError as exc:
            raise counting.CountError(f"counter output {out}: {exc.strerror}") from exc
        return counting.parse_count_file(text)

    def provenance(self) -> dict[str, Any]:
        """The document's ``counting`` object (``counting.provenance``)."""
        return counting.provenance(
            self.counter, self.cpu, self.calibration, self.plugin_version, self.plugin_api
        )


def start_session(
    directory: Path,
    cpu: str,
    calibrate_program: Path,
    calibration: dict[str, Any] | None = None,
    plugin: tuple[str, int] | None = None,
) -> CountSession:
    """Load the counting layer and check it with the calibration loop.

    ``calibration`` and ``plugin`` (version, API) are an earlier check's
    (blindsig's, in the same container) to reuse; then nothing is run.

    Raises:
        counting.CountError: no counting layer, or the calibration is not exact.
    """
    counter = counting.load_counter(directory)
    work_dir = Path(tempfile.mkdtemp(prefix="archbench-count-"))
    if calibration is None or plugin is None:
        stdout, counts = counting.run_counted(
            counter,
            cpu,
            calibrate_program,
            [str(counting.CALIBRATION_ITERATIONS)],
            work_dir / "calibrate.count",
        )
        calibration = counting.check_calibration(stdout, counts)
        plugin = (counts.plugin_version, counts.plugin_api)
    return CountSession(counter, cpu, work_dir, calibration, plugin[0], plugin[1])


def rsa_large_blocks(stdout: str) -> list[RsaKey]:
    """The marked blocks of one ``rsa_large`` run, in print order.

    ``keygen``/``keygen_aborted`` lines are ``key_generation`` blocks; each
    kind's index counts from 0 per size and operation.

    Raises:
        counting.CountError: a block line with too few fields or a non-numeric size.
    """
    keys: list[RsaKey] = []
    seen: dict[tuple[int, str, str], int] = {}
    for line in stdout.splitlines():
        f = line.split(" ")
        if f[0] in ("keygen", "keygen_aborted"):
            if len(f) != 3 or not f[1].isdigit():
                raise counting.CountError(f"rsa_large line {line!r}: not a key generation")
            where = (int(f[1]), "key_generation", f[0])
        elif f[0] in ("calibrate", "sample"):
            if len(f) != 5 or not f[1].isdigit():
                raise counting.CountError(f"rsa_large line {line!r}: not a block")
            where = (int(f[1]), f[2], f[0])
        else:
            continue
        index = seen.get(where, 0)
        seen[where] = index + 1
        keys.append((*where, index))
    return keys


def sodium_blocks(stdout: str) -> list[SodiumKey]:
    """The marked blocks of a ``sodium_bench`` run, in print order.

    Raises:
        counting.CountError: a block line with the wrong number of fields.
    """
    keys: list[SodiumKey] = []
    seen: dict[tuple[str, str, int | None, str], int] = {}
    for line in stdout.splitlines():
        f = line.split(" ")
        if f[0] not in ("calib", "warmup", "sample"):
            continue
        if len(f) != 7 or not (f[3] == "-" or f[3].isdigit()):
            raise counting.CountError(f"sodium_bench line {line!r}: not a block")
        where = (f[1], f[2], None if f[3] == "-" else int(f[3]), f[0])
        index = seen.get(where, 0)
        seen[where] = index + 1
        keys.append((*where, index))
    return keys


def _counts_for(paired: dict[Any, int], keys: Sequence[Any], label: str) -> list[int]:
    missing = [k for k in keys if k not in paired]
    if missing:
        raise counting.CountError(f"{label}: no count for block {missing[0]}")
    return [paired[k] for k in keys]


def attach_rsa_large(
    rows: Sequence[dict[str, Any]], stdout: str, counts: counting.CountFile
) -> bool:
    """Set ``instructions`` of the valid rows of one ``rsa_large`` run (one size).

    A size the driver declared invalid (an ``invalid`` line) gets no counts:
    its failed block was marked without a line, so counts and lines cannot be
    paired, and invalid rows carry no counts anyway.

    Returns:
        True when counts were attached, False for an invalid size.

    Raises:
        counting.CountError: counts and block lines of a valid size differ in
            number, or a valid row's block has no count.
    """
    if any(line.startswith("invalid ") for line in stdout.splitlines()):
        return False
    paired = counting.pair_counts(rsa_large_blocks(stdout), counts)
    for row in rows:
        if not row.get("valid") or row.get("suite") != "rsa-large":
            continue
        bits, op = int(row["key_bits"]), str(row["operation"])
        kind = "keygen" if op == "key_generation" else "sample"
        keys = [(bits, op, kind, i) for i in range(len(row["samples_ns"]))]
        row["instructions"] = _counts_for(paired, keys, f"rsa-large RSA-{bits} {op}")
    return True


def attach_sodium(rows: Sequence[dict[str, Any]], stdout: str, counts: counting.CountFile) -> None:
    """Set ``instructions`` of the valid sodium rows: one count per timed sample.

    Every marked block prints exactly one line (also a block whose calls
    failed), so all blocks pair; invalid rows get no counts.

    Raises:
        counting.CountError: counts and block lines differ in number, or a
            valid row's sample has no count.
    """
    paired = counting.pair_counts(sodium_blocks(stdout), counts)
    for row in rows:
        if not row.get("valid") or row.get("suite") != "sodium":
            continue
        scheme, op, size = str(row["scheme"]), str(row["operation"]), row.get("bytes_per_op")
        keys = [(scheme, op, size, "sample", i) for i in range(len(row["samples_ns"]))]
        row["instructions"] = _counts_for(paired, keys, f"sodium {scheme} {op}")
