"""Every job of docs/ci/archbench-matrix.yml, run here as a runner would run it.

Each job gets a folder of its own, as a fresh runner gets a fresh checkout: the project's
files, ``matrix.yml`` (the CI matrix ``tests/integration/matrix-ci.yml``, its cheapest
real targets ci-amd64 and ci-riscv64) and a git remote (a bare repository standing for
GitHub's). Every ``run:`` step is run with bash as GitHub runs it (``bash -e``), with the
step's ``env:`` and the runner's variables (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``,
``RUNNER_TEMP``); ``${{ }}`` expressions are evaluated from the contexts of the job. The
steps that set a runner up (ids ``setup-*``: Ubuntu packages, the virtualenv from the
lock, binfmt_misc) are what ``scripts/setup-host.sh`` did to this machine: the checkout
links this repository's ``.venv``, and ``sudo`` runs its command (tests run as root). The
four actions the workflow uses do here what they do on GitHub: checkout (the folder is
the checkout), upload-artifact and download-artifact (folders under one artifacts folder).

The riscv64 job, native on RISE's runner, runs emulated on this x86-64 engine; its
results say so (``execution.emulated``), its record keeps the runner label it was given.
Images are the CI matrix's content-hashed ones other integration tests build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import CI_MATRIX, REPO, WORK

from archbench.result import ResultStore, read_records

pytestmark = pytest.mark.docker

WORKFLOW = REPO / "docs" / "ci" / "archbench-matrix.yml"
ACTIONS = ("actions/checkout@", "actions/upload-artifact@", "actions/download-artifact@")


class Contexts:
    """The ``${{ }}`` contexts of one job: inputs, matrix, github, env, needs."""

    def __init__(self, **values: Any) -> None:
        self.values = values

    def get(self, dotted: str) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            node = node.get(part, "") if isinstance(node, Mapping) else ""
        return node

    def evaluate(self, expr: str) -> Any:
        """The few expression forms the workflow uses; any other fails the test (add it)."""
        expr = expr.strip()
        if expr == "!cancelled()":
            return True
        if m := re.fullmatch(r"([\w.-]+) != '([^']*)'", expr):
            return self.get(m[1]) != m[2]
        if m := re.fullmatch(r"join\(([\w.-]+), '([^']*)'\)", expr):
            return m[2].join(self.get(m[1]))
        if m := re.fullmatch(r"fromJSON\(([\w.-]+)\)", expr):
            return json.loads(self.get(m[1]))
        if "||" in expr:
            for part in expr.split("||"):
                value = self.evaluate(part)
                if value:
                    return value
            return value
        if re.fullmatch(r"[\w-]+(\.[\w-]+)+", expr):
            return self.get(expr)
        raise AssertionError(f"an expression this test does not evaluate: {expr!r}")

    def text(self, template: str) -> str:
        def one(m: re.Match[str]) -> str:
            value = self.evaluate(m[1])
            return json.dumps(value) if isinstance(value, list | dict) else str(value)

        return re.sub(r"\$\{\{(.*?)\}\}", one, template)

    def condition(self, text: str | None) -> bool:
        if text is None:
            return True
        inner = re.fullmatch(r"\$\{\{(.*)\}\}", text.strip())
        return bool(self.evaluate(inner[1] if inner else text))


class Runner:
    """Runs a workflow's jobs in folders of ``root``, one fresh checkout per job."""

    def __init__(self, root: Path, origin: Path) -> None:
        self.root = root
        self.origin = origin
        self.artifacts = root / "artifacts"
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        sudo = self.bin / "sudo"
        sudo.write_text('#!/bin/sh\nexec "$@"\n')
        sudo.chmod(0o755)
        self.workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
        self.logs: list[str] = []

    def checkout(self, name: str) -> Path:
        """A fresh clone of the origin with the runner's virtualenv linked in."""
        where = self.root / "jobs" / name
        subprocess.run(["git", "clone", "-q", str(self.origin), str(where)], check=True)
        (where / ".venv").symlink_to(REPO / ".venv")
        return where

    def run_job(self, job: str, contexts: Contexts, name: str) -> dict[str, str]:
        """Run ``job``'s steps in a fresh checkout; its outputs (``GITHUB_OUTPUT``)."""
        spec = self.workflow["jobs"][job]
        workdir = self.checkout(name)
        temp = self.root / "temp" / name
        temp.mkdir(parents=True)
        output, summary = temp / "output", self.root / f"summary-{name}.md"
        output.touch()
        env = {
            **os.environ,
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_RUN_ID": "4242",
            "RUNNER_TEMP": str(temp),
            # Bases and images are content-hashed: share the integration tests' work folder.
            "INVOKE_ARCHBENCH_WORK": str(WORK),
        }
        env.update({k: str(v) for k, v in self.workflow.get("env", {}).items()})
        contexts.values["env"] = {k: str(v) for k, v in self.workflow.get("env", {}).items()}
        for step in spec["steps"]:
            if not contexts.condition(step.get("if")):
                continue
            if str(step.get("id", "")).startswith("setup-"):
                self.logs.append(f"{name}: set up by scripts/setup-host.sh: {step['name']}")
                continue
            if "uses" in step:
                self._action(step, contexts, workdir)
                continue
            step_env = {k: contexts.text(str(v)) for k, v in step.get("env", {}).items()}
            script = temp / "step.sh"
            script.write_text(step["run"])
            done = subprocess.run(
                ["bash", "-e", str(script)],
                cwd=workdir,
                env={**env, **step_env},
                capture_output=True,
                text=True,
                timeout=3600,
                check=False,
            )
            self.logs.append(f"{name}: {step.get('name', step['run'][:40])}\n{done.stdout}")
            assert done.returncode == 0, f"{name}: {step.get('name')}\n{done.stdout}\n{done.stderr}"
        return _outputs(output.read_text())

    def _action(self, step: dict[str, Any], contexts: Contexts, workdir: Path) -> None:
        uses = step["uses"]
        assert uses.startswith(ACTIONS), f"an action this test does not stand in for: {uses}"
        given = {k: contexts.text(str(v)) for k, v in step.get("with", {}).items()}
        if uses.startswith("actions/upload-artifact@"):
            source, dest = workdir / given["path"], self.artifacts / given["name"]
            if dest.exists():
                # As on GitHub: one name per workflow run, unless the step overwrites.
                assert given.get("overwrite") == "True", f"artifact {dest.name} exists"
                shutil.rmtree(dest)
            if source.is_dir():
                shutil.copytree(source, dest)
        elif uses.startswith("actions/download-artifact@"):
            pattern = re.compile(given["pattern"].replace("*", ".*"))
            dest = workdir / given["path"]
            dest.mkdir(parents=True, exist_ok=True)
            for artifact in sorted(self.artifacts.iterdir()):
                if pattern.fullmatch(artifact.name):
                    shutil.copytree(artifact, dest / artifact.name)


