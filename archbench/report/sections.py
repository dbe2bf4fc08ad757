"""One section per machine: its Setup box and its table *Signature Scheme | Operation | Speed*.

As the appendix of the Clause Blind Schnorr thesis
(``/work/shared/seeds/thesis-appendix-performance.tex``) prints them, in its row order.
The blindsig suite's default measurement is one call after another on the same
item, as GNUnet's own ``perf_crypto_*`` programs time it; the matrix key
``fresh_items: true`` (driver ``--fresh-items``) is a deliberate difference that
every table of such a result names (:func:`blindsig_notes`, ``harness/CONTRACT.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from archbench.analysis import noise_summary
from archbench.platforms import Arch
from archbench.report import versions
from archbench.report.model import Cell, Machine, Section, Speed, Table
from archbench.report.record import Record, row_id
from archbench.report.units import (
    Unit,
    interval_digits,
    printed_digits,
    unit_label,
    unit_value,
)
from archbench.result import (
    HELPER_OPERATIONS,
    OPERATION_WORDING,
    SHORT_WORDING,
    TALER_OPERATIONS,
    THESIS_OPS,
    AppendixRow,
    Execution,
    Result,
    group_key,
    operation_label,
    scheme_label,
    sort_key,
)

FRESH_ITEMS_NOTE: Final = (
    "fresh_items: every operation of a block ran on its own freshly prepared item, "
    "not one call after another on the same item as GNUnet's perf_crypto_* programs "
    "time it"
)
"""The note a table of a ``fresh_items: true`` result carries."""


def blindsig_notes(result: Result) -> tuple[str, ...]:
    """Notes naming a deliberate measurement difference of ``result``'s blindsig rows.

    Returns:
        ``(FRESH_ITEMS_NOTE,)`` when the harness recorded ``parameters.fresh_items``
        true, else ``()`` (the default measurement, reference data, or a document of
        a harness before the option, whose ``fresh_items`` is None).
    """
    parameters = result.harness.parameters
    if result.reference is None and parameters is not None and parameters.fresh_items:
        return (FRESH_ITEMS_NOTE,)
    return ()


def cpu(result: Result) -> str:
    """The CPU as a title names it; reference boxes print "8-core …", titles drop that."""
    model = result.harness.setup.cpu_model
    if result.reference is not None:
        return re.sub(r"^\d+-core\s+", "", model, flags=re.I)
    if result.emulated:
        execution = result.execution
        qemu = (execution.qemu_version if execution else None) or "unknown version"
        # The Debian package suffix "(Debian 1:7.2+dfsg-…)" belongs in the Setup box only.
        return f"{result.target.arch} on QEMU {qemu.split(' (', 1)[0]}"
    return model


def setup_items(result: Result) -> tuple[tuple[str, str], ...]:
    """The Setup box's (key, value) lines: CPU, architecture, OS, library versions, execution."""
    setup = result.harness.setup
    execution = result.execution
    try:
        pkg_arch = Arch.from_key(result.target.arch).debian_arch
    except ValueError:
        pkg_arch = result.target.arch
    reference = result.reference
    if reference is not None and reference.box is not None:
        return reference.box  # verbatim; our annotations go beside the box
    if reference is not None:
        # As printed: the box's CPU line and OS line, and only the packages it lists.
        return (
            ("CPU", setup.cpu_model),
            ("Architecture", f"{result.target.arch} (uname -m: {setup.machine})"),
            ("OS", f"{setup.os} {setup.kernel}".strip()),
            *((f"{p}:{pkg_arch} version", v or "not installed") for p, v in setup.packages.items()),
            ("Source", f"{reference.source} ({reference.label})"),
        )

    def version(package: str) -> str:
        if package not in setup.packages:
            return "unknown"
        return setup.packages[package] or "not installed"

    gnunet = version("libgnunetutil")
    if gnunet == "not installed" and setup.gnunet_version:
        # Built from source: dpkg does not know it, pkg-config does.
        gnunet = f"{setup.gnunet_version} (pkg-config)"
    elif gnunet not in ("unknown", "not installed"):
        gnunet = f"{gnunet} (Debian package)"
    source = execution.gnunet_source if execution is not None else None
    if source:
        # Built from a GNUnet source (invoke bench --gnunet, matrix key gnunet).
        built = setup.gnunet_version or source.get("version") or "unknown version"
        gnunet = f"{built} ({gnunet_source_summary(source)})"
    driver = gnunet_driver_item(result)
    if execution is not None and execution.emulated:
        how = (
            f"emulated (QEMU {execution.qemu_version or 'unknown version'}) "
            f"on {execution.host_arch} host {execution.host_cpu}"
        )
        # Under QEMU user emulation /proc/cpuinfo is the host's: there is no
        # target CPU to name, only the host that emulated it.
        host = f"{setup.cores}-core {setup.cpu_model}"
        processor = f"{host} (the host's CPU; {result.target.arch} emulated by QEMU)"
    else:
        how = "native"
        processor = f"{setup.cores}-core {setup.cpu_model}"
    if execution is not None and execution.cpus is not None:
        how += f", CPU quota {execution.cpus:g} (Docker --cpus)"
    return (
        ("CPU", processor),
        ("Architecture", f"{result.target.arch} (uname -m: {setup.machine})"),
        ("OS", " ".join(dict.fromkeys(v for v in (setup.os, setup.kernel) if v)) or "unknown"),
        (f"libsodium:{pkg_arch} version", version("libsodium")),
        (f"libgcrypt:{pkg_arch} version", version("libgcrypt")),
        (f"libgnunetutil:{pkg_arch} version", gnunet),
        *((driver,) if driver else ()),
        *(taler_item(execution) if execution is not None else ()),
        ("Execution", how),
    )


