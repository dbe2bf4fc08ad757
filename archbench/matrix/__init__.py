"""matrix.yml: the hardware matrix, parsed once and strictly into frozen models.

The public face of the matrix: every name here is defined in a module of its
own concern and kept importable from ``archbench.matrix``:

* :mod:`archbench.inputs.grammar`: the strict frozen base and grammar-checked strings;
* :mod:`archbench.suites`: one module per suite's settings and the suite registry;
* :mod:`archbench.matrix.hosts`: Docker hosts (``hosts:``);
* :mod:`archbench.matrix.model`: bases, profiles, targets and the matrix;
* :mod:`archbench.matrix.defaults`: ``defaults:`` merged into each target's suites;
* :mod:`archbench.matrix.explain`: validation errors as messages with key paths;
* :mod:`archbench.matrix.load`: reading and parsing a file (:func:`load`, :func:`parse`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.matrix.hosts import LOCAL_HOST, Host, Tls
from archbench.matrix.load import (
    MATRIX_VERSION,
    MAX_MATRIX_BYTES,
    load,
    parse,
    read_matrix_text,
)
from archbench.matrix.model import Base, Matrix, Profile, Recipe, Source, Target

__all__ = [
    "LOCAL_HOST",
    "MATRIX_VERSION",
    "MAX_MATRIX_BYTES",
    "Base",
    "Host",
    "Matrix",
    "Profile",
    "Recipe",
    "Source",
    "Target",
    "Tls",
    "load",
    "parse",
    "read_matrix_text",
]
