"""The GitHub Actions workflow users copy (docs/ci/archbench-matrix.yml) and its jobs.

The workflow is checked by a real linter, actionlint (with shellcheck on every ``run:``
script), and against GitHub's published workflow schema (``check-jsonschema
--builtin-schema vendor.github-workflows``); both are shown to reject broken copies. The
jobs ``invoke ci-matrix`` plans (:func:`archbench.hosts.plan_jobs`) are checked here for
every architecture; tests/integration/test_ci_workflow_docker.py runs every job's
commands on the local engine.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import CI_MATRIX, REPO, run_invoke

from archbench import matrix
from archbench.errors import MatrixError
from archbench.hosts import EMULATING_RUNNER, plan_jobs
from archbench.platforms import Arch

WORKFLOW = REPO / "docs" / "ci" / "archbench-matrix.yml"
ENTRY_KEYS = {"job", "artifact", "arch", "platform", "runs-on", "emulated", "targets", "metric"}
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def _actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT.is_file(), "actionlint is a dev dependency (requirements/dev.lock)"
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", "-oneline", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_actionlint_and_shellcheck_pass_the_workflow() -> None:
    assert shutil.which("shellcheck"), "scripts/setup-host.sh --tests installs shellcheck"
    done = _actionlint(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # shellcheck, through actionlint: an unquoted variable in a run: script.
        ('doctor --fix --arch "$ARCH"', "doctor --fix --arch $ARCH", "SC2086"),
        ("timeout-minutes: 360", "timeout-minute: 360", 'unexpected key "timeout-minute"'),
        ("needs: plan", "needs: plann", 'needs job "plann" which does not exist'),
        ("${{ !cancelled() }}", "${{ !cancelled }}", "cancelled"),
    ],
    ids=["shellcheck", "unknown-key", "needs", "expression"],
)
def test_actionlint_rejects_a_broken_copy(tmp_path: Path, old: str, new: str, said: str) -> None:
    """The linter is not a rubber stamp: each of these breaks the workflow."""
    text = WORKFLOW.read_text(encoding="utf-8")
    assert old in text
    broken = tmp_path / "broken.yml"
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    done = _actionlint(broken)
    assert done.returncode == 1
    assert said in done.stdout, done.stdout


def test_actionlint_catches_script_injection(tmp_path: Path) -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    broken = tmp_path / "injected.yml"
    broken.write_text(
        text.replace('echo "no branch $STORE_BRANCH yet', 'echo "${{ github.head_ref }}', 1),
        encoding="utf-8",
    )
    done = _actionlint(broken)
    assert done.returncode == 1 and "potentially untrusted" in done.stdout, done.stdout


def test_workflow_matches_githubs_schema() -> None:
    done = _check_jsonschema(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text.replace("runs-on: ${{ matrix.runs-on }}", "run-on: x", 1))
    done = _check_jsonschema(broken)
    assert done.returncode == 1
    assert "'runs-on' is a required property" in done.stdout


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    steps = job["steps"]
    assert isinstance(steps, list)
    return steps


def test_every_action_is_pinned_by_commit_and_nothing_else_downloads() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"uses: (\S+)(.*)", text)
    assert uses
    for ref, comment in uses:
        assert re.fullmatch(
            r"actions/(checkout|upload-artifact|download-artifact)@[0-9a-f]{40}", ref
        )
        assert re.fullmatch(r" # v\d+\.\d+\.\d+", comment), ref
    runs = "\n".join(str(s.get("run", "")) for j in _workflow()["jobs"].values() for s in _steps(j))
    for fetcher in (
        "curl",
        "wget",
        "docker pull",
        "docker://",
        "setup-qemu",
        "http://",
        "https://",
    ):
        assert fetcher not in runs, fetcher
    # No secret but the job's own token, and only the publish job keeps it.
    assert "secrets." not in text
    jobs = _workflow()["jobs"]
    for name in ("plan", "bench"):
        checkout = next(s for s in _steps(jobs[name]) if "checkout" in s.get("uses", ""))
        assert checkout["with"] == {"persist-credentials": False}, name
    assert _workflow()["permissions"] == {"contents": "read"}
    assert jobs["publish"]["permissions"] == {"contents": "write"}
    assert jobs["publish"]["concurrency"]["cancel-in-progress"] is False


def test_jobs_plan_bench_publish() -> None:
    jobs = _workflow()["jobs"]
    assert list(jobs) == ["plan", "bench", "publish"]
    bench = jobs["bench"]
    assert bench["needs"] == "plan"
    assert bench["runs-on"] == "${{ matrix.runs-on }}"
    assert bench["strategy"] == {
        "fail-fast": False,
        "matrix": "${{ fromJSON(needs.plan.outputs.matrix) }}",
    }
    referenced = set(re.findall(r"\bmatrix\.([A-Za-z0-9_-]+)", json.dumps(bench)))
    assert referenced == ENTRY_KEYS - {"platform"}
    runs = [str(s.get("run", "")) for s in _steps(bench)]
    assert any('invoke bench --target "$TARGETS" --metric "$METRIC"' in r for r in runs)
    assert any("invoke publish --merge results --store artifact" in r for r in runs)
    upload = next(s for s in _steps(bench) if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "${{ matrix.artifact }}"
    assert upload["with"]["path"] == "artifact/"
    publish = jobs["publish"]
    assert publish["needs"] == "bench" and publish["if"] == "${{ !cancelled() }}"
    download = next(s for s in _steps(publish) if "download-artifact" in s.get("uses", ""))
    assert download["with"] == {"pattern": "run-*", "path": "artifacts/"}
    script = "\n".join(str(s.get("run", "")) for s in _steps(publish))
    assert '--summary "$GITHUB_STEP_SUMMARY" --base-branch "$BASE"' in script
    assert 'git push --quiet origin "$commit:refs/heads/$STORE_BRANCH"' in script


@pytest.fixture(scope="module")
def planned() -> list[dict[str, Any]]:
    done = run_invoke("ci-matrix", "--metric", "time,instructions", timeout=120)
    assert done.returncode == 0, done.stderr
    include: list[dict[str, Any]] = json.loads(done.stdout)["include"]
    return include


def test_ci_matrix_plans_native_runners_and_counts_on_x86_64(
    planned: list[dict[str, Any]],
) -> None:
    assert all(set(e) == ENTRY_KEYS for e in planned)
    jobs = {(e["arch"], e["emulated"], e["metric"]): e["runs-on"] for e in planned}
    assert jobs == {
        ("amd64", False, "time,instructions"): ["ubuntu-24.04"],
        ("arm64", False, "time"): ["ubuntu-24.04-arm"],
        ("arm64", True, "instructions"): ["ubuntu-24.04"],
        ("armv7", True, "time,instructions"): ["ubuntu-24.04"],
        ("ppc64le", False, "time"): ["ubuntu-24.04-ppc64le"],
        ("ppc64le", True, "instructions"): ["ubuntu-24.04"],
        ("riscv64", False, "time"): ["ubuntu-24.04-riscv"],
        ("riscv64", True, "instructions"): ["ubuntu-24.04"],
    }
    artifacts = [e["artifact"] for e in planned]
    assert len(set(artifacts)) == len(artifacts)
    assert all(re.fullmatch(r"run-[A-Za-z0-9_.-]+", a) for a in artifacts)


def test_every_architecture_has_a_runner_record() -> None:
    assert Arch.ARMV7.value.runner is None
    assert EMULATING_RUNNER is Arch.AMD64.value.runner
    for runner in (a.value.runner for a in Arch):
        if runner is not None:
            assert runner.labels and runner.provider and runner.source


MATRIX_HEAD = """
version: 1
bases:
  debian-trixie: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [gcc]}
