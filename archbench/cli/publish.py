"""``invoke publish``: run folders of many machines and CI jobs into one history store.

Flags (:data:`archbench.cli.flags.PUBLISH`) are checked before anything is read or
written. Then the runs are merged (:func:`archbench.result.merge_runs`: checked, keyed by
run id and content digest, under the store's lock), the pull-request summary is written
(:func:`archbench.report.pr_summary`), and the whole store is rendered as ``invoke report
--all-runs`` renders a results folder (:func:`archbench.cli.report.render_report`).
Conflicts, refused runs and the count gate end the command after all of that
(:class:`~archbench.errors.StoreConflict`, :class:`~archbench.errors.ResultsError`,
:class:`~archbench.errors.LimitExceeded`). No Docker is needed.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from archbench.cli.bench import path_or_setting
from archbench.cli.config import Settings
from archbench.cli.flags import (
    BASE_BRANCH,
    BRANCH,
    CI_URL,
    COMMIT,
    MERGE,
    PAGE,
    PLOTS,
    PUBLISH,
    PUBLISH_FAIL_ABOVE,
    PUBLISH_OUT,
    RUNNER,
    STORE,
    SUMMARY,
    Given,
    split,
)
from archbench.cli.report import ReportRequest, matrix_limits, render_report
from archbench.cli.terminal import show
from archbench.errors import LimitExceeded, MatrixError, ResultsError, StoreConflict
from archbench.inputs import path_flag, quote
from archbench.matrix import RUNNER_LABEL
from archbench.report import pr_summary
from archbench.result import (
    MergeReport,
    Provenance,
    ResultStore,
    collect_runs,
    merge_runs,
    read_records,
    write_atomic,
)

BRANCH_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+@#=-]{0,254}")
"""A branch as git and GitHub name it (``main``, ``feature/x``, ``user@fix``): no spaces,
quotes or backticks, since it is shown inside Markdown code spans."""
COMMIT_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A commit id (or a tag) as the summary shows it."""
CI_URL_TEXT: Final = re.compile(r"https://[^\s'\"`<>\\]{1,490}")


def _checked(flag: str, value: str, grammar: re.Pattern[str], allowed: str) -> str | None:
    """``value`` when it matches ``grammar``, None when empty.

    Raises:
        MatrixError: anything else (exit 2), naming the flag and what is allowed.
    """
    if not value:
        return None
    if not grammar.fullmatch(value):
        raise MatrixError(f"{flag} {quote(value)}: give {allowed}")
    return value


def provenance(g: Given) -> Provenance:
    """The provenance flags as one :class:`~archbench.result.Provenance`.

    Raises:
        MatrixError: a value outside its grammar.
    """
    labels = split(g.optional(RUNNER), RUNNER.option) if g.text(RUNNER) else []
    for label in labels:
        _checked(RUNNER.option, label, re.compile(RUNNER_LABEL[1:-1]), "runner labels")
    return Provenance(
        branch=_checked(BRANCH.option, g.text(BRANCH), BRANCH_NAME, "a branch name"),
        commit=_checked(COMMIT.option, g.text(COMMIT), COMMIT_NAME, "a commit id"),
        runner=tuple(labels),
        ci_url=_checked(CI_URL.option, g.text(CI_URL), CI_URL_TEXT, "an https:// address"),
    )


def sources(value: str | None) -> list[Path]:
    """The folders ``--merge`` names, each item a path or a glob pattern.

    Raises:
        MatrixError: an empty item, or a pattern that matches nothing.
    """
    out: list[Path] = []
    for item in split(value, MERGE.option) if value is not None else []:
        path = path_flag(MERGE.option, item)
        if glob.has_magic(item):
            found = sorted(glob.glob(item))
            if not found:
                raise MatrixError(f"{MERGE.option}: {quote(item)} matches nothing")
            out.extend(Path(f) for f in found)
        else:
            out.append(path)
    return out


