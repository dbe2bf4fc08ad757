"""matrix.yml: the hardware matrix, parsed once and strictly into frozen models.

Loading rejects, before anything is built: unknown keys (with "did you
mean …?"), wrong types, unknown architectures, bases or profiles, and
duplicate target names or YAML keys. Every message names the file and the
key path (``targets[1] (riscv64-trixie).arch``) and the allowed values.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from archbench import cpu_quota, grammar, messages, safe_load
from archbench import emulated_defaults as emulated_layer
from archbench.errors import MatrixError
from archbench.platforms import Arch

MATRIX_VERSION = 1
MAX_MATRIX_BYTES: Final = 256 * 1024

# Strings that reach a root shell, debootstrap's argv, a Dockerfile or a file
# name, each checked against its grammar (archbench.grammar).
PackageSpec = Annotated[StrictStr, AfterValidator(grammar.check_package)]
Name = Annotated[StrictStr, AfterValidator(grammar.check_name)]
BaseName = Annotated[StrictStr, AfterValidator(grammar.check_base_name)]
TargetName = Annotated[StrictStr, AfterValidator(grammar.check_target_name)]
SuiteName = Annotated[StrictStr, AfterValidator(grammar.check_suite)]
MirrorUrl = Annotated[StrictStr, AfterValidator(grammar.check_mirror)]
ImageRef = Annotated[StrictStr, AfterValidator(grammar.check_image)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _lists_to_tuples(cls, value: Any) -> Any:
        # YAML gives lists; the frozen models hold tuples.
        return _tuple(value)


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class _Suite(_Strict):
    """Common to every suite: ``enabled: false`` keeps its settings without running it."""

    enabled: StrictBool = True


class BlindsigSuite(_Suite):
    """Parameters of the CS/RSA blind-signature suite (the thesis appendix).

    ``iterations`` is the number of operations per timed block (the thesis's
    "10x"), ``repetitions`` the number of timed blocks per row.
    """

    iterations: StrictInt = Field(default=10, ge=1, le=100_000)
    repetitions: StrictInt = Field(default=3, ge=1, le=10_000)
    rsa_bits: tuple[StrictInt, ...] = Field(default=(1024, 2048, 3072, 4096), min_length=0)
    schemes: tuple[Literal["cs", "rsa"], ...] = ("cs", "rsa")
    warmup: StrictInt = Field(default=1, ge=0, le=1000)
    """Repetitions run and discarded before the timed ones."""
    max_time: float | None = Field(default=None, gt=0, strict=True)
    """Budget in s per scheme and key size; repetitions stop once it is spent (>= 1 taken)."""
    min_block_ns: StrictInt | None = Field(default=None, ge=1)
    """Calibration floor for one timed block in ns (harness default: max(100 ticks, 1 ms))."""
    ci_target: float | None = Field(default=None, gt=0, lt=1)
    """Adaptive repetitions: stop a scheme/size once the 95 % interval of each row's
    median is within this fraction of it (0.02 = ±2 %); None: exactly ``repetitions``."""
    max_repetitions: StrictInt = Field(default=100, ge=1, le=10_000)
    """With ``ci_target``: the most timed repetitions per scheme/size (``max_time`` too)."""
    min_repetitions: StrictInt = Field(default=6, ge=1, le=10_000)
    """With ``ci_target``: repetitions before it may stop (6: fewest with a 95 % interval)."""
    order: Literal["interleaved", "sequential"] = "interleaved"
    """Schemes/sizes take turns, one repetition each, shuffled per round; or one after another."""
    seed: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)
    """Seed of the interleaved order (default: from the clock; recorded in the results)."""
    fresh_items: StrictBool = False
    """True: every operation of a block on its own freshly prepared item. False (default):
    one call after another on the same item, as GNUnet's ``perf_crypto_*`` programs time
    it (``harness/CONTRACT.md``, *What a block times*)."""

    @field_validator("rsa_bits")
    @classmethod
    def _sane_bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return _rsa_sizes(value)

    @model_validator(mode="after")
    def _repetition_bounds(self) -> BlindsigSuite:
        if self.ci_target is not None and self.max_repetitions < self.min_repetitions:
            raise ValueError(
                f"max_repetitions ({self.max_repetitions}) is below min_repetitions"
                f" ({self.min_repetitions}); with ci_target, give at least"
                f" {self.min_repetitions} (a 95 % interval needs 6 samples)"
            )
        return self


def _rsa_sizes(value: tuple[int, ...]) -> tuple[int, ...]:
    for bits in value:
        if bits < 1024 or bits > 16384 or bits % 8:
            raise ValueError(
                f"RSA key size {bits} is not allowed; use a multiple of 8 from 1024 to 16384"
            )
    return tuple(sorted(set(value)))


OPENSSL_ALGORITHMS: Final = (
    "rsa1024",
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "rsa7680",
    "rsa15360",
    "ecdsap256",
    "ecdsap384",
    "ecdsap521",
    "ecdsabrp256r1",
    "ecdsabrp384r1",
    "ecdsabrp512r1",
    "ecdhp256",
    "ecdhp384",
    "ecdhp521",
    "ecdhbrp256r1",
    "ecdhbrp384r1",
    "ecdhbrp512r1",
    "ecdhx25519",
    "ecdhx448",
    "ed25519",
    "ed448",
    "aes-128-gcm",
    "aes-256-gcm",
    "sha256",
)
"""``openssl speed`` algorithm names the openssl-speed suite accepts (the harness's list;
``aes-*-gcm`` and ``sha256`` run as ``-evp``, one process each)."""


class OpensslSpeedSuite(_Suite):
    """``openssl speed -mr`` in the container (the openssl and tinc seeds).

    ``seconds`` per algorithm (``-seconds``), ``multi``: process counts, 1 is
    the single-process figure, N > 1 adds ``-multi N`` (aggregate ops/s);
    ``repeat``: whole runs, one sample each.
    """

    algorithms: tuple[StrictStr, ...] = Field(
        default=(
            "rsa2048",
            "rsa4096",
            "ecdsap256",
            "ecdsap521",
            "ecdsabrp256r1",
            "ecdsabrp512r1",
            "ecdhp256",
            "ecdhbrp256r1",
            "ed25519",
            "ecdhx25519",
            "aes-128-gcm",
            "sha256",
        ),
        min_length=1,
    )
    evp_sizes: tuple[StrictInt, ...] = Field(default=(16, 64, 256, 1024, 8192, 16384), min_length=1)
    """Buffer sizes in bytes of the ``-evp`` algorithms (one process each)."""
    seconds: StrictInt = Field(default=3, ge=1, le=600)
    multi: tuple[StrictInt, ...] = Field(default=(1,), min_length=1)
    repeat: StrictInt = Field(default=1, ge=1, le=100)
    timeout_s: float = Field(default=300.0, gt=0)
    """Per openssl process; OpenSSL 3.5 runs ten RSA tests per ``rsaNNNN`` name."""

    @field_validator("algorithms")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in OPENSSL_ALGORITHMS:
                raise ValueError(
                    f"unknown algorithm {name!r}; allowed: {', '.join(OPENSSL_ALGORITHMS)}"
                    + did_you_mean(name, OPENSSL_ALGORITHMS)
                )
        return tuple(dict.fromkeys(value))

    @field_validator("multi")
    @classmethod
    def _processes(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(n < 1 or n > 256 for n in value):
            raise ValueError("process counts are from 1 to 256")
        return tuple(sorted(set(value)))


class RsaLargeSuite(_Suite):
    """RSA through libcrypto up to 16384 bits (the openssl-rsa-8192-16384 seed).

    ``max_time``: budget in s per key size for the signing/verifying blocks;
    key generation is timed apart (``keygen_repetitions`` keys per size,
    abandoned after ``keygen_max_time`` s: 16384-bit keys can take minutes,
    and a size whose key is not ready is reported invalid, not waited for).
    ``min_block_ns``: signing blocks double until one lasts this long (0: one
    operation per block).
    """

    bits: tuple[StrictInt, ...] = Field(default=(2048, 4096, 8192, 16384), min_length=1)
    repetitions: StrictInt = Field(default=3, ge=1, le=1000)
    max_time: float = Field(default=60.0, gt=0)
    keygen_repetitions: StrictInt = Field(default=1, ge=1, le=1000)
    keygen_max_time: float = Field(default=600.0, gt=0)
    min_block_ns: StrictInt | None = Field(default=None, ge=0, le=10_000_000_000)

    @field_validator("bits")
    @classmethod
    def _sane_bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return _rsa_sizes(value)


GNUPG_ALGORITHMS: Final = (
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "cv25519",
    "nistp256",
    "nistp384",
    "nistp521",
    "brainpoolP256r1",
    "brainpoolP384r1",
    "brainpoolP512r1",
)
"""Encryption subkey algorithms gpg 2.2 and 2.4 both generate in batch mode (harness list)."""


class GnupgSuite(_Suite):
    """GnuPG decryption timings in a throwaway GNUPGHOME (the gnupg-token seed).

    ``file_bytes`` of random data is encrypted to each algorithm's subkey and
    decrypted ``runs`` times after one discarded run; ``compress: true`` lets
    gpg compress as by default (the seed did). ``device``: where the private
    key lives; only ``cpu`` (soft keys) exists (``docs/suites-gnupg.md``).
    """

    algorithms: tuple[StrictStr, ...] = Field(
        default=("rsa2048", "rsa4096", "cv25519"), min_length=1
    )
    file_bytes: StrictInt = Field(default=1_048_576, ge=1, le=1 << 30)
    runs: StrictInt = Field(default=5, ge=1, le=10_000)
    compress: StrictBool = False
    timeout_s: float = Field(default=300.0, gt=0, le=86_400)
    device: Literal["cpu"] = "cpu"

    @field_validator("algorithms")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in GNUPG_ALGORITHMS:
                raise ValueError(
                    f"unknown algorithm {name!r}; allowed: {', '.join(GNUPG_ALGORITHMS)}"
                    + did_you_mean(name, GNUPG_ALGORITHMS)
                )
        if len(set(value)) != len(value):
            raise ValueError("an algorithm is listed twice")
        return value


class SodiumSuite(_Suite):
    """libsodium primitives timed one operation at a time (the pycryptopp seed).

    ``sizes``: message sizes in bytes of the per-byte rows (the seed's small,
    medium and large); ``nth``: which best sample is reported beside best,
    mean and worst (pycryptopp: 3rd); ``ops_per_sample``: calls per timed
    sample, 1 as pycryptopp, or ``auto`` to grow it past 100 clock ticks.
    """

    repetitions: StrictInt = Field(default=64, ge=1, le=100_000)
    warmup: StrictInt = Field(default=4, ge=0, le=10_000)
    sizes: tuple[StrictInt, ...] = Field(default=(1000, 10_000, 100_000), min_length=1)
    nth: StrictInt = Field(default=3, ge=1)
    ops_per_sample: StrictInt | Literal["auto"] = 1
    timeout_s: float = Field(default=900.0, gt=0)

    @model_validator(mode="after")
    def _nth(self) -> SodiumSuite:
        if self.nth > self.repetitions:
            raise ValueError(f"nth ({self.nth}) cannot exceed repetitions ({self.repetitions})")
        if any(size < 1 or size > 1 << 30 for size in self.sizes):
            raise ValueError("sizes are message sizes in bytes from 1 to 2^30")
        return self


class TalerHelperSuite(_Suite):
    """Taler's security-module benchmarks ``test_helper_rsa``/``test_helper_cs``.

    Needs a profile with the ``taler-helper`` recipe; their output is parsed by
    :mod:`archbench.importer` on the host (suite ``security-module``).
    ``rsa_bits``: the ``RSA_KEYSIZE`` of the test configuration as built
    (the log does not print it).
    """

    tests: tuple[Literal["test_helper_rsa", "test_helper_cs"], ...] = Field(
        default=("test_helper_rsa", "test_helper_cs"), min_length=1
    )
    rsa_bits: StrictInt = Field(default=2048, ge=1024, le=16384)
    timeout_s: float = Field(default=1800.0, gt=0)


class GnunetPerfSuite(_Suite):
    """GNUnet's own ``perf_crypto_rsa`` and ``perf_crypto_cs``, built from Debian's source.

    The image builds them from the ``gnunet`` source package of the installed
    libgnunetutil (``deb-src``), with archbench's minimal patch
    (``images/gnunet-perf/perf-crypto-0.20.patch``: the 0.20 ``cs_r_derive``
    seed argument, RSA key sizes from the command line); their output is
    parsed on the host by :mod:`archbench.importer` into rows of suite
    ``gnunet-perf``. ``runs``: whole program runs, one sample per row each;
    ``rsa_bits``: the sizes ``perf_crypto_rsa`` measures (its own default is
    all four); ``programs``: which of the two to run.
    """

    programs: tuple[Literal["perf_crypto_rsa", "perf_crypto_cs"], ...] = Field(
        default=("perf_crypto_rsa", "perf_crypto_cs"), min_length=1
    )
    runs: StrictInt = Field(default=3, ge=1, le=1000)
    rsa_bits: tuple[StrictInt, ...] = Field(default=(1024, 2048, 3072, 4096), min_length=1)
    timeout_s: float = Field(default=1800.0, gt=0)

    @field_validator("rsa_bits")
    @classmethod
    def _bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 512 <= b <= 16384 for b in value):
            raise ValueError("RSA key sizes are whole numbers of bits from 512 to 16384")
        if len(set(value)) != len(value):
            raise ValueError("a key size is listed twice")
        return value


SUITE_NAMES: Final = (
    "blindsig",
    "openssl-speed",
    "rsa-large",
    "gnupg",
    "sodium",
    "taler-helper",
    "gnunet-perf",
)
"""Suite names as matrix.yml, ``--suite`` and result rows write them."""


class Suites(_Strict):
    """The suites a target runs: those present and enabled."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    blindsig: BlindsigSuite | None = None
    openssl_speed: OpensslSpeedSuite | None = Field(default=None, alias="openssl-speed")
    rsa_large: RsaLargeSuite | None = Field(default=None, alias="rsa-large")
    gnupg: GnupgSuite | None = None
    sodium: SodiumSuite | None = None
    taler_helper: TalerHelperSuite | None = Field(default=None, alias="taler-helper")
    gnunet_perf: GnunetPerfSuite | None = Field(default=None, alias="gnunet-perf")

    def get(self, name: str) -> _Suite | None:
        """The settings of suite ``name`` (a :data:`SUITE_NAMES` entry), None when absent."""
        value = getattr(self, name.replace("-", "_"))
        return value if isinstance(value, _Suite) else None

    def enabled(self) -> dict[str, _Suite]:
        """Suite name -> settings of the suites that run, in :data:`SUITE_NAMES` order."""
        found = {name: self.get(name) for name in SUITE_NAMES}
        return {name: s for name, s in found.items() if s is not None and s.enabled}

    def only(self, names: Sequence[str]) -> Suites:
        """These suites alone, enabled, with their settings here or their defaults.

        Raises:
            MatrixError: a name is not a suite.
        """
        for name in names:
            if name not in SUITE_NAMES:
                raise MatrixError(
                    f"--suite: unknown suite {safe_load.quote(name)}; suites: "
                    f"{', '.join(SUITE_NAMES)}" + did_you_mean(name[:100], SUITE_NAMES)
                )
        chosen: dict[str, Any] = {}
        for name in names:
            current = self.get(name)
            settings = current.model_dump() if current is not None else {}
            chosen[name] = {**settings, "enabled": True}
        return Suites.model_validate(chosen)


