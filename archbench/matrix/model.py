"""The models of matrix.yml: bases, profiles and their recipes, targets, and the matrix itself.

The suites' settings are in :mod:`archbench.suites`, the hosts in
:mod:`archbench.matrix.hosts`; :mod:`archbench.matrix.load` reads a file into
these models. A :class:`Matrix` checks what refers to what (a target's base,
profile and host) and that target names are unique.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    StrictBool,
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
    UpstreamVersion,
    check_tarball_url,
    did_you_mean,
    quote,
)
from archbench.matrix.emulated import check as check_emulated_defaults
from archbench.matrix.hosts import LOCAL_HOST, Host
from archbench.matrix.quota import check_cpus
from archbench.platforms import Arch
from archbench.suites import DEFAULT_SUITES, Suites


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


class Source(Strict):
    """A pinned upstream release tarball: its version, where to fetch it, its sha256."""

    version: UpstreamVersion
    url: StrictStr
    sha256: StrictStr

    @model_validator(mode="after")
    def _pinned(self) -> Source:
        if not self.url.startswith(("https://", "http://")):
            raise ValueError(
                f"url {quote(self.url)}: give the http(s):// URL of the release "
                f"tarball of version {self.version} that the engine's image builds can reach "
                "(archbench names no download host; a local mirror works)"
            )
        check_tarball_url(self.url)
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(
                f"sha256 {quote(self.sha256)}: pin the tarball with its 64-digit lowercase sha256"
            )
        return self


class Recipe(Strict):
    """Build steps beyond packages; ``taler-helper`` builds GNUnet and taler-exchange.

    Untested on archbench's own machines, which cannot reach the upstream
    sources (``docs/taler-recipe.md``). The image build fails with a message
    naming the URL when a tarball cannot be fetched or its sha256 differs.
    """

    name: Literal["taler-helper"]
    gnunet: Source
    exchange: Source


class Profile(Strict):
    """A dependency profile: Debian packages installed into the image, then an optional recipe."""

    description: StrictStr = ""
    packages: tuple[PackageSpec, ...] = Field(min_length=1)
    recipe: Recipe | None = None


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
    (:mod:`archbench.matrix.quota`)."""
    host: Name = LOCAL_HOST
    """A key of ``hosts``, or ``local`` for the engine of the environment."""
    suites: Suites = DEFAULT_SUITES
    cpu: StrictStr | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
    """QEMU ``-cpu`` model for instruction counts (``--metric instructions``); None:
    :data:`archbench.analysis.counting.DEFAULT_CPU` for the architecture."""

    @field_validator("cpus", mode="before")
    @classmethod
    def _cpus(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            # A quoted "0.5" is a typo waiting to happen elsewhere: numbers only.
            raise ValueError(f"cpus must be a number such as 0.5, not the text {value!r}")
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
                f"unknown architecture {value!r}; allowed: {', '.join(Arch.keys())}"
                + did_you_mean(value, Arch.keys())
            ) from None


class Matrix(Strict):
    """The whole matrix.yml."""

    version: Literal[1] = Field(description="matrix format version")
    defaults: Suites = DEFAULT_SUITES
    emulated_defaults: Suites | None = None
    """Settings for targets that run emulated, over ``defaults``, under a target's own keys
    (:mod:`archbench.matrix.emulated`)."""
    bases: dict[BaseName, Base] = Field(min_length=1)
    profiles: dict[Name, Profile] = Field(min_length=1)
    hosts: dict[Name, Host] = Field(default_factory=dict)
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

    metrics: tuple[Literal["time", "instructions"], ...] = Field(default=("time",), min_length=1)
    """What ``invoke bench`` measures unless ``--metric`` says otherwise."""

    @model_validator(mode="after")
    def _references(self) -> Matrix:
        seen: set[str] = set()
        for i, t in enumerate(self.targets):
            where = f"targets[{i}] ({t.name})"
            if t.name in seen:
                raise ValueError(f"{where}.name: duplicate target name {t.name!r}")
            seen.add(t.name)
            if t.base not in self.bases:
                raise ValueError(
                    f"{where}.base: unknown base {t.base!r}; defined in 'bases': "
                    f"{', '.join(self.bases)}" + did_you_mean(t.base, self.bases)
                )
            if t.host != LOCAL_HOST and t.host not in self.hosts:
                known = [LOCAL_HOST, *self.hosts]
                raise ValueError(
                    f"{where}.host: unknown host {t.host!r}; defined in 'hosts': "
                    f"{', '.join(known)}" + did_you_mean(t.host, known)
                )
            if t.profile not in self.profiles:
                raise ValueError(
                    f"{where}.profile: unknown profile {t.profile!r}; defined in 'profiles': "
                    f"{', '.join(self.profiles)}" + did_you_mean(t.profile, self.profiles)
                )
        if LOCAL_HOST in self.hosts:
            raise ValueError(f"hosts.{LOCAL_HOST}: the name is reserved for the default engine")
        return self

    def host(self, name: str) -> Host | None:
        """The host a target names; None for ``local`` (the environment's engine)."""
        return None if name == LOCAL_HOST else self.hosts[name]

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
