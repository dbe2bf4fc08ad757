"""The tidy frame behind every table, and its CSV and JSON exports."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from helpers import result, row

from archbench.analysis import summarize
from archbench.errors import ReportError
from archbench.report import export
from archbench.report.frame import tidy_frame
from archbench.report.record import COLUMNS
from archbench.result import ArchiveRef, Result
from archbench.upstream import reference


@pytest.fixture
def measured() -> Result:
    return result(
        "amd64-native",
        "amd64",
        "x86_64",
        "AMD Ryzen 7 PRO 5850U",
        [
            row("RSA", "signing", [7_000_000, 7_100_000, 6_900_000], 1024),
            row("CS", "signing", [77_000, 78_000, 76_000, 80_000]),
            row("CS", "unblinding", [1_000, 1_200, 900]),
        ],
    )


@pytest.fixture
def emulated() -> Result:
    return result(
        "riscv64-emu",
        "riscv64",
        "riscv64",
        "AMD EPYC 7763 64-Core Processor",
        [row("CS", "signing", [1_697_000, 1_698_000])],
        emulated=True,
    )


def test_columns_and_order(measured: Result, emulated: Result) -> None:
    frame = tidy_frame([measured, emulated])
    assert tuple(frame.columns) == COLUMNS
    # results in the given order, rows in the appendix's: signing before unblinding, CS first
    assert list(zip(frame["target"], frame["label"], frame["operation"], strict=True)) == [
        ("amd64-native", "CS", "signing"),
        ("amd64-native", "RSA 1024 bit", "signing"),
        ("amd64-native", "CS", "unblinding"),
        ("riscv64-emu", "CS", "signing"),
    ]
    assert frame["key_bits"].isna().tolist() == [True, False, True, True]
    empty = tidy_frame([])
    assert empty.empty and tuple(empty.columns) == COLUMNS
    assert empty["median_ns"].dtype == "float64"


def test_statistics_are_summarize(measured: Result) -> None:
    cs = tidy_frame([measured]).iloc[0]
    stats = summarize([77_000, 78_000, 76_000, 80_000], 10)
    # sorted 76 000, 77 000, 78 000, 80 000 ns: median (77 000 + 78 000) / 2
    assert cs["median_ns"] == stats.median_ns == 77_500
    assert cs["q1_ns"] == stats.q1_ns == 76_750  # type 7: 76 000 + 0.75 * 1 000
    assert cs["iqr_ns"] == pytest.approx(stats.iqr_ns)
    assert cs["cv"] == pytest.approx(stats.cv)
    assert cs["per_op_ns"] == 7_750
    assert cs["ops_per_s"] == pytest.approx(1e9 / 7_750)
    assert cs["thesis_ops"] == 10
    assert cs["thesis_ms"] == pytest.approx(0.0775)
    assert cs["n_samples"] == 4
    assert cs["flags"] == ""
    unblinding = tidy_frame([measured]).iloc[2]
    assert unblinding["flags"] == "noisy"  # CV of [1 000, 1 200, 900] is 0.148


def test_provenance(measured: Result, emulated: Result) -> None:
    frame = tidy_frame([measured, emulated]).set_index("target")
    native = frame.loc["amd64-native"].iloc[0]
    assert native["origin"] == "measured"
    assert not native["emulated"]
    assert pd.isna(native["qemu_version"])
    assert native["host_cpu"] == "AMD EPYC 7763 64-Core Processor"
    assert native["libgcrypt"] == "1.11.0-7"
    assert native["kernel"].startswith("Linux 6.1.0-28-amd64")
    assert pd.isna(native["reference_source"])
    emu = frame.loc["riscv64-emu"]
    assert bool(emu["emulated"]) and emu["qemu_version"] == "8.2.2" and emu["arch"] == "riscv64"


def test_reference_rows() -> None:
    loaded, _ = reference.load_reference()
    frame = tidy_frame(loaded)
    assert len(frame) == 10 * 27 + 15
    assert set(frame["origin"]) == {"reference"}
    # one printed number per row is what a publication is, not a warning
    assert set(frame["flags"]) == {""}
    assert frame["image_id"].isna().all()
    ryzen = frame[(frame["target"] == "thesis-amd-ryzen-7") & (frame["label"] == "RSA 4096 bit")]
    keygen = ryzen[ryzen["operation"] == "key_generation"].iloc[0]
    assert keygen["printed"] == "10 000 ms"
    assert keygen["thesis_ms"] == 10_000.0
    assert (
        keygen["reference_source"] == "thesis-appendix-performance.tex, tab:comp-sign-amd-ryzen-7"
    )
    module = frame[frame["target"] == "thesis-security-module"]
    sequential = module[module["operation"] == "helper_sequential_signing"].iloc[0]
    # the figure is the whole block: 100 signatures in 2.591 ms
    assert sequential["thesis_ops"] == 100
    assert sequential["thesis_ms"] == pytest.approx(2.591)
    assert sequential["ops_per_s"] == pytest.approx(100 / 2.591e-3)


def test_csv_and_json_round_trip(tmp_path: Path, measured: Result, emulated: Result) -> None:
    paths = export.write_exports([measured, emulated], tmp_path)
    assert paths == [tmp_path / "results.csv", tmp_path / "results.json"]
    csv = pd.read_csv(paths[0])
    # Without counting results the instructions column is there and empty.
    assert list(csv.columns) == [*COLUMNS, "instructions_per_op"]
    assert csv["instructions_per_op"].isna().all()
    assert csv["median_ns"].tolist() == [77_500.0, 7_000_000.0, 1_000.0, 1_697_500.0]
    assert math.isnan(csv["key_bits"][0]) and csv["key_bits"][1] == 1024
    records = json.loads(paths[1].read_text(encoding="utf-8"))
    assert len(records) == 4
    assert records[0]["key_bits"] is None and records[1]["key_bits"] == 1024
    assert records[3]["qemu_version"] == "8.2.2"
    assert records[0]["qemu_version"] is None
    assert records[0]["instructions_per_op"] is None
    assert pd.read_json(paths[1])["target"].tolist() == ["amd64-native"] * 3 + ["riscv64-emu"]


def test_unwritable_directory(tmp_path: Path, measured: Result) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ReportError, match="cannot write export"):
        export.write_exports([measured], blocker / "out")


def test_rerun_from_an_archive_names_it(measured: Result) -> None:
    assert measured.execution is not None
    ref = ArchiveRef(
        archive_id="20261201T090000Z-abc123-0011aabb",
        manifest_sha256="1" * 64,
        source_run_id="20261201T090000Z-abc123",
    )
    rerun = measured.model_copy(
        update={"execution": measured.execution.model_copy(update={"archive": ref})}
    )
    frame = tidy_frame([measured, rerun])
    assert frame["archive_id"].isna().sum() == len(measured.harness.rows)
    assert list(frame["archive_id"].dropna()) == ["20261201T090000Z-abc123-0011aabb"] * len(
        rerun.harness.rows
    )


def test_export_key_is_run_target_row_id(measured: Result) -> None:
    shipped, _ = reference.load_reference()
    frame = export.export_frame([measured, *shipped])
    assert not frame.duplicated(["run_id", "target", "row_id"]).any()
    # Without row_id the security module's 100- and 800-parallel rows collide.
    old_key = ["target", "scheme", "key_bits", "operation"]
    collide = frame[frame.duplicated(old_key, keep=False)]
    assert set(collide["operation"]) == {"helper_parallel_signing"}
    assert len(collide) == 10  # CS and four RSA sizes, twice
    module = frame[(frame["target"] == "thesis-security-module") & (frame["scheme"] == "CS")]
    assert module["row_id"].tolist() == [
        "security-module:CS:helper_sequential_signing:100",
        "security-module:CS:helper_parallel_signing:100",
        "security-module:CS:helper_parallel_signing:800",
    ]
    assert frame["row_id"].iloc[1] == "blindsig:RSA 1024 bit:signing"


def test_unknown_values_are_exported_empty(tmp_path: Path, measured: Result) -> None:
    shipped, _ = reference.load_reference()
    once = result("once", "amd64", "x86_64", "AMD Ryzen 7", [row("CS", "signing", [77_000])])
    paths = export.write_exports([measured, once, *shipped], tmp_path)
    csv = pd.read_csv(paths[0], keep_default_na=False, dtype=str)
    records = json.loads(paths[1].read_text(encoding="utf-8"))
    assert not (csv == "unknown").any().any() and len(records) == len(csv)
    by_target = {t: csv[csv["target"] == t] for t in csv["target"].unique()}
    # One sample has no known spread: empty, not 0; four samples have one.
    for column in export.SPREAD_COLUMNS:
        assert by_target["once"][column].tolist() == [""]
        assert (by_target["thesis-amd-ryzen-7"][column] == "").all()
        assert by_target["amd64-native"][column].iloc[0] != ""
    # A publication prints one figure per row: no min, max, mean or quartiles.
    ryzen = by_target["thesis-amd-ryzen-7"]
    assert (ryzen["min_ns"] == "").all() and (ryzen["q3_ns"] == "").all()
    assert ryzen["median_ns"].iloc[0] == "204000.0"
    assert by_target["once"]["min_ns"].tolist() == ["77000.0"]
    # The Xeon's and Pentium's boxes print no core count: the placeholder 1 is not a fact.
    assert set(by_target["thesis-intel-xeon"]["cores"]) == {""}
    assert set(by_target["thesis-intel-pentium"]["cores"]) == {""}
    assert set(by_target["thesis-amd-ryzen-7"]["cores"]) == {"8"}
    assert set(ryzen["started_at"]) == {""}
    xeon = next(r for r in records if r["target"] == "thesis-intel-xeon")
    assert xeon["cores"] is None and xeon["started_at"] is None and xeon["stdev_ns"] is None