DEFAULT_SUITES: Final = Suites(blindsig=BlindsigSuite())


class Base(_Strict):
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


class Source(_Strict):
    """A pinned upstream release tarball: its version, where to fetch it, its sha256."""

    version: Annotated[StrictStr, AfterValidator(grammar.check_upstream_version)]
    url: StrictStr
    sha256: StrictStr

    @model_validator(mode="after")
    def _pinned(self) -> Source:
        if not self.url.startswith(("https://", "http://")):
            raise ValueError(
                f"url {safe_load.quote(self.url)}: give the http(s):// URL of the release "
                f"tarball of version {self.version} that the engine's image builds can reach "
                "(archbench names no download host; a local mirror works)"
            )
        grammar.check_tarball_url(self.url)
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(
                f"sha256 {safe_load.quote(self.sha256)}: pin the tarball with its 64-digit "
                "lowercase sha256"
            )
        return self


class Recipe(_Strict):
    """Build steps beyond packages; ``taler-helper`` builds GNUnet and taler-exchange.

    Untested on archbench's own machines, which cannot reach the upstream
    sources (``docs/taler-recipe.md``). The image build fails with a message
    naming the URL when a tarball cannot be fetched or its sha256 differs.
    """

    name: Literal["taler-helper"]
    gnunet: Source
    exchange: Source


