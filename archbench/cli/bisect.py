"""``invoke bisect``: the commit(s) between two refs that moved a row's instructions per
operation, on each selected architecture.

The flags (:data:`archbench.cli.flags.BISECT`) become one
:class:`archbench.run.BisectOptions` (a new bisection, or ``--resume BISECT_ID``);
:func:`archbench.run.measure_bisection` measures; this command prints the outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BAD,
    BISECT,
    BISECT_GNUNET,
    BISECT_METRIC,
    BISECT_RESUME,
    GOOD,
    MATRIX,
    ROW,
    TARGET,
    Given,
    archs,
    blindsig_overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import MatrixError, TargetsFailed
from archbench.inputs import quote
from archbench.matrix import parse_gnunet
from archbench.result import check_run_id
from archbench.run import BisectOptions, check_overrides, measure_bisection, parse_row


def bisect_options(s: Settings, g: Given) -> BisectOptions:
    """``invoke bisect``'s flags and settings, every flag checked, as one options object.

    Raises:
        MatrixError: a flag value is not allowed, a flag ``--resume`` takes from the
            stored bisection, or a missing ``--gnunet``/``--good``/``--bad``/``--row``.
    """
    metric = g.text(BISECT_METRIC)
    if metric != "instructions":
        raise MatrixError(
            f"--metric {quote(metric)}: invoke bisect decides on instructions (exact counts); "
            "timed bisection is not implemented"
        )
    chosen = blindsig_overrides(g)
    check_overrides(chosen)
    matrix = Path(g.text(MATRIX) or s.matrix)
    resume = g.text(BISECT_RESUME)
    gnunet, good, bad, row = (g.optional(f) for f in (BISECT_GNUNET, GOOD, BAD, ROW))
    if resume:
        check_run_id(resume, BISECT_RESUME.option, MatrixError)
        named = [f.option for f in (BISECT_GNUNET, GOOD, BAD, ROW, ARCH, TARGET) if g.optional(f)]
        if named:
            raise MatrixError(
                f"--resume takes the bisection's own {', '.join(named)}: give none of them"
            )
        return BisectOptions(matrix=matrix, results=Path(s.results), work=Path(s.work),
                             resume=resume, apt_proxy=s.apt_proxy, on_wait=show)  # fmt: skip
    missing = [f.option for f in (BISECT_GNUNET, GOOD, BAD, ROW) if not g.optional(f)]
    if missing:
        raise MatrixError(
            f"invoke bisect needs {', '.join(missing)} (e.g. --gnunet git+file:///srv/"
            "gnunet.git --good v0.21.2 --bad v0.22.2 --row 'CS signing')"
        )
    assert gnunet and good and bad and row
    if not gnunet.startswith("git+") or "@" in gnunet.rpartition("/")[2]:
        raise MatrixError(
            f"--gnunet {quote(gnunet)}: give git+URL without @REF (the refs are --good, --bad)"
        )
    url = gnunet[len("git+") :]
    # The grammar of a git source checks the URL and each ref as for bench --gnunet.
    for ref in (good, bad):
        parse_gnunet(f"git+{url}@{ref}", "--good/--bad")
    return BisectOptions(
        matrix=matrix,
        results=Path(s.results),
        work=Path(s.work),
        url=url,
        good=good,
        bad=bad,
        row=parse_row(row),
        archs=tuple(archs(g.optional(ARCH))),
        targets=tuple(split(g.optional(TARGET), TARGET.option)),
        overrides=chosen,
        apt_proxy=s.apt_proxy,
        on_wait=show,
    )


def bisect(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke bisect``: the commit(s) between two refs that moved a row's instructions
    per operation, on each selected architecture (:func:`archbench.run.measure_bisection`).

    Prints every step as it is measured (with an ETA), the outcome per architecture,
    the number of steps and the wall time, and where ``bisect.json`` is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        SourceError: a ref names no commit, or good is not an ancestor of bad.
        TargetsFailed: good or bad did not build or run on some architecture.
        ArchbenchError: whatever :func:`archbench.run.measure_bisection` raises.
    """
    done = measure_bisection(bisect_options(s, Given(BISECT, values)))
    show()
    for line in done.manifest.outcome.splitlines():
        show(line)
    steps = len(done.manifest.steps)
    builds = sum(len(st.counts) for st in done.manifest.steps)
    total = sum(st.seconds for st in done.manifest.steps)
    show(
        f"{steps} steps ({builds} builds and counts), {total / 60:.1f} min measuring in all"
        f" ({done.seconds / 60:.1f} min this session)"
    )
    where = done.store.root / done.manifest.bisect_id / "bisect.json"
    show(f"bisection: {where}")
    failed = [st.arch for st in done.states if st.status == "failed"]
    if failed:
        raise TargetsFailed(
            f"{done.manifest.good} or {done.manifest.bad} did not build or run on "
            f"{', '.join(failed)}: see the steps in {where}"
        )
