"""``invoke report --all-runs`` and its results page over a history of many stored runs.

Issue 40 (item 3): a results folder of N runs, five architectures × N/5 commits of
GNUnet's master (every run one target, as a CI job per architecture and commit leaves
it), synthetic but in the real format: each run holds ``run.json`` and the target's
``<target>.json`` (the thesis's blindsig suite, 27 rows of CS and RSA-1024 to 4096, 6 to
40 timed blocks a row with their warmup, calibration blocks, interval and noise, the
Setup box of a Debian 13 container), and the emulated architecture's runs (armv7) a
``<target>.instructions.json`` too (three counted blocks a row, the top functions of
each row and the counter's provenance). Every file written is the model's own dump of
one template validated by :class:`archbench.result.Result`; times drift over the
commits, with a step in CS signing at commit N/5 × 0.35 and one in RSA at 0.7.

For each N (default 1,000 and 10,000) it generates the folder (``--keep DIR``: once,
kept and reused), then ``--repeats`` times renders it as ``invoke report --all-runs``
does (:func:`archbench.cli.report.render_report`, figures on) in a fresh process into a
fresh output folder, and prints its wall time and peak RSS (median and range), the
sizes of ``results.html``, of what the page loads on demand beside it, of
``appendix.md``/``.tex`` and of ``results.csv``; the first repeat starts without the
store's index (``.archbench-index``), the others with it, unless ``--cold``. With
``--browser`` it then opens the page in headless Chromium (Debian's ``chromium``,
driven over ``--remote-debugging-pipe``, no network) ``--repeats`` times and prints how
long after navigation the first figure was drawn (an SVG of plotly's in the DOM), and
that clicking a run's detail loads it.

Goal: 10,000 runs in ≤ 60 s and ≤ 1 GB, the page ≤ 10 MB, its first figure in ≤ 2 s;
1,000 runs in ≤ 10 s.

Usage::

    .venv/bin/python benchmarks/report_history.py [--runs 1000,10000] [--repeats 3]
        [--browser] [--cold] [--keep DIR] [--repo DIR]

``--repo`` measures another checkout (e.g. a worktree of the commit before a change)
with the same inputs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
INDEX = ".archbench-index.json"
"""The store's index (:data:`archbench.result.INDEX_FILE`; named here so that ``--repo``
can measure a checkout that has none)."""
ARCHS: tuple[tuple[str, str, str, str, float], ...] = (
    # key, platform, uname machine, CPU model, time factor against amd64
    ("amd64", "linux/amd64", "x86_64", "AMD EPYC 7763 64-Core Processor", 1.0),
    ("arm64", "linux/arm64", "aarch64", "Neoverse-N1", 1.3),
    ("riscv64", "linux/riscv64", "riscv64", "Spacemit(R) X60", 6.0),
    ("ppc64le", "linux/ppc64le", "ppc64le", "POWER10 (architected), altivec supported", 1.1),
    ("armv7", "linux/arm/v7", "armv7l", "AMD EPYC 7763 64-Core Processor", 25.0),
)
EMULATED = {"armv7"}
"""Architectures with no native runner: emulated on amd64, counted as well as timed."""
CS_NS = {  # per operation on amd64, ns
    "key_generation": 55_000,
    "r_derivation": 60_000,
    "blinding_secret_derivation": 9_000,
    "blinding": 170_000,
    "signing": 80_000,
    "unblinding": 9_000,
    "verifying": 250_000,
}
RSA_NS = {  # per operation on amd64 at 1024 bit, ns; grows with the key as noted
    "key_generation": (20_000_000, 3.2),
    "blinding": (90_000, 1.9),
    "signing": (350_000, 3.0),
    "unblinding": (60_000, 2.1),
    "verifying": (25_000, 1.9),
}
RSA_BITS = (1024, 2048, 3072, 4096)
FLAGS = (
    "fpu",
    "vme",
    "de",
    "pse",
    "tsc",
    "msr",
    "pae",
    "mce",
    "cx8",
    "apic",
    "sep",
    "mtrr",
    "pge",
    "mca",
    "cmov",
    "pat",
    "pse36",
    "clflush",
    "mmx",
    "fxsr",
    "sse",
    "sse2",
    "ht",
    "syscall",
    "nx",
    "mmxext",
    "fxsr_opt",
    "pdpe1gb",
    "rdtscp",
    "lm",
    "constant_tsc",
    "rep_good",
    "nopl",
    "xtopology",
    "nonstop_tsc",
    "cpuid",
    "extd_apicid",
    "tsc_known_freq",
    "pni",
    "pclmulqdq",
    "ssse3",
    "fma",
    "cx16",
    "pcid",
    "sse4_1",
    "sse4_2",
    "x2apic",
    "movbe",
    "popcnt",
    "aes",
    "xsave",
    "avx",
    "f16c",
    "rdrand",
    "hypervisor",
    "lahf_lm",
    "cmp_legacy",
    "abm",
    "sse4a",
    "misalignsse",
    "3dnowprefetch",
    "osvw",
    "topoext",
    "bmi1",
    "avx2",
    "smep",
    "bmi2",
    "erms",
    "invpcid",
    "rdseed",
    "adx",
    "smap",
    "clflushopt",
    "clwb",
    "sha_ni",
    "xsaveopt",
    "xsavec",
    "xgetbv1",
    "xsaves",
    "arat",
    "umip",
    "vaes",
    "vpclmulqdq",
    "rdpid",
    "fsrm",
)
FUNCTIONS = (
    ("libgcrypt.so.20.5.0", "_gcry_mpih_mul_karatsuba_case"),
    ("libgcrypt.so.20.5.0", "_gcry_mpih_addmul_1"),
    ("libgcrypt.so.20.5.0", "_gcry_mpih_submul_1"),
    ("libgcrypt.so.20.5.0", "_gcry_mpih_sqr_n_basecase"),
    ("libgcrypt.so.20.5.0", "_gcry_mpi_powm"),
    ("libgcrypt.so.20.5.0", "_gcry_mpih_divrem"),
    ("libsodium.so.23.3.0", "(no symbol) after crypto_hash_sha512_statebytes"),
    ("libsodium.so.23.3.0", "(no symbol) after crypto_hash_sha256_statebytes"),
    ("libsodium.so.23.3.0", "crypto_scalarmult_ed25519_base_noclamp"),
    ("libsodium.so.23.3.0", "crypto_core_ed25519_add"),
    ("libsodium.so.23.3.0", "sodium_add"),
    ("libsodium.so.23.3.0", "crypto_auth_hmacsha256_init"),
    ("libgnunetutil.so.17.0.0", "hkdf_expand"),
    ("libgnunetutil.so.17.0.0", "GNUNET_CRYPTO_cs_sign_derive"),
    ("libgnunetutil.so.17.0.0", "GNUNET_CRYPTO_rsa_sign_blinded"),
    ("libgnunetutil.so.17.0.0", "rsa_full_domain_hash"),
    ("libc.so.6", "__memcpy_avx_unaligned_erms"),
    ("libc.so.6", "(no symbol) after _dl_mcount_wrapper"),
    ("libc.so.6", "__explicit_bzero_chk"),
    ("blindsig", "measure_block"),
)


def _rows(arch_factor: float, drift: float, rng: random.Random, counted: bool) -> list[Any]:
    """The 27 blindsig rows of one run (dicts as the models dump them)."""
    rows = []
    specs: list[tuple[str, int | None, str, float]] = [
        ("CS", None, op, float(ns)) for op, ns in CS_NS.items()
    ]
    for i, size in enumerate(RSA_BITS):
        for op, (base, grow) in RSA_NS.items():
            specs.append(("RSA", size, op, base * grow**i))
    for scheme, bits, op, ns in specs:
        per_op = ns * arch_factor * drift
        ops = 10
        n = (
            3
            if counted
            else (6 if op == "key_generation" else min(40, 6 + int(rng.expovariate(0.1))))
        )
        samples = [max(1, round(per_op * ops * rng.lognormvariate(0, 0.02))) for _ in range(n)]
        mid = statistics.median(samples) / ops
        row: dict[str, Any] = {
            "suite": "blindsig",
            "scheme": scheme,
            "key_bits": bits,
            "operation": op,
            "ops_per_block": ops,
            "samples_ns": samples,
            "valid": True,
            "invalid_reason": None,
            "iterations_requested": 10,
            "calibrated": False,
            "repetitions_requested": 100 if not counted else 3,
            "budget_exhausted": False,
            "printed": None,
            "uncertainty_ns": None,
            "run_medians_ns": None,
            "run_sizes": None,
            "param": None,
            "bytes_per_op": None,
            "processes": 1,
            "device": "cpu",
            "warmup_samples_ns": [round(samples[0] * 1.05)],
            "calibration_blocks": [],
            "block_ops": None,
            "instructions": None,
            "attribution": None,
            "callgrind": None,
            "stop_reason": "repetitions" if counted or op == "key_generation" else "target",
            "ci_target": None if counted else 0.02,
            "ci_reached": None if counted or n < 6 else True,
            "median_ci": None
            if counted or n < 6
            else {
                "confidence": 0.95,
                "low_per_op_ns": mid * 0.99,
                "high_per_op_ns": mid * 1.01,
                "half_width": 0.01,
            },
            "noise": {
                "repetitions": n,
                "steal": 0.0,
                "iowait": 0.0,
                "involuntary_switches": rng.randrange(0, 40),
                "load_max": round(rng.uniform(0.5, 2.5), 2),
                "cpus": 2,
                "governors": [],
                "freq_mhz_min": None,
                "freq_mhz_max": None,
            },
            "note": None,
        }
        if counted:
            total = per_op * 3.1 / arch_factor  # instructions per operation
            row["instructions"] = [round(total * ops) + k for k in range(3)]
            picks = rng.sample(range(len(FUNCTIONS)), 20)
            shares = sorted((rng.random() for _ in picks), reverse=True)
            whole = sum(shares)
            row["attribution"] = [
                {
                    "library": FUNCTIONS[p][0],
                    "function": FUNCTIONS[p][1],
                    "instructions_per_op": float(round(total * s / whole)),
                }
                for p, s in zip(picks, shares, strict=True)
            ]
        rows.append(row)
    return rows


def _document(arch: int, commit: int, commits: int, run_id: str, stamp: str, metric: str,
              rng: random.Random) -> dict[str, Any]:  # fmt: skip
    """One results file of the run of ``commit`` on architecture ``arch`` (a dict)."""
    key, platform, machine, cpu, factor = ARCHS[arch]
    emulated = key in EMULATED
    counted = metric == "instructions"
    # A slow drift, and two steps: CS at 35 % of the history, RSA at 70 %.
    drift = 1.0 + 0.02 * commit / commits
    rows = _rows(factor, drift, rng, counted)
    for row in rows:
        if row["scheme"] == "CS" and row["operation"] == "signing" and commit >= commits * 0.35:
            row["samples_ns"] = [round(s * 1.08) for s in row["samples_ns"]]
            if row["instructions"]:
                row["instructions"] = [round(s * 1.08) for s in row["instructions"]]
        if row["scheme"] == "RSA" and commit >= commits * 0.7:
            row["samples_ns"] = [round(s * 0.95) for s in row["samples_ns"]]
    sha = hashlib.sha256(f"commit {commit}".encode()).hexdigest()[:40]
    parameters = {
        "iterations": 10,
        "repetitions": 3 if counted else 100,
        "rsa_bits": list(RSA_BITS),
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
        "warmup": 1,
        "max_time_s": 120.0,
        "min_block_ns": None,
        "ci_target": None if counted else 0.02,
        "min_repetitions": 6,
        "confidence": 0.95,
        "order": "sequential",
        "order_seed": 1000 + commit,
        "driver_involuntary_switches": 120,
        "fresh_items": False,
    }
    name = f"ci-{key}"
    return {
        "format": "archbench-result",
        "version": 2,
        "metric": metric,
        "run_id": run_id,
        "target": {
            "name": name,
            "arch": key,
            "platform": platform,
            "base": "debian-trixie",
            "profile": "thesis",
        },
        "execution": {
            "emulated": emulated,
            "host_arch": "amd64" if emulated else key,
            "host_cpu": cpu,
            "qemu_version": "qemu-arm version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"
            if emulated
            else None,
            "qemu_cpu": "max" if emulated else None,
            "image_id": "sha256:" + hashlib.sha256(f"{key} {sha}".encode()).hexdigest(),
            "image_tag": f"archbench/{name}:{sha[:16]}",
            "image_digest": None,
            "base_image": f"archbench-base/debian-trixie:{key}",
            "base_built": "2026-12-01T03:19:26Z",
            "docker_host": "local",
            "engine_version": "20.10.24+dfsg1",
            "host_kernel": "6.1.0-28-cloud-amd64" if emulated else f"6.1.0-28-{key}",
            "host_parallel_runs": 1,
            "cpuset": None,
            "cpus": None,
            "repeat_index": 1,
            "repeat_count": 1,
            "interleaved": None,
            "archive": None,
            "gnunet_source": {
                "kind": "git",
                "location": "https://git.gnunet.org/gnunet.git",
                "ref": "master",
                "commit": sha,
                "sha256": None,
                "tree_sha256": None,
                "dirty": False,
                "version": "0.27.0",
                "build_system": "meson",
                "changes": "",
            },
            "harness_sha256": "7fd2365508702e11c0729798081d8100d2db522472d3a17a4582ae698aca6609",
            "count_definition": "0f7c84469c9fc52c475f055c942e5893cf8bcff0b80dfbdb6c6ee1c859923da3"
            if counted
            else None,
            "taler_source": None,
        },
        "reference": None,
        "harness": {
            "format": "archbench-harness",
            "version": 1,
            "harness_version": "0.2.0",
            "started_at": stamp,
            "duration_s": 140.5,
            "parameters": parameters,
            "suites": {
                "blindsig": {
                    "parameters": parameters,
                    "error": None,
                    "duration_s": 139.1,
                    "extra": {},
                }
            },
            "calibration": {
                "clock": "CLOCK_MONOTONIC",
                "resolution_ns": 1.0,
                "observed_tick_ns": 20.0,
                "pair_overhead_ns": 30.2,
                "probe_reads": 20000,
                "min_block_ns": 1000000,
                "max_block_ops": 100000,
            },
            "setup": {
                "cpu_model": cpu,
                "cores": 4,
                "machine": machine,
                "kernel": f"Linux 6.1.0-28-{key} #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1",
                "os": "Debian GNU/Linux 13 (trixie)",
                "packages": {
                    "libgnunetutil": f"0.27.0-git{sha[:8]}",
                    "libsodium": "1.0.18-1+deb13u1",
                    "libgcrypt": "1.11.0-7+deb13u1",
                    "openssl": "3.5.1-1",
                    "gcc": "4:14.2.0-1",
                },
                "gnunet_version": "0.27.0",
                "gcc_version": "gcc (Debian 14.2.0-19) 14.2.0",
                "cpu_flags": list(FLAGS) if key == "amd64" or emulated else [],
                "cpu_affinity": [0, 1, 2, 3],
                "cpu_limits": {
                    "cgroup": "v2",
                    "quota_us": None,
                    "period_us": 100000,
                    "cpus": None,
                    "cpuset": "0-3",
                },
                "load_average": [1.2, 0.9, 0.5],
                "tools": {},
                "package_names": {
                    "libgnunetutil": "(built from source)",
                    "libsodium": f"libsodium23:{key}",
                    "libgcrypt": f"libgcrypt20:{key}",
                    "openssl": f"libssl3t64:{key}",
                    "gcc": "gcc",
                },
                "clock_resolution_ns": 1,
                "build": {
                    "cc": "cc",
                    "cc_version": "cc (Debian 14.2.0-19) 14.2.0",
                    "cflags": "-O2 -Wall -Wextra -Werror",
                    "gnunet_version": "0.27.0",
                    "build_machine": machine,
                },
                "gnunet": None,
            },
            "rows": rows,
            "counting": {
                "instrument": "qemu-tcg-plugin",
                "qemu": "qemu-arm",
                "qemu_version": "qemu-arm version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)",
                "qemu_package": "1:7.2+dfsg-7+deb12u18+b3",
                "cpu_model": "max",
                "plugin_version": "3",
                "plugin_api": 1,
                "tools_image": "archbench/count-tools:armv7-0720f6a40a840e18",
                "calibration": {
                    "iterations": 100000,
                    "instructions_per_iteration": 2,
                    "counts": [200021, 400021],
                    "expected_difference": 200000,
                    "difference": 200000,
                    "overhead": 21,
                    "exact": True,
                },
                "fixed_rsa_keys": {},
                "symbol_tables": {"blindsig": "symtab", "libgcrypt.so.20.5.0": "dynsym"},
            }
            if counted
            else None,
        },
    }


def _keys(value: Any, at: str = "") -> set[str]:
    """Every key path of a JSON value (list items as ``[]``)."""
    if isinstance(value, dict):
        return {f"{at}.{k}" for k in value} | {
            p for k, v in value.items() for p in _keys(v, f"{at}.{k}")
        }
    if isinstance(value, list):
        return {p for v in value for p in _keys(v, f"{at}[]")}
    return set()


def generate(root: Path, runs: int, seed: int = 40) -> None:
    """``runs`` runs (``len(ARCHS)`` per commit) in the results folder ``root``.

    Raises:
        SystemExit: a generated file is not a valid result (the format changed).
    """
    from archbench.result import Result

    rng = random.Random(seed)  # noqa: S311 - synthetic measurements, not secrets
    commits = max(1, runs // len(ARCHS))
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    checked: set[tuple[int, str]] = set()
    for commit in range(commits):
        for arch in range(len(ARCHS)):
            when = start + dt.timedelta(hours=4 * commit, minutes=7 * arch)
            run_id = when.strftime("%Y%m%dT%H%M%SZ") + f"-{commit * len(ARCHS) + arch:06x}"
            stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            folder = root / run_id
            folder.mkdir(parents=True)
            key = ARCHS[arch][0]
            metrics = ("time", "instructions") if key in EMULATED else ("time",)
            manifest = {
                "format": "archbench-run",
                "version": 1,
                "run_id": run_id,
                "started_at": stamp,
                "matrix_file": "matrix.yml",
                "matrix_text": _MATRIX_TEXT,
                "targets": [f"ci-{key}"],
                "overrides": {},
                "repeat": 1,
                "cpuset": None,
                "cpus": None,
                "seconds": {f"ci-{key}": {"build": 312.5, "run": 140.5}},
                "suites": [],
                "archive": None,
                "metrics": list(metrics),
                "gnunet": f"git+https://git.gnunet.org/gnunet.git@{commit:040x}",
                "taler": None,
                "history": None,
            }
            (folder / "run.json").write_text(json.dumps(manifest, indent=2) + "\n")
            for metric in metrics:
                doc = _document(arch, commit, commits, run_id, stamp, metric, rng)
                if (arch, metric) not in checked:
                    # The real format: the model reads it and writes the same keys back.
                    model = Result.model_validate(doc)
                    if _keys(json.loads(model.model_dump_json())) != _keys(doc):
                        raise SystemExit(f"generated {metric} result differs from the model")
                    checked.add((arch, metric))
                suffix = ".instructions" if metric == "instructions" else ""
                text = json.dumps(doc, indent=2) + "\n"
                (folder / f"ci-{key}{suffix}.json").write_text(text, encoding="utf-8")


_MATRIX_TEXT = """version: 1
defaults:
  blindsig: {iterations: 10, repetitions: 3, rsa_bits: [1024, 2048, 3072, 4096], ci_target: 0.02}
