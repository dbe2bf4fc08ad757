"""Every failure a user can act on, one class each, with its exit code.

Messages give the cause first, then the fix. They are caught once, at the
top (``tasks.py``), and turned into ``invoke.Exit(message, code)``.
"""

from __future__ import annotations


class ArchbenchError(Exception):
    """Base class; ``exit_code`` is the process exit status at the top."""

    exit_code = 1


class MatrixError(ArchbenchError):
    """matrix.yml (or a flag naming its targets) is invalid; nothing was built."""

    exit_code = 2


class EngineError(ArchbenchError):
    """The Docker engine cannot be reached or refused a request."""

    exit_code = 3


class EmulationError(ArchbenchError):
    """QEMU user emulation (binfmt_misc, qemu-user-static) is not usable."""

    exit_code = 4


class BaseImageError(ArchbenchError):
    """A base image could not be bootstrapped or pulled."""

    exit_code = 5


class ImageBuildError(ArchbenchError):
    """Building a benchmark image failed; the build log is kept on disk."""

    exit_code = 6


class HarnessError(ArchbenchError):
    """The harness failed inside the container or its output is unusable."""

    exit_code = 7


class ResultsError(ArchbenchError):
    """A results file is missing, malformed or of an unsupported version."""

    exit_code = 8


class ReportError(ArchbenchError):
    """A report could not be rendered from the selected results."""

    exit_code = 9


class ReportUsageError(ReportError):
    """A report flag's value is not one the flag allows (``--unit``, ``--style``,
    ``--suite``, ``--label-prefix``); nothing was read or written. Exit status 2, like
    every other command-line value that is refused (:class:`MatrixError`)."""

    exit_code = 2


class TargetsFailed(ArchbenchError):
    """One or more targets failed; the others' results were kept."""

    exit_code = 10


class ArchiveError(ArchbenchError):
    """An archive (``invoke archive`` / ``--from-archive``) is invalid, damaged or incomplete."""

    exit_code = 11


class SourceError(ArchbenchError):
    """A GNUnet source (``gnunet:``, ``--gnunet``) cannot be used: a missing file or
    directory, a sha256 that differs, a ref that names no commit, a failed download or
    fetch, a tree that is not GNUnet's; nothing was built from it."""

    exit_code = 12


class LimitExceeded(ArchbenchError):
    """``--fail-above``: a counted row's instructions per operation grew beyond the limit;
    everything else was printed and written as usual."""

    exit_code = 13


class StoreConflict(ResultsError):
    """``invoke publish``: a run is already in the store with other files or another
    provenance; the store's copy was kept, the other runs were merged."""

    exit_code = 14


class CountConflict(ResultsError):
    """A stored count a bisection would reuse cannot be trusted: two stored counts of one
    key disagree on the bisected row, or a results file of the commit was edited or
    truncated since it was written (its digest does not match). The bisection stopped
    before deciding anything; every step measured so far is kept."""

    exit_code = 15


class Interrupted(ArchbenchError):
    """Ctrl-C stopped a run; finished results were kept and can be resumed."""

    exit_code = 130
