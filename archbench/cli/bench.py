"""``invoke bench`` and ``invoke images``: check the flags, run :func:`archbench.run.bench`, print.

The flags become one frozen :class:`archbench.run.BenchOptions` before the matrix
is read or an engine is called; the run itself (manifests, engines, plans,
schedule) is :mod:`archbench.run.session`. Printed here: each target's end (stage
seconds) and, for ``bench``, each stored result's Markdown table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from archbench import report as reports
from archbench import run
from archbench.analysis import counting
from archbench.cli.config import Settings
from archbench.cli.options import BenchFlags, ImagesFlags, archs, overrides, split
from archbench.errors import TargetsFailed
from archbench.inputs import cpuset, integer
from archbench.matrix import parse_cpus
from archbench.report import instructions as instructions_tables
from archbench.result import load, merge_repeats


def bench_options(s: Settings, f: BenchFlags) -> run.BenchOptions:
    """``invoke bench``'s flags and settings, every flag checked, as one options object.

    Raises:
        MatrixError: a flag value is not allowed (nothing read or called yet).
    """
    chosen = overrides(f.iterations, f.repetitions, f.rsa_bits, f.warmup, f.max_time, f.ci_target)
    run.check_overrides(chosen)
    targets, selected = split(f.target, "--target"), archs(f.arch)
    quota = parse_cpus("--cpus", f.cpus)
    return run.BenchOptions(
        matrix=Path(f.matrix or s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(targets),
        archs=tuple(selected),
        rebuild=f.rebuild,
        overrides=chosen,
        repeat=1 if f.repeat is None else integer("--repeat", f.repeat, 1, 100),
        cpuset=cpuset("--cpuset", f.cpuset),
        cpus=quota,
        resume=f.resume,
        suites=tuple(split(f.suite, "--suite")),
        from_archive=Path(f.from_archive) if f.from_archive else None,
        metrics=counting.parse_metrics(f.metric) if f.metric is not None else (),
        apt_proxy=s.apt_proxy,
        build_jobs=s.build_jobs,
    )


def images_options(s: Settings, f: ImagesFlags) -> run.BenchOptions:
    """``invoke images``'s flags and settings as one options object (``build_only``).

    Raises:
        MatrixError: an empty selection or an unknown architecture.
    """
    return run.BenchOptions(
        matrix=Path(f.matrix or s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        targets=tuple(split(f.target, "--target")),
        archs=tuple(archs(f.arch)),
        build_only=True,
        rebuild=f.rebuild,
        apt_proxy=s.apt_proxy,
        build_jobs=s.build_jobs,
    )


def print_outcomes(done: run.BenchRun) -> None:
    """One line per target: ``kept``, ``ok`` or ``FAILED`` and its stage seconds."""
    for o in done.outcomes:
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())
        state = "kept" if o.skipped else "ok" if o.ok else "FAILED"
        print(f"{o.name}: {state}" + (f" ({stages})" if stages else ""))


def raise_failures(outcomes: Sequence[run.TargetOutcome]) -> None:
    """Raise :class:`TargetsFailed` naming each failed target and why, if any failed."""
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines = "\n".join(f"  {o.name}: {o.message}" for o in failed)
        kept = len(outcomes) - len(failed)
        raise TargetsFailed(f"{len(failed)} target(s) failed ({kept} kept their results):\n{lines}")


def bench(s: Settings, f: BenchFlags) -> None:
    """``invoke bench``: build (if needed) and run the selected targets; print their tables.

    Prints each target's end, each stored result's Markdown table (timings, or
    instruction counts) and where the run is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed; the others' results are kept.
        ArchbenchError: whatever :func:`archbench.run.bench` raises.
    """
    done = run.bench(bench_options(s, f))
    print_outcomes(done)
    for o in done.outcomes:
        if o.ok and o.result_paths:
            for merged in merge_repeats([load(p) for p in o.result_paths]):
                print()
                if merged.metric == "instructions":
                    print(instructions_tables.render_markdown([merged]))
                else:
                    print(reports.render_markdown_table(merged))
    if any(o.ok for o in done.outcomes):
        print(
            f"\nresults: {done.store.root / done.run_id}   (render all: invoke report --run "
            f"{done.run_id})"
        )
    raise_failures(done.outcomes)


def images(s: Settings, f: ImagesFlags) -> None:
    """``invoke images``: bootstrap bases and build benchmark images only (no measurement).

    Raises:
        MatrixError: an empty selection or an unknown architecture.
        TargetsFailed: some targets' bases or images did not build; their logs are kept.
        ArchbenchError: whatever :func:`archbench.run.bench` raises.
    """
    done = run.bench(images_options(s, f))
    print_outcomes(done)
    raise_failures(done.outcomes)
