"""Preflight for QEMU user emulation through binfmt_misc (``invoke doctor``).

Checks, in order, each failing with one actionable message: binfmt_misc is
mounted; a ``qemu-<arch>`` handler is registered and enabled, has the F
("fix binary") flag so the interpreter is opened at registration and works
inside containers, and points to a statically linked interpreter; the QEMU
version. The smoke run of ``uname -m`` inside the base image lives in
:mod:`archbench.run.containers`, which owns containers.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from archbench.errors import EmulationError
from archbench.platforms import Arch

BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
BINFMT_CONF_DIRS = (Path("/usr/lib/binfmt.d"), Path("/etc/binfmt.d"))

INSTALL_HINT = "as root: apt-get install qemu-user-static (or run 'invoke doctor --fix')"
MOUNT_HINT = (
    "as root: mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc "
    "(or run 'invoke doctor --fix')"
)


@dataclass(frozen=True)
class Handler:
    """A binfmt_misc handler as the kernel reports it."""

    name: str
    enabled: bool
    interpreter: Path
    flags: str


@dataclass(frozen=True)
class EmulationStatus:
    """What the preflight found for one architecture."""

    arch: Arch
    handler: Handler
    static: bool
    qemu_version: str


def parse_handler(name: str, text: str) -> Handler:
    """Parse the kernel's ``/proc/sys/fs/binfmt_misc/<name>`` file.

    Raises:
        EmulationError: the text has no interpreter line.
    """
    enabled = False
    interpreter: Path | None = None
    flags = ""
    for line in text.splitlines():
        if line.strip() == "enabled":
            enabled = True
        elif line.startswith("interpreter "):
            interpreter = Path(line.split(" ", 1)[1].strip())
        elif line.startswith("flags:"):
            flags = line.split(":", 1)[1].strip()
    if interpreter is None:
        raise EmulationError(f"binfmt_misc handler {name}: no interpreter line in {text!r}")
    return Handler(name=name, enabled=enabled, interpreter=interpreter, flags=flags)


def is_static_elf(path: Path) -> bool:
    """True when ``path`` is an ELF file without a PT_INTERP program header.

    A static interpreter is what makes emulation work inside a container,
    whose file system has no host dynamic loader. Source: the ELF
    specification (System V gABI, program header type PT_INTERP = 3).

    Raises:
        OSError: the file cannot be read.
        ValueError: the file is not ELF.
    """
    with path.open("rb") as fh:
        ident = fh.read(16)
        if ident[:4] != b"\x7fELF":
            raise ValueError(f"{path} is not an ELF file")
        is64 = ident[4] == 2
        endian = "<" if ident[5] == 1 else ">"
        header = fh.read(48 if is64 else 36)
        if is64:
            phoff = struct.unpack_from(endian + "Q", header, 16)[0]
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 38)
        else:
            phoff = struct.unpack_from(endian + "I", header, 12)[0]
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 26)
        for i in range(phnum):
            fh.seek(phoff + i * phentsize)
            (p_type,) = struct.unpack(endian + "I", fh.read(4))
            if p_type == 3:
                return False
    return True


def qemu_version(arch: Arch) -> str:
    """The QEMU user-mode version string, e.g. ``7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)``.

    The binfmt ``-P`` wrappers refuse ``--version``, so the same package's
    ``qemu-<arch>-static`` (or ``qemu-<arch>``) binary is asked. Returns
    ``"unknown"`` when neither is on PATH.
    """
    for exe in (f"qemu-{arch.value.qemu_name}-static", f"qemu-{arch.value.qemu_name}"):
        found = shutil.which(exe)
        if not found:
            continue
        out = subprocess.run(
            [found, "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout
        first = out.splitlines()[0] if out else ""
        if "version" in first:
            return first.split("version", 1)[1].strip()
    return "unknown"


def check_emulation(arch: Arch, binfmt_dir: Path = BINFMT_DIR) -> EmulationStatus:
    """Check that ``arch`` binaries run through binfmt_misc with a usable QEMU.

    Raises:
        EmulationError: binfmt_misc unmounted, handler missing or disabled,
            no F flag, or a dynamically linked interpreter; the message says
            how to fix it.
    """
    if not (binfmt_dir / "status").exists():
        raise EmulationError(f"binfmt_misc is not mounted at {binfmt_dir}; {MOUNT_HINT}")
    name = f"qemu-{arch.value.qemu_name}"
    entry = binfmt_dir / name
    if not entry.exists():
        raise EmulationError(
            f"no binfmt_misc handler {name} is registered, so {arch.platform} binaries "
            f"cannot run; {INSTALL_HINT}"
        )
    handler = parse_handler(name, entry.read_text(encoding="utf-8"))
    if not handler.enabled:
        raise EmulationError(f"binfmt_misc handler {name} is disabled; as root: echo 1 > {entry}")
    if "F" not in handler.flags:
        raise EmulationError(
            f"binfmt_misc handler {name} lacks the F (fix binary) flag (flags: "
            f"{handler.flags or 'none'}), so its interpreter {handler.interpreter} is not "
            "found inside containers; re-register it from qemu-user-static's "
            "/usr/lib/binfmt.d entry ('invoke doctor --fix')"
        )
    try:
        static = is_static_elf(handler.interpreter)
    except (OSError, ValueError) as exc:
        raise EmulationError(f"interpreter of {name}: {exc}; {INSTALL_HINT}") from exc
    if not static:
        raise EmulationError(
            f"interpreter {handler.interpreter} of {name} is dynamically linked and will not "
            f"run inside containers; {INSTALL_HINT} (the -static build)"
        )
    return EmulationStatus(arch=arch, handler=handler, static=True, qemu_version=qemu_version(arch))


def fix_emulation(archs: list[Arch], binfmt_dir: Path = BINFMT_DIR) -> list[str]:
    """Install qemu-user-static, mount binfmt_misc and register handlers (Debian, root).

    Registers each missing ``qemu-<arch>`` handler from the ``binfmt.d``
    entry that Debian's qemu-user-static ships (flags include F), replacing
    a registered one that :func:`check_emulation` rejects (e.g. binfmt-support's
    without F). Returns the actions taken, one line each.

    Raises:
        EmulationError: not root, apt-get missing or failing, or no binfmt.d
            entry for an architecture.
    """
    if os.geteuid() != 0:
        raise EmulationError("'doctor --fix' changes the system and must run as root")
    actions: list[str] = []
    if not any((d / "qemu-riscv64.conf").exists() for d in BINFMT_CONF_DIRS):
        if not shutil.which("apt-get"):
            raise EmulationError("apt-get not found: install qemu-user-static by hand")
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        proc = subprocess.run(
            ["apt-get", "install", "-y", "-qq", "qemu-user-static"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            check=False,
        )
        if proc.returncode != 0:
            raise EmulationError("apt-get install qemu-user-static failed; see its output above")
        actions.append("installed qemu-user-static")
    if not (binfmt_dir / "status").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(binfmt_dir)], check=True)
        actions.append(f"mounted binfmt_misc at {binfmt_dir}")
    for arch in archs:
        name = f"qemu-{arch.value.qemu_name}"
        entry = binfmt_dir / name
        if entry.exists():
            try:
                check_emulation(arch, binfmt_dir)
                continue
            except EmulationError:
                # Registered, but unusable in containers (no F flag, disabled,
                # dynamic interpreter): replace it with qemu-user-static's entry.
                entry.write_text("-1\n")
                actions.append(f"unregistered unusable {name}")
        conf = next(
            (d / f"{name}.conf" for d in BINFMT_CONF_DIRS if (d / f"{name}.conf").exists()), None
        )
        if conf is None:
            raise EmulationError(f"no binfmt.d entry {name}.conf from qemu-user-static")
        (binfmt_dir / "register").write_text(conf.read_text(encoding="utf-8").strip() + "\n")
        actions.append(f"registered {name} from {conf}")
    return actions