targets:
"""


def _plan(targets: str, metrics: tuple[str, ...] = ()) -> list[dict[str, object]]:
    m = matrix.parse(MATRIX_HEAD + targets, "matrix.yml")
    return [j.entry() for j in plan_jobs(m, m.targets, metrics)]


def test_labels_and_emulation_are_the_users_per_target() -> None:
    jobs = _plan(
        """
  - {name: rv-a, arch: riscv64, base: debian-trixie}
  - {name: rv-b, arch: riscv64, base: debian-trixie}
  - {name: rv-box, arch: riscv64, base: debian-trixie, runs_on: [self-hosted, linux, riscv64]}
  - {name: arm-qemu, arch: arm64, base: debian-trixie, emulate: true}
  - {name: armhf-board, arch: armv7, base: debian-trixie, runs_on: [self-hosted, armv7],
     emulate: false}
""",
        ("time", "instructions"),
    )
    summary = {(str(j["targets"]), str(j["metric"])): (j["runs-on"], j["emulated"]) for j in jobs}
    assert summary == {
        # Targets on one runner share its job; counted on the x86-64 runner.
        ("rv-a,rv-b", "time"): (["ubuntu-24.04-riscv"], False),
        ("rv-a,rv-b,rv-box", "instructions"): (["ubuntu-24.04"], True),
        ("rv-box", "time"): (["self-hosted", "linux", "riscv64"], False),
        ("arm-qemu", "time,instructions"): (["ubuntu-24.04"], True),
        # emulate: false demands its own CPU, counts included.
        ("armhf-board", "time,instructions"): (["self-hosted", "armv7"], False),
    }


def test_a_target_no_runner_can_take_is_refused() -> None:
    with pytest.raises(MatrixError, match="armv7 has no hosted native runner; give its runner"):
        _plan("  - {name: a, arch: armv7, base: debian-trixie, emulate: false}\n")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("runs-on: ubuntu-24.04-riscv", "unknown key 'runs-on'"),
        ("runs_on: ['${{ secrets.X }}']", "runs_on[0]"),
        ("runs_on: []", "runs_on"),
    ],
)
def test_runs_on_is_validated_like_every_key(line: str, said: str) -> None:
    with pytest.raises(MatrixError, match=re.escape(said)) as refused:
        _plan("  - {name: a, arch: riscv64, base: debian-trixie, " + line + "}\n")
    if "unknown" in said:
        assert "did you mean 'runs_on'?" in str(refused.value)


def test_the_ci_matrix_file_plans_one_job_per_architecture() -> None:
    m = matrix.load(CI_MATRIX)
    chosen = m.select(["ci-amd64", "ci-riscv64"])
    jobs = [j.entry() for j in plan_jobs(m, chosen)]
    assert [(j["arch"], j["runs-on"], j["metric"]) for j in jobs] == [
        ("amd64", ["ubuntu-24.04"], "time"),
        ("riscv64", ["ubuntu-24.04-riscv"], "time"),
    ]