class Profile(_Strict):
    """A dependency profile: Debian packages installed into the image, then an optional recipe."""

    description: StrictStr = ""
    packages: tuple[PackageSpec, ...] = Field(min_length=1)
    recipe: Recipe | None = None


class Tls(_Strict):
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
                raise ValueError(f"{key}: no such file {path!r}")
        return self


class Host(_Strict):
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
                    f"url {self.url!r}: use unix://PATH, tcp://HOST:PORT or ssh://USER@HOST"
                )
            userinfo = rest.split("/", 1)[0].rpartition("@")[0]
            if ":" in userinfo:
                raise ValueError(
                    "url: a password must not be written into matrix.yml (it would end up "
                    "in logs); use an ssh key (ssh-agent) or TLS certificates"
                )
            if scheme == "tcp" and ":" not in rest:
                raise ValueError(f"url {self.url!r}: tcp:// needs a port (2375, or 2376 with TLS)")
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


LOCAL_HOST = "local"
"""Name of the implicit host: the engine of the environment (``DOCKER_HOST`` or the socket)."""


class Target(_Strict):
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
    (:mod:`archbench.cpu_quota`)."""
    host: Name = LOCAL_HOST
    """A key of ``hosts``, or ``local`` for the engine of the environment."""
    suites: Suites = DEFAULT_SUITES
    cpu: StrictStr | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
    """QEMU ``-cpu`` model for instruction counts (``--metric instructions``); None:
    :data:`archbench.counting.DEFAULT_CPU` for the architecture."""

    @field_validator("cpus", mode="before")
    @classmethod
    def _cpus(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            # A quoted "0.5" is a typo waiting to happen elsewhere: numbers only.
            raise ValueError(f"cpus must be a number such as 0.5, not the text {value!r}")
        try:
            return cpu_quota.check_cpus("cpus", value)
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


class Matrix(_Strict):
    """The whole matrix.yml."""

    version: Literal[1] = Field(description="matrix format version")
    defaults: Suites = DEFAULT_SUITES
    emulated_defaults: Suites | None = None
    """Settings for targets that run emulated, over ``defaults``, under a target's own keys
    (:mod:`archbench.emulated_defaults`)."""
    bases: dict[BaseName, Base] = Field(min_length=1)
    profiles: dict[Name, Profile] = Field(min_length=1)
    hosts: dict[Name, Host] = Field(default_factory=dict)
    targets: tuple[Target, ...] = Field(min_length=1)
    _explicit: dict[str, dict[str, frozenset[str]]] = PrivateAttr(default_factory=dict)

    @field_validator("emulated_defaults")
    @classmethod
    def _adjusts_only(cls, value: Suites | None) -> Suites | None:
        if value is not None:
            emulated_layer.check(value)
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
                    f"no target named {safe_load.quote(n)}; targets: {', '.join(known)}"
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


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or ``""`` when none is close."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


UniqueKeyLoader = safe_load.BoundedLoader
"""SafeLoader that rejects duplicate keys and bounds nesting and aliases (kept for importers)."""


def _plain(key: str) -> str:
    """A key or name for a message: as is when plain, else quoted and cut short."""
    return key if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key) else safe_load.quote(key, 40)


def _key_path(loc: Sequence[str | int], data: Any) -> str:
    """Render a pydantic location as ``targets[1] (name).suites.blindsig``."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and item < len(node):
                node = node[item]
                if isinstance(node, dict) and isinstance(node.get("name"), str):
                    label += f" ({_plain(node['name'])})"
            parts.append(label)
        else:
            if item in {"function-after", "function-before"} or "[" in item:
                continue
            parts.append(("." if parts else "") + _plain(item))
            node = node.get(item) if isinstance(node, dict) else None
    return "".join(parts) or "<top level>"


