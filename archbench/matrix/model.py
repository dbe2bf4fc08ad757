"""The models of matrix.yml: hosts, bases, profiles, targets, the matrix.

A :class:`Matrix` checks what refers to what (a target's base, profile and
host) and that target names are unique. The suites' settings it holds are the
models of :mod:`archbench.suites`, filled from ``defaults:`` by
:mod:`archbench.matrix.defaults`; :mod:`archbench.matrix.loading` reads a file into
these models. Every model is frozen and refuses unknown keys
(:class:`~archbench.inputs.Strict`).

Hosts (``hosts:``) say where targets build and run and how to reach them;
:mod:`archbench.hosts.engine` connects. Pools (``pools:``) name several hosts at once:
a target whose ``host:`` names a pool runs on any of its members that answers and
runs its architecture (:mod:`archbench.run.planning` decides which may).

A CPU quota (``cpus: 0.5``, ``invoke bench --cpus 0.5``) is Docker's ``--cpus``,
given to the engine as ``NanoCpus`` (the docker SDK's ``nano_cpus``): the
container's cgroup may use ``cpus`` CPU-seconds per second of wall time,
enforced by the CFS bandwidth controller (cgroup v2 ``cpu.max`` reads
``<cpus × 100000> 100000``). It is what the A/B test of issue 12 halves: the
same image under half the quota must come out slower on every row that allows
a verdict (``benchmarks/compare_aa_ab.py``). Every value is checked here
(:func:`check_cpus`) before it reaches the engine.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from archbench.errors import MatrixError
from archbench.inputs import (
    BaseName,
    ImageRef,
    MirrorUrl,
    Name,
    PackageSpec,
    Strict,
    SuiteName,
    TargetName,
    did_you_mean,
    quote,
)
from archbench.matrix.defaults import check_emulated_defaults
from archbench.matrix.gnunet import DEBIAN_GNUNET, GnunetSource, GnunetSpec, TalerSpec
from archbench.matrix.limits import RowLimit, parse_row_limit
from archbench.platforms import Arch
from archbench.suites import DEFAULT_SUITES, Suites

# ---------------------------------------------------------------- CPU quota

MIN_CPUS: Final = 0.01
"""Docker's smallest quota (``NanoCpus`` 10^7)."""
MAX_CPUS: Final = 1024.0
"""More than any engine here has; the engine's own CPU count is checked at run time."""
NANO: Final = 1_000_000_000


def check_cpus(where: str, value: object) -> float:
    """``value`` (text, int or float) as a CPU quota from :data:`MIN_CPUS` to :data:`MAX_CPUS`.

    Args:
        where: the flag or matrix key, for the message (``--cpus``, ``targets[0].cpus``).

    Raises:
        MatrixError: a bool, not a number, not finite, or out of range.
    """
    if isinstance(value, bool):
        raise MatrixError(f"{where}: expected a number of CPUs such as 0.5, got {quote(value)}")
    try:
        cpus = float(value) if isinstance(value, int | float) else float(str(value).strip())
    except (ValueError, OverflowError):
        cpus = math.nan
    if not math.isfinite(cpus):
        raise MatrixError(
            f"{where}: {quote(str(value))} is not a number of CPUs; give one such as 0.5 or 1"
        )
    if not MIN_CPUS <= cpus <= MAX_CPUS:
        raise MatrixError(
            f"{where}: {cpus:g} CPUs is out of range; give {MIN_CPUS:g} to {MAX_CPUS:g} "
            "(Docker's --cpus)"
        )
    return cpus


def parse_cpus(flag: str, value: object | None) -> float | None:
    """The ``--cpus`` flag: None when absent, else :func:`check_cpus`.

    Raises:
        MatrixError: see :func:`check_cpus`.
    """
    return None if value is None else check_cpus(flag, value)


def nano_cpus(cpus: float) -> int:
    """Docker's ``NanoCpus`` for a quota of ``cpus`` CPUs (10^9 per CPU, rounded)."""
    return round(cpus * NANO)


def check_cpus_fit(cpus: float, ncpu: int, where: str) -> None:
    """Refuse a quota above the engine's CPU count (``ncpu``: Docker's NCPU; <= 0 unknown).

    The engine refuses it too, but only when the container is created, after building.

    Raises:
        MatrixError: ``cpus`` > ``ncpu``.
    """
    if ncpu > 0 and cpus > ncpu:
        raise MatrixError(
            f"{where}: a quota of {cpus:g} CPUs is more than the engine's {ncpu} CPU(s); "
            f"give at most {ncpu}"
        )


