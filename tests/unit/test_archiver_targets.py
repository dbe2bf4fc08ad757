"""Which targets a ``--from-archive`` rerun (and its ``--resume``) measures, and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.archive import (
    ArchiveManifest,
    FileEntry,
    ImageEntry,
    VerifiedArchive,
)
from archbench.errors import ArchiveError, MatrixError
from archbench.hosts import local_targets, resume_targets
from archbench.matrix import parse
from archbench.platforms import Arch
from archbench.result import RunManifest
from archbench.run import plan

MATRIX = """\
version: 1
bases:
  trixie: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [python3]}
hosts:
  arm-box: {url: "ssh://bench@arm-box.example.org"}
targets:
  - {name: a-amd64, arch: amd64, base: trixie}
  - {name: b-arm64, arch: arm64, base: trixie, host: arm-box}
  - {name: c-failed, arch: riscv64, base: trixie}
"""
RUN_ID = "20261201T090000Z-abc123"
SHA = "0" * 64


def _image(n: int, target: str, arch: str) -> ImageEntry:
    return ImageEntry(
        id=f"sha256:{n:064x}",
        tag=f"archbench/bench:{arch}-{n:016x}",
        arch=arch,
        platform=f"linux/{arch}",
        host="local",
        file=f"images/{arch}.tar",
        targets=(target,),
    )


def _archive() -> VerifiedArchive:
    images = (_image(1, "a-amd64", "amd64"), _image(2, "b-arm64", "arm64"))
    files = [FileEntry(path=f"results/{RUN_ID}/run.json", size=1, sha256=SHA)]
    files += [FileEntry(path=i.file, size=1, sha256=SHA) for i in images]
    files += [
        FileEntry(path=f"results/{RUN_ID}/{t}.json", size=1, sha256=SHA)
        for t in ("a-amd64", "b-arm64")
    ]
    manifest = ArchiveManifest(
        archive_id=f"{RUN_ID}-00aa",
        created_at="2026-12-01T09:00:00Z",
        archbench_version="0.1.0",
        run_id=RUN_ID,
        run_manifest=f"results/{RUN_ID}/run.json",
        images=images,
        files=tuple(files),
    )
    return VerifiedArchive(Path("/nowhere"), manifest, "1" * 64)


def test_rerun_takes_the_archived_targets_to_the_local_engine() -> None:
    m = parse(MATRIX)
    chosen = local_targets(m, _archive().manifest)
    # c-failed has no archived image (it failed in the archived run).
    assert [(t.name, t.host) for t in chosen] == [("a-amd64", "local"), ("b-arm64", "local")]
    plans = plan(m, chosen, {"local": Arch.AMD64})
    assert [(p.name, p.emulated, p.remote) for p in plans] == [
        ("a-amd64", False, False),
        ("b-arm64", True, False),
    ]


def test_rerun_selection_by_arch_and_name() -> None:
    m = parse(MATRIX)
    assert [t.name for t in local_targets(m, _archive().manifest, archs=[Arch.ARM64])] == [
        "b-arm64"
    ]
    with pytest.raises(MatrixError, match="none of the archived targets: a-amd64, b-arm64"):
        local_targets(m, _archive().manifest, names=["c-failed"])


def _run(archive_sha: str | None) -> RunManifest:
    arc = _archive()
    return RunManifest(
        run_id="20261201T100000Z-def456",
        started_at="2026-12-01T10:00:00Z",
        matrix_file="matrix.yml",
        matrix_text=MATRIX,
        targets=("a-amd64",),
        archive=arc.manifest.ref(archive_sha) if archive_sha else None,
    )


def test_resume_of_a_rerun_needs_the_same_archive() -> None:
    m = parse(MATRIX)
    arc = _archive()
    assert [t.name for t in resume_targets(_run(arc.manifest_sha256), arc, m)] == ["a-amd64"]
    with pytest.raises(ArchiveError, match="resume it with --from-archive DIR"):
        resume_targets(_run(arc.manifest_sha256), None, m)
    with pytest.raises(ArchiveError, match=r"is not the archive run \S+ reran"):
        resume_targets(_run("2" * 64), arc, m)
    with pytest.raises(ArchiveError, match="did not rerun an archive"):
        resume_targets(_run(None), arc, m)
