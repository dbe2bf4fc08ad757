"""Plan a run: which targets run where, natively or emulated, with which suites.

:func:`plan` is pure: it turns the selected matrix targets into a list of
:class:`TargetPlan` (host, native or emulated, base, packages) from the
architectures the hosts' engines report, so it can be printed and tested.
A target whose ``host:`` names a pool gets the members it may run on
(:class:`Pool`); :func:`archbench.run.schedule.execute` places it on one of them
when a member is free, and moves it to another when its member stops answering.
:func:`pin` places every pooled target on one member for good instead, for a
session whose runs are compared with each other.
:func:`check_overrides` checks the blindsig settings a run overrides (flags or
a resumed run's ``run.json``) before anything is planned.
It never imports docker. :func:`archbench.run.schedule.execute` carries the plans out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from archbench.archive import ArchivedImage
from archbench.errors import EngineError, MatrixError
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
class Pool:
    """The host pool a target names, as planned: the members it may run on.

    ``members``: (host name, matrix host; None for ``local``) of every member whose
    engine answered and runs the target's architecture (or, with ``emulate: true``,
    any member), in the pool's order. The target is native on every one of them or
    emulated on every one of them, never a mix.
    """

    name: str
    members: tuple[tuple[str, Host | None], ...]


@dataclass(frozen=True)
class TargetPlan:
    """What will be done for one target, decided before anything runs.

    A pooled target (``pool``) is planned on its pool's first member (``host_name``,
    ``host``) until the scheduler places it (:meth:`on`).
    """

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
    """QEMU CPU model for instruction counts (:attr:`archbench.matrix.Target.count_cpu`)."""
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

    pool: Pool | None = None
    """The pool the target's ``host:`` names (None: that one host); the scheduler may run
    it on any member (:meth:`on`)."""

    @property
    def remote(self) -> bool:
        """True when the target runs on a host named in ``hosts``."""
        return self.host is not None

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts the target may run on: its pool's members, else its one host."""
        return tuple(n for n, _ in self.pool.members) if self.pool else (self.host_name,)

    def host_of(self, name: str) -> Host | None:
        """The matrix host of ``name``, one of :attr:`hosts` (None: ``local``)."""
        if self.pool is None:
            return self.host
        return dict(self.pool.members)[name]

    def on(self, name: str) -> TargetPlan:
        """This plan placed on host ``name`` of :attr:`hosts` (its pool is kept)."""
        if name == self.host_name:
            return self
        return dataclasses.replace(self, host_name=name, host=self.host_of(name))


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
    native, never a silent fall-back to QEMU. A target naming a pool gets the
    members in ``host_archs`` (those that answered) that run its architecture, or
    with ``emulate: true`` every one, emulated (:class:`Pool`); it is planned on the
    first of them until the scheduler places it. ``overrides`` replaces suite
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
        MatrixError: a target cannot run natively where it is placed (no answering
            member of its pool runs its architecture), a target has no suite, an
            override is invalid, or ``repeat`` < 1.
        EngineError: no member of a target's pool that answered fits it, and some
            did not answer.
    """
    if repeat < 1:
        raise MatrixError(f"--repeat must be at least 1, got {repeat}")
    plans = []
    for t in targets:
        pool = _pool(matrix, t, host_archs) if t.host in matrix.pools else None
        if pool is not None:
            (host_name, host), emulated = pool.members[0], t.emulate is True
        else:
            host_name, host = t.host, matrix.host(t.host)
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
                host_name=host_name,
                host=host,
                pool=pool,
                emulated_settings=adjusted,
                metrics=measured,
                count_cpu=t.count_cpu,
                count_suites=count_suites,
                gnunet=source,
                taler=exchange,
            )
        )
    return plans


def _pool(matrix: Matrix, t: Target, host_archs: Mapping[str, Arch]) -> Pool:
    # In a pool, native means native on every member: without 'emulate: true' a target
    # goes to the members of its own architecture only (the local one included, which
    # on its own would emulate another architecture); with it, to every member, under
    # QEMU. Members absent from host_archs did not answer.
    names = matrix.pools[t.host]
    fits = [
        (n, matrix.host(n))
        for n in names
        if n in host_archs and (t.emulate is True or host_archs[n] is t.arch)
    ]
    if fits:
        return Pool(t.host, tuple(fits))
    seen = "; ".join(
        f"{n}: {host_archs[n].key}" if n in host_archs else f"{n}: did not answer" for n in names
    )
    problem = f"target {t.name}: no member of pool {t.host} that answers runs {t.arch.key} ({seen})"
    if all(n in host_archs for n in names):
        raise MatrixError(
            f"{problem}. Add a {t.arch.key} host to the pool, or 'emulate: true' to the "
            "target to measure it under QEMU on the pool's members (labelled emulated)"
        )
    raise EngineError(f"{problem}. Bring a member back, or run the target elsewhere")


def pin(plans: Sequence[TargetPlan]) -> list[TargetPlan]:
    """``plans`` with every pooled target placed on one member for good (no pool left).

    For sessions whose runs are compared with each other (``invoke history``'s rounds,
    ``invoke bisect --metric time``): a target's times must come from one machine, so
    it may not move between members from one run to the next. Each pooled target goes
    to the member of its pool with the fewest targets pinned so far, ties to the
    earlier member: the same targets and members give the same placement every time,
    so each of a session's runs places them alike. A member lost during the session
    ends its targets as any lost host does (``--resume``).
    """
    load: dict[str, int] = {}
    pinned = []
    for p in plans:
        if p.pool is None:
            pinned.append(p)
            continue
        order = p.hosts
        best = min(order, key=lambda n: (load.get(n, 0), order.index(n)))
        load[best] = load.get(best, 0) + 1
        pinned.append(dataclasses.replace(p.on(best), pool=None))
    return pinned


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