# ---------------------------------------------------------------- hosts


class Tls(Strict):
    """TLS client settings for a ``tcp://`` Docker host (paths to PEM files)."""

    ca_cert: StrictStr | None = None
    client_cert: StrictStr | None = None
    client_key: StrictStr | None = None
    verify: StrictBool = True

    @model_validator(mode="after")
    def _pair(self) -> Tls:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("'client_cert' and 'client_key' go together")
        for key in ("ca_cert", "client_cert", "client_key"):
            path = getattr(self, key)
            if path is not None and not Path(path).expanduser().is_file():
                raise ValueError(f"{key}: no such file {quote(path)}")
        return self


class Host(Strict):
    """A Docker engine that targets can build and run on.

    Exactly one of ``url`` (``unix://…``, ``tcp://host:port``, ``ssh://user@host``)
    and ``context`` (a ``docker context`` name) is given. ``max_parallel_runs``
    is how many benchmark containers may run on it at once (1: runs never
    overlap, since two benchmarks on one CPU corrupt each other's numbers).
    ``build_network`` is the network image builds use (``host`` for engines
    started without a bridge). Credentials never go into URLs: use ssh keys
    or TLS certificates.
    """

    url: StrictStr | None = None
    context: StrictStr | None = None
    tls: Tls | None = None
    max_parallel_runs: StrictInt = Field(default=1, ge=1, le=64)
    build_network: StrictStr | None = None

    @model_validator(mode="after")
    def _endpoint(self) -> Host:
        if (self.url is None) == (self.context is None):
            raise ValueError("give exactly one of 'url' and 'context'")
        if self.url is not None:
            scheme, sep, rest = self.url.partition("://")
            if not sep or scheme not in ("unix", "tcp", "ssh"):
                raise ValueError(
                    f"url {quote(self.url)}: use unix://PATH, tcp://HOST:PORT or ssh://USER@HOST"
                )
            userinfo = rest.split("/", 1)[0].rpartition("@")[0]
            if ":" in userinfo:
                raise ValueError(
                    "url: a password must not be written into matrix.yml (it would end up "
                    "in logs); use an ssh key (ssh-agent) or TLS certificates"
                )
            if scheme == "tcp" and ":" not in rest:
                raise ValueError(
                    f"url {quote(self.url)}: tcp:// needs a port (2375, or 2376 with TLS)"
                )
        if self.tls is not None and not (self.url or "").startswith("tcp://"):
            raise ValueError("'tls' applies to tcp:// hosts only")
        return self

    @property
    def display(self) -> str:
        """The endpoint without user names, safe for logs and results files."""
        if self.context is not None:
            return f"context {self.context}"
        assert self.url is not None
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"


RUNNER_LABEL: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
"""A GitHub Actions runner label (``ubuntu-24.04-riscv``, ``self-hosted``): it goes into
the workflow's ``runs-on`` through ``invoke ci-matrix``, so never an expression."""
RunnerLabel = Annotated[StrictStr, Field(pattern=RUNNER_LABEL)]

LOCAL_HOST = "local"
"""Name of the implicit host: the engine of the environment (``DOCKER_HOST`` or the socket)."""


# ---------------------------------------------------------------- bases, profiles, targets


class Base(Strict):
    """Where a target's root file system comes from.

    ``bootstrap``: debootstrap ``suite`` for the target architecture from
    ``mirror`` (debootstrap's own default when None), then an image built
    ``FROM scratch``. ``pull``: the registry ``image`` for the platform.
    """

    source: Literal["bootstrap", "pull"]
    suite: SuiteName | None = None
    variant: Literal["minbase", "buildd"] = "minbase"
    mirror: MirrorUrl | None = None
    image: ImageRef | None = None

    @model_validator(mode="after")
    def _source_fields(self) -> Base:
        if self.source == "bootstrap" and not self.suite:
            raise ValueError("a 'bootstrap' base needs 'suite' (e.g. trixie)")
        if self.source == "bootstrap" and self.image:
            raise ValueError("'image' belongs to 'pull' bases; a 'bootstrap' base takes 'suite'")
        if self.source == "pull" and not self.image:
            raise ValueError("a 'pull' base needs 'image' (e.g. ubuntu:24.04)")
        if self.source == "pull" and (self.suite or self.mirror):
            raise ValueError("'suite' and 'mirror' belong to 'bootstrap' bases")
        return self


