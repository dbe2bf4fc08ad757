"""harness_overhead.py --instructions (benchmarks/overhead_programs.py): counted blocks, table.

The counted run itself needs a counting layer (QEMU with archbench's plugin); these are
the pure parts: the order the bare loop runs its groups in (blindsig's counting order),
how its counts are assigned to rows, and the goal column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, load_module


@pytest.fixture(scope="module")
def ov() -> Any:
    return load_module(REPO / "benchmarks" / "overhead_programs.py", "overhead_programs")


def test_bare_loop_runs_cs_then_rsa_sizes_in_one_process_with_the_fixed_keys(ov: Any) -> None:
    groups = ov.count_groups([2048, 1024])
    assert [(s, b) for s, b, _ in groups] == [("CS", 0), ("RSA", 2048), ("RSA", 1024)]
    argv = ov.bare_count_argv(Path("/h"), groups)
    ten7, ten5 = ",".join(["10"] * 7), ",".join(["10"] * 5)
    assert argv == [
        "--count-markers",
        "--count-keys",
        "/h",
        *("cs", ten7, "2"),
        *("rsa", "2048", ten5, "2"),
        *("rsa", "1024", ten5, "2"),
    ]


def test_counts_go_to_their_rows_and_the_warmup_is_dropped(ov: Any) -> None:
    groups = ov.count_groups([1024])
    # Block k counts 1000 * k: CS repetitions 0..2 are blocks 0..20, RSA's 21..35.
    per_block = [1000 * k for k in range(3 * 7 + 3 * 5)]
    ipo, blocks = ov.split_bare_counts(per_block, groups)
    assert blocks["CS key_generation"] == [7000, 14000]
    assert blocks["CS verifying"] == [13000, 20000]
    assert blocks["RSA-1024 key_generation"] == [26000, 31000]
    assert blocks["RSA-1024 verifying"] == [30000, 35000]
    assert ipo["RSA-1024 verifying"] == pytest.approx(3250.0)  # median 32 500 / 10 ops
    assert len(ipo) == 12
    with pytest.raises(ov.BenchmarkError, match="35 counted blocks, expected 36"):
        ov.split_bare_counts(per_block[:-1], groups)


def test_instruction_table_names_rows_outside_half_a_percent(ov: Any) -> None:
    counted = {
        "harness": {
            "CS signing": 70_000.0,
            "RSA-1024 verifying": 1_006_000.0,
            "RSA-1024 key_generation": 2e8,
        },
        "bare": {"CS signing": 70_000.0, "RSA-1024 verifying": 1e6, "RSA-1024 key_generation": 1e8},
        "harness_blocks": {"CS signing": [700_000, 700_000]},
        "bare_blocks": {"CS signing": [690_000, 710_000]},
    }
    lines = ov.format_instructions(counted).splitlines()
    cs, keygen, verify = lines[2], lines[3], lines[4]
    assert cs.startswith("CS signing") and " 1.0000 " in cs and cs.endswith("met")
    assert "2.857%" in cs and "0.000%" in cs  # (710 000 - 690 000) / 700 000
    assert verify.startswith("RSA-1024 verifying") and " 1.0060 " in verify
    assert verify.endswith("MISSED")
    assert keygen.startswith("RSA-1024 key_generation") and keygen.endswith("(random keys)")
