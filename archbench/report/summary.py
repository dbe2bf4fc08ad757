"""The pull-request summary of ``invoke publish --summary``: what moved against the base.

Per architecture, for every target and metric of the head runs (the runs a CI workflow
just merged), the latest run of the base branch in the store measured on the same machine
class (:meth:`archbench.result.MachineIdentity.machine_class`: counts by architecture and
QEMU CPU model, times by architecture, native or emulated, and CPU class) is compared
with it as ``invoke compare`` compares two runs (:func:`archbench.analysis.compare`, the
same verdicts), and the summary lists the rows that moved, the count gate's verdict
(``--fail-above`` and matrix.yml's ``limits:``, :func:`archbench.analysis.over_limits`)
and, per counted row that moved, the functions whose instructions per operation changed
most (:func:`archbench.report.compare_tables.function_lines`). It is GitHub-flavoured
Markdown, what a job summary (``$GITHUB_STEP_SUMMARY``) or a pull-request comment shows.

Pure: never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from archbench.analysis import (
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    RowComparison,
    over_limits,
)
from archbench.analysis import compare as compare_rows
from archbench.matrix import RowLimit
from archbench.report.compare_tables import function_lines, markdown
from archbench.report.formats import markdown_escape
from archbench.result import (
    MachineIdentity,
    PublishRecord,
    Result,
    ResultStore,
    machine_identity,
)

MAX_SUMMARY_CHARS: Final = 900_000
"""GitHub shows at most 1 MiB of a step's summary; a longer summary is cut with a note."""


@dataclass(frozen=True)
class Pair:
    """One head target and metric against its base: the runs, the machine, the rows."""

    identity: MachineIdentity
    head_run: str
    base_run: str | None
    rows: tuple[RowComparison, ...] = ()
    over: tuple[tuple[RowComparison, float], ...] = ()
    functions: tuple[str, ...] = ()

    @property
    def moved(self) -> list[RowComparison]:
        """The rows with a verdict of change."""
        return [r for r in self.rows if r.changed]


@dataclass
class Summary:
    """The summary's pairs, its Markdown, and the rows beyond the gate (all pairs)."""

    pairs: list[Pair] = field(default_factory=list)
    text: str = ""

    @property
    def over(self) -> list[tuple[RowComparison, float]]:
        """Every counted row that grew beyond its limit."""
        return [o for p in self.pairs for o in p.over]


def _newest_first(records: dict[str, PublishRecord], runs: Sequence[str]) -> list[str]:
    return sorted(
        runs,
        key=lambda r: (records[r].started_at or records[r].published_at, r),
        reverse=True,
    )


def _base_for(
    ident: MachineIdentity, candidates: Sequence[str], records: dict[str, PublishRecord]
) -> str | None:
    """The newest candidate run that measured ``ident``'s target on its machine class."""
    for run in candidates:
        for m in records[run].machines:
            same = m.target == ident.target and m.metric == ident.metric
            if same and m.machine_class == ident.machine_class:
                return run
    return None


def pr_summary(
    store: ResultStore,
    records: dict[str, PublishRecord],
    head_runs: Sequence[str],
    base_branch: str | None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    threshold: float = DEFAULT_THRESHOLD,
    fail_above: float | None = None,
    limits: Sequence[RowLimit] = (),
) -> Summary:
    """Compare each target and metric of ``head_runs`` with the base branch's latest run of
    its machine class in ``store`` (``records``: the store's publish records), and render.

    ``base_branch`` None: the latest earlier run of any branch. Runs of the head are never
    their own base. A pair with no base says so; a head file that cannot be loaded is
    left out (the page names it).

    Raises:
        ResultsError: a target's repeats in one run measured different rows.
    """
    head = [r for r in head_runs if r in records]
    candidates = _newest_first(
        records,
        [
            r
            for r, rec in records.items()
            if r not in head_runs and (base_branch is None or rec.provenance.branch == base_branch)
        ],
    )
    loaded: dict[str, list[Result]] = {}

    def results_of(run: str) -> list[Result]:
        if run not in loaded:
            loaded[run] = store.load_all([run], merge=False, metric=None)[0]
        return loaded[run]

    summary = Summary()
    for run in head:
        groups: dict[tuple[str, str], list[Result]] = {}
        for r in results_of(run):
            groups.setdefault((r.target.name, r.metric), []).append(r)
        for (target, metric), files in groups.items():
            ident = machine_identity(files[0])
            base = _base_for(ident, candidates, records)
            if base is None:
                summary.pairs.append(Pair(ident, run, None))
                continue
            before = [r for r in results_of(base) if r.target.name == target and r.metric == metric]
            rows = compare_rows(before, files, confidence=confidence, threshold=threshold)
            over = over_limits([(r.key, r) for r in rows], fail_above, limits)
            lines = function_lines(rows, [before, files])
            summary.pairs.append(Pair(ident, run, base, tuple(rows), tuple(over), tuple(lines)))
    summary.text = render(summary.pairs, records, base_branch, confidence, fail_above, limits)
    return summary


