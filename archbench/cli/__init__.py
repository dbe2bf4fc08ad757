"""The commands, one module each, behind the thin ``tasks.py`` at the repository root.

Every flag is declared once in :mod:`archbench.cli.flags` (a :class:`Command` per
task: name, help, default, range); ``tasks.py``, the only module that knows invoke,
builds each task's signature and help from it, resolves ``invoke.yaml``
(:func:`resolve_settings`) and hands the values invoke parsed to the command's body.
Each command module holds its flags' checks and the orchestration of its stages:

* :mod:`~archbench.cli.bench`: ``bench`` and ``images`` (a new run, a resumed one or
  an archive's rerun; engines, plans, manifest);
* :mod:`~archbench.cli.history`: ``history``; :mod:`~archbench.cli.bisect`: ``bisect``;
* :mod:`~archbench.cli.report`: ``report`` and ``compare``;
* :mod:`~archbench.cli.archive`: ``archive`` and ``import``;
* :mod:`~archbench.cli.hosts`: ``doctor``, ``clean`` and ``ci-matrix``.

What the bodies print goes through :func:`show` (control characters escaped, text the
terminal cannot encode in ASCII: ``µs`` as ``us``); ``tasks.py`` passes error messages
through :func:`safe_text`. The bodies raise :class:`archbench.errors.ArchbenchError`
subclasses; ``tasks.py`` turns them into exit codes. Flag parsing
(:mod:`~archbench.cli.flags`, :mod:`~archbench.cli.config`) never uses ``docker``.
"""

from __future__ import annotations

from archbench.cli.config import Settings, check_invoke_yaml, resolve_settings
from archbench.cli.flags import COMMANDS, Command
from archbench.cli.registry import BODIES, Body, load_body
from archbench.cli.terminal import SIGPIPE_EXIT, guard_stdout, safe_text, show

__all__ = [
    "BODIES",
    "COMMANDS",
    "SIGPIPE_EXIT",
    "Body",
    "Command",
    "Settings",
    "check_invoke_yaml",
    "guard_stdout",
    "load_body",
    "resolve_settings",
    "safe_text",
    "show",
]
