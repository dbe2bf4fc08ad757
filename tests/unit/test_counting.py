"""Instruction counting: plugin output and marker pairing (harness side), per-op arithmetic,
result version 2, the instructions table and the counting images' plans."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from abh.suites import blindsig_counting
from abh.suites import counting as C
from helpers import result, row, run_invoke
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from archbench.analysis import counting
from archbench.errors import MatrixError
from archbench.images import counter as counting_image
from archbench.matrix import Target
from archbench.platforms import Arch
from archbench.report import instructions
from archbench.result import Counting, Result, ResultStore, load

HEADER = "archbench-count\t1\t1\triscv64\n"


def count_text(blocks: list[tuple[int, int]]) -> str:
    return HEADER + "".join(f"block\t{seq}\t{n}\n" for seq, n in blocks)


# ---------------------------------------------------------------- plugin output


@given(st.lists(st.integers(min_value=0, max_value=2**63), max_size=50))
def test_count_file_round_trips(counts: list[int]) -> None:
    parsed = C.parse_count_file(count_text(list(enumerate(counts))))
    assert parsed.blocks == tuple(enumerate(counts))
    assert (parsed.plugin_version, parsed.plugin_api, parsed.target) == ("1", 1, "riscv64")


@given(st.text(alphabet="block\t0123456789x -\n", max_size=80))
def test_count_file_parser_never_crashes_on_garbage(body: str) -> None:
    try:
        parsed = C.parse_count_file(HEADER + body)
    except C.CountError:
        return
    assert all(seq >= 0 and n >= 0 for seq, n in parsed.blocks)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("qemu says hi\n", "header"),
        (HEADER + "error\tblock 3 stopped but not started\n", "plugin error: block 3"),
        (HEADER + "block\t0\n", "line 2: malformed"),
        (HEADER + "block\t0\t-5\n", "line 2: malformed"),
    ],
)
def test_bad_count_files_are_refused(text: str, message: str) -> None:
    with pytest.raises(C.CountError, match=message):
        C.parse_count_file(text)


# ---------------------------------------------------------------- pairing

DRIVER = (
    "archbench-blindsig\t1\n"
    "meta\tx\ty\n"
    "discard\tCS\t0\tsigning\twarmup\t5\t0\t900\n"
    "discard\tCS\t0\tverifying\twarmup\t5\t0\t900\n"
    "sample\tCS\t0\tsigning\t5\t0\t800\n"
    "sample\tCS\t0\tverifying\t5\t0\t800\n"
    "sample\tCS\t0\tsigning\t5\t1\t800\n"
    "sample\tCS\t0\tverifying\t5\t1\t800\n"
    "done\tCS\t0\t2\t0\t1000\n"
    "end\tok\n"
)


def test_counts_pair_with_driver_blocks_in_print_order() -> None:
    blocks = blindsig_counting.driver_blocks(DRIVER)
    assert blocks[0] == ("CS", None, "signing", "warmup", 0)
    assert blocks[2] == ("CS", None, "signing", "sample", 0)
    paired = C.pair_counts(
        blocks, C.parse_count_file(count_text(list(enumerate([9, 8, 50, 70, 51, 71]))))
    )
    rows: list[dict[str, Any]] = [
        {
            "suite": "blindsig",
            "scheme": "CS",
            "key_bits": None,
            "operation": op,
            "valid": True,
            "samples_ns": [800, 800],
        }
        for op in ("signing", "verifying")
    ]
    blindsig_counting.attach_counts(rows, paired)
    assert rows[0]["instructions"] == [50, 51]
    assert rows[1]["instructions"] == [70, 71]


def test_a_lost_or_extra_block_is_refused() -> None:
    blocks = blindsig_counting.driver_blocks(DRIVER)
    with pytest.raises(C.CountError, match="printed 6 blocks but the counter closed 5"):
        C.pair_counts(blocks, C.parse_count_file(count_text(list(enumerate([1, 2, 3, 4, 5])))))
    with pytest.raises(C.CountError, match="sequence number 7"):
        C.pair_counts(
            blocks, C.parse_count_file(count_text([(0, 1), (7, 1), (2, 1), (3, 1), (4, 1), (5, 1)]))
        )


# ---------------------------------------------------------------- calibration


def test_calibration_must_differ_by_exactly_n_times_k() -> None:
    out = "archbench-calibrate\t1\nloop\t2\t1000\n"
    record = C.check_calibration(out, C.parse_count_file(count_text([(0, 2021), (1, 4021)])))
    assert record["exact"] and record["overhead"] == 21 and record["difference"] == 2000
    with pytest.raises(C.CountError, match="counted 2001 instructions, expected exactly 2000"):
        C.check_calibration(out, C.parse_count_file(count_text([(0, 2021), (1, 4022)])))


def test_counter_command_runs_the_driver_under_qemu_with_the_plugin(tmp_path: Path) -> None:
    counter = C.Counter(tmp_path, "qemu-riscv64", "7.2", "1:7.2", "1", "tools")
    cmd = C.counter_command(counter, "rv64", Path("/tmp/x.count"), Path("/bin/true"), ["-a"])
    assert cmd[0] == str(tmp_path / "ld-linux-x86-64.so.2")
    assert cmd[3:9] == [str(tmp_path / "qemu-riscv64"), "-L", "/", "-cpu", "rv64", "-plugin"]
    assert cmd[9] == f"{tmp_path / 'libarchbench_count.so'},out=/tmp/x.count"
    assert cmd[-2:] == ["/bin/true", "-a"]
    with pytest.raises(ValueError, match="not a plain model name"):
        C.counter_command(counter, "max,x=1", Path("/tmp/x"), Path("/bin/true"), [])
    with pytest.raises(ValueError, match="comma"):
        C.counter_command(counter, "max", Path("/tmp/a,b"), Path("/bin/true"), [])


def test_no_counting_layer_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(C.CountError, match="no counting layer"):
        C.load_counter(tmp_path)


# ---------------------------------------------------------------- host arithmetic


@given(
    st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=20),
    st.integers(min_value=1, max_value=10**6),
)
def test_per_op_is_count_over_ops(counts: list[int], ops: int) -> None:
    per = counting.per_op(counts, ops)
    assert [round(p * ops) for p in per] == counts
    assert min(per) <= counting.median_per_op(counts, ops) <= max(per)


def test_spread_and_per_op_values() -> None:
    assert counting.median_per_op([3537180, 3537180, 3555950], 10) == 353718.0
    assert counting.spread([100, 100, 100]) == 0.0
    assert counting.spread([99, 100, 101]) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="ops_per_block"):
        counting.per_op([1], 0)


def test_metrics_and_cpu_models() -> None:
    assert counting.parse_metrics("time,instructions") == ("time", "instructions")
    with pytest.raises(MatrixError, match="unknown metric 'cycles'"):
        counting.parse_metrics("cycles")
    with pytest.raises(MatrixError, match="twice"):
        counting.parse_metrics("time,time")

    def target(arch: str, **cpu: str) -> Target:
        return Target.model_validate({"name": "t", "arch": arch, "base": "b", **cpu})

    assert target("riscv64").count_cpu == "rv64"
    assert target("amd64").count_cpu == "max"
    assert target("ppc64le").count_cpu == "power10"
    assert target("arm64", cpu="cortex-a72").count_cpu == "cortex-a72"
    with pytest.raises(ValidationError, match="cpu"):
        target("arm64", cpu="max; rm -rf /")


# ---------------------------------------------------------------- results v2


def counted(name: str, arch: str, cpu: str, signing: list[int], verifying: list[int]) -> Result:
    base = result(
        name,
        arch,
        "x",
        "cpu",
        [row("CS", "signing", [5, 5, 5]), row("CS", "verifying", [5, 5, 5])],
    )
    rows = (
        base.harness.rows[0].model_copy(update={"instructions": tuple(signing)}),
        base.harness.rows[1].model_copy(update={"instructions": tuple(verifying)}),
    )
    prov = Counting.model_validate(
        {
            "instrument": "qemu-tcg-plugin",
            "qemu": f"qemu-{arch}",
            "qemu_version": "qemu 7.2.22",
            "qemu_package": "1:7.2",
            "cpu_model": cpu,
            "plugin_version": "1",
            "plugin_api": 1,
            "calibration": {
                "iterations": 100000,
                "instructions_per_iteration": 2,
                "counts": [200021, 400021],
                "expected_difference": 200000,
                "difference": 200000,
                "overhead": 21,
                "exact": True,
            },
        }
    )
    harness = base.harness.model_copy(update={"rows": rows, "counting": prov})
    return Result.model_validate(
        {**base.model_dump(), "harness": harness.model_dump(), "metric": "instructions"}
    )


def test_version_1_files_load_as_time_results(tmp_path: Path) -> None:
    old = result("amd64-native", "amd64", "x86_64", "cpu", [row("CS", "signing", [5, 6, 7])])
    data = json.loads(old.model_dump_json())
    data["version"] = 1
    del data["metric"]
    path = tmp_path / "r" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    loaded = load(path)
    assert (loaded.version, loaded.metric) == (2, "time")


def test_counting_results_are_their_own_files_and_load_apart(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    timed = result("amd64-native", "amd64", "x86_64", "cpu", [row("CS", "signing", [5, 6, 7])])
    count = counted("amd64-native", "amd64", "max", [700, 700, 700], [900, 910, 905])
    assert store.save(timed).name == "amd64-native.json"
    assert store.save(count).name == "amd64-native.instructions.json"
    times, _ = store.load_all()
    counts, _ = store.load_all(metric="instructions")
    assert [r.metric for r in times] == ["time"]
    assert [r.metric for r in counts] == ["instructions"]
    assert counts[0].harness.rows[0].instructions == (700, 700, 700)
    with pytest.raises(ValueError, match="counting is set exactly when metric"):
        Result.model_validate({**timed.model_dump(), "metric": "instructions"})
    with pytest.raises(ValueError, match="one count per sample"):
        type(timed.harness.rows[0]).model_validate(
            {**timed.harness.rows[0].model_dump(), "instructions": [1]}
        )


# ---------------------------------------------------------------- tables


def test_instructions_table_has_ratios_to_amd64_and_names_cpu_models(tmp_path: Path) -> None:
    amd = counted("amd64-trixie", "amd64", "max", [700, 700, 700], [1000, 1000, 1000])
    rv = counted("riscv64-trixie", "riscv64", "rv64", [1400, 1400, 1400], [1500, 1500, 1500])
    table = instructions.wide([amd, rv])
    assert list(table.columns) == [
        "Suite",
        "Scheme",
        "Operation",
        "amd64-trixie",
        "riscv64-trixie",
        "riscv64-trixie / amd64-trixie",
    ]
    assert table["Operation"].tolist() == ["signing", "verifying"]
    assert table["amd64-trixie"].tolist() == [70, 100]  # ops_per_block is 10
    assert table["riscv64-trixie / amd64-trixie"].tolist() == [2.0, 1.5]
    md = instructions.render_instructions_markdown([amd, rv])
    assert "-cpu rv64" in md and "-cpu max" in md and "| signing" in md
    tex = instructions.render_instructions_latex([amd, rv])
    assert r"\caption" in tex and "tab:instructions-per-op" in tex
    paths = instructions.write_all([amd, rv], [], tmp_path)
    assert {p.name for p in paths} >= {"instructions.csv", "fig-instructions.png"}
    # The Markdown references its figure; the PDF embeds TrueType, not Type 3; 5 in wide.
    assert "![Instructions per operation](fig-instructions.png)" in (
        tmp_path / "instructions.md"
    ).read_text(encoding="utf-8")
    pdf = (tmp_path / "fig-instructions.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf
    assert instructions.plot([amd, rv]).get_size_inches()[0] == 5.0
    frame = pd.read_csv(tmp_path / "instructions.csv")
    assert frame["instructions_per_op"].tolist() == [70.0, 100.0, 140.0, 150.0]


def test_markdown_groups_counts_by_thousands_as_latex_does() -> None:
    # Blocks of 10 operations: 1 234 567 and 2 469 134 instructions per signature.
    amd = counted("amd64-trixie", "amd64", "max", [12_345_670] * 3, [1000] * 3)
    rv = counted("riscv64-trixie", "riscv64", "rv64", [24_691_340] * 3, [1500] * 3)
    # A third target that counted verifying only: its signing cells are "–" / "--".
    arm = counted("arm64-trixie", "arm64", "max", [5] * 3, [2000] * 3)
    only = arm.harness.model_copy(update={"rows": arm.harness.rows[1:]})
    arm = arm.model_copy(update={"harness": only})
    md = instructions.render_instructions_markdown([amd, rv, arm])
    signing = next(line for line in md.splitlines() if "| signing" in line)
    cells = [c.strip() for c in signing.strip("|").split("|")]
    assert cells == ["blindsig", "CS", "signing", "1 234 567", "2 469 134", "2", "–", "–"]
    verifying = next(line for line in md.splitlines() if "| verifying" in line)
    assert [c.strip() for c in verifying.strip("|").split("|")][3:] == [
        "100",
        "150",
        "1.5",
        "200",
        "2",
    ]
    # Counts and ratios are right-aligned (pipe table "---:"), labels left.
    rule = md.splitlines()[md.splitlines().index(signing) - 1]
    assert [c.strip()[-1] for c in rule.strip("|").split("|")] == ["-"] * 3 + [":"] * 5
    tex = instructions.render_instructions_latex([amd, rv, arm])
    assert r"1\,234\,567 & 2\,469\,134 & 2.00 & -- & --" in tex


def test_native_times_give_ns_per_instruction() -> None:
    amd = counted("amd64-trixie", "amd64", "max", [700, 700, 700], [1000, 1000, 1000])
    native = result(
        "amd64-trixie", "amd64", "x86_64", "cpu", [row("CS", "signing", [1400, 1500, 1600])]
    )
    table = instructions.ns_per_instruction([amd], [native])
    # 1500 ns / 10 ops = 150 ns per signature; 70 instructions per signature.
    assert table["amd64-trixie"].tolist() == [round(150 / 70, 3)]
    assert "Native ns per instruction" in instructions.render_instructions_markdown([amd], [native])
    assert "Native ns per instruction" not in instructions.render_instructions_markdown([amd])


def test_export_column_joins_counts_and_leaves_others_empty() -> None:
    count = counted("amd64-trixie", "amd64", "max", [700, 700, 700], [1000, 1000, 1000])
    export = pd.DataFrame(
        {
            "run_id": [count.run_id] * 2,
            "target": ["amd64-trixie", "other"],
            "scheme": ["CS", "CS"],
            "key_bits": [None, None],
            "operation": ["signing", "signing"],
        }
    )
    out = instructions.add_export_column(export, [count])
    assert out["instructions_per_op"].iloc[0] == 70.0
    assert pd.isna(out["instructions_per_op"].iloc[1])


# ---------------------------------------------------------------- images


def test_counting_images_are_content_hashed_and_name_no_mirror() -> None:
    tools = counting_image.plan_tools("archbench-base/debian-bookworm:amd64", "sha256:aa")
    again = counting_image.plan_tools("archbench-base/debian-bookworm:amd64", "sha256:aa")
    other = counting_image.plan_tools("archbench-base/debian-bookworm:amd64", "sha256:bb")
    assert tools.tag == again.tag != other.tag
    assert tools.tag.startswith("archbench/count-tools:amd64-")
    assert "deb-src" in tools.dockerfile and "apt-get source" in tools.dockerfile
    assert "qemu-riscv64" in tools.dockerfile and "qemu-x86_64" in tools.dockerfile
    assert "debian.org" not in tools.dockerfile
    layer = counting_image.plan_layer(
        "archbench/bench:riscv64-1", "sha256:cc", Arch.RISCV64, "sha256:dd"
    )
    assert layer.tag.startswith("archbench/count:riscv64-")
    assert "RUN" not in layer.dockerfile.split("FROM", 1)[1]  # COPY only: nothing under binfmt
    assert layer.platform == "linux/riscv64"


@pytest.mark.slow
def test_report_of_a_counting_only_run_writes_the_instruction_tables(tmp_path: Path) -> None:
    """`invoke bench --metric instructions` stores no times; `invoke report` still renders."""
    store = ResultStore(tmp_path / "results")
    amd = counted("amd64-trixie", "amd64", "max", [700, 700, 700], [1000, 1000, 1000])
    rv = counted("riscv64-trixie", "riscv64", "rv64", [1400, 1400, 1400], [1500, 1500, 1500])
    store.save(amd)
    store.save(rv)
    out = tmp_path / "out"
    done = run_invoke("report", "--out", str(out), "--no-plots", settings={"results": store.root})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "writing the instruction tables only" in done.stdout
    md = (out / "instructions.md").read_text(encoding="utf-8")
    # Per operation: blocks of 10 operations, so 700 and 1000 instructions per block.
    assert re.search(r"\| signing\s*\|\s*70\s*\|\s*140\s*\|\s*2\s*\|", md), md
    assert re.search(r"\| verifying\s*\|\s*100\s*\|\s*150\s*\|\s*1\.5\s*\|", md), md
    assert "riscv64-trixie / amd64-trixie" in md
    assert not (out / "appendix.tex").exists()
