"""Where a counted row's instructions went when it moved: history steps, bisection moves,
their tables, ``bisect.json``'s ``moves``, the results page and the differential figure."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from helpers import synthetic_history
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.patches import Rectangle

from archbench.analysis import Graph, arch_state
from archbench.cli.bisect import graph_of, steps_of
from archbench.report import (
    bisect_moved,
    bisect_moves,
    history_moves,
    history_steps,
    move_lines,
    write_history_files,
)
from archbench.report.moved import (
    NO_ATTRIBUTION,
    Moved,
    differentials,
    function_moves,
    moves_frame,
    render_moves_markdown,
)
from archbench.report.page import assemble
from archbench.result import (
    BisectCommit,
    BisectCount,
    BisectManifest,
    BisectMove,
    BisectStep,
    FunctionCount,
    FunctionMove,
    HistoryManifest,
    Result,
    Row,
)

OTHER = "(other functions)"


def fc(library: str, function: str, n: float) -> FunctionCount:
    return FunctionCount(library=library, function=function, instructions_per_op=n)


@st.composite
def attributions(draw: st.DrawFn) -> tuple[list[FunctionCount], list[FunctionCount]]:
    """Two runs' attribution of one row: functions of a few libraries (some only on one
    side, sonames that differ between the sides) and each side's remainder."""
    names = draw(st.lists(st.sampled_from("fghijklm"), min_size=1, max_size=8, unique=True))
    sides: list[list[FunctionCount]] = [[], []]
    for name in names:
        lib = draw(st.sampled_from(["libsodium", "libgcrypt", "libgnunetutil"]))
        for k in (0, 1):
            if draw(st.booleans()):
                soname = f"{lib}.so.{draw(st.integers(1, 30))}"
                sides[k].append(fc(soname, name, draw(st.integers(0, 10**6))))
    for k in (0, 1):
        sides[k].append(fc("", OTHER, draw(st.integers(0, 10**5))))
    return sides[0], sides[1]


@given(attributions(), st.integers(1, 20))
def test_function_moves_are_each_functions_change_largest_first_with_its_share(
    sides: tuple[list[FunctionCount], list[FunctionCount]], limit: int
) -> None:
    a, b = sides

    def per_function(side: list[FunctionCount]) -> dict[tuple[str, str], float]:
        out: dict[tuple[str, str], float] = {}
        for f in side:
            if f.function != OTHER:
                key = (f.library.partition(".so.")[0] + ".so", f.function)
                out[key] = out.get(key, 0.0) + f.instructions_per_op
        return out

    before, after = per_function(a), per_function(b)
    total = sum(f.instructions_per_op for f in b) - sum(f.instructions_per_op for f in a)
    moved = function_moves(a, b, limit)
    expected = {
        k: after.get(k, 0.0) - before.get(k, 0.0)
        for k in {*before, *after}
        if after.get(k, 0.0) != before.get(k, 0.0)
    }
    assert len(moved) == min(limit, len(expected))
    for f in moved:
        assert f.change == pytest.approx(expected[(f.library, f.function)])
        assert f.change == pytest.approx(f.after - f.before)
        if total:
            assert f.share is not None and f.share * total == pytest.approx(f.change)
        else:
            assert f.share is None
    changes = [abs(f.change) for f in moved]
    assert changes == sorted(changes, reverse=True)
    # Nothing larger was left out.
    listed = {(f.library, f.function) for f in moved}
    assert all(abs(c) <= min(changes) for k, c in expected.items() if k not in listed)
    if len(moved) == len(expected):  # every function listed: they and the rest sum up
        rest = b[-1].instructions_per_op - a[-1].instructions_per_op
        assert sum(f.change for f in moved) + rest == pytest.approx(total)


A_FUNCS = (
    fc("libgcrypt.so.20.4.1", "(no symbol) after gcry_is_secure", 60_000),
    fc("libgnunetutil.so.15.0.0", "GNUNET_CRYPTO_cs_sign_derive", 60),
    fc("libc.so.6", "free", 400),
    fc("", OTHER, 100),
)
B_FUNCS = (
    fc("libsodium.so.23.3.0", "(no symbol) after crypto_hash_sha512_statebytes", 19_500),
    fc("libgnunetutil.so.17.0.0", "GNUNET_CRYPTO_cs_sign_derive", 57),
    fc("libc.so.6", "free", 400),
    fc("", OTHER, 120),
)


def _attributed(results: list[Result], funcs: tuple[FunctionCount, ...], arch: str) -> None:
    """Give CS signing of ``arch``'s counting result the attribution ``funcs`` (in place)."""
    for i, r in enumerate(results):
        if r.metric != "instructions" or r.target.arch != arch:
            continue
        rows = tuple(
            x.model_copy(update={"attribution": funcs})
            if (x.scheme, x.operation) == ("CS", "signing")
            else x
            for x in r.harness.rows
        )
        results[i] = r.model_copy(update={"harness": r.harness.model_copy(update={"rows": rows})})


