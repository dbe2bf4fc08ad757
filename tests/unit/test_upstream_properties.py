"""Property-based tests (Hypothesis) of the parsers of foreign formats in ``archbench/upstream/``.

Each parser gets generated input of its grammar, whose parse is known, and
arbitrary input, which must parse or be refused with our error (never
another exception).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench.errors import MatrixError, ReportError, ResultsError
from archbench.result import MAX_NS
from archbench.upstream import MAX_OPS, parse_duration, parse_scheme, scan_log
from archbench.upstream.gnunet_log import helper_scheme_and_bits
from archbench.upstream.reference import parse_seed, printed_to_ns, to_result
from archbench.upstream.wording import (
    PERF_CRYPTO_CS_WORDING,
    PERF_CRYPTO_RSA_WORDING,
    THESIS_BLINDSIG_WORDING,
    THESIS_HELPER_WORDING,
)

US, MS, S = 1_000, 1_000_000, 1_000_000_000
UNIT_NS = {"µs": US, "ms": MS, "s": S, "m": 60 * S, "h": 3600 * S, "days": 86_400 * S}
SMALLER_NS = {"ms": US, "s": MS, "m": S, "h": 60 * S, "days": 3600 * S}

# Lines with no digit and no line break: no timing format can match them.
NOISE = st.text(
    alphabet=st.characters(blacklist_categories=("Nd", "Cc", "Cs", "Zl", "Zp")), max_size=30
)


# --- GNUnet's times -------------------------------------------------------------------


@given(
    value=st.integers(1, 10**6),
    unit=st.sampled_from(sorted(UNIT_NS)),
    space=st.sampled_from(["", " ", "  "]),
)
def test_a_printed_time_is_its_value_give_or_take_one_unit(
    value: int, unit: str, space: str
) -> None:
    text = f"{value}{space}{unit}"
    if value * UNIT_NS[unit] > MAX_NS:
        with pytest.raises(ValueError, match="longer than any run"):
            parse_duration(text)
        return
    duration = parse_duration(text)
    assert duration.ns == value * UNIT_NS[unit]
    # Below 5 GNUnet prints the larger unit only when exact: one unit of the smaller one.
    width = SMALLER_NS[unit] if unit in SMALLER_NS and value < 5 else UNIT_NS[unit]
    assert duration.uncertainty_ns == width
    assert duration.printed == text


@given(st.text(max_size=40))
def test_any_text_is_a_time_or_a_value_error(text: str) -> None:
    try:
        duration = parse_duration(text)
    except ValueError as exc:
        assert "GNUnet time" in str(exc) or "longer than any run" in str(exc)
    else:
        assert 0 <= duration.ns <= MAX_NS
        assert duration.uncertainty_ns >= US
        assert duration.printed == text.strip()


# --- gnunet_log -----------------------------------------------------------------------


@given(
    before=st.lists(NOISE, max_size=3),
    after=st.lists(NOISE, max_size=3),
    count=st.integers(1, 10_000),
    bits=st.integers(512, 16_384),
    words=st.sampled_from(sorted(PERF_CRYPTO_RSA_WORDING)),
    value=st.integers(1, 99_999),
    unit=st.sampled_from(["µs", "ms", "s"]),
    prefix=st.sampled_from(["", "  ", "perf: "]),
)
def test_a_perf_crypto_rsa_line_among_other_lines_is_one_sample(
    before: list[str],
    after: list[str],
    count: int,
    bits: int,
    words: str,
    value: int,
    unit: str,
    prefix: str,
) -> None:
    line = f"{prefix}{count}x {bits}-{words} took {value} {unit}"
    scan = scan_log("\n".join([*before, line, *after]), "perf.log")
    (m,) = scan.measurements
    assert (m.tool, m.scheme, m.key_bits, m.operation, m.ops_per_block) == (
        "perf_crypto_rsa",
        "RSA",
        bits,
        PERF_CRYPTO_RSA_WORDING[words],
        count,
    )
    assert m.duration == parse_duration(f"{value} {unit}")
    assert m.line == len(before) + 1
    assert scan.ignored == sum(1 for other in [*before, *after] if other.strip())
    (row,) = scan.rows
    assert row.samples_ns == (value * UNIT_NS[unit],) and row.printed == f"{value} {unit}"


@given(
    lines=st.lists(
        st.tuples(st.sampled_from(sorted(PERF_CRYPTO_CS_WORDING)), st.integers(1, 9_999)),
        min_size=1,
        max_size=12,
    )
)
def test_perf_crypto_cs_lines_pool_by_operation(lines: list[tuple[str, int]]) -> None:
    text = "\n".join(f"10x {words} took {us} µs" for words, us in lines)
    rows = {row.operation: row for row in scan_log(text, "cs.log").rows}
    expected: dict[str, list[int]] = {}
    for words, us in lines:
        expected.setdefault(PERF_CRYPTO_CS_WORDING[words], []).append(us * US)
    assert {op: list(row.samples_ns) for op, row in rows.items()} == expected
    assert all(row.scheme == "CS" and row.key_bits is None for row in rows.values())


FRAGMENTS = st.sampled_from(
    [
        "10x ",
        "100 ",
        "2048-",
        "99999999999999",
        "0",
        "signing",
        "derive blinding secrets",
        " took ",
        "34",
        " ms",
        " µs",
        " days",
        "forever",
        "(parallel)",
        "(batch)",
        "(sequential)",
        " signature operations",
        " (total real time)",
        "\n",
        " ",
        "x",
    ]
)


@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_any_log_gives_positive_samples_or_a_results_error(text: str) -> None:
    try:
        scan = scan_log(text, "test_helper_cs.log")
    except ResultsError as exc:
        assert str(exc).startswith("test_helper_cs.log")
        return
    assert scan.measurements
    for m in scan.measurements:
        assert 0 < m.duration.ns <= MAX_NS and 1 <= m.ops_per_block <= MAX_OPS
    assert sum(len(row.samples_ns) for row in scan.rows) == len(scan.measurements)


# --- test_helper's scheme -------------------------------------------------------------


@given(bits=st.integers(512, 16_384), sep=st.sampled_from(["-", "_", "."]))
def test_the_rsa_key_size_comes_from_the_file_name(bits: int, sep: str) -> None:
    name = f"test_helper_rsa{sep}{bits}.log"
    notes: list[str] = []
    assert helper_scheme_and_bits("", f"logs/{name}", None, None, notes) == ("RSA", bits)
    assert notes == [
        f"{name}: test_helper_rsa prints no key size; {bits} bit from the file name {name!r}."
    ]


@given(bits=st.integers(512, 16_384), given_bits=st.integers(512, 16_384))
def test_rsa_bits_must_agree_with_the_file_name(bits: int, given_bits: int) -> None:
    source = f"test_helper_rsa-{bits}.log"
    if given_bits == bits:
        assert helper_scheme_and_bits("", source, "RSA", given_bits, []) == ("RSA", bits)
    else:
        with pytest.raises(ResultsError, match=f"--rsa-bits {given_bits} contradicts"):
            helper_scheme_and_bits("", source, "RSA", given_bits, [])


@given(st.one_of(st.text(max_size=12), st.sampled_from([" cs", "RSA ", "Rsa", "c s", "rsa2048"])))
def test_scheme_option_is_cs_rsa_blank_or_refused(value: str) -> None:
    key = value.strip().upper()
    if key in ("", "CS", "RSA"):
        assert parse_scheme(value) == (key or None)
    else:
        with pytest.raises(MatrixError, match="use cs or rsa"):
            parse_scheme(value)


# --- the thesis's LaTeX ---------------------------------------------------------------


def _spaced(ms: Decimal) -> str:
    """``10000.5`` as the thesis prints it: ``10 000.5``."""
    whole, _, fraction = format(ms, "f").partition(".")
    grouped = f"{int(whole):,}".replace(",", " ")
    return f"{grouped}.{fraction}" if fraction else grouped


@given(
    ms=st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("100000"), places=6),
    spaced=st.booleans(),
    gap=st.sampled_from(["", " "]),
)
def test_a_printed_speed_is_exactly_its_ns(ms: Decimal, spaced: bool, gap: str) -> None:
    number = _spaced(ms) if spaced else format(ms, "f")
    assert printed_to_ns(f"{number}{gap}ms") == int(ms * MS)


@given(ms=st.decimals(min_value=Decimal("0.0000001"), max_value=Decimal("1"), places=9))
def test_a_speed_finer_than_a_ns_is_refused(ms: Decimal) -> None:
    if (ms * MS) % 1 == 0:
        assert printed_to_ns(f"{ms:f} ms") == int(ms * MS)
    else:
        with pytest.raises(ValueError, match="not a positive whole number of ns"):
            printed_to_ns(f"{ms:f} ms")


SCHEMES = {"CS": ("CS", None), "RSA 1024 bit": ("RSA", 1024), "RSA 4092": ("RSA", 4092)}
ROW = st.tuples(
    st.sampled_from(sorted(SCHEMES)),
    st.one_of(
        st.tuples(st.integers(1, 1000), st.sampled_from(sorted(THESIS_BLINDSIG_WORDING))).map(
            lambda t: (f"{t[0]}x {t[1]}", t[0], THESIS_BLINDSIG_WORDING[t[1]])
        ),
        st.tuples(st.integers(1, 1000), st.sampled_from(sorted(THESIS_HELPER_WORDING))).map(
            lambda t: (f"{t[0]} {t[1]}", t[0], THESIS_HELPER_WORDING[t[1]])
        ),
    ),
    st.decimals(min_value=Decimal("0.001"), max_value=Decimal("20000"), places=3),
)


@given(
    groups=st.lists(st.lists(ROW, min_size=1, max_size=4), min_size=1, max_size=4),
    title=st.text(alphabet="abcXYZ019 ()-", min_size=1, max_size=20).filter(str.strip),
)
def test_a_generated_table_reads_back_as_printed(
    groups: list[list[tuple[str, tuple[str, int, str], Decimal]]], title: str
) -> None:
    lines = [r"\textbf{Signature Scheme} & \textbf{Operation} & \textbf{Speed} \\\hline"]
    for index, group in enumerate(groups):
        if index:
            lines.append(r"\hline")
        lines += [rf"{s} & {op[0]} & {_spaced(v)} ms \\\hline" for s, op, v in group]
    seed = "\n".join(
        [
            r"\chapter{Performance Measurements}",
            rf"\section{{{title}}}",
            r"\begin{bfhBox}[BFH-MediumBlue]{Setup}",
            r"CPU: 4-core Test CPU \\",
            r"OS: Debian 12 Linux 6.1.0 \#1 SMP x86\_64 GNU/Linux",
            r"\end{bfhBox}",
            r"\begin{tabular}{llr}",
            *lines,
            r"\end{tabular}",
            r"\caption{Generated}",
            r"\label{tab:comp-sign-generated}",
        ]
    )
    (table,) = parse_seed(seed, "generated.tex")
    assert table.title == " ".join(title.split())
    assert table.box == (
        ("CPU", "4-core Test CPU"),
        ("OS", "Debian 12 Linux 6.1.0 #1 SMP x86_64 GNU/Linux"),
    )
    flat = [(g, row) for g, group in enumerate(groups) for row in group]
    assert [(r.scheme, r.operation, r.value, r.group) for r in table.rows] == [
        (s, op[0], f"{_spaced(v)} ms", g) for g, (s, op, v) in flat
    ]
    result = to_result(table, "generated.tex")
    assert result.target.name == "thesis-generated" and result.target.arch == "amd64"
    assert [
        (r.scheme, r.key_bits, r.operation, r.ops_per_block, r.samples_ns)
        for r in result.harness.rows
    ] == [(*SCHEMES[s], op[2], op[1], (int(v * MS),)) for _, (s, op, v) in flat]


@given(
    st.lists(
        st.sampled_from(
            [
                "\\section{",
                "}",
                "\\chapter{Performance Measurements}",
                "\\begin{tabular}{l}",
                "\\end{tabular}",
                "a & b & c \\\\",
                "\\hline",
                "\n",
                "x",
            ]
        ),
        max_size=25,
    ).map("".join)
)
def test_any_latex_gives_tables_or_a_report_error(text: str) -> None:
    try:
        tables = parse_seed(text, "any.tex")
    except ReportError as exc:
        assert str(exc).startswith("any.tex")
    else:
        assert tables and all(t.label.startswith("tab:comp-sign-") for t in tables)
