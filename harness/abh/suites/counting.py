"""Instructions per block: run a driver under the counting QEMU and pair its counts.

In-container half of ``invoke bench --metric instructions`` (host half:
``archbench/images/counter.py`` builds the counting layer). The layer puts an
amd64 QEMU user emulator, its libraries and dynamic loader and our TCG plugin
(``images/counter/archbench_count.c``) in ``/opt/archbench/counter`` with a
``counter.json`` manifest. The kernel runs that x86-64 QEMU natively in any
container on an x86-64 engine; QEMU runs the target's own driver binary with
the plugin, which writes one ``block <seq> <instructions>`` line per block
the driver marked (``drivers/counting/count_marker.h``). :func:`pair_counts`
pairs the k-th count with the k-th block line the driver printed; each counted
suite names its blocks and puts the counts in its rows' ``instructions``
(``blindsig_counting``, ``rsa_large_output``, ``sodium_output``).

Before counts are trusted, :func:`run_calibration` runs ``count_calibrate``
(two instructions per loop iteration on every ISA) for N and 2N iterations
through the same QEMU and plugin: the two counts must differ by exactly 2N.
:func:`start_session` does the same for the rsa-large and sodium suites and
returns the checked counter they run their drivers under (:class:`CountSession`).

Standard library only (runs under the image's ``python3``).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from abh.suites.count_symbols import MapEntry

COUNTER_DIR = Path("/opt/archbench/counter")
MANIFEST_NAME = "counter.json"
PLUGIN_NAME = "libarchbench_count.so"
LOADER_NAME = "ld-linux-x86-64.so.2"
COUNT_FORMAT = "archbench-count"
CALIBRATE_FORMAT = "archbench-calibrate"
CALIBRATION_ITERATIONS = 100_000
"""N of the calibration loop: large enough that a miscount per iteration shows."""
DEFAULT_CPU = "max"
CPU_MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
"""QEMU ``-cpu`` model names (``max``, ``rv64``, ``cortex-a72``, ``Skylake-Client-v4``);
no commas or ``=`` (no property lists), no spaces."""


class CountError(Exception):
    """The counter is missing, failed, or its output cannot be paired with the driver's."""


@dataclass(frozen=True)
class Counter:
    """The counting layer's tools, from ``counter.json``.

    ``qemu`` is the emulator's file name (``qemu-riscv64``), ``qemu_version``
    its ``--version`` first line, ``qemu_package`` the Debian package version.
    """

    directory: Path
    qemu: str
    qemu_version: str
    qemu_package: str
    plugin_version: str
    tools_image: str


@dataclass(frozen=True)
class CountFile:
    """Parsed plugin output: header fields and ``(seq, instructions)`` per block, in order.

    From plugin version 2 (API 1): ``tbs`` maps a block's seq to
    ``{guest address of a translation block start: instructions}`` (summing
    exactly to the block's count), ``maps`` are the QEMU process's
    file-backed mappings and ``guest_base`` host - guest address
    (``count_symbols`` turns them into functions); empty/None before.
    """

    plugin_version: str
    plugin_api: int
    target: str
    blocks: tuple[tuple[int, int], ...]
    tbs: dict[int, dict[int, int]] = field(default_factory=dict)
    maps: tuple[MapEntry, ...] = ()
    guest_base: int | None = None


def check_cpu_model(text: str) -> str:
    """Return ``text`` if it is a plain QEMU CPU model name, else raise ValueError.

    Raises:
        ValueError: empty, longer than 64 characters, or with characters
            outside letters, digits and ``_.+-`` (no property lists).
    """
    if not CPU_MODEL_RE.match(text):
        raise ValueError(
            f"QEMU CPU model {text!r} is not a plain model name (letters, digits, '_.+-')"
        )
    return text


def load_counter(directory: Path = COUNTER_DIR) -> Counter:
    """Read ``counter.json`` and check that the tools it names are there.

    Raises:
        CountError: no counting layer (the manifest or a tool is missing) or
            the manifest is malformed.
    """
    path = directory / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        counter = Counter(
            directory=directory,
            qemu=str(data["qemu"]),
            qemu_version=str(data["qemu_version"]),
            qemu_package=str(data["qemu_package"]),
            plugin_version=str(data["plugin_version"]),
            tools_image=str(data.get("tools_image", "")),
        )
    except OSError as exc:
        raise CountError(f"{path}: no counting layer here ({exc.strerror})") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise CountError(f"{path}: malformed counter manifest ({exc!r})") from exc
    for name in (LOADER_NAME, counter.qemu, PLUGIN_NAME):
        if not (directory / name).is_file():
            raise CountError(f"{directory / name} is missing from the counting layer")
    return counter


