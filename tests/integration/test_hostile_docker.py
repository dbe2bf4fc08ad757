"""Flags checked against the real engine before anything is built or stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import docker
import pytest
from helpers import REPO


@pytest.mark.docker
def test_a_cpuset_beyond_the_engines_cpus_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    ncpu = int(docker.from_env().info()["NCPU"])
    results = tmp_path / "results"
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("invoke")),
            "bench",
            "--target",
            "amd64-trixie",
            "--cpuset",
            f"0,{ncpu}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "INVOKE_ARCHBENCH_RESULTS": str(results)},
    )
    assert done.returncode == 2, done.stderr
    assert f"names CPU {ncpu}, but the engine has {ncpu} CPU(s) (0-{ncpu - 1})" in done.stderr
    assert "Traceback" not in done.stderr
    assert not results.exists()
