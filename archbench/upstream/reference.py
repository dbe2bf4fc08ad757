"""The thesis appendix's published figures as a reference dataset.

``python -m archbench.upstream.reference SEED OUTDIR`` parses the LaTeX of the
appendix "Performance Measurements" (``thesis-appendix-performance.tex``)
and writes one ``archbench-result`` v1 file per table into OUTDIR: the ten
machines' blind-signature tables and the security-module table, in the
order the appendix prints them (``thesis-01-….json`` …). The shipped copy
lives in ``reports/reference/`` and is regenerated, never edited by hand.

Each file has ``reference`` set (source = seed file and table label,
citation = the thesis, notes = what a reader must know about that table),
one sample per row (the printed value converted to ns) and ``Row.printed``
holding the value exactly as printed (``"10 000 ms"``, ``"11ms"``). The
Setup box is carried over as printed: ``cpu_model`` is the CPU line
(``"8-core AMD Ryzen 7 PRO 5850U"``), ``os`` the distribution before
``Linux`` and ``kernel`` the ``uname -a`` text after it, package versions as
printed even where they are swapped. Figures are facts and may be carried
over; the source is kept with each file.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Final

from archbench import REPO_ROOT
from archbench.errors import ArchbenchError, ReportError, ResultsError
from archbench.platforms import Arch
from archbench.result import (
    NS_PER_MS,
    HarnessDocument,
    LoadFailure,
    Operation,
    Parameters,
    Reference,
    Result,
    Row,
    Scheme,
    Setup,
    TargetInfo,
    load,
    scheme_text,
    write_atomic,
)
from archbench.upstream.wording import THESIS_BLINDSIG_WORDING, THESIS_HELPER_WORDING

SEED_FILE: Final = "thesis-appendix-performance.tex"
"""The seed's file name, as cited in every reference file's ``source``."""

TABLE_LABEL_PREFIX: Final = "tab:comp-sign-"

_BOX_KEY: Final = re.compile(r"^(CPU|[Aa]rchitecture|OS|lib[a-z]+(?:[:a-z0-9]*)? version):\s*(.*)$")
_SCHEME: Final = re.compile(r"^(CS|RSA (\d+)(?: bit)?)$")
_BLINDSIG_OP: Final = re.compile(r"^(\d+)x (.+)$")
_HELPER_OP: Final = re.compile(r"^(\d+) (.+)$")
_VALUE: Final = re.compile(r"^(\d[\d ]*(?:\.\d+)?)\s*ms$")
_UNESCAPE: Final = re.compile(r"\\([#_&%$])")


@dataclass(frozen=True)
class SeedRow:
    """One table row exactly as the seed prints it (LaTeX escapes removed)."""

    scheme: str
    """``"CS"``, ``"RSA 1024 bit"``, or ``"RSA 4092"`` as printed."""
    operation: str
    """``"10x key generation"`` or ``"100 parallel signature operations"``."""
    value: str
    """``"0.204 ms"``, ``"10 000 ms"``, ``"11ms"``."""
    group: int
    """Index of the ``\\hline\\hline``-separated group, from 0."""


@dataclass(frozen=True)
class SeedTable:
    """One appendix section: its title, Setup box and table, as printed."""

    title: str
    label: str
    caption: str
    box: tuple[tuple[str, str], ...]
    """(key, value) lines of the Setup box; continuation lines are joined."""
    rows: tuple[SeedRow, ...]
    intro: str = ""
    """The text between the section title and the Setup box, ``\\ref{…}`` kept."""
    printed_box: tuple[str, ...] = ()
    """The Setup box's lines as the PDF breaks them (at ``\\\\``), LaTeX escapes removed:
    the ARMv7 box prints "CPU: … (v7l) Architecture: armv7" as one line."""


def _unescape(text: str) -> str:
    return re.sub(r"\s+", " ", _UNESCAPE.sub(r"\1", text)).strip()


def _box(text: str, where: str) -> tuple[tuple[str, str], ...]:
    items: list[list[str]] = []
    for raw in text.strip().splitlines():
        line = raw.strip().removesuffix("\\\\").strip()
        if not line:
            continue
        match = _BOX_KEY.match(line)
        if match:
            items.append([match.group(1), match.group(2)])
        elif items:
            # A value wrapped onto the next source line (Threadripper's OS line).
            items[-1][1] += " " + line
        else:
            raise ReportError(f"{where}: Setup box line {line!r} has no 'Key:' prefix")
    return tuple((key, _unescape(value)) for key, value in items)


def _rows(text: str, where: str) -> tuple[SeedRow, ...]:
    rows: list[SeedRow] = []
    group = 0
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line == r"\hline":
            group += 1
        elif "&" in line and r"\textbf" not in line:
            cells = [c.strip() for c in re.sub(r"\\\\(\\hline)?$", "", line).split("&")]
            if len(cells) != 3:
                raise ReportError(f"{where}: table row {line!r} does not have three cells")
            scheme, operation, value = (_unescape(c) for c in cells)
            rows.append(SeedRow(scheme, operation, value, group))
    return tuple(rows)


def parse_seed(text: str, source: str = SEED_FILE) -> list[SeedTable]:
    """Every table of the appendix chapter "Performance Measurements", in order.

    Only sections after ``\\chapter{Performance Measurements}`` that contain
    a ``tabular`` count; each must also have a Setup box, a caption and a
    ``tab:comp-sign-…`` label.

    Raises:
        ReportError: the chapter is missing, or a section lacks one of those
            parts, or a table row does not have three cells; the message
            names ``source`` and the section.
    """
    _, found, chapter = text.partition(r"\chapter{Performance Measurements}")
    if not found:
        raise ReportError(f"{source}: no \\chapter{{Performance Measurements}}")
    chapter = re.split(r"\\chapter\{", chapter, maxsplit=1)[0]
    tables: list[SeedTable] = []
    for chunk in re.split(r"\\section\{", chapter)[1:]:
        title, _, body = chunk.partition("}")
        where = f"{source}, section {title!r}"
        tabular = re.search(r"\\begin\{tabular\}\{[^}]*\}(.*?)\\end\{tabular\}", body, re.S)
        if tabular is None:
            continue
        box = re.search(r"\\begin\{bfhBox\}\[[^\]]*\]\{Setup\}(.*?)\\end\{bfhBox\}", body, re.S)
        intro = body[: box.start()] if box is not None else ""
        caption = re.search(r"\\caption\{([^}]*)\}", body)
        label = re.search(r"\\label\{(" + re.escape(TABLE_LABEL_PREFIX) + r"[^}]*)\}", body)
        if box is None or caption is None or label is None:
            raise ReportError(f"{where}: expected a Setup box, a \\caption and a \\label")
        tables.append(
            SeedTable(
                title=_unescape(title),
                label=label.group(1),
                caption=_unescape(caption.group(1)),
                box=_box(box.group(1), where),
                rows=_rows(tabular.group(1), where),
                intro=_unescape(intro),
                printed_box=tuple(
                    line
                    for line in (_unescape(part) for part in re.split(r"\\\\", box.group(1)))
                    if line
                ),
            )
        )
    if not tables:
        raise ReportError(f"{source}: the Performance Measurements chapter has no tables")
    return tables


def printed_to_ns(printed: str) -> int:
    """A printed speed in ms (``"10 000 ms"``, ``"0.001 ms"``, ``"11ms"``) in integer ns.

    Exact: decimal arithmetic, so ``"0.204 ms"`` is 204 000 ns, not a float
    neighbour of it.

    Raises:
        ValueError: not a number followed by ``ms``, or not positive.
    """
    match = _VALUE.match(printed.strip())
    if match is None:
        raise ValueError(f"not a speed in ms: {printed!r}")
    try:
        ns = Decimal(match.group(1).replace(" ", "")) * NS_PER_MS
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"not a speed in ms: {printed!r}") from exc
    if ns <= 0 or ns != ns.to_integral_value():
        raise ValueError(f"{printed!r} is not a positive whole number of ns")
    return int(ns)


def read_scheme(text: str, where: str) -> tuple[Scheme, int | None]:
    """(scheme, key bits) of a printed scheme cell: ``"CS"``, ``"RSA 1024 bit"``, ``"RSA 4092"``.

    Raises:
        ReportError: any other text; the message starts with ``where``.
    """
    match = _SCHEME.match(text)
    if match is None:
        raise ReportError(f"{where}: unknown signature scheme {text!r}")
    return ("CS", None) if match.group(2) is None else ("RSA", int(match.group(2)))


def read_operation(text: str, where: str) -> tuple[Operation, int, str]:
    """(operation id, ops_per_block, suite) of a printed operation cell.

    ``"10x signing"`` is (``signing``, 10, ``blindsig``), ``"800 parallel
    signature operations"`` (``helper_parallel_signing``, 800,
    ``security-module``): the words are the vocabulary's
    (:mod:`archbench.upstream.wording`), without aliases.

    Raises:
        ReportError: any other text; the message starts with ``where``.
    """
    match = _BLINDSIG_OP.match(text)
    if match and match.group(2) in THESIS_BLINDSIG_WORDING:
        return THESIS_BLINDSIG_WORDING[match.group(2)], int(match.group(1)), "blindsig"
    match = _HELPER_OP.match(text)
    if match and match.group(2) in THESIS_HELPER_WORDING:
        return THESIS_HELPER_WORDING[match.group(2)], int(match.group(1)), "security-module"
    raise ReportError(f"{where}: unknown operation {text!r}")


REFERENCE_DIR: Final = REPO_ROOT / "reports" / "reference"
"""The shipped dataset: ``reports/reference/thesis-*.json`` of the checkout."""

RUN_ID: Final = "thesis"
"""Run id of every reference result; target names keep them apart."""

CITATION: Final = (
    "Gian Demarmels et al., bachelor thesis on the Clause Blind Schnorr Signature Scheme "
    "in GNU Taler, Bern University of Applied Sciences (BFH), 2022; appendix "
    "'Performance Measurements' (LaTeX source: GNU Taler exchange repository, "
    "doc/cs/content/appendix.tex)"
)


_NAME_FIXES: Final = {"risc64": "riscv64", "full": "security-module"}
"""Label suffixes that would make a misleading target name."""

_HARNESS: Final = {
    "blindsig": "GNUnet src/util/perf_crypto_cs and perf_crypto_rsa",
    "security-module": "Taler exchange src/util/test_helper_cs and test_helper_rsa",
}
"""What produced the figures, as the thesis's installation appendix names it."""