def counter_command(
    counter: Counter, cpu: str, out_path: Path, program: Path, args: Sequence[str]
) -> list[str]:
    """The command line that runs ``program args`` under the counting QEMU.

    The x86-64 loader starts QEMU with the layer's own libraries, so nothing
    of the target's root file system is needed to run QEMU itself; the guest
    program's loader and libraries come from the container's root (``-L /``).

    Raises:
        ValueError: ``cpu`` is not a plain model name, or ``out_path`` has a
            comma (QEMU splits plugin arguments at commas).
    """
    check_cpu_model(cpu)
    if "," in str(out_path):
        raise ValueError(f"plugin output path {out_path} must not contain a comma")
    d = counter.directory
    return [
        str(d / LOADER_NAME),
        "--library-path",
        str(d / "lib"),
        str(d / counter.qemu),
        "-L",
        "/",
        "-cpu",
        cpu,
        "-plugin",
        f"{d / PLUGIN_NAME},out={out_path}",
        str(program),
        *args,
    ]


def parse_count_file(text: str) -> CountFile:
    """Parse the plugin's output (format in ``images/counter/archbench_count.c``).

    Raises:
        CountError: no or a wrong header, an ``error`` line from the plugin,
            or a malformed line (the message names the line).
    """
    lines = text.splitlines()
    if not lines:
        raise CountError("counter output is empty (the plugin did not start)")
    head = lines[0].split("\t")
    if len(head) != 4 or head[0] != COUNT_FORMAT or not head[2].isdigit():
        raise CountError(f"counter output line 1: not an {COUNT_FORMAT} header: {lines[0]!r}")
    blocks: list[tuple[int, int]] = []
    tbs: dict[int, dict[int, int]] = {}
    maps: list[MapEntry] = []
    base: int | None = None
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        try:
            if fields[0] == "error":
                raise CountError(f"counter output line {lineno}: plugin error: {line[6:]}")
            if fields[0] == "tb" and len(fields) == 4:
                seq, n = int(fields[1]), int(fields[3])
                block = tbs.setdefault(seq, {})
                addr = int(fields[2], 16)
                block[addr] = block.get(addr, 0) + n
                continue
            if fields[0] == "map" and len(fields) == 6:
                lo, hi, off = (int(f, 16) for f in (fields[1], fields[2], fields[4]))
                maps.append(MapEntry(lo, hi, off, fields[5]))
                continue
            if fields[0] == "base" and len(fields) == 2:
                base = int(fields[1], 16)
                continue
        except ValueError:
            raise CountError(f"counter output line {lineno}: malformed: {line!r}") from None
        if len(fields) != 3 or fields[0] != "block" or not all(f.isdigit() for f in fields[1:]):
            raise CountError(f"counter output line {lineno}: malformed: {line!r}")
        seq, total = int(fields[1]), int(fields[2])
        if seq in tbs and sum(tbs[seq].values()) != total:
            raise CountError(
                f"counter output line {lineno}: block {seq} counts {total} instructions but"
                f" its translation blocks sum to {sum(tbs[seq].values())}"
            )
        blocks.append((seq, total))
    return CountFile(head[1], int(head[2]), head[3], tuple(blocks), tbs, tuple(maps), base)


K = TypeVar("K", bound=Hashable)


def pair_counts(blocks: Sequence[K], counts: CountFile) -> dict[K, int]:
    """Pair the k-th count with the k-th driver block (blindsig's or a suite's block keys).

    Raises:
        CountError: the numbers differ, or the plugin's sequence numbers are
            not 0, 1, 2, ... (a marker was lost).
    """
    if len(blocks) != len(counts.blocks):
        raise CountError(
            f"the driver printed {len(blocks)} blocks but the counter closed "
            f"{len(counts.blocks)}; counts cannot be paired"
        )
    for k, (seq, _) in enumerate(counts.blocks):
        if seq != k:
            raise CountError(f"counter block {k} has sequence number {seq}; a marker was lost")
    return {key: n for key, (_, n) in zip(blocks, counts.blocks, strict=True)}


def counts_for(paired: dict[Any, int], keys: Sequence[Any], label: str) -> list[int]:
    """The counts of ``keys`` (a row's blocks, in order) out of :func:`pair_counts`.

    Raises:
        CountError: a key has no count (``label`` names the row).
    """
    missing = [k for k in keys if k not in paired]
    if missing:
        raise CountError(f"{label}: no count for block {missing[0]}")
    return [paired[k] for k in keys]