def _history() -> tuple[HistoryManifest, dict[str, list[Result]]]:
    manifest, results = synthetic_history()
    first, second = (v.run_id for v in manifest.versions)
    _attributed(results[first], A_FUNCS, "amd64")
    _attributed(results[second], B_FUNCS, "amd64")
    return manifest, results


def test_every_counted_step_of_a_history_names_its_functions_per_architecture() -> None:
    manifest, results = synthetic_history()
    first, second = (v.run_id for v in manifest.versions)
    _attributed(results[first], A_FUNCS, "amd64")
    _attributed(results[second], B_FUNCS, "amd64")
    steps = history_steps(manifest, results)
    moves = history_moves(manifest, results, steps)
    # 10 % more instructions in v2 on both architectures, four rows: a step each.
    assert {(m.arch, m.row) for m in moves} == {
        (a, r)
        for a in ("amd64", "riscv64")
        for r in ("CS signing", "CS verifying", "RSA-2048 signing", "RSA-2048 verifying")
    }
    (signing,) = [m for m in moves if m.arch == "amd64" and m.row == "CS signing"]
    assert signing.before_label == "v1 Debian's libgnunet"
    assert signing.after_label == "v2 gnunet-0.27.0.tar.gz"
    assert (signing.before, signing.after) == (30_000.0, 33_000.0)
    assert [(f.library, f.function, f.change) for f in signing.functions] == [
        ("libgcrypt.so", "(no symbol) after gcry_is_secure", -60_000),
        ("libsodium.so", "(no symbol) after crypto_hash_sha512_statebytes", 19_500),
        ("libgnunetutil.so", "GNUNET_CRYPTO_cs_sign_derive", -3),
    ]
    # riscv64's rows were counted without attribution: a note, no functions.
    riscv = [m for m in moves if m.arch == "riscv64"]
    assert all(not m.functions and m.note == NO_ATTRIBUTION for m in riscv)
    lines = move_lines([signing])
    assert lines[0] == (
        "where CS signing moved on amd64, v1 Debian's libgnunet → v2 gnunet-0.27.0.tar.gz "
        "(+3,000 instructions per operation, 1.1000×):"
    )
    assert "-60,000" in lines[1] and "libgcrypt.so  (no symbol) after gcry_is_secure" in lines[1]


def test_a_historys_report_files_hold_the_functions_of_each_step(tmp_path: Path) -> None:
    manifest, results = _history()
    moves = history_moves(manifest, results)
    paths = write_history_files(manifest, tmp_path, markdown="# tables\n", moves=moves)
    stem = f"history-{manifest.history_id}"
    assert [p.name for p in paths] == [f"{stem}.md", f"{stem}-functions.csv"]
    text = paths[0].read_text()
    assert text.startswith("# tables\n")
    assert "### Where the instructions went at each counted step" in text
    # The share is of the attributed totals' change (60,560 -> 20,077 here).
    assert (
        "| amd64  | CS signing | v1 Debian's libgnunet → v2 gnunet-0.27.0.tar.gz | 1   | "
        "libgcrypt.so     | (no symbol) after gcry_is_secure                | -60,000  | "
        "148.2%  | 60,000 → 0       |"
    ) in text
    assert "- riscv64 CS signing, v1 Debian's libgnunet → v2 gnunet-0.27.0.tar.gz: no per" in text
    rows = list(csv.DictReader(io.StringIO(paths[1].read_text())))
    assert len(rows) == 3 and rows[0]["function"] == "(no symbol) after gcry_is_secure"
    assert float(rows[0]["change"]) == -60_000 and float(rows[0]["share"]) == 1.4821
    assert (rows[0]["row_before"], rows[0]["row_after"]) == ("30000.0", "33000.0")


def test_names_from_results_files_are_escaped_in_the_markdown() -> None:
    f = FunctionMove(
        library="lib|x.so", function="<b>f</b>", before=1, after=3, change=2, share=1.0
    )
    text = render_moves_markdown([Moved("amd64", "CS signing", "a", "b", 10, 12, (f,))])
    assert "lib\\|x.so" in text and "<b>" not in text
    assert render_moves_markdown([]) == ""
    assert moves_frame([]).empty


# --- bisections ---------------------------------------------------------------------

RUNS = [f"2026120{i}T000000Z-aaaaa{i}" for i in range(1, 6)]


def _commit(i: int) -> BisectCommit:
    return BisectCommit(
        commit=f"{i:x}" * 40, parents=(i - 1,) if i else (), subject=f"c{i}", date="2026-01-0"
    )


