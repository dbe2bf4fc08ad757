"""The bodies of the invoke tasks, behind the thin ``tasks.py`` at the repository root.

``tasks.py`` declares each task's flags and is the only module that knows invoke;
it resolves ``invoke.yaml`` (:func:`resolve_settings`), puts the flags, as the
strings invoke parsed, into one frozen object per task (:mod:`archbench.cli.options`)
and hands both to the task's body. The bodies only parse, call a stage and print:

| task | body |
| --- | --- |
| ``bench``, ``images`` | :mod:`archbench.cli.bench` (the run itself: :func:`archbench.run.bench`) |
| ``doctor``, ``clean``, ``ci-matrix`` | :mod:`archbench.cli.hosts` |
| ``report`` | :mod:`archbench.cli.report` |
| ``compare`` | :mod:`archbench.cli.compare` |
| ``import`` | :mod:`archbench.cli.import_logs` |
| ``archive`` | :mod:`archbench.cli.archive` |

The help text of every flag is :mod:`archbench.cli.helptext` (``<TASK>_HELP``). The
bodies raise :class:`archbench.errors.ArchbenchError` subclasses; ``tasks.py`` turns
them into exit codes. Flag parsing (:mod:`~archbench.cli.options`,
:mod:`~archbench.cli.config`, :mod:`~archbench.cli.helptext`) never uses ``docker``.
"""

from __future__ import annotations

from archbench.cli.bench import bench, images
from archbench.cli.config import Settings, resolve_settings
from archbench.cli.helptext import (
    ARCHIVE_HELP,
    BENCH_HELP,
    CI_MATRIX_HELP,
    CLEAN_HELP,
    COMPARE_HELP,
    DOCTOR_HELP,
    IMAGES_HELP,
    IMPORT_HELP,
    REPORT_HELP,
)
from archbench.cli.hosts import ci_matrix, clean, doctor
from archbench.cli.options import BenchFlags, CiMatrixFlags, CleanFlags, DoctorFlags, ImagesFlags

__all__ = [
    "ARCHIVE_HELP",
    "BENCH_HELP",
    "CI_MATRIX_HELP",
    "CLEAN_HELP",
    "COMPARE_HELP",
    "DOCTOR_HELP",
    "IMAGES_HELP",
    "IMPORT_HELP",
    "REPORT_HELP",
    "BenchFlags",
    "CiMatrixFlags",
    "CleanFlags",
    "DoctorFlags",
    "ImagesFlags",
    "Settings",
    "bench",
    "ci_matrix",
    "clean",
    "doctor",
    "images",
    "resolve_settings",
]
