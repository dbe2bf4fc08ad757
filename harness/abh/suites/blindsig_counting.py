"""The blindsig suite under the counting QEMU: instructions per block instead of wall time.

``--count-with DIR`` runs the driver under the counting layer (``counting``)
with block markers, after checking the counter on a calibration program, with
the fixed RSA test keys of ``drivers/counting`` after each key generation; its
blocks (:func:`driver_blocks`) are paired with the counts and the counts put
into the rows (:func:`attach_counts`). Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abh.suites import callgrind, count_symbols, counting
from abh.suites.blindsig_output import HarnessError
from abh.suites.common import HARNESS_DIR, driver_path
from abh.suites.counting import CountError

KEY_NAME = "count-key-rsa-{bits}.key"
"""File name of the fixed RSA test key of one modulus size, in :data:`KEY_DIR`."""
KEY_DIR = HARNESS_DIR / "drivers" / "counting"
"""The fixed RSA test keys (``harness/drivers/counting``, with ``count-keys.md``)."""
KEY_MAX_BYTES = 65536
"""Largest key file the driver reads (``drivers/counting/count_inputs.h``
COUNT_KEY_MAX_BYTES)."""
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


BlockKey = tuple[str, int | None, str, str, int]
"""(scheme, key bits or None, operation, kind, index): kind is ``sample``,
``calibration`` or ``warmup``; index is the repetition or discard index."""


def driver_blocks(stdout: str) -> list[BlockKey]:
    """The blocks of blindsig's output in the order it printed them (= ran them).

    Raises:
        CountError: a ``sample`` or ``discard`` line with too few fields.
    """
    keys: list[BlockKey] = []
    for line in stdout.splitlines():
        f = line.split("\t")
        if f[0] == "sample" and len(f) == 7:
            bits = int(f[2]) or None
            keys.append((f[1], bits, f[3], "sample", int(f[5])))
        elif f[0] == "discard" and len(f) == 8:
            bits = int(f[2]) or None
            keys.append((f[1], bits, f[3], f[4], int(f[6])))
        elif f[0] in ("sample", "discard"):
            raise CountError(f"driver line has the wrong number of fields: {line!r}")
    return keys


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
        private key ``_paired``, and each block's ``{(library, function):
        instructions}`` under ``_attributed``, with ``symbol_tables`` naming
        which ELF symbol table named each library's functions).

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
            driver_path("count_calibrate"),
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
        blocks = driver_blocks(stdout)
        paired = counting.pair_counts(blocks, counts)
        # --no-symbol-files: the libraries' own tables only (what counts named before).
        store = (
            None
            if getattr(args, "no_symbol_files", False)
            else count_symbols.SymbolStore(counter.directory / count_symbols.SYMBOLS_DIR_NAME)
        )
        attributed, tables = count_symbols.attribute_blocks(
            blocks, counts.tbs, counts.maps, counts.guest_base, store
        )
        checked = (
            run_callgrind_check(driver, [*driver_args, "--count-markers", *key_args], blocks)
            if getattr(args, "callgrind", False)
            else None
        )
        # callgrind reads only the installed files' own tables: compare it with the
        # plugin's attribution from the same tables, not with the symbol files' names.
        compared = (
            count_symbols.attribute_blocks(blocks, counts.tbs, counts.maps, counts.guest_base)[0]
            if checked is not None and store is not None and store.checks
            else None
        )
    except CountError as exc:
        raise HarnessError(f"counting: {exc}") from exc
    doc = counting.provenance(
        counter, args.count_cpu, calibration, counts.plugin_version, counts.plugin_api
    )
    doc["fixed_rsa_keys"] = keys
    if tables:
        doc["symbol_tables"] = tables
        # Which symbol files named a stripped library's functions, which were refused
        # (their code is not the installed library's) and why.
        doc["symbol_files"] = store.provenance() if store is not None else {}
        doc["symbol_store"] = (
            store.summary() if store is not None else {"present": False, "off": True}
        )
    doc["_paired"] = paired
    doc["_attributed"] = attributed
    if checked is not None:
        doc["callgrind"] = {"valgrind": checked[0], "region": callgrind.REGION_FUNCTION}
        doc["_callgrind"] = checked[1]
        if compared is not None:
            doc["_callgrind_attributed"] = compared
    return stdout, doc


def run_callgrind_check(
    driver: Path, driver_args: Sequence[str], blocks: Sequence[BlockKey]
) -> tuple[str, dict[BlockKey, callgrind.Part]]:
    """Run the counted driver again, same arguments, under callgrind (``--callgrind``).

    ``blocks``: the blocks of the run under QEMU; callgrind's run must print the
    same ones in the same order (the inputs are fixed), one profile part each.

    Returns:
        (``valgrind --version``, {block: its callgrind :class:`callgrind.Part`}).

    Raises:
        CountError: no valgrind, the run fails, or its blocks or parts differ from
            ``blocks``.
    """
    version = callgrind.valgrind_version()
    stdout, parts = callgrind.run_callgrind(
        driver, driver_args, Path(tempfile.mkdtemp(prefix="archbench-callgrind-"))
    )
    again = driver_blocks(stdout)
    if again != list(blocks):
        raise CountError(
            f"callgrind: the driver ran {len(again)} blocks under valgrind, {len(blocks)}"
            " under QEMU, or in another order"
        )
    if len(parts) != len(blocks):
        raise CountError(
            f"callgrind wrote {len(parts)} profile parts for {len(blocks)} blocks"
            f" (one per {callgrind.REGION_FUNCTION} call expected)"
        )
    return version, dict(zip(blocks, parts, strict=True))


ATTRIBUTION_LIMIT = 25
"""Functions kept per row in ``row["attribution"]``; the rest are summed into one entry."""


def attach_counts(
    rows: Sequence[dict[str, Any]],
    paired: dict[BlockKey, int],
    attributed: dict[BlockKey, dict[tuple[str, str], int]] | None = None,
    checked: dict[BlockKey, callgrind.Part] | None = None,
    compared: dict[BlockKey, dict[tuple[str, str], int]] | None = None,
) -> None:
    """Set ``row["instructions"]`` of every valid blindsig row: one count per sample.

    Counts are in repetition order, aligned with ``samples_ns``; instructions
    per operation of a block = count / ``ops_per_block``. Invalid rows get none.
    With ``attributed`` (per block), ``row["attribution"]`` gets the row's
    top :data:`ATTRIBUTION_LIMIT` functions over its samples, in instructions
    per operation (:func:`count_symbols.top_functions`; they sum to
    ``sum(instructions) / (len(instructions) x ops_per_block)``). With
    ``checked`` (``--callgrind``, per block), ``row["callgrind"]`` gets
    callgrind's instructions per operation over the same blocks and both
    attributions with unnamed code merged per library (:func:`callgrind.grouped`):
    ``{"instructions_per_op", "libraries", "plugin_libraries", "functions",
    "plugin_functions"}`` (libraries: ``{file name: instructions per operation}``);
    the plugin's side is ``compared`` when given (the attribution from the installed
    files' own symbol tables, which callgrind reads, when symbol files named more).

    Raises:
        CountError: a valid row's repetition has no count.
    """
    for row in rows:
        if not row.get("valid") or row.get("suite") != "blindsig":
            continue
        found = []
        keys: list[BlockKey] = [
            (row["scheme"], row["key_bits"], row["operation"], "sample", rep)
            for rep in range(len(row["samples_ns"]))
        ]
        for key in keys:
            if key not in paired:
                raise CountError(f"no count for {key}")
            found.append(paired[key])
        row["instructions"] = found
        if attributed:
            parts = [attributed.get(key, {}) for key in keys]
            row["attribution"] = count_symbols.top_functions(
                count_symbols.merge(parts), ATTRIBUTION_LIMIT, len(keys) * row["ops_per_block"]
            )
        if checked and attributed:
            ops = len(keys) * row["ops_per_block"]
            cg = [checked[key] for key in keys]
            plugin = count_symbols.merge((compared or attributed).get(key, {}) for key in keys)
            cg_functions = count_symbols.merge(p.functions for p in cg)
            row["callgrind"] = {
                "instructions_per_op": sum(p.total for p in cg) / ops,
                "libraries": callgrind.per_library(cg_functions, ops),
                "plugin_libraries": callgrind.per_library(plugin, ops),
                "functions": count_symbols.top_functions(
                    callgrind.grouped(cg_functions),
                    ATTRIBUTION_LIMIT,
                    ops,
                ),
                "plugin_functions": count_symbols.top_functions(
                    callgrind.grouped(plugin), ATTRIBUTION_LIMIT, ops
                ),
            }