def publish(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke publish``: merge ``--merge``'s runs into ``--store``, summarise, render.

    Prints one line per run (merged, unchanged, conflict, refused), then the summary's
    path and the report's lines.

    Raises:
        MatrixError, ReportUsageError: a flag value is not allowed (nothing read or
            written).
        ResultsError: a ``--merge`` folder is missing; after everything else, runs
            refused because their files failed their checks.
        StoreConflict: after everything else, runs already in the store with other
            files or provenance.
        LimitExceeded: the summary's count gate failed (after everything was written).
    """
    g = Given(PUBLISH, values)
    origin = provenance(g)
    merged_from = sources(g.optional(MERGE))
    store = path_or_setting(STORE.option, g.text(STORE), s.results)
    out = path_or_setting(PUBLISH_OUT.option, g.text(PUBLISH_OUT), s.reports)
    summary_to = g.text(SUMMARY)
    summary_path = None if summary_to in ("", "-") else path_flag(SUMMARY.option, summary_to)
    above = g.optional(PUBLISH_FAIL_ABOVE)
    limit = None if above is None else PUBLISH_FAIL_ABOVE.level(above)
    base = _checked(BASE_BRANCH.option, g.text(BASE_BRANCH), BRANCH_NAME, "a branch name")
    runs = collect_runs(merged_from)
    if merged_from and not runs:
        show(f"nothing to merge: no run folder in {', '.join(map(str, merged_from))}")
    report = merge_runs(runs, store, origin, on_line=show) if runs else MergeReport()
    if summary_to:
        head = [line.run_id for line in report.lines if line.status in ("merged", "unchanged")]
        text, over = _summary(store, head, base, limit, Path(s.matrix))
        if summary_path is None:
            show(text.rstrip("\n"))
        else:
            # $GITHUB_STEP_SUMMARY is appended to by every step: append, never replace.
            _append(summary_path, text)
            show(f"wrote the summary to {summary_path}")
    else:
        over = []
    if g.switch(PAGE):
        request = ReportRequest(results=store, out=out, runs=None, plots=g.switch(PLOTS))
        render_report(request, on_line=show)
    _finish(report, over, limit)


def _summary(
    store: Path, head: list[str], base: str | None, limit: float | None, matrix_file: Path
) -> tuple[str, list[str]]:
    """The summary's Markdown and the gate's failures, one line each."""
    summary = pr_summary(
        ResultStore(store),
        read_records(store),
        head,
        base,
        fail_above=limit,
        limits=matrix_limits(matrix_file),
    )
    over = [
        f"{r.key.target} {r.key.label} {r.ratio:.4f}× (limit {lim:g})" for r, lim in summary.over
    ]
    return summary.text, over


def _append(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` (created when missing).

    Raises:
        ResultsError: the file cannot be written.
    """
    try:
        if path.is_file():
            with path.open("a", encoding="utf-8") as fh:
                fh.write(text)
        else:
            write_atomic(path, text)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot write the summary: {exc.strerror or exc}") from exc


def _finish(report: MergeReport, over: list[str], limit: float | None) -> None:
    """Say how the merge went; end with the error that says what needs a person.

    Raises:
        StoreConflict, ResultsError, LimitExceeded: see :func:`publish`.
    """
    counts = {s: len(report.of(s)) for s in ("merged", "unchanged", "conflict", "refused")}
    show(", ".join(f"{n} {s}" for s, n in counts.items()))
    problems: list[tuple[type[ResultsError] | type[LimitExceeded], str]] = []
    conflicts = report.of("conflict")
    if conflicts:
        problems.append(
            (
                StoreConflict,
                f"{len(conflicts)} run(s) conflict with the store's copy, which was kept: "
                + ", ".join(c.run_id for c in conflicts)
                + "; a run id is measured once: find which copy is right, and remove the "
                "other from the store or from what you merge",
            )
        )
    refused = report.of("refused")
    if refused:
        problems.append(
            (
                ResultsError,
                f"{len(refused)} run(s) refused, their files fail their checks (above): "
                + ", ".join(str(r.source) for r in refused)
                + "; the others were merged",
            )
        )
    if over:
        gate = f"--fail-above {limit:g}" if limit is not None else "the matrix's limits"
        problems.append(
            (
                LimitExceeded,
                f"{gate}: {len(over)} counted row(s) grew beyond the limit: "
                + "; ".join(over)
                + "; if the growth is intended, raise the limit",
            )
        )
    if problems:
        cls, _ = problems[0]
        raise cls("\n".join(message for _, message in problems))
