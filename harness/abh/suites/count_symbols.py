"""Where a block's instructions went: guest addresses -> (library, function).

The counting plugin (``images/counter/archbench_count.c``, plugin API 1)
writes, per marked block, the instructions executed from each translation
block's start address (``tb`` lines), and once the host's ``/proc/self/maps``
of the QEMU process (``map`` lines) with ``guest_base`` (``base``). In
qemu-user the guest's files are mapped into that process with their own
paths, so a guest address ``a`` lies in the file mapped at host
``a + guest_base``; its file offset gives, through the file's ``PT_LOAD``
program headers, the ELF virtual address that the file's symbol tables
(``.symtab`` when the file has one, else the exported ``.dynsym``) name.

A function's range is its symbol's ``[st_value, st_value + st_size)``. In a full
``.symtab`` (an unstripped file or a symbol file: every function of the file is in it),
hand-written assembly adds what a compiler's symbols never lack, as ``perf`` and
``addr2line``-like tools read it (:func:`function_ranges`): a function symbol without a
size (``.type`` but no ``.size``, libgcrypt's amd64 SHA-2/AES code) and an untyped code
label without a ``.type`` (libgcrypt's ``_gcry_mpih_*``; not ``.``/``$`` assembler labels
or ARM/RISC-V mapping symbols) reach to the next function symbol's start in the same
section, or the section's end; a sizeless symbol inside a sized function's range is a
label of that function and names nothing of its own. In ``.dynsym`` (a stripped file's
exported functions only) a sizeless symbol stays without a range: the next exported
function may be far beyond internal ones it would wrongly swallow.

An address inside a mapped file but in no function's range (a stripped library's
internal functions, PLT stubs, alignment padding after a sized function) is
attributed to the library with :data:`NO_SYMBOL`, followed by ``after <name>`` when
a function of the same code section starts before it (static functions are placed beside their
compilation unit's exported ones, so this says where, without claiming a name); an
address in no mapped file to :data:`UNKNOWN`.
Standard library only (runs under the image's ``python3``, in the container
whose files were counted).
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import json
import struct
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

NO_SYMBOL = "(no symbol)"
"""Function name of an address in a library but in no function symbol's range."""
UNKNOWN = "(unknown)"
"""Library (and function) of an address in no file-backed mapping (vDSO, JIT)."""
OTHER = "(other functions)"
"""Function name of the remainder :func:`top_functions` folds together."""

_SHT_SYMTAB = 2
_SHT_DYNSYM = 11
_PT_LOAD = 1
_STT_NOTYPE = 0
_STT_FUNC = 2
_STT_GNU_IFUNC = 10
_SHN_LORESERVE = 0xFF00
_EM_ARM = 40


@dataclass(frozen=True)
class MapEntry:
    """One file-backed mapping of the QEMU process: host ``[lo, hi)``, file offset, path."""

    lo: int
    hi: int
    offset: int
    path: str


