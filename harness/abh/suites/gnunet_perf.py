"""Suite ``gnunet-perf``: GNUnet's own ``perf_crypto_rsa`` and ``perf_crypto_cs``.

The programs the thesis appendix's figures come from, built in the image
(``images/gnunet-perf/build.sh``) from Debian's ``gnunet`` source package of
the installed libgnunetutil, with archbench's minimal patch
``perf-crypto-0.20.patch`` (0.20's ``GNUNET_CRYPTO_cs_r_derive`` takes a
seed string; ``perf_crypto_rsa`` takes its key sizes from the command line).
Each run prints "10x 2048-signing took 34 ms" lines; they are kept verbatim
in ``extra["logs"]`` (one text per program and run) and parsed on the host by
``archbench.upstream`` into rows of suite ``gnunet-perf``, with GNUnet's
truncation of printed times as each row's uncertainty.

The build records its provenance (source package and version, patch sha256)
in ``PROVENANCE``, or why it failed in ``BUILD-FAILED`` (no ``deb-src`` for
the release, a patch that does not apply): the image never fails to build
because of this optional suite.

An image whose libgnunetutil is built from a GNUnet source has the programs of that
source instead (``images/gnunet-source/build-libgnunetutil.sh --perf``), unpatched:
its ``PROVENANCE`` lists the ``programs`` built (``perf_crypto_rsa``; upstream has
not built ``perf_crypto_cs`` since 0.21), why each other one is missing
(``unavailable.<program>``), and ``rsa_bits`` when the program measures fixed key
sizes (upstream's ``main`` ignores its arguments).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from abh.suites.common import SuiteError, SuiteOutcome, check_keys, run_command

SUITE = "gnunet-perf"
PERF_DIR = Path("/opt/archbench/gnunet-perf")
PROGRAMS = ("perf_crypto_rsa", "perf_crypto_cs")
DEFAULTS: dict[str, Any] = {
    "programs": list(PROGRAMS),
    "runs": 3,
    "rsa_bits": [1024, 2048, 3072, 4096],
    "timeout_s": 1800.0,
}


def _positive_int(value: Any, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the settings and fill defaults.

    Returns:
        ``{"programs": [names from PROGRAMS], "runs": int, "rsa_bits": [int],
        "timeout_s": float (per program run)}``.

    Raises:
        SuiteError: unknown key, unknown program, runs outside 1..1000, a key
            size outside 512..16384, a timeout <= 0.
    """
    check_keys(SUITE, config, list(DEFAULTS))
    merged = {**DEFAULTS, **config}
    programs = merged["programs"]
    if not isinstance(programs, list) or not programs or any(p not in PROGRAMS for p in programs):
        raise SuiteError(
            f"{SUITE}: programs = {programs!r}; allowed: a list of {', '.join(PROGRAMS)}"
        )
    if not _positive_int(merged["runs"], 1, 1000):
        raise SuiteError(f"{SUITE}: runs = {merged['runs']!r}; allowed: an integer 1..1000")
    bits = merged["rsa_bits"]
    sizes_ok = isinstance(bits, list) and all(_positive_int(b, 512, 16384) for b in bits)
    if not sizes_ok or not bits:
        raise SuiteError(f"{SUITE}: rsa_bits = {bits!r}; allowed: a list of integers 512..16384")
    timeout = merged["timeout_s"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}; allowed: seconds > 0")
    return {
        "programs": list(programs),
        "runs": merged["runs"],
        "rsa_bits": list(bits),
        "timeout_s": float(timeout),
    }


def provenance(perf_dir: Path = PERF_DIR) -> dict[str, str]:
    """``PROVENANCE`` as written by ``build.sh``: ``key=value`` lines (source, patch, ...).

    Raises:
        SuiteError: the programs were not built (the image was built without
            this suite, or the build failed: its reason is quoted).
    """
    failed = perf_dir / "BUILD-FAILED"
    if failed.is_file():
        reason = failed.read_text(encoding="utf-8", errors="replace").strip()
        raise SuiteError(f"GNUnet's perf programs could not be built in this image: {reason}")
    try:
        text = (perf_dir / "PROVENANCE").read_text(encoding="utf-8")
    except OSError:
        raise SuiteError(
            f"GNUnet's perf programs are not in this image ({perf_dir} has no PROVENANCE): "
            "the image is built with them when the target's matrix entry (or --suite) "
            "includes gnunet-perf; rebuild with 'invoke bench --suite gnunet-perf'"
        ) from None
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def run(
    config: dict[str, Any], warn: Callable[[str], None], perf_dir: Path = PERF_DIR
) -> SuiteOutcome:
    """Run each program ``runs`` times; stdout of each run goes to ``extra["logs"]``.

    Log keys are ``<program>#<run>`` (``perf_crypto_rsa#1``), so the host
    knows which lines pool into one row's samples.

    Raises:
        SuiteError: not built (see :func:`provenance`), a program exits
            non-zero or runs past ``timeout_s``.
    """
    prov = provenance(perf_dir)
    programs = list(config["programs"])
    if "programs" in prov:
        built = prov["programs"].split(",")
        for program in [p for p in programs if p not in built]:
            reason = prov.get(f"unavailable.{program}", "not built in this image")
            warn(f"{program}: {reason}")
        programs = [p for p in programs if p in built]
        if not programs:
            raise SuiteError(
                f"none of the programs asked for ({', '.join(config['programs'])}) is "
                f"built in this image (built: {prov['programs']})"
            )
    fixed_bits = [int(b) for b in prov["rsa_bits"].split(",")] if "rsa_bits" in prov else None
    if fixed_bits is not None and "perf_crypto_rsa" in programs:
        if sorted(config["rsa_bits"]) != sorted(fixed_bits):
            warn(
                f"perf_crypto_rsa of this image is upstream's, which measures "
                f"{', '.join(map(str, fixed_bits))} bits whatever it is asked; "
                f"rsa_bits {config['rsa_bits']} is not applied"
            )
        config = {**config, "rsa_bits": fixed_bits}
    config = {**config, "programs": programs}
    logs: dict[str, str] = {}
    total = config["runs"] * len(config["programs"])
    done_count = 0
    t0 = time.monotonic()
    for index in range(1, config["runs"] + 1):
        for program in config["programs"]:
            argv = [str(perf_dir / program)]
            if program == "perf_crypto_rsa" and fixed_bits is None:
                argv += [str(b) for b in config["rsa_bits"]]
            print(
                f"progress: {SUITE} {program} run {index}/{config['runs']} "
                f"({done_count}/{total} done, {time.monotonic() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
            done = run_command(argv, config["timeout_s"])
            if done.returncode != 0:
                tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
                raise SuiteError(
                    f"{program} exited with status {done.returncode}; output ends:\n{tail}"
                )
            if " took " not in done.stdout:
                warn(f"{program} printed no timing line")
            logs[f"{program}#{index}"] = done.stdout
            done_count += 1
    return SuiteOutcome(
        rows=[],
        parameters=config,
        tools={
            "gnunet perf_crypto (Debian source)"
            if fixed_bits is None
            else "gnunet perf_crypto": prov.get("source", "unknown")
        },
        extra={"logs": logs, "provenance": prov},
    )
