"""Report tables of the suites beyond the thesis appendix (openssl-speed, rsa-large, sodium, gnupg).

Every table is built from :func:`archbench.export.tidy_frame` records (hence
from :func:`archbench.stats.summarize`) except the sodium one, which needs
order statistics of the raw samples (:func:`archbench.stats.order_statistics`).
Tables come back as :class:`SuiteTable` (text cells, numbers already
formatted by the caller's formatter) so that :mod:`archbench.reports`
renders them in LaTeX and Markdown like its own.

What each table shows, and where the comparison comes from:

* per suite, a cross-machine table: asymmetric operations in operations per
  second (``openssl speed``'s sign/s, verify/s), bulk rows (``bytes_per_op``)
  in MB/s (10⁶ bytes, as ``openssl speed`` prints), key generation and GnuPG
  decryption in ms per operation (they take from milliseconds to minutes);
  emulated machines in tables of their own;
* ``openssl speed -multi N`` scaling: aggregate ops/s of N processes over
  the single-process figure on the same machine;
* NIST vs Brainpool curves of equal size class (P-256/brainpoolP256r1,
  P-384/brainpoolP384r1, P-521/brainpoolP512r1), the comparison of the tinc
  seed (``tinc-sptps-speed-curves.txt``: about 5x on optimised OpenSSL);
* libsodium best / Nth best / mean / worst per operation, as pycryptopp
  reported its benchmarks (``pycryptopp-low-power-bench.txt``);
* GnuPG decryption per device and algorithm with bandwidth, as the
  ``gnupg-token-decrypt-bench.txt`` seed plots it.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd

from archbench import versions
from archbench.export import frame_records
from archbench.results import APPENDIX_SUITES, Result
from archbench.stats import order_statistics

SUITE_ORDER: Final = ("openssl-speed", "rsa-large", "sodium", "gnupg")
"""Order of the suites' tables; unknown suites follow alphabetically."""

SUITE_TITLES: Final = {
    "openssl-speed": "openssl speed",
    "rsa-large": "RSA up to 16384 bit (libcrypto)",
    "sodium": "libsodium",
    "gnupg": "GnuPG decryption",
}

NIST_BRAINPOOL_PAIRS: Final = (
    ("P-256", "brainpoolP256r1"),
    ("P-384", "brainpoolP384r1"),
    ("P-521", "brainpoolP512r1"),
)
"""Curves of the same size class compared in the tinc seed."""

TIME_OPERATIONS: Final = frozenset({"key_generation"})
"""Operations shown as ms per operation everywhere (slow, and users think of them as time)."""

Formatter = Callable[[float], str]


@dataclass(frozen=True)
class SuiteMachine:
    """One result as the report names it, with its tidy rows (all suites)."""

    name: str
    header: str
    result: Result
    frame: pd.DataFrame


@dataclass(frozen=True)
class SuiteTable:
    """A table of formatted text cells; ``align`` has one LaTeX letter per column."""

    label: str
    caption: str
    header: tuple[str, ...]
    align: str
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


def other_suites(frame: pd.DataFrame) -> list[str]:
    """Suites of ``frame`` that are not the appendix's, in :data:`SUITE_ORDER`."""
    found = {str(s) for s in frame["suite"]} - set(APPENDIX_SUITES)
    return sorted(found, key=lambda s: (SUITE_ORDER.index(s) if s in SUITE_ORDER else 99, s))


def row_unit(record: dict[str, Any]) -> str:
    """How a row's speed is shown: ``ops/s``, ``MB/s`` (bulk rows) or ``ms`` (per operation).

    Decided by the row's kind, never by its value, so one row has one unit on every machine.
    """
    if record.get("bytes_per_op") is not None and record["suite"] != "gnupg":
        return "MB/s"
    if record["operation"] in TIME_OPERATIONS or record["suite"] == "gnupg":
        return "ms"
    return "ops/s"


def row_value(record: dict[str, Any]) -> float:
    """The row's speed in :func:`row_unit`: ops/s, MB/s or ms per operation (median)."""
    unit = row_unit(record)
    if unit == "MB/s":
        return float(record["mb_per_s"])
    if unit == "ms":
        return float(record["per_op_ns"]) / 1e6
    return float(record["ops_per_s"])


