"""Foreign formats word operations with the vocabulary's table; their own spellings are aliases.

:mod:`archbench.upstream.wording` is the only place a parser of a foreign
format (GNUnet's ``perf_crypto_*``, Taler's ``test_helper_*``, the thesis's
LaTeX) finds operation words: the vocabulary's
(:data:`archbench.result.vocabulary.OPERATION_WORDING`) plus named aliases.
"""

from __future__ import annotations

import pytest
from abh.suites.blindsig_rules import RSA_OPERATIONS
from helpers import REPO

from archbench import upstream
from archbench.errors import ResultsError
from archbench.result import HELPER_OPERATIONS, OPERATION_WORDING, TALER_OPERATIONS
from archbench.upstream import reference, scan_log, wording

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
    assert set(wording.RSA_OPERATIONS) == set(RSA_OPERATIONS)
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
    layer = {OPERATION_WORDING[op] for op in TALER_OPERATIONS}
    assert set(wording.THESIS_BLINDSIG_WORDING) | set(helper) | layer == set(
        OPERATION_WORDING.values()
    )
    assert not layer & set(wording.THESIS_BLINDSIG_WORDING)


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
    used |= {"parse_scheme", "add_taler_helper_rows", "add_gnunet_perf_rows"}
    used |= {"import_logs", "LogImport", "parse_duration", "parse_log", "scan_log", "build_rows"}
    assert used <= set(upstream.__all__)
    used = {"load_reference", "main", "SEED_FILE", "printed_to_ns", "build", "parse_seed"}
    used |= {"REFERENCE_DIR", "to_result", "write", "target_name", "SeedTable"}
    assert all(getattr(reference, name) is not None for name in used)
