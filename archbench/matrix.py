"""matrix.yml: the hardware matrix, parsed once and strictly into frozen models.

The public face of the matrix: every name here is defined in a module of its
own concern and kept importable from ``archbench.matrix``:

* :mod:`archbench.matrix_types`: the strict frozen base and grammar-checked strings;
* :mod:`archbench.suites`: one module per suite's settings and the suite registry;
* :mod:`archbench.matrix_hosts`: Docker hosts (``hosts:``);
* :mod:`archbench.matrix_models`: bases, profiles, targets and the matrix;
* :mod:`archbench.matrix_defaults`: ``defaults:`` merged into each target's suites;
* :mod:`archbench.matrix_explain`: validation errors as messages with key paths;
* :mod:`archbench.matrix_load`: reading and parsing a file (:func:`load`, :func:`parse`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.matrix_hosts import LOCAL_HOST, Host, Tls
from archbench.matrix_load import (
    MATRIX_VERSION,
    MAX_MATRIX_BYTES,
    UniqueKeyLoader,
    load,
    parse,
    read_matrix_text,
)
from archbench.matrix_models import Base, Matrix, Profile, Recipe, Source, Target
from archbench.matrix_types import (
    BaseName,
    ImageRef,
    MirrorUrl,
    Name,
    PackageSpec,
    SuiteName,
    TargetName,
)
from archbench.messages import did_you_mean
from archbench.suites import (
    DEFAULT_SUITES,
    GNUPG_ALGORITHMS,
    OPENSSL_ALGORITHMS,
    SUITE_NAMES,
    BlindsigSuite,
    GnunetPerfSuite,
    GnupgSuite,
    OpensslSpeedSuite,
    RsaLargeSuite,
    SodiumSuite,
    Suites,
    TalerHelperSuite,
)

__all__ = [
    "DEFAULT_SUITES",
    "GNUPG_ALGORITHMS",
    "LOCAL_HOST",
    "MATRIX_VERSION",
    "MAX_MATRIX_BYTES",
    "OPENSSL_ALGORITHMS",
    "SUITE_NAMES",
    "Base",
    "BaseName",
    "BlindsigSuite",
    "GnunetPerfSuite",
    "GnupgSuite",
    "Host",
    "ImageRef",
    "Matrix",
    "MirrorUrl",
    "Name",
    "OpensslSpeedSuite",
    "PackageSpec",
    "Profile",
    "Recipe",
    "RsaLargeSuite",
    "SodiumSuite",
    "Source",
    "SuiteName",
    "Suites",
    "TalerHelperSuite",
    "Target",
    "TargetName",
    "Tls",
    "UniqueKeyLoader",
    "did_you_mean",
    "load",
    "parse",
    "read_matrix_text",
]