_Key = tuple[str, int, str, str, int, str]
"""(scheme, key_bits or 0, param, operation, processes, device)."""


def _key(record: dict[str, Any]) -> _Key:
    return (
        str(record["scheme"]),
        int(record["key_bits"] or 0),
        str(record["param"] or ""),
        str(record["operation"]),
        int(record["processes"]),
        str(record["device"]),
    )


def _operation_text(record: dict[str, Any]) -> str:
    text = str(record["operation"]).replace("_", " ")
    processes = int(record["processes"])
    if processes > 1:
        text += f" ({processes} processes)"
    if record["device"] != "cpu":
        text += f" on {record['device']}"
    return text


def _cell(record: dict[str, Any] | None, fmt: Formatter) -> str:
    if record is None:
        return "–"
    if not record["valid"]:
        return "invalid"
    text = fmt(row_value(record))
    flags = str(record.get("flags") or "")
    return text + (" †" if "noisy" in flags else "")


def cross_machine_tables(
    machines: Sequence[SuiteMachine], suite: str, fmt: Formatter, columns: int = 6
) -> list[SuiteTable]:
    """Per-suite tables with one column per machine; hardware and emulated apart.

    Cells are the median speed in the row's unit (:func:`row_unit`); "–" is
    not measured, "invalid" a row the harness refused, † a noisy row (CV > 5 %).
    """
    tables: list[SuiteTable] = []
    kinds = [
        ("native", "", [m for m in machines if not m.result.emulated]),
        (
            "emulated",
            " (QEMU user emulation: not comparable with hardware)",
            [m for m in machines if m.result.emulated],
        ),
    ]
    for kind, suffix, group in kinds:
        group = [m for m in group if (m.frame["suite"] == suite).any()]
        if not group:
            continue
        chunks = [group[i : i + columns] for i in range(0, len(group), columns)]
        for index, chunk in enumerate(chunks, start=1):
            by_key: dict[_Key, dict[str, dict[str, Any]]] = {}
            order: list[_Key] = []
            for m in chunk:
                for record in frame_records(m.frame[m.frame["suite"] == suite]):
                    key = _key(record)
                    if key not in by_key:
                        by_key[key] = {}
                        order.append(key)
                    by_key[key][m.name] = record
            rows = []
            for key in order:
                any_record = next(iter(by_key[key].values()))
                rows.append(
                    (
                        str(any_record["label"]),
                        _operation_text(any_record),
                        row_unit(any_record),
                        *(_cell(by_key[key].get(m.name), fmt) for m in chunk),
                    )
                )
            part = f", part {index} of {len(chunks)}" if len(chunks) > 1 else ""
            odd, note = versions.odd_ones_out({m.name: m.result for m in chunk})
            tables.append(
                SuiteTable(
                    label=f"tab:suite-{suite}-{kind}-{index}",
                    caption=(
                        f"{SUITE_TITLES.get(suite, suite)} across machines{part}: median "
                        "ops/s, MB/s (10^6 bytes/s) or ms per operation as the Unit column "
                        f"says; † marks a row whose samples vary by more than 5 % (CV){suffix}"
                    ),
                    header=(
                        "Scheme",
                        "Operation",
                        "Unit",
                        *(versions.marked(m.header, m.name, odd) for m in chunk),
                    ),
                    align="lll" + "r" * len(chunk),
                    rows=tuple(rows),
                    notes=(note,) if note else (),
                )
            )
    return tables


