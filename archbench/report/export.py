"""The exports of the tidy frame: ``results.csv``, ``results.json`` and ``gnupg-decrypt.csv``.

The frame itself (columns, statistics, provenance) is built by
:func:`archbench.report.frame.tidy_frame`. Here: what the exported files make of
it (every unknown value an empty cell or ``null``), and the gnupg-token seed's
CSV.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import pandas as pd

from archbench.errors import ReportError
from archbench.report import instructions
from archbench.report.formats import csv_text
from archbench.report.frame import tidy_frame
from archbench.result import Result, scheme_id, write_texts

CSV_FILE: Final = "results.csv"
JSON_FILE: Final = "results.json"
GNUPG_CSV_FILE: Final = "gnupg-decrypt.csv"
GNUPG_COLUMNS: Final = ("device", "algorithm", "time", "bandwidth", "machine", "run_id")
"""The gnupg-token seed's CSV (device, algorithm, time in s; its bandwidth in bytes/s),
plus where each decryption ran."""


def gnupg_frame(results: Sequence[Result]) -> pd.DataFrame:
    """One row per timed GnuPG decryption, in the gnupg-token seed's CSV shape.

    Columns :data:`GNUPG_COLUMNS`: ``device`` (``CPU`` for soft keys, as the
    seed names it), ``algorithm`` (``RSA-2048``, ``ECDH-Curve25519``),
    ``time`` = one ``gpg --decrypt`` process's wall time in s, ``bandwidth`` =
    file bytes / time in bytes/s (the seed's ``args.size / data['time']``),
    ``machine`` the target and ``run_id`` its run. Invalid rows are left out.
    An input without gnupg rows gives an empty frame with these columns.
    """
    records = []
    for result in results:
        for row in result.harness.rows:
            if row.suite != "gnupg" or row.operation != "decrypt" or not row.valid:
                continue
            size = row.key_bits if row.key_bits is not None else row.param
            device = "CPU" if row.device == "cpu" else row.device
            for ns in row.samples_ns:
                seconds = ns / row.ops_per_block / 1e9
                records.append(
                    {
                        "device": device,
                        "algorithm": scheme_id(row.scheme, size),
                        "time": seconds,
                        "bandwidth": row.bytes_per_op / seconds if row.bytes_per_op else None,
                        "machine": result.target.name,
                        "run_id": result.run_id,
                    }
                )
    return pd.DataFrame.from_records(records, columns=list(GNUPG_COLUMNS))


SPREAD_COLUMNS: Final = ("stdev_ns", "iqr_ns", "cv", "within_run_cv")
"""Spread of the samples: unknown (empty) with one sample, not 0."""
UNPUBLISHED_COLUMNS: Final = ("min_ns", "max_ns", "mean_ns", "q1_ns", "q3_ns")
"""What a publication that prints one figure per row does not give: empty for reference rows."""
UNKNOWN_TEXT: Final = "unknown"
"""How results files spell a fact nobody recorded (reference data's ``started_at``)."""


def export_frame(
    results: Sequence[Result],
    counted: Sequence[Result] = (),
    *,
    tidy: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The :func:`tidy_frame` as exported: every missing or unknown value is empty.

    One convention for what is not known, where the tidy frame (which
    reports compute with) keeps numbers: the spread of a single sample
    (:data:`SPREAD_COLUMNS`) is unknown, not 0; reference rows have only
    the printed figure (:data:`UNPUBLISHED_COLUMNS` empty); a core count the
    Setup box does not print (``Reference.placeholders``, the Xeon and
    Pentium's placeholder 1) is empty, not 1; text ``"unknown"`` is empty.
    ``instructions_per_op`` comes from ``counted``
    (:func:`archbench.report.instructions.add_export_column`). ``tidy`` is
    the :func:`tidy_frame` of ``results`` when the caller has built it
    already; it is not changed.

    Raises:
        ReportError: a damaged row.
    """
    base = tidy_frame(results) if tidy is None else tidy
    frame = instructions.add_export_column(base, counted)
    single = frame["n_samples"] <= 1
    for column in SPREAD_COLUMNS:
        frame[column] = frame[column].mask(single)
    published = frame["origin"] == "reference"
    for column in UNPUBLISHED_COLUMNS:
        frame[column] = frame[column].mask(published)
    placeholder = {
        (r.run_id, r.target.name)
        for r in results
        if r.reference is not None and "cores" in r.reference.placeholders
    }
    pairs = zip(frame["run_id"], frame["target"], strict=True)
    unknown_cores = [pair in placeholder for pair in pairs]
    frame["cores"] = (
        frame["cores"].astype("Int64").mask(pd.Series(unknown_cores, index=frame.index))
    )
    text = [c for c in frame.columns if frame[c].dtype == object or str(frame[c].dtype) == "str"]
    frame[text] = frame[text].mask(frame[text] == UNKNOWN_TEXT)
    return frame


def write_exports(
    results: Sequence[Result],
    out_dir: Path,
    counted: Sequence[Result] = (),
    *,
    frame: pd.DataFrame | None = None,
) -> list[Path]:
    """Write ``results.csv`` and ``results.json`` (the :func:`export_frame`) into ``out_dir``.

    One row per (run_id, target, row_id). The CSV has a header row and empty
    cells for missing or unknown values; the JSON is
    an array of objects with ``null`` for them, so ``pd.read_json(path)`` and
    ``pd.read_csv(path)`` both give the frame back (but for text cells that would
    start a spreadsheet formula: :func:`csv_text`). Written atomically. With
    GnuPG rows, ``gnupg-decrypt.csv`` (:func:`gnupg_frame`) is written too.

    Returns:
        ``[out_dir/results.csv, out_dir/results.json]`` (+ ``gnupg-decrypt.csv``).

    Raises:
        ReportError: a damaged row, or ``out_dir`` is not writable.
    """
    # Counting results (--metric instructions) add instructions_per_op, empty where not counted.
    # A render passes the frame it built (archbench.report.frame.build) so it is built once.
    frame = export_frame(results, counted, tidy=frame)
    rendered = {
        out_dir / CSV_FILE: csv_text(frame),
        out_dir / JSON_FILE: json.dumps(_json_rows(frame), indent=2, ensure_ascii=False) + "\n",
    }
    gnupg = gnupg_frame(results)
    if not gnupg.empty:
        rendered[out_dir / GNUPG_CSV_FILE] = csv_text(gnupg)
    return write_texts(rendered, ReportError, "export", "choose a writable output directory")


def _json_value(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame as JSON-ready dicts: missing values are ``None``, numbers are Python's."""
    return [
        {column: _json_value(value) for column, value in zip(frame.columns, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


ENVIRONMENTS_FILE: Final = "environments.json"
"""The whole of every environment value cut in the outputs (:func:`bound_environments`)."""
ENV_TEXT_LIMIT: Final = 200
"""Characters of one environment value (CPU model, OS, kernel, a package version) the
outputs repeat per row; a longer one is cut there and stored whole once."""


def _cut_env(long: dict[str, str], field: str, value: str | None) -> str | None:
    """``value`` cut to :data:`ENV_TEXT_LIMIT` (the whole kept in ``long[field]``)."""
    if value is None or len(value) <= ENV_TEXT_LIMIT:
        return value
    long[field] = value
    return f"{value[:ENV_TEXT_LIMIT]}… ({len(value)} chars; whole in {ENVIRONMENTS_FILE})"


def bound_environments(
    results: Sequence[Result],
) -> tuple[list[Result], dict[str, dict[str, str]]]:
    """``results`` with every environment text longer than :data:`ENV_TEXT_LIMIT` cut,
    and the whole values by ``"<run id>/<target>"`` and field.

    The CSV, the JSON, the chapter and the page repeat a machine's environment in every
    row, caption and table; a results file with a megabyte-long CPU model would
    otherwise grow by that megabyte per row (a 4 MB file gave 330 MB). Cut values end
    ``… (N chars; whole in environments.json)``; :func:`write_environments` stores the
    whole ones once. Results without long values are returned as they are.
    """
    out: list[Result] = []
    whole: dict[str, dict[str, str]] = {}
    for r in results:
        long: dict[str, str] = {}
        cut = functools.partial(_cut_env, long)

        setup = r.harness.setup
        new_setup = setup.model_copy(
            update={
                "cpu_model": cut("cpu_model", setup.cpu_model),
                "os": cut("os", setup.os),
                "kernel": cut("kernel", setup.kernel),
                "machine": cut("machine", setup.machine),
                "gnunet_version": cut("gnunet_version", setup.gnunet_version),
                "gcc_version": cut("gcc_version", setup.gcc_version),
                "packages": {k: cut(f"packages.{k}", v) for k, v in setup.packages.items()},
            }
        )
        execution = r.execution
        if execution is not None:
            execution = execution.model_copy(
                update={
                    "host_cpu": cut("host_cpu", execution.host_cpu),
                    "qemu_version": cut("qemu_version", execution.qemu_version),
                }
            )
        if not long:
            out.append(r)
            continue
        whole.setdefault(f"{r.run_id}/{r.target.name}", {}).update(long)
        harness = r.harness.model_copy(update={"setup": new_setup})
        out.append(r.model_copy(update={"harness": harness, "execution": execution}))
    return out, whole


def write_environments(whole: dict[str, dict[str, str]], out_dir: Path) -> list[Path]:
    """``environments.json``: the values :func:`bound_environments` cut, once each; none
    written when nothing was cut.

    Raises:
        ReportError: ``out_dir`` is not writable.
    """
    if not whole:
        return []
    text = json.dumps(whole, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return write_texts(
        {out_dir / ENVIRONMENTS_FILE: text}, ReportError, "export", "choose a writable --out"
    )
