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

An address inside a mapped file but in no function symbol's range is
attributed to the library with :data:`NO_SYMBOL` (a stripped library's
internal functions), followed by ``after <name>`` when a function of the file
starts before it (static functions are placed beside their compilation unit's
exported ones, so this says where, without claiming a name); an address in
no mapped file to :data:`UNKNOWN`.
Standard library only (runs under the image's ``python3``, in the container
whose files were counted).
"""

from __future__ import annotations

import bisect
import itertools
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
_STT_FUNC = 2
_STT_GNU_IFUNC = 10
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
    ``table``: ``symtab``, ``dynsym`` or ``none`` (which table named them).
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
        """The function that starts last at or before ``vaddr`` (None: none does)."""
        i = bisect.bisect_right(self.starts, vaddr) - 1
        return self.names[i] if i >= 0 else None

    def vaddr_of(self, offset: int) -> int | None:
        """The ELF virtual address of file ``offset`` (None: in no ``PT_LOAD``)."""
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_offset <= offset < p_offset + p_filesz:
                return offset - p_offset + p_vaddr
        return None


def functions_from(
    symbols: Iterable[tuple[str, int, int]],
    loads: Sequence[tuple[int, int, int]] = (),
    table: str = "symtab",
) -> ElfSymbols:
    """An :class:`ElfSymbols` from ``(name, start, size)`` function symbols.

    Zero-sized symbols and duplicates of a range are dropped (the first name is kept).
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
    )


def read_elf(path: Path) -> ElfSymbols:
    """Read the ``PT_LOAD`` segments and function symbols of an ELF file.

    Little- and big-endian, 32- and 64-bit. ``.symtab`` is used when present
    (unstripped), else ``.dynsym``; ARM Thumb function addresses lose their
    low bit.

    Raises:
        ValueError: not an ELF file or truncated (the message names ``path``).
        OSError: unreadable.
    """
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 52:
        raise ValueError(f"{path}: not an ELF file")
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    try:
        if wide:
            (machine,) = struct.unpack_from(end + "H", data, 18)
            phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
        else:
            (machine,) = struct.unpack_from(end + "H", data, 18)
            phoff, shoff = struct.unpack_from(end + "II", data, 28)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 42)
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
        sections = []
        for k in range(shnum):
            at = shoff + k * shentsize
            if wide:
                _, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize = (
                    struct.unpack_from(end + "IIQQQQIIQQ", data, at)
                )
            else:
                _, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize = (
                    struct.unpack_from(end + "IIIIIIIIII", data, at)
                )
            sections.append((sh_type, sh_offset, sh_size, sh_link, sh_entsize))
        table = "none"
        chosen = None
        for kind, name in ((_SHT_SYMTAB, "symtab"), (_SHT_DYNSYM, "dynsym")):
            chosen = next((s for s in sections if s[0] == kind), None)
            if chosen is not None:
                table = name
                break
        symbols: list[tuple[str, int, int]] = []
        if chosen is not None:
            _, sym_off, sym_size, link, entsize = chosen
            str_off = sections[link][1]
            for k in range(sym_size // max(entsize, 1)):
                at = sym_off + k * entsize
                if wide:
                    st_name, st_info, _, _, st_value, st_size = struct.unpack_from(
                        end + "IBBHQQ", data, at
                    )
                else:
                    st_name, st_value, st_size, st_info, _, _ = struct.unpack_from(
                        end + "IIIBBH", data, at
                    )
                if st_info & 0xF not in (_STT_FUNC, _STT_GNU_IFUNC) or st_value == 0:
                    continue
                stop = data.index(b"\0", str_off + st_name)
                name = data[str_off + st_name : stop].decode("utf-8", "replace")
                if machine == _EM_ARM:
                    st_value &= ~1
                symbols.append((name, st_value, st_size))
    except (struct.error, IndexError, ValueError) as exc:
        raise ValueError(f"{path}: truncated or malformed ELF file ({exc})") from exc
    return functions_from(symbols, loads, table)


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
) -> tuple[dict[K, dict[tuple[str, str], int]], dict[str, str]]:
    """Attribute each driver block (the k-th key = plugin block seq k) to functions.

    Returns:
        ({block key: {(library, function): instructions}}, {library: symbol
        table used}); both empty when the plugin wrote no attribution (API >= 2).
    """
    if not tbs or guest_base is None:
        return {}, {}
    symbolizer = Symbolizer(maps, guest_base)
    out = {key: symbolizer.attribute(tbs.get(k, {})) for k, key in enumerate(keys)}
    return out, dict(sorted(symbolizer.tables.items()))
