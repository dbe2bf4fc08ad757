"""Each command's body by its name: what ``tasks.py`` hands the values invoke parsed to.

A body takes the resolved ``invoke.yaml`` settings and the flags of its
:class:`archbench.cli.flags.Command` as invoke parsed them (parameter name -> text,
bool or None), checks them and runs the command.

The bodies are named here, not imported: :func:`load_body` imports a command's module when
that command runs. ``invoke --list``, ``invoke --help TASK`` and a command's flag errors
then cost the flag registry's imports (about 0.4 s), not every command's (pandas for the
reports, the Docker SDK, ...: about 2.5 s more on the 2-core machine, paid by every
``invoke`` call and by every test that runs one).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from archbench.cli.config import Settings

Body = Callable[[Settings, Mapping[str, Any]], None]
"""A command's body: ``(settings, values)``, raising ArchbenchError subclasses."""

BODIES: Final[Mapping[str, str]] = {
    "archive": "archbench.cli.archive:archive",
    "bench": "archbench.cli.bench:bench",
    "bisect": "archbench.cli.bisect:bisect",
    "ci-matrix": "archbench.cli.hosts:ci_matrix",
    "clean": "archbench.cli.hosts:clean",
    "compare": "archbench.cli.report:compare",
    "doctor": "archbench.cli.hosts:doctor",
    "history": "archbench.cli.history:history",
    "images": "archbench.cli.bench:images",
    "import": "archbench.cli.archive:import_logs",
    "publish": "archbench.cli.publish:publish",
    "report": "archbench.cli.report:report",
}
"""Command name (``invoke NAME``) -> ``module:function`` of its body; one per
:data:`archbench.cli.flags.COMMANDS`."""


def load_body(name: str) -> Body:
    """The body of command ``name`` (a key of :data:`BODIES`), its module imported now.

    Raises:
        KeyError: ``name`` is not a command.
    """
    module, _, function = BODIES[name].partition(":")
    return cast(Body, getattr(importlib.import_module(module), function))
