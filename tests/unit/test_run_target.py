"""A target's run as a planned list of steps (archbench/run/target.py) and the strategy of
each kind of target (archbench/run/kinds.py): which stages a native, an emulated, a
remote, an archived, a build-only and a counting target go through, in order.

The stage names are what the progress display shows and what ``TargetOutcome.seconds``
is keyed by; the real runs are tests/integration/test_pipeline_docker.py,
test_counting_docker.py and test_remote_hosts.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from harness_fakes import harness_document
from helpers import CI_MATRIX

from archbench.archive import ArchivedImage, ImageEntry
from archbench.errors import HarnessError
from archbench.matrix import Matrix, load, parse
from archbench.platforms import Arch
from archbench.result import ArchiveRef, HarnessDocument
from archbench.run import TargetOutcome, TargetPlan, plan
from archbench.run.kinds import Emulated, Native, Remote, kind_of
from archbench.run.target import TargetContext, plan_steps, summarise

REMOTE = """
version: 1
bases:
  debian-trixie: {source: bootstrap, suite: trixie, variant: minbase}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
  box: {url: "tcp://127.0.0.1:2375"}
targets:
  - {name: box-amd64, arch: amd64, base: debian-trixie, host: box}
  - {name: box-arm64, arch: arm64, base: debian-trixie, host: box, emulate: true}
"""


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load(CI_MATRIX)


def _plan(matrix: Matrix, name: str, repeat: int = 1, metrics: tuple[str, ...] = ()) -> TargetPlan:
    (p,) = plan(
        matrix, matrix.select([name]), {"local": Arch.AMD64}, repeat=repeat, metrics=metrics
    )
    return p


def _stages(p: TargetPlan, build_only: bool = False) -> list[str | None]:
    return [s.stage for s in plan_steps(p, kind_of(p), build_only)]


def test_a_native_target_builds_then_runs_each_repeat(matrix: Matrix) -> None:
    p = _plan(matrix, "ci-amd64", repeat=2, metrics=("time",))
    assert isinstance(kind_of(p), Native)
    # None: bookkeeping between stages (the results' facts, the summary).
    assert _stages(p) == ["base", "image", None, "run 1/2", "run 2/2", None]


def test_an_emulated_target_checks_binfmt_and_smokes_before_its_image(matrix: Matrix) -> None:
    p = _plan(matrix, "ci-riscv64", metrics=("time",))
    assert isinstance(kind_of(p), Emulated)
    assert _stages(p) == ["preflight", "base", "smoke", "image", None, "run", None]
    (base,) = [s for s in plan_steps(p, kind_of(p), False) if s.stage == "base"]
    assert base.do.__name__ == "bootstrap_bases"  # the engine's base beside the target's


def test_build_only_ends_after_the_image(matrix: Matrix) -> None:
    p = _plan(matrix, "ci-riscv64", metrics=("time",))
    assert _stages(p, build_only=True) == ["preflight", "base", "smoke", "image", None]


def test_counting_adds_the_tools_the_layer_and_one_count_per_repeat(matrix: Matrix) -> None:
    p = _plan(matrix, "ci-amd64", repeat=2, metrics=("time", "instructions"))
    assert _stages(p) == [
        None,  # the counter tools start building beside the target
        "base",
        "image",
        None,
        "run 1/2",
        "run 2/2",
        None,  # the counted suites are chosen
        "count image",
        "count 1/2",
        "count 2/2",
        None,
    ]


def test_counting_nothing_counted_has_no_count_stages(matrix: Matrix) -> None:
    # openssl speed runs a program archbench does not own: it is not counted.
    p = _plan(matrix, "ci-openssl-riscv64", metrics=("instructions",))
    assert _stages(p) == [None, "preflight", "base", "smoke", "image", None, None, None]


def test_an_archived_image_is_loaded_not_built(matrix: Matrix) -> None:
    entry = ImageEntry(
        id=f"sha256:{1:064x}",
        tag="archbench/bench:riscv64-0123456789abcdef",
        arch="riscv64",
        platform="linux/riscv64",
        host="local",
        file="images/riscv64.tar",
        targets=("ci-riscv64",),
    )
    ref = ArchiveRef(
        archive_id="20261201T090000Z-abc123-0011aabb",
        manifest_sha256="1" * 64,
        source_run_id="20261201T090000Z-abc123",
    )
    p = dataclasses.replace(
        _plan(matrix, "ci-riscv64", metrics=("time",)), archived=ArchivedImage(entry, ref)
    )
    # build_only does not stop an archived target: it has nothing to build.
    assert _stages(p, build_only=True) == ["preflight", "image", "smoke", None, "run", None]


def test_remote_targets_skip_this_machines_binfmt_and_cache() -> None:
    m = parse(REMOTE, "remote test matrix")
    archs = {"local": Arch.AMD64, "box": Arch.AMD64}
    native, emulated = plan(m, m.select(["box-amd64", "box-arm64"]), archs, metrics=("time",))
    assert kind_of(native) == Remote(emulated=False)
    assert kind_of(emulated) == Remote(emulated=True)
    assert _stages(native)[:3] == ["base", "image", None]
    # Emulated on the remote host: its smoke test is the check, no cross stage here.
    assert _stages(emulated)[:4] == ["base", "smoke", "image", None]
    (base,) = [s for s in plan_steps(emulated, kind_of(emulated), False) if s.stage == "base"]
    assert base.do.__name__ == "bootstrap_base"
    assert kind_of(native).apt_proxy("http://127.0.0.1:3142") is None
    assert Native().apt_proxy("http://127.0.0.1:3142") == "http://127.0.0.1:3142"
    assert kind_of(native).host_cpu("AMD Ryzen 7") == ""
    assert Emulated().host_cpu("AMD Ryzen 7") == "AMD Ryzen 7"


def test_only_a_remote_run_takes_its_cpu_from_the_harness() -> None:
    doc = HarnessDocument.model_validate(harness_document())
    assert Remote(emulated=False).run_update(doc) == {
        "host_cpu": "AMD Ryzen 7 PRO 5850U with Radeon Graphics"
    }
    assert Native().run_update(doc) == {} and Emulated().run_update(doc) == {}


def test_a_target_that_stored_nothing_fails_saying_why() -> None:
    def ctx(paths: list[Path], failed: dict[str, str]) -> TargetContext:
        outcome = TargetOutcome(name="t", ok=False, message="")
        return cast(TargetContext, SimpleNamespace(outcome=outcome, paths=paths, failed=failed))

    # --metric instructions where no enabled suite is counted: no IndexError, a reason.
    with pytest.raises(HarnessError, match=r"no result was stored: no enabled suite ran"):
        summarise(ctx([], {}))
    with pytest.raises(HarnessError, match=r"^suite taler-helper failed: no run succeeded$"):
        summarise(ctx([], {"taler-helper": "no run succeeded"}))
    done = ctx([Path("r/t.json")], {})
    summarise(done)
    assert done.outcome.result_path == Path("r/t.json")