RETIRED_RECIPE: Final = (
    "the taler-helper recipe is retired (it fetched upstream tarballs from URLs you gave, "
    "ran ./configure and a full make, and was never tested end to end); give the target "
    "a taler: source beside its gnunet: instead, e.g. taler: {tarball: "
    "../shared/taler/taler-exchange-0.14.0.tar.gz, sha256: HEX} with gnunet: {tarball: "
    "../shared/gnunet/gnunet-0.22.2.tar.gz, sha256: HEX} (docs/taler-recipe.md)"
)
"""The message for a matrix that still has a profile's ``recipe:``."""


class Profile(Strict):
    """A dependency profile: Debian packages installed into the image.

    ``gnunet``: where libgnunetutil comes from (:mod:`archbench.matrix.gnunet`); None:
    not said here (a target's own ``gnunet:`` wins, else the base's libgnunet-dev).
    The retired ``recipe:`` key is refused with :data:`RETIRED_RECIPE`.
    """

    description: StrictStr = ""
    packages: tuple[PackageSpec, ...] = Field(min_length=1)
    gnunet: GnunetSpec | None = None
    taler: TalerSpec | None = None
    """A GNU Taler exchange source whose ``src/util`` (the security modules and their
    benchmarks) the image builds against this profile's GNUnet (``docs/taler-recipe.md``)."""

    @model_validator(mode="before")
    @classmethod
    def _no_recipe(cls, data: Any) -> Any:
        if isinstance(data, dict) and "recipe" in data:
            raise ValueError(RETIRED_RECIPE)
        return data


