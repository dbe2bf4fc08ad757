"""The machines targets run on: Docker engines, the ssh login to them, QEMU user emulation.

* :mod:`archbench.hosts.engine`: the one place a Docker client is created
  (:func:`connect` for the environment's engine, :func:`connect_host` for a matrix
  host) and facts about an engine (:func:`engine_arch`, :func:`engine_version`,
  :func:`answers`), plus :func:`host_cpu_model` of this machine and :func:`redact`,
  which drops user names from error texts;
* :mod:`archbench.hosts.ssh`: ``ssh://`` hosts through the system's ssh client,
  with a login probe that names a host key or login problem as such;
* :mod:`archbench.hosts.emulation`: the binfmt_misc and QEMU preflight
  (:func:`check_emulation`) and its repair as root (:func:`fix_emulation`,
  ``invoke doctor --fix``). It reads ``/proc`` and runs QEMU, never Docker.

Every other stage takes a client as a parameter; building images is
:mod:`archbench.build`, running containers :mod:`archbench.run`.
"""

from __future__ import annotations

from archbench.hosts.emulation import EmulationStatus, check_emulation, fix_emulation
from archbench.hosts.engine import (
    answers,
    connect,
    connect_host,
    engine_arch,
    engine_version,
    host_cpu_model,
    redact,
)

__all__ = [
    "EmulationStatus",
    "answers",
    "check_emulation",
    "connect",
    "connect_host",
    "engine_arch",
    "engine_version",
    "fix_emulation",
    "host_cpu_model",
    "redact",
]