def target_name(label: str) -> str:
    """Our target name for a thesis table: ``tab:comp-sign-amd-ryzen-7`` -> ``thesis-amd-ryzen-7``.

    ``risc64`` becomes ``riscv64`` (the architecture's name) and the
    security module's ``full`` becomes ``security-module``.
    """
    suffix = label.removeprefix(TABLE_LABEL_PREFIX).lower()
    return "thesis-" + _NAME_FIXES.get(suffix, suffix)


def _key_value(line: str) -> tuple[str, str]:
    """A printed Setup box line split at its first ``": "``: ``"Key: value"`` -> (key, value)."""
    key, _, value = line.partition(": ")
    return key, value


def _machine(os_line: str, where: str) -> tuple[str, Arch]:
    # uname -a ends with the machine (repeated for processor and platform).
    for token in reversed(os_line.split()):
        try:
            return token, Arch.from_machine(token)
        except ValueError:
            continue
    raise ReportError(f"{where}: no machine name (uname -m) in the OS line {os_line!r}")


def _box_notes(table: SeedTable, cpu: str, os_line: str, arch: Arch, machine: str) -> list[str]:
    """What the notes say about the Setup box of ``table`` as printed: its core count,
    kernel, architecture line and title."""
    notes = []
    cores_printed = _cores_printed(cpu)
    if cores_printed is None:
        notes.append("The Setup box prints no core count; cores = 1 is a placeholder, not a fact.")
    elif not cpu.lower().startswith(cores_printed.group(0).lower()):
        notes.append(f"The core count is taken from the CPU name ({cores_printed.group(0)!r}).")
    if "~" in os_line.partition("Linux ")[2]:
        notes.append(
            "The kernel version's '~' is kept from the LaTeX source (Debian's version "
            "syntax); the thesis PDF shows it as a space."
        )
    box = dict(table.box)
    printed_arch = box.get("Architecture", box.get("architecture"))
    if printed_arch is None:
        notes.append(
            f"The Setup box has no Architecture line; {arch.key} comes from uname -m "
            f"({machine}) in the OS line."
        )
    elif printed_arch.lower() not in {arch.key, arch.debian_arch}:
        notes.append(
            f"The Setup box prints the architecture as {printed_arch!r}, most likely a typo "
            f"for {arch.key} (uname -m in the OS line: {machine})."
        )
    if "risc64" in table.title.lower():
        notes.append(f"The thesis titles this section {table.title!r}; the machine is riscv64.")
    return notes


