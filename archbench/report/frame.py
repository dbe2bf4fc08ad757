"""The tidy frame of all results, and the machines of one render, built once and shared.

:func:`tidy_frame` has one row per result × harness row, that is per machine ×
suite × scheme (and key size) × operation (and block size), with the
statistics of :func:`archbench.analysis.stats.summarize` and provenance columns
(run, target, emulation, CPU, OS, package versions, reference source). Reports,
plots and exports (:mod:`archbench.report.export`) all read this one frame, so a
table, a bar and a CSV cell can never disagree.

:func:`build` calls :func:`tidy_frame` once per render; every table, section and
part of a render reads the :class:`ReportData` it returns.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from archbench.errors import ReportError
from archbench.report.model import Machine, slug
from archbench.report.record import COLUMNS, DTYPES, Record
from archbench.result import OPERATION_ORDER, Result
from archbench.suites import BLIND_SIGNATURE_SUITES


def tidy_records(results: Sequence[Result]) -> list[Record]:
    """One :class:`~archbench.report.record.Record` per harness row of every result.

    Statistics come from :func:`archbench.analysis.stats.summarize` (block times in
    ns, Hyndman-Fan type 7 quartiles, sample stdev); ``thesis_ms`` is the
    appendix's figure in ms: the median time of ``thesis_ops`` operations (10
    for blind signatures, the whole block for the security module). ``flags``
    joins ``summarize``'s flags with ``;`` (empty when none); reference rows
    never carry ``single_sample``. ``printed`` is the reference's text as
    published, missing for measured rows. Provenance columns that do not
    apply (``host_cpu`` of reference data, ``reference_source`` of our runs)
    are missing values (``pd.isna`` is true; ``null`` in the JSON export).

    Rows keep the results' order, and within one result the appendix's:
    operation (:data:`OPERATION_ORDER`), CS before RSA, RSA by ascending key
    size, then block size; rows of the other suites follow in the order
    their suite emitted them. ``mb_per_s`` is ``bytes_per_op`` × ``ops_per_s``
    / 10⁶ for throughput rows (MB, not MiB, as ``openssl speed`` prints).

    Raises:
        ReportError: a row's samples are not positive finite numbers (a
            damaged results file); the message names target and run.
    """
    rank: dict[str, int] = {op: i for i, op in enumerate(OPERATION_ORDER)}
    records: list[Record] = []
    for result in results:
        appendix = [r for r in result.harness.rows if r.suite in BLIND_SIGNATURE_SUITES]
        others = [r for r in result.harness.rows if r.suite not in BLIND_SIGNATURE_SUITES]
        rows = sorted(
            appendix,
            key=lambda r: (
                rank.get(r.operation, len(rank)),
                r.scheme != "CS",
                r.key_bits or 0,
                r.ops_per_block,
                r.suite,
            ),
        )
        rows += others
        records.extend(Record.of(result, row) for row in rows)
    return records


def frame_of(records: Sequence[Record]) -> pd.DataFrame:
    """The tidy frame of ``records``: one row each, columns
    :data:`~archbench.report.record.COLUMNS` with their declared dtypes (an empty input
    gives an empty frame with those columns and dtypes)."""
    frame = pd.DataFrame.from_records([r.values for r in records], columns=list(COLUMNS))
    return frame.astype(DTYPES)


def tidy_frame(results: Sequence[Result]) -> pd.DataFrame:
    """The tidy frame of ``results``: :func:`frame_of` of :func:`tidy_records`.

    Raises:
        ReportError: as :func:`tidy_records`.
    """
    return frame_of(tidy_records(results))


@dataclass(frozen=True)
class ReportData:
    """The results of one render, their tidy frame and the machines they show as."""

    results: tuple[Result, ...]
    frame: pd.DataFrame = field(compare=False)
    machines: tuple[Machine, ...]
    """Every result (all suites), in report order (:func:`machines`)."""

    @functools.cached_property
    def appendix_machines(self) -> list[Machine]:
        """The machines restricted to the appendix suites' rows (computed once per render).

        A machine without such rows is left out, unless it has no rows at all
        (its section then says so). A machine with rows of the appendix suites only
        is kept as it is: no frame is filtered for it (O(rows) in all).
        """
        out = []
        for m in self.machines:
            records = tuple(r for r in m.records if r.suite in BLIND_SIGNATURE_SUITES)
            if len(records) == len(m.records):
                if records or not m.result.harness.rows:
                    out.append(m)
                continue
            if records:
                positions = tuple(
                    i
                    for i, r in zip(m.positions, m.records, strict=True)
                    if r.suite in BLIND_SIGNATURE_SUITES
                )
                out.append(dataclasses.replace(m, positions=positions, records=records))
        return out


def machines(
    results: Sequence[Result], records: Sequence[Record], frame: pd.DataFrame
) -> list[Machine]:
    """Measured results by target name and run, then reference results in the given order.

    ``records`` are :func:`tidy_records` of ``results`` and ``frame`` their
    :func:`frame_of`; each machine gets its result's records and rows, one slice of
    each. A target name that occurs in several results
    (``--all-runs``) is shown as ``target@run``, so every section, column and
    LaTeX label is unique. Linear in the rows.

    Raises:
        ReportError: no results.
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    # tidy_records writes each result's rows together, in the order of ``results``:
    # a machine's rows are one slice of the frame, found without a mask over it
    # (a mask per machine made a report quadratic in the results files).
    spans: dict[int, tuple[int, int]] = {}
    offset = 0
    for r in results:
        spans[id(r)] = (offset, offset + len(r.harness.rows))
        offset += len(r.harness.rows)
    if not offset == len(records) == len(frame):
        raise ReportError(
            f"the tidy frame has {len(frame)} rows ({len(records)} records), the results {offset}"
        )
    measured = sorted(
        (r for r in results if r.reference is None), key=lambda r: (r.target.name, r.run_id)
    )
    ordered = measured + [r for r in results if r.reference is not None]
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.target.name] = counts.get(r.target.name, 0) + 1
    out: list[Machine] = []
    # Published labels (tab:comp-sign-amd-ryzen-7) keep their suffix; measured ones yield.
    slugs = {
        r.reference.table_label.removeprefix("tab:comp-sign-")
        for r in ordered
        if r.reference is not None and r.reference.table_label
    }
    for r in ordered:
        name = r.target.name if counts[r.target.name] == 1 else f"{r.target.name}@{r.run_id}"
        unique = base = slug(name)
        n = 1
        while unique in slugs:
            n += 1
            unique = f"{base}-{n}"
        slugs.add(unique)
        start, stop = spans[id(r)]
        positions = tuple(range(start, stop))
        out.append(Machine(name, unique, r, frame, positions, tuple(records[start:stop])))
    return out


def build(results: Sequence[Result]) -> ReportData:
    """The tidy frame (once) and the machines of ``results``.

    Raises:
        ReportError: no results, or a damaged row (from :func:`tidy_records`).
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    records = tidy_records(results)
    frame = frame_of(records)
    return ReportData(tuple(results), frame, tuple(machines(results, records, frame)))


def machine_names(results: Sequence[Result]) -> list[tuple[str, Result]]:
    """Results in report order, each with the name its section and columns use.

    Measured results by target name and run id, then reference results in
    the given order; a target that occurs in several runs is
    ``target@run``. Plots use this so a bar and a table column agree.

    Raises:
        ReportError: no results.
    """
    return [(m.name, m.result) for m in build(results).machines]