class Target(Strict):
    """One row of the matrix: what to build and run on which architecture.

    ``emulate``: None derives it from the host (see
    :func:`archbench.platforms.needs_emulation`), True forces QEMU, False
    demands native execution.
    """

    name: TargetName
    arch: Arch
    base: BaseName
    profile: Name = "slim"
    emulate: StrictBool | None = None
    cpuset: StrictStr | None = Field(default=None, pattern=r"^[0-9]+([-,][0-9]+)*$")
    """CPUs the benchmark container is pinned to (Docker's cpuset, e.g. ``"1"`` or ``"0-1"``)."""
    cpus: float | None = None
    """CPU quota of the benchmark container (Docker's ``--cpus``, 0.01-1024), None: no quota
    (:func:`check_cpus`)."""
    host: Name = LOCAL_HOST
    """A key of ``hosts``, ``local`` for the engine of the environment, or a key of
    ``pools`` (any of its members)."""
    suites: Suites = DEFAULT_SUITES
    cpu: StrictStr | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
    """QEMU ``-cpu`` model for instruction counts (``--metric instructions``); None: the
    architecture's (:attr:`count_cpu`)."""
    gnunet: GnunetSpec | None = None
    """Where libgnunetutil comes from, over the profile's ``gnunet:``; None: the profile's
    (:meth:`Matrix.gnunet`)."""
    taler: TalerSpec | None = None
    """The exchange source, over the profile's ``taler:``; None: the profile's
    (:meth:`Matrix.taler`)."""
    symbol_files: StrictBool = False
    """Whether this target's counts name the internal functions of Debian's stripped
    libgcrypt, libsodium and libc from symbol files (:mod:`archbench.images.symbols`).
    Off by default: the first count of an architecture and Debian release then rebuilds
    libgcrypt and libsodium (measured under load: riscv64's libgcrypt cross-build 26 min,
    amd64's symbols image 42 min), once, cached for every later count."""
    runs_on: tuple[RunnerLabel, ...] | None = Field(default=None, min_length=1, max_length=10)
    """The GitHub Actions runner labels of this target's CI job (``invoke ci-matrix``), one
    label or a list (``[self-hosted, linux, riscv64]``), over its architecture's native
    runner (its record's ``runner``, :class:`archbench.platforms.ArchRecord`); with
    ``emulate: true``, an x86-64 runner's labels. None: the native runner, else an
    emulating x86-64 one."""

    @field_validator("runs_on", mode="before")
    @classmethod
    def _one_label(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("cpus", mode="before")
    @classmethod
    def _cpus(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            # A quoted "0.5" is a typo waiting to happen elsewhere: numbers only.
            raise ValueError(f"cpus must be a number such as 0.5, not the text {quote(value)}")
        try:
            return check_cpus("cpus", value)
        except MatrixError as exc:
            raise ValueError(str(exc).removeprefix("cpus: ")) from None

    @field_validator("arch", mode="before")
    @classmethod
    def _arch(cls, value: Any) -> Any:
        if isinstance(value, Arch):
            return value
        if not isinstance(value, str):
            raise ValueError(f"must be a string, one of: {', '.join(Arch.keys())}")
        try:
            return Arch.from_key(value)
        except ValueError:
            raise ValueError(
                f"unknown architecture {quote(value)}; allowed: {', '.join(Arch.keys())}"
                + did_you_mean(value, Arch.keys())
            ) from None

    @property
    def count_cpu(self) -> str:
        """The QEMU ``-cpu`` model this target's instructions are counted with: its ``cpu``,
        else its architecture's (:class:`archbench.platforms.ArchRecord`'s ``qemu_cpu``)."""
        return self.cpu or self.arch.value.qemu_cpu


class Matrix(Strict):
    """The whole matrix.yml."""

    version: Literal[1] = Field(description="matrix format version")
    defaults: Suites = DEFAULT_SUITES
    emulated_defaults: Suites | None = None
    """Settings for targets that run emulated, over ``defaults``, under a target's own keys
    (:mod:`archbench.matrix.defaults`)."""
    bases: dict[BaseName, Base] = Field(min_length=1)
    profiles: dict[Name, Profile] = Field(min_length=1)
    hosts: dict[Name, Host] = Field(default_factory=dict)
    pools: dict[Name, tuple[Name, ...]] = Field(default_factory=dict)
    """Host pools: a name a target's ``host:`` may give instead of one host, and its
    members (keys of ``hosts``, or ``local``). A pooled target runs on any member that
    answers and runs its architecture (``docs/hosts.md``, "Host pools")."""
    targets: tuple[Target, ...] = Field(min_length=1)
    _explicit: dict[str, dict[str, frozenset[str]]] = PrivateAttr(default_factory=dict)

    @field_validator("emulated_defaults")
    @classmethod
    def _adjusts_only(cls, value: Suites | None) -> Suites | None:
        if value is not None:
            check_emulated_defaults(value)
        return value

    def explicit_suite_keys(self, target: str) -> dict[str, frozenset[str]]:
        """Suite name -> keys ``target`` wrote under its own ``suites:`` (set by :func:`parse`)."""
        return self._explicit.get(target, {})

    limits: dict[str, Any] = Field(default_factory=dict)
    """The gate's limit per operation or row (``signing: 1.02``, ``RSA-4096 key
    generation: 1.5``), besides ``--fail-above``
    (:func:`archbench.matrix.limits.parse_row_limit`)."""

    @field_validator("limits")
    @classmethod
    def _limits(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name, ratio in value.items():
            parse_row_limit(name, ratio)  # raises ValueError with the key and what is allowed
        return value

    @property
    def row_limits(self) -> tuple[RowLimit, ...]:
        """``limits:`` parsed (validated when the matrix was)."""
        return tuple(parse_row_limit(name, ratio) for name, ratio in self.limits.items())

    metrics: tuple[Literal["time", "instructions"], ...] | None = Field(default=None, min_length=1)
    """What ``invoke bench`` measures unless ``--metric`` says otherwise; None (the key
    absent): :meth:`metrics_for` decides per target."""

    def metrics_for(self, emulated: bool) -> tuple[str, ...]:
        """What a target measures when neither ``--metric`` nor ``metrics:`` says.

        ``metrics:`` when the matrix sets it; else time natively and
        ``time, instructions`` under emulation, where wall-clock times measure QEMU on
        the host and the exact count is the figure that speaks for the target's CPU
        (``docs/counting.md``).
        """
        if self.metrics is not None:
            return self.metrics
        return ("time", "instructions") if emulated else ("time",)

    @model_validator(mode="after")
    def _references(self) -> Matrix:
        self._check_pools()
        seen: set[str] = set()
        for i, t in enumerate(self.targets):
            where = f"targets[{i}] ({t.name})"
            if t.name in seen:
                raise ValueError(f"{where}.name: duplicate target name {quote(t.name)}")
            seen.add(t.name)
            if t.base not in self.bases:
                raise ValueError(
                    f"{where}.base: unknown base {quote(t.base)}; defined in 'bases': "
                    f"{', '.join(self.bases)}" + did_you_mean(t.base, self.bases)
                )
            if t.host != LOCAL_HOST and t.host not in self.hosts and t.host not in self.pools:
                known = [LOCAL_HOST, *self.hosts]
                pools = f", in 'pools': {', '.join(self.pools)}" if self.pools else ""
                raise ValueError(
                    f"{where}.host: unknown host {quote(t.host)}; defined in 'hosts': "
                    f"{', '.join(known)}{pools}" + did_you_mean(t.host, [*known, *self.pools])
                )
            if t.profile not in self.profiles:
                raise ValueError(
                    f"{where}.profile: unknown profile {quote(t.profile)}; defined in 'profiles': "
                    f"{', '.join(self.profiles)}" + did_you_mean(t.profile, self.profiles)
                )
        if LOCAL_HOST in self.hosts:
            raise ValueError(f"hosts.{LOCAL_HOST}: the name is reserved for the default engine")
        return self

    def _check_pools(self) -> None:
        # A pool is a name of its own for one or more distinct, defined hosts.
        known = [LOCAL_HOST, *self.hosts]
        for name, members in self.pools.items():
            if name in known:
                raise ValueError(
                    f"pools.{name}: {quote(name)} is already a host's name; a target's "
                    "'host:' could not tell them apart, so give the pool another name"
                )
            if not members:
                raise ValueError(f"pools.{name}: a pool needs at least one host, e.g. [{name}-a]")
            for i, member in enumerate(members):
                if member not in known:
                    raise ValueError(
                        f"pools.{name}[{i}]: unknown host {quote(member)}; defined in "
                        f"'hosts': {', '.join(known)}" + did_you_mean(member, known)
                    )
                if member in members[:i]:
                    raise ValueError(f"pools.{name}[{i}]: host {quote(member)} is listed twice")

    def gnunet(self, target: Target) -> GnunetSource:
        """Where ``target``'s libgnunetutil comes from: its own ``gnunet:``, else its
        profile's, else :data:`~archbench.matrix.gnunet.DEBIAN_GNUNET` (the base's
        libgnunet-dev)."""
        if target.gnunet is not None:
            return target.gnunet
        profile = self.profiles.get(target.profile)
        if profile is not None and profile.gnunet is not None:
            return profile.gnunet
        return DEBIAN_GNUNET

    def taler(self, target: Target) -> GnunetSource | None:
        """The exchange source ``target`` builds (its own ``taler:``, else its profile's),
        or None: the image has no exchange."""
        if target.taler is not None:
            return target.taler
        profile = self.profiles.get(target.profile)
        return profile.taler if profile is not None else None

    def host(self, name: str) -> Host | None:
        """The host ``name`` (a key of ``hosts``); None for ``local`` (the environment's
        engine). A pool's name is no host: :meth:`members` gives its hosts."""
        return None if name == LOCAL_HOST else self.hosts[name]

    def members(self, name: str) -> tuple[str, ...]:
        """The hosts a target's ``host:`` value names: a pool's members in its order, or
        the one host (``local`` or a key of ``hosts``)."""
        return self.pools.get(name, (name,))

    def select(self, names: Sequence[str] = (), archs: Sequence[Arch] = ()) -> list[Target]:
        """Targets matching any of ``names`` and any of ``archs`` (all when empty).

        Raises:
            MatrixError: a name matches no target, or no target has the arch.
        """
        known = [t.name for t in self.targets]
        for n in names:
            if n not in known:
                raise MatrixError(
                    f"no target named {quote(n)}; targets: {', '.join(known)}"
                    + did_you_mean(n[:100], known)
                )
        chosen = [
            t
            for t in self.targets
            if (not names or t.name in names) and (not archs or t.arch in archs)
        ]
        if not chosen:
            have = sorted({t.arch.key for t in self.targets})
            raise MatrixError(
                f"no target for architecture {', '.join(a.key for a in archs)}; "
                f"the matrix has: {', '.join(have)}"
            )
        return chosen
