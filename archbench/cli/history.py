"""``invoke history``: a series of versions measured in interleaved rounds, counted, gated.

The flags (:data:`archbench.cli.flags.HISTORY`, the blindsig ones shared with ``bench``)
become one :class:`archbench.run.HistoryOptions`; :func:`archbench.run.measure_history`
builds and measures; this command prints the history's tables, writes its results page
and applies ``--fail-above`` and the matrix's limits to the counted steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from archbench import matrix
from archbench.analysis import over_limits
from archbench.cli.bench import build_jobs, given, raise_failures
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BASE,
    CPUS,
    EXTEND,
    HISTORY,
    HISTORY_FAIL_ABOVE,
    HISTORY_GNUNET,
    HISTORY_TALER,
    MATRIX,
    ROUNDS,
    SEED,
    SUITE,
    TARGET,
    Given,
    archs,
    blindsig_overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import LimitExceeded, MatrixError, ReportError
from archbench.matrix import parse_cpus, parse_gnunet, parse_taler
from archbench.report import (
    history_changes,
    history_steps,
    render_changes_markdown,
    render_history_markdown,
    render_steps_markdown,
    write_page_from_store,
)
from archbench.result import check_run_id, folder_lock, load
from archbench.run import HistoryOptions, check_overrides, measure_history


def history_options(s: Settings, g: Given) -> tuple[HistoryOptions, float | None]:
    """``invoke history``'s flags and settings, every flag checked, as one options object,
    and the ``--fail-above`` ratio (None: not given).

    Raises:
        MatrixError: a flag value is not allowed (nothing read or called yet).
    """
    chosen = blindsig_overrides(g)
    check_overrides(chosen)
    above = g.optional(HISTORY_FAIL_ABOVE)
    limit = None if above is None else HISTORY_FAIL_ABOVE.level(above)
    gnunet, taler = g.optional(HISTORY_GNUNET), g.optional(HISTORY_TALER)
    sources = tuple(parse_gnunet(text, "--gnunet") for text in split(gnunet, "--gnunet"))
    bases = tuple(split(g.optional(BASE), BASE.option))
    talers = tuple(parse_taler(text, "--taler") for text in split(taler, "--taler"))
    extend = g.text(EXTEND)
    if extend:
        check_run_id(extend, EXTEND.option, MatrixError)
    rounds, seed = g.optional(ROUNDS), g.optional(SEED)
    options = HistoryOptions(
        matrix=given(MATRIX.option, g.text(MATRIX), s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        sources=sources,
        bases=bases,
        talers=talers,
        targets=tuple(split(g.optional(TARGET), TARGET.option)),
        archs=tuple(archs(g.optional(ARCH))),
        overrides=chosen,
        suites=tuple(split(g.optional(SUITE), SUITE.option)),
        cpus=parse_cpus(CPUS.option, g.optional(CPUS)),
        rounds=int(ROUNDS.absent or 8) if rounds is None else ROUNDS.integer(rounds),
        seed=None if seed is None else SEED.integer(seed),
        extend=extend or None,
        apt_proxy=s.apt_proxy,
        build_jobs=build_jobs(s),
        on_wait=show,
    )
    return options, limit


def history(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke history``: build, measure in interleaved rounds and count a series of versions.

    Prints the history's tables (instructions and times per operation across the
    versions, :func:`archbench.report.render_history_markdown`) and where it is stored,
    and writes the results page of the history into the reports folder
    (:func:`archbench.report.write_page_from_store`).

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed in some versions; the rest is kept.
        LimitExceeded: ``--fail-above``: a counted row steps up beyond the limit.
        ArchbenchError: whatever :func:`archbench.run.measure_history` raises.
    """
    options, limit = history_options(s, Given(HISTORY, values))
    done = measure_history(options)
    results = {
        v.run_id: [load(p) for p in done.store.files([v.run_id])] for v in done.manifest.versions
    }
    show()
    show(render_history_markdown(done.manifest, results))
    steps = history_steps(done.manifest, results)
    alone = history_steps(done.manifest, results, rate=1.0)
    show(render_steps_markdown(steps, sum(step.metric == "time" for _, _, step in alone)))
    show(render_changes_markdown(history_changes(done.manifest, results)))
    # The page's folder is invoke report's --out: one writer at a time.
    with folder_lock(Path(s.reports), ReportError, "--out", show):
        for p in write_page_from_store(
            done.store, Path(s.reports), histories=[(done.manifest, results)]
        ):
            show(f"wrote {p}")
    where = done.store.root / done.manifest.history_id / "history.json"
    show(f"history: {where}   (extend: invoke history --extend {done.manifest.history_id} ...)")
    raise_failures([o for outcomes in done.outcomes.values() for o in outcomes])
    limits = matrix.load(options.matrix).row_limits
    if limit is not None or limits:
        over = over_limits([(key, step) for _, key, step in steps], limit, limits)
        if over:
            gate = f"--fail-above {limit}" if limit is not None else "the matrix's limits"
            raise LimitExceeded(
                f"{len(over)} counted step(s) grew beyond {gate}: "
                + "; ".join(
                    f"{arch} {key.label} {step.before} → {step.after} {step.ratio:.3f}×"
                    f" (limit {lim:g})"
                    for arch, key, step in steps
                    for item, lim in over
                    if item is step
                )
            )