def taler_item(execution: Execution) -> tuple[tuple[str, str], ...]:
    """The Setup box's line on the exchange built from a ``taler:`` source
    (``Execution.taler_source``), none without one."""
    source = execution.taler_source
    if not source:
        return ()
    version = source.get("version") or "unknown version"
    return (("taler-exchange (security modules)", f"{version} ({gnunet_source_summary(source)})"),)


def gnunet_driver_item(result: Result) -> tuple[str, str] | None:
    """The Setup box's line on what the driver reported of GNUnet (``setup.gnunet``):
    the version the loaded library reports, the API generation, the known answers that
    passed and whether GNU Taler's path was measured; None for results without it."""
    info = result.harness.setup.gnunet
    if info is None:
        return None
    parts = [f"library reports {info.library_version or 'nothing'}"]
    if info.bsig_api:
        parts.append(f"blind-signature API {info.bsig_api}")
    if info.known_answers:
        passed = ", ".join(info.known_answers)
        if info.known_answers_taler:
            passed += f"; layer {', '.join(info.known_answers_taler)}"
        parts.append(f"known answers passed: {passed}")
    if info.taler_layer and not info.taler_measured:
        parts.append(f"GNU Taler's path not measured: {info.taler_layer}")
    return ("GNUnet (driver)", "; ".join(parts))


def row_notes(result: Result, keys: Iterable[AppendixRow]) -> tuple[str, ...]:
    """The notes of ``result``'s blindsig and security-module rows behind ``keys``, one
    line per distinct note.

    A note shared by every RSA size is printed once (``RSA blinding: …``), one of some
    sizes names them (``RSA 1024, 2048 bit key generation: …``). A security-module row's
    note is the same for CS and every RSA size: it is printed once, after the block it
    names (``100 parallel signature operations: …``).
    """
    keys = list(keys)
    wanted = {(op, scheme, bits) for op, _, scheme, bits in keys}
    sizes: dict[tuple[str, str, str], list[int]] = {}
    helper: dict[str, str] = {}
    for row in result.harness.rows:
        bits = row.key_bits or 0
        if (
            row.suite not in ("blindsig", "security-module")
            or not row.note
            or (row.operation, row.scheme, bits) not in wanted
        ):
            continue
        if row.suite == "security-module":
            words = OPERATION_WORDING.get(row.operation, row.operation)
            helper.setdefault(f"{row.ops_per_block} {words}: {row.note}", "")
            continue
        sizes.setdefault((row.scheme, str(row.operation), row.note), []).append(bits)
    all_rsa = sorted({bits for _, _, scheme, bits in keys if scheme == "RSA"})
    lines = []
    for (scheme, operation, note), found in sizes.items():
        who = scheme
        if scheme == "RSA" and sorted(found) != all_rsa:
            who = f"RSA {', '.join(str(b) for b in sorted(found))} bit"
        lines.append(f"{who} {SHORT_WORDING.get(operation, operation)}: {note}")
    if helper and result.emulated:
        helper[EMULATED_HELPER_NOTE] = ""
    return (*lines, *helper)


EMULATED_HELPER_NOTE: Final = (
    "emulated: a security-module time measures QEMU user emulation of the secmod and of the "
    "test's clients, and the host kernel's IPC between them (Unix sockets, threads, forks), "
    "not the target's CPU; compare such rows across QEMU versions, never with native ones; "
    "the secmod's own instructions per signature, counted under QEMU, are the figure that "
    "says something about the target (its table of counts, when counted)"
)
"""The security-module rows' note on an emulated machine: what their times measure."""


