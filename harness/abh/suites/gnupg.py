"""GnuPG suite: wall time of whole ``gpg --decrypt`` processes, per key algorithm.

What is measured follows the seed ``gnupg-token-decrypt-bench.txt`` (a token
benchmark posted to gnupg-users in 2017): GnuPG is a black box, and one sample
is the wall time of one complete ``gpg --batch --quiet --decrypt -o /dev/null F.gpg``
process (process start, keyring lookup, the agent's public-key decryption of the
session key, symmetric decryption of the file), taken with ``time.monotonic_ns()``
around the process (:func:`~abh.suites.common.run_command`), so it also contains the
harness's fork/exec overhead (about 1 ms).

Procedure, per run (everything inside one throwaway ``GNUPGHOME``, a
``tempfile.TemporaryDirectory`` of mode 0700 that is removed afterwards; the
``gpg-agent`` started for it is stopped with ``gpgconf --homedir H --kill all``
at the end, also on error):

1. ``file_bytes`` random bytes (``os.urandom``) are written to a file.
2. The device prepares one encryption key per algorithm (:class:`Device`). The
   ``cpu`` device creates a certify-only Ed25519 primary key without passphrase
   (``--quick-gen-key ... ed25519 cert never``) and then one encryption subkey per
   algorithm (``--quick-add-key FPR ALGO encr never``); the wall time of that
   ``--quick-add-key`` process is the ``key_generation`` row (one sample).
   The subkey is checked against the ``--with-colons`` key listing.
3. The file is encrypted to exactly that subkey (``-r FPR!``), without compression
   unless ``compress`` is true (the seed used gpg's default, ZLIB/ZIP compression).
4. A first decryption to a file is run and discarded (as in the seed: it pays the
   agent's key loading); its output must hash (SHA-256) to the plaintext and its
   status lines must report ``DECRYPTION_OKAY`` with the expected subkey, so a broken
   decryption is never timed.
5. ``runs`` decryptions to ``/dev/null`` are timed.

Rows (``suite`` = ``gnupg``, ``ops_per_block`` = 1, ``device`` = the device name):

=================  ===================  ========  ==================  =============
algorithm (gpg)    scheme               key_bits  param               bytes_per_op
=================  ===================  ========  ==================  =============
``rsa2048``        ``RSA``              2048      None                file_bytes
``cv25519``        ``ECDH``             None      ``Curve25519``      file_bytes
``nistp256``       ``ECDH``             None      ``P-256``           file_bytes
=================  ===================  ========  ==================  =============

Operations are ``key_generation`` (bytes_per_op None) and ``decrypt``. ``param``
holds the curve (OpenPGP names the public-key algorithm ECDH, id 18, and the curve
separately); the file size is in ``bytes_per_op`` so reports can show bandwidth
(MB/s) and in ``parameters.file_bytes``. A failed step of one algorithm gives an
invalid row whose only sample is the wall time of the failed process (never published).

Settings (``normalize_config``): ``device`` (``cpu``), ``algorithms``
(``rsa2048``, ``rsa4096``, ``cv25519``), ``file_bytes`` (1 MiB), ``runs`` (5),
``compress`` (false), ``timeout_s`` (300 s per gpg process).

Modules: ``gnupg_output`` parses what gpg prints, ``gnupg_keys`` holds the
algorithms and devices; this module checks the settings and measures.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from abh.suites.common import (
    Progress,
    SuiteError,
    SuiteOutcome,
    check_keys,
    make_row,
    run_command,
)
from abh.suites.gnupg_keys import ALGORITHMS, DEVICES, SUITE, Gpg, GpgRunner, PreparedKey
from abh.suites.gnupg_output import (
    GpgVersion,
    first_error_line,
    parse_decryption_status,
    parse_gpg_version,
)

#: Block size for writing and hashing files, bytes.
_CHUNK_BYTES = 1 << 20

DEFAULTS: dict[str, Any] = {
    "device": "cpu",
    "algorithms": ["rsa2048", "rsa4096", "cv25519"],
    "file_bytes": 1 << 20,
    "runs": 5,
    "compress": False,
    "timeout_s": 300.0,
}

MAX_FILE_BYTES = 1 << 30
MAX_RUNS = 10_000
MAX_TIMEOUT_S = 86_400.0


# --------------------------------------------------------------------------- settings


def _int_setting(config: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SuiteError(f"{SUITE}: {key}={value!r}; expected an integer from {low} to {high}")
    return value


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults (see the module docstring).

    Returns:
        ``{"device": str, "algorithms": [str], "file_bytes": int, "runs": int,
        "compress": bool, "timeout_s": float}``.

    Raises:
        SuiteError: unknown key, a value of the wrong type or range, an unknown or
            repeated algorithm, or a device other than ``cpu``.
    """
    check_keys(SUITE, config, list(DEFAULTS))
    merged = {**DEFAULTS, **config}
    device = merged["device"]
    if device not in DEVICES:
        raise SuiteError(
            f"{SUITE}: device={device!r} is not available; only 'cpu' exists (soft keys in a "
            "throwaway GNUPGHOME). A smart-card token would be a Device class registered in "
            "abh.suites.gnupg_keys.DEVICES whose prepare() puts each encryption subkey on the card "
            "(see docs/suites-gnupg.md)"
        )
    algorithms = merged["algorithms"]
    allowed = ", ".join(ALGORITHMS)
    if (
        not isinstance(algorithms, list)
        or not algorithms
        or not all(isinstance(a, str) for a in algorithms)
    ):
        raise SuiteError(
            f"{SUITE}: algorithms={algorithms!r}; expected a non-empty list of: {allowed}"
        )
    for name in algorithms:
        if name not in ALGORITHMS:
            raise SuiteError(f"{SUITE}: algorithms has {name!r}; allowed: {allowed}")
    if len(set(algorithms)) != len(algorithms):
        raise SuiteError(f"{SUITE}: algorithms={algorithms!r} names an algorithm twice")
    compress = merged["compress"]
    if not isinstance(compress, bool):
        raise SuiteError(f"{SUITE}: compress={compress!r}; expected true or false")
    timeout = merged["timeout_s"]
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise SuiteError(
            f"{SUITE}: timeout_s={timeout!r}; expected seconds > 0 and <= {MAX_TIMEOUT_S:g}"
        )
    return {
        "device": device,
        "algorithms": list(algorithms),
        "file_bytes": _int_setting(merged, "file_bytes", 1, MAX_FILE_BYTES),
        "runs": _int_setting(merged, "runs", 1, MAX_RUNS),
        "compress": compress,
        "timeout_s": float(timeout),
    }


