"""The layers of suite settings in matrix.yml: ``defaults:`` and ``emulated_defaults:``.

A target's suites come from three layers, the later winning key by key::

    defaults (matrix) < emulated_defaults (emulated targets only)
        < the target's own suites: keys < command-line overrides (--rsa-bits ...)

``defaults:`` reach each target's ``suites:`` before validation
(:func:`merge_defaults`). ``emulated_defaults:`` are applied later, when the
pipeline plans (:func:`apply_emulated_defaults`): under QEMU user emulation
RSA-3072/4096 key generation alone takes many minutes per target (the default
matrix took 54 minutes on a 2-core VM, 31 of them in the arm64 and armv7
runs). A key the user wrote under the target is never replaced; the plan
reports every setting this layer changed (:func:`describe_emulated_changes`),
and the results record the parameters the harness actually ran with.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def _names(suites: Suites) -> list[str]:
    """Names of the suites present in ``suites`` (``rsa-large``), in declaration order."""
    return list(suites.model_dump(by_alias=True, exclude_none=True))


def explicit_keys(data: Any) -> dict[str, dict[str, frozenset[str]]]:
    """Which suite settings each target wrote itself, from matrix.yml as loaded (raw YAML).

    Returns target name -> suite name -> setting keys under ``targets[i].suites.<suite>``.
    Malformed entries are skipped: validation of the matrix reports them.
    """
    found: dict[str, dict[str, frozenset[str]]] = {}
    targets = data.get("targets") if isinstance(data, dict) else None
    for t in targets if isinstance(targets, list) else []:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        own = t.get("suites")
        found[t["name"]] = {
            name: frozenset(str(k) for k in settings)
            for name, settings in (own.items() if isinstance(own, dict) else [])
            if isinstance(settings, dict)
        }
    return found


def check_emulated_defaults(emulated: Suites) -> None:
    """Refuse ``enabled`` in ``emulated_defaults``: this layer adjusts settings, never suites.

    Raises:
        ValueError: a suite there sets ``enabled`` (pydantic turns it into a located error).
    """
    for name in _names(emulated):
        suite = emulated.get(name)
        if suite is not None and "enabled" in suite.model_fields_set:
            raise ValueError(
                f"emulated_defaults.{name}.enabled: emulated defaults adjust the settings of "
                "suites a target runs and cannot enable or disable one; use 'defaults' or "
                "the target's 'suites'"
            )


def apply_emulated_defaults(
    suites: Suites, emulated: Suites | None, explicit: Mapping[str, frozenset[str]]
) -> tuple[Suites, dict[str, dict[str, Any]]]:
    """Apply ``emulated`` to the enabled ``suites`` of an emulated target.

    Args:
        suites: the target's suites (defaults merged with its own settings).
        emulated: the matrix's ``emulated_defaults`` (None: nothing to apply).
        explicit: suite name -> keys the target wrote itself (:func:`explicit_keys`);
            those keep the target's value.

    Returns:
        (suites, changed): the adjusted suites, and suite -> setting -> new value
        for each setting whose value this layer changed (JSON-able values).
    """
    if emulated is None:
        return suites, {}
    merged: dict[str, dict[str, Any]] = {}
    changed: dict[str, dict[str, Any]] = {}
    for name in _names(suites):
        current = suites.get(name)
        if current is None:
            continue
        settings = current.model_dump()
        layer = emulated.get(name)
        if current.enabled and layer is not None:
            for key in sorted(layer.model_fields_set - {"enabled"} - explicit.get(name, set())):
                value = getattr(layer, key)
                if settings.get(key) != value:
                    settings[key] = value
                    changed.setdefault(name, {})[key] = (
                        list(value) if isinstance(value, tuple) else value
                    )
        merged[name] = settings
    if not changed:
        return suites, {}
    return type(suites).model_validate(merged), changed


def describe_emulated_changes(changed: Mapping[str, Mapping[str, Any]]) -> str:
    """``"blindsig rsa_bits [1024, 2048]; rsa-large bits [2048, 4096]"`` for the plan's output."""
    return "; ".join(
        f"{suite} " + ", ".join(f"{key} {value}" for key, value in settings.items())
        for suite, settings in changed.items()
    )