def _cores_printed(cpu: str) -> re.Match[str] | None:
    """The core count the CPU line prints (``8-core ...`` or ``... 8-Core ...``), if any."""
    return re.match(r"(\d+)-core\b", cpu, re.I) or re.search(r"\b(\d+)-Core\b", cpu)


def _packages(table: SeedTable, arch: Arch) -> tuple[dict[str, str | None], list[str]]:
    """The library versions of the Setup box (``{"libgcrypt": "1.10.1", ...}``) and what
    the notes say about their labels and values."""
    notes = []
    packages: dict[str, str | None] = {}
    for key, value in table.box:
        if key.startswith("lib"):
            name = re.split(r"[: ]", key, maxsplit=1)[0]
            packages[name] = value
            if key not in (f"{name}:{arch.debian_arch} version", f"{name} version"):
                notes.append(f"The Setup box labels the {name} version {key!r}.")
    sodium, gcrypt = packages.get("libsodium") or "", packages.get("libgcrypt") or ""
    if gcrypt.startswith("1.0.") and not sodium.startswith("1.0."):
        notes.append(
            f"The Setup box gives libsodium {sodium} and libgcrypt {gcrypt}: the versions "
            "look swapped (libsodium's releases are 1.0.x, libgcrypt's 1.8 and later) and "
            "are kept as printed."
        )
    return packages, notes


