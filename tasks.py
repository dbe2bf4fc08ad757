"""invoke tasks: the command line of archbench. Only this file knows invoke.

Each task's signature, help and docstring come from its declaration in
:mod:`archbench.cli.flags` (every flag declared once there); the task hands the
values invoke parsed, with the ``invoke.yaml`` settings, to its command's body in
:mod:`archbench.cli`, and turns an :class:`archbench.errors.ArchbenchError`
into ``Exit(message, code)``. Run ``invoke --list`` for the tasks and
``invoke --help TASK`` for flags.
"""

from __future__ import annotations

import functools
import keyword
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import Task, task

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


def _task(command: cli.Command) -> Task[Any]:
    """The invoke task of ``command``: its signature, help and docstring from the flag
    registry (:mod:`archbench.cli.flags`), its work the command's body (:func:`cli.load_body`,
    imported when the task runs: listing the tasks imports no command's module)."""

    def run(c: Context, **values: Any) -> None:
        cli.load_body(command.name)(_settings(c), values)

    # The name invoke would take the task's from: ci_matrix; import_ (a keyword).
    name = command.name.replace("-", "_")
    run.__name__ = run.__qualname__ = name + "_" if keyword.iskeyword(name) else name
    run.__doc__ = command.doc
    run.__signature__ = command.signature()  # type: ignore[attr-defined]  # read by invoke
    # Automatic short flags would give rsa_bits "--" and scheme "-h": long flags only.
    made: Task[Any] = task(name=command.name, help=command.help(), auto_shortflags=False)(
        _errors_to_exit(run)
    )
    return made


_TASKS = {c.name: _task(c) for c in cli.COMMANDS}

bench = _TASKS["bench"]
history = _TASKS["history"]
bisect = _TASKS["bisect"]
archive = _TASKS["archive"]
images = _TASKS["images"]
report = _TASKS["report"]
doctor = _TASKS["doctor"]
clean = _TASKS["clean"]
ci_matrix = _TASKS["ci-matrix"]
import_ = _TASKS["import"]
publish = _TASKS["publish"]
compare = _TASKS["compare"]
