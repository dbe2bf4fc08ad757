"""Reused counts (issue 29): the key under which a stored count stands for a new one, the
search of the store for it, and the bisections that follow a history's counted steps."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers import CI_MATRIX, counted, result, row, run_invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import Step
from archbench.cli.bisect import parse_row
from archbench.cli.history import check_bisectable, git_repository, step_bisections
from archbench.errors import MatrixError
from archbench.images import PLUGIN_VERSION, harness_sha256
from archbench.matrix import GnunetGit, load, parse_gnunet
from archbench.platforms import Arch
from archbench.result import (
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    Metric,
    Result,
    ResultStore,
    RowKey,
    RunManifest,
)
from archbench.run import (
    CountKey,
    TargetPlan,
    count_definition,
    count_key,
    find_count,
    plan,
    stored_count_key,
)

REPO_URL = "file:///srv/gnunet.git"
QEMU = "qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u16)"
COMMIT = "993e1b272c58fbb9fdd7a61591b0ec8f60e48c41"


def _plan(
    target: str = "ci-amd64",
    overrides: dict[str, object] | None = None,
    *,
    history: bool = False,
    cpus: float | None = None,
) -> TargetPlan:
    """The plan bisect makes (blindsig, instructions) or, ``history``, the one a history's
    version makes (every suite, both metrics, its --cpus)."""
    m = load(CI_MATRIX)
    (p,) = plan(
        m,
        m.select([target]),
        {"local": Arch.AMD64},
        overrides or {},
        suites=[] if history else ["blindsig"],
        metrics=("time", "instructions") if history else ("instructions",),
        cpus=cpus,
        gnunet=GnunetGit(git=REPO_URL, ref="v0.22.2" if history else COMMIT),
    )
    return p


def test_a_history_version_and_a_bisect_step_count_with_one_definition() -> None:
    """The history's counts of a step's two ends are reusable by the bisection only if both
    plan the same counted target: every suite and both metrics (and a CPU quota) against
    the blindsig suite alone and instructions."""
    bisect, history = _plan(), _plan(history=True, cpus=0.5)
    assert count_definition(bisect) == count_definition(history)


@pytest.mark.parametrize(
    ("target", "overrides"),
    [
        ("ci-amd64", {"rsa_bits": [2048]}),
        ("ci-amd64", {"repetitions": 1}),
        ("ci-riscv64", {}),
    ],
)
def test_what_changes_a_count_changes_the_definition(
    target: str, overrides: dict[str, object]
) -> None:
    assert count_definition(_plan(target, overrides)) != count_definition(_plan())


def _stored(key: CountKey, run_id: str, *, valid: bool = True) -> Result:
    """A counting result of ``key.target`` as a run would have stored it under ``key``."""
    timed = result(
        key.target,
        key.arch,
        "x86_64",
        "AMD EPYC",
        [
            row(
                "CS",
                "signing",
                [90_000, 90_001, 90_002],
                valid=valid,
                reason=None if valid else "known answer failed",
            )
        ],
        run_id=run_id,
    )
    done = counted(timed, {"signing": 300_000} if valid else {})
    assert done.execution is not None and done.harness.counting is not None
    execution = done.execution.model_copy(
        update={
            "gnunet_source": {"kind": "git", "location": key.repository, "commit": key.commit,
                              "ref": "v0.22.2", "dirty": False},
            "harness_sha256": key.harness,
            "count_definition": key.definition,
        }
    )  # fmt: skip
    counting = done.harness.counting.model_copy(
        update={"cpu_model": key.cpu_model, "plugin_version": key.plugin, "qemu_version": key.qemu}
    )
    harness = done.harness.model_copy(update={"counting": counting})
    return done.model_copy(update={"execution": execution, "harness": harness})


def _save(store: ResultStore, res: Result, gnunet: str | None) -> None:
    store.save_manifest(
        RunManifest(
            run_id=res.run_id, started_at="2026-12-03T10:00:00Z", matrix_file="m.yml",
            matrix_text="", targets=(res.target.name,), gnunet=gnunet,
        )
    )  # fmt: skip
    store.save(res)


def _found(store: ResultStore, key: CountKey) -> str | None:
    """The run :func:`find_count` would reuse (None: none)."""
    search = find_count(store, key)
    return search.found.run_id if search.found is not None else None


KEY = CountKey(
    repository=REPO_URL,
    commit=COMMIT,
    target="ci-amd64",
    arch="amd64",
    definition="d" * 64,
    cpu_model="max",
    harness="h" * 64,
    plugin=PLUGIN_VERSION,
    qemu=QEMU,
)


def test_count_key_is_what_a_stored_count_records() -> None:
    """The key of a plan about to count, and the key read back from what that count stores."""
    p = _plan()
    key = count_key(p, REPO_URL, COMMIT, QEMU)
    assert key.harness == harness_sha256() and len(key.harness) == 64
    assert key.definition == count_definition(p) and key.cpu_model == "max"
    assert stored_count_key(_stored(key, "20261203T100000Z-aaaaaa")) == key


def test_the_newest_run_with_the_key_is_found(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    _save(store, _stored(KEY, "20261203T100000Z-aaaaaa"), f"git+{REPO_URL}@v0.22.2")
    _save(store, _stored(KEY, "20261203T110000Z-bbbbbb"), f"git+{REPO_URL}@{COMMIT}")
    other = dataclasses.replace(KEY, commit="1" * 40)
    _save(store, _stored(other, "20261203T120000Z-cccccc"), f"git+{REPO_URL}@{'1' * 40}")
    assert _found(store, KEY) == "20261203T110000Z-bbbbbb"
    assert _found(store, other) == "20261203T120000Z-cccccc"


def test_a_run_of_another_source_or_without_a_valid_count_is_not_reused(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    # Another repository's run (its run.json says so) is passed over unread.
    _save(store, _stored(KEY, "20261203T100000Z-aaaaaa"), "git+file:///elsewhere.git@v1")
    _save(store, _stored(KEY, "20261203T110000Z-bbbbbb", valid=False), None)
    assert _found(store, KEY) is None
    old = _stored(KEY, "20261203T120000Z-cccccc")
    assert old.execution is not None
    # Written before the key's fields existed: no key, never reused.
    _save(store, old.model_copy(update={"execution": old.execution.model_copy(
        update={"harness_sha256": None})}), None)  # fmt: skip
    assert _found(store, KEY) is None


FIELDS = [f.name for f in dataclasses.fields(CountKey)]


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from(FIELDS), value=st.text("0123456789abcdef", min_size=1, max_size=64))
def test_any_one_field_that_differs_refuses_the_reuse(field: str, value: str) -> None:
    """Every field of the key counts: a stored count that differs in any one is not the
    count asked for (a dirty tree is never one)."""
    stored = _stored(KEY, "20261203T100000Z-aaaaaa")
    key = stored_count_key(stored)
    assert key == KEY
    wanted = dataclasses.replace(KEY, **{field: value})
    assert (key == wanted) == (getattr(KEY, field) == value)
    assert stored.execution is not None
    dirty = stored.model_copy(
        update={"execution": stored.execution.model_copy(
            update={"gnunet_source": {**(stored.execution.gnunet_source or {}), "dirty": True}})}
    )  # fmt: skip
    assert stored_count_key(dirty) is None


# ---------------------------------------------------------------- history steps → bisections

REFS = ("v0.21.2", "v0.21.3", "v0.22.0", "v0.22.1", "v0.22.2")


def _history(refs: tuple[str, ...], url: str = REPO_URL) -> HistoryManifest:
    run_ids = tuple(f"20261203T1{i:05d}Z-aaaaaa" for i in range(len(refs)))
    return HistoryManifest(
        history_id="20261203T095959Z-cccccc",
        created_at="2026-12-03T09:59:59Z",
        matrix_file="matrix.yml",
        matrix_text="version: 1\n",
        targets=("ci-amd64",),
        rounds=1,
        seed=1,
        versions=tuple(
            HistoryVersion(
                label=f"git {ref}", gnunet=f"git+{url}@{ref}", run_id=r, session=run_ids[0]
            )
            for ref, r in zip(refs, run_ids, strict=True)
        ),
        order=(HistoryRound(session=run_ids[0], round=1, order=run_ids),),
    )


METRIC: dict[str, Metric] = {"instructions": "instructions", "time": "time"}
OPERATIONS = ("signing", "blinding_secret_derivation", "key_generation", "helper_signing")
steps_strategy = st.lists(
    st.tuples(
        st.sampled_from(["amd64", "riscv64", "armv7"]),
        st.sampled_from(["blindsig", "sodium"]),
        st.sampled_from(["CS", "RSA", "Ed25519"]),
        st.sampled_from(OPERATIONS),
        st.sampled_from(["instructions", "time"]),
        st.integers(1, len(REFS) - 1),
    ),
    max_size=12,
)


@settings(max_examples=100, deadline=None)
@given(raw=steps_strategy)
def test_every_counted_blindsig_step_maps_to_one_bisection_between_its_refs(
    raw: list[tuple[str, str, str, str, str, int]],
) -> None:
    manifest = _history(REFS)
    steps = []
    for arch, suite, scheme, operation, metric, i in raw:
        bits = 2048 if scheme == "RSA" else 0
        key = RowKey(arch, suite, scheme, bits, "", operation, 1)
        step = Step(i, f"git {REFS[i - 1]}", f"git {REFS[i]}", 1.2, METRIC[metric], "up")
        steps.append((arch, key, step))
    found = step_bisections(manifest, steps)
    expected = []
    for arch, key, step in steps:
        if step.metric != "instructions" or key.suite != "blindsig":
            continue
        if key.scheme not in ("CS", "RSA") or key.operation.startswith("helper_"):
            continue
        expected.append((arch, key.scheme, key.operation, step.index))
    # One bisection per distinct (arch, row, pair of versions), in the steps' order.
    assert [(b.arch, parse_row(b.row).scheme, parse_row(b.row).operation,
             REFS.index(b.bad)) for b in found] == list(dict.fromkeys(expected))  # fmt: skip
    for b in found:
        spec = parse_row(b.row)
        assert spec.key_bits == (2048 if spec.scheme == "RSA" else None)
        assert REFS.index(b.good) + 1 == REFS.index(b.bad)
        assert (b.before, b.after) == (f"git {b.good}", f"git {b.bad}")
        assert b.repository == REPO_URL


def test_a_series_that_is_not_git_refs_of_one_repository_is_refused() -> None:
    with pytest.raises(MatrixError, match="2 repositories"):
        git_repository(
            [parse_gnunet(f"git+{REPO_URL}@v1"), parse_gnunet("git+file:///other.git@v2")], "x"
        )
    with pytest.raises(MatrixError, match="debian is not git refs"):
        git_repository([parse_gnunet(f"git+{REPO_URL}@v1"), parse_gnunet("debian")], "--gnunet")
    assert git_repository([parse_gnunet(f"git+{REPO_URL}@v{i}") for i in (1, 2)], "x") == REPO_URL
    manifest = _history(REFS[:2])
    rebased = manifest.model_copy(
        update={"versions": tuple(v.model_copy(update={"base": "debian-sid"})
                                  for v in manifest.versions)}
    )  # fmt: skip
    with pytest.raises(MatrixError, match="sets --base"):
        check_bisectable(rebased.versions, "history")
    with pytest.raises(MatrixError, match="repositories"):
        step_bisections(
            manifest.model_copy(
                update={"versions": (*manifest.versions[:1], _history(REFS[1:2], "file:///b.git")
                                     .versions[0].model_copy(update={"label": "b"}))}
            ),
            [],
        )  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--gnunet", "debian,git+file:///srv/gnunet.git@v0.22.2"], "debian is not git refs"),
        (["--gnunet", "git+file:///a.git@v1,git+file:///b.git@v2"], "of 2 repositories"),
        (["--gnunet", "git+file:///a.git@v1", "--base", "debian-trixie,debian-sid"], "--base"),
        ([], "needs a series of git refs"),
    ],
)
def test_bisect_steps_of_a_series_that_is_not_git_refs_is_refused_first(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    """Exit 2 with the reason, before any engine is asked or anything written."""
    done = run_invoke(
        "history", "--matrix", str(CI_MATRIX), *flags, "--bisect-steps",
        settings={"results": tmp_path / "results", "work": tmp_path / "work"},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and "--bisect-steps" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results").exists()