@dataclass(frozen=True)
class ElfSymbols:
    """A file's loadable segments and function ranges (ELF virtual addresses).

    ``loads``: ``(p_offset, p_vaddr, p_filesz)`` per ``PT_LOAD``; ``starts``,
    ``ends``, ``names``: function ``[start, end)`` ranges sorted by start;
    ``reach``: the largest end among the first i + 1 ranges (so a lookup stops
    as soon as no earlier range can hold the address);
    ``table``: ``symtab``, ``dynsym`` or ``none`` (which table named them);
    ``code``: the executable sections' ``(address, end)``, by address (empty: unknown).
    """

    loads: tuple[tuple[int, int, int], ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    names: tuple[str, ...]
    table: str
    reach: tuple[int, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Every function symbol's name -> the name this table keeps for its range
    (aliases such as glibc's ``free``/``__libc_free`` share one range)."""
    code: tuple[tuple[int, int], ...] = ()

    def function(self, vaddr: int) -> str | None:
        """The function whose range holds ``vaddr``, or None (the innermost by start)."""
        i = bisect.bisect_right(self.starts, vaddr) - 1
        # Ranges may nest or overlap (aliases): look back while one still can hold it.
        while i >= 0 and self.reach[i] > vaddr:
            if vaddr < self.ends[i]:
                return self.names[i]
            i -= 1
        return None

    def starting_at(self, vaddr: int) -> str | None:
        """The function whose first instruction is at ``vaddr`` (None: none starts there)."""
        i = bisect.bisect_left(self.starts, vaddr)
        return self.names[i] if i < len(self.starts) and self.starts[i] == vaddr else None

    def nearest_before(self, vaddr: int) -> str | None:
        """The function that starts last at or before ``vaddr`` in the same code section
        (None: none does; PLT stubs are not "after" ``.init``'s ``_init``). Without
        :attr:`code`, or for an address in no code section, in any section."""
        i = bisect.bisect_right(self.starts, vaddr) - 1
        k = bisect.bisect_right(self.code, (vaddr, 1 << 64)) - 1
        if i >= 0 and k >= 0 and vaddr < self.code[k][1] and self.starts[i] < self.code[k][0]:
            return None
        return self.names[i] if i >= 0 else None

    def vaddr_of(self, offset: int) -> int | None:
        """The ELF virtual address of file ``offset`` (None: in no ``PT_LOAD``)."""
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_offset <= offset < p_offset + p_filesz:
                return offset - p_offset + p_vaddr
        return None


@dataclass(frozen=True)
class FunctionSymbol:
    """One candidate function symbol of a ``.symtab``: ``name``, ``start`` (ELF virtual
    address), ``size`` (``st_size``, bytes; 0: the assembler was given no ``.size``),
    ``section`` (``st_shndx``) and ``typed`` (``STT_FUNC``/``STT_GNU_IFUNC``; False: an
    untyped label in a code section)."""

    name: str
    start: int
    size: int
    section: int
    typed: bool = True


def function_ranges(
    symbols: Iterable[FunctionSymbol], sections: Mapping[int, tuple[int, int]]
) -> list[tuple[str, int, int]]:
    """``(name, start, size)`` ranges of a full symbol table's function symbols.

    ``sections``: ``{section index: (address, end)}`` of the code sections. A sized symbol
    keeps its size. A sizeless one (hand-written assembly without ``.size``) starting
    where a sized one starts is its alias (same range); starting strictly inside a sized
    one's range, a label of it (dropped); otherwise it reaches to the next start of any
    kept symbol of its section, or the section's end (dropped when its section is not
    in ``sections``). Typed symbols come before untyped ones, so an alias range keeps a
    typed name (:func:`functions_from` keeps the first name of a range). Never more
    than the section: no range crosses into another section, PLT or padding at a
    section's end.
    """
    ordered = sorted(symbols, key=lambda s: not s.typed)
    sized = sorted({(s.start, s.start + s.size) for s in ordered if s.size > 0})
    sized_starts = [a for a, _ in sized]
    reach = list(itertools.accumulate((e for _, e in sized), max))

    def inside_sized(at: int) -> tuple[int, int] | None:
        """The sized range starting exactly at ``at``, else one holding it, else None."""
        i = bisect.bisect_right(sized_starts, at) - 1
        if i >= 0 and sized_starts[i] == at:
            return sized[i]
        while i >= 0 and reach[i] > at:
            if at < sized[i][1]:
                return sized[i]
            i -= 1
        return None

    starts: dict[int, list[int]] = {}
    bare: list[FunctionSymbol] = []
    out: list[tuple[str, int, int]] = []
    for s in ordered:
        if s.size > 0:
            out.append((s.name, s.start, s.size))
            starts.setdefault(s.section, []).append(s.start)
            continue
        holder = inside_sized(s.start)
        if holder is None:
            bare.append(s)
            starts.setdefault(s.section, []).append(s.start)
        elif holder[0] == s.start:
            out.append((s.name, s.start, holder[1] - holder[0]))
    by_section = {k: sorted(set(v)) for k, v in starts.items()}
    for s in bare:
        bounds = sections.get(s.section)
        if bounds is None or not bounds[0] <= s.start < bounds[1]:
            continue
        later = by_section[s.section]
        j = bisect.bisect_right(later, s.start)
        end = later[j] if j < len(later) and later[j] < bounds[1] else bounds[1]
        out.append((s.name, s.start, end - s.start))
    return out


def functions_from(
    symbols: Iterable[tuple[str, int, int]],
    loads: Sequence[tuple[int, int, int]] = (),
    table: str = "symtab",
    code: Iterable[tuple[int, int]] = (),
) -> ElfSymbols:
    """An :class:`ElfSymbols` from ``(name, start, size)`` function symbols.

    Zero-sized symbols and duplicates of a range are dropped (the first name is kept);
    ``code``: the executable sections' ``(address, end)``.
    """
    seen: dict[tuple[int, int], str] = {}
    aliases: dict[str, str] = {}
    for name, start, size in symbols:
        if size > 0 and name:
            aliases.setdefault(name, seen.setdefault((start, start + size), name))
    ordered = sorted(seen.items())
    ends = [e for (_, e), _ in ordered]
    return ElfSymbols(
        loads=tuple(loads),
        starts=tuple(s for (s, _), _ in ordered),
        ends=tuple(ends),
        names=tuple(n for _, n in ordered),
        table=table,
        reach=tuple(itertools.accumulate(ends, max)),
        aliases=aliases,
        code=tuple(sorted(code)),
    )


_SHF_EXECINSTR = 0x4
_SHT_NOBITS = 8
_SHT_NOTE = 7
_NT_GNU_BUILD_ID = 3


@dataclass(frozen=True)
class Section:
    """One ELF section header: ``name`` (from ``.shstrtab``), type, flags, address,
    file offset, size, ``link`` and entry size."""

    name: str
    kind: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True)
class ElfLayout:
    """What :func:`parse_elf` reads of a file: machine, class (``wide``: 64-bit),
    byte order (``end``: ``<`` or ``>``), ``PT_LOAD`` segments ``(p_offset, p_vaddr,
    p_filesz)`` and section headers."""

    data: bytes
    machine: int
    wide: bool
    end: str
    loads: tuple[tuple[int, int, int], ...]
    sections: tuple[Section, ...]


def parse_elf(data: bytes, path: Path | str = "<bytes>") -> ElfLayout:
    """Parse an ELF file's headers (little- and big-endian, 32- and 64-bit).

    Raises:
        ValueError: not an ELF file, truncated or malformed (the message names ``path``).
    """
    if data[:4] != b"\x7fELF" or len(data) < 52:
        raise ValueError(f"{path}: not an ELF file")
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    try:
        if wide:
            (machine,) = struct.unpack_from(end + "H", data, 18)
            phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
            phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
                end + "HHHHH", data, 54
            )
        else:
            (machine,) = struct.unpack_from(end + "H", data, 18)
            phoff, shoff = struct.unpack_from(end + "II", data, 28)
            phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
                end + "HHHHH", data, 42
            )
        loads = []
        for k in range(phnum):
            at = phoff + k * phentsize
            if wide:
                p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
                    end + "IIQQQQ", data, at
                )
            else:
                p_type, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIIII", data, at)
            if p_type == _PT_LOAD:
                loads.append((p_offset, p_vaddr, p_filesz))
        raw = []
        for k in range(shnum):
            at = shoff + k * shentsize
            if wide:
                fields = struct.unpack_from(end + "IIQQQQIIQQ", data, at)
            else:
                fields = struct.unpack_from(end + "IIIIIIIIII", data, at)
            raw.append(fields)
        names_at = raw[shstrndx][4] if 0 < shstrndx < len(raw) else None
        sections = []
        for sh_name, sh_type, flags, addr, sh_offset, sh_size, sh_link, _, _, entsize in raw:
            name = ""
            if names_at is not None:
                stop = data.index(b"\0", names_at + sh_name)
                name = data[names_at + sh_name : stop].decode("utf-8", "replace")
            sections.append(
                Section(name, sh_type, flags, addr, sh_offset, sh_size, sh_link, entsize)
            )
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ValueError(f"{path}: truncated or malformed ELF file ({exc})") from exc
    return ElfLayout(data, machine, wide, end, tuple(loads), tuple(sections))