def _outputs(text: str) -> dict[str, str]:
    """``GITHUB_OUTPUT``'s ``name<<DELIMITER`` blocks and ``name=value`` lines."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            block = []
            for body in lines:
                if body == delimiter:
                    break
                block.append(body)
            out[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository standing for the project's on GitHub: this repository's files
    that the jobs use, with the CI matrix as ``matrix.yml``."""
    src = tmp_path_factory.mktemp("project")
    for name in ("tasks.py", "invoke.yaml", ".gitignore"):
        shutil.copy(REPO / name, src / name)
    shutil.copy(CI_MATRIX, src / "matrix.yml")
    _git("init", "-q", "-b", "main", cwd=src)
    _git("add", "-A", cwd=src)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "project", cwd=src)
    bare = tmp_path_factory.mktemp("origin") / "project.git"
    _git("clone", "-q", "--bare", str(src), str(bare), cwd=src)
    return bare


def _github(event: str, head_ref: str = "") -> dict[str, Any]:
    return {
        "event_name": event,
        "head_ref": head_ref,
        "ref_name": head_ref or "main",
        "base_ref": "main" if head_ref else "",
        "sha": "0123456789abcdef0123456789abcdef01234567",
        "server_url": "https://github.example",
        "repository": "owner/project",
        "run_id": "4242",
        "event": {"repository": {"default_branch": "main"}},
    }


