"""The suites on the host side: what each suite is, and the one registry every list derives from.

Each ``archbench/suites/<name>.py`` holds a suite's settings model (its keys
under ``defaults:`` and a target's ``suites:`` in matrix.yml) and exports
``SUITE``, its :class:`~archbench.suites.base.SuiteSpec`: its name, title,
whether it runs by default, is counted, runs foreign programs or has rows of blind
signatures in the thesis's vocabulary, and where it stands in reports. This face exports
each as its upper-case name (:data:`BLINDSIG`, :data:`GNUNET_PERF`, …; write
``GNUNET_PERF.name``, never the literal) and derives from them every list the
host uses: :data:`REGISTRY`, :data:`SUITE_NAMES`, :data:`COUNTED_SUITES`,
:data:`NOT_COUNTED`, :data:`BLIND_SIGNATURE_SUITES`, :data:`SUITE_TITLES`
(:func:`suite_title`), :data:`PART_ORDER`, :data:`DEFAULT_SUITES`, and
:func:`spec` to look one up. Matrix loading, ``--suite``, the "unknown key"
messages, counting and the reports' orders follow from them.

The registry is read off :class:`Suites`, the model of a target's
``suites:``: one field per suite, ``<name_with_underscores>:
Annotated[<Settings> | None, <SUITE>] = None``, in registry order. It cannot
go the other way (fields made from a registry tuple, e.g. with
``pydantic.create_model``): mypy reads class bodies, not models built at run
time, so a generated ``Suites`` is a bare ``type[BaseModel]`` to it and
``target.suites.blindsig`` would be an attribute error under ``--strict`` (or
``Any`` through ``__getattr__``, losing ``BlindsigSuite``). So the field is
the registry entry: :func:`registry_of` checks at import that each field
carries its module's ``SUITE`` and agrees with it (attribute, alias, model).

Adding a suite on the host therefore means writing its module and declaring
it in :class:`Suites` (one field and its import); on the harness side,
``harness/abh/suites/<name>.py`` plus its entry in the harness's ``SUITES``
(and ``COUNTED_SUITES`` if counted; ``tests/unit/test_suite_counting.py``
checks both sides agree). Tables of its own in reports are optional
(:data:`archbench.report.suites.EXTRA_TABLES`).

This package is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, get_args

from pydantic import BaseModel, ConfigDict

from archbench.errors import MatrixError
from archbench.inputs import Strict, did_you_mean, quote
from archbench.suites.base import RowSuite, SuiteSettings, SuiteSpec
from archbench.suites.blindsig import SUITE as BLINDSIG
from archbench.suites.blindsig import BlindsigSuite
from archbench.suites.gnunet_perf import SUITE as GNUNET_PERF
from archbench.suites.gnunet_perf import GnunetPerfSuite
from archbench.suites.gnupg import GNUPG_ALGORITHMS, GnupgSuite
from archbench.suites.gnupg import SUITE as GNUPG
from archbench.suites.openssl_speed import OPENSSL_ALGORITHMS, OpensslSpeedSuite
from archbench.suites.openssl_speed import SUITE as OPENSSL_SPEED
from archbench.suites.rsa_large import SUITE as RSA_LARGE
from archbench.suites.rsa_large import RsaLargeSuite
from archbench.suites.sodium import SUITE as SODIUM
from archbench.suites.sodium import SodiumSuite
from archbench.suites.taler_helper import SECURITY_MODULE, TalerHelperSuite
from archbench.suites.taler_helper import SUITE as TALER_HELPER

__all__ = [
    "BLINDSIG",
    "BLIND_SIGNATURE_SUITES",
    "COUNTED_SUITES",
    "DEFAULT_SUITES",
    "GNUNET_PERF",
    "GNUPG",
    "GNUPG_ALGORITHMS",
    "NOT_COUNTED",
    "OPENSSL_ALGORITHMS",
    "OPENSSL_SPEED",
    "PART_ORDER",
    "REGISTRY",
    "RSA_LARGE",
    "SECURITY_MODULE",
    "SODIUM",
    "SUITE_NAMES",
    "SUITE_TITLES",
    "TALER_HELPER",
    "BlindsigSuite",
    "GnunetPerfSuite",
    "GnupgSuite",
    "OpensslSpeedSuite",
    "RowSuite",
    "RsaLargeSuite",
    "SodiumSuite",
    "SuiteSettings",
    "SuiteSpec",
    "Suites",
    "TalerHelperSuite",
    "registry_of",
    "spec",
    "suite_title",
]


def _suite_name(attribute: str) -> str:
    return attribute.replace("_", "-")


class Suites(Strict):
    """The suites a target runs: those present and enabled.

    Its fields are the registry (:data:`REGISTRY`, in their order), each
    annotated with its suite's ``SUITE``.
    """

    # matrix.yml writes rsa-large; Python reads rsa_large.
    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, alias_generator=_suite_name
    )

    blindsig: Annotated[BlindsigSuite | None, BLINDSIG] = None
    openssl_speed: Annotated[OpensslSpeedSuite | None, OPENSSL_SPEED] = None
    rsa_large: Annotated[RsaLargeSuite | None, RSA_LARGE] = None
    gnupg: Annotated[GnupgSuite | None, GNUPG] = None
    sodium: Annotated[SodiumSuite | None, SODIUM] = None
    taler_helper: Annotated[TalerHelperSuite | None, TALER_HELPER] = None
    gnunet_perf: Annotated[GnunetPerfSuite | None, GNUNET_PERF] = None

    def get(self, name: str) -> SuiteSettings | None:
        """The settings of suite ``name`` (a :data:`SUITE_NAMES` entry), None when absent."""
        value = getattr(self, name.replace("-", "_"))
        return value if isinstance(value, SuiteSettings) else None

    def enabled(self) -> dict[str, SuiteSettings]:
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
                raise MatrixError(f"--suite: {_unknown(name)}")
        chosen: dict[str, Any] = {}
        for name in names:
            current = self.get(name)
            settings = current.model_dump() if current is not None else {}
            chosen[name] = {**settings, "enabled": True}
        return Suites.model_validate(chosen)


def registry_of(model: type[BaseModel]) -> tuple[SuiteSpec, ...]:
    """The suites ``model`` declares: each field's :class:`SuiteSpec`, in field order.

    Each field must be ``rsa_large: Annotated[RsaLargeSuite | None, RSA_LARGE]``
    with its alias the suite's name (``rsa-large``) and the spec's ``settings``
    the field's model; the ranks must not repeat.

    Raises:
        TypeError: a field without its spec, or of another name, alias or
            model than its spec; a rank used twice. The message names the field
            or suites and the fix.
    """
    specs: list[SuiteSpec] = []
    for attr, field in model.model_fields.items():
        found = [m for m in field.metadata if isinstance(m, SuiteSpec)]
        declared = found[0] if len(found) == 1 else None
        if (
            declared is None
            or declared.attribute != attr
            or (field.alias or attr) != declared.name
            or get_args(field.annotation) != (declared.settings, type(None))
        ):
            raise TypeError(
                f"{model.__name__}.{attr} is not declared as a suite: write "
                f"'{attr}: Annotated[<Settings> | None, SUITE] = None' with the settings model "
                "and SUITE of archbench/suites/<name>.py, the field named as the suite with "
                "'_' for '-'"
            )
        specs.append(declared)
    for what, ranks in (
        ("report_rank", [(t.report_rank, t.name) for t in _titled(specs)]),
        ("count_rank", [(s.count_rank, s.name) for s in specs]),
    ):
        seen: dict[int, str] = {}
        for rank, name in ranks:
            if rank in seen:
                raise TypeError(f"{seen[rank]} and {name} have the same {what} {rank}")
            seen[rank] = name
    return tuple(specs)


def _titled(specs: Sequence[SuiteSpec]) -> list[SuiteSpec | RowSuite]:
    """Every suite with a title (``specs`` and the suites their rows carry), in report order."""
    rows_as = [s.rows_as for s in specs if s.rows_as is not None]
    return sorted([*specs, *rows_as], key=lambda t: t.report_rank)


REGISTRY: Final = registry_of(Suites)
"""Every suite the host knows, in the order ``--suite`` help, matrix messages and results list
them: the fields of :class:`Suites`."""

SUITE_NAMES: Final = tuple(s.name for s in REGISTRY)
"""Suite names as matrix.yml, ``--suite`` and result rows write them."""

_BY_COUNT: Final = sorted(REGISTRY, key=lambda s: s.count_rank)
COUNTED_SUITES: Final = tuple(s.name for s in _BY_COUNT if s.counted)
"""Suites ``--metric instructions`` counts, in the order of their tables:
``("blindsig", "rsa-large", "sodium")``; the harness keeps the same list."""
NOT_COUNTED: Final = tuple(s.name for s in _BY_COUNT if not s.counted)
"""Suites never counted (they run programs archbench does not own), in the order the
instruction tables' note names them."""

