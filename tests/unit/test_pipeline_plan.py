from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import REPO

from archbench.errors import MatrixError
from archbench.matrix import load, parse
from archbench.platforms import Arch
from archbench.run import plan
from archbench.run.containers import harness_command


def test_plan_on_amd64_emulates_every_foreign_arch() -> None:
    m = load(REPO / "matrix.yml")
    plans = plan(m, m.targets, {"local": Arch.AMD64})
    assert {p.name: p.emulated for p in plans} == {
        "amd64-trixie": False,
        "arm64-trixie": True,
        "armv7-trixie": True,
        "ppc64le-bookworm": True,
        "riscv64-trixie": True,
    }
    assert "libgnunet-dev" in plans[0].packages


def test_plan_on_arm64_runs_arm64_natively() -> None:
    m = load(REPO / "matrix.yml")
    plans = plan(m, m.select(archs=[Arch.ARM64, Arch.AMD64]), {"local": Arch.ARM64})
    assert {p.name: p.emulated for p in plans} == {"amd64-trixie": True, "arm64-trixie": False}


def test_native_demand_on_a_foreign_host_is_refused() -> None:
    text = (
        (REPO / "matrix.yml")
        .read_text()
        .replace("    arch: riscv64\n", "    arch: riscv64\n    emulate: false\n")
    )
    m = parse(text)
    with pytest.raises(
        MatrixError, match=r"riscv64-trixie: target architecture riscv64 cannot run natively"
    ):
        plan(m, m.select(archs=[Arch.RISCV64]), {"local": Arch.AMD64})


def test_overrides_and_harness_command() -> None:
    m = load(REPO / "matrix.yml")
    (p,) = plan(
        m,
        m.select(archs=[Arch.RISCV64]),
        {"local": Arch.AMD64},
        {"iterations": 2, "repetitions": 3, "rsa_bits": [1024]},
    )
    assert harness_command(p.suites) == [
        "--suites",
        "blindsig",
        "--progress",
        "--iterations",
        "2",
        "--repetitions",
        "3",
        "--scheme",
        "all",
        "--rsa-bits",
        "1024",
        "--warmup",
        "1",
        "--max-time",
        "20",
    ]
    with pytest.raises(MatrixError, match=r"command-line override"):
        plan(m, m.select(archs=[Arch.RISCV64]), {"local": Arch.AMD64}, {"iterations": 0})


def test_suite_selection_sends_settings_as_json() -> None:
    text = (REPO / "matrix.yml").read_text() + (
        "  - name: amd64-openssl\n"
        "    arch: amd64\n"
        "    base: debian-trixie\n"
        "    suites:\n"
        "      blindsig: {enabled: false}\n"
        "      openssl-speed: {algorithms: [rsa2048, ed25519], seconds: 1, multi: [2, 1]}\n"
    )
    m = parse(text)
    (p,) = plan(m, m.select(names=["amd64-openssl"]), {"local": Arch.AMD64})
    assert list(p.suites.enabled()) == ["openssl-speed"]
    cmd = harness_command(p.suites)
    assert cmd[:3] == ["--suites", "openssl-speed", "--progress"]
    assert "--iterations" not in cmd
    config = json.loads(cmd[cmd.index("--suite-config") + 1])
    assert config == {
        "openssl-speed": {
            "algorithms": ["rsa2048", "ed25519"],
            "evp_sizes": [16, 64, 256, 1024, 8192, 16384],
            "multi": [1, 2],
            "repeat": 1,
            "seconds": 1,
            "timeout_s": 300.0,
        }
    }
    # --suite picks suites by name, enabling them with the target's settings or defaults.
    (p,) = plan(
        m, m.select(names=["amd64-trixie"]), {"local": Arch.AMD64}, suites=["sodium", "blindsig"]
    )
    assert list(p.suites.enabled()) == ["blindsig", "sodium"]
    assert p.suites.sodium is not None and p.suites.sodium.nth == 3
    with pytest.raises(
        MatrixError, match=r"unknown suite 'openssl'; .*did you mean 'openssl-speed'"
    ):
        plan(m, m.select(names=["amd64-trixie"]), {"local": Arch.AMD64}, suites=["openssl"])
    with pytest.raises(MatrixError, match=r"--iterations.*set the blindsig suite"):
        plan(
            m,
            m.select(names=["amd64-trixie"]),
            {"local": Arch.AMD64},
            {"iterations": 2},
            suites=["gnupg"],
        )


def test_a_target_with_every_suite_disabled_is_refused() -> None:
    text = (
        (REPO / "matrix.yml")
        .read_text()
        .replace(
            "    arch: riscv64\n",
            "    arch: riscv64\n    suites:\n      blindsig: {enabled: false}\n",
        )
    )
    m = parse(text)
    with pytest.raises(MatrixError, match=r"riscv64-trixie: no suite enabled"):
        plan(m, m.select(archs=[Arch.RISCV64]), {"local": Arch.AMD64})


def test_repeat_and_cpuset_reach_the_plan() -> None:
    text = (
        (REPO / "matrix.yml")
        .read_text()
        .replace("    arch: amd64\n", '    arch: amd64\n    cpuset: "1"\n')
    )
    m = parse(text)
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64}, repeat=3)
    assert (p.repeat, p.cpuset) == (3, "1")
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64}, cpuset="0-1")
    assert p.cpuset == "0-1"
    with pytest.raises(MatrixError, match="--repeat must be at least 1"):
        plan(m, m.targets, {"local": Arch.AMD64}, repeat=0)


