"""The base of every result model: frozen, unknown keys kept.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that keeps unknown keys (``model_extra``) and writes them back."""

    # Harness documents may gain fields without a version bump (CONTRACT.md):
    # unknown keys are kept (model_extra, and written back on save), never
    # rejected and never dropped.
    model_config = ConfigDict(frozen=True, extra="allow")
