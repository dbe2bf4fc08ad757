"""The harness contract's JSON schema, generated from the host's result models.

``harness/schema-v1.json`` is this module's output: the harness document is
described once, by :class:`archbench.result.HarnessDocument`, and both sides
are tested against the schema (the harness's documents in
``tests/unit/test_harness_document.py``, the host's models in
``tests/unit/test_results_contract.py``). Regenerate after changing a model::

    python -m archbench.result.contract > harness/schema-v1.json

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from archbench import REPO_ROOT
from archbench.result.document import HarnessDocument

SCHEMA_FILE: Final = REPO_ROOT / "harness" / "schema-v1.json"


def harness_schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of an ``archbench-harness`` version 1 document."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **HarnessDocument.model_json_schema(),
        "title": "archbench-harness document, version 1 (see harness/CONTRACT.md)",
    }


def schema_text() -> str:
    """:func:`harness_schema` as the checked-in file spells it (two-space indent, newline)."""
    return json.dumps(harness_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
