"""One test per kind of hostile input that is not a single value (see hostile/ for those).

Duplicates that would pool, an old run's broken manifest, report outputs
that are not archbench's, absurd imported numbers, honest number printing,
CPU sets beyond the engine, debootstrap's argv and the Dockerfile's quoting,
and the real command line (invoke's own parsing of flags).
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from helpers import REPO, load_tasks, result, row, run_invoke
from hypothesis import given, settings
from hypothesis import strategies as st
from invoke.config import Config
from invoke.context import Context
from invoke.exceptions import Exit

from archbench.errors import BaseImageError, MatrixError, ResultsError
from archbench.images import bases, benchmark
from archbench.inputs import (
    check_cpuset_fits,
    check_image,
    check_mirror,
    check_package,
    check_suite,
    cpus_of,
)
from archbench.matrix import Base
from archbench.platforms import Arch
from archbench.report import format_number, format_speed
from archbench.report.writer import OUTPUTS_FILE, OUTPUTS_FORMAT, listed, replace_outputs
from archbench.result import MANIFEST_NAME, Result, ResultStore

RUN = "20261129T224000Z-1a2b3c"


TASKS = load_tasks("archbench_tasks_k")


def _ctx(tmp_path: Path) -> Context:
    return Context(
        config=Config(
            overrides={
                "archbench": {
                    "results": str(tmp_path / "results"),
                    "reports": str(tmp_path / "out"),
                    "matrix": str(REPO / "matrix.yml"),
                }
            }
        )
    )


def _machine(name: str = "amd64-native", run_id: str = RUN) -> Result:
    return result(
        name,
        "amd64",
        "x86_64",
        "AMD Ryzen 7 PRO 5850U",
        [
            row("CS", "signing", [77_000, 78_000, 76_000]),
            row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
        ],
        run_id=run_id,
    )


# --- results that pool silently ---------------------------------------------------


def test_a_copied_results_file_is_not_pooled_as_a_second_repeat(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = store.save(_machine())
    # A copy sorting before the original must still lose to it.
    shutil.copy(path, path.with_name("amd64-native-copy.json"))
    shutil.copy(path, path.with_name("amd64 (copy).json"))
    loaded, failures = store.load_all()
    assert len(loaded) == 1
    assert loaded[0].harness.rows[0].samples_ns == (77_000, 78_000, 76_000)
    assert sorted(f.path.name for f in failures) == ["amd64 (copy).json", "amd64-native-copy.json"]
    assert all("a duplicate of amd64-native.json" in f.message for f in failures)
    assert all("count its samples twice" in f.message for f in failures)


def test_a_file_copied_from_another_run_is_refused(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = store.save(_machine())
    other = tmp_path / "20261130T000000Z-000000"
    other.mkdir()
    shutil.copy(path, other / path.name)
    loaded, failures = store.load_all()
    assert [r.run_id for r in loaded] == [RUN]
    (failure,) = failures
    assert f"belongs to run '{RUN}' but lies in 20261130T000000Z-000000" in failure.message


# --- paths taken from files ---------------------------------------------------------


def test_a_broken_manifest_of_an_old_run_does_not_break_later_runs(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    old = tmp_path / "20261101T000000Z-000000"
    old.mkdir()
    (old / MANIFEST_NAME).write_bytes(b'{"run_id": "caf\xe9"}')
    bad = tmp_path / "20261102T000000Z-000000"
    bad.mkdir()
    (bad / MANIFEST_NAME).write_bytes(b"[" * 100_000)
    assert store.previous_seconds("amd64-native", before="20261201T000000Z-000000") is None
    with pytest.raises(ResultsError, match=r"run.json: the run manifest is not UTF-8"):
        store.load_manifest("20261101T000000Z-000000")


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "..", ".hidden", "a/b", "a\nb", ""])
def test_result_paths_stay_inside_the_results_directory(tmp_path: Path, name: str) -> None:
    store = ResultStore(tmp_path)
    with pytest.raises(ResultsError):
        store.path_for(name, "t")
    with pytest.raises(ResultsError):
        store.path_for(RUN, name)


def test_a_symlinked_run_directory_cannot_lead_outside(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "results" / RUN).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ResultsError, match="outside"):
        ResultStore(tmp_path / "results").path_for(RUN, "t")


# --- nothing of the user's deleted ------------------------------------------------


@pytest.mark.slow
def test_report_removes_only_what_an_earlier_report_wrote(tmp_path: Path) -> None:
    ResultStore(tmp_path / "results").save(_machine())
    out = tmp_path / "out"
    out.mkdir()
    mine = [out / "fig-mine.png", out / "fig-setup.pdf", out / "notes.txt"]
    for p in mine:
        p.write_bytes(b"the user's")
    ctx = _ctx(tmp_path)
    # A bad --baseline fails before anything is written or removed.
    with pytest.raises(Exit, match="--baseline 'nosuch'"):
        TASKS.report(ctx, baseline="nosuch")
    assert not (out / "appendix.md").exists()
    assert all(p.read_bytes() == b"the user's" for p in mine)
    TASKS.report(ctx)
    written = listed(out)
    assert "fig-signing.png" in written and "appendix.md" in written
    assert not {p.name for p in mine} & written
    # --no-plots: the earlier report's figures are left as they are, and so are the user's.
    TASKS.report(ctx, plots=False)
    assert (out / "fig-signing.png").exists() and "fig-signing.png" in listed(out)
    assert all(p.read_bytes() == b"the user's" for p in mine)
    assert (out / "appendix.md").is_file()


def test_an_outputs_manifest_cannot_name_files_elsewhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / OUTPUTS_FILE).write_text(
        json.dumps({"format": OUTPUTS_FORMAT, "files": ["../victim.txt", str(victim), "ok.md"]})
    )
    (out / "ok.md").write_text("old")
    assert listed(out) == {"ok.md"}
    assert replace_outputs(out, []) == [out / "ok.md"]
    assert victim.read_text() == "keep"


# --- numbers -----------------------------------------------------------------------


def test_an_absurd_imported_number_is_refused_before_writing(tmp_path: Path) -> None:
    log = tmp_path / "perf_crypto_rsa.log"
    log.write_text("10x 2048-signing took 34 ms\n10x 2048-verifying took " + "9" * 400 + " ms\n")
    ctx = _ctx(tmp_path)
    with pytest.raises(Exit, match=r"line 2: .* is longer than any run") as info:
        TASKS.import_(ctx, logs=str(log), target="box", arch="amd64", cpu="c", cores="2")
    assert info.value.code == ResultsError.exit_code
    assert not (tmp_path / "results").exists()


def test_report_all_runs_renders_around_a_file_with_absurd_numbers(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_machine())
    bad = json.loads(_machine("bad", "20261129T230000Z-000000").model_dump_json())
    bad["harness"]["rows"][0]["samples_ns"] = [10**30]
    path = tmp_path / "results" / "20261129T230000Z-000000" / "bad.json"
    path.parent.mkdir()
    path.write_text(json.dumps(bad))
    with pytest.raises(Exit, match="rendered without 1 results file"):
        TASKS.report(_ctx(tmp_path), all_runs=True, plots=False)
    md = (tmp_path / "out" / "appendix.md").read_text()
    assert "amd64-native" in md and "must be at most 9223372036854775807" in md


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.00004, "4.00e-05"), (-0.00004, "-4.00e-05"), (1e24, "1.00e+24"), (0.2044, "0.204")],
)
def test_tiny_and_huge_numbers_print_honestly(value: float, text: str) -> None:
    assert format_number(value) == text
    assert format_speed(40 / 1e6) == "4.00e-05 ms"  # 40 ns per operation, not "0.000 ms"
    assert format_number(0.0) == "0.000"


# --- flags -------------------------------------------------------------------------


def test_cpuset_is_checked_against_the_engines_cpus() -> None:
    check_cpuset_fits("0-1", 2, "--cpuset")
    with pytest.raises(MatrixError, match=r"names CPU 2, 3, but the engine has 2 CPU\(s\) \(0-1\)"):
        check_cpuset_fits("0,2-3", 2, "--cpuset")
    check_cpuset_fits("63", 0, "--cpuset")  # unknown count: left to the engine
    assert cpus_of("0,2-3") == {0, 2, 3}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bench", "--iterations", "abc"], "--iterations: 'abc' is not a whole number"),
        (["bench", "--arch", ""], "--arch: empty selection"),
        (["bench", "--rsa-bits=-2048"], "--rsa-bits: -2048 is out of range"),
        (["report", "--run", "../../etc"], "--run '../../etc' is not a run id"),
    ],
)
def test_the_real_command_line_gives_our_errors(args: list[str], fragment: str) -> None:
    done = run_invoke(*args, timeout=120)
    assert done.returncode in (2, 8), done.stderr
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


# --- argv and Dockerfile ------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("suite", "--foo"),
        ("suite", "-x"),
        ("suite", "trixie --keyring=/x"),
        ("mirror", "--include=evil"),
        ("mirror", "ftp://x/debian"),
        ("variant", "fakechroot"),
    ],
)
def test_debootstrap_takes_no_option_from_a_value(field: str, value: str) -> None:
    # model_construct skips validation: the argv builder checks again on its own.
    base = Base.model_construct(
        source="bootstrap", suite="trixie", variant="minbase", mirror=None, image=None
    )
    base = base.model_copy(update={field: value})
    with pytest.raises(BaseImageError, match="refusing to run debootstrap"):
        bases.debootstrap_command(base, Arch.ARM64, Path("rel/rootfs"))


def test_debootstrap_argv_is_absolute_and_checked() -> None:
    base = Base(source="bootstrap", suite="trixie", mirror="file:///srv/debian")
    cmd = bases.debootstrap_command(base, Arch.ARM64, Path("rel/rootfs"))
    assert cmd[:4] == ["debootstrap", "--variant=minbase", "--arch=arm64", "trixie"]
    assert Path(cmd[4]).is_absolute() and cmd[5] == "file:///srv/debian"


@settings(max_examples=300, deadline=None)
@given(value=st.text(min_size=1).filter(lambda v: not set(v) & set("\x00\n\r")))
def test_a_shell_word_is_one_word_whatever_it_holds(value: str) -> None:
    assert shlex.split(benchmark.shell_word(value)) == [value]


@pytest.mark.parametrize("value", ["gcc\nRUN id", "gcc\x00", "a\rb"])
def test_a_dockerfile_refuses_line_breaks_in_values(value: str) -> None:
    with pytest.raises(ValueError, match="refusing"):
        benchmark.shell_word(value)
    with pytest.raises(ValueError, match="refusing"):
        benchmark.render_dockerfile("archbench-base/deb:amd64", Arch.AMD64, value, ("gcc",))


def test_the_rendered_dockerfile_quotes_each_package() -> None:
    text = benchmark.render_dockerfile(
        "archbench-base/deb:amd64", Arch.AMD64, "slim", ("gcc", "libc6-dev:arm64", "g++=4:12")
    )
    assert "      gcc \\\n      libc6-dev:arm64 \\\n      g++=4:12 \\\n" in text
    with pytest.raises(ValueError, match="FROM image"):
        benchmark.render_dockerfile("x; rm -rf /", Arch.AMD64, "slim", ("gcc",))


# --- grammars: what must still be accepted ------------------------------------------


@pytest.mark.parametrize(
    "value", ["gcc", "libstdc++6", "libc6-dev:arm64", "openssl=3.5.1-1", "gcc:amd64=4:14.2.0-1"]
)
def test_real_package_specs_are_accepted(value: str) -> None:
    assert check_package(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "ubuntu:24.04",
        "debian",
        "library/debian:trixie-slim",
        "localhost:5000/team/debian:trixie",
        "[::1]:5000/debian",
        "debian@sha256:" + "a" * 64,
        "registry.example/a/b/c:v1.0_x@sha256:" + "b" * 64,
    ],
)
def test_real_image_references_are_accepted(value: str) -> None:
    assert check_image(value) == value


@pytest.mark.parametrize(
    "value", ["Ubuntu:24.04", "ubuntu:", ":tag", "a//b", "ubuntu:24.04 --privileged", "-it"]
)
def test_broken_image_references_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="is not allowed"):
        check_image(value)


@pytest.mark.parametrize(
    "value", ["http://deb.example/debian", "https://deb.example:8443/debian/", "file:///srv/d"]
)
def test_real_mirrors_are_accepted(value: str) -> None:
    assert check_mirror(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "http://u:p@deb.example/d",
        "http://u@deb.example/d",
        "file://host/d",
        "http:///d",
        "gopher://x",
    ],
)
def test_mirrors_with_credentials_or_other_schemes_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="mirror"):
        check_mirror(value)


@pytest.mark.parametrize("value", ["trixie", "stable", "bookworm-backports", "noble"])
def test_real_suites_are_accepted(value: str) -> None:
    assert check_suite(value) == value