_FIELDS: dict[str, Sequence[str]] = {
    "": list(Matrix.model_fields),
    "defaults": list(SUITE_NAMES),
    "emulated_defaults": list(SUITE_NAMES),
    "suites": list(SUITE_NAMES),
    "blindsig": list(BlindsigSuite.model_fields),
    "openssl-speed": list(OpensslSpeedSuite.model_fields),
    "rsa-large": list(RsaLargeSuite.model_fields),
    "gnupg": list(GnupgSuite.model_fields),
    "sodium": list(SodiumSuite.model_fields),
    "taler-helper": list(TalerHelperSuite.model_fields),
    "gnunet-perf": list(GnunetPerfSuite.model_fields),
    "recipe": list(Recipe.model_fields),
    "gnunet": list(Source.model_fields),
    "exchange": list(Source.model_fields),
    "bases": list(Base.model_fields),
    "profiles": list(Profile.model_fields),
    "hosts": list(Host.model_fields),
    "tls": list(Tls.model_fields),
    "targets": list(Target.model_fields),
}


def _allowed_keys(loc: Sequence[str | int]) -> Sequence[str]:
    names = [p for p in loc[:-1] if isinstance(p, str)]
    # A key inside bases.<name> or profiles.<name> is two strings deep.
    for depth in range(len(names), 0, -1):
        parent = names[depth - 1]
        if parent in _FIELDS:
            return _FIELDS[parent]
        if depth >= 2 and names[depth - 2] in ("bases", "profiles", "hosts"):
            return _FIELDS[names[depth - 2]]
    return _FIELDS[""]


