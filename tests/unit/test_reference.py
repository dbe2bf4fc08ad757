"""The shipped reference dataset: the thesis appendix's tables, round trip included.

The round trip parses the seed's tables here, independently of
``archbench.upstream.reference`` (a few regular expressions over the LaTeX), renders
the shipped dataset with the appendix template and compares table by table,
row by row: scheme, operation, value and unit, and where the double rules
between groups fall.

The seed is vendored as ``tests/fixtures/thesis/thesis-appendix-performance.tex``
so the round trip runs in every clean clone and in CI (``ARCHBENCH_SEEDS=DIR``
reads DIR's copy instead); it never skips. Where the project's seed folder
``../shared/seeds`` is present, the vendored copy must still equal it.
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest
from helpers import REPO

from archbench.errors import ReportError
from archbench.report import ReportOptions, render_latex, render_markdown
from archbench.result import Result
from archbench.upstream import reference

VENDORED = REPO / "tests" / "fixtures" / "thesis" / reference.SEED_FILE
SHARED = (
    Path(os.environ.get("ARCHBENCH_SEEDS") or REPO.parent / "shared" / "seeds")
    / reference.SEED_FILE
)
SEED = (
    Path(os.environ["ARCHBENCH_SEEDS"]) / reference.SEED_FILE
    if os.environ.get("ARCHBENCH_SEEDS")
    else VENDORED
)

MACHINES = [
    "thesis-amd-ryzen-7",
    "thesis-intel-i7",
    "thesis-amd-threadripper",
    "thesis-intel-xeon",
    "thesis-intel-pentium",
    "thesis-arm64",
    "thesis-amd-embedded",
    "thesis-riscv64",
    "thesis-power9",
    "thesis-armv7",
    "thesis-security-module",
]

# (scheme, key bits, operation text, number text, unit): what a reader reads in a row.
Cells = tuple[str, int | None, str, str, str]


@pytest.fixture(scope="module")
def seed_text() -> str:
    # A missing seed fails: a skipped round trip would pass CI without checking anything.
    assert SEED.is_file(), f"seed {SEED} not found (ARCHBENCH_SEEDS names its folder)"
    return SEED.read_text(encoding="utf-8")


def test_vendored_seed_is_the_projects_seed() -> None:
    if not SHARED.is_file():
        pytest.skip(f"{SHARED} not present (a clone outside the project's work folder)")
    assert VENDORED.read_bytes() == SHARED.read_bytes(), (
        f"{VENDORED} differs from {SHARED}: copy the seed again and regenerate "
        "reports/reference (docs/results.md, 'Reference data')"
    )


@pytest.fixture(scope="module")
def shipped() -> list[Result]:
    loaded, failures = reference.load_reference()
    assert failures == []
    return loaded


def cells(line: str) -> Cells:
    """One table row: 'RSA 4092 & 100 parallel ... & 573ms \\\\\\hline' -> cells."""
    scheme, operation, speed = (c.strip() for c in line.split(r"\\")[0].split("&"))
    match = re.fullmatch(r"(CS|RSA) ?(\d+)?(?: bit)?", scheme)
    assert match, scheme
    value = re.fullmatch(r"([\d ]+(?:\.\d+)?) ?(ms)", speed)
    assert value, speed
    bits = int(match.group(2)) if match.group(2) else None
    return (match.group(1), bits, operation, value.group(1), value.group(2))


def tables(latex: str) -> list[tuple[str, list[list[Cells]]]]:
    """(label, groups of rows) of every tabular labelled tab:comp-sign-…, in order."""
    found = []
    for body, label in re.findall(
        r"\\begin\{tabular\}\{[^}]*\}\n(.*?)\\end\{tabular\}.*?\\label\{(tab:comp-sign-[^}]*)\}",
        latex,
        re.S,
    ):
        groups: list[list[Cells]] = [[]]
        for line in body.splitlines():
            if line.strip() == r"\hline":
                groups.append([])
            elif "&" in line and r"\textbf" not in line:
                groups[-1].append(cells(line))
        found.append((label, groups))
    return found


def test_the_rendered_appendix_reproduces_every_thesis_table(
    seed_text: str, shipped: list[Result]
) -> None:
    chapter = seed_text.split(r"\chapter{Performance Measurements}", 1)[1]
    expected = tables(chapter)
    rendered = tables(render_latex(shipped))
    assert len(expected) == 11
    # The thesis's own labels, so its \ref{tab:comp-sign-…} still resolve.
    assert [label for label, _ in rendered] == [label for label, _ in expected]
    assert expected[0][0] == "tab:comp-sign-amd-ryzen-7"
    assert expected[8][0] == "tab:comp-sign-POWER9"
    for (seed_label, seed_groups), (label, groups) in zip(expected, rendered, strict=True):
        assert groups == seed_groups, f"{label} differs from the thesis's {seed_label}"
    rows = sum(len(g) for _, groups in expected for g in groups)
    assert rows == 10 * 27 + 15


def published_sections(seed_text: str) -> list[dict[str, str]]:
    """Title, intro, Setup box, caption and label of every seed section with a table."""
    chapter = seed_text.split(r"\chapter{Performance Measurements}", 1)[1]
    found = []
    for chunk in chapter.split("\\section{")[1:]:
        if r"\begin{tabular}" not in chunk:
            continue
        title, body = chunk.split("}\n", 1)
        intro, rest = body.split(r"\begin{bfhBox}[BFH-MediumBlue]{Setup}", 1)
        box = rest.split(r"\end{bfhBox}", 1)[0]
        caption = re.search(r"\\caption\{([^}]*)\}", rest)
        label = re.search(r"\\label\{([^}]*)\}", rest)
        assert caption and label
        found.append(
            {
                "title": title,
                "intro": intro,
                "box": box,
                "caption": caption.group(1),
                "label": label.group(1),
            }
        )
    return found


def flat(latex: str) -> str:
    """Whitespace collapsed, and none before a line break ``\\\\``."""
    return re.sub(r"\s*\\\\", r"\\\\", " ".join(latex.split()))


@pytest.mark.parametrize("prefix", ["", "ab:"])
def test_headings_intros_boxes_and_captions_are_the_thesis_own(
    seed_text: str, shipped: list[Result], prefix: str
) -> None:
    rendered = render_latex(shipped, ReportOptions(label_prefix=prefix))
    sections = published_sections(seed_text)
    assert len(sections) == 11
    titles = [s["title"] for s in sections]
    assert "AMD Ryzen 7 PRO 5850U (Notebook)" in titles and "POWER9" in titles
    assert titles[-1] == "Performance of the Security Module"
    for s in sections:
        # Everything between \section{title} and the box, the box itself, the caption
        # and the label come back as the thesis prints them (spacing aside).
        part = rendered.split("\\section{" + s["title"] + "}\n", 1)[1].split(r"\section{", 1)[0]
        intro = s["intro"].replace(r"\ref{", r"\ref{" + prefix)
        assert flat(part).startswith(flat(intro)), s["title"]
        box = part.split("{Setup}\n", 1)[1].split(r"\end{bfhBox}", 1)[0]
        assert flat(box.removeprefix("\\raggedright\n")) == flat(s["box"]), s["title"]
        assert "\\caption{" + s["caption"] + "}" in part
        assert "\\label{" + prefix + s["label"] + "}" in part
    assert r"\label{" + prefix + "chap:app-perf}" in rendered


def test_spot_values_as_printed(shipped: list[Result]) -> None:
    latex = render_latex(shipped)
    for line in [
        r"RSA 4096 bit & 10x key generation & 10 000 ms \\\hline",
        r"CS & 10x unblinding & 0.001 ms \\\hline",
        r"RSA 3072 bit & 10x key generation & 2684 ms \\\hline",
        r"RSA 4096 bit & 10x key generation & 600 000 ms \\\hline",
        r"CS & 10x key generation & 1.05 ms \\\hline",
        r"CS & 10x verifying & 11ms \\\hline",
        r"RSA 2048 bit & 100 parallel signature operations & 573ms \\\hline",
    ]:
        assert line in latex
    assert re.search(
        r"\| RSA 4096 bit +\| 10x key generation +\| +600 000 ms \|", render_markdown(shipped)
    )


def test_dataset_is_what_the_generator_makes_from_the_seed(
    seed_text: str, shipped: list[Result], tmp_path: Path
) -> None:
    built = reference.build(SEED)
    assert [name for name, _ in built] == sorted(
        p.name for p in reference.REFERENCE_DIR.glob("thesis-*.json")
    )
    assert [r for _, r in built] == shipped
    assert reference.main([str(SEED), str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [name for name, _ in built]


def test_every_row_is_one_sample_of_the_printed_value(shipped: list[Result]) -> None:
    assert [r.target.name for r in shipped] == MACHINES
    for result in shipped:
        assert result.reference is not None and result.execution is None
        assert result.run_id == "thesis"
        assert result.reference.source.startswith("thesis-appendix-performance.tex, tab:")
        assert "Demarmels" in result.reference.citation
        for row in result.harness.rows:
            assert row.printed is not None
            number = re.sub(r"\s*ms$", "", row.printed).replace(" ", "")
            assert row.samples_ns == (int(Decimal(number) * 1_000_000),)
    ryzen = shipped[0].harness
    assert ryzen.setup.cpu_model == "8-core AMD Ryzen 7 PRO 5850U"
    assert ryzen.setup.cores == 8
    assert ryzen.setup.machine == "x86_64"
    assert ryzen.setup.os == "Ubuntu 21.10"
    assert ryzen.setup.kernel.startswith("Linux 5.13.0-25-generic #26-Ubuntu SMP")
    assert ryzen.setup.packages == {"libsodium": "1.0.18-1build1", "libgcrypt": "1.8.7-5ubuntu2"}


def test_architectures_come_from_uname(shipped: list[Result]) -> None:
    assert [(r.target.arch, r.harness.setup.machine) for r in shipped] == [
        *[("amd64", "x86_64")] * 5,
        ("arm64", "aarch64"),
        ("amd64", "x86_64"),
        ("riscv64", "riscv64"),
        ("ppc64le", "ppc64le"),
        ("armv7", "armv7l"),
        ("amd64", "x86_64"),
    ]


def test_notes_record_what_the_thesis_got_wrong(shipped: list[Result]) -> None:
    notes = {r.target.name: r.reference.notes for r in shipped if r.reference}
    swapped = sorted(n for n, text in notes.items() if "look swapped" in text)
    assert swapped == [
        "thesis-amd-embedded",
        "thesis-amd-threadripper",
        "thesis-arm64",
        "thesis-armv7",
        "thesis-power9",
        "thesis-riscv64",
    ]
    assert all("truncated to the printed digits" in text for text in notes.values())
    assert "'RSA 4092'" in notes["thesis-security-module"]
    assert "typo for RSA 4096" in notes["thesis-security-module"]
    assert "'pp64le', most likely a typo for ppc64le" in notes["thesis-power9"]
    placeholders = sorted(n for n, text in notes.items() if "placeholder" in text)
    assert placeholders == ["thesis-intel-pentium", "thesis-intel-xeon"]
    assert "'16-Core'" in notes["thesis-amd-threadripper"]
    module = shipped[-1].harness.rows
    assert {(r.key_bits, r.operation, r.ops_per_block) for r in module if r.key_bits == 4092} == {
        (4092, "helper_sequential_signing", 100),
        (4092, "helper_parallel_signing", 100),
        (4092, "helper_parallel_signing", 800),
    }
    # The label as printed is kept for its own table; no other machine printed otherwise.
    printed = {r.target.name: r.reference.printed_schemes for r in shipped if r.reference}
    assert printed.pop("thesis-security-module") == (("RSA 4092 bit", "RSA 4092"),)
    assert set(printed.values()) == {()}


@pytest.mark.parametrize(
    ("printed", "ns"),
    [
        ("0.204 ms", 204_000),
        ("0.001 ms", 1_000),
        ("10 000 ms", 10_000_000_000),
        ("11ms", 11_000_000),
        ("1.05 ms", 1_050_000),
    ],
)
def test_printed_to_ns_is_exact(printed: str, ns: int) -> None:
    assert reference.printed_to_ns(printed) == ns


@pytest.mark.parametrize("printed", ["10 s", "fast", "0 ms", "0.0000001 ms"])
def test_printed_to_ns_refuses_what_is_not_a_speed(printed: str) -> None:
    with pytest.raises(ValueError, match=printed.split()[0][:3]):
        reference.printed_to_ns(printed)


def test_parser_names_the_broken_part(tmp_path: Path) -> None:
    seed = tmp_path / "seed.tex"
    seed.write_text(
        "\\chapter{Performance Measurements}\n\\section{X}\n"
        "\\begin{bfhBox}[BFH-MediumBlue]{Setup}\nCPU: 2-core x\\\\\n"
        "OS: Linux x 6.1 x86\\_64 GNU/Linux\n\\end{bfhBox}\n"
        "\\begin{tabular}{llr}\nCS & 10x dancing & 1 ms \\\\\\hline\n\\end{tabular}\n"
        "\\caption{c}\n\\label{tab:comp-sign-x}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ReportError, match=r"seed.tex, tab:comp-sign-x: unknown operation '10x dancing'"
    ):
        reference.build(seed)
    assert reference.main([str(seed), str(tmp_path / "out")]) == ReportError.exit_code
    assert reference.main([]) == 2
    with pytest.raises(ReportError, match=r"no \\chapter\{Performance Measurements\}"):
        reference.parse_seed("nothing here")


def test_load_reference_reports_a_damaged_file(tmp_path: Path, shipped: list[Result]) -> None:
    (tmp_path / "thesis-01-a.json").write_text(shipped[0].model_dump_json(), encoding="utf-8")
    (tmp_path / "thesis-02-b.json").write_text(json.dumps({"format": "x"}), encoding="utf-8")
    loaded, failures = reference.load_reference(tmp_path)
    assert [r.target.name for r in loaded] == ["thesis-amd-ryzen-7"]
    assert len(failures) == 1 and failures[0].path.name == "thesis-02-b.json"
    assert "'format' is 'x'" in failures[0].message
    with pytest.raises(ReportError, match="no reference dataset"):
        reference.load_reference(tmp_path / "empty")
