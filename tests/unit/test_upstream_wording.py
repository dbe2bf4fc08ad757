"""Foreign formats word operations with the vocabulary's table; their own spellings are aliases.

:mod:`archbench.upstream.wording` is the only place a parser of a foreign
format (GNUnet's ``perf_crypto_*``, Taler's ``test_helper_*``, the thesis's
LaTeX) finds operation words: the vocabulary's
(:data:`archbench.result.vocabulary.OPERATION_WORDING`) plus named aliases.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest
from helpers import load_harness

from archbench import upstream
from archbench.errors import ResultsError
from archbench.result.vocabulary import HELPER_OPERATIONS, OPERATION_WORDING
from archbench.upstream import reference, wording
from archbench.upstream.gnunet_log import scan_log

REPO = Path(__file__).resolve().parents[2]
CS_LOG = REPO / "tests" / "fixtures" / "upstream-logs" / "perf_crypto_cs.log"


def test_perf_crypto_cs_aliases_are_its_own_words_for_vocabulary_operations() -> None:
    vocabulary_words = set(OPERATION_WORDING.values())
    for alias, op in wording.PERF_CRYPTO_CS_ALIASES.items():
        assert op in OPERATION_WORDING
        assert alias not in vocabulary_words, f"{alias!r} is vocabulary wording, not an alias"
    table = wording.PERF_CRYPTO_CS_WORDING
    assert set(table.values()) == set(wording.BLINDSIG_OPERATIONS)
    assert len(table) == len(wording.BLINDSIG_OPERATIONS), "one spelling per operation"
    shared = {
        words: op for words, op in table.items() if words not in wording.PERF_CRYPTO_CS_ALIASES
    }
    assert shared == {
        "key generation": "key_generation",
        "r0, r1 derive and R1,R2 calculation": "r_derivation",
    }
    assert all(OPERATION_WORDING[op] == words for words, op in shared.items())


def test_every_perf_crypto_cs_alias_is_read_from_a_log_line() -> None:
    fixture = CS_LOG.read_text(encoding="utf-8")
    for alias, op in wording.PERF_CRYPTO_CS_ALIASES.items():
        line = f"10x {alias} took 12 µs"
        assert line.removesuffix("12 µs") in fixture, f"the fixture log never prints {alias!r}"
        (measurement,) = scan_log(line, "perf_crypto_cs.log").measurements
        assert (measurement.tool, measurement.operation) == ("perf_crypto_cs", op)
        assert measurement.duration.ns == 12_000


def test_vocabulary_wording_perf_crypto_cs_never_prints_is_not_taken_for_it() -> None:
    # GNUnet prints "derive blinding secrets"; the thesis's wording is no perf_crypto_cs line.
    line = f"10x {OPERATION_WORDING['blinding_secret_derivation']} took 12 µs"
    with pytest.raises(ResultsError, match="no timing of perf_crypto_cs"):
        scan_log(line, "perf_crypto_cs.log")


def test_perf_crypto_rsa_words_are_the_vocabulary_for_the_harness_rsa_operations() -> None:
    assert set(wording.RSA_OPERATIONS) == set(load_harness().RSA_OPERATIONS)
    assert {
        OPERATION_WORDING[op]: op for op in wording.RSA_OPERATIONS
    } == wording.PERF_CRYPTO_RSA_WORDING
    for words, op in wording.PERF_CRYPTO_RSA_WORDING.items():
        (measurement,) = scan_log(f"10x 2048-{words} took 34 ms", "x.log").measurements
        assert (measurement.operation, measurement.key_bits) == (op, 2048)


def test_test_helper_kinds_are_the_vocabulary_wording_in_parentheses() -> None:
    assert set(wording.TEST_HELPER_KINDS.values()) == HELPER_OPERATIONS
    for kind, op in wording.TEST_HELPER_KINDS.items():
        assert OPERATION_WORDING[op] == f"{kind} signature operations"
        line = f"100 ({kind}) signature operations took 355 ms"
        (measurement,) = scan_log(line, "test_helper_cs.log").measurements
        assert (measurement.operation, measurement.ops_per_block) == (op, 100)


def test_thesis_tables_use_the_vocabulary_without_aliases() -> None:
    helper = {words: op for op, words in OPERATION_WORDING.items() if op in HELPER_OPERATIONS}
    assert helper == wording.THESIS_HELPER_WORDING
    assert set(wording.THESIS_BLINDSIG_WORDING) | set(helper) == set(OPERATION_WORDING.values())


def test_an_alias_may_not_take_another_operations_wording() -> None:
    with pytest.raises(ValueError, match="'signing' of blinding is the wording of signing"):
        wording.operations_by_wording(["signing"], {"signing": "blinding"})
    assert wording.operations_by_wording(["signing"], {"signing": "signing"}) == {
        "signing": "signing"
    }


def test_the_face_names_what_other_packages_use() -> None:
    for name in upstream.__all__:
        assert getattr(upstream, name) is not None, name
    used = {"scan_files", "parse_setup", "load_setup", "build_result", "describe", "log_paths"}
    used |= {"parse_scheme", "add_taler_helper_rows", "add_gnunet_perf_rows", "GNUNET_PERF_SUITE"}
    used |= {"import_logs", "LogImport", "parse_duration", "parse_log", "scan_log", "build_rows"}
    assert used <= set(upstream.__all__)
    used = {"load_reference", "main", "SEED_FILE", "printed_to_ns", "build", "parse_seed"}
    used |= {"REFERENCE_DIR", "to_result", "write", "target_name", "SeedTable"}
    assert all(getattr(reference, name) is not None for name in used)


def _imports(module: str) -> set[str]:
    """The ``archbench`` modules ``module`` imports when it is loaded (not in functions)."""
    path = REPO / (module.replace(".", "/") + ".py")
    if not path.is_file():
        path = path.with_suffix("") / "__init__.py"
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            # ``from P import sub`` of a submodule imports ``P.sub``; of a name, ``P``.
            subs = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [n for n in subs if _is_module(n)]
            names = modules + ([node.module] if len(modules) < len(subs) else [])
        found |= {name for name in names if name.startswith("archbench") and _is_module(name)}
    return found


def _is_module(name: str) -> bool:
    path = REPO / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_split_modules_import_no_cycle() -> None:
    ours = ["archbench.upstream", "archbench.upstream.reference"]
    ours += [f"archbench.upstream.{p.stem}" for p in (REPO / "archbench" / "upstream").glob("*.py")]
    ours.remove("archbench.upstream.__init__")
    graph: dict[str, set[str]] = {}
    todo = list(ours)
    while todo:
        module = todo.pop()
        if module not in graph:
            graph[module] = _imports(module)
            todo += graph[module]
    assert {"archbench.result.vocabulary", "archbench.result"} <= set(graph)
    # Raises graphlib.CycleError naming the cycle.
    order = list(graphlib.TopologicalSorter(graph).static_order())
    assert order.index("archbench.upstream.wording") < order.index("archbench.upstream")