BLIND_SIGNATURE_SUITES: Final = frozenset(s.row_suite for s in REGISTRY if s.blind_signatures)
"""Suites whose rows are blind signatures in the thesis's vocabulary (scheme CS or RSA, an
:data:`archbench.result.Operation`): blindsig, security-module, gnunet-perf. Result rows are
checked against it; reports put these rows in the appendix's tables."""

SUITE_TITLES: Final[dict[str, str]] = {t.name: t.title for t in _titled(REGISTRY)}
"""Suite -> the title its tables carry, in report order (result rows' suites and the
suites of the matrix); an unknown suite is titled by its name."""

PART_ORDER: Final = tuple(
    s.name
    for s in sorted(REGISTRY, key=lambda s: s.report_rank)
    if s.rows_as is None and not s.blind_signatures
)
"""Suites whose rows get a report part of their own, in report order (the rows of
:data:`BLIND_SIGNATURE_SUITES` join the appendix's tables instead); unknown suites follow
alphabetically."""


def suite_title(suite: str) -> str:
    """``"blindsig"`` -> ``"blind signatures"``; unknown suites keep their name."""
    return SUITE_TITLES.get(suite, suite)


def _unknown(name: str) -> str:
    return f"unknown suite {quote(name)}; suites: {', '.join(SUITE_NAMES)}" + did_you_mean(
        name[:100], SUITE_NAMES
    )


def spec(name: str) -> SuiteSpec:
    """The suite called ``name`` (``"rsa-large"``).

    Raises:
        MatrixError: no suite has that name; the message lists the suites.
    """
    for s in REGISTRY:
        if s.name == name:
            return s
    raise MatrixError(_unknown(name))


DEFAULT_SUITES: Final = Suites.model_validate(
    {s.name: {} for s in REGISTRY if s.enabled_by_default}
)
"""What a target runs when matrix.yml has no ``defaults:``: the suites enabled by default."""
