"""invoke tasks: the command line of archbench. Only this file knows invoke.

Each task declares its flags (its signature; their help texts are in
:mod:`archbench.cli.helptext`), puts them into the task's one flags object
(:mod:`archbench.cli.options`), hands it with the ``invoke.yaml`` settings to its
body in :mod:`archbench.cli`, and turns an :class:`archbench.errors.ArchbenchError`
into ``Exit(message, code)``. Run ``invoke --list`` for the tasks and
``invoke --help TASK`` for flags.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import task

from archbench import cli
from archbench.errors import ArchbenchError

F = TypeVar("F", bound=Callable[..., Any])


def _errors_to_exit(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A reader of stdout that goes away (| head) does not stop the work half-done.
        with cli.guard_stdout() as guard:
            try:
                done = fn(*args, **kwargs)
            except ArchbenchError as exc:
                # Messages quote file names and fields: escaped, in the terminal's encoding.
                message = cli.safe_text(f"archbench: {exc}", getattr(sys.stderr, "encoding", None))
                raise Exit(message, code=exc.exit_code) from exc
        if guard.closed_pipe:
            raise Exit(code=cli.SIGPIPE_EXIT)  # quiet, as SIGPIPE would end it
        return done

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature


PROJECT_DIR = Path(__file__).resolve().parent
"""The project directory (where tasks.py and invoke.yaml are): relative paths in
invoke.yaml and INVOKE_ARCHBENCH_* start here, so `invoke` run from a subdirectory
finds the same matrix, results and reports; paths given as flags start at the
current directory, as a shell's do."""


try:
    # invoke reads invoke.yaml after this module and before any task, with its own
    # loader: a broken file would end in invoke's traceback. Said here in our words.
    cli.check_invoke_yaml(PROJECT_DIR / "invoke.yaml")
except ArchbenchError as _exc:
    sys.stderr.write(
        cli.safe_text(f"archbench: {_exc}", getattr(sys.stderr, "encoding", None)) + "\n"
    )
    raise SystemExit(_exc.exit_code) from None


def _settings(c: Context) -> cli.Settings:
    return cli.resolve_settings(c.config.get("archbench", {}), PROJECT_DIR)


@task(help=cli.BENCH_HELP, auto_shortflags=False)
@_errors_to_exit
def bench(
    c: Context,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    iterations: str | None = None,
    repetitions: str | None = None,
    rsa_bits: str | None = None,
    rebuild: bool = False,
    repeat: str | None = None,
    cpuset: str | None = None,
    warmup: str | None = None,
    max_time: str | None = None,
    resume: str = "",
    suite: str | None = None,
    from_archive: str = "",
    metric: str | None = None,
    ci_target: str | None = None,
    cpus: str | None = None,
    gnunet: str | None = None,
    taler: str | None = None,
) -> None:
    """Build (if needed) and run the benchmark for matrix targets; print their tables."""
    flags = cli.BenchFlags(
        arch=arch,
        target=target,
        matrix=matrix,
        iterations=iterations,
        repetitions=repetitions,
        rsa_bits=rsa_bits,
        rebuild=rebuild,
        repeat=repeat,
        cpuset=cpuset,
        warmup=warmup,
        max_time=max_time,
        resume=resume,
        suite=suite,
        from_archive=from_archive,
        metric=metric,
        ci_target=ci_target,
        cpus=cpus,
        gnunet=gnunet,
        taler=taler,
    )
    cli.bench(_settings(c), flags)


@task(help=cli.HISTORY_HELP, auto_shortflags=False)
@_errors_to_exit
def history(
    c: Context,
    gnunet: str | None = None,
    base: str | None = None,
    taler: str | None = None,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    rounds: str | None = None,
    seed: str | None = None,
    extend: str = "",
    iterations: str | None = None,
    repetitions: str | None = None,
    rsa_bits: str | None = None,
    warmup: str | None = None,
    max_time: str | None = None,
    ci_target: str | None = None,
    suite: str | None = None,
    cpus: str | None = None,
    fail_above: str | None = None,
) -> None:
    """Measure a series of GNUnet or exchange sources or Debian bases: rounds, counts, steps."""
    flags = cli.HistoryFlags(
        gnunet=gnunet,
        base=base,
        taler=taler,
        arch=arch,
        target=target,
        matrix=matrix,
        rounds=rounds,
        seed=seed,
        extend=extend,
        iterations=iterations,
        repetitions=repetitions,
        rsa_bits=rsa_bits,
        warmup=warmup,
        max_time=max_time,
        ci_target=ci_target,
        suite=suite,
        cpus=cpus,
        fail_above=fail_above,
    )
    cli.history(_settings(c), flags)


@task(help=cli.BISECT_HELP, auto_shortflags=False)
@_errors_to_exit
def bisect(
    c: Context,
    gnunet: str | None = None,
    good: str | None = None,
    bad: str | None = None,
    row: str | None = None,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    metric: str = "instructions",
    rsa_bits: str | None = None,
    repetitions: str | None = None,
    resume: str = "",
) -> None:
    """Find the commit that moved a row's instructions per operation, per architecture."""
    cli.bisect(
        _settings(c),
        cli.BisectFlags(
            gnunet=gnunet,
            good=good,
            bad=bad,
            row=row,
            arch=arch,
            target=target,
            matrix=matrix,
            metric=metric,
            rsa_bits=rsa_bits,
            repetitions=repetitions,
            resume=resume,
        ),
    )


