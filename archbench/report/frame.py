"""The tidy frame and the machines of one render, built once and shared by every table.

:func:`build` calls :func:`archbench.report.export.tidy_frame` once; every table,
section and part of a render reads the :class:`ReportData` it returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from archbench.errors import ReportError
from archbench.report.export import frame_records, tidy_frame
from archbench.report.model import Machine, slug
from archbench.result import Result
from archbench.suites import APPENDIX_SUITES


@dataclass(frozen=True)
class ReportData:
    """The results of one render, their tidy frame and the machines they show as."""

    results: tuple[Result, ...]
    frame: pd.DataFrame = field(compare=False)
    machines: tuple[Machine, ...]
    """Every result (all suites), in report order (:func:`machines`)."""

    @property
    def appendix_machines(self) -> list[Machine]:
        """The machines restricted to the appendix suites' rows.

        A machine without such rows is left out, unless it has no rows at all
        (its section then says so).
        """
        out = []
        for m in self.machines:
            frame = m.frame[m.frame["suite"].isin(APPENDIX_SUITES)]
            records = tuple(r for r in m.records if r["suite"] in APPENDIX_SUITES)
            if records or not m.result.harness.rows:
                out.append(dataclasses.replace(m, frame=frame, records=records))
        return out


def machines(results: Sequence[Result], frame: pd.DataFrame) -> list[Machine]:
    """Measured results by target name and run, then reference results in the given order.

    A target name that occurs in several results (``--all-runs``) is shown
    as ``target@run``, so every section, column and LaTeX label is unique.

    Raises:
        ReportError: no results.
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
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
        rows = frame[(frame["run_id"] == r.run_id) & (frame["target"] == r.target.name)]
        out.append(Machine(name, unique, r, rows, tuple(frame_records(rows))))
    return out


def build(results: Sequence[Result]) -> ReportData:
    """The tidy frame (once) and the machines of ``results``.

    Raises:
        ReportError: no results, or a damaged row (from :func:`archbench.report.export.tidy_frame`).
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    frame = tidy_frame(results)
    return ReportData(tuple(results), frame, tuple(machines(results, frame)))


def machine_names(results: Sequence[Result]) -> list[tuple[str, Result]]:
    """Results in report order, each with the name its section and columns use.

    Measured results by target name and run id, then reference results in
    the given order; a target that occurs in several runs is
    ``target@run``. Plots use this so a bar and a table column agree.

    Raises:
        ReportError: no results.
    """
    return [(m.name, m.result) for m in machines(results, tidy_frame(results))]
