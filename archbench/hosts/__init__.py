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
  ``invoke doctor --fix``). It reads ``/proc`` and runs QEMU, never Docker;
* :mod:`archbench.hosts.ci`: GitHub Actions runners: the native runner of each
  architecture (its record's ``runner`` in :mod:`archbench.platforms`), the emulating
  and counting x86-64 one, and the
  jobs of ``invoke ci-matrix`` (:func:`plan_jobs`). Pure;
* :mod:`archbench.hosts.archives`: archives through the engine (the format is
  :mod:`archbench.archive`): :func:`create_archive` (``docker save`` of a run's
  images beside its results and the report its caller renders), and for
  ``--from-archive`` :func:`open_archive`, :func:`load_for_targets`,
  :func:`check_image` and the targets a rerun may run (:func:`local_targets`,
  :func:`resume_targets`).

Every other stage takes a client as a parameter; building images is
:mod:`archbench.images`, running containers :mod:`archbench.run`.
"""

from __future__ import annotations

from archbench.hosts.archives import (
    ArchiveSummary,
    ImageTransfer,
    check_image,
    create_archive,
    load_for_targets,
    load_images,
    local_targets,
    open_archive,
    resume_targets,
    run_manifest,
    save_image,
)
from archbench.hosts.ci import EMULATING_RUNNER, CiJob, plan_jobs
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
    "EMULATING_RUNNER",
    "ArchiveSummary",
    "CiJob",
    "EmulationStatus",
    "ImageTransfer",
    "answers",
    "check_emulation",
    "check_image",
    "connect",
    "connect_host",
    "create_archive",
    "engine_arch",
    "engine_version",
    "fix_emulation",
    "host_cpu_model",
    "load_for_targets",
    "load_images",
    "local_targets",
    "open_archive",
    "plan_jobs",
    "redact",
    "resume_targets",
    "run_manifest",
    "save_image",
]
