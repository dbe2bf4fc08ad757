"""``invoke history`` of two GNUnet sources (Debian's 0.20.0 and 0.27.0 from the shared
tarball): amd64 timed in interleaved rounds and counted, riscv64 counted; the manifest, the
runs, the tables and the results page (opened in headless Chromium) agree."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from helpers import (
    CI_MATRIX,
    GNUNET_027_SHA256,
    GNUNET_TARBALLS,
    WORK,
    chromium_run,
    find_chromium,
    run_invoke,
)

from archbench.result import HistoryManifest, ResultStore, load

pytestmark = [pytest.mark.docker, pytest.mark.emulated]


def test_a_history_of_two_sources_times_natives_in_rounds_and_counts_everything(
    tmp_path: Path,
) -> None:
    tarball = GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"
    results, reports = tmp_path / "results", tmp_path / "reports"
    done = run_invoke(
        "history", "--matrix", str(CI_MATRIX), "--target", "ci-amd64,ci-riscv64",
        "--gnunet", f"debian,{tarball}@sha256:{GNUNET_027_SHA256}",
        "--rsa-bits", "1024", "--repetitions", "2", "--ci-target", "off",
        "--rounds", "2", "--seed", "11",
        # 20 operations a block: libgcrypt's entropy-pool mixing (about 40,590 instructions
        # in some blocks) is diluted below 5 % of CS signing's count per operation, so the
        # row is a level that can step ("varying"), not a draw ("random"), as the CI
        # matrix's 2 operations a block make it (docs/measurement.md, count kinds).
        "--iterations", "20",
        settings={"results": results, "work": WORK, "reports": reports},
        timeout=3600,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    store = ResultStore(results)
    (history_id,) = store.histories()
    manifest = store.load_history(history_id)
    assert isinstance(manifest, HistoryManifest)
    assert [v.gnunet for v in manifest.versions] == [
        "debian", f"{tarball}@sha256:{GNUNET_027_SHA256}"
    ]  # fmt: skip
    runs = [v.run_id for v in manifest.versions]
    # Each round ran both versions once, in the order the seed drew; all rounds are recorded.
    assert [r.round for r in manifest.order] == [1, 2]
    assert all(sorted(r.order) == sorted(runs) for r in manifest.order)
    for v in manifest.versions:
        files = [load(p) for p in store.files([v.run_id])]
        timed = [r for r in files if r.metric == "time"]
        counted = [r for r in files if r.metric == "instructions"]
        # amd64 was timed once per round, riscv64 never (its times would be QEMU's).
        assert sorted(r.target.name for r in timed) == ["ci-amd64", "ci-amd64"]
        assert sorted(r.execution.repeat_index for r in timed if r.execution) == [1, 2]
        assert {r.execution.interleaved for r in files if r.execution} == {v.session}
        assert sorted(r.target.name for r in counted) == ["ci-amd64", "ci-riscv64"]
        assert all(row.instructions for r in counted for row in r.harness.rows)
        run_json = json.loads((results / v.run_id / "run.json").read_text())
        assert run_json["history"] == history_id
        versions = {r.harness.setup.gnunet_version for r in files}
        assert versions == ({"0.20.0"} if v.gnunet == "debian" else {"0.27.0"})
    # The printed tables: both versions of every counted row, the second with its ratio.
    signing = next(
        line for line in done.stdout.splitlines() if "ci-riscv64" in line and "CS signing" in line
    )
    assert signing.count("×)") == 1, signing
    assert f"history: {results / history_id / 'history.json'}" in done.stdout
    # The page of the history: both versions and the rows, drawn without a console message.
    page = reports / "results.html"
    assert f"wrote {page}" in done.stdout
    shown = chromium_run(find_chromium(), tmp_path / "profile", "--dump-dom", page.as_uri())
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = shown.stdout
    for v in manifest.versions:
        assert v.run_id in dom, v.run_id
        assert v.label in dom or v.label.replace("'", "&#39;") in dom, v.label
    assert "CS signing" in dom and "ci-riscv64" in dom
    assert ":CONSOLE" not in shown.stderr, shown.stderr[-2000:]
    # Where the instructions went at CS signing's step, per architecture: 0.20's HKDF and
    # hashes are libgcrypt's, 0.27's libsodium's (docs/counting.md).
    functions = list(csv.DictReader((reports / f"history-{history_id}-functions.csv").open()))
    for arch in ("amd64", "riscv64"):
        mine = [f for f in functions if f["arch"] == arch and f["row"] == "CS signing"]
        assert 1 <= len(mine) <= 5, functions
        changes = {f["library"]: float(f["change"]) for f in reversed(mine)}
        assert changes.get("libgcrypt.so", 0) < 0 < changes.get("libsodium.so", 0), mine
        assert f"where CS signing moved on {arch}, v1 Debian's libgnunet → v2" in done.stdout
    text = (reports / f"history-{history_id}.md").read_text()
    assert "### Where the instructions went at each counted step" in text
    assert "Where the instructions went at each counted step" in dom
    assert 'src="data:image/png;base64,' in dom


def test_an_interleaved_a_a_on_a_busy_machine_finds_no_change(tmp_path: Path) -> None:
    # Issue 21's A/A goal: one extra busy core, started and stopped here; the same image
    # twice, in shuffled rounds; at least 90 % of the timed rows "no significant change"
    # and no counted row changed. Issue 39: RSA-2048 key generation counts random primes
    # (0.844x between two runs of one build) and blinding moves with libc's allocator:
    # the history reports no step, timed or counted, on any row, and says which counted
    # rows are not constants. 2 operations a block, the CI matrix's: counting RSA-2048
    # key generation under QEMU is the cost (10 a block: 891 s at load 7-9; 2: 132 s at
    # load 3-6 and 262 s at load 4-8, RSA-1024 at 10 148 s at load 5-8), and at 2 a
    # block CS signing's blocks
    # differ by whole pool mixes (34 %), read as a constant with extra work.
    results = tmp_path / "results"
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])  # one extra busy core
    try:
        done = run_invoke(
            "history", "--matrix", str(CI_MATRIX), "--target", "ci-amd64",
            "--gnunet", "debian,debian", "--rsa-bits", "2048", "--iterations", "2",
            "--repetitions", "5", "--ci-target", "off", "--rounds", "6", "--seed", "5",
            settings={"results": results, "work": WORK, "reports": tmp_path / "reports"},
            timeout=1800,
        )  # fmt: skip
    finally:
        hog.kill()
        hog.wait()
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    steps = done.stdout.split("### Steps", 1)[1].split("###", 1)[0]
    assert "No row steps across the series" in steps, steps
    assert "| instructions |" not in steps and "| time |" not in steps, steps
    assert "RSA-2048 key generation: random" in done.stdout, done.stdout[-6000:]
    assert "CS signing: exact+extra" in done.stdout, done.stdout[-6000:]
    store = ResultStore(results)
    (history_id,) = store.histories()
    a, b = (v.run_id for v in store.load_history(history_id).versions)
    compared = run_invoke(
        "compare", a, b, "--out", str(tmp_path / "cmp"), settings={"results": results}
    )
    assert compared.returncode == 0, compared.stderr[-2000:]
    timed = [line for line in compared.stdout.splitlines() if "| time " in line]
    counted = [line for line in compared.stdout.splitlines() if "| instructions " in line]
    assert len(timed) == 12 and len(counted) == 12, compared.stdout
    same = [line for line in timed if "no significant change" in line]
    assert len(same) >= 0.9 * len(timed), "\n".join(timed)
    assert all("no significant change" in line for line in counted), "\n".join(counted)
    assert "interleaved, 6 paired rounds" in compared.stdout