# --------------------------------------------------------------------------- measuring


def write_random_file(path: str, size: int) -> str:
    """Write ``size`` bytes from ``os.urandom`` to ``path``; return their SHA-256 (hex)."""
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        left = size
        while left > 0:
            chunk = os.urandom(min(left, _CHUNK_BYTES))
            digest.update(chunk)
            out.write(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def file_sha256(path: str) -> str:
    """SHA-256 (hex) of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as src:
        while chunk := src.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def measure_key(
    gpg: GpgRunner,
    key: PreparedKey,
    *,
    device: str,
    plain_path: str,
    plain_sha256: str,
    workdir: str,
    file_bytes: int,
    runs: int,
    compress: bool,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows and ``extra`` entry for one prepared key (steps 3-5 of the module docstring).

    Returns:
        ``(rows, extra)``: a ``key_generation`` row when the device generated the key,
        then a ``decrypt`` row (invalid when encryption, the checked first decryption
        or a timed run failed); ``extra`` holds the subkey fingerprint, the discarded
        first run in ns and the ``DECRYPTION_INFO`` figures.
    """
    spec = key.spec
    common: dict[str, Any] = {"key_bits": spec.key_bits, "param": spec.param, "device": device}
    extra: dict[str, Any] = {
        "algorithm": spec.gpg_name,
        "subkey_fingerprint": key.fingerprint,
        "keygen_ns": key.keygen_ns,
    }
    rows: list[dict[str, Any]] = []
    if key.error is not None or key.fingerprint is None:
        reason = key.error or "device returned no key"
        extra["error"] = reason
        if key.keygen_ns is not None:
            rows.append(
                make_row(
                    SUITE,
                    spec.scheme,
                    "key_generation",
                    [key.keygen_ns],
                    1,
                    valid=False,
                    invalid_reason=reason,
                    **common,
                )
            )
        return rows, extra
    if key.keygen_ns is not None:
        rows.append(make_row(SUITE, spec.scheme, "key_generation", [key.keygen_ns], 1, **common))

    def decrypt_row(samples: Sequence[int], reason: str | None = None) -> dict[str, Any]:
        return make_row(
            SUITE,
            spec.scheme,
            "decrypt",
            samples,
            1,
            bytes_per_op=file_bytes,
            repetitions_requested=runs,
            valid=reason is None,
            invalid_reason=reason,
            **common,
        )

    encrypted = os.path.join(workdir, f"{spec.gpg_name}.gpg")
    checked = os.path.join(workdir, f"{spec.gpg_name}.out")
    compression = [] if compress else ["--compress-algo", "none"]
    enc = gpg(
        [
            *("--yes", "--trust-model", "always", *compression),
            *("-r", f"{key.fingerprint}!", "-o", encrypted, "-e", plain_path),
        ]
    )
    if enc.returncode != 0:
        reason = f"encryption failed: {first_error_line(enc)}"
        extra["error"] = reason
        rows.append(decrypt_row([enc.elapsed_ns], reason))
        return rows, extra

    first = gpg(["--quiet", "--status-fd", "1", "--decrypt", "-o", checked, encrypted])
    extra["discarded_first_run_ns"] = first.elapsed_ns
    status = parse_decryption_status(first.stdout)
    extra["decryption_info"] = status.as_extra()
    problem: str | None = None
    if first.returncode != 0 or not status.okay:
        problem = f"first decryption failed: {first_error_line(first)}"
    elif status.key_fingerprint != key.fingerprint:
        problem = f"decrypted with subkey {status.key_fingerprint}, not {key.fingerprint}"
    elif file_sha256(checked) != plain_sha256:
        problem = "decrypted output differs from the plaintext (SHA-256 mismatch)"
    if os.path.exists(checked):
        os.remove(checked)
    if problem is not None:
        extra["error"] = problem
        rows.append(decrypt_row([first.elapsed_ns], problem))
        return rows, extra

    samples: list[int] = []
    for index in range(runs):
        result = gpg(["--quiet", "--decrypt", "-o", os.devnull, encrypted])
        samples.append(result.elapsed_ns)
        if result.returncode != 0:
            problem = f"timed run {index + 1} failed: {first_error_line(result)}"
            extra["error"] = problem
            break
    rows.append(decrypt_row(samples, problem))
    return rows, extra


def probe_version(timeout_s: float) -> GpgVersion:
    """Run and parse ``gpg --version``.

    Raises:
        SuiteError: gpg is missing (add Debian package ``gnupg``), fails, or is too old.
    """
    try:
        result = run_command(["gpg", "--version"], timeout_s)
    except SuiteError as exc:
        raise SuiteError(
            f"{SUITE}: {exc}; the Debian package is gnupg (gpg, gpg-agent, gpgconf)"
        ) from None
    if result.returncode != 0:
        raise SuiteError(f"{SUITE}: `gpg --version` failed: {first_error_line(result)}")
    return parse_gpg_version(result.stdout)


def stop_agent(homedir: str, timeout_s: float, warn: Callable[[str], None]) -> None:
    """``gpgconf --homedir H --kill all``; problems are warned about, never raised."""
    try:
        result = run_command(["gpgconf", "--homedir", homedir, "--kill", "all"], timeout_s)
    except SuiteError as exc:
        warn(f"{SUITE}: could not stop gpg-agent for {homedir}: {exc}")
        return
    if result.returncode != 0:
        warn(f"{SUITE}: gpgconf --kill all failed: {first_error_line(result)}")


def run(config: dict[str, Any], warn: Callable[[str], None]) -> SuiteOutcome:
    """Measure every configured algorithm (see the module docstring).

    Raises:
        SuiteError: bad settings, gpg missing or too old, or the device cannot prepare keys.
    """
    cfg = normalize_config(config)
    timeout = cfg["timeout_s"]
    version = probe_version(timeout)
    device = DEVICES[cfg["device"]]()
    specs = [ALGORITHMS[name] for name in cfg["algorithms"]]
    rows: list[dict[str, Any]] = []
    per_key: list[dict[str, Any]] = []
    progress = Progress(SUITE, 1 + len(specs))
    with tempfile.TemporaryDirectory(prefix="archbench-gnupg-", ignore_cleanup_errors=True) as home:
        os.chmod(home, 0o700)
        gpg = Gpg(home, timeout)
        try:
            workdir = os.path.join(home, "data")
            os.mkdir(workdir, 0o700)
            plain = os.path.join(workdir, "plain.bin")
            try:
                plain_sha256 = write_random_file(plain, cfg["file_bytes"])
            except OSError as exc:
                raise SuiteError(f"{SUITE}: cannot write the test file {plain}: {exc}") from None
            progress.step("key generation: " + ", ".join(cfg["algorithms"]))
            for key in device.prepare(gpg, specs):
                progress.step(f"decrypt {cfg['file_bytes']} B with {key.spec.gpg_name}")
                key_rows, extra = measure_key(
                    gpg,
                    key,
                    device=device.name,
                    plain_path=plain,
                    plain_sha256=plain_sha256,
                    workdir=workdir,
                    file_bytes=cfg["file_bytes"],
                    runs=cfg["runs"],
                    compress=cfg["compress"],
                )
                if "error" in extra:
                    warn(f"{SUITE}: {key.spec.gpg_name}: {extra['error']}")
                rows.extend(key_rows)
                per_key.append(extra)
        finally:
            stop_agent(home, timeout, warn)
    return SuiteOutcome(
        rows=rows,
        parameters=cfg,
        tools={"gnupg": version.tool_text},
        extra={"gpg_version": list(version.version), "keys": per_key},
    )
