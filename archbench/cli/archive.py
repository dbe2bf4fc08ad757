"""``invoke archive`` and ``invoke import``: a run into one archive, saved logs into a run.

``archive`` hands :func:`archbench.hosts.create_archive` (the engine's part: the
copy of the results, ``docker save`` of every image, the manifest) the report
stage's renderer (:func:`render_archived_report`), so the archive's report is the
one ``invoke report --run RUN_ID`` writes. ``import`` stores GNUnet ``perf_crypto_*``
/ Taler ``test_helper_*`` output as a machine's results
(:func:`archbench.upstream.import_logs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from archbench import upstream
from archbench.cli.bench import path_or_setting
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCHIVE,
    ARCHIVE_OUT,
    ARCHIVE_PLOTS,
    CORES,
    CPU,
    IMPORT,
    IMPORT_ARCH,
    IMPORT_RSA_BITS,
    IMPORT_RUN,
    IMPORT_TARGET,
    KERNEL,
    LOGS,
    OS,
    RESULTS,
    RUN_ID,
    SCHEME,
    SETUP,
    TAR,
    Given,
    archs,
)
from archbench.cli.terminal import show
from archbench.errors import MatrixError
from archbench.hosts import ArchiveSummary, create_archive
from archbench.inputs import path_flag
from archbench.platforms import Arch
from archbench.result import ResultStore, check_run_id, new_run_id
from archbench.upstream import (
    LogImport,
    check_import_name,
    describe,
    load_setup,
    log_paths,
    parse_scheme,
    parse_setup,
)


def render_archived_report(
    plots: bool, on_line: Callable[[str], None]
) -> Callable[[ResultStore, str, Path], None]:
    """The renderer :func:`archbench.hosts.create_archive` calls: the files ``invoke
    report --run RUN_ID`` writes with its default options (figures too with ``plots``),
    then one line saying how many files from how many results."""
    # The reports (pandas) load when this command renders, not when its flags are checked.
    from archbench.report import prepare, write_folder

    def render(copied: ResultStore, run_id: str, report_dir: Path) -> None:
        loaded, bad = copied.load_all([run_id])
        rendered = prepare(loaded, bad)
        written = write_folder(rendered, bad, report_dir)
        if plots:
            # matplotlib is slow to import; ``plots`` is this function's flag.
            from archbench.report import plots as figures

            written += figures.write_plots(rendered, report_dir)
        on_line(f"report: {len(written)} file(s) rendered from {len(loaded)} result(s)")

    return render


def archive_run(
    store: ResultStore,
    run_id: str,
    out: Path,
    *,
    tar: bool = False,
    plots: bool = True,
    on_line: Callable[[str], None] = print,
) -> ArchiveSummary:
    """Run ``run_id`` of ``store`` archived into ``out`` with its report
    (:func:`archbench.hosts.create_archive` with :func:`render_archived_report`).

    Raises:
        MatrixError, ResultsError, ArchiveError, EngineError: as
            :func:`archbench.hosts.create_archive`.
    """
    render = render_archived_report(plots, on_line)
    return create_archive(store, run_id, out, render=render, tar=tar, on_line=on_line)


def archive(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke archive``: write run ``RUN_ID`` to ``--out`` (default ``archives/<run-id>``).

    Prints the path, size in MB, seconds taken, archive id and the sha256 of its
    ``manifest.json``, and the command that reruns it elsewhere.

    Raises:
        ArchiveError: ``out`` exists, or an image or file of the run cannot be saved.
        ResultsError: the run is unknown or its manifest cannot be read.
        EngineError: the engine cannot be reached to save the images.
    """
    g = Given(ARCHIVE, values)
    run_id = g.text(RUN_ID)
    summary = archive_run(
        ResultStore(path_or_setting(RESULTS.option, g.text(RESULTS), s.results)),
        run_id,
        path_or_setting(ARCHIVE_OUT.option, g.text(ARCHIVE_OUT), f"archives/{run_id}"),
        tar=g.switch(TAR),
        plots=g.switch(ARCHIVE_PLOTS),
        on_line=show,
    )
    show(
        f"wrote {summary.path}: {summary.total_bytes / 1e6:.0f} MB in {summary.seconds:.1f} s, "
        f"archive {summary.archive_id}, manifest sha256 {summary.manifest_sha256}"
    )
    show(f"rerun elsewhere: invoke bench --from-archive {summary.path}")


def import_logs(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke import``: store the logs ``LOGS`` names as the results of machine ``--target``.

    The machine is described by ``--setup`` (a YAML file) and/or ``--cpu``, ``--cores``,
    ``--os``, ``--kernel`` (which win); the results go to ``<results>/<run>/<target>.json``
    (a new run unless ``--run``; :func:`archbench.upstream.import_logs`). Prints what
    each log held, the path and the table.

    Raises:
        MatrixError: no ``--target``, not exactly one ``--arch``, no machine description,
            a flag value that is not allowed, or a bad setup file.
        ResultsError: no log matches, a log cannot be read or gives no sample, or
            the results file exists already (never overwritten).
    """
    g = Given(IMPORT, values)
    paths = log_paths(str(path_flag("LOGS", g.text(LOGS))))
    target = g.text(IMPORT_TARGET)
    if not target:
        raise MatrixError("--target is required: the name the imported machine is stored under")
    check_import_name(target, IMPORT_TARGET.option)
    arch = g.optional(IMPORT_ARCH)
    chosen = archs(arch) if arch is not None else []
    if len(chosen) != 1:
        raise MatrixError(f"--arch: name exactly one architecture ({', '.join(Arch.keys())})")
    overrides: dict[str, object] = {}
    if g.text(CPU):
        overrides["cpu_model"] = g.text(CPU)
    if (cores := g.optional(CORES)) is not None:
        overrides["cores"] = CORES.integer(cores)
    if g.text(OS):
        overrides["os"] = g.text(OS)
    if g.text(KERNEL):
        overrides["kernel"] = g.text(KERNEL)
    if g.text(SETUP):
        machine = load_setup(path_flag(SETUP.option, g.text(SETUP)), chosen[0], overrides)
    elif "cpu_model" in overrides and "cores" in overrides:
        machine = parse_setup(overrides, "command line", chosen[0])
    else:
        raise MatrixError(
            "no setup: pass --setup setup.yml, or --cpu and --cores (and --os, --kernel)"
        )
    bits = g.optional(IMPORT_RSA_BITS)
    rsa_bits = None if bits is None else IMPORT_RSA_BITS.integer(bits)
    run = g.text(IMPORT_RUN)
    run_id = check_run_id(run, IMPORT_RUN.option, MatrixError) if run else new_run_id()
    request = LogImport(
        paths=tuple(paths),
        setup=machine,
        target=target,
        arch=chosen[0],
        run_id=run_id,
        results=path_or_setting(RESULTS.option, g.text(RESULTS), s.results),
        scheme=parse_scheme(g.text(SCHEME)),
        rsa_bits=rsa_bits,
    )
    imported = upstream.import_logs(request, on_wait=show)
    for scan in imported.scans:
        show(describe(scan))
    show(f"wrote {imported.path}")
    show()
    # The reports (pandas) load once the logs are read: a refused flag costs less.
    from archbench.report import render_markdown_table

    show(render_markdown_table(imported.result))