def _explain(err: ValidationError, data: Any, source: str, prefix: tuple[str, ...] = ()) -> str:
    lines = [f"{source}: invalid matrix ({err.error_count()} problem(s)):"]
    for e in err.errors()[:_MAX_PROBLEMS]:
        loc = [*prefix, *e["loc"]]
        if e["type"] == "extra_forbidden":
            key = str(loc[-1])
            allowed = _allowed_keys(loc)
            where = _key_path(loc, data)
            lines.append(
                f"  {where}: unknown key {safe_load.quote(key)}; allowed: {', '.join(allowed)}"
                + did_you_mean(key[:100], allowed)
            )
            continue
        msg = messages.problem(e)
        lines.append(f"  {_key_path(loc, data)}: {msg}" if loc else f"  {msg}")
    if err.error_count() > _MAX_PROBLEMS:
        lines.append(f"  … and {err.error_count() - _MAX_PROBLEMS} more")
    return "\n".join(lines)


_MAX_PROBLEMS: Final = 20


def parse(text: str, source: str = "matrix.yml") -> Matrix:
    """Parse matrix YAML text into a validated :class:`Matrix`.

    Target suites not given fall back to ``defaults``; a target's own suite
    settings override the default per key.

    Raises:
        MatrixError: YAML syntax error, duplicate key, or any schema problem;
            the message names ``source``, the key path and the allowed values.
    """
    data = safe_load.load_yaml(text, source, MatrixError)
    if not isinstance(data, dict):
        raise MatrixError(f"{source}: expected a mapping with version, bases, profiles, targets")
    try:
        # Defaults are checked on their own first so that one typo there is
        # reported once, not once per target that inherits it.
        defaults = Suites.model_validate(data["defaults"]) if "defaults" in data else DEFAULT_SUITES
    except ValidationError as exc:
        raise MatrixError(_explain(exc, data, source, prefix=("defaults",))) from exc
    try:
        matrix = Matrix.model_validate(_merge_defaults(data, defaults))
    except ValidationError as exc:
        raise MatrixError(_explain(exc, data, source)) from exc
    matrix._explicit = emulated_layer.explicit_keys(data)
    return matrix