def _run_line(run: str, records: dict[str, PublishRecord]) -> str:
    rec = records.get(run)
    if rec is None:
        return f"`{run}`"
    p = rec.provenance
    bits = [
        b
        for b in (p.branch and f"branch `{p.branch}`", p.commit and f"commit `{p.commit[:12]}`")
        if b
    ]
    if p.runner:
        bits.append("runner " + ",".join(f"`{x}`" for x in p.runner))
    return f"`{run}`" + (f" ({', '.join(bits)})" if bits else "")


def _machine(ident: MachineIdentity) -> str:
    if ident.metric == "instructions":
        return f"instructions per operation, QEMU CPU model `{ident.qemu_cpu}`"
    mode = "emulated on" if ident.emulated else "native,"
    return f"time, {mode} {markdown_escape(ident.cpu)}"


def _gate(pair_over: Sequence[tuple[RowComparison, float]], gated: bool, metric: str) -> str:
    if metric != "instructions":
        return "count gate: counted rows only (these are times)"
    if not gated:
        return "count gate: not set (`--fail-above` or matrix.yml's `limits:`)"
    if not pair_over:
        return "count gate: **passed**"
    listed = "; ".join(
        f"{markdown_escape(r.key.label)} {r.ratio:.4f}× (limit {limit:g})" for r, limit in pair_over
    )
    return f"count gate: **FAILED**: {listed}"


def render(
    pairs: Sequence[Pair],
    records: dict[str, PublishRecord],
    base_branch: str | None,
    confidence: float = DEFAULT_CONFIDENCE,
    fail_above: float | None = None,
    limits: Sequence[RowLimit] = (),
) -> str:
    """The Markdown of :func:`pr_summary`: a verdict line, then a section per
    architecture (in order of first appearance) with one part per target and metric."""
    gated = fail_above is not None or bool(limits)
    over = [o for p in pairs for o in p.over]
    moved = sum(len(p.moved) for p in pairs)
    compared = [p for p in pairs if p.base_run is not None]
    against = f"the latest run of `{base_branch}`" if base_branch else "the latest earlier run"
    head = [
        "## archbench: what moved",
        "",
        f"Each target against {against} on the same machine class (counts: same architecture "
        "and QEMU CPU model; times: same architecture, native or emulated, and CPU class). "
        f"{moved} row(s) moved in {len(compared)} comparison(s); "
        + (
            "**count gate FAILED**."
            if over
            else ("count gate passed." if gated else "no count gate set.")
        ),
    ]
    out = ["\n".join(head)]
    by_arch: dict[str, list[Pair]] = {}
    for p in pairs:
        by_arch.setdefault(p.identity.arch, []).append(p)
    for arch, parts in by_arch.items():
        out.append(f"### {markdown_escape(arch)}")
        for p in parts:
            ident = p.identity
            title = f"**{markdown_escape(ident.target)}**, {_machine(ident)}"
            if p.base_run is None:
                out.append(
                    f"{title}: head {_run_line(p.head_run, records)}; no base run on this "
                    "machine class yet, nothing to compare."
                )
                continue
            lines = [
                f"{title}: base {_run_line(p.base_run, records)}, head "
                f"{_run_line(p.head_run, records)}; {len(p.moved)} of {len(p.rows)} rows moved.",
                _gate(p.over, gated, ident.metric),
            ]
            if p.moved:
                lines.append(markdown(p.moved, p.base_run, p.head_run, confidence).rstrip())
            if p.functions:
                lines.append("```\n" + "\n".join(p.functions) + "\n```")
            out.append("\n\n".join(lines))
    text = "\n\n".join(out) + "\n"
    if len(text) > MAX_SUMMARY_CHARS:
        text = text[:MAX_SUMMARY_CHARS] + "\n\n… cut: the summary is longer than GitHub shows.\n"
    return text
