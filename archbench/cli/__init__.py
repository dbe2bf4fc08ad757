"""The bodies of the invoke tasks, behind the thin ``tasks.py`` at the repository root.

``tasks.py`` declares each task's flags and is the only module that knows invoke;
it resolves ``invoke.yaml`` (:func:`resolve_settings`), puts the flags, as the
strings invoke parsed, into one frozen object per task (:mod:`archbench.cli.options`)
and hands both to the task's body. The bodies only parse, call a stage and print:

The bodies are :mod:`archbench.cli.commands`, one function per task (``bench``,
``images``, ``report``, ``compare``, ``import_logs``, ``archive``, ``doctor``,
``clean``, ``ci_matrix``); the run itself is :func:`archbench.run.bench`.

What the bodies print goes through :func:`show` (control characters escaped, text the
terminal cannot encode in ASCII: ``µs`` as ``us``); ``tasks.py`` passes error messages
through :func:`safe_text`.

The help text of every flag is :mod:`archbench.cli.helptext` (``<TASK>_HELP``). The
bodies raise :class:`archbench.errors.ArchbenchError` subclasses; ``tasks.py`` turns
them into exit codes. Flag parsing (:mod:`~archbench.cli.options`,
:mod:`~archbench.cli.config`, :mod:`~archbench.cli.helptext`) never uses ``docker``.
"""

from __future__ import annotations

from archbench.cli.commands import (
    archive,
    bench,
    bisect,
    ci_matrix,
    clean,
    compare,
    doctor,
    history,
    images,
    import_logs,
    report,
)
from archbench.cli.config import Settings, check_invoke_yaml, resolve_settings
from archbench.cli.helptext import (
    ARCHIVE_HELP,
    BENCH_HELP,
    BISECT_HELP,
    CI_MATRIX_HELP,
    CLEAN_HELP,
    COMPARE_HELP,
    DOCTOR_HELP,
    HISTORY_HELP,
    IMAGES_HELP,
    IMPORT_HELP,
    REPORT_HELP,
)
from archbench.cli.options import (
    ArchiveFlags,
    BenchFlags,
    BisectFlags,
    CiMatrixFlags,
    CleanFlags,
    CompareFlags,
    DoctorFlags,
    HistoryFlags,
    ImagesFlags,
    ImportFlags,
    ReportFlags,
)
from archbench.cli.terminal import SIGPIPE_EXIT, guard_stdout, safe_text, show

__all__ = [
    "ARCHIVE_HELP",
    "BENCH_HELP",
    "BISECT_HELP",
    "CI_MATRIX_HELP",
    "CLEAN_HELP",
    "COMPARE_HELP",
    "DOCTOR_HELP",
    "HISTORY_HELP",
    "IMAGES_HELP",
    "IMPORT_HELP",
    "REPORT_HELP",
    "SIGPIPE_EXIT",
    "ArchiveFlags",
    "BenchFlags",
    "BisectFlags",
    "CiMatrixFlags",
    "CleanFlags",
    "CompareFlags",
    "DoctorFlags",
    "HistoryFlags",
    "ImagesFlags",
    "ImportFlags",
    "ReportFlags",
    "Settings",
    "archive",
    "bench",
    "bisect",
    "check_invoke_yaml",
    "ci_matrix",
    "clean",
    "compare",
    "doctor",
    "guard_stdout",
    "history",
    "images",
    "import_logs",
    "report",
    "resolve_settings",
    "safe_text",
    "show",
]
