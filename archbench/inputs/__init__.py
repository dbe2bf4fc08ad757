"""Untrusted input: bounded reading, the grammars of matrix.yml's strings, our messages.

Everything a user or a stored file hands archbench passes through here
before it becomes a model, so that a hostile or broken file ends in one of
archbench's errors naming the file, in bounded time and memory:

* :mod:`archbench.inputs.bounded`: files read with a size cap and strict
  UTF-8 (:func:`read_bytes`, :func:`read_text`: regular files only, opened
  without blocking), YAML and JSON parsed with nesting, alias expansion and
  duplicate keys refused (:func:`load_yaml`, :func:`load_json`; JSON also
  refuses non-finite numbers and lone surrogates and neutralises control
  characters).
  Each takes the :class:`~archbench.errors.ArchbenchError` subclass to raise.
* :mod:`archbench.inputs.grammar`: the grammar of every string that reaches a
  root shell, an argv, a Dockerfile or a file name (``check_*`` raise
  ``ValueError``), the same as pydantic string types (:data:`PackageSpec`,
  :data:`TargetName`, …), and :class:`Strict`, the frozen base model that
  refuses unknown keys.
* :mod:`archbench.inputs.flags`: command-line values checked before anything
  runs (:func:`integer`, :func:`real`, :func:`selection`, :func:`cpuset`,
  :func:`ci_target`, :func:`cpus_of`); ``tasks.py`` and a resumed run's
  ``run.json`` both go through them.
* :mod:`archbench.inputs.messages`: untrusted values quoted short
  (:func:`quote`), control characters made visible (:func:`neutralise`), a URL's
  credentials never shown (:func:`redact_credentials`),
  pydantic's validation errors in archbench's words
  (:func:`problem`, :func:`location`, :func:`describe_problems`), and
  "did you mean …?" (:func:`did_you_mean`).

This package is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.inputs.bounded import (
    decode,
    is_regular,
    load_json,
    load_yaml,
    read_bytes,
    read_text,
)
from archbench.inputs.flags import (
    check_cpuset_fits,
    ci_target,
    cpus_of,
    cpuset,
    integer,
    path_flag,
    real,
    selection,
)
from archbench.inputs.grammar import (
    DEBIAN_SUITE,
    GIT_REF,
    GNUNET_VERSION,
    IMAGE_REFERENCE,
    PACKAGE,
    BaseName,
    GitRef,
    GitUrl,
    ImageRef,
    MirrorUrl,
    Name,
    PackageSpec,
    Sha256,
    Strict,
    SuiteName,
    TargetName,
    check_base_name,
    check_git_ref,
    check_git_url,
    check_gnunet_version,
    check_image,
    check_local_path,
    check_mirror,
    check_name,
    check_package,
    check_sha256,
    check_suite,
    check_tarball_location,
    check_tarball_url,
    check_target_name,
)
from archbench.inputs.messages import (
    CONTROL,
    TERMINAL_CONTROL,
    describe_problems,
    did_you_mean,
    location,
    neutralise,
    problem,
    quote,
    redact_credentials,
)

__all__ = [
    "CONTROL",
    "DEBIAN_SUITE",
    "GIT_REF",
    "GNUNET_VERSION",
    "IMAGE_REFERENCE",
    "PACKAGE",
    "TERMINAL_CONTROL",
    "BaseName",
    "GitRef",
    "GitUrl",
    "ImageRef",
    "MirrorUrl",
    "Name",
    "PackageSpec",
    "Sha256",
    "Strict",
    "SuiteName",
    "TargetName",
    "check_base_name",
    "check_cpuset_fits",
    "check_git_ref",
    "check_git_url",
    "check_gnunet_version",
    "check_image",
    "check_local_path",
    "check_mirror",
    "check_name",
    "check_package",
    "check_sha256",
    "check_suite",
    "check_tarball_location",
    "check_tarball_url",
    "check_target_name",
    "ci_target",
    "cpus_of",
    "cpuset",
    "decode",
    "describe_problems",
    "did_you_mean",
    "integer",
    "is_regular",
    "load_json",
    "load_yaml",
    "location",
    "neutralise",
    "path_flag",
    "problem",
    "quote",
    "read_bytes",
    "read_text",
    "real",
    "redact_credentials",
    "selection",
]