def _result_rows(table: SeedTable, where: str) -> list[Row]:
    """The table's rows, one sample each: the printed value in ns (and its text).

    Raises:
        ReportError: an unknown scheme, operation or value; the message names ``where``.
    """
    rows: list[Row] = []
    for seed_row in table.rows:
        scheme, bits = read_scheme(seed_row.scheme, where)
        operation, ops, suite = read_operation(seed_row.operation, where)
        try:
            ns = printed_to_ns(seed_row.value)
        except ValueError as exc:
            raise ReportError(f"{where}: {exc}") from exc
        rows.append(
            Row(
                suite=suite,
                scheme=scheme,
                key_bits=bits,
                operation=operation,
                ops_per_block=ops,
                samples_ns=(ns,),
                valid=True,
                printed=seed_row.value,
            )
        )
    return rows


def _printing_notes(table: SeedTable, unlabelled: list[str], where: str) -> list[str]:
    """What the notes say about how rows were printed: RSA sizes without "bit" (the
    schemes ``unlabelled``) and values without a space before "ms"."""
    notes = []
    for printed in unlabelled:
        bits = read_scheme(printed, where)[1]
        notes.append(
            f"Rows printed as {printed!r} (without 'bit') keep key_bits {bits} as printed; "
            "most likely a typo for RSA 4096, the largest size of the other tables."
            if bits == 4092
            else f"Rows printed as {printed!r} (without 'bit') keep key_bits {bits} as printed."
        )
    unspaced = sorted({r.value for r in table.rows if re.search(r"\dms$", r.value)})
    if unspaced:
        notes.append(f"Printed without a space before 'ms' and kept so: {', '.join(unspaced)}.")
    return notes


