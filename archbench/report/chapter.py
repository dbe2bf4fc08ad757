"""The chapter "Performance Measurements": sections per machine, then the parts, format-neutral."""

from __future__ import annotations

from collections.abc import Sequence

from archbench.report.comparisons import comparison, cs_vs_rsa, emulation, repeatability, summary
from archbench.report.frame import ReportData
from archbench.report.model import Chapter, ReportOptions
from archbench.report.sections import section
from archbench.report.suites import suite_parts
from archbench.report.units import unit_label
from archbench.report.vocabulary import THESIS_OPS
from archbench.results import LoadFailure


def build(
    data: ReportData, options: ReportOptions, failures: Sequence[LoadFailure] = ()
) -> Chapter:
    """The neutral view of the whole chapter.

    The appendix's sections and tables show the appendix suites; the other
    suites have parts of their own (:mod:`archbench.report.suites`).

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
    skipped = tuple((str(f.path), f.message.removeprefix(f"{f.path}: ")) for f in failures)
    return Chapter(
        unit=options.unit,
        sections=tuple(section(m, options.unit) for m in machines if m.records),
        parts=tuple(p for p in parts if p.tables),
        citation="; ".join(citations) or None,
        failures=skipped,
    )


def intro(chapter: Chapter) -> list[str]:
    """Plain sentences that open the chapter: what a figure is, and where figures come from."""
    unit = chapter.unit
    if unit == "ops/s":
        what = "Speeds are operations per second of one operation, from the median block time."
    else:
        what = (
            f"Speeds are in {unit_label(unit)}: the median time of {THESIS_OPS} operations "
            "(of the whole block for the security module), from all timed blocks."
        )
    out = [what]
    if chapter.citation:
        out.append(
            "Sections marked as reference data reproduce published figures as printed: "
            + chapter.citation
            + "."
        )
    if any(s.emulated for s in chapter.sections):
        out.append(
            "Emulated sections ran under QEMU user emulation; their timings measure the "
            "emulator and are never ranked against hardware."
        )
    return out