def _manifest(levels: dict[int, float | None]) -> BisectManifest:
    """Five commits in a chain; ``levels``: commit -> count on amd64 (None: did not build),
    measured in the dict's order, each step a run of its own."""
    steps = []
    for k, (i, level) in enumerate(levels.items()):
        count = BisectCount(
            arch="amd64",
            target="ci-amd64",
            run_id=RUNS[k],
            instructions=level,
            skipped=None if level else "build: no",
        )
        steps.append(
            BisectStep(
                index=i, commit=_commit(i).commit, subject=f"c{i}", date="2026-01-01",
                counts=(count,), seconds=1.0, finished_at="2026-01-01T00:00:00Z",
            )
        )  # fmt: skip
    return BisectManifest(
        bisect_id="20261203T000000Z-bbbbbb",
        created_at="2026-12-03T00:00:00Z",
        matrix_file="matrix.yml",
        matrix_text="version: 1\n",
        repository="file:///srv/gnunet.git",
        good="v0.22.2",
        bad="bisect-test",
        row="CS signing",
        scheme="CS",
        operation="signing",
        targets={"amd64": "ci-amd64"},
        commits=tuple(_commit(i) for i in range(5)),
        steps=tuple(steps),
    )


def _moves(
    manifest: BisectManifest, funcs: dict[str, tuple[FunctionCount, ...] | None]
) -> tuple[tuple[BisectMove, ...], list[tuple[str, str]]]:
    graph = graph_of(manifest)
    states = [arch_state(graph, "amd64", steps_of(manifest))]
    asked: list[tuple[str, str]] = []

    def row_of(run_id: str, target: str) -> Row | None:
        asked.append((run_id, target))
        if run_id not in funcs:
            return None
        return Row.model_validate(
            {
                "suite": "blindsig",
                "scheme": "CS",
                "key_bits": None,
                "operation": "signing",
                "ops_per_block": 1,
                "samples_ns": [1],
                "valid": True,
                "instructions": [100],
                "attribution": funcs[run_id],
            }
        )

    return bisect_moves(manifest, states, Graph(graph.parents), row_of), asked


def test_a_bisection_move_pairs_the_first_new_commit_with_its_good_parent() -> None:
    # good 0, bad 4, then 2 (bad level), 1 (good level): the move is at 2, after 1.
    manifest = _manifest({0: 100.0, 4: 150.0, 2: 150.0, 1: 100.0})
    (move,), asked = _moves(manifest, {RUNS[3]: A_FUNCS, RUNS[2]: B_FUNCS})
    assert asked == [(RUNS[3], "ci-amd64"), (RUNS[2], "ci-amd64")]
    assert (move.arch, move.commit, move.neighbour, move.exact) == (
        "amd64", _commit(2).commit, _commit(1).commit, True,
    )  # fmt: skip
    assert (move.before_run, move.after_run, move.before, move.after) == (
        RUNS[3], RUNS[2], 100.0, 150.0,
    )  # fmt: skip
    assert move.functions == function_moves(A_FUNCS, B_FUNCS)
    # Stored in bisect.json and read back; a record from before moves were stored loads.
    stored = manifest.model_copy(update={"moves": (move,)})
    again = BisectManifest.model_validate(json.loads(stored.model_dump_json()))
    assert again.moves == (move,)
    assert BisectManifest.model_validate(json.loads(manifest.model_dump_json())).moves == ()
    (moved,) = bisect_moved(again)
    assert (moved.before_label, moved.after_label) == ("1" * 12, "2" * 12)
    assert move_lines([moved])[0].startswith("where CS signing moved on amd64, 111111111111 → ")


def test_a_move_behind_skipped_commits_is_marked_and_one_without_attribution_says_so() -> None:
    # 1 does not build, 2 is at the new level: the move is in 1..2, after good 0.
    manifest = _manifest({0: 100.0, 4: 150.0, 2: 150.0, 1: None})
    (move,), _ = _moves(manifest, {})
    assert (move.commit, move.neighbour, move.exact) == (
        _commit(2).commit,
        _commit(0).commit,
        False,
    )
    assert move.functions == () and move.note == NO_ATTRIBUTION
    (moved,) = bisect_moved(manifest.model_copy(update={"moves": (move,)}))
    assert moved.after_label == "…" + "2" * 12
    # A row that never moved has no move; an unfinished search none either.
    assert _moves(_manifest({0: 100.0, 4: 100.0}), {})[0] == ()
    assert _moves(_manifest({0: 100.0, 4: 150.0}), {})[0] == ()


