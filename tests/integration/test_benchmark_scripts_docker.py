"""The benchmark scripts that run in containers still build and run (``--run-docker``).

``benchmarks/harness_overhead.py`` compiles the harness and its bare C loop inside a
native image from the checkout; nothing else in the suite builds the bare loop, and it
once stopped compiling unnoticed (an unused helper under ``-Werror``). One round, tiny
blocks, RSA-1024 only: about 20 s on the CI image.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from archbench.platforms import Arch

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the CI image is amd64"),
]


def test_harness_overhead_builds_both_programs_and_prints_every_row(
    slim_amd64_image: str, tmp_path: Path
) -> None:
    raw = tmp_path / "rounds.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "harness_overhead.py"),
            "--image",
            slim_amd64_image,
            "--rsa-bits",
            "1024",
            "--repetitions",
            "1",
            "--max-rounds",
            "1",
            "--raw",
            str(raw),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (round_,) = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    rows = {
        *(f"CS {op}" for op in ("key_generation", "r_derivation", "blinding_secret_derivation")),
        *(f"CS {op}" for op in ("blinding", "signing", "unblinding", "verifying")),
        *(f"RSA-1024 {op}" for op in ("key_generation", "blinding", "signing")),
        *(f"RSA-1024 {op}" for op in ("unblinding", "verifying")),
    }
    assert set(round_["harness"]) == rows and set(round_["bare"]) == rows
    for label in rows:
        # Both programs timed the row with the same block size: one block each, > 0 ns.
        (h_ops, h_ns), (b_ops, b_ns) = round_["harness"][label], round_["bare"][label]
        assert h_ops == b_ops >= 1 and len(h_ns) == len(b_ns) == 1 and min(h_ns + b_ns) > 0
    table = done.stdout.splitlines()
    assert table[0].startswith("row") and sum(line.startswith(tuple(rows)) for line in table) == 12
    assert "pooled 1 keys each" in next(t for t in table if t.startswith("RSA-1024 key_gen"))
