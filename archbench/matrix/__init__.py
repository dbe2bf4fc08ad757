"""matrix.yml, the hardware matrix: read once, at the edge, into frozen models.

The first stage of the pipeline. :func:`load` (a file) or :func:`parse`
(text) return a :class:`Matrix` whose every value has been checked: its
targets (an architecture, a base, a dependency profile, a Docker host, a CPU
quota and the suites to run), its bases, profiles and hosts, and the suite
settings of ``defaults:`` and ``emulated_defaults:``. Anything wrong raises one
:class:`~archbench.errors.MatrixError` that lists every problem by key path,
before anything is built.

* :mod:`archbench.matrix.model`: the models (:class:`Host`, :class:`Base`,
  :class:`Profile`, :class:`Target`, :class:`Matrix`) and the
  CPU quota (:func:`check_cpus`, ``--cpus`` by :func:`parse_cpus`, Docker's
  ``NanoCpus`` by :func:`nano_cpus`);
* :mod:`archbench.matrix.gnunet`: where a target's libgnunetutil comes from
  (``gnunet:`` of a profile or target, :meth:`Matrix.gnunet`; :class:`GnunetSource`),
  and the one-string form of ``invoke bench --gnunet`` (:func:`parse_gnunet`, its
  inverse :func:`gnunet_flag`); the
  exchange source ``taler:`` in the same grammar (:meth:`Matrix.taler`, :func:`parse_taler`);
* :mod:`archbench.matrix.defaults`: how ``defaults:`` fill each target's
  ``suites:``, and the ``emulated_defaults:`` layer the planner applies to
  emulated targets (:func:`apply_emulated_defaults`);
* :mod:`archbench.matrix.limits`: the CI gate's limits of ``limits:`` (:class:`RowLimit`,
  :func:`parse_row_limit`);
* :mod:`archbench.matrix.loading`: reading (bounded, strict YAML through
  :mod:`archbench.inputs`), validating, and explaining validation errors.

A suite's settings are not defined here: they are :mod:`archbench.suites`'
models, and no module of this package names one, so adding a suite leaves
this package untouched.

This package is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.matrix.defaults import apply_emulated_defaults, describe_emulated_changes
from archbench.matrix.gnunet import (
    DEBIAN_GNUNET,
    GnunetDebian,
    GnunetGit,
    GnunetPath,
    GnunetSource,
    GnunetTarball,
    gnunet_flag,
    parse_gnunet,
    parse_taler,
)
from archbench.matrix.limits import RowLimit, parse_row_limit
from archbench.matrix.loading import MATRIX_VERSION, MAX_MATRIX_BYTES, load, parse, read_matrix_text
from archbench.matrix.model import (
    LOCAL_HOST,
    MAX_CPUS,
    MIN_CPUS,
    RUNNER_LABEL,
    Base,
    Host,
    Matrix,
    Profile,
    Target,
    Tls,
    check_cpus,
    check_cpus_fit,
    nano_cpus,
    parse_cpus,
)

__all__ = [
    "DEBIAN_GNUNET",
    "LOCAL_HOST",
    "MATRIX_VERSION",
    "MAX_CPUS",
    "MAX_MATRIX_BYTES",
    "MIN_CPUS",
    "RUNNER_LABEL",
    "Base",
    "GnunetDebian",
    "GnunetGit",
    "GnunetPath",
    "GnunetSource",
    "GnunetTarball",
    "Host",
    "Matrix",
    "Profile",
    "RowLimit",
    "Target",
    "Tls",
    "apply_emulated_defaults",
    "check_cpus",
    "check_cpus_fit",
    "describe_emulated_changes",
    "gnunet_flag",
    "load",
    "nano_cpus",
    "parse",
    "parse_cpus",
    "parse_gnunet",
    "parse_row_limit",
    "parse_taler",
    "read_matrix_text",
]