def noise_cause(machine: Machine) -> str | None:
    """What ``machine``'s run recorded for its rows marked † (noisy), from the rows' noise
    readings (:func:`archbench.analysis.noise_summary`); None without noisy rows."""
    rows = {row_id(row): row for row in machine.result.harness.rows}
    noisy = [
        (found.noise, found.stop)
        for record in machine.records
        if "noisy" in record.flag_names and (found := rows.get(record.row_id)) is not None
    ]
    execution = machine.result.execution
    host = execution.host_arch if execution is not None and execution.emulated else None
    return noise_summary(noisy, emulated_on=host)


def gnunet_source_summary(source: Mapping[str, object]) -> str:
    """One phrase naming a source build's provenance (``Execution.gnunet_source``):
    the tarball's name and sha256, the git ref and commit, or the tree and its hash."""
    kind, location = source.get("kind"), str(source.get("location") or "")

    def short(key: str) -> str:
        return str(source.get(key) or "")[:12]

    if kind == "tarball":
        return f"built from tarball {location.rsplit('/', 1)[-1]}, sha256 {short('sha256')}"
    if kind == "git":
        return f"built from git {source.get('ref')} at {short('commit')}"
    dirty = ", uncommitted changes" if source.get("dirty") else ""
    return f"built from tree {location}, hash {short('tree_sha256')}{dirty}"


def speed(record: Record, unit: Unit, *, note: int | None = None, bare: bool = False) -> Speed:
    """A record's speed cell in ``unit``; printed reference text stands in where it is in ms."""
    if not record.valid:
        return Speed(None, note=note, bare=bare)
    # Printed text stands in for the number only where it is in the table's unit
    # (imported GNUnet logs print µs or s, too).
    printed = record.printed
    if unit != "ms" or not isinstance(printed, str) or not printed.endswith("ms"):
        printed = None
    value = unit_value(record.thesis_ms, record.ops_per_s, unit)
    return Speed(
        value,
        printed,
        record.flag_names,
        bare=bare,
        digits=record_digits(record),
        spread=None if bare else record_spread(record),
    )


def record_digits(record: Record) -> int | None:
    """Significant digits a record's figure supports, whatever the unit it is shown in.

    A published figure's printed digits (:func:`~archbench.report.units.printed_digits`);
    a measured median's, the digits its 95 % interval supports
    (:func:`~archbench.report.units.interval_digits`); None when neither is known
    (fewer than 6 samples).
    """
    printed = record.printed
    if isinstance(printed, str):
        return printed_digits(printed)
    low, high = record.per_op_ns_ci_low, record.per_op_ns_ci_high
    if low is None or high is None:
        return None
    return interval_digits(record.per_op_ns, float(low), float(high))


def record_spread(record: Record) -> float | None:
    """Half-width of a measured median's 95 % interval relative to the median; None unknown."""
    low, high = record.per_op_ns_ci_low, record.per_op_ns_ci_high
    if low is None or high is None or record.printed is not None:
        return None
    return (float(high) - float(low)) / 2 / record.per_op_ns


def grouped(
    rows: Iterable[tuple[AppendixRow, tuple[Cell, ...]]],
) -> tuple[tuple[tuple[Cell, ...], ...], ...]:
    """Rows in the appendix's order, split into its groups (:data:`OPERATION_GROUPS`)."""
    groups: dict[tuple[int, int], list[tuple[Cell, ...]]] = {}
    for key, cells in sorted(rows, key=lambda kc: sort_key(kc[0])):
        groups.setdefault(group_key(key), []).append(cells)
    return tuple(tuple(g) for _, g in sorted(groups.items()))


def what(unit: Unit, suite: str = "blindsig", machines: Sequence[Machine] = ()) -> str:
    """What a speed in ``unit`` is, for captions of tables showing ``machines``.

    A measured figure is a median of timed blocks; reference data is one
    published figure, never called a median.
    """
    published = [m.is_reference for m in machines]
    every, some = bool(published) and all(published), any(published)
    if unit == "ops/s":
        text = "operations per second (one operation)"
        if every:
            return f"{text}, from the published time"
        return text + ("; reference columns: from the published time" if some else "")
    block = f"{THESIS_OPS} operations" if suite == "blindsig" else "the block each row names,"
    if every:
        return f"time of {block} in {unit_label(unit)}, as published"
    text = f"median time of {block} in {unit_label(unit)}"
    return text + ("; reference columns: the published figure" if some else "")