bases:
  debian-trixie: {source: bootstrap, suite: trixie, variant: minbase}
targets:
  - {name: ci-amd64, arch: amd64, base: debian-trixie}
  - {name: ci-arm64, arch: arm64, base: debian-trixie}
  - {name: ci-riscv64, arch: riscv64, base: debian-trixie}
  - {name: ci-ppc64le, arch: ppc64le, base: debian-trixie}
  - {name: ci-armv7, arch: armv7, base: debian-trixie}
"""

_WORKER = """
import json, resource, sys, time
start = time.perf_counter()
from pathlib import Path
from archbench.cli.report import ReportRequest, render_report
request = ReportRequest(results=Path(sys.argv[1]), out=Path(sys.argv[2]), runs=None)
render_report(request, on_line=lambda line: None)
seconds = time.perf_counter() - start
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "seconds": seconds,
    "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
    "rss_mb": me.ru_maxrss / 1024,
    "child_rss_mb": kids.ru_maxrss / 1024,
}))
"""


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def measure(repo: Path, results: Path, out: Path) -> dict[str, float]:
    """One ``invoke report --all-runs`` in a fresh process: seconds, peak RSS (MiB) and the
    outputs' sizes (bytes)."""
    # Byte-compiled modules are kept, as on a user's machine (a first run writes them).
    env = {**os.environ, "PYTHONPATH": str(repo), "MPLBACKEND": "Agg"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, str(results), str(out)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"report failed:\n{done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    figures |= {
        "page": _size(out / "results.html"),
        "detail": sum(_size(p) for p in out.glob("results-runs-*.js")),
        "md": _size(out / "appendix.md"),
        "tex": _size(out / "appendix.tex"),
        "exports": sum(_size(out / n) for n in ("results.csv", "results.json")),
        "runs": sum(_size(out / n) for n in ("runs.csv", "run-rows.csv")),
        "all": _size(out),
    }
    return figures