def multi_scaling_table(
    machines: Sequence[SuiteMachine], fmt: Formatter, ratio: Formatter
) -> SuiteTable | None:
    """``openssl speed -multi N`` against the single process, per machine and row.

    Scaling = aggregate ops/s of N processes / ops/s of one process (ideal: N
    on N free cores). The 1-minute load average at the start of the run is
    shown beside it: scaling well below N with a load near the core count
    means the cores were shared, not that the machine does not scale. None
    when no machine has both figures.
    """
    rows = []
    for m in machines:
        load = m.result.harness.setup.load_average
        load_text = f"{load[0]:.2f}" if load else "–"
        records = [
            r for r in frame_records(m.frame) if r["suite"] == "openssl-speed" and r["valid"]
        ]
        single = {_key(r)[:4]: r for r in records if int(r["processes"]) == 1}
        for r in records:
            processes = int(r["processes"])
            partner = single.get(_key(r)[:4])
            if processes == 1 or partner is None:
                continue
            one, many = row_value(partner), row_value(r)
            rows.append(
                (
                    m.name,
                    str(r["label"]),
                    str(r["operation"]),
                    row_unit(r),
                    fmt(one),
                    str(processes),
                    fmt(many),
                    ratio(many / one),
                    f"{m.result.harness.setup.cores} / {load_text}",
                )
            )
    if not rows:
        return None
    return SuiteTable(
        label="tab:suite-openssl-speed-multi",
        caption=(
            "openssl speed: one process against -multi N (aggregate of N processes); "
            "scaling = N-process figure / single-process figure, ideally N on N idle cores; "
            "cores / load is the CPU count and the 1-minute load average when the run began "
            "(a load near the core count means the processes shared cores)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "1 process",
            "N",
            "N processes",
            "Scaling",
            "Cores / load",
        ),
        align="llllrrrrr",
        rows=tuple(rows),
    )


def nist_brainpool_table(
    machines: Sequence[SuiteMachine], fmt: Formatter, ratio: Formatter
) -> SuiteTable | None:
    """NIST against Brainpool curves of the same size class, single process, per machine.

    Ratio = NIST ops/s / Brainpool ops/s (the tinc seed measured about 5x for
    P-521 vs brainpoolP512r1 ECDSA signing on optimised OpenSSL). None when no
    machine has a pair.
    """
    rows = []
    for m in machines:
        records = [
            r
            for r in frame_records(m.frame)
            if r["suite"] == "openssl-speed" and r["valid"] and int(r["processes"]) == 1
        ]
        by = {(str(r["scheme"]), str(r["param"] or ""), str(r["operation"])): r for r in records}
        for scheme, operation in sorted({(k[0], k[2]) for k in by}):
            for nist, brainpool in NIST_BRAINPOOL_PAIRS:
                a = by.get((scheme, nist, operation))
                b = by.get((scheme, brainpool, operation))
                if a is None or b is None:
                    continue
                fast, slow = row_value(a), row_value(b)
                rows.append(
                    (
                        m.name,
                        f"{scheme} {operation}",
                        f"{nist} / {brainpool}",
                        fmt(fast),
                        fmt(slow),
                        ratio(fast / slow),
                    )
                )
    if not rows:
        return None
    return SuiteTable(
        label="tab:suite-openssl-speed-nist-brainpool",
        caption=(
            "NIST vs Brainpool curves (openssl speed, one process): ops/s and the ratio "
            "NIST / Brainpool"
        ),
        header=("Machine", "Operation", "Curves", "NIST ops/s", "Brainpool ops/s", "Ratio"),
        align="lllrrr",
        rows=tuple(rows),
    )


