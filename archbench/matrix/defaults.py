"""How ``defaults:`` of matrix.yml reach each target's ``suites:`` (before validation).

``emulated_defaults:``, the layer for emulated targets, is applied later, when
the pipeline plans (:mod:`archbench.matrix.emulated`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Any

from archbench.suites import Suites


def merge_defaults(data: dict[str, Any], validated: Suites) -> dict[str, Any]:
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
