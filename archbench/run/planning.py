"""Plan a run: which targets run where, natively or emulated, with which suites.

:func:`plan` is pure: it turns the selected matrix targets into a list of
:class:`TargetPlan` (host, native or emulated, base, packages) from the
architectures the hosts' engines report, so it can be printed and tested.
:func:`check_overrides` checks the blindsig settings a run overrides (flags or
a resumed run's ``run.json``) before anything is planned.
It never imports docker. :func:`archbench.run.schedule.execute` carries the plans out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from archbench.analysis import cpu_model
from archbench.archive import ArchivedImage
from archbench.errors import MatrixError
from archbench.inputs import describe_problems, problem
from archbench.matrix import (
    DEBIAN_GNUNET,
    LOCAL_HOST,
    Base,
    GnunetSource,
    Host,
    Matrix,
    Target,
    apply_emulated_defaults,
)
from archbench.platforms import Arch, needs_emulation
from archbench.suites import BlindsigSuite, Suites


@dataclass(frozen=True)
class TargetPlan:
    """What will be done for one target, decided before anything runs."""

    target: Target
    base: Base
    packages: tuple[str, ...]
    emulated: bool
    suites: Suites
    """The suites to run (only enabled ones), command-line overrides applied."""
    cpuset: str | None = None
    """CPUs to pin the container to; from the target, overridden by ``--cpuset``."""
    cpus: float | None = None
    """CPU quota of the container (Docker's ``--cpus``); from the target, overridden by
    ``--cpus``; None: no quota."""
    repeat: int = 1
    """Independent container runs (fresh process each) of the harness."""
    host_name: str = LOCAL_HOST
    host: Host | None = None
    """The matrix host (None: the environment's engine)."""
    archived: ArchivedImage | None = None
    """``--from-archive``: run this loaded image; nothing is bootstrapped or built."""
    emulated_settings: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Suite -> setting -> value that ``emulated_defaults`` changed for this emulated target."""
    metrics: tuple[str, ...] = ("time",)
    """``time`` and/or ``instructions``: ``--metric``, else the matrix's ``metrics``, else
    time natively and both under emulation (:meth:`archbench.matrix.Matrix.metrics_for`)."""
    count_cpu: str = "max"
    """QEMU CPU model for instruction counts (target ``cpu`` or the arch's default)."""
    count_suites: Suites | None = None
    """Suites the counting stage runs (None: ``suites``). Counting always runs under
    QEMU, so for a native target these are ``suites`` with ``emulated_defaults``
    applied (keys the target or the command line set keep their values)."""
    gnunet: GnunetSource = DEBIAN_GNUNET
    """Where libgnunetutil comes from: ``--gnunet``, else the matrix's
    (:meth:`archbench.matrix.Matrix.gnunet`)."""
    taler: GnunetSource | None = None
    """The GNU Taler exchange source whose ``src/util`` the image builds: ``--taler``, else
    the matrix's (:meth:`archbench.matrix.Matrix.taler`); None: no exchange."""
    first_repeat: int = 1
    """``repeat_index`` of the first container run (an interleaved session's round)."""
    total_repeats: int | None = None
    """``repeat_count`` the results record when this plan is one round of several
    (None: ``repeat``)."""
    interleaved: str | None = None
    """The interleaved session (``invoke history``) the runs belong to, recorded in
    ``Execution.interleaved``; None: a run on its own."""

    @property
    def name(self) -> str:
        """The target's name."""
        return self.target.name

    @property
    def remote(self) -> bool:
        """True when the target runs on a host named in ``hosts``."""
        return self.host is not None


def check_overrides(overrides: Mapping[str, object]) -> None:
    """Check ``--iterations``/``--repetitions``/``--rsa-bits``/... as the matrix would.

    Raises:
        MatrixError: a value the blindsig suite refuses (e.g. ``--rsa-bits=-2048``),
            in our words.
    """
    if not overrides:
        return
    try:
        BlindsigSuite.model_validate(dict(overrides))
    except ValidationError as exc:
        names = {"rsa_bits": "--rsa-bits", "max_time": "--max-time"}
        problems = [
            f"--{names.get(str(e['loc'][0]), str(e['loc'][0])).lstrip('-')}: {problem(e)}"
            if e["loc"]
            else problem(e)
            for e in exc.errors()
        ]
        raise MatrixError("; ".join(problems)) from None


def plan(
    matrix: Matrix,
    targets: Sequence[Target],
    host_archs: Mapping[str, Arch],
    overrides: dict[str, object] | None = None,
    *,
    repeat: int = 1,
    cpuset: str | None = None,
    suites: Sequence[str] = (),
    metrics: Sequence[str] = (),
    cpus: float | None = None,
    gnunet: GnunetSource | None = None,
    taler: GnunetSource | None = None,
) -> list[TargetPlan]:
    """Plan ``targets`` given the native architecture of each host's engine.

    ``host_archs`` maps host names (``local`` and keys of ``hosts``) to what
    their engines report. On the local engine emulation is derived from the
    architectures (and can be forced); on a named host a target of another
    architecture must ask for emulation with ``emulate: true``: native means
    native, never a silent fall-back to QEMU. ``overrides`` replaces suite
    parameters for this invocation (``iterations``, ``repetitions``,
    ``rsa_bits``, ``warmup``, ``max_time``); ``repeat`` is the number of
    independent container runs per target; ``cpuset`` pins every container
    (else the target's own), ``cpus`` gives every container that CPU quota (else the
    target's own); ``suites`` runs only these suites (``--suite``),
    with the target's settings for them or the suite's defaults; ``metrics``
    (``--metric``) replaces the matrix's ``metrics`` (without either, emulated targets
    also count instructions); ``gnunet`` (``--gnunet``)
    replaces every target's GNUnet source, ``taler`` (``--taler``) every target's
    exchange source.

    Raises:
        MatrixError: a target cannot run natively where it is placed, a target
            has no suite, an override is invalid, or ``repeat`` < 1.
    """
    if repeat < 1:
        raise MatrixError(f"--repeat must be at least 1, got {repeat}")
    plans = []
    for t in targets:
        host = matrix.host(t.host)
        emulated = _emulated(t, host_archs[t.host], host)
        source = gnunet if gnunet is not None else matrix.gnunet(t)
        exchange = taler if taler is not None else matrix.taler(t)
        chosen, adjusted = _chosen_suites(matrix, t, emulated, suites, overrides)
        measured = tuple(metrics) or matrix.metrics_for(emulated)
        count_suites = None
        if not emulated and "instructions" in measured:
            keep = dict(matrix.explicit_suite_keys(t.name))
            keep["blindsig"] = keep.get("blindsig", frozenset()) | frozenset(overrides or {})
            count_suites, _ = apply_emulated_defaults(chosen, matrix.emulated_defaults, keep)
        plans.append(
            TargetPlan(
                target=t,
                base=matrix.bases[t.base],
                packages=matrix.profiles[t.profile].packages,
                emulated=emulated,
                suites=chosen,
                cpuset=cpuset or t.cpuset,
                cpus=cpus if cpus is not None else t.cpus,
                repeat=repeat,
                host_name=t.host,
                host=host,
                emulated_settings=adjusted,
                metrics=measured,
                count_cpu=cpu_model(t.arch, t.cpu),
                count_suites=count_suites,
                gnunet=source,
                taler=exchange,
            )
        )
    return plans


def _emulated(t: Target, engine_arch: Arch, host: Host | None) -> bool:
    # On a named host a target of another architecture must ask for emulation:
    # native means native, never a silent fall-back to QEMU.
    if host is not None and t.arch is not engine_arch and t.emulate is not True:
        raise MatrixError(
            f"target {t.name}: host {t.host} runs {engine_arch.key}, not {t.arch.key}, so "
            f"{t.name} cannot run natively there. Move it to a {t.arch.key} host, or add "
            "'emulate: true' to measure it under QEMU on that host (labelled emulated)"
        )
    try:
        return needs_emulation(t.arch, engine_arch, t.emulate)
    except ValueError as exc:
        raise MatrixError(f"target {t.name}: {exc}") from exc


def _chosen_suites(
    matrix: Matrix,
    t: Target,
    emulated: bool,
    suites: Sequence[str],
    overrides: dict[str, object] | None,
) -> tuple[Suites, dict[str, dict[str, object]]]:
    # The target's suites for this run (``--suite``, emulated defaults, the blindsig
    # overrides) and the settings the emulated defaults changed.
    chosen = t.suites.only(suites) if suites else t.suites
    adjusted: dict[str, dict[str, object]] = {}
    if emulated:
        chosen, adjusted = apply_emulated_defaults(
            chosen, matrix.emulated_defaults, matrix.explicit_suite_keys(t.name)
        )
    enabled = chosen.enabled()
    if not enabled:
        raise MatrixError(
            f"target {t.name}: no suite enabled; add 'suites: {{blindsig: {{}}}}' or pass --suite"
        )
    blindsig = enabled.get("blindsig")
    if overrides and isinstance(blindsig, BlindsigSuite):
        try:
            blindsig = BlindsigSuite.model_validate({**blindsig.model_dump(), **overrides})
        except ValidationError as exc:
            raise MatrixError(f"command-line override: {describe_problems(exc)}") from exc
    elif overrides:
        raise MatrixError(
            "--iterations, --repetitions, --rsa-bits, --warmup and --max-time set the "
            f"blindsig suite, which this run of {t.name} does not include; set the other "
            "suites' budgets in matrix.yml"
        )
    chosen = Suites.model_validate(
        {name: settings.model_dump() for name, settings in enabled.items()}
        | ({"blindsig": blindsig.model_dump()} if blindsig is not None else {})
    )
    return chosen, adjusted
