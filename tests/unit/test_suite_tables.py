"""Report tables of the suites beyond the appendix, on hand-made results with known answers."""

from __future__ import annotations

import pytest
from helpers import result, row
from matplotlib.patches import Rectangle
from suite_rows import ROWS, suite_row

from archbench.analysis import order_statistics
from archbench.report import render_latex, render_markdown, render_markdown_table
from archbench.report.export import gnupg_frame
from archbench.report.frame import build
from archbench.report.model import Machine
from archbench.report.plots import gnupg_figure
from archbench.report.suites import row_unit, suite_tables
from archbench.result import Result, SuiteRun


def openssl_result() -> Result:
    # The golden rows' RSA-2048 (1000 signatures in 1 s) and AES-128-GCM (1000 blocks of
    # 16 KiB in 0.5 s: 32.768 MB/s), with their P-256 row swapped for P-521 and brainpool.
    rsa, _p256, aes = ROWS["openssl-speed"]
    rows = [
        rsa,
        # 1900 in 1 s with two processes: scaling 1.9.
        suite_row(
            "openssl-speed",
            "RSA",
            "sign",
            [1_000_000_000],
            key_bits=2048,
            ops_per_block=1900,
            processes=2,
        ),
        # P-521 5000/s vs brainpoolP512r1 1000/s: the tinc seed's ~5x.
        suite_row(
            "openssl-speed", "ECDSA", "sign", [1_000_000_000], param="P-521", ops_per_block=5000
        ),
        suite_row(
            "openssl-speed",
            "ECDSA",
            "sign",
            [1_000_000_000],
            param="brainpoolP512r1",
            ops_per_block=1000,
        ),
        aes,
    ]
    return result("box", "amd64", "x86_64", "Xeon", rows)


def _machines(results: list[Result]) -> list[Machine]:
    return list(build(results).machines)


def test_openssl_tables_scaling_and_nist_vs_brainpool() -> None:
    parts = dict(
        suite_tables(_machines([openssl_result()]), lambda v: f"{v:.6g}", lambda v: f"{v:.2f}")
    )
    tables = {t.label: t for t in parts["openssl speed"]}
    cross = tables["tab:suite-openssl-speed-native-1"]
    assert cross.header == ("Scheme", "Operation", "Unit", "box (amd64, Debian 13, GNUnet 0.21.1)")
    assert cross.rows[0] == ("RSA 2048 bit", "sign", "ops/s", "1000")
    assert cross.rows[1] == ("RSA 2048 bit", "sign (2 processes)", "ops/s", "1900")
    assert cross.rows[4] == ("AES-128-GCM 16384 B", "encrypt", "MB/s", "32.768")
    multi = tables["tab:suite-openssl-speed-multi"]
    # helpers.result(): 8 cores; no load average recorded.
    assert multi.rows == (
        ("box", "RSA 2048 bit", "sign", "ops/s", "1000", "2", "1900", "1.90", "8 / –"),
    )
    nist = tables["tab:suite-openssl-speed-nist-brainpool"]
    assert nist.rows == (("box", "ECDSA sign", "P-521 / brainpoolP512r1", "5000", "1000", "5.00"),)


def test_sodium_order_statistics_follow_pycryptopp() -> None:
    # Per-op times 10, 11, 12, 13, 50 µs (blocks of 2 ops): best 10, 3rd 12, mean 19.2, worst 50.
    samples = [26_000, 20_000, 100_000, 22_000, 24_000]
    stats = order_statistics(samples, 2, 3)
    assert (stats.best, stats.nth_best, stats.mean, stats.nth_worst, stats.worst) == (
        10_000,
        12_000,
        19_200,
        12_000,
        50_000,
    )
    r = result(
        "pi",
        "arm64",
        "aarch64",
        "Cortex-A72",
        [suite_row("sodium", "Ed25519", "sign", samples, ops_per_block=2)],
    )
    r = r.model_copy(
        update={
            "harness": r.harness.model_copy(
                update={"suites": {"sodium": SuiteRun(parameters={"nth": 3})}}
            )
        }
    )
    ((_title, tables),) = suite_tables(_machines([r]), lambda v: f"{v:g}", str)
    order = tables[-1]
    assert order.header[-4:] == ("Best", "3. best", "Mean", "Worst")
    assert order.rows == (("pi", "Ed25519", "sign", "µs", "10", "12", "19.2", "50"),)
    with pytest.raises(ValueError, match="at least one sample"):
        order_statistics([], 1, 3)


def test_gnupg_csv_table_and_plot() -> None:
    # RSA-2048 decrypts 1 MB in 20 and 40 ms, Curve25519 in 10 ms; key generation is no CSV row.
    rows = [
        *ROWS["gnupg"],
        suite_row("gnupg", "RSA", "key_generation", [300_000_000], key_bits=2048),
    ]
    r = result("box", "amd64", "x86_64", "Xeon", rows)
    csv = gnupg_frame([r])
    assert list(csv["algorithm"]) == ["RSA-2048", "RSA-2048", "ECDH-Curve25519"]
    assert list(csv["device"]) == ["CPU"] * 3
    assert list(csv["time"]) == [0.02, 0.04, 0.01]
    assert list(csv["bandwidth"]) == [50_000_000.0, 25_000_000.0, 100_000_000.0]
    assert row_unit(build([r]).machines[0].records[2]) == "ms"
    ((title, tables),) = suite_tables(_machines([r]), lambda v: f"{v:g}", str)
    assert title == "GnuPG decryption"
    assert tables[-1].rows[0] == ("box", "cpu", "RSA 2048 bit", "30", "33.3333")
    fig = gnupg_figure([r])
    assert fig is not None
    (ax,) = fig.axes
    heights = [p.get_height() for p in ax.patches if isinstance(p, Rectangle)]
    assert sorted(round(h, 3) for h in heights) == [10.0, 30.0]


def test_other_suites_render_beside_the_appendix() -> None:
    both = openssl_result().model_copy(deep=True)
    blind = row("CS", "signing", [1_000_000, 1_100_000])
    both = both.model_copy(
        update={"harness": both.harness.model_copy(update={"rows": (blind, *both.harness.rows)})}
    )
    md = render_markdown([both])
    assert "## Suite: openssl speed" in md and "| P-521 / brainpoolP512r1 |" in md
    # The appendix section shows only the blind-signature row.
    assert md.count("10x signing") == 1
    tex = render_latex([both])
    assert r"\label{tab:suite-openssl-speed-nist-brainpool}" in tex
    assert "Machines of the other suites" in tex
    table = render_markdown_table(both)
    assert table.startswith("| Signature Scheme") and "**NIST vs Brainpool" in table
