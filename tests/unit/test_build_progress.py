"""Progress of bootstraps and builds without a terminal: what the lines say, when they come."""

from __future__ import annotations

import io
import re
import time

from rich.console import Console

from archbench.run import RichReporter
from archbench.run.progress import BuildTracker, Heartbeat

# As debootstrap 1.0.128 printed them for riscv64 trixie (this machine; the mirror renamed).
DEBOOTSTRAP = """\
archbench: bootstrapping trixie for linux/riscv64, second stage under QEMU
I: Retrieving InRelease
I: Retrieving Packages
I: Validating Packages
I: Retrieving apt 3.0.3
I: Validating apt 3.0.3
I: Retrieving base-files 13.8+deb13u1
I: Retrieving bash 5.2.37-2+b5
I: Extracting apt...
I: Extracting base-files...
I: Installing core packages...
I: Unpacking required packages...
I: Unpacking apt...
I: Configuring required packages...
I: Configuring base-files...
I: Configuring bash...
"""

APT = """\
archbench: building archbench/bench:riscv64-0123456789abcdef for linux/riscv64 under QEMU
Step 3/7 : RUN apt-get install -y python3
Reading package lists...
0 upgraded, 12 newly installed, 0 to remove and 0 not upgraded.
Get:1 http://mirror.invalid/debian trixie/main riscv64 libpython3.13-minimal riscv64 3.13.5-2
Get:2 http://mirror.invalid/debian trixie/main riscv64 python3.13-minimal riscv64 3.13.5-2
Unpacking libpython3.13-minimal:riscv64 (3.13.5-2) ...
Setting up libpython3.13-minimal:riscv64 (3.13.5-2) ...
Setting up python3.13-minimal (3.13.5-2) ...
Setting up mime-support (3.66) ...
"""


def fed(text: str, upto: str) -> str:
    tracker = BuildTracker()
    for line in text.splitlines():
        tracker.feed(line)
        if line == upto:
            break
    return tracker.detail()


def test_debootstrap_counts_packages_and_names_the_emulated_second_stage() -> None:
    assert fed(DEBOOTSTRAP, "I: Retrieving Packages") == ""
    assert fed(DEBOOTSTRAP, "I: Retrieving bash 5.2.37-2+b5") == "downloading 3 packages"
    assert fed(DEBOOTSTRAP, "I: Extracting base-files...") == "extracting 2 of 3 packages"
    assert fed(DEBOOTSTRAP, "I: Unpacking apt...") == "unpacking 1 of 3 packages under QEMU"
    assert fed(DEBOOTSTRAP, "I: Configuring bash...") == "configuring 2 of 3 packages under QEMU"


def test_a_native_bootstrap_says_nothing_of_qemu() -> None:
    native = DEBOOTSTRAP.replace("linux/riscv64, second stage under QEMU", "linux/amd64")
    assert fed(native, "I: Configuring bash...") == "configuring 2 of 3 packages"


# mmdebstrap 1.3.5 --verbose, riscv64 trixie (a log of this machine; the mirror renamed).
MMDEBSTRAP = """\
archbench: bootstrapping trixie for linux/riscv64, second stage under QEMU
I: downloading packages with apt...
0 upgraded, 59 newly installed, 0 to remove and 0 not upgraded.
Get:1 http://mirror.invalid/debian trixie/main riscv64 gcc-14-base riscv64 14.2.0-19 [50.4 kB]
Get:2 http://mirror.invalid/debian trixie/main riscv64 libc6 riscv64 2.41-12+deb13u5 [2,590 kB]
I: extracting archives...
I: installing essential packages...
Unpacking gcc-14-base:riscv64 (14.2.0-19) ...
Unpacking libc6:riscv64 (2.41-12+deb13u5) ...
Setting up gcc-14-base:riscv64 (14.2.0-19) ...
"""


def test_mmdebstrap_counts_apt_lines_and_its_chroot_runs_under_qemu() -> None:
    assert fed(MMDEBSTRAP, "I: extracting archives...") == "extracting archives"
    get2 = MMDEBSTRAP.splitlines()[4]
    assert fed(MMDEBSTRAP, get2) == "downloading 2 of 59 packages"
    assert fed(MMDEBSTRAP, "Unpacking libc6:riscv64 (2.41-12+deb13u5) ...") == (
        "unpacking 2 of 59 packages under QEMU"
    )
    assert fed(MMDEBSTRAP, "Setting up gcc-14-base:riscv64 (14.2.0-19) ...") == (
        "configuring 1 of 59 packages under QEMU"
    )


def test_apt_in_a_build_step_counts_of_the_newly_installed() -> None:
    assert fed(APT, "Step 3/7 : RUN apt-get install -y python3") == "step 3/7 RUN under QEMU"
    assert (
        fed(
            APT,
            "Get:2 http://mirror.invalid/debian trixie/main riscv64 python3.13-minimal "
            "riscv64 3.13.5-2",
        )
        == "step 3/7 RUN: downloading 2 of 12 packages under QEMU"
    )
    assert fed(APT, "Setting up mime-support (3.66) ...") == (
        "step 3/7 RUN: configuring 3 of 12 packages under QEMU"
    )
    label = APT + "Step 7/7 : LABEL org.archbench.image.profile=slim\n"
    assert fed(label, "Step 7/7 : LABEL org.archbench.image.profile=slim") == "step 7/7 LABEL"
    cross = APT.replace(
        "riscv64-0123456789abcdef for linux/riscv64 under QEMU", "x for linux/amd64"
    )
    assert fed(cross, "Setting up mime-support (3.66) ...") == (
        "step 3/7 RUN: configuring 3 of 12 packages"
    )


def test_a_harness_in_a_build_stage_says_its_suite_and_step() -> None:
    tracker = BuildTracker()
    tracker.feed("archbench-progress: blindsig 2/3 12.5s RSA-1024")
    assert tracker.detail() == "blindsig 2/3 RSA-1024"


def test_heartbeat_every_15_s_of_silence_with_the_stage_eta() -> None:
    beat = Heartbeat()
    beat.stage("riscv64-trixie", "base", now=100.0)
    beat.expect("riscv64-trixie", 100.0 + 90.0, "base")
    for line in DEBOOTSTRAP.splitlines()[:8]:
        beat.feed("riscv64-trixie", line)
    assert beat.due(114.0) == []
    assert beat.due(115.0) == [
        ("riscv64-trixie", "base: downloading 3 packages, 15s in (ETA 1m15s)")
    ]
    assert beat.due(129.0) == []  # 14 s after the last line
    beat.printed("riscv64-trixie", 140.0)
    assert beat.due(150.0) == []
    assert beat.due(200.0) == [
        ("riscv64-trixie", "base: downloading 3 packages, 1m40s in (ETA passed)")
    ]
    beat.stage("riscv64-trixie", "image", now=200.0)
    assert beat.due(215.0) == [("riscv64-trixie", "image: working, 15s in (no ETA)")]
    beat.done("riscv64-trixie")
    assert beat.due(400.0) == []


def test_plain_reporter_prints_heartbeats_from_its_own_thread() -> None:
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, force_terminal=False, width=200))
    reporter.heartbeat.interval = 1.5
    with reporter:
        reporter.stage("riscv64-trixie", "base")
        reporter.line("riscv64-trixie", "I: Retrieving apt 3.0.3")
        time.sleep(2.6)
    beats = [line for line in out.getvalue().splitlines() if "downloading" in line]
    assert beats, out.getvalue()
    assert re.search(r"riscv64-trixie: base: downloading 1 package, [23]s in \(no ETA\)$", beats[0])
