"""Parts for the suites beyond the thesis appendix (openssl-speed, rsa-large, sodium, gnupg).

Every suite gets a cross-machine table from the one builder
(:mod:`archbench.report.crossmachine`): asymmetric operations in operations
per second (``openssl speed``'s sign/s, verify/s), bulk rows
(``bytes_per_op``) in MB/s (10⁶ bytes, as ``openssl speed`` prints), key
generation and GnuPG decryption in ms per operation (they take from
milliseconds to minutes); emulated machines in tables of their own. Suites
with tables of their own add them (:mod:`archbench.report.suite_extras`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from archbench.report import versions
from archbench.report.crossmachine import CellFn, CrossSpec, RowLayout, tables_by_kind
from archbench.report.model import Cell, Machine, Part, ReportOptions, Table
from archbench.report.sections import cpu
from archbench.report.suite_extras import (
    EXTRA_TABLES,
    Formatter,
    row_key,
    row_unit,
    row_value,
)
from archbench.report.units import format_ratio
from archbench.suites import APPENDIX_SUITES, PART_ORDER, suite_title

__all__ = ["other_suites", "row_unit", "row_value", "suite_parts", "suite_tables"]


def other_suites(machines: Sequence[Machine]) -> list[str]:
    """Suites the machines ran that are not the appendix's, in the suites' ``PART_ORDER``."""
    found = {str(r["suite"]) for m in machines for r in m.records} - set(APPENDIX_SUITES)
    return sorted(found, key=lambda s: (PART_ORDER.index(s) if s in PART_ORDER else 99, s))


def _operation_text(record: dict[str, Any]) -> str:
    text = str(record["operation"]).replace("_", " ")
    processes = int(record["processes"])
    if processes > 1:
        text += f" ({processes} processes)"
    if record["device"] != "cpu":
        text += f" on {record['device']}"
    return text


def _leading(_key: Any, record: dict[str, Any], _previous: Any) -> tuple[str, ...]:
    return (str(record["label"]), _operation_text(record), row_unit(record))


SUITE_LAYOUT = RowLayout(
    header=("Scheme", "Operation", "Unit"), align="lll", key=row_key, leading=_leading
)
"""Rows scheme × operation (× processes, device) in the order the suite emitted them."""


def _cell(fmt: Formatter) -> CellFn:
    def cell(_m: Machine, record: dict[str, Any]) -> Cell:
        if not record["valid"]:
            return "invalid"
        text = fmt(row_value(record))
        flags = str(record.get("flags") or "")
        return text + (" †" if "noisy" in flags else "")

    return cell


def cross_machine_tables(
    machines: Sequence[Machine], suite: str, fmt: Formatter, columns: int
) -> list[Table]:
    """Per-suite tables with one column per machine; hardware and emulated apart.

    Cells are the median speed in the row's unit (:func:`row_unit`); "–" is
    not measured, "invalid" a row the harness refused, † a noisy row (CV > 5 %).
    """
    spec = CrossSpec(
        suite,
        _cell(fmt),
        SUITE_LAYOUT,
        columns=columns,
        label=f"tab:suite-{suite}",
        title=f"{suite_title(suite)} across machines",
        detail=(
            "median ops/s, MB/s (10^6 bytes/s) or ms per operation as the Unit column "
            "says; † marks a row whose samples vary by more than 5 % (CV)"
        ),
    )
    return tables_by_kind(machines, spec)


def _mark_machine_rows(table: Table, machines: Sequence[Machine]) -> Table:
    """Mark the rows (first cell: machine name) of machines whose library versions differ."""
    names = {str(row[0]) for row in table.rows}
    odd, note = versions.odd_ones_out({m.name: m.result for m in machines if m.name in names})
    if note is None:
        return table
    rows = tuple((versions.marked(str(row[0]), str(row[0]), odd), *row[1:]) for row in table.rows)
    return dataclasses.replace(table, groups=(rows,), version_notes=(*table.version_notes, note))


def suite_tables(
    machines: Sequence[Machine],
    fmt: Formatter = format_ratio,
    ratio: Formatter = format_ratio,
    columns: int = 6,
) -> list[tuple[str, list[Table]]]:
    """(suite title, tables) for every non-appendix suite the machines ran, in report order.

    ``fmt`` formats speeds, ``ratio`` ratios (both: three significant digits by default).
    """
    out: list[tuple[str, list[Table]]] = []
    for suite in other_suites(machines):
        tables = cross_machine_tables(machines, suite, fmt, columns)
        hardware_first = sorted(machines, key=lambda m: m.result.emulated)
        own = EXTRA_TABLES.get(suite)
        extra = own(hardware_first, fmt, ratio) if own is not None else []
        tables += [_mark_machine_rows(t, machines) for t in extra if t is not None]
        out.append((suite_title(suite), tables))
    return out


def machines_table(machines: Sequence[Machine]) -> Table:
    """Where the other suites ran: CPU, architecture, OS and the tool versions they used."""
    rows = []
    for m in machines:
        setup = m.result.harness.setup
        tools = "; ".join(
            f"{name} {version.splitlines()[0] if version else ''}".strip()
            for name, version in sorted((setup.tools or {}).items())
        )
        mode = "emulated" if m.emulated else "native"
        libraries = versions.summary(m.result).split(": ", 1)[1]
        arch = f"{m.result.target.arch} ({mode})"
        rows.append((m.name, cpu(m.result), arch, setup.os, libraries, tools))
    return Table(
        label="tab:suite-machines",
        caption="Machines of the other suites and the library and tool versions they ran",
        header=("Machine", "CPU", "Architecture", "OS", "Libraries", "Tools"),
        align="YYYYYY",  # Y: wraps within \linewidth (archbench-appendix.sty); lists are long
        groups=(tuple(rows),),
        small=True,
    )


def suite_parts(machines: Sequence[Machine], options: ReportOptions) -> list[Part]:
    """One part per suite beyond the appendix's; the first opens with :func:`machines_table`."""
    inputs = [m for m in machines if any(r["suite"] not in APPENDIX_SUITES for r in m.records)]
    parts = []
    for index, (title, tables) in enumerate(suite_tables(inputs, columns=options.summary_columns)):
        if index == 0:
            tables.insert(0, machines_table(inputs))
        parts.append(
            Part(
                title=f"Suite: {title}",
                intro=(
                    "Median of all timed samples per row; † marks rows whose samples vary by "
                    "more than 5 % (CV). Emulated machines have tables of their own."
                ),
                tables=tuple(tables),
            )
        )
    return parts
