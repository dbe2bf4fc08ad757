"""The blindsig suite under the counting QEMU: instructions per block instead of wall time.

``--count-with DIR`` runs the driver under the counting layer (``counting.py``)
with block markers, after checking the counter on a calibration program.
Standard library only.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import counting
from blindsig_output import HarnessError


def run_counting(
    args: argparse.Namespace, driver: Path, driver_args: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    """Calibrate the counter, then run blindsig under it with block markers.

    ``driver_args`` must ask for blocks of exactly ``--iterations``
    operations (``--min-block-ns 0``, set by run_blindsig()): counts do
    not need long blocks, and fixed sizes make runs comparable. With
    ``--ci-target``, run_blindsig() has already turned adaptive repetitions
    into ``--min-repetitions`` fixed ones (counts are exact).

    Returns:
        (driver stdout, the document's ``counting`` object with the paired
        counts under the private key ``_paired``).

    Raises:
        HarnessError: no counting layer, the calibration is not exact, the
            driver fails under QEMU, or counts and blocks do not pair.
    """
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
            [*driver_args, "--count-markers"],
            out,
        )
        paired = counting.pair_counts(counting.driver_blocks(stdout), counts)
    except counting.CountError as exc:
        raise HarnessError(f"counting: {exc}") from exc
    doc = counting.provenance(
        counter, args.count_cpu, calibration, counts.plugin_version, counts.plugin_api
    )
    doc["_paired"] = paired
    return stdout, doc
