"""The blindsig suite under the counting QEMU: instructions per block instead of wall time.

``--count-with DIR`` runs the driver under the counting layer (``counting.py``)
with block markers, after checking the counter on a calibration program.
Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import counting
from blindsig_output import HarnessError

KEY_NAME = "count-key-rsa-{bits}.key"
"""File name of the fixed RSA test key of one modulus size, in :data:`KEY_DIR`."""
KEY_DIR = Path(__file__).resolve().parent / "drivers" / "counting"
"""The fixed RSA test keys (``harness/drivers/counting``, with ``count-keys.md``)."""
KEY_MAX_BYTES = 65536
"""Largest key file the driver reads (count_inputs.h COUNT_KEY_MAX_BYTES)."""
_KEY_START = re.compile(rb"\A\(8:key-data")


def fixed_rsa_keys(key_dir: Path, rsa_bits: Sequence[int]) -> dict[str, str]:
    """The fixed RSA keys counting uses: ``{file name: sha256 hex}``, one per size.

    ``rsa_bits``: the RSA modulus sizes (bits) the driver runs. Each key is
    ``key_dir/count-key-rsa-<bits>.key`` in GNUnet's encoding
    (``GNUNET_CRYPTO_rsa_private_key_encode``: a libgcrypt S-expression that
    starts with ``(8:key-data``); the driver itself decodes it and checks its
    modulus size.

    Raises:
        HarnessError: a key file is missing, empty, too large or not in that encoding.
    """
    found: dict[str, str] = {}
    for bits in rsa_bits:
        path = key_dir / KEY_NAME.format(bits=bits)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise HarnessError(
                f"counting: no fixed RSA-{bits} key {path} ({exc.strerror}); "
                "harness/drivers/counting/count-keys.md says how to make one"
            ) from exc
        if not 0 < len(data) < KEY_MAX_BYTES or not _KEY_START.match(data):
            raise HarnessError(
                f"counting: {path} is not a GNUnet RSA private key "
                f"(GNUNET_CRYPTO_rsa_private_key_encode output, under {KEY_MAX_BYTES} bytes)"
            )
        found[path.name] = hashlib.sha256(data).hexdigest()
    return found


def run_counting(
    args: argparse.Namespace,
    driver: Path,
    driver_args: Sequence[str],
    rsa_bits: Sequence[int] = (),
) -> tuple[str, dict[str, Any]]:
    """Calibrate the counter, then run blindsig under it with block markers.

    ``driver_args`` must ask for blocks of exactly ``--iterations``
    operations (``--min-block-ns 0``, set by run_blindsig()): counts do
    not need long blocks, and fixed sizes make runs comparable. RSA
    operations after key generation use the fixed keys in :data:`KEY_DIR`
    (``--count-keys``, :func:`fixed_rsa_keys`) for the ``rsa_bits`` sizes. With
    ``--ci-target``, run_blindsig() has already turned adaptive repetitions
    into ``--min-repetitions`` fixed ones (counts are exact).

    Returns:
        (driver stdout, the document's ``counting`` object, with the keys'
        sha256 under ``fixed_rsa_keys`` and the paired counts under the
        private key ``_paired``).

    Raises:
        HarnessError: no counting layer, a fixed key is missing or bad, the
            calibration is not exact, the driver fails under QEMU, or counts
            and blocks do not pair.
    """
    keys = fixed_rsa_keys(KEY_DIR, rsa_bits)
    key_args = ["--count-keys", str(KEY_DIR)] if keys else []
    try:
        counter = counting.load_counter(args.count_with)
        calibration = counting.run_calibration(
            counter,
            args.count_cpu,
            driver.parent / "count_calibrate",
            Path(tempfile.mkdtemp(prefix="archbench-count-")),
            counting.CALIBRATION_ITERATIONS,
        )
        out = Path(tempfile.mkdtemp(prefix="archbench-count-")) / "blindsig.count"
        stdout, counts = counting.run_counted(
            counter,
            args.count_cpu,
            driver,
            [*driver_args, "--count-markers", *key_args],
            out,
        )
        paired = counting.pair_counts(counting.driver_blocks(stdout), counts)
    except counting.CountError as exc:
        raise HarnessError(f"counting: {exc}") from exc
    doc = counting.provenance(
        counter, args.count_cpu, calibration, counts.plugin_version, counts.plugin_api
    )
    doc["fixed_rsa_keys"] = keys
    doc["_paired"] = paired
    return stdout, doc
