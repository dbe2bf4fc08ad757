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
from helpers import Recorder

from archbench import engine, pipeline
from archbench.export import tidy_frame
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.results import ResultStore
from archbench.results import load as load_result

HERE = Path(__file__).resolve().parent
WORK = HERE.parents[1] / ".archbench" / "work"

pytestmark = pytest.mark.docker


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the native target is amd64")
def test_adaptive_rows_report_intervals_stop_reasons_and_noise(tmp_path: Path) -> None:
    client: docker.DockerClient = engine.connect()
    matrix = load(HERE / "matrix-ci.yml")
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
        assert row.stop_reason in ("target", "repetitions")
        by_pair.setdefault((row.scheme, row.key_bits), set()).add(row.stop_reason)
        assert row.median_ci is not None
        per_op = sorted(x / row.ops_per_block for x in row.samples_ns)
        assert per_op[0] <= row.median_ci.low_per_op_ns <= row.median_ci.high_per_op_ns
        assert row.median_ci.high_per_op_ns <= per_op[-1]
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
    # One stop reason per scheme and size: a repetition runs all its operations.
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
