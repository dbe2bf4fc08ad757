"""The counting plugin checked against callgrind: the same driver and inputs under valgrind.

``archbench_harness.py --count-with DIR --callgrind`` (amd64 targets, blindsig
only) runs blindsig twice with the same arguments, block markers and fixed inputs
(``drivers/counting/count_inputs.h``): once under the counting QEMU
(``blindsig_counting``), once under ``valgrind --tool=callgrind``. Valgrind is not
in the counting layer: it is installed only in the callgrind layer over it
(``images/counter/Dockerfile.callgrind.j2``).

The region callgrind counts is the driver's ``run_stage`` (``drivers/blindsig_measure.c``),
the function that brackets every block with the markers: ``--collect-atstart=no
--toggle-collect=run_stage`` collects from its entry to its return, and
``--dump-after=run_stage`` writes one profile part per call, so part k is block k,
in the order the driver prints its blocks. Why not the markers themselves: callgrind
cannot start collecting at a system call, and client requests
(``CALLGRIND_TOGGLE_COLLECT``) would change the driver that QEMU counts. The plugin
counts from the START ``getpid`` to the STOP one; ``run_stage`` adds its own entry
and return, the rest of libc's ``syscall()`` around the two markers and the
``--reuse-keys`` checks (off in counting mode): a few dozen instructions per block
(measured: ``docs/counting.md``).

Function names: callgrind names code by the ELF symbol tables like
``count_symbols`` does (valgrind's own dependency ``libc6-dbg`` is removed from
the layer so that libc is named from the same tables); code outside every symbol
is an address (``0x…``) in callgrind and ``(no symbol) after F`` in the plugin:
:func:`grouped` turns both into ``(no symbol)`` of the library, so the two can
be compared key by key. Standard library only.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from abh.suites import count_symbols
from abh.suites.count_symbols import NO_SYMBOL, UNKNOWN
from abh.suites.counting import CountError

VALGRIND = "valgrind"
REGION_FUNCTION = "run_stage"
"""The driver function whose calls callgrind collects (one call = one block)."""
OUT_NAME = "blindsig.callgrind"
_HEX_NAME = re.compile(r"^0x[0-9a-fA-F]+$")
_SUFFIX = re.compile(r"(@@?[A-Za-z0-9_.]+)?('\d+)?$")
_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


@dataclass(frozen=True)
class Part:
    """One callgrind profile part: ``total`` Ir and ``functions``
    ``{(object path, function): self Ir}`` summing to ``total`` (:func:`canonical`
    turns the paths into library file names, as the plugin's attribution has them)."""

    total: int
    functions: dict[tuple[str, str], int] = field(default_factory=dict)


def callgrind_command(
    out_file: Path, program: Path, args: Sequence[str], valgrind: str = VALGRIND
) -> list[str]:
    """The command line that runs ``program args`` under callgrind, one part per block.

    Parts are written to ``out_file.<n>`` (n from 1); ``out_file`` itself gets the
    empty rest of the program.
    """
    return [
        valgrind,
        "--tool=callgrind",
        "--collect-atstart=no",
        f"--toggle-collect={REGION_FUNCTION}",
        f"--dump-after={REGION_FUNCTION}",
        f"--callgrind-out-file={out_file}",
        str(program),
        *args,
    ]


def _function_name(name: str) -> str:
    """Callgrind's name in the plugin's vocabulary: no symbol version, no recursion level."""
    if _HEX_NAME.match(name):
        return NO_SYMBOL
    return _SUFFIX.sub("", name, count=1) or name


def parse_part(text: str, source: str = "callgrind output") -> Part:
    """Self cost (event ``Ir``) per function of one part in callgrind's format.

    Reads ``ob=``/``fn=`` (and the ``cob=``/``cfn=`` that define compressed
    names), skips the inclusive cost line after each ``calls=``, and checks the
    self costs against the part's ``summary:``/``totals:``.

    Raises:
        CountError: no ``Ir`` event, a malformed line, or costs that do not add
            up to the summary (``source`` names the file).
    """
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    current = {"ob": UNKNOWN, "fn": UNKNOWN}
    positions = 1
    event = -1
    summary: int | None = None
    functions: dict[tuple[str, str], int] = {}
    skip_next = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        head = line[0]
        if head.isdigit() or head in "+-*":
            if skip_next:
                skip_next = False
                continue
            fields = line.split()
            try:
                cost = int(fields[positions + event]) if len(fields) > positions + event else 0
            except ValueError:
                raise CountError(f"{source} line {lineno}: malformed cost line {line!r}") from None
            key = (current["ob"], _function_name(current["fn"]))
            functions[key] = functions.get(key, 0) + cost
            continue
        key_name, sep, value = line.partition("=")
        if sep and key_name in ("ob", "fn", "cob", "cfn"):
            kind = key_name[-2:]
            m = _NAMED.match(value)
            if m:
                if m.group(2) is not None:
                    names[kind][m.group(1)] = m.group(2)
                name = names[kind].get(m.group(1))
                if name is None:
                    raise CountError(f"{source} line {lineno}: undefined name {value!r}")
            else:
                name = value
            if key_name in ("ob", "fn"):
                current[key_name] = name
            continue
        if sep and key_name == "calls":
            skip_next = True
            continue
        tag, colon, rest = line.partition(":")
        if not colon:
            continue
        if tag == "positions":
            positions = len(rest.split())
        elif tag == "events":
            events = rest.split()
            if "Ir" not in events:
                raise CountError(f"{source}: no Ir event ({rest.strip()!r})")
            event = events.index("Ir")
        elif tag in ("summary", "totals") and summary is None:
            summary = int(rest.split()[max(event, 0)])
    total = sum(functions.values())
    if summary is None or summary != total:
        raise CountError(f"{source}: self costs add up to {total}, its summary says {summary}")
    return Part(total, {k: n for k, n in functions.items() if n})


def read_parts(out_file: Path) -> list[Part]:
    """The parts ``out_file.1``, ``out_file.2``, … in order (stops at the first missing).

    Raises:
        CountError: a part cannot be read or parsed.
    """
    parts: list[Part] = []
    while True:
        path = Path(f"{out_file}.{len(parts) + 1}")
        if not path.exists():
            return parts
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CountError(f"{path}: {exc.strerror}") from exc
        parts.append(parse_part(text, str(path)))


def valgrind_version(valgrind: str = VALGRIND) -> str:
    """``valgrind --version`` (``valgrind-3.24.0``).

    Raises:
        CountError: valgrind is not installed (the callgrind layer has it).
    """
    try:
        done = subprocess.run(
            [valgrind, "--version"], capture_output=True, text=True, check=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise CountError(
            f"--callgrind needs {valgrind} (the callgrind layer over the counting image) ({exc})"
        ) from exc
    return done.stdout.strip()


def run_callgrind(program: Path, args: Sequence[str], work_dir: Path) -> tuple[str, list[Part]]:
    """Run ``program args`` under callgrind; its stdout and one :class:`Part` per block.

    Raises:
        CountError: valgrind or the driver fails (the message has the end of its stderr).
    """
    out_file = work_dir / OUT_NAME
    done = subprocess.run(
        callgrind_command(out_file, program, args),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.splitlines()[-10:])
        raise CountError(f"callgrind run of {program} exited {done.returncode}: {tail}")
    return done.stdout, canonical(read_parts(out_file))


def canonical(parts: Sequence[Part]) -> list[Part]:
    """``parts`` keyed as the plugin keys its attribution: ``(library file name, function)``.

    An alias (glibc's ``free`` for ``__libc_free``) becomes the name
    ``count_symbols`` keeps for the same range of the same ELF table
    (:attr:`count_symbols.ElfSymbols.aliases`); a file that cannot be read keeps
    callgrind's names.
    """
    tables: dict[str, Mapping[str, str]] = {}
    for path in {ob for part in parts for ob, _ in part.functions}:
        try:
            tables[path] = count_symbols.read_elf(Path(path)).aliases
        except (OSError, ValueError):
            tables[path] = {}
    out: list[Part] = []
    for part in parts:
        functions: dict[tuple[str, str], int] = {}
        for (path, function), n in part.functions.items():
            key = (Path(path).name, tables[path].get(function, function))
            functions[key] = functions.get(key, 0) + n
        out.append(Part(part.total, functions))
    return out


def grouped(functions: Mapping[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """Merge the code no symbol names into one ``(library, "(no symbol)")`` entry.

    The plugin says ``(no symbol) after F`` (the nearest exported function before
    it), callgrind an address; both mean "in this library, outside every symbol"."""
    out: dict[tuple[str, str], int] = {}
    for (library, function), n in functions.items():
        name = NO_SYMBOL if function.startswith(NO_SYMBOL) else function
        out[(library, name)] = out.get((library, name), 0) + n
    return out


def per_library(functions: Mapping[tuple[str, str], int], ops: int) -> dict[str, float]:
    """Instructions per operation of each library over ``ops`` operations, largest first."""
    out: dict[str, int] = {}
    for (library, _), n in functions.items():
        out[library] = out.get(library, 0) + n
    return {lib: n / ops for lib, n in sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))}