@task(help=cli.ARCHIVE_HELP, auto_shortflags=False)
@_errors_to_exit
def archive(
    c: Context, run_id: str, out: str = "", tar: bool = False, plots: bool = True, results: str = ""
) -> None:
    """Write a run's images (docker save), matrix, results and report into one directory."""
    cli.archive(
        _settings(c),
        cli.ArchiveFlags(run_id=run_id, out=out, tar=tar, plots=plots, results=results),
    )


@task(help=cli.IMAGES_HELP, auto_shortflags=False)
@_errors_to_exit
def images(
    c: Context,
    arch: str | None = None,
    target: str | None = None,
    matrix: str = "",
    rebuild: bool = False,
) -> None:
    """Bootstrap bases and build benchmark images only (no measurement)."""
    cli.images(
        _settings(c), cli.ImagesFlags(arch=arch, target=target, matrix=matrix, rebuild=rebuild)
    )


@task(help=cli.REPORT_HELP, auto_shortflags=False)
@_errors_to_exit
def report(
    c: Context,
    run: str | None = None,
    all_runs: bool = False,
    results: str = "",
    out: str = "",
    target: str | None = None,
    arch: str | None = None,
    suite: str | None = None,
    reference: bool = False,
    baseline: str = "",
    style: str = "thesis",
    unit: str = "ms",
    compare_bits: str | None = None,
    plots: bool = True,
    label_prefix: str = "",
) -> None:
    """Render the Performance Measurements chapter, exports and plots (no Docker needed)."""
    cli.report(
        _settings(c),
        cli.ReportFlags(
            run=run,
            all_runs=all_runs,
            results=results,
            out=out,
            target=target,
            arch=arch,
            suite=suite,
            reference=reference,
            baseline=baseline,
            style=style,
            unit=unit,
            compare_bits=compare_bits,
            plots=plots,
            label_prefix=label_prefix,
        ),
    )


@task(help=cli.DOCTOR_HELP, auto_shortflags=False)
@_errors_to_exit
def doctor(c: Context, arch: str | None = None, fix: bool = False, matrix: str = "") -> None:
    """Check QEMU user emulation: binfmt_misc, handlers, static QEMU, uname -m smoke run."""
    cli.doctor(_settings(c), cli.DoctorFlags(arch=arch, fix=fix, matrix=matrix))


@task(help=cli.CLEAN_HELP, auto_shortflags=False)
@_errors_to_exit
def clean(c: Context, matrix: str = "", host: str | None = None) -> None:
    """Remove containers archbench left on every host of the matrix (label org.archbench)."""
    cli.clean(_settings(c), cli.CleanFlags(matrix=matrix, host=host))


@task(help=cli.CI_MATRIX_HELP, auto_shortflags=False)
@_errors_to_exit
def ci_matrix(
    c: Context, arch: str | None = None, target: str | None = None, matrix: str = ""
) -> None:
    """Print the targets as a GitHub Actions matrix (JSON) to fan out on native runners."""
    cli.ci_matrix(_settings(c), cli.CiMatrixFlags(arch=arch, target=target, matrix=matrix))


@task(
    name="import",
    # Automatic short flags would give rsa_bits "--" and scheme "-h": long flags only.
    auto_shortflags=False,
    help=cli.IMPORT_HELP,
)
@_errors_to_exit
def import_(
    c: Context,
    logs: str,
    setup: str = "",
    target: str = "",
    arch: str | None = None,
    run: str = "",
    results: str = "",
    cpu: str = "",
    cores: str | None = None,
    os: str = "",
    kernel: str = "",
    scheme: str = "",
    rsa_bits: str | None = None,
) -> None:
    """Import saved perf_crypto_cs/_rsa and test_helper_cs/_rsa output as one machine's results."""
    cli.import_logs(
        _settings(c),
        cli.ImportFlags(
            logs=logs,
            setup=setup,
            target=target,
            arch=arch,
            run=run,
            results=results,
            cpu=cpu,
            cores=cores,
            os=os,
            kernel=kernel,
            scheme=scheme,
            rsa_bits=rsa_bits,
        ),
    )


@task(help=cli.COMPARE_HELP, auto_shortflags=False)
@_errors_to_exit
def compare(
    c: Context,
    run_a: str,
    run_b: str,
    results: str = "",
    out: str = "",
    target: str | None = None,
    arch: str | None = None,
    suite: str | None = None,
    confidence: str = "0.95",
    threshold: str = "0.05",
    fail_above: str | None = None,
) -> None:
    """Compare two runs row by row: B/A, its interval and a verdict (faster, slower, no change)."""
    cli.compare(
        _settings(c),
        cli.CompareFlags(
            run_a=run_a,
            run_b=run_b,
            results=results,
            out=out,
            target=target,
            arch=arch,
            suite=suite,
            confidence=confidence,
            threshold=threshold,
            fail_above=fail_above,
        ),
    )