def _label(name: str) -> bool:
    """An assembler-local label (``.L…``, ``._mainloop``) or an ARM/AArch64/RISC-V mapping
    symbol (``$a``, ``$t``, ``$d``, ``$x``): a place in code, not a function."""
    return not name or name[0] in ".$"


def _function_symbols(elf: ElfLayout, kind: int) -> list[FunctionSymbol] | None:
    """The function symbols of the first section of type ``kind`` (None: there is none).

    ``STT_FUNC``/``STT_GNU_IFUNC`` symbols; for ``.symtab`` also untyped (``STT_NOTYPE``)
    ones defined in a code section whose name is no assembler label (:func:`_label`).
    """
    chosen = next((s for s in elf.sections if s.kind == kind), None)
    if chosen is None:
        return None
    data, end, wide = elf.data, elf.end, elf.wide
    str_off = elf.sections[chosen.link].offset
    symbols: list[FunctionSymbol] = []
    for k in range(chosen.size // max(chosen.entsize, 1)):
        at = chosen.offset + k * chosen.entsize
        if wide:
            st_name, st_info, _, shndx, st_value, st_size = struct.unpack_from(
                end + "IBBHQQ", data, at
            )
        else:
            st_name, st_value, st_size, st_info, _, shndx = struct.unpack_from(
                end + "IIIBBH", data, at
            )
        typed = st_info & 0xF in (_STT_FUNC, _STT_GNU_IFUNC)
        untyped = (
            kind == _SHT_SYMTAB
            and st_info & 0xF == _STT_NOTYPE
            and 0 < shndx < min(len(elf.sections), _SHN_LORESERVE)
            and bool(elf.sections[shndx].flags & _SHF_EXECINSTR)
        )
        if not (typed or untyped) or st_value == 0:
            continue
        stop = data.index(b"\0", str_off + st_name)
        name = data[str_off + st_name : stop].decode("utf-8", "replace")
        if untyped and _label(name):
            continue
        if elf.machine == _EM_ARM:
            st_value &= ~1
        symbols.append(FunctionSymbol(name, st_value, st_size, shndx, typed))
    return symbols


def _code_bounds(elf: ElfLayout) -> dict[int, tuple[int, int]]:
    """``{section index: (address, end)}`` of the executable sections."""
    return {
        k: (s.addr, s.addr + s.size)
        for k, s in enumerate(elf.sections)
        if s.flags & _SHF_EXECINSTR and s.size > 0
    }


def symbols_of(elf: ElfLayout, path: Path | str = "<bytes>") -> ElfSymbols:
    """The function ranges of a parsed file: ``.symtab`` when it has one, else ``.dynsym``.

    ``.symtab`` ranges follow :func:`function_ranges` (sizeless assembly symbols reach to
    the next symbol); ``.dynsym`` keeps sized function symbols only.

    Raises:
        ValueError: a symbol table is truncated or malformed (the message names ``path``).
    """
    try:
        bounds = _code_bounds(elf)
        full = _function_symbols(elf, _SHT_SYMTAB)
        if full is not None:
            ranges = function_ranges(full, bounds)
            return functions_from(ranges, elf.loads, "symtab", bounds.values())
        exported = _function_symbols(elf, _SHT_DYNSYM)
        if exported is not None:
            return functions_from(
                ((s.name, s.start, s.size) for s in exported),
                elf.loads,
                "dynsym",
                bounds.values(),
            )
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ValueError(f"{path}: truncated or malformed ELF file ({exc})") from exc
    return functions_from([], elf.loads, "none", _code_bounds(elf).values())


def read_elf(path: Path) -> ElfSymbols:
    """Read the ``PT_LOAD`` segments and function symbols of an ELF file.

    Little- and big-endian, 32- and 64-bit. ``.symtab`` is used when present
    (unstripped), else ``.dynsym``; ARM Thumb function addresses lose their
    low bit.

    Raises:
        ValueError: not an ELF file or truncated (the message names ``path``).
        OSError: unreadable.
    """
    return symbols_of(parse_elf(path.read_bytes(), path), path)


def code_sections(elf: ElfLayout) -> tuple[tuple[str, int, int], ...]:
    """``(name, address, size)`` of every executable section, by address."""
    return tuple(
        sorted(
            ((s.name, s.addr, s.size) for s in elf.sections if s.flags & _SHF_EXECINSTR),
            key=lambda t: (t[1], t[0]),
        )
    )


def code_digest(elf: ElfLayout) -> str | None:
    """sha256 over every executable section's name, address, size and bytes, by address.

    The code a library runs, and where: a rebuild whose instructions or layout differ in
    one byte gets another digest, while symbol tables, debug information and notes (which
    ``strip`` removes) do not enter it. None when an executable section has no bytes in
    the file (a separate debug file, whose code sections are ``NOBITS``) or there is none.
    """
    executable = [s for s in elf.sections if s.flags & _SHF_EXECINSTR]
    if not executable or any(s.kind == _SHT_NOBITS for s in executable):
        return None
    h = hashlib.sha256()
    for s in sorted(executable, key=lambda s: (s.addr, s.name)):
        if s.offset + s.size > len(elf.data):
            return None
        h.update(f"{s.name}\0{s.addr:x}\0{s.size:x}\0".encode())
        h.update(elf.data[s.offset : s.offset + s.size])
    return h.hexdigest()


def build_id(elf: ElfLayout) -> str | None:
    """The GNU build-id (hex) from the file's ``SHT_NOTE`` sections, or None."""
    for s in elf.sections:
        if s.kind != _SHT_NOTE:
            continue
        at, stop = s.offset, min(s.offset + s.size, len(elf.data))
        while at + 12 <= stop:
            namesz, descsz, kind = struct.unpack_from(elf.end + "III", elf.data, at)
            name_at = at + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if kind == _NT_GNU_BUILD_ID and elf.data[name_at : name_at + namesz] == b"GNU\0":
                return elf.data[desc_at : desc_at + descsz].hex() or None
            at = desc_at + ((descsz + 3) & ~3)
    return None


SYMBOLS_DIR_NAME = "symbols"
"""The symbol files' folder in the counting layer's counter directory."""
SYMBOLS_MANIFEST = "symbols.json"
"""Its manifest: per symbol file, where it came from (source package, version, how built)."""


@dataclass(frozen=True)
class SymbolFileCheck:
    """What became of a symbol file offered for a counted library.

    ``status``: ``used`` (its code matches the installed library's, so its ``.symtab``
    names the library's functions), ``refused`` (the library keeps its own table and
    ``(no symbol) after`` names) or ``absent`` (a stripped library the counting layer
    has no symbol file for); ``file``: the symbol file's path; ``reason``: why, in
    words; ``match``: ``code`` (the executable sections are byte-identical) or
    ``build-id`` (a separate debug file, which carries no code: the build-id and the code
    sections' names, addresses and sizes agree); ``origin``: the manifest's entry.
    """

    library: str
    status: str
    file: str
    reason: str
    match: str = ""
    origin: Mapping[str, object] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """The provenance entry stored in ``counting.symbol_files``."""
        out: dict[str, object] = {"status": self.status, "reason": self.reason}
        if self.file:
            out["file"] = self.file
        if self.match:
            out["match"] = self.match
        if self.origin:
            out["origin"] = dict(self.origin)
        return out


def check_symbol_file(
    installed: ElfLayout, candidate: ElfLayout, library: str, file: str
) -> SymbolFileCheck:
    """Decide whether ``candidate``'s symbols may name ``installed``'s functions.

    Used only when the code matches exactly: the executable sections' bytes
    (:func:`code_digest`), or, for a separate debug file without code, the build-id and
    the code sections' layout (:func:`code_sections`). A candidate without a ``.symtab``
    names nothing more than the library's own table and is refused too.
    """

    def refused(reason: str) -> SymbolFileCheck:
        return SymbolFileCheck(library, "refused", file, reason)

    if not any(s.kind == _SHT_SYMTAB for s in candidate.sections):
        return refused("it has no .symtab")
    if installed.machine != candidate.machine or installed.wide != candidate.wide:
        return refused("it is for another machine or ELF class")
    if code_sections(installed) != code_sections(candidate):
        return refused(
            "its code sections have other addresses or sizes than the installed library's"
        )
    want = code_digest(installed)
    got = code_digest(candidate)
    if want is not None and got is not None:
        if want != got:
            return refused(
                f"its code differs from the installed library's (sha256 of the code "
                f"sections {got[:16]} vs {want[:16]})"
            )
        return SymbolFileCheck(
            library, "used", file, f"code sections identical (sha256 {want[:16]})", "code"
        )
    ours, theirs = build_id(installed), build_id(candidate)
    if ours is None or theirs is None:
        return refused("it carries no code to compare and one of the two has no build-id")
    if ours != theirs:
        return refused(f"build-id {theirs} is not the installed library's {ours}")
    return SymbolFileCheck(
        library, "used", file, f"build-id {ours} and code section layout identical", "build-id"
    )


@dataclass
class SymbolStore:
    """Symbol files for Debian's stripped libraries, from the counting layer.

    ``directory`` holds unstripped rebuilds under the installed file's name
    (``libgcrypt.so.20.4.3``) and separate debug files under
    ``.build-id/<xx>/<rest>.debug`` (Debian's ``-dbg`` packages), with
    :data:`SYMBOLS_MANIFEST` naming each one's origin. A library whose candidate
    is refused keeps its own table; ``checks`` records every decision.
    """

    directory: Path
    checks: dict[str, SymbolFileCheck] = field(default_factory=dict)
    _origins: dict[str, Mapping[str, object]] | None = None

    def _manifest(self) -> dict[str, object]:
        try:
            loaded = json.loads((self.directory / SYMBOLS_MANIFEST).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    def origins(self) -> Mapping[str, Mapping[str, object]]:
        """The manifest's ``{file relative to the directory: origin}`` ({} without one)."""
        if self._origins is None:
            files = self._manifest().get("files", {})
            self._origins = (
                {str(k): v for k, v in files.items() if isinstance(v, dict)}
                if isinstance(files, dict)
                else {}
            )
        return self._origins

    def summary(self) -> dict[str, object]:
        """What the counting layer offered: ``present`` (a symbol folder is there),
        ``image`` (the symbols image it came from) and ``failed`` (packages that could
        not be rebuilt, with why), for ``counting.symbol_store``."""
        meta = self._manifest()
        failed = meta.get("failed", [])
        return {
            "present": self.directory.is_dir(),
            "image": str(meta.get("image", "")),
            "failed": failed if isinstance(failed, list) else [],
        }

    def candidate(self, path: Path, installed: ElfLayout) -> Path | None:
        """The symbol file offered for ``path``: by file name, else by build-id."""
        by_name = self.directory / path.name
        if by_name.is_file():
            return by_name
        bid = build_id(installed)
        if bid is not None and len(bid) > 2:
            by_id = self.directory / ".build-id" / bid[:2] / f"{bid[2:]}.debug"
            if by_id.is_file():
                return by_id
        return None

    def symbols(self, path: Path, installed: ElfLayout) -> ElfSymbols | None:
        """The matching symbol file's functions with ``installed``'s segments, or None
        (no candidate, or refused: see :attr:`checks`)."""
        found = self.candidate(path, installed)
        if found is None:
            if self.directory.is_dir() and not any(
                s.kind == _SHT_SYMTAB for s in installed.sections
            ):
                self.checks[path.name] = SymbolFileCheck(
                    path.name, "absent", "", "no symbol file for this stripped library"
                )
            return None
        rel = str(found.relative_to(self.directory))
        try:
            candidate = parse_elf(found.read_bytes(), found)
            check = check_symbol_file(installed, candidate, path.name, rel)
            syms = symbols_of(candidate, found) if check.status == "used" else None
        except (OSError, ValueError) as exc:
            check, syms = SymbolFileCheck(path.name, "refused", rel, f"unreadable: {exc}"), None
        self.checks[path.name] = dataclasses.replace(check, origin=self.origins().get(rel, {}))
        if syms is None:
            return None
        return dataclasses.replace(syms, loads=installed.loads, table="symbol file")

    def reader(self, path: Path) -> ElfSymbols:
        """A :class:`Symbolizer` reader: the matching symbol file's functions, else the
        installed file's own (:func:`read_elf`).

        Raises:
            ValueError, OSError: as :func:`read_elf`, for the installed file.
        """
        installed = parse_elf(path.read_bytes(), path)
        return self.symbols(path, installed) or symbols_of(installed, path)

    def provenance(self) -> dict[str, dict[str, object]]:
        """``{library: check}`` for ``counting.symbol_files``, by library."""
        return {lib: self.checks[lib].as_json() for lib in sorted(self.checks)}


@dataclass
class Symbolizer:
    """Guest address -> ``(library, function)`` through the maps and the files' symbols.

    ``maps``: the plugin's file-backed mappings (host addresses);
    ``guest_base``: host - guest address; ``reader``: how a file's symbols are
    read (:func:`read_elf`; a file that cannot be read is a library without symbols).
    ``tables`` records, per library seen, which symbol table named its functions.
    """

    maps: Sequence[MapEntry]
    guest_base: int
    reader: Callable[[Path], ElfSymbols] = read_elf
    tables: dict[str, str] = field(default_factory=dict)
    _files: dict[str, ElfSymbols | None] = field(default_factory=dict)
    _los: list[int] = field(default_factory=list)
    _sorted: list[MapEntry] = field(default_factory=list)
    _cache: dict[int, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._sorted = sorted(self.maps, key=lambda m: m.lo)
        self._los = [m.lo for m in self._sorted]

    def _symbols(self, path: str) -> ElfSymbols | None:
        if path not in self._files:
            try:
                syms = self.reader(Path(path))
            except (OSError, ValueError):
                syms = None
            self._files[path] = syms
            self.tables[Path(path).name] = syms.table if syms is not None else "unreadable"
        return self._files[path]

    def locate(self, guest_addr: int) -> tuple[str, str]:
        """``(library file name, function)`` of a guest address (see the module doc)."""
        host = (guest_addr + self.guest_base) & 0xFFFFFFFFFFFFFFFF
        i = bisect.bisect_right(self._los, host) - 1
        if i < 0 or not host < self._sorted[i].hi:
            return UNKNOWN, UNKNOWN
        m = self._sorted[i]
        library = Path(m.path).name
        syms = self._symbols(m.path)
        if syms is None:
            return library, NO_SYMBOL
        vaddr = syms.vaddr_of(host - m.lo + m.offset)
        if vaddr is None:
            return library, NO_SYMBOL
        name = syms.function(vaddr)
        if name is not None:
            return library, name
        # A stripped library's internal (static) functions sit beside the
        # exported ones of their compilation unit: name the nearest exported
        # function before the address, clearly marked as no symbol of its own.
        before = syms.nearest_before(vaddr)
        return library, f"{NO_SYMBOL} after {before}" if before else NO_SYMBOL

    def entry(self, guest_addr: int) -> str | None:
        """The function whose first instruction is at guest address ``guest_addr``, or
        None (inside a function, or in no file with symbols)."""
        host = (guest_addr + self.guest_base) & 0xFFFFFFFFFFFFFFFF
        i = bisect.bisect_right(self._los, host) - 1
        if i < 0 or not host < self._sorted[i].hi:
            return None
        m = self._sorted[i]
        syms = self._symbols(m.path)
        vaddr = None if syms is None else syms.vaddr_of(host - m.lo + m.offset)
        return None if syms is None or vaddr is None else syms.starting_at(vaddr)

    def attribute(self, tbs: Mapping[int, int]) -> dict[tuple[str, str], int]:
        """Sum instructions per ``(library, function)`` from ``{guest address: instructions}``."""
        out: dict[tuple[str, str], int] = {}
        for addr, n in tbs.items():
            key = self._cache.get(addr)
            if key is None:
                key = self._cache[addr] = self.locate(addr)
            out[key] = out.get(key, 0) + n
        return out


def merge(parts: Iterable[Mapping[tuple[str, str], int]]) -> dict[tuple[str, str], int]:
    """Sum several blocks' attributions."""
    out: dict[tuple[str, str], int] = {}
    for part in parts:
        for key, n in part.items():
            out[key] = out.get(key, 0) + n
    return out


def top_functions(
    attributed: Mapping[tuple[str, str], int], limit: int, ops: int = 1
) -> list[dict[str, object]]:
    """The ``limit`` largest ``(library, function)`` counts, largest first, and the rest.

    ``ops``: operations the counts cover (blocks x operations per block).

    Returns:
        ``[{"library", "function", "instructions_per_op"}, ...]`` (count / ``ops``);
        when more than ``limit`` functions ran, one last entry ``("", OTHER)``
        holds the others, so the entries always sum to the attributed total / ``ops``.

    Raises:
        ValueError: ``ops`` < 1.
    """
    if ops < 1:
        raise ValueError(f"ops must be >= 1, got {ops}")
    ranked = sorted(attributed.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[dict[str, object]] = [
        {"library": lib, "function": fn, "instructions_per_op": n / ops}
        for (lib, fn), n in ranked[:limit]
    ]
    rest = sum(n for _, n in ranked[limit:])
    if rest:
        out.append({"library": "", "function": OTHER, "instructions_per_op": rest / ops})
    return out


K = TypeVar("K", bound=Hashable)


def attribute_blocks(
    keys: Sequence[K],
    tbs: Mapping[int, Mapping[int, int]],
    maps: Sequence[MapEntry],
    guest_base: int | None,
    store: SymbolStore | None = None,
) -> tuple[dict[K, dict[tuple[str, str], int]], dict[str, str]]:
    """Attribute each driver block (the k-th key = plugin block seq k) to functions.

    ``store``: symbol files for stripped libraries (:class:`SymbolStore`; its
    ``checks`` record which were used or refused), None for the files' own tables.

    Returns:
        ({block key: {(library, function): instructions}}, {library: symbol
        table used}); both empty when the plugin wrote no attribution (API >= 2).
    """
    if not tbs or guest_base is None:
        return {}, {}
    symbolizer = Symbolizer(maps, guest_base, reader=read_elf if store is None else store.reader)
    out = {key: symbolizer.attribute(tbs.get(k, {})) for k, key in enumerate(keys)}
    return out, dict(sorted(symbolizer.tables.items()))