def order_statistics_table(
    machines: Sequence[SuiteMachine], suite: str, fmt: Formatter, nth_default: int = 3
) -> SuiteTable | None:
    """Best / Nth best / mean / worst per operation, per machine (pycryptopp's report).

    Per-operation times in µs; bulk rows (``bytes_per_op``) in ns per byte.
    ``nth`` is the suite's setting in the result (``suites[suite].parameters.nth``),
    else ``nth_default``. None when no machine ran the suite.
    """
    rows = []
    nths = set()
    for m in machines:
        run = m.result.harness.suites.get(suite)
        nth = int(run.parameters.get("nth", nth_default)) if run else nth_default
        nths.add(nth)
        for row in m.result.harness.rows:
            if row.suite != suite:
                continue
            if not row.valid:
                rows.append((m.name, row.label, row.operation, "", "invalid", "", "", ""))
                continue
            stats = order_statistics(row.samples_ns, row.ops_per_block, nth)
            scale, unit = (1e3, "µs") if row.bytes_per_op is None else (row.bytes_per_op, "ns/B")
            rows.append(
                (
                    m.name,
                    row.label,
                    row.operation.replace("_", " "),
                    unit,
                    fmt(stats.best / scale),
                    fmt(stats.nth_best / scale),
                    fmt(stats.mean / scale),
                    fmt(stats.worst / scale),
                )
            )
    if not rows:
        return None
    nth_text = "/".join(str(n) for n in sorted(nths))
    return SuiteTable(
        label=f"tab:suite-{suite}-order-statistics",
        caption=(
            f"{SUITE_TITLES.get(suite, suite)}: best, {nth_text}. best, mean and worst per "
            "operation, as pycryptopp reported (µs per operation; ns per byte for bulk rows)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "Best",
            f"{nth_text}. best",
            "Mean",
            "Worst",
        ),
        align="llllrrrr",
        rows=tuple(rows),
    )


def gnupg_table(machines: Sequence[SuiteMachine], fmt: Formatter) -> SuiteTable | None:
    """GnuPG decryption per machine, device and algorithm: median time (ms) and MB/s.

    Bandwidth = file bytes / time of one ``gpg --decrypt`` process, as the
    gnupg-token seed computes it (its "bandwidth" column); it includes
    process start, so it is lower than what the cipher alone achieves.
    """
    rows = []
    for m in machines:
        for r in frame_records(m.frame):
            if r["suite"] != "gnupg" or r["operation"] != "decrypt":
                continue
            if not r["valid"]:
                rows.append((m.name, str(r["device"]), str(r["label"]), "invalid", ""))
                continue
            mb_s = r["mb_per_s"]
            rows.append(
                (
                    m.name,
                    str(r["device"]),
                    str(r["label"]),
                    fmt(float(r["per_op_ns"]) / 1e6),
                    fmt(float(mb_s)) if mb_s is not None else "–",
                )
            )
    if not rows:
        return None
    return SuiteTable(
        label="tab:suite-gnupg-decrypt",
        caption="GnuPG decryption of a random file: median time per gpg process and bandwidth",
        header=("Machine", "Device", "Algorithm", "Time (ms)", "MB/s"),
        align="lllrr",
        rows=tuple(rows),
    )


def _mark_machine_rows(table: SuiteTable, machines: Sequence[SuiteMachine]) -> SuiteTable:
    """Mark the rows (first cell: machine name) of machines whose library versions differ."""
    names = {row[0] for row in table.rows}
    odd, note = versions.odd_ones_out({m.name: m.result for m in machines if m.name in names})
    if note is None:
        return table
    rows = tuple((versions.marked(row[0], row[0], odd), *row[1:]) for row in table.rows)
    return dataclasses.replace(table, rows=rows, notes=(*table.notes, note))


def suite_tables(
    machines: Sequence[SuiteMachine], fmt: Formatter, ratio: Formatter, columns: int = 6
) -> list[tuple[str, list[SuiteTable]]]:
    """(suite title, tables) for every non-appendix suite the machines ran, in report order."""
    if not machines:
        return []
    frame = pd.concat([m.frame for m in machines])
    out: list[tuple[str, list[SuiteTable]]] = []
    for suite in other_suites(frame):
        tables = cross_machine_tables(machines, suite, fmt, columns)
        hardware_first = sorted(machines, key=lambda m: m.result.emulated)
        extra: list[SuiteTable | None] = []
        if suite == "openssl-speed":
            extra = [
                multi_scaling_table(hardware_first, fmt, ratio),
                nist_brainpool_table(hardware_first, fmt, ratio),
            ]
        elif suite == "sodium":
            extra = [order_statistics_table(hardware_first, suite, fmt)]
        elif suite == "gnupg":
            extra = [gnupg_table(hardware_first, fmt)]
        tables += [_mark_machine_rows(t, machines) for t in extra if t is not None]
        out.append((SUITE_TITLES.get(suite, suite), tables))
    return out