def _span(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"  # noqa: E501


def _above(fd: int, low: int) -> int:
    """``fd`` moved to the lowest free descriptor from ``low`` on."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, low)
    os.close(fd)
    return moved


class _Chromium:
    """Headless Chromium driven over ``--remote-debugging-pipe`` (the DevTools protocol as
    NUL-separated JSON on fds 3 and 4): no client library, no port."""

    def __init__(self, profile: Path) -> None:
        chromium = shutil.which("chromium")
        if chromium is None:
            raise SystemExit("--browser needs Debian's chromium (apt-get install chromium)")
        to_child, self._send = os.pipe()
        self._recv, from_child = os.pipe()
        # Above 4, so that putting one end at fd 3 never closes the other.
        to_child, from_child = (_above(fd, 10) for fd in (to_child, from_child))
        args = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1280,2000",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        # Chromium reads the protocol on fd 3 and writes it on fd 4: a shell puts the
        # pipes' ends there.
        self._proc = subprocess.Popen(
            # bash: dash reads one digit of a descriptor
            ["bash", "-c", f'exec "$@" 3<&{to_child} 4>&{from_child}', "bash", *args],
            pass_fds=(to_child, from_child),
            stdout=subprocess.DEVNULL,
            stderr=open(profile.parent / f"{profile.name}.log", "wb"),  # noqa: SIM115
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.session = ""

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: bool = True) -> dict[str, Any]:  # fmt: skip
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._recv, 1 << 16)
                if not chunk:
                    raise SystemExit("chromium went away")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        got = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return got.get("result", {}).get("value")

    def close(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=30)


def browse(page: Path, profile: Path) -> dict[str, float]:
    """Open ``page`` in a fresh headless Chromium; ms from navigation to the first figure
    drawn (a plotly SVG in the DOM, read by a MutationObserver set up before the page's
    scripts run), and whether a run's detail, clicked, was drawn."""
    browser = _Chromium(profile)
    try:
        targets = browser.call("Target.getTargets", session=False)["targetInfos"]
        page_target = next(t["targetId"] for t in targets if t["type"] == "page")
        browser.session = browser.call(
            "Target.attachToTarget", {"targetId": page_target, "flatten": True}, session=False
        )["sessionId"]
        browser.call("Page.enable")
        browser.call("Runtime.enable")
        browser.call(
            "Page.addScriptToEvaluateOnNewDocument",
            {
                "source": "new MutationObserver((_, o) => { if (document.querySelector("
                "'.main-svg')) { window.__firstFigure = performance.now(); o.disconnect(); } })"
                ".observe(document, {childList: true, subtree: true});"
            },
        )
        started = time.perf_counter()
        browser.call("Page.navigate", {"url": page.as_uri()})
        first = None
        while time.perf_counter() - started < 120:
            first = browser.evaluate("window.__firstFigure || null")
            if first is not None:
                break
            time.sleep(0.05)
        loaded = browser.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        # A run's detail: the first "show" button of a run, clicked, then waited for.
        clicked = browser.evaluate(
            "(() => { const b = document.querySelector('[data-detail]'); "
            "if (!b) return false; b.click(); return b.getAttribute('data-detail'); })()"
        )
        shown = 0.0
        if clicked:
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 30:
                if browser.evaluate(
                    f"!!document.querySelector('[data-detail-of=\"{clicked}\"] table')"
                ):
                    shown = (time.perf_counter() - t0) * 1000
                    break
                time.sleep(0.05)
        return {
            "first_ms": float(first) if first is not None else float("nan"),
            "load_ms": float(loaded or 0),
            "detail_ms": shown if clicked else float("nan"),
        }
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", default="1000,10000", help="run counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure")
    parser.add_argument("--keep", type=Path, help="generate the folders here once, and reuse")
    parser.add_argument("--cold", action="store_true", help="remove the index before each")
    parser.add_argument("--browser", action="store_true", help="time the page in Chromium")
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()
    counts = sorted(int(n) for n in args.runs.split(","))
    print(f"checkout {args.repo}, load {os.getloadavg()[0]:.2f}, {args.repeats} repeat(s)")
    with tempfile.TemporaryDirectory(prefix="archbench-history-") as tmp:
        home = args.keep or Path(tmp)
        for count in counts:
            results = home / f"results-{count}"
            if not results.is_dir():
                t0 = time.perf_counter()
                generate(results, count)
                print(
                    f"generated {count} runs in {time.perf_counter() - t0:.0f} s, "
                    f"{_size(results) / 1e6:.0f} MB",
                    flush=True,
                )
            if args.generate_only:
                continue
            runs = []
            for i in range(args.repeats):
                if args.cold or i == 0:
                    (results / INDEX).unlink(missing_ok=True)
                out = Path(tmp) / f"out-{count}-{i}"
                runs.append(measure(args.repo, results, out))
                r = runs[-1]
                print(
                    f"  {count} runs, {'cold' if args.cold or i == 0 else 'warm'}: "
                    f"{r['seconds']:.1f} s ({r['cpu']:.1f} s CPU), peak RSS {r['rss_mb']:.0f} "
                    f"MiB (figure processes {r['child_rss_mb']:.0f}, shared pages "
                    f"included); page {r['page'] / 1e6:.2f} MB (+{r['detail'] / 1e6:.1f} MB "
                    f"on demand), appendix.md {r['md'] / 1e6:.2f} MB, .tex "
                    f"{r['tex'] / 1e6:.2f} MB, results.csv+json {r['exports'] / 1e6:.1f} MB, "
                    f"runs.csv+run-rows.csv {r['runs'] / 1e6:.1f} MB, all {r['all'] / 1e6:.0f}"
                    f" MB; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
            print(
                f"{count:>6} runs: {_span([r['seconds'] for r in runs], '.1f')} s, CPU "
                f"{_span([r['cpu'] for r in runs], '.1f')} s, peak RSS "
                f"{_span([r['rss_mb'] for r in runs], '.0f')} MiB"
            )
            if args.browser:
                page = Path(tmp) / f"out-{count}-0" / "results.html"
                floor = _floor_page(page)
                seen, base = [], []
                for i in range(args.repeats):  # interleaved: the page, then the floor
                    seen.append(browse(page, Path(tmp) / f"profile-{count}-{i}"))
                    base.append(browse(floor, Path(tmp) / f"profile-floor-{count}-{i}"))
                ratios = [s["first_ms"] / b["first_ms"] for s, b in zip(seen, base, strict=True)]
                print(
                    f"{count:>6} runs, Chromium: first figure "
                    f"{_span([s['first_ms'] for s in seen], '.0f')} ms after navigation "
                    f"(plotly.js alone, one figure: {_span([b['first_ms'] for b in base], '.0f')}"
                    f" ms; ratio {_span(ratios, '.2f')}), load event "
                    f"{_span([s['load_ms'] for s in seen], '.0f')} ms, a run's detail "
                    f"{_span([s['detail_ms'] for s in seen], '.0f')} ms after its click; "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )


def _floor_page(page: Path) -> Path:
    """Beside ``page``, a page of its plotly.js and one figure of three points: what any
    page of plotly's costs before its first figure (the floor the ratio is taken to)."""
    text = page.read_text(encoding="utf-8")
    start = text.index("<script>")
    plotly = text[start : text.index("</script>", start) + len("</script>")]
    floor = page.with_name("floor.html")
    floor.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{plotly}</head><body>"
        "<div id='p'></div><script>Plotly.newPlot('p', [{x: [1, 2, 3], y: [1, 3, 2]}], {});"
        "</script></body></html>",
        encoding="utf-8",
    )
    return floor


if __name__ == "__main__":
    main()
