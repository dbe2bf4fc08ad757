"""``invoke history``: the series, the rounds' orders, the manifest and the history's tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import result, row
from hypothesis import given
from hypothesis import strategies as st

from archbench.cli.history import round_orders, series_of, version_label, versions_of
from archbench.errors import MatrixError, ResultsError
from archbench.matrix import parse_gnunet, parse_taler
from archbench.report import history_steps, render_history_markdown, render_steps_markdown
from archbench.report.history import block_series, version_titles
from archbench.result import (
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    Result,
    ResultStore,
    new_run_id,
)

SHA = "ab" * 32
T27 = parse_gnunet(f"/x/gnunet-0.27.0.tar.gz@sha256:{SHA}")
DEBIAN = parse_gnunet("debian")


def test_sources_and_bases_pair_up_or_broadcast() -> None:
    assert versions_of([DEBIAN, T27], []) == [(DEBIAN, None), (T27, None)]
    bases = ["debian-bookworm", "debian-trixie"]
    assert versions_of([DEBIAN], bases) == [(DEBIAN, bases[0]), (DEBIAN, bases[1])]
    assert versions_of([], bases) == [(None, bases[0]), (None, bases[1])]
    assert versions_of([DEBIAN, T27], bases) == [(DEBIAN, bases[0]), (T27, bases[1])]


@pytest.mark.parametrize(
    ("sources", "bases", "message"),
    [
        ([], [], "needs a series"),
        ([DEBIAN], [], "at least two versions"),
        ([DEBIAN, T27], ["a", "b", "c"], "--gnunet has 2 entries and the other list 3"),
    ],
)
def test_a_series_that_cannot_be_measured_is_refused(
    sources: list[object], bases: list[str], message: str
) -> None:
    with pytest.raises(MatrixError, match=message):
        versions_of(sources, bases)  # type: ignore[arg-type]


def test_the_same_version_twice_is_an_a_a_series() -> None:
    # The noise floor of the machine: both measured, in rounds, as two runs.
    assert versions_of([DEBIAN, DEBIAN], []) == [(DEBIAN, None), (DEBIAN, None)]


def test_labels_name_the_source_and_the_base() -> None:
    assert version_label(T27, None) == "gnunet-0.27.0.tar.gz"
    assert version_label(DEBIAN, "debian-trixie") == "Debian's libgnunet on debian-trixie"
    assert version_label(parse_gnunet("git+https://h/g.git@v0.22.2"), None) == "git v0.22.2"


@given(
    st.lists(st.text("abcdef", min_size=1, max_size=4), min_size=2, max_size=6, unique=True),
    st.integers(1, 30),
    st.integers(0, 2**31 - 1),
)
def test_every_round_runs_every_version_once_and_the_seed_tells_the_order(
    run_ids: list[str], rounds: int, seed: int
) -> None:
    orders = round_orders(run_ids, rounds, seed)
    assert len(orders) == rounds
    assert all(sorted(o) == sorted(run_ids) for o in orders)
    assert round_orders(run_ids, rounds, seed) == orders


def test_the_order_varies_between_rounds() -> None:
    # Over 20 rounds of two versions, each comes first in some round: neither is
    # always the one that runs on a machine that has just warmed up.
    firsts = {o[0] for o in round_orders(["a", "b"], 20, 7)}
    assert firsts == {"a", "b"}


def _manifest(run_a: str, run_b: str) -> HistoryManifest:
    session = new_run_id()
    return HistoryManifest(
        history_id=session,
        created_at="2026-12-02T00:00:00Z",
        matrix_file="matrix.yml",
        matrix_text="version: 1\n",
        targets=("amd64-trixie",),
        rounds=2,
        seed=7,
        versions=(
            HistoryVersion(label="Debian's", gnunet="debian", run_id=run_a, session=session),
            HistoryVersion(
                label="0.27.0", gnunet="/x@sha256:" + SHA, run_id=run_b, session=new_run_id()
            ),
        ),
        order=(HistoryRound(session=session, round=1, order=(run_a,)),),
    )


def test_the_manifest_is_stored_beside_the_runs_and_read_back(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    manifest = _manifest(new_run_id(), new_run_id())
    path = store.save_history(manifest)
    assert path == tmp_path / manifest.history_id / "history.json"
    assert store.load_history(manifest.history_id) == manifest
    assert store.histories() == [manifest.history_id]
    with pytest.raises(ResultsError, match="no history 'x1'"):
        store.load_history("x1")
    with pytest.raises(ResultsError, match="is not a run id"):
        store.load_history("../etc")


def _counted(run_id: str, count: int) -> Result:
    r = result("amd64-trixie", "amd64", "x86_64", "cpu", [row("CS", "signing", [10, 10, 10])])
    counted = r.harness.rows[0].model_copy(update={"instructions": (count, count + 10, count)})
    return r.model_copy(
        update={
            "run_id": run_id,
            "metric": "instructions",
            "harness": r.harness.model_copy(update={"rows": (counted,)}),
        }
    )


def test_the_tables_give_each_version_and_its_ratio_to_the_first() -> None:
    a, b = new_run_id(), new_run_id()
    manifest = _manifest(a, b)
    text = render_history_markdown(manifest, {a: [_counted(a, 10_000)], b: [_counted(b, 12_000)]})
    assert "- v1: Debian's (run " in text
    assert "(another session: not interleaved)" in text.splitlines()[2]
    assert "### Instructions per operation" in text
    # ops_per_block of helpers.row is 10: 10 000 instructions per block is 1 000 per op.
    line = next(x for x in text.splitlines() if "CS signing" in x)
    assert "| 1 000 " in line and "| 1 200 (1.200×)" in line


def test_a_count_that_steps_is_found_with_its_versions() -> None:
    a, b = new_run_id(), new_run_id()
    manifest = _manifest(a, b)
    results = {a: [_counted(a, 10_000)], b: [_counted(b, 12_000)]}
    steps = history_steps(manifest, results)
    assert [(arch, key.operation, step.metric) for arch, key, step in steps] == [
        ("amd64", "signing", "instructions")
    ]
    (_, _, step) = steps[0]
    assert (step.before, step.after) == ("Debian's", "0.27.0")
    assert step.ratio == pytest.approx(1.2, rel=1e-3)
    text = render_steps_markdown(steps)
    assert "| amd64  | CS signing | instructions | Debian's → 0.27.0 | 1.200×" in text
    # The same count on both sides is no step.
    same = {a: [_counted(a, 10_000)], b: [_counted(b, 10_000)]}
    assert history_steps(manifest, same) == []
    assert "No row steps across the series" in render_steps_markdown([])
    said = render_steps_markdown(steps, alone=2)
    assert "0 timed step(s) under Benjamini–Hochberg control" in said
    assert "(2 by the pairs' own intervals alone)" in said


def test_an_exchange_series_pairs_with_the_gnunet_and_base_series() -> None:
    ex = [
        parse_taler(f"/t/taler-exchange-{v}.tar.gz@sha256:{'a' * 64}") for v in ("0.9.2", "0.14.0")
    ]
    bases = ["debian-bookworm", "debian-trixie"]
    triples = series_of([DEBIAN, T27], bases, ex)
    assert triples == [(DEBIAN, bases[0], ex[0]), (T27, bases[1], ex[1])]
    # An exchange series alone is a series; one GNUnet goes with every exchange.
    assert series_of([], [], ex) == [(None, None, ex[0]), (None, None, ex[1])]
    assert series_of([T27], [], ex) == [(T27, None, ex[0]), (T27, None, ex[1])]
    assert series_of([DEBIAN, T27], [], []) == [(DEBIAN, None, None), (T27, None, None)]
    with pytest.raises(MatrixError, match=r"--taler has 2 entries and the other lists 3"):
        series_of([DEBIAN, T27, T27], [], ex)
    with pytest.raises(MatrixError, match=r"at least two versions"):
        series_of([], [], ex[:1])
    assert (
        version_label(T27, "debian-trixie", ex[1])
        == "taler-exchange-0.14.0.tar.gz with gnunet-0.27.0.tar.gz on debian-trixie"
    )


def _secmod(run_id: str, exchange: str, gnunet: str, ms: list[float]) -> Result:
    """A timed result of the taler-helper suite: CS's 100 sequential signatures per block."""
    r = result("amd64-taler", "amd64", "x86_64", "cpu", [])
    sequential = row("CS", "helper_sequential_signing", [int(x * 1e6) for x in ms])
    sequential = sequential.model_copy(update={"suite": "security-module", "ops_per_block": 100})
    setup = r.harness.setup.model_copy(
        update={"tools": {"taler-exchange": exchange, "gnunet (exchange's)": gnunet}}
    )
    assert r.execution is not None
    source = {"kind": "tarball", "version": exchange, "sha256": SHA}
    return r.model_copy(
        update={
            "run_id": run_id,
            "execution": r.execution.model_copy(update={"taler_source": source}),
            "harness": r.harness.model_copy(update={"rows": (sequential,), "setup": setup}),
        }
    )


