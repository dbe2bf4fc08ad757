"""Progress lines (harness -> host), the run's ETA, and the stored durations behind it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from abh.suites.common import Progress, progress_line
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from archbench.run import RichReporter, TimingStore, suite_key
from archbench.run.progress import (
    ProgressEvent,
    SuiteTracker,
    blindsig_adaptive,
    blindsig_labels,
    format_seconds,
    parse_line,
    settings_hash,
    stage_key,
)
from archbench.suites import BlindsigSuite, SodiumSuite, Suites

LABELS = ["CS", "RSA-1024", "RSA-2048"]


@given(
    suite=st.sampled_from(["blindsig", "openssl-speed", "rsa-large", "gnupg", "sodium"]),
    total=st.integers(min_value=1, max_value=10**6),
    data=st.data(),
    elapsed=st.floats(min_value=0, max_value=1e6, allow_nan=False),
    what=st.text(min_size=1, max_size=60).filter(lambda s: s.split()),
)
def test_every_harness_line_parses_back(
    suite: str, total: int, data: st.DataObject, elapsed: float, what: str
) -> None:
    done = data.draw(st.integers(min_value=0, max_value=total))
    event = parse_line(progress_line(suite, done, total, elapsed, what))
    assert event is not None
    assert (event.suite, event.done, event.total) == (suite, done, total)
    assert (
        event.elapsed_s is not None and abs(event.elapsed_s - elapsed) <= 0.05 + 1e-9
    )  # printed to 0.1 s
    assert event.what == " ".join(what.split())


@given(st.text(max_size=80))
def test_other_lines_are_not_progress(text: str) -> None:
    if not text.lstrip().startswith(("archbench-progress:", "blindsig:")):
        assert parse_line(text) is None


def test_blindsig_driver_lines_count_schemes_in_run_order() -> None:
    assert parse_line("blindsig: RSA-1024 repetition 2/3 done", LABELS) == ProgressEvent(
        "blindsig", 2, 3, None, "RSA-1024 repetition 2/3"
    )
    assert parse_line("blindsig: CS calibration round 4 done (largest block 80 ops)", LABELS) == (
        ProgressEvent("blindsig", 1, 3, None, "CS calibration round 4")
    )
    # A label the host did not expect still shows, as step 0 of 1.
    event = parse_line("blindsig: RSA-4096 warmup repetition 1/1 done", LABELS)
    assert event is not None and (event.done, event.total) == (0, 1)
    assert parse_line("blindsig: RSA-1024: budget of 1.000 s spent after 1 of 3", LABELS) is None
    assert parse_line("archbench-harness: warning: x", LABELS) is None


def test_the_harness_prints_one_line_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    progress = Progress("rsa-large", 2)
    progress.step("RSA-2048 key generation, sign, verify")
    progress.step("RSA-4096 key generation, sign, verify")
    progress.step("beyond the total stays at 2/2")
    err = capsys.readouterr().err.splitlines()
    events = [parse_line(line) for line in err]
    assert [(e.done, e.total) for e in events if e is not None] == [(0, 2), (1, 2), (2, 2), (2, 2)]
    assert events[1] is not None and events[1].what == "RSA-2048 key generation, sign, verify"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_eta_counts_down_the_running_suite_and_adds_the_rest() -> None:
    clock = Clock()
    tracker = SuiteTracker({"blindsig": 100.0, "sodium": 50.0}, LABELS, clock)
    assert tracker.remaining_s() == 150.0 and tracker.detail() == ""
    assert tracker.feed(progress_line("blindsig", 0, 3, 0.0, "CS, RSA-1024, RSA-2048"))
    clock.now += 30
    assert tracker.feed("some other stderr line") is None
    assert tracker.feed("blindsig: RSA-1024 repetition 1/3 done") is not None
    assert tracker.remaining_s() == 120.0
    assert tracker.detail() == "blindsig 2/3 RSA-1024 repetition 1/3, 30s in"
    clock.now += 80
    # sodium says it began 2 s ago: the harness's own elapsed time places its start.
    tracker.feed(progress_line("sodium", 1, 1, 2.0, "sodium_bench"))
    assert tracker.remaining_s() == 48.0
    clock.now += 500
    assert tracker.remaining_s() == 0.0  # slower than last time: 0 until it ends


def test_adaptive_repetitions_show_the_cap_as_a_cap() -> None:
    # With ci_target the driver's /n is max_repetitions: a pair may stop at 6 of 40.
    adaptive = Suites.model_validate({"blindsig": {"ci_target": 0.02, "max_repetitions": 40}})
    fixed = Suites.model_validate({"blindsig": {"repetitions": 40}})
    assert blindsig_adaptive(adaptive) and not blindsig_adaptive(fixed)
    off = Suites.model_validate({"blindsig": {"ci_target": 0.02, "enabled": False}})
    assert not blindsig_adaptive(off)
    clock = Clock()
    tracker = SuiteTracker({"blindsig": None}, LABELS, clock, adaptive=True)
    tracker.feed(progress_line("blindsig", 0, 3, 0.0, "CS, RSA-1024, RSA-2048"))
    clock.now += 12
    tracker.feed("blindsig: RSA-1024 repetition 7/40 done")
    assert tracker.detail() == "blindsig 2/3 RSA-1024 repetition 7 (≤ 40), 12s in"
    # Warmups are not cut short by the interval: their count stays k/n.
    event = tracker.feed("blindsig: RSA-2048 warmup repetition 1/2 done")
    assert event is not None and event.what == "RSA-2048 warmup repetition 1/2"
    # Without a ci_target the same line is k of exactly n.
    plain = parse_line("blindsig: RSA-1024 repetition 7/40 done", LABELS)
    assert plain is not None and plain.what == "RSA-1024 repetition 7/40"


def test_no_eta_while_a_suite_to_come_has_no_record() -> None:
    clock = Clock()
    tracker = SuiteTracker({"blindsig": 100.0, "gnupg": None}, LABELS, clock)
    assert tracker.remaining_s() is None
    tracker.feed(progress_line("blindsig", 0, 3, 0.0, "start"))
    assert tracker.remaining_s() is None
    tracker.feed(progress_line("gnupg", 0, 3, 0.0, "starting"))
    assert tracker.remaining_s() is None
    # Only a finished unknown suite is no obstacle.
    tracker = SuiteTracker({"gnupg": None, "sodium": 20.0}, [], clock)
    tracker.feed(progress_line("gnupg", 0, 3, 0.0, "starting"))
    tracker.feed(progress_line("sodium", 0, 1, 0.0, "starting"))
    assert tracker.remaining_s() == 20.0


def test_format_seconds() -> None:
    assert [format_seconds(s) for s in (0, 42.4, 65, 3600, -3)] == [
        "0s",
        "42s",
        "1m05s",
        "60m00s",
        "0s",
    ]


def test_durations_are_keyed_by_suite_settings(tmp_path: Path) -> None:
    store = TimingStore(tmp_path)
    three, five = BlindsigSuite(repetitions=3), BlindsigSuite(repetitions=5)
    assert settings_hash(three) != settings_hash(five)
    assert settings_hash(three) == settings_hash(BlindsigSuite(repetitions=3, enabled=False))
    key = suite_key("local", "arm64-trixie", "blindsig", three)
    assert store.get(key) is None
    store.record(key, 61.25, "run-1")
    store.record(stage_key("image", "local", "slim", "arm64"), 416.0, "run-1")
    assert store.get(key) == 61.25
    assert store.get(suite_key("local", "arm64-trixie", "blindsig", five)) is None
    assert store.get(suite_key("local", "arm64-trixie", "sodium", SodiumSuite())) is None
    assert store.get("image/local/slim/arm64") == 416.0
    doc = json.loads((tmp_path / "timings.json").read_text())
    assert doc["entries"][key]["run_id"] == "run-1"


def test_an_unreadable_durations_file_means_no_eta(tmp_path: Path) -> None:
    (tmp_path / "timings.json").write_text("{not json")
    store = TimingStore(tmp_path)
    assert store.get("base/local/debian-trixie/arm64") is None
    store.record("base/local/debian-trixie/arm64", 92.0, "run-2")
    assert store.get("base/local/debian-trixie/arm64") == 92.0


def test_plain_output_prints_each_step_once_with_its_eta() -> None:
    out = io.StringIO()
    with RichReporter(Console(file=out, force_terminal=False, width=200)) as reporter:
        reporter.stage("arm64-trixie", "run")
        reporter.progress("arm64-trixie", "openssl-speed 1/4 rsa2048, 0s in", 65.0, "s 1")
        reporter.progress("arm64-trixie", "openssl-speed 1/4 rsa2048, 3s in", 62.0, "s 1")
        reporter.progress("arm64-trixie", "openssl-speed 2/4 ed25519, 4s in", None, "s 2")
    lines = [line for line in out.getvalue().splitlines() if "openssl-speed" in line]
    assert len(lines) == 2
    assert lines[0].endswith("arm64-trixie: openssl-speed 1/4 rsa2048, 0s in (ETA 1m05s)")
    assert lines[1].endswith("(no ETA)")


def test_run_estimate_sums_the_suites_of_the_same_settings(tmp_path: Path) -> None:
    store = TimingStore(tmp_path)
    suites = Suites.model_validate(
        {"blindsig": {"rsa_bits": [1024, 2048]}, "sodium": {"repetitions": 8}}
    )
    assert blindsig_labels(suites) == ["CS", "RSA-1024", "RSA-2048"]
    assert store.run_estimate("local", "riscv64-trixie", suites) is None
    assert suites.blindsig is not None and suites.sodium is not None
    store.record(suite_key("local", "riscv64-trixie", "blindsig", suites.blindsig), 40.0, "r")
    assert store.suite_estimates("local", "riscv64-trixie", suites) == {
        "blindsig": 40.0,
        "sodium": None,
    }
    assert store.run_estimate("local", "riscv64-trixie", suites) is None
    store.record(suite_key("local", "riscv64-trixie", "sodium", suites.sodium), 5.0, "r")
    assert store.run_estimate("local", "riscv64-trixie", suites, repeat=2) == 90.0
    # The same target with other settings, or on another host, has no estimate.
    other = Suites.model_validate({"blindsig": {"rsa_bits": [1024]}, "sodium": {"repetitions": 8}})
    assert store.run_estimate("local", "riscv64-trixie", other) is None
    assert store.run_estimate("arm-box", "riscv64-trixie", suites) is None
    only_cs = Suites.model_validate({"blindsig": {"schemes": ["cs"]}})
    assert blindsig_labels(only_cs) == ["CS"]
