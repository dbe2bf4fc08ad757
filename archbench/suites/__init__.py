"""The suites on the host side: one module each, and the one registry that lists them.

Each ``archbench/suites/<name>.py`` holds a suite's settings model (its keys
under ``defaults:`` and a target's ``suites:`` in matrix.yml) and exports
``SUITE`` (:class:`~archbench.suites.base.SuiteSpec`: its name, model, and
whether it runs by default). Adding a suite here means its module, its entry
in :data:`REGISTRY` and its field in :class:`Suites` (checked against each
other when this package is imported); matrix loading, ``--suite`` and the
"unknown key" messages follow from them. The harness side is
``harness/abh/suites/<name>.py`` plus the harness's ``SUITES``; tables of its own in
reports go into :data:`archbench.report.suite_extras.EXTRA_TABLES`.

This package is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, get_args

from pydantic import BaseModel, ConfigDict, Field

from archbench.errors import MatrixError
from archbench.inputs import Strict, did_you_mean
from archbench.inputs import bounded as safe_load
from archbench.suites.base import SuiteSettings, SuiteSpec
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
from archbench.suites.taler_helper import SUITE as TALER_HELPER
from archbench.suites.taler_helper import TalerHelperSuite

__all__ = [
    "DEFAULT_SUITES",
    "GNUPG_ALGORITHMS",
    "OPENSSL_ALGORITHMS",
    "REGISTRY",
    "SUITE_NAMES",
    "BlindsigSuite",
    "GnunetPerfSuite",
    "GnupgSuite",
    "OpensslSpeedSuite",
    "RsaLargeSuite",
    "SodiumSuite",
    "SuiteSettings",
    "SuiteSpec",
    "Suites",
    "TalerHelperSuite",
    "check_fields",
]

REGISTRY: Final[tuple[SuiteSpec, ...]] = (
    BLINDSIG,
    OPENSSL_SPEED,
    RSA_LARGE,
    GNUPG,
    SODIUM,
    TALER_HELPER,
    GNUNET_PERF,
)
"""Every suite the host knows, in the order reports, ``--suite`` help and results list them."""

SUITE_NAMES: Final = tuple(s.name for s in REGISTRY)
"""Suite names as matrix.yml, ``--suite`` and result rows write them."""


class Suites(Strict):
    """The suites a target runs: those present and enabled."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    blindsig: BlindsigSuite | None = None
    openssl_speed: OpensslSpeedSuite | None = Field(default=None, alias="openssl-speed")
    rsa_large: RsaLargeSuite | None = Field(default=None, alias="rsa-large")
    gnupg: GnupgSuite | None = None
    sodium: SodiumSuite | None = None
    taler_helper: TalerHelperSuite | None = Field(default=None, alias="taler-helper")
    gnunet_perf: GnunetPerfSuite | None = Field(default=None, alias="gnunet-perf")

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


def check_fields(model: type[BaseModel], registry: Sequence[SuiteSpec]) -> None:
    """Check that ``model`` has one optional field per suite of ``registry``, in its order.

    Field ``rsa_large`` of type ``RsaLargeSuite | None`` with alias ``rsa-large``
    for the suite ``rsa-large``, and nothing else.

    Raises:
        TypeError: a suite without its field, a field without its suite, or a
            field of another type, name or order; the message names both sides.
    """
    have = [
        (field.alias or attr, attr, get_args(field.annotation))
        for attr, field in model.model_fields.items()
    ]
    want = [(s.name, s.attribute, (s.settings, type(None))) for s in registry]
    if have != want:
        raise TypeError(
            f"{model.__name__} declares the suites {[h[0] for h in have]} but the registry "
            f"lists {[w[0] for w in want]}: give each suite of archbench.suites.REGISTRY "
            "one field '<name_with_underscores>: <Settings> | None' (aliased to its name), "
            "in the registry's order"
        )


check_fields(Suites, REGISTRY)

DEFAULT_SUITES: Final = Suites.model_validate(
    {s.name: {} for s in REGISTRY if s.enabled_by_default}
)
"""What a target runs when matrix.yml has no ``defaults:``: the suites enabled by default."""