def test_budget_warmup_and_block_floor_reach_the_harness() -> None:
    m = load(REPO / "matrix.yml")
    (p,) = plan(
        m,
        m.select(archs=[Arch.RISCV64]),
        {"local": Arch.AMD64},
        {"warmup": 2, "max_time": 30, "min_block_ns": 2_000_000},
    )
    cmd = harness_command(p.suites)
    assert cmd[cmd.index("--warmup") + 1] == "2"
    assert cmd[cmd.index("--max-time") + 1] == "30"
    assert cmd[cmd.index("--min-block-ns") + 1] == "2000000"


REMOTE = """
version: 1
bases:
  deb: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [gcc]}
hosts:
  box: {url: "tcp://127.0.0.1:23750", max_parallel_runs: 2}
targets:
  - {name: here-riscv, arch: riscv64, base: deb}
  - {name: there-amd64, arch: amd64, base: deb, host: box}
  - {name: there-arm64, arch: arm64, base: deb, host: box}
"""


def test_native_means_native_on_a_remote_host() -> None:
    m = parse(REMOTE)
    archs = {"local": Arch.AMD64, "box": Arch.AMD64}
    with pytest.raises(MatrixError) as info:
        plan(m, m.targets, archs)
    msg = str(info.value)
    assert "target there-arm64: host box runs amd64, not arm64" in msg
    assert "'emulate: true'" in msg
    here, there = plan(m, m.select(["here-riscv", "there-amd64"]), archs)
    assert (here.emulated, here.remote, here.host_name) == (True, False, "local")
    assert (there.emulated, there.remote, there.host_name) == (False, True, "box")
    assert there.host is not None and there.host.max_parallel_runs == 2


def test_emulation_on_a_remote_host_must_be_explicit() -> None:
    m = parse(REMOTE.replace("host: box}\n", "host: box, emulate: true}\n"))
    (arm,) = plan(m, m.select(["there-arm64"]), {"local": Arch.AMD64, "box": Arch.AMD64})
    assert arm.emulated and arm.remote


def test_resume_keeps_a_counting_target_only_with_its_counts(tmp_path: Path) -> None:
    from helpers import result, row

    from archbench.result import CountCalibration, Counting, ResultStore
    from archbench.run import is_complete

    m = parse(
        "version: 1\nbases: {b: {source: bootstrap, suite: trixie}}\n"
        "profiles: {slim: {packages: [gcc]}}\n"
        "targets: [{name: t, arch: amd64, base: b}]\n",
        "m.yml",
    )
    run_id = "20261201T000000Z-resume"
    store = ResultStore(tmp_path)
    (timed,) = plan(m, m.targets, {"local": Arch.AMD64})
    (both,) = plan(m, m.targets, {"local": Arch.AMD64}, metrics=("time", "instructions"))
    (counted,) = plan(m, m.targets, {"local": Arch.AMD64}, metrics=("instructions",))
    measured = result("t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [5])], run_id=run_id)
    store.save(measured)
    assert is_complete(store, run_id, timed)
    assert not is_complete(store, run_id, both)
    assert not is_complete(store, run_id, counted)
    counting = Counting(
        instrument="archbench QEMU TCG plugin",
        qemu="qemu-x86_64",
        qemu_version="7.2.22",
        qemu_package="1:7.2+dfsg-7+deb12u18",
        cpu_model="max",
        plugin_version="1",
        plugin_api=1,
        calibration=CountCalibration(
            iterations=1000,
            instructions_per_iteration=2,
            counts=(2030, 4030),
            expected_difference=2000,
            difference=2000,
            overhead=30,
            exact=True,
        ),
    )
    harness = measured.harness.model_copy(update={"counting": counting})
    store.save(measured.model_copy(update={"metric": "instructions", "harness": harness}))
    assert is_complete(store, run_id, both)
    assert is_complete(store, run_id, counted)


def test_emulated_targets_count_by_default_and_native_ones_time() -> None:
    m = load(REPO / "matrix.yml")
    plans = {p.name: p.metrics for p in plan(m, m.targets, {"local": Arch.AMD64})}
    assert plans["amd64-trixie"] == ("time",)
    assert plans["riscv64-trixie"] == ("time", "instructions")
    assert plans["ppc64le-bookworm"] == ("time", "instructions")
    # --metric wins over the default, for emulated and native targets alike.
    flagged = plan(m, m.targets, {"local": Arch.AMD64}, metrics=("time",))
    assert {p.metrics for p in flagged} == {("time",)}


def test_matrix_metrics_key_wins_over_the_emulated_default() -> None:
    text = (REPO / "matrix.yml").read_text() + "\nmetrics: [time]\n"
    m = parse(text, "matrix.yml")
    assert {p.metrics for p in plan(m, m.targets, {"local": Arch.AMD64})} == {("time",)}
    both = parse((REPO / "matrix.yml").read_text() + "\nmetrics: [time, instructions]\n", "m")
    (native,) = plan(both, both.select(["amd64-trixie"]), {"local": Arch.AMD64})
    assert native.metrics == ("time", "instructions")
    assert native.count_suites is not None  # counted with the emulated defaults
