"""``invoke import``: saved GNUnet ``perf_crypto_*`` / Taler ``test_helper_*`` output as results."""

from __future__ import annotations

from pathlib import Path

from archbench import upstream
from archbench.cli import options
from archbench.cli.config import Settings
from archbench.errors import MatrixError
from archbench.inputs import integer
from archbench.platforms import Arch
from archbench.report import render_markdown_table
from archbench.result import check_run_id, new_run_id


def import_logs(
    s: Settings,
    *,
    logs: str,
    setup: str,
    target: str,
    arch: str | None,
    run: str,
    results: str,
    cpu: str,
    cores: str | None,
    os: str,
    kernel: str,
    scheme: str,
    rsa_bits: str | None,
) -> None:
    """``invoke import``: store the logs ``logs`` names as the results of machine ``target``.

    The machine is described by ``setup`` (a YAML file) and/or ``cpu``, ``cores``,
    ``os``, ``kernel`` (which win); the results go to ``<results>/<run>/<target>.json``
    (a new run unless ``run``; :func:`archbench.upstream.import_logs`). Prints what
    each log held, the path and the table.

    Raises:
        MatrixError: no ``target``, not exactly one ``arch``, no machine description,
            a flag value that is not allowed, or a bad setup file.
        ResultsError: no log matches, a log cannot be read or gives no sample, or
            the results file exists already (never overwritten).
    """
    paths = upstream.log_paths(logs)
    if not target:
        raise MatrixError("--target is required: the name the imported machine is stored under")
    archs = options.archs(arch) if arch is not None else []
    if len(archs) != 1:
        raise MatrixError(f"--arch: name exactly one architecture ({', '.join(Arch.keys())})")
    overrides: dict[str, object] = {}
    if cpu:
        overrides["cpu_model"] = cpu
    if cores is not None:
        overrides["cores"] = integer("--cores", cores, 1, 65_536)
    if os:
        overrides["os"] = os
    if kernel:
        overrides["kernel"] = kernel
    if setup:
        machine = upstream.load_setup(Path(setup), archs[0], overrides)
    elif "cpu_model" in overrides and "cores" in overrides:
        machine = upstream.parse_setup(overrides, "command line", archs[0])
    else:
        raise MatrixError(
            "no setup: pass --setup setup.yml, or --cpu and --cores (and --os, --kernel)"
        )
    bits = None if rsa_bits is None else integer("--rsa-bits", rsa_bits, 512, 16384)
    run_id = check_run_id(run, "--run") if run else new_run_id()
    request = upstream.LogImport(
        paths=tuple(paths),
        setup=machine,
        target=target,
        arch=archs[0],
        run_id=run_id,
        results=Path(results or s.results),
        scheme=upstream.parse_scheme(scheme),
        rsa_bits=bits,
    )
    imported = upstream.import_logs(request)
    for scan in imported.scans:
        print(upstream.describe(scan))
    print(f"wrote {imported.path}")
    print()
    print(render_markdown_table(imported.result))