def run_counted(
    counter: Counter, cpu: str, program: Path, args: Sequence[str], out_path: Path
) -> tuple[str, CountFile]:
    """Run ``program`` under the counting QEMU; return its stdout and the parsed counts.

    Raises:
        CountError: QEMU or the program fails, or the plugin output is bad.
    """
    cmd = counter_command(counter, cpu, out_path, program, args)
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, check=False
        )
    except OSError as exc:
        raise CountError(f"cannot start the counting QEMU {cmd[3]}: {exc}") from exc
    if proc.returncode != 0:
        raise CountError(f"{program.name} under {counter.qemu} exited with {proc.returncode}")
    try:
        text = out_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CountError(f"counter output {out_path}: {exc.strerror}") from exc
    return proc.stdout, parse_count_file(text)


def check_calibration(stdout: str, counts: CountFile) -> dict[str, Any]:
    """Check ``count_calibrate N``'s two blocks: they must differ by exactly N x k.

    Returns:
        The record stored with the result: iterations N, instructions per
        iteration k, both counts, the marker overhead (count of block 0 - N k)
        and ``exact`` (always True when returned).

    Raises:
        CountError: malformed output, or the difference is not N x k.
    """
    lines = stdout.splitlines()
    if len(lines) != 2 or lines[0] != f"{CALIBRATE_FORMAT}\t1":
        raise CountError(f"count_calibrate printed {stdout!r}")
    fields = lines[1].split("\t")
    if len(fields) != 3 or fields[0] != "loop":
        raise CountError(f"count_calibrate printed {lines[1]!r}")
    k, n = int(fields[1]), int(fields[2])
    if [seq for seq, _ in counts.blocks] != [0, 1]:
        raise CountError(f"calibration: expected blocks 0 and 1, got {counts.blocks}")
    c0, c1 = (c for _, c in counts.blocks)
    record = {
        "iterations": n,
        "instructions_per_iteration": k,
        "counts": [c0, c1],
        "expected_difference": n * k,
        "difference": c1 - c0,
        "overhead": c0 - n * k,
        "exact": c1 - c0 == n * k,
    }
    if not record["exact"]:
        raise CountError(
            f"calibration failed: {n} more loop iterations counted {c1 - c0} instructions,"
            f" expected exactly {n * k}"
        )
    return record


def run_calibration(
    counter: Counter, cpu: str, program: Path, work_dir: Path, iterations: int
) -> dict[str, Any]:
    """Run the calibration loop through the counter and check it (see check_calibration()).

    Raises:
        CountError: as run_counted() and check_calibration().
    """
    stdout, counts = run_counted(
        counter, cpu, program, [str(iterations)], work_dir / "calibrate.count"
    )
    return check_calibration(stdout, counts)


def provenance(
    counter: Counter,
    cpu: str,
    calibration: dict[str, Any],
    plugin_version: str,
    plugin_api: int,
) -> dict[str, Any]:
    """The document's ``counting`` object: what counted, with which CPU model, checked how.

    ``plugin_version`` and ``plugin_api`` are from the plugin's own output header.
    """
    return {
        "instrument": "qemu-tcg-plugin",
        "qemu": counter.qemu,
        "qemu_version": counter.qemu_version,
        "qemu_package": counter.qemu_package,
        "cpu_model": cpu,
        "plugin_version": plugin_version,
        "plugin_api": plugin_api,
        "tools_image": counter.tools_image,
        "calibration": calibration,
    }


@dataclass(frozen=True)
class CountSession:
    """A checked counter for the suites' drivers: QEMU, CPU model, calibration record.

    ``work_dir`` receives one plugin output file per driver run.
    """

    counter: Counter
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
                :func:`counter_command`.
        """
        if not label or not all(c.isalnum() or c in "-_." for c in label):
            raise ValueError(f"count label {label!r}: letters, digits and '-_.' only")
        out = self.work_dir / f"{label}.count"
        cmd = counter_command(
            self.counter, self.cpu, out, Path(argv[0]), [*argv[1:], "--count-markers"]
        )
        return cmd, out

    def read(self, out: Path) -> CountFile:
        """Parse the plugin output a :meth:`command` wrote.

        Raises:
            CountError: missing, unreadable or malformed output.
        """
        try:
            text = out.read_text(encoding="utf-8")
        except OSError as exc:
            raise CountError(f"counter output {out}: {exc.strerror}") from exc
        return parse_count_file(text)

    def provenance(self) -> dict[str, Any]:
        """The document's ``counting`` object (:func:`provenance`)."""
        return provenance(
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
        CountError: no counting layer, or the calibration is not exact.
    """
    counter = load_counter(directory)
    work_dir = Path(tempfile.mkdtemp(prefix="archbench-count-"))
    if calibration is None or plugin is None:
        stdout, counts = run_counted(
            counter,
            cpu,
            calibrate_program,
            [str(CALIBRATION_ITERATIONS)],
            work_dir / "calibrate.count",
        )
        calibration = check_calibration(stdout, counts)
        plugin = (counts.plugin_version, counts.plugin_api)
    return CountSession(counter, cpu, work_dir, calibration, plugin[0], plugin[1])
