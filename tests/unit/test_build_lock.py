"""One build of one content at a time: :meth:`archbench.images.Builder.lock` across processes."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from types import SimpleNamespace

from archbench.images import Builder

LOCAL = "http+docker://localhost"
REMOTE = "http+docker://ssh.box-a"


def builder(work_dir: Path, url: str = LOCAL) -> Builder:
    # The lock reads only the engine's URL: a stand-in client carries it.
    client = SimpleNamespace(api=SimpleNamespace(base_url=url))
    return Builder(client=client, work_dir=work_dir, log_dir=work_dir)  # type: ignore[arg-type]


def _enter_and_mark(work_dir: str, url: str, what: str, per_engine: bool, marker: str) -> None:
    with builder(Path(work_dir), url).lock(what, per_engine=per_engine):
        Path(marker).write_text("in", encoding="utf-8")


def _other_process(
    tmp_path: Path, url: str, what: str, *, per_engine: bool = True
) -> tuple[multiprocessing.process.BaseProcess, Path]:
    marker = tmp_path / f"marker-{time.monotonic_ns()}"
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(
        target=_enter_and_mark, args=(str(tmp_path), url, what, per_engine, str(marker))
    )
    proc.start()
    return proc, marker


def test_a_second_process_waits_for_the_same_image_and_goes_on_when_it_is_released(
    tmp_path: Path,
) -> None:
    with builder(tmp_path).lock("image archbench/bench:riscv64-slim-0123"):
        proc, marker = _other_process(tmp_path, LOCAL, "image archbench/bench:riscv64-slim-0123")
        proc.join(timeout=1.5)
        # Still waiting while this process holds the lock (a forked process is in
        # the lock well within 1.5 s when nothing holds it: see the next test).
        assert proc.is_alive()
        assert not marker.exists()
    proc.join(timeout=30)
    assert proc.exitcode == 0
    assert marker.read_text(encoding="utf-8") == "in"


def test_another_image_or_another_engine_does_not_wait(tmp_path: Path) -> None:
    with builder(tmp_path).lock("image archbench/bench:riscv64-slim-0123"):
        other_image, marker_a = _other_process(tmp_path, LOCAL, "image archbench/bench:amd64-a")
        other_engine, marker_b = _other_process(
            tmp_path, REMOTE, "image archbench/bench:riscv64-slim-0123"
        )
        other_image.join(timeout=30)
        other_engine.join(timeout=30)
        assert (other_image.exitcode, other_engine.exitcode) == (0, 0)
        assert marker_a.exists() and marker_b.exists()


def test_a_work_directory_lock_holds_for_every_engine(tmp_path: Path) -> None:
    what = "root file system rootfs-riscv64-8a8d40870de1a36b.tar"
    with builder(tmp_path, LOCAL).lock(what, per_engine=False):
        proc, marker = _other_process(tmp_path, REMOTE, what, per_engine=False)
        proc.join(timeout=1.5)
        assert proc.is_alive() and not marker.exists()
    proc.join(timeout=30)
    assert proc.exitcode == 0 and marker.exists()


def test_the_lock_is_released_when_its_holder_dies(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    holder = ctx.Process(target=_hold_forever, args=(str(tmp_path),))
    holder.start()
    ready = tmp_path / "holding"
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    holder.kill()  # as kill -9 or a lost terminal would
    holder.join(timeout=30)
    proc, marker = _other_process(tmp_path, LOCAL, "image t")
    proc.join(timeout=30)
    assert proc.exitcode == 0 and marker.exists()
    assert [p.name for p in (tmp_path / "locks").iterdir()] != []


def _hold_forever(work_dir: str) -> None:
    with builder(Path(work_dir)).lock("image t"):
        (Path(work_dir) / "holding").write_text("", encoding="utf-8")
        time.sleep(600)
