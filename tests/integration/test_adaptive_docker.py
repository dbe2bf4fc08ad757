"""Adaptive repetitions, intervals, stop reasons and noise readings in a real amd64 container.

The ci-amd64 target of matrix-ci.yml (the shared native image: base and
profile as the other integration tests) with tiny parameters: CS and RSA-1024,
2 operations per block, a loose ±50 % target so that it can stop on this
noisy machine, and at most 10 repetitions.
"""

from __future__ import annotations

import re
from pathlib import Path

import docker
import pytest
from helpers import CI_MATRIX, WORK, Recorder

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.report.frame import tidy_frame
from archbench.result import ResultStore
from archbench.result import load as load_result

pytestmark = pytest.mark.docker


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the native target is amd64")
def test_adaptive_rows_report_intervals_stop_reasons_and_noise(tmp_path: Path) -> None:
    client: docker.DockerClient = engine.connect()
    matrix = load(CI_MATRIX)
    host = engine.engine_arch(client)
    overrides: dict[str, object] = {
        "ci_target": 0.5,
        "max_repetitions": 10,
        "min_repetitions": 6,
        "seed": 12345,
    }
    plans = pipeline.plan(matrix, matrix.select(["ci-amd64"]), {"local": host}, overrides)
    ws = pipeline.Workspace(
        store=ResultStore(tmp_path), run_id="20261201T000000Z-adapt", work_dir=WORK
    )
    recorder = Recorder()
    (outcome,) = pipeline.execute({"local": client}, plans, ws, {"local": host}, reporter=recorder)
    assert outcome.ok, outcome.message
    assert outcome.result_path is not None
    result = load_result(outcome.result_path)
    params = result.harness.parameters
    assert params is not None
    assert (params.ci_target, params.order, params.order_seed) == (0.5, "interleaved", 12345)
    rows = [r for r in result.harness.rows if r.suite == "blindsig"]
    assert len(rows) == 7 + 5
    by_pair: dict[tuple[str, int | None], set[str]] = {}
    for row in rows:
        assert row.valid, row.invalid_reason
        assert 6 <= len(row.samples_ns) <= 10
        assert row.median_ci is not None
        per_op = sorted(x / row.ops_per_block for x in row.samples_ns)
        assert per_op[0] <= row.median_ci.low_per_op_ns <= row.median_ci.high_per_op_ns
        assert row.median_ci.high_per_op_ns <= per_op[-1]
        if row.operation == "key_generation":
            # Leaves the loop after min_repetitions (test below).
            assert len(row.samples_ns) == 6
            assert row.stop_reason in ("target", "keygen_cap")
            assert row.ci_reached is (True if row.stop_reason == "target" else None)
            continue
        assert row.stop_reason in ("target", "repetitions")
        by_pair.setdefault((row.scheme, row.key_bits), set()).add(row.stop_reason)
        assert row.ci_reached is (row.median_ci.half_width <= 0.5)
        if row.stop_reason == "target":
            assert row.ci_reached
        else:
            assert len(row.samples_ns) == 10
        noise = row.noise
        assert noise is not None
        assert noise.repetitions == len(row.samples_ns)
        assert noise.steal is not None and 0 <= noise.steal <= 1
        assert noise.load_max is not None and noise.load_max >= 0
        assert noise.involuntary_switches is not None
    # One stop reason per scheme and size: a repetition runs all its other operations.
    assert all(len(reasons) == 1 for reasons in by_pair.values())
    frame = tidy_frame([result])
    assert frame["stop_reason"].notna().all()
    assert frame["per_op_ns_ci_low"].notna().all()
    assert (frame["ci_target"] == 0.5).all()
    assert set(frame["order"]) == {"interleaved"}
    # The live display: 10 is a cap the interval may undercut, never "k of 10".
    texts = [text for text, _ in recorder.progressed]
    timed = [t for t in texts if re.search(r"(?<!warmup) repetition \d", t)]
    assert timed, texts[-5:]
    assert all(re.search(r" repetition \d+ \(≤ 10\), ", t) for t in timed), timed[:5]


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the native target is amd64")
@pytest.mark.parametrize("fresh_items", [False, True], ids=["repeated", "fresh-items"])
def test_key_generation_leaves_after_min_repetitions_on_reused_keys(
    tmp_path: Path, fresh_items: bool
) -> None:
    """A target no row can reach (±0.1 %): key generation gets exactly min_repetitions
    blocks, the other rows run to max_repetitions on its kept keys, and every signature
    made with those keys still verifies (the rows are valid)."""
    client: docker.DockerClient = engine.connect()
    matrix = load(CI_MATRIX)
    host = engine.engine_arch(client)
    overrides: dict[str, object] = {
        "ci_target": 0.001,
        "max_repetitions": 9,
        "min_repetitions": 6,
        "fresh_items": fresh_items,
    }
    plans = pipeline.plan(matrix, matrix.select(["ci-amd64"]), {"local": host}, overrides)
    ws = pipeline.Workspace(
        store=ResultStore(tmp_path), run_id="20261201T000000Z-keygen", work_dir=WORK
    )
    (outcome,) = pipeline.execute({"local": client}, plans, ws, {"local": host})
    assert outcome.ok, outcome.message
    assert outcome.result_path is not None
    result = load_result(outcome.result_path)
    params = result.harness.parameters
    assert params is not None and params.fresh_items is fresh_items
    rows = [r for r in result.harness.rows if r.suite == "blindsig"]
    assert len(rows) == 7 + 5
    for pair in (("CS", None), ("RSA", 1024)):
        pair_rows = {r.operation: r for r in rows if (r.scheme, r.key_bits) == pair}
        keygen = pair_rows.pop("key_generation")
        assert keygen.valid, keygen.invalid_reason
        assert len(keygen.samples_ns) == 6, pair
        assert keygen.noise is not None and keygen.noise.repetitions == 6
        assert keygen.median_ci is not None and keygen.median_ci.half_width > 0
        if keygen.stop_reason == "keygen_cap":
            assert keygen.ci_reached is None
            assert keygen.note is not None
            assert "other 3 repetitions reused its last keys" in keygen.note
        else:  # within ±0.1 % by chance: possible in principle, never seen
            assert (keygen.stop_reason, keygen.ci_reached) == ("target", True)
        for row in pair_rows.values():
            assert row.valid, row.invalid_reason  # signed, unblinded, verified on kept keys
            assert len(row.samples_ns) == 9, (pair, row.operation)
            assert (row.stop_reason, row.ci_reached) == ("repetitions", False)
            assert row.noise is not None and row.noise.repetitions == 9
            assert row.note is None
