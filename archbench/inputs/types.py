"""The building blocks of matrix.yml's models: a strict frozen base and grammar-checked strings.

Strings that reach a root shell, debootstrap's argv, a Dockerfile or a file
name are each checked against their grammar (:mod:`archbench.inputs.grammar`) as they
are parsed. Every model of the matrix and of the suites' settings derives from
:class:`Strict`.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr, field_validator

from archbench.inputs import grammar

PackageSpec = Annotated[StrictStr, AfterValidator(grammar.check_package)]
Name = Annotated[StrictStr, AfterValidator(grammar.check_name)]
BaseName = Annotated[StrictStr, AfterValidator(grammar.check_base_name)]
TargetName = Annotated[StrictStr, AfterValidator(grammar.check_target_name)]
SuiteName = Annotated[StrictStr, AfterValidator(grammar.check_suite)]
MirrorUrl = Annotated[StrictStr, AfterValidator(grammar.check_mirror)]
ImageRef = Annotated[StrictStr, AfterValidator(grammar.check_image)]
UpstreamVersion = Annotated[StrictStr, AfterValidator(grammar.check_upstream_version)]


class Strict(BaseModel):
    """Frozen, and an unknown key is an error (``extra="forbid"``); YAML lists become tuples."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _lists_to_tuples(cls, value: Any) -> Any:
        # YAML gives lists; the frozen models hold tuples.
        return _tuple(value)


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