def test_every_job_runs_here_and_publishes_one_history(origin: Path, tmp_path: Path) -> None:
    runner = Runner(tmp_path, origin)
    github = _github("workflow_dispatch")
    inputs = {"arch": "", "target": "ci-amd64,ci-riscv64", "metric": ""}
    planned = runner.run_job("plan", Contexts(inputs=inputs, github=github), "plan")
    include = json.loads(planned["matrix"])["include"]
    assert [(e["arch"], e["runs-on"], e["targets"]) for e in include] == [
        ("amd64", ["ubuntu-24.04"], "ci-amd64"),
        ("riscv64", ["ubuntu-24.04-riscv"], "ci-riscv64"),
    ]
    for entry in include:
        runner.run_job("bench", Contexts(matrix=entry, github=github), entry["artifact"])
    assert sorted(p.name for p in runner.artifacts.iterdir()) == [
        "run-amd64-native-time",
        "run-riscv64-native-time",
    ]
    needs = {"plan": {"outputs": planned}}
    runner.run_job("publish", Contexts(github=github, needs=needs), "publish")

    # The store is the branch archbench-results of the origin: both runs, each with its
    # runner's label and the commit, read as a results folder.
    store = tmp_path / "store-branch"
    _git("clone", "-q", "-b", "archbench-results", str(origin), str(store), cwd=tmp_path)
    records = read_records(store)
    runners = {m.target: rec.provenance.runner for rec in records.values() for m in rec.machines}
    assert runners == {"ci-amd64": ("ubuntu-24.04",), "ci-riscv64": ("ubuntu-24.04-riscv",)}
    for rec in records.values():
        assert rec.provenance.commit == github["sha"] and rec.provenance.branch == "main"
        assert rec.provenance.ci_url == "https://github.example/owner/project/actions/runs/4242"
    loaded, failures = ResultStore(store).load_all(metric=None)
    assert failures == [] and {r.target.name for r in loaded} == {"ci-amd64", "ci-riscv64"}
    assert (tmp_path / "jobs" / "publish" / "page" / "results.html").is_file()
    summary = (tmp_path / "summary-publish.md").read_text()
    assert "no base run on this machine class yet" in summary

    # The same numbers whichever path: the store renders the tables the jobs' own
    # results folders render together.
    together = tmp_path / "together"
    for entry in include:
        shutil.copytree(tmp_path / "jobs" / entry["artifact"] / "results", together,
                        dirs_exist_ok=True)  # fmt: skip
    rendered = {}
    for name, folder in (("together", together), ("store", store)):
        done = subprocess.run(
            [str(REPO / ".venv" / "bin" / "invoke"), "report", "--all-runs", "--no-plots",
             "--results", str(folder), "--out", str(tmp_path / f"out-{name}")],
            cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        rendered[name] = {
            f: (tmp_path / f"out-{name}" / f).read_text() for f in ("appendix.md", "results.csv")
        }
    assert rendered["store"] == rendered["together"]

    # Publishing the same artifacts again (a re-run of the publish job) changes nothing:
    # the pushed tree is the same.
    tree = _git("rev-parse", "archbench-results^{tree}", cwd=origin)
    runner.run_job("publish", Contexts(github=github, needs=needs), "publish-again")
    assert _git("rev-parse", "archbench-results^{tree}", cwd=origin) == tree
    assert "0 merged, 2 unchanged, 0 conflict, 0 refused" in "\n".join(runner.logs)

    # A pull request: its run is merged into a copy of the store, never pushed, and
    # compared with main's latest run on the same machine class.
    head = _git("rev-parse", "archbench-results", cwd=origin)
    pr = _github("pull_request", head_ref="feature")
    pr_runner = Runner(tmp_path / "pr", origin)
    inputs = {"arch": "", "target": "ci-amd64", "metric": ""}
    planned = pr_runner.run_job("plan", Contexts(inputs=inputs, github=pr), "plan")
    (entry,) = json.loads(planned["matrix"])["include"]
    pr_runner.run_job("bench", Contexts(matrix=entry, github=pr), entry["artifact"])
    pr_needs = {"plan": {"outputs": planned}}
    pr_runner.run_job("publish", Contexts(github=pr, needs=pr_needs), "publish")
    assert _git("rev-parse", "archbench-results", cwd=origin) == head
    text = (tmp_path / "pr" / "summary-publish.md").read_text()
    (main_amd64,) = [r for r, rec in records.items() if rec.machines[0].target == "ci-amd64"]
    assert "### amd64" in text and "### riscv64" not in text
    assert f"base `{main_amd64}` (branch `main`" in text
    assert "(branch `feature`" in text and "rows moved" in text