_Rows = list[tuple[AppendixRow, tuple[Cell, ...]]]
"""(appendix row, its cells) of one table, in frame order."""


def _section_rows(
    machine: Machine, unit: Unit
) -> tuple[_Rows, dict[str, int], _Rows, dict[str, int]]:
    """The section's rows and numbered invalid-row notes: the thesis's, then GNU Taler's path."""
    result = machine.result
    notes: dict[str, int] = {}
    rows: _Rows = []
    taler: _Rows = []
    taler_notes: dict[str, int] = {}
    # A reference's own tables print a scheme as its source did ("RSA 4092").
    as_printed = dict(result.reference.printed_schemes) if result.reference else {}
    for record in machine.records:
        key = record.appendix_row
        layer = key.operation in TALER_OPERATIONS
        numbered = taler_notes if layer else notes
        note = None
        if not record.valid:
            reason = record.invalid_reason or "no reason recorded"
            # The harness invalidates every row of a scheme and key size with
            # the same reason; one note per (scheme, reason) keeps notes short.
            note = numbered.setdefault(f"{record.label}: {reason}", len(numbered) + 1)
        label = operation_label(key, unit == "ops/s")
        (taler if layer else rows).append(
            (
                key,
                (
                    as_printed.get(scheme_label(key), scheme_label(key)),
                    label,
                    speed(record, unit, note=note),
                ),
            )
        )
    return rows, notes, taler, taler_notes


def section(
    machine: Machine, unit: Unit, counts: Table | None = None, secmod: Table | None = None
) -> Section:
    """The section of one machine: heading, Setup box, notes and its table.

    ``counts``: the machine's instructions per operation
    (:func:`archbench.report.instructions.section_table`), the first table after the
    times; ``secmod``: its security module's counts
    (:func:`archbench.report.instructions.secmod_table`), after it. GNU Taler's path
    (the ``taler_*`` rows of GNUnet's scheme-independent layer) gets a table of its own
    after the appendix's, which stays the thesis's rows.
    """
    result = machine.result
    rows, notes, taler, taler_notes = _section_rows(machine, unit)
    processor = cpu(result)
    helper_only = bool(rows) and all(key.operation in HELPER_OPERATIONS for key, _ in rows)
    reference = result.reference
    if reference is not None:
        caption = f"Comparison on {processor} ({reference.label})"
        heading = f"{reference.title or processor} — {machine.name} (reference data)"
    elif result.emulated:
        execution = result.execution
        host = execution.host_arch if execution else "unknown"
        caption = f"Comparison on {processor} (emulated on {host})"
        heading = (
            f"{processor} — {machine.name}, {versions.gnunet_label(result)} (emulated on {host})"
        )
    else:
        caption = f"Comparison on {processor}"
        heading = f"{processor} — {machine.name}, {versions.gnunet_label(result)}"
    if reference is not None and reference.table_label is not None:
        # Published: the thesis's own label and caption, so its \ref still resolves.
        caption = reference.caption or caption
    table = Table(
        noise_cause=noise_cause(machine) or "",
        label=(reference.table_label if reference else None) or f"tab:comp-sign-{machine.slug}",
        caption=caption,
        header=("Signature Scheme", "Test" if helper_only else "Operation", "Speed"),
        align="llr",
        groups=grouped(rows),
        notes=tuple(notes),
        version_notes=blindsig_notes(result),
        row_notes=row_notes(result, (key for key, _ in rows)),
    )
    extra: tuple[Table, ...] = tuple(t for t in (counts, secmod) if t is not None)
    if taler:
        extra += (
            Table(
                label=f"tab:taler-{machine.slug}",
                caption=(
                    f"GNU Taler's path on {processor}: GNUnet's scheme-independent layer "
                    f"({versions.gnunet_label(result)}), not the thesis's rows"
                ),
                header=("Signature Scheme", "Operation", "Speed"),
                align="llr",
                groups=grouped(taler),
                notes=tuple(taler_notes),
                row_notes=row_notes(result, (key for key, _ in taler)),
            ),
        )
    annotation = ""
    if reference is not None:
        annotation = reference.notes
        if reference.box is not None:
            # The verbatim box has no Source line: say it beside the box.
            annotation = f"Source: {reference.source} ({reference.label}). {annotation}"
    return Section(
        name=machine.name,
        title=(reference.title if reference else None) or f"{processor} ({machine.name})",
        heading=heading,
        emulated=result.emulated,
        reference=reference is not None,
        setup=setup_items(result),
        notes=annotation,
        table=table,
        intro=(reference.intro if reference else None) or "",
        extra_tables=extra,
    )