def to_result(table: SeedTable, source: str = SEED_FILE) -> Result:
    """The reference result of one seed table.

    Raises:
        ReportError: an unknown scheme, operation or value, or a Setup box
            without CPU or OS line; the message names the table.
    """
    where = f"{source}, {table.label}"
    box = dict(table.box)
    if "CPU" not in box or "OS" not in box:
        raise ReportError(f"{where}: the Setup box has no CPU or OS line")
    cpu, os_line = box["CPU"], box["OS"]
    machine, arch = _machine(os_line, where)
    distro, linux, kernel = os_line.partition("Linux ")
    cores_printed = _cores_printed(cpu)
    packages, package_notes = _packages(table, arch)
    rows = _result_rows(table, where)
    unlabelled = sorted(
        {r.scheme for r in table.rows if r.scheme.startswith("RSA") and "bit" not in r.scheme}
    )
    notes = [
        "Figures as printed in the thesis, truncated to the printed digits "
        "(e.g. '10 000 ms' carries one significant digit); each row holds one sample, "
        "the printed value in ns, and 'printed' keeps the text. The Setup box is "
        "carried over as printed.",
        *_box_notes(table, cpu, os_line, arch, machine),
        *package_notes,
        *_printing_notes(table, unlabelled, where),
    ]
    suites = sorted({r.suite for r in rows})
    name = target_name(table.label)
    return Result(
        run_id=RUN_ID,
        target=TargetInfo(
            name=name,
            arch=arch.key,
            platform=arch.platform,
            base=distro.strip() or "unknown",
            profile="thesis",
        ),
        reference=Reference(
            source=f"{source}, {table.label}",
            citation=CITATION,
            notes=" ".join(notes),
            title=table.title,
            table_label=table.label,
            caption=table.caption,
            intro=table.intro or None,
            box=tuple(_key_value(line) for line in table.printed_box) or None,
            placeholders=() if cores_printed else ("cores",),
            printed_schemes=tuple(
                (scheme_text(*read_scheme(printed, where)), printed) for printed in unlabelled
            ),
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version="; ".join(_HARNESS[s] for s in suites),
            started_at="unknown",
            duration_s=0.0,
            parameters=Parameters(
                iterations=max(r.ops_per_block for r in rows),
                repetitions=1,
                rsa_bits=tuple(sorted({r.key_bits for r in rows if r.key_bits is not None})),
            ),
            setup=Setup(
                cpu_model=cpu,
                cores=int(cores_printed.group(1)) if cores_printed else 1,
                machine=machine,
                kernel=(linux + kernel).strip(),
                os=distro.strip(),
                packages=packages,
            ),
            rows=tuple(rows),
        ),
    )


def file_name(index: int, result: Result) -> str:
    """``thesis-01-amd-ryzen-7.json``: the number keeps the appendix's order on disk."""
    return f"thesis-{index:02d}-{result.target.name.removeprefix('thesis-')}.json"


def build(seed: Path) -> list[tuple[str, Result]]:
    """(file name, result) of every table of the seed, in the appendix's order.

    Raises:
        ReportError: the seed cannot be read or parsed.
    """
    try:
        text = seed.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{seed}: cannot read the seed: {exc.strerror or exc}") from exc
    results = [to_result(t, seed.name) for t in parse_seed(text, seed.name)]
    return [(file_name(i, r), r) for i, r in enumerate(results, start=1)]


def write(seed: Path, out_dir: Path) -> list[Path]:
    """Regenerate the reference dataset from ``seed`` into ``out_dir``.

    Files are written atomically as indented JSON with a final newline, so
    a regeneration from the same seed is byte-identical.

    Raises:
        ReportError: the seed cannot be parsed or ``out_dir`` is not writable.
    """
    paths = []
    for name, result in build(seed):
        path = out_dir / name
        try:
            write_atomic(path, result.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise ReportError(f"{path}: cannot write: {exc.strerror or exc}") from exc
        paths.append(path)
    return paths


def load_reference(directory: Path = REFERENCE_DIR) -> tuple[list[Result], list[LoadFailure]]:
    """The shipped reference results (``thesis-*.json``), in the appendix's order.

    A file that does not load is returned as a :class:`LoadFailure` beside
    the others, as :meth:`archbench.result.ResultStore.load_all` does.

    Raises:
        ReportError: ``directory`` holds no ``thesis-*.json`` (an incomplete
            checkout).
    """
    paths = sorted(directory.glob("thesis-*.json"))
    if not paths:
        raise ReportError(
            f"{directory}: no reference dataset (thesis-*.json); regenerate it with "
            "'python -m archbench.upstream.reference "
            f"tests/fixtures/thesis/{SEED_FILE} {directory}'"
        )
    loaded: list[Result] = []
    failures: list[LoadFailure] = []
    for path in paths:
        try:
            loaded.append(load(path))
        except ResultsError as exc:
            failures.append(LoadFailure(path, str(exc)))
    return loaded, failures


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m archbench.upstream.reference SEED OUTDIR``.

    Returns the exit status.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print(
            f"usage: python -m archbench.upstream.reference SEED OUTDIR\n\n{__doc__}",
            file=sys.stderr,
        )
        return 2
    try:
        for path in write(Path(args[0]), Path(args[1])):
            print(f"wrote {path}")
    except ArchbenchError as exc:
        print(f"archbench.upstream.reference: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
