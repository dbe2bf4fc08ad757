"""Hostile input, fourth round, and the third round's leftovers (issue 39, items 4 and 5).

A URL's credentials are never printed or stored: every message quotes a URL through
:func:`archbench.inputs.quote`, and every line on the terminal passes
:func:`archbench.cli.terminal.safe_text`, both of which write ``user:password@`` as
``***@``. A tar bomb is refused by the sizes its headers declare, naming the tarball the
user gave, before a byte is unpacked. A results folder that is a file or cannot be read,
and a symbolic link loop where a results file or a run folder should be, are each said
to be what they are (not "run invoke bench first"). ``--extend`` and ``--resume`` go on
with what their record stored, and a record whose targets its own matrix lacks is said
to be the record's. A history or bisection left out of the page is said on the terminal
too, and the page over a folder mixing runs, histories and bisections shows each.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from helpers import REPO, counted, result, row
from hostile_cases import CASES, SECRET, _bisect
from hypothesis import given, settings
from hypothesis import strategies as st
from test_corpus import run_case

from archbench.cli import safe_text
from archbench.cli.bisect import BisectOptions, _count, measure_bisection
from archbench.cli.history import HistoryOptions, measure_history
from archbench.cli.report import ReportRequest, render_report
from archbench.errors import MatrixError, ReportError, ResultsError, SourceError
from archbench.inputs import quote, redact_credentials
from archbench.matrix import GnunetTarball, parse_gnunet
from archbench.report import PAGE_FILE
from archbench.result import BisectManifest, HistoryManifest, HistoryVersion, ResultStore
from archbench.sources import resolve_gnunet, resolve_taler
from archbench.sources.model import MAX_PACKED_BYTES

RUN = "20261129T224000Z-1a2b3c"
OTHER = "20261129T225000Z-4d5e6f"
HIST = "20261201T220000Z-cccccc"
BISECT = "20261129T220000Z-abcdef"

# ---------------------------------------------------------------- secrets

SECRET_CASES = [c for c in CASES if SECRET in repr(c.input) or "user:pw@" in repr(c.input)]


def test_the_corpus_has_secrets_in_every_kind_of_url() -> None:
    kinds = {c.kind for c in SECRET_CASES}
    assert {"flag", "matrix-bytes", "matrix-field"} <= kinds
    assert len(SECRET_CASES) >= 20  # NASTY's URL in every matrix field, and ours


@pytest.mark.parametrize("case", SECRET_CASES, ids=[c.id for c in SECRET_CASES])
def test_a_password_in_a_url_is_never_printed(case: Any, tmp_path: Path) -> None:
    message, _code = run_case(case, tmp_path)
    assert SECRET not in message and "user:pw@" not in message and ":pw@" not in message
    assert SECRET not in safe_text(message)


PASSWORD = st.text(
    st.characters(codec="ascii", exclude_characters="/?# \t\n\r"),
    min_size=1,
    max_size=40,
).map(lambda s: "Zq" + s)  # a prefix no message holds on its own


@given(user=st.from_regex(r"[a-z0-9._-]{0,12}", fullmatch=True), password=PASSWORD)
@settings(max_examples=200, deadline=None)
def test_no_password_survives_quote_safe_text_or_parse_gnunet(user: str, password: str) -> None:
    for url in (
        f"https://{user}:{password}@git.example/gnunet.git",
        f"http://{user}:{password}@mirror.example:8080/debian",
    ):
        assert password not in redact_credentials(f"fetch {url} failed")
        assert password not in quote(url) and password not in quote(url * 100)
        assert password not in safe_text(f"archbench: {url}")
        with pytest.raises(MatrixError) as info:
            parse_gnunet(f"git+{url}@v0.27.0")
        assert password not in str(info.value)


def test_redaction_leaves_refs_ports_and_paths_alone() -> None:
    for text in (
        "git+https://git.example:8443/g.git@v0.27.0",
        "file:///srv/a@b/g.git",
        "/home/me@work/gnunet-0.27.0.tar.gz@sha256:00",
    ):
        assert redact_credentials(text) == text
    assert redact_credentials("ssh://me@host/x") == "ssh://***@host/x"


# ---------------------------------------------------------------- tarballs


def _declared_bomb(path: Path, top: str, declared: int, compress: str = "gz") -> str:
    """A tarball whose last member's header declares ``declared`` bytes of zeros (its data
    is cut short: the header alone must stop it). Returns its sha256."""
    data = b""
    for name, text in ((".version", b"0.27.0\n"), ("configure.ac", b"AC_INIT([x])\n")):
        info = tarfile.TarInfo(f"{top}/{name}")
        info.size = len(text)
        data += info.tobuf(tarfile.GNU_FORMAT) + text + b"\0" * (-len(text) % 512)
    big = tarfile.TarInfo(f"{top}/zeros.bin")
    big.size = declared
    data += big.tobuf(tarfile.GNU_FORMAT) + b"\0" * 4096
    packed = (
        gzip.compress(data, 1) if compress == "gz" else zstandard.ZstdCompressor().compress(data)
    )
    path.write_bytes(packed)
    return hashlib.sha256(packed).hexdigest()


@pytest.mark.parametrize("compress", ["gz", "zst"])
def test_a_tar_bomb_is_refused_naming_the_users_tarball(tmp_path: Path, compress: str) -> None:
    tarball = tmp_path / f"gnunet-0.27.0.tar.{compress}"
    sha = _declared_bomb(tarball, "gnunet-0.27.0", MAX_PACKED_BYTES + 1, compress)
    work = tmp_path / "work"
    with pytest.raises(SourceError) as info:
        resolve_gnunet(GnunetTarball(tarball=str(tarball), sha256=sha), work)
    message = str(info.value)
    assert message.startswith(f"tarball {tarball}: its files unpack to more than")
    assert "'gnunet-0.27.0/zeros.bin'" in message and str(work) not in message
    assert not any(p.is_file() and p.stat().st_size > 1 << 20 for p in tmp_path.rglob("*"))


def test_a_taler_tarball_is_read_in_every_compression_and_bounded(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        text = b"AC_INIT([taler-exchange],[0.14.2],[taler@gnu.org])\n"
        info = tarfile.TarInfo("taler-exchange-0.14.2/configure.ac")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    zst = tmp_path / "taler-exchange-0.14.2.tar.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(raw.getvalue()))
    sha = hashlib.sha256(zst.read_bytes()).hexdigest()
    got = resolve_taler(GnunetTarball(tarball=str(zst), sha256=sha), tmp_path / "work")
    assert got.version == "0.14.2"
    bomb = tmp_path / "taler-exchange-0.14.2.tar.gz"
    sha = _declared_bomb(bomb, "taler-exchange-0.14.2", MAX_PACKED_BYTES + 1)
    with pytest.raises(SourceError, match=rf"^taler tarball {bomb}: its files unpack to more"):
        resolve_taler(GnunetTarball(tarball=str(bomb), sha256=sha), tmp_path / "work")


def test_a_taler_tree_whose_configure_ac_is_a_fifo_is_refused_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "exchange"
    tree.mkdir()
    os.mkfifo(tree / "configure.ac")
    with pytest.raises(SourceError, match=r"configure\.ac"):
        resolve_taler(parse_gnunet(str(tree)), tmp_path / "work")


# ---------------------------------------------------------------- results folders


def _save(store: ResultStore, run_id: str = RUN) -> None:
    store.save(result("amd64-trixie", "amd64", "x86_64", "c",
                      [row("CS", "signing", [77_000, 78_000, 76_000])], run_id=run_id))  # fmt: skip


def _report(results: Path, out: Path, runs: tuple[str, ...] | None = ()) -> list[str]:
    lines: list[str] = []
    render_report(ReportRequest(results, out, runs=runs, plots=False), lines.append)
    return lines


def test_a_results_folder_that_cannot_be_read_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "results"
    _save(ResultStore(root))
    real = os.scandir

    def refuse(path: Any = ".") -> Any:
        if Path(path) == root:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", refuse)
    with pytest.raises(ReportError) as info:
        _report(root, tmp_path / "out")
    assert f"results folder {root} cannot be read (Permission denied)" in str(info.value)
    assert "invoke bench" not in str(info.value)
    assert not (tmp_path / "out").exists()


def test_a_symlink_loop_named_like_a_results_file_is_named(tmp_path: Path) -> None:
    root = tmp_path / "results"
    (root / RUN).mkdir(parents=True)
    (root / RUN / "amd64-trixie.json").symlink_to("amd64-trixie.json")
    for runs in ((), None):  # the latest run, and --all-runs
        with pytest.raises(ReportError) as info:
            _report(root, tmp_path / "out", runs)
        message = str(info.value)
        assert "1 results file(s) could not be loaded" in message
        assert f"{RUN}/amd64-trixie.json" in message and "symbolic links" in message
        assert "run 'invoke bench' first" not in message


def test_a_symlink_loop_beside_good_results_hides_none_of_them(tmp_path: Path) -> None:
    root = tmp_path / "results"
    _save(ResultStore(root))
    (root / RUN / "x.json").symlink_to("x.json")
    (root / OTHER).symlink_to(OTHER)  # a run folder that leads nowhere
    with pytest.raises(ResultsError, match="rendered without 1 results file"):
        lines: list[str] = []
        render_report(ReportRequest(root, tmp_path / "out", runs=(), plots=False), lines.append)
    assert (tmp_path / "out" / PAGE_FILE).is_file()
    assert any(f"{OTHER}' is a symbolic link that leads nowhere" in x for x in lines)
    assert any(f"{RUN}/x.json" in x and "symbolic links" in x for x in lines)


# ---------------------------------------------------------------- records: --extend, --resume


def _history(store: ResultStore, targets: tuple[str, ...]) -> HistoryManifest:
    manifest = HistoryManifest(
        history_id=HIST,
        created_at="x",
        matrix_file="m.yml",
        matrix_text=(REPO / "matrix.yml").read_text(encoding="utf-8"),
        targets=targets,
        rounds=3,
        seed=1,
        versions=(HistoryVersion(label="v1", gnunet="debian", run_id=RUN, session=HIST),),
    )
    store.save_history(manifest)
    return manifest


def test_extend_names_the_history_whose_target_left_its_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path / "results")
    _history(store, ("amd64-gone",))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'none.sock'}")
    options = HistoryOptions(
        matrix=REPO / "matrix.yml", results=store.root, work=tmp_path / "work",
        sources=(parse_gnunet("debian"),), extend=HIST, on_wait=lambda _l: None,
    )  # fmt: skip
    with pytest.raises(ResultsError) as info:
        measure_history(options)
    message = str(info.value)
    assert message.startswith(f"history {HIST} is inconsistent: it names targets its own")
    assert "no target named 'amd64-gone'" in message
    assert json.loads((store.root / HIST / "history.json").read_text())["targets"] == [
        "amd64-gone"
    ]  # nothing stored changed


def _stored_bisect(store: ResultStore, **over: Any) -> None:
    doc = json.loads(_bisect(bisect_id=BISECT, **over))
    doc["matrix_text"] = (REPO / "matrix.yml").read_text(encoding="utf-8")
    (store.root / BISECT).mkdir(parents=True)
    (store.root / BISECT / "bisect.json").write_text(json.dumps(doc))


def test_resume_names_the_bisection_whose_target_left_its_matrix(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    _stored_bisect(store, targets={"amd64": "amd64-gone"})
    before = (store.root / BISECT / "bisect.json").read_bytes()
    options = BisectOptions(matrix=REPO / "matrix.yml", results=store.root,
                            work=tmp_path / "work", resume=BISECT)  # fmt: skip
    with pytest.raises(ResultsError, match=rf"^bisection {BISECT} is inconsistent"):
        measure_bisection(options)
    assert (store.root / BISECT / "bisect.json").read_bytes() == before


def test_resume_refuses_a_range_that_is_no_graph_from_good_to_bad(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    doc = json.loads(_bisect())
    doc["commits"][1]["parents"] = []  # no longer an ancestor of bad
    doc["commits"][1]["parent_count"] = 0
    doc["commits"][2]["parents"] = [0]
    _stored_bisect(store, commits=doc["commits"],
                   targets={"amd64": "amd64-trixie"})  # fmt: skip
    options = BisectOptions(matrix=REPO / "matrix.yml", results=store.root,
                            work=tmp_path / "work", resume=BISECT)  # fmt: skip
    with pytest.raises(ResultsError) as info:
        measure_bisection(options)
    assert f"bisection {BISECT}: its commits do not make one range from good to bad" in str(
        info.value
    )


# ---------------------------------------------------------------- the page over a mixed folder


def test_the_page_over_runs_histories_and_bisections(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    _save(store)
    _save(store, OTHER)
    _history(store, ("amd64-trixie",))
    doc = json.loads(_bisect())
    doc["steps"][0]["counts"][0]["run_id"] = RUN
    doc["outcome"] = "amd64: first moved at somewhere"
    _stored_bisect(store, steps=doc["steps"], outcome=doc["outcome"],
                   targets={"amd64": "amd64-trixie"})  # fmt: skip
    broken = "20261129T230000Z-bbbbbb"
    (store.root / broken).mkdir()
    (store.root / broken / "bisect.json").write_text("{}")
    broken_h = "20261129T231000Z-cccccc"
    (store.root / broken_h).mkdir()
    (store.root / broken_h / "history.json").write_text('{"format": "archbench-history"}')
    lines = _report(store.root, tmp_path / "out", (RUN,))
    page = (tmp_path / "out" / PAGE_FILE).read_text(encoding="utf-8")
    # Both broken records are said on the terminal, and on the page.
    for left in (f"bisection left out: {store.root / broken}", f"history left out: {store.root}"):
        assert any(line.startswith(f"warning: {left}") for line in lines), lines
    assert "bisection left out" in page and "history left out" in page
    # The good ones are shown: the run, the history that holds it, the bisection that
    # measured it.
    assert HIST in page and BISECT in page and "first moved at somewhere" in page
    assert ResultStore(store.root).runs() == [RUN, OTHER]  # nothing taken for a run


def test_a_bisection_of_other_runs_is_not_on_a_page_of_one_run(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    _save(store)
    _stored_bisect(store, targets={"amd64": "amd64-trixie"})  # its step counted run r1
    _report(store.root, tmp_path / "out", (RUN,))
    assert BISECT not in (tmp_path / "out" / PAGE_FILE).read_text(encoding="utf-8")


def test_a_results_path_that_is_a_file_leaves_nothing_behind(tmp_path: Path) -> None:
    afile = tmp_path / "results"
    afile.write_text("x")
    with pytest.raises(ReportError, match="is a file, not a folder"):
        _report(afile, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no --out, no lock


# ---------------------------------------------------------------- reused runs


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated (a sync cut half-way)
        lambda text: text.replace('"archbench-result"', '"other-tool-result"'),  # foreign
        lambda text: text.replace('"version": 1', '"version": 0', 1),  # an older format
    ],
    ids=["truncated", "foreign", "older-format"],
)
def test_a_reused_run_that_cannot_be_read_stops_the_bisection_naming_it(
    tmp_path: Path, damage: Any
) -> None:
    store = ResultStore(tmp_path / "results")
    timed = result("t", "amd64", "x86_64", "c", [row("CS", "signing", [7, 7, 7])], run_id=RUN)
    path = store.save(counted(timed, {"signing": 48_911}))
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    manifest = BisectManifest.model_validate_json(_bisect())
    with pytest.raises(ResultsError) as info:
        _count(manifest, "amd64", "t", RUN, None, store, reused=True)
    message = str(info.value)
    assert message.startswith(f"bisection {BISECT}, amd64: the count of run {RUN} cannot be read")
    assert str(path) in message and f"invoke bisect --resume {BISECT}" in message
