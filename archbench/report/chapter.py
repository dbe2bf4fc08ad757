"""The chapter "Performance Measurements": sections per machine, then the parts, format-neutral."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from archbench.report.comparisons import comparison, emulation, repeatability, summary
from archbench.report.frame import ReportData
from archbench.report.instructions import secmod_table, section_table
from archbench.report.model import Chapter, Machine, ReportOptions, Section, Table, one_line
from archbench.report.schemes import cs_vs_rsa
from archbench.report.sections import section
from archbench.report.suites import suite_parts
from archbench.report.units import unit_label
from archbench.result import (
    SPEEDUP_DEFINITION,
    SPEEDUP_HEADER,
    THESIS_OPS,
    LoadFailure,
    Result,
    shown_path,
)


def build(
    data: ReportData,
    options: ReportOptions,
    failures: Sequence[LoadFailure] = (),
    counted: Sequence[Result] = (),
) -> Chapter:
    """The neutral view of the whole chapter.

    The appendix's sections and tables show the appendix suites; the other
    suites have parts of their own (:mod:`archbench.report.suites`). ``counted``:
    instruction-count results; a machine counted in its own run gets its table of
    counts beside its times (:func:`archbench.report.instructions.section_table`).

    Raises:
        ReportError: an unknown or emulated baseline.
    """
    machines = data.appendix_machines
    parts = [
        summary(machines, options),
        cs_vs_rsa(machines, options),
        comparison(machines, options),
        emulation(machines, options),
        repeatability(machines, options),
        *suite_parts(data.machines, options),
    ]
    citations = sorted({m.result.reference.citation for m in machines if m.result.reference})
    # load() messages start with the path; print it once.
    skipped = tuple((shown_path(f.path), f.message.removeprefix(f"{f.path}: ")) for f in failures)
    sections, shared = _shared_notes(
        [
            section(m, options.unit, _counts(m, counted), _secmod_counts(m, counted))
            for m in machines
            if m.records
        ]
    )
    kept = tuple(p for p in parts if p.tables)
    chapter = Chapter(
        unit=options.unit,
        sections=sections,
        parts=kept,
        citation="; ".join(citations) or None,
        failures=skipped,
        shared_notes=shared,
        speedups=any(
            SPEEDUP_HEADER in map(one_line, t.header) or t.label.startswith("tab:speedup-")
            for p in kept
            for t in p.tables
        ),
        figures=options.figures,
        earlier_runs=options.earlier_runs,
    )
    return dataclasses.replace(chapter, opening=tuple(intro(chapter)))


def _counts(machine: Machine, counted: Sequence[Result]) -> Table | None:
    """``machine``'s table of counts: its target's counting results of the same run."""
    result = machine.result
    own = [r for r in counted if r.run_id == result.run_id and r.target.name == result.target.name]
    if not own or result.reference is not None:
        return None
    return section_table(f"tab:instructions-{machine.slug}", machine.name, own, counted)


def _secmod_counts(machine: Machine, counted: Sequence[Result]) -> Table | None:
    """``machine``'s table of its security module's counts (same run and target)."""
    result = machine.result
    own = [r for r in counted if r.run_id == result.run_id and r.target.name == result.target.name]
    if not own or result.reference is not None:
        return None
    return secmod_table(f"tab:secmod-instructions-{machine.slug}", machine.name, own)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _shared_notes(sections: list[Section]) -> tuple[tuple[Section, ...], str]:
    """Sentences every reference section's notes share, taken out to be printed once.

    Returns the sections with only their own sentences left, and the shared
    text ("" when fewer than two sections have notes or they share nothing).
    """
    noted = [s for s in sections if s.notes]
    if len(noted) < 2:
        return tuple(sections), ""
    split = {id(s): _SENTENCE_END.split(s.notes.strip()) for s in noted}
    first = split[id(noted[0])]
    shared = [x for x in first if all(x in split[id(s)] for s in noted)]
    if not shared:
        return tuple(sections), ""
    out = []
    for s in sections:
        if s.notes:
            own = " ".join(x for x in split[id(s)] if x not in shared)
            s = dataclasses.replace(s, notes=own)
        out.append(s)
    return tuple(out), " ".join(shared)


def intro(chapter: Chapter) -> list[str]:
    """Plain sentences that open the chapter: what a figure is, and where figures come from.

    :func:`build` keeps them as ``Chapter.opening``; both formats print them first.
    """
    unit = chapter.unit
    measured = any(not s.reference for s in chapter.sections) or not chapter.sections
    published = chapter.citation is not None
    if unit == "ops/s":
        source = {
            (True, False): "from the median block time",
            (False, True): "from the published time",
            (True, True): "from the median block time (reference data: the published time)",
        }[(measured, published)]
        what = f"Speeds are operations per second of one operation, {source}."
    else:
        source = {
            (True, False): "the median of all timed blocks",
            (False, True): "the single published figure",
            (True, True): (
                "the median of all timed blocks for measured machines and the single "
                "published figure for reference data"
            ),
        }[(measured, published)]
        what = (
            f"Speeds are in {unit_label(unit)}: the time of {THESIS_OPS} operations "
            f"(of the whole block for the security module), {source}."
        )
    out = [what]
    if chapter.earlier_runs:
        n = chapter.earlier_runs
        out.append(
            f"Each machine's section is its latest run; the {n} earlier "
            f"{'runs' if n > 1 else 'run'} of these machines {'are' if n > 1 else 'is'} in "
            "runs.csv, run-rows.csv and the results page's figures over time."
        )
    if chapter.speedups:
        out.append(SPEEDUP_DEFINITION)
    if chapter.citation:
        out.append(
            "Sections marked as reference data reproduce published figures as printed: "
            + chapter.citation
            + "."
        )
    if chapter.shared_notes:
        out.append(f"Notes on all reference data: {chapter.shared_notes}")
    if any(s.emulated for s in chapter.sections):
        out.append(
            "Emulated sections ran under QEMU user emulation; their timings measure the "
            "emulator and are never ranked against hardware."
        )
    return out