def _merge_defaults(data: dict[str, Any], validated: Suites) -> dict[str, Any]:
    """Fill each target's suites from ``defaults``.

    A target inherits every default suite; its own ``suites:`` entries
    override the defaults key by key and may add suites the defaults do not
    have. A suite named under a target runs even when the defaults say
    ``enabled: false``, unless the target says ``enabled: false`` itself.
    """
    defaults = validated.model_dump(exclude_none=True, by_alias=True)
    targets = data.get("targets")
    if not isinstance(targets, list):
        return data
    merged_targets: list[Any] = []
    for t in targets:
        if not isinstance(t, dict):
            merged_targets.append(t)
            continue
        own = t.get("suites")
        if own is None:
            suites: Any = dict(defaults)
        elif isinstance(own, dict):
            suites = dict(defaults)
            for name, params in own.items():
                base = defaults.get(name)
                if isinstance(base, dict) and isinstance(params, dict):
                    # Naming a suite under a target runs it unless it says enabled: false.
                    suites[name] = {**base, "enabled": True, **params}
                else:
                    suites[name] = params
        else:
            suites = own
        merged_targets.append({**t, "suites": suites})
    return {**data, "targets": merged_targets}


def load(path: Path) -> Matrix:
    """Read and validate a matrix file.

    Raises:
        MatrixError: the file is missing or invalid (see :func:`parse`).
    """
    return parse(read_matrix_text(path), str(path))


def read_matrix_text(path: Path) -> str:
    """The text of a matrix file: at most 256 KiB of UTF-8 (the shipped one has 4 KiB).

    Raises:
        MatrixError: unreadable, too large or not UTF-8; the message names the file.
    """
    return safe_load.read_text(path, MatrixError, "the matrix", MAX_MATRIX_BYTES)
