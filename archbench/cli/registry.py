"""Each command's body by its name: what ``tasks.py`` hands the values invoke parsed to.

A body takes the resolved ``invoke.yaml`` settings and the flags of its
:class:`archbench.cli.flags.Command` as invoke parsed them (parameter name -> text,
bool or None), checks them and runs the command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from archbench.cli import archive, bench, bisect, history, hosts, publish, report
from archbench.cli.config import Settings

Body = Callable[[Settings, Mapping[str, Any]], None]
"""A command's body: ``(settings, values)``, raising ArchbenchError subclasses."""

BODIES: Final[Mapping[str, Body]] = {
    "archive": archive.archive,
    "bench": bench.bench,
    "bisect": bisect.bisect,
    "ci-matrix": hosts.ci_matrix,
    "clean": hosts.clean,
    "compare": report.compare,
    "doctor": hosts.doctor,
    "history": history.history,
    "images": bench.images,
    "import": archive.import_logs,
    "publish": publish.publish,
    "report": report.report,
}
"""Command name (``invoke NAME``) -> its body; one per :data:`archbench.cli.flags.COMMANDS`."""
