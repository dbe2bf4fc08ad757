"""Every flag is declared once (``archbench/cli/flags.py``): help, checks and the documented
table agree with that declaration, for every flag of every command.

* help: the flags ``invoke --help TASK`` prints (the golden files, which
  ``test_cli_help.py`` proves the real command line prints) are exactly the registry's,
  and a range written in a help text is the declared one;
* checks: every number flag accepts its bounds and refuses just beyond them, by the
  flag's own method and through the command's body, with the flag named;
* docs: ``docs/commands.md`` holds the table the registry prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import GOLDEN, REPO

from archbench import cli
from archbench.cli import COMMANDS, flags
from archbench.cli.flags import Flag
from archbench.errors import ArchbenchError, MatrixError, ReportUsageError

DOC = REPO / "docs" / "commands.md"
NUMBERS = [
    (c.name, f) for c in COMMANDS for f in c.flags if f.kind in ("int", "ints", "real", "level")
]


def _options(help_text: str) -> set[str]:
    """The options a golden ``invoke --help`` lists: ``--rsa-bits``, ``--plots``."""
    return {
        m.group(1).replace("[no-]", "")
        for m in re.finditer(r"^  (--[\[\]a-z-]+)", help_text, re.MULTILINE)
    }


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_help_lists_exactly_the_declared_flags(command: cli.Command) -> None:
    printed = (GOLDEN / "cli-help" / f"{command.name}.txt").read_text(encoding="utf-8")
    assert _options(printed) == {f.option for f in command.flags}
    assert command.doc in printed
    for f in command.flags:
        # invoke wraps help at 80 columns: compare word by word.
        assert " ".join(f.text.split()[:4]) in " ".join(printed.split()), f.option


@pytest.mark.parametrize(("command", "flag"), NUMBERS, ids=lambda x: getattr(x, "name", x))
def test_a_range_in_a_help_text_is_the_declared_range(command: str, flag: Flag) -> None:
    written = re.findall(r"\b(\d+)-(\d+)\b", flag.text)
    if flag.kind in ("int", "ints") and "{range}" in flag.help:
        assert written == [(str(int(flag.low or 0)), str(int(flag.high or 0)))]
    else:
        assert written == [], f"{flag.option}: write the range as {{range}}"


def _beyond(flag: Flag) -> list[str]:
    assert flag.low is not None and flag.high is not None
    step = 1 if flag.kind in ("int", "ints") else 0.5
    below = [] if flag.kind == "real" and flag.low == 0 else [_text(flag, flag.low - step)]
    return [*below, _text(flag, flag.high + step)]


def _text(flag: Flag, value: float) -> str:
    return str(int(value)) if flag.kind in ("int", "ints") else repr(float(value))


def _inside(flag: Flag) -> list[str]:
    assert flag.low is not None and flag.high is not None
    high = flag.high - 0.01 if flag.open_high else flag.high
    low = flag.low + 0.01 if flag.kind == "real" else flag.low
    return [_text(flag, low), _text(flag, high)]


def _check(flag: Flag, text: str) -> object:
    if flag.kind == "int":
        return flag.integer(text)
    if flag.kind == "ints":
        return flag.integers(text)
    if flag.kind == "real":
        return flag.real(text)
    return flag.level(text)


@pytest.mark.parametrize(("command", "flag"), NUMBERS, ids=lambda x: getattr(x, "name", x))
def test_each_number_flag_takes_its_bounds_and_refuses_beyond(command: str, flag: Flag) -> None:
    for text in _inside(flag):
        assert _check(flag, text) is not None
    error = ReportUsageError if flag.kind == "level" else MatrixError
    for text in [*_beyond(flag), "x"]:
        with pytest.raises(error, match=re.escape(flag.option)):
            _check(flag, text)


# The bodies check their flags before reading anything: these run without files.
_NEEDS = {"compare": {"run_a": "a", "run_b": "b"}, "bisect": {"metric": "instructions"}}


@pytest.mark.parametrize(
    ("command", "flag"),
    [(c, f) for c, f in NUMBERS if c != "import"],  # import checks its logs first
    ids=lambda x: getattr(x, "name", x),
)
def test_each_command_refuses_a_value_beyond_the_declared_range(
    command: str, flag: Flag, tmp_path: Path
) -> None:
    settings = cli.Settings(
        matrix=str(tmp_path / "none.yml"),
        results=str(tmp_path / "results"),
        reports=str(tmp_path / "reports"),
        work=str(tmp_path / "work"),
        apt_proxy="",
        build_jobs="2",
    )
    beyond = _beyond(flag)[-1]
    with pytest.raises(ArchbenchError, match=re.escape(flag.option)) as refused:
        cli.load_body(command)(settings, {**_NEEDS.get(command, {}), flag.name: beyond})
    assert refused.value.exit_code == 2
    assert not (tmp_path / "results").exists() and not (tmp_path / "reports").exists()


def test_build_jobs_is_checked_once_with_its_declared_range(tmp_path: Path) -> None:
    settings = cli.Settings(str(tmp_path / "m.yml"), str(tmp_path), str(tmp_path), "", "", "17")
    for command in ("bench", "images", "history"):
        with pytest.raises(MatrixError, match="build_jobs: 17 is out of range; give a number "
                           "from 1 to 16"):  # fmt: skip
            cli.load_body(command)(settings, {})


def test_the_documented_table_is_the_registry_s() -> None:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- flags:")
    start = text.index("\n", start) + 1
    end = text.index("<!-- /flags -->")
    assert text[start:end] == flags.markdown_table(), (
        "docs/commands.md's flag table differs from archbench/cli/flags.py: paste "
        "`python -c 'from archbench.cli.flags import markdown_table; print(markdown_table())'`"
    )


def test_every_declared_flag_has_one_row_with_its_range_and_default() -> None:
    rows = [r.split(" | ") for r in flags.markdown_table().splitlines()[2:]]
    for command in COMMANDS:
        for f in command.flags:
            if f.positional:
                continue
            (row,) = [
                r for r in rows if r[0] == f"| `{f.option}`" and command.name in r[1].split(", ")
            ]
            if f.range:
                assert f.range in row[2], (command.name, f.option)
            if f.absent is not None:
                assert row[3] == f"{f.absent:g} |", (command.name, f.option)


@pytest.mark.parametrize(("command", "flag"), NUMBERS, ids=lambda v: getattr(v, "name", v))
def test_a_number_flag_s_default_is_written_only_in_its_declaration(
    command: str, flag: Flag
) -> None:
    # A help text says its default through {default}, filled in from `absent` or
    # `default`, so the two cannot disagree; and absent means the declared value.
    assert not re.search(r"default [0-9]", flag.help), (command, flag.help)
    if "{default}" in flag.help:
        shown = f"{flag.absent:g}" if flag.absent is not None else str(flag.default)
        assert f"default {shown}" in flag.text
    if flag.absent is not None and flag.kind == "int":
        assert flag.integer_or_absent(None) == flag.absent
        assert flag.integer_or_absent(str(int(flag.absent))) == flag.absent