def test_the_page_shows_a_bisections_outcome_functions_and_figure() -> None:
    manifest = _manifest({0: 100.0, 4: 150.0, 2: 150.0, 1: 100.0})
    moves, _ = _moves(manifest, {RUNS[3]: A_FUNCS, RUNS[2]: B_FUNCS})
    stored = manifest.model_copy(update={"moves": moves, "outcome": "amd64: first moved at x"})
    page = assemble([], bisections=[stored])
    (section,) = page.bisections
    assert section.outcome == ("amd64: first moved at x",)
    (table,) = section.tables
    assert table.title == "Where the instructions went at each move"
    assert [c.text for c in table.cells[0][:3]] == [
        "libgcrypt.so", "(no symbol) after gcry_is_secure", "-60,000",
    ]  # fmt: skip
    (figure,) = page.differentials
    assert [m.arch for m in figure.moves] == ["amd64"]


def test_the_page_shows_each_history_steps_functions() -> None:
    manifest, results = _history()
    page = assemble([], [(manifest, results)])
    (history,) = page.histories
    table = history.tables[-1]
    assert table.title == "Where the instructions went at each counted step"
    assert table.rows[0] == (
        "amd64 · CS signing · v1 Debian's libgnunet → v2 gnunet-0.27.0.tar.gz · 1"
    )
    # One figure: the one step with functions (riscv64's have none, so no panel).
    (figure,) = history.differentials
    assert figure.title == (
        "Where the instructions went: CS signing, v1 Debian's libgnunet → v2 gnunet-0.27.0.tar.gz"
    )
    assert differentials([], "x") == []


# --- the differential figure --------------------------------------------------------


def test_the_differential_figure_draws_each_functions_change_and_the_rest() -> None:
    from archbench.report import plots

    functions = function_moves(A_FUNCS, B_FUNCS)
    moves = [
        Moved("amd64", "CS signing", "v1", "v2", 60_560, 20_077, functions),
        Moved("riscv64", "CS signing", "v1", "v2", 1.0, 2.0, (), NO_ATTRIBUTION),
    ]
    fig = plots.differential_figure(moves, "Where the instructions went: CS signing")
    amd, riscv = fig.axes
    bars = [p.get_width() for p in amd.patches if isinstance(p, Rectangle)]
    assert bars == [-60_000, 19_500, -3, pytest.approx(20)]  # + the rest: the row's change
    assert sum(bars) == pytest.approx(20_077 - 60_560)
    ticks = [t.get_text() for t in amd.get_yticklabels()]
    assert ticks[0] == "(no symbol) after gcry_is_secure\nlibgcrypt.so"
    assert ticks[-1] == plots.REST_OF_CHANGE
    assert "instructions per operation" in amd.get_xlabel()
    assert [p.get_facecolor()[:3] for p in amd.patches][:2] != [(0, 0, 0)] * 2
    assert NO_ATTRIBUTION in [t.get_text() for t in riscv.texts]
    assert amd.get_title(loc="left").startswith("amd64: CS signing\nv1 → v2\n60,560 → 20,077")
    png = plots.figure_png(fig)
    again = plots.figure_png(
        plots.differential_figure(moves, "Where the instructions went: CS signing")
    )
    assert png.startswith(b"\x89PNG") and png == again  # the page redraws it byte for byte
    with pytest.raises(ValueError, match="no move"):
        plots.differential_figure([], "x")
    assert math.isnan(Moved("a", "r", "x", "y", 0.0, 1.0, ()).ratio)


def test_a_history_of_exchanges_pairs_its_steps_by_the_versions_titles() -> None:
    # Steps name an exchange's version by title ("exchange 0.9.2 + GNUnet 0.19.3"), not
    # by its label: the moves must find their runs by the same name (was a KeyError).
    manifest, results = _history()
    pairs = (("0.9.2", "0.19.3"), ("0.14.0", "0.22.2"))
    for run_id, (exchange, gnunet) in zip(
        (v.run_id for v in manifest.versions), pairs, strict=True
    ):
        for i, r in enumerate(results[run_id]):
            assert r.execution is not None
            tools = {"taler-exchange": exchange, "gnunet (exchange's)": gnunet}
            source = {"kind": "tarball", "version": exchange}
            results[run_id][i] = r.model_copy(
                update={
                    "execution": r.execution.model_copy(update={"taler_source": source}),
                    "harness": r.harness.model_copy(
                        update={"setup": r.harness.setup.model_copy(update={"tools": tools})}
                    ),
                }
            )
    moves = history_moves(manifest, results)
    (signing,) = [m for m in moves if m.arch == "amd64" and m.row == "CS signing"]
    assert signing.before_label == "v1 exchange 0.9.2 + GNUnet 0.19.3"
    assert signing.after_label == "v2 exchange 0.14.0 + GNUnet 0.22.2"
    assert signing.functions[0].change == -60_000