def test_an_exchange_series_is_named_by_exchange_and_gnunet_and_shown_per_block() -> None:
    a, b = new_run_id(), new_run_id()
    manifest = _manifest(a, b)
    results = {
        a: [_secmod(a, "0.9.2", "0.19.3", [7, 8, 6, 7, 9, 7])],
        b: [_secmod(b, "0.14.0", "0.22.2", [14, 16, 12, 14, 18, 14])],
    }
    assert version_titles(manifest, results) == {
        a: "exchange 0.9.2 + GNUnet 0.19.3",
        b: "exchange 0.14.0 + GNUnet 0.22.2",
    }
    text = render_history_markdown(manifest, results)
    assert "- v1: exchange 0.9.2 + GNUnet 0.19.3 (Debian's; run " in text
    # Per block in ms, as the thesis prints it: median [95 % interval of six blocks: the
    # smallest and largest] (n), and the ratio of the medians to v1.
    blocks = text[text.index("### Security module per block (native targets)") :]
    line = next(x for x in blocks.splitlines() if x.startswith("| amd64-taler | CS helper seq"))
    assert "| 7 ms [6, 9] (n=6) " in line and "| 14 ms [12, 18] (n=6) (2.000×) |" in line
    # Fewer than six blocks: no interval, the count says why.
    few = {a: [_secmod(a, "0.9.2", "0.19.3", [7, 8])], b: []}
    cells = block_series(manifest, few)
    (cell,) = (c for by_run in cells.values() for c in by_run.values())
    assert cell.interval_ms is None and cell.text == "8 ms (n=2)"  # 7.5, as the appendix rounds
    # Without results a version keeps its label; the same title twice is told apart.
    assert version_titles(manifest, few)[b] == "0.27.0"
    twice = {a: results[a], b: [_secmod(b, "0.9.2", "0.19.3", [7] * 6)]}
    assert version_titles(manifest, twice)[b] == "exchange 0.9.2 + GNUnet 0.19.3 #2"
