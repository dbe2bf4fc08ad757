"""``invoke archive`` and ``invoke bench --from-archive`` round trip on the real engine.

A tiny native amd64 run is measured in an image of this test's own (a
profile with a unique name gives a unique content hash, hence a unique tag
and image id; the build is cached, only the image config is new), archived,
the image removed from the engine by that unique tag, and the archive rerun
through the real command line: the image comes back with the same id from
the archive and the new result records which archive it came from.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest
from helpers import WORK, run_invoke

from archbench import run as pipeline
from archbench.archive import MANIFEST_FILE, verify, write_tar
from archbench.archive.format import sha256_file
from archbench.cli.archive import archive_run
from archbench.errors import ArchiveError
from archbench.hosts import check_image, engine, load_images
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.result import ResultStore, RunManifest, new_run_id
from archbench.result import load as load_result

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="archives a native amd64 run"),
]

_MATRIX = """\
version: 1
defaults:
  blindsig: {{iterations: 2, repetitions: 2, rsa_bits: [1024]}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  {profile}:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev,
      openssl, libssl-dev, gnupg]
targets:
  - {{name: arc-amd64, arch: amd64, base: debian-trixie, profile: {profile}}}
"""


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return engine.connect()


@pytest.fixture(scope="module")
def archived_run(
    client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, ResultStore, str, str]]:
    """A measured run in this test's own image; yields (matrix, store, run id, image tag).

    Removes the test's image tag at the end (and with it the image, which
    no other tag names), never anything else.
    """
    tmp = tmp_path_factory.mktemp("archive")
    profile = f"archive-test-{secrets.token_hex(4)}"
    matrix_path = tmp / "matrix.yml"
    matrix_path.write_text(_MATRIX.format(profile=profile), encoding="utf-8")
    m = load(matrix_path)
    store = ResultStore(tmp / "results")
    run_id = new_run_id()
    store.save_manifest(
        RunManifest(
            run_id=run_id,
            started_at="2026-12-01T00:00:00Z",
            matrix_file=str(matrix_path),
            matrix_text=matrix_path.read_text(encoding="utf-8"),
            targets=("arc-amd64",),
        )
    )
    host = engine.engine_arch(client)
    plans = pipeline.plan(m, m.select(), {"local": host})
    ws = pipeline.Workspace(store=store, run_id=run_id, work_dir=WORK)
    (outcome,) = pipeline.execute({"local": client}, plans, ws, {"local": host})
    assert outcome.ok, outcome.message
    assert outcome.result_path is not None
    execution = load_result(outcome.result_path).execution
    assert execution is not None
    tag = execution.image_tag
    try:
        yield matrix_path, store, run_id, tag
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(tag)


def test_archive_round_trip(
    client: docker.DockerClient,
    archived_run: tuple[Path, ResultStore, str, str],
    tmp_path: Path,
) -> None:
    _, store, run_id, tag = archived_run
    original = load_result(store.path_for(run_id, "arc-amd64"))
    assert original.execution is not None and original.execution.archive is None
    image_id = original.execution.image_id
    assert client.images.get(tag).id == image_id
    # Only this test's tag names the image: removing it removes the image.
    assert client.images.get(image_id).tags == [tag]

    out = tmp_path / "arc"
    summary = archive_run(store, run_id, out, plots=False, on_line=lambda s: None)
    (saved,) = summary.images
    print(
        f"\narchive: {saved.size / 1e6:.0f} MB image saved in {saved.seconds:.1f} s; "
        f"archive total {summary.total_bytes / 1e6:.0f} MB in {summary.seconds:.1f} s"
    )
    checked = verify(out)
    assert checked.manifest_sha256 == summary.manifest_sha256
    m = checked.manifest
    assert m.run_id == run_id and [i.id for i in m.images] == [image_id]
    assert m.images[0].tag == tag and m.images[0].targets == ("arc-amd64",)
    paths = {f.path for f in m.files}
    assert {
        f"results/{run_id}/run.json",
        f"results/{run_id}/arc-amd64.json",
        "matrix.yml",
        "report/appendix.md",
        "report/appendix.tex",
        "report/results.csv",
        m.images[0].file,
    } <= paths
    assert "arc-amd64" in (out / "report" / "appendix.md").read_text(encoding="utf-8")
    # The image tar is what docker save wrote: its size and hash are in the manifest.
    entry = next(f for f in m.files if f.path == m.images[0].file)
    assert entry.size == saved.size > 100_000_000
    assert sha256_file(out / entry.path) == entry.sha256

    client.images.remove(tag)
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(image_id)

    # The reviewer gets it as one tar: --from-archive unpacks it (checking every member).
    packed = tmp_path / "arc.tar"
    write_tar(out, packed)
    shutil.rmtree(out)

    results = tmp_path / "rerun-results"
    started = time.monotonic()
    done = run_invoke(
        "bench", "--from-archive", str(packed),
        settings={"results": results, "work": tmp_path / "work"},
        timeout=900,
    )  # fmt: skip
    loaded = [line.strip() for line in done.stdout.splitlines() if "loaded in" in line]
    print(f"rerun from the archive: {time.monotonic() - started:.1f} s in all; {loaded}")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "loaded in" in done.stdout
    assert client.images.get(image_id).id == image_id
    assert tag in client.images.get(image_id).tags

    new_store = ResultStore(results)
    (new_run,) = new_store.runs()
    assert new_run != run_id
    rerun = load_result(new_store.path_for(new_run, "arc-amd64"))
    ex = rerun.execution
    assert ex is not None and ex.image_id == image_id and ex.image_tag == tag
    assert ex.archive is not None
    assert ex.archive.manifest_sha256 == summary.manifest_sha256
    assert ex.archive.archive_id == m.archive_id and ex.archive.source_run_id == run_id
    rows = {(r.scheme, r.key_bits, r.operation) for r in rerun.harness.rows}
    assert rows == {(r.scheme, r.key_bits, r.operation) for r in original.harness.rows}
    assert rerun.harness.parameters is not None
    assert rerun.harness.parameters.repetitions == 2
    assert rerun.harness.parameters.rsa_bits == (1024,)
    manifest = new_store.load_manifest(new_run)
    assert manifest.archive == ex.archive and manifest.targets == ("arc-amd64",)
    # Nothing was bootstrapped or built: no base or build log in the rerun's logs.
    logs = sorted(p.name for p in (results / new_run / "logs").iterdir())
    assert logs == ["arc-amd64.harness.log"]
    unpacked = tmp_path / "work" / "from-archive" / "arc"
    assert verify(unpacked, check_hashes=False).manifest == m

    # A manifest that names another id than its tar holds: loading says so, and the
    # rerun's image check refuses an id the engine does not have.
    forged_id = "sha256:" + "0" * 64
    raw = json.loads((unpacked / MANIFEST_FILE).read_text(encoding="utf-8"))
    raw["images"][0]["id"] = forged_id
    (unpacked / MANIFEST_FILE).write_text(json.dumps(raw), encoding="utf-8")
    forged = verify(unpacked, check_hashes=False)
    with pytest.raises(ArchiveError, match=f"gave image id\\(s\\) {image_id}, not {forged_id}"):
        load_images(client, forged, forged.manifest.images, on_line=lambda s: None)
    with pytest.raises(ArchiveError, match=f"image {forged_id} .* is not on the engine"):
        check_image(client, forged.manifest.images[0])
