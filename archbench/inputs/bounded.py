"""Reading untrusted files: bounded bytes, strict UTF-8, bounded YAML and JSON.

Every loader of a user-supplied or stored file (matrix.yml, setup.yml,
results files, ``run.json``) goes through here, so a hostile or broken file
ends in one of our errors naming the file, in bounded time and memory:

* at most ``max_bytes`` are read (:data:`MAX_BYTES`);
* the bytes must be UTF-8 (the error names the byte offset);
* YAML nesting deeper than :data:`MAX_DEPTH` is refused while composing
  (PyYAML's composer recurses: 10 000 ``[`` otherwise end in RecursionError),
  and a document whose nodes, counted with every alias expanded, exceed
  :data:`MAX_NODES` is refused before anything is constructed (the "billion
  laughs" alias bomb: ``iterations: *lol`` is small as a graph but huge once
  a validator walks or prints it);
* JSON nesting is measured by a linear scan before ``json.loads``; ``NaN``
  and ``Infinity`` are refused;
* values quoted in messages are cut by :func:`~archbench.inputs.messages.quote`.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import select
import stat
from pathlib import Path
from typing import Any, Final

import yaml

from archbench.errors import ArchbenchError
from archbench.inputs.messages import CONTROL, neutralise, quote

MAX_BYTES: Final = 64 * 1024 * 1024
"""Default cap on a file's size (results files with raw tool logs reach a few MB)."""
MAX_DEPTH: Final = 64
"""Deepest nesting of mappings/sequences accepted (matrix.yml needs 6)."""
PIPE_WAIT: Final = 30.0
"""Seconds a pipe given as a file (``--matrix <(...)``) may stay silent."""
MAX_NODES: Final = 20_000
"""Most YAML nodes accepted, aliases counted once per use (matrix.yml has ~300)."""


def read_bytes(
    path: Path,
    error: type[ArchbenchError],
    what: str,
    max_bytes: int = MAX_BYTES,
    pipes: bool = False,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes``.

    The file is opened without blocking (``O_NONBLOCK``) and must be a regular
    file once open (``fstat``): a FIFO, a socket or a device named like a results
    file (``x.json``) ends in ``error`` at once instead of blocking forever or
    streaming ``/dev/zero``. A symlink to a regular file is read. At most
    ``max_bytes + 1`` bytes are ever read, in 1 MiB chunks.

    With ``pipes``, an anonymous pipe is read too (``--matrix <(...)``: process
    substitution hands a ``/dev/fd/N`` pipe; ``/dev/stdin`` of ``... |``), once, to its
    end, bounded like a file; one whose writer sends nothing for :data:`PIPE_WAIT`
    seconds is refused, never waited on. A FIFO named in the file system is still
    refused at once (it may have no writer at all).

    Raises:
        error: the file cannot be opened or read, is not a regular file (nor, with
            ``pipes``, a pipe), or is larger than ``max_bytes``; the message names
            ``path`` and ``what``.
    """
    chunks: list[bytes] = []
    size = 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        # A socket cannot be opened at all (ENXIO): say what it is.
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(mode := path.stat().st_mode):
                raise error(
                    f"{path}: cannot read {what}: it is {_file_kind(mode)}, not a regular "
                    "file; move it away"
                ) from exc
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from exc
    try:
        kind = os.fstat(fd).st_mode
        pipe = pipes and stat.S_ISFIFO(kind) and _anonymous_pipe(fd)
        if not stat.S_ISREG(kind) and not pipe:
            raise error(
                f"{path}: cannot read {what}: it is {_file_kind(kind)}, not a regular file; "
                "move it away"
            )
        # In chunks: read(max_bytes + 1) would allocate the whole cap up front.
        while size <= max_bytes:
            if pipe and not select.select([fd], [], [], PIPE_WAIT)[0]:
                raise error(
                    f"{path}: nothing came from the pipe for {PIPE_WAIT:g} s; give {what} as a file"
                )
            try:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            except BlockingIOError:
                continue  # a pipe's writer has not written yet: select again
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if size > max_bytes:
        raise error(f"{path}: {what} is larger than {_size(max_bytes)}; refusing to read it")
    return b"".join(chunks)


def _anonymous_pipe(fd: int) -> bool:
    """True when ``fd`` is a pipe with a writer at its other end from the start (a shell's
    ``<(...)`` or ``|``), not a FIFO named in the file system, which may have no writer
    and would be waited on: Linux names an anonymous pipe ``pipe:[inode]``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:
        return False


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "a special file"


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 4 * 1024 * 1024 else f"{limit // 1024} KiB"


def is_regular(path: Path) -> bool:
    """True when ``path`` is a regular file (a symlink to one counts), without opening it.

    Listing a folder with it keeps FIFOs, sockets and devices named ``*.json`` out of
    what is read; :func:`read_bytes` refuses them again once open.
    """
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def decode(data: bytes, source: str, error: type[ArchbenchError], what: str) -> str:
    """``data`` as strict UTF-8, one leading byte order mark dropped.

    One BOM rule for every file read (YAML and JSON alike, results, manifests, archive
    manifests): a UTF-8 BOM that an editor put first says nothing and is dropped; a
    BOM anywhere else is text.

    Raises:
        error: the bytes are not UTF-8; the message names ``source`` and the offset.
    """
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{source}: {what} is not UTF-8 text (byte {exc.start}: "
            f"{data[exc.start : exc.start + 4]!r}); save it as UTF-8"
        ) from exc


def read_text(
    path: Path, error: type[ArchbenchError], what: str, max_bytes: int = MAX_BYTES
) -> str:
    """:func:`read_bytes` then :func:`decode`: the file as text, or ``error``."""
    return decode(read_bytes(path, error, what, max_bytes), str(path), error, what)


class _Limits(yaml.YAMLError):
    """Raised inside the loader when a document passes a limit (becomes ``error``)."""


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader with duplicate keys refused and nesting and alias expansion bounded."""

    max_depth = MAX_DEPTH
    max_nodes = MAX_NODES

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        self._composed = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # PyYAML's hook
        self._depth += 1
        self._composed += 1
        try:
            if self._composed > self.max_nodes:
                raise _Limits(
                    f"more than {self.max_nodes} values{_where(self.peek_event().start_mark)}; "  # type: ignore[no-untyped-call]
                    "a generated file, not a configuration"
                )
            if self._depth > self.max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _Limits(
                    f"nested deeper than {self.max_depth} levels{_where(mark)}; "
                    "no archbench file needs that"
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self) -> Any:  # PyYAML's hook
        node = self.get_single_node()
        if node is None:
            return None
        _count_expanded(node, self.max_nodes)
        return self.construct_document(node)


def _where(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _count_expanded(root: yaml.Node, limit: int) -> None:
    """Count nodes as if every alias were copied out; stop at ``limit`` (O(limit))."""
    count = 0
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            raise _Limits(
                f"more than {limit} values once aliases (*name) are expanded"
                f"{_where(root.start_mark)}; an alias bomb or a generated file, not a configuration"
            )
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)


def _construct_mapping(loader: BoundedLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping: merge keys (``<<: *base``) applied, then duplicate keys refused.

    A key written twice in the mapping itself is an error; a key of the mapping that
    also comes from a merged one replaces it (what a merge is for), and of several
    merged mappings the first that has a key wins (YAML's merge-key rules).
    """
    own = [(k, v) for k, v in node.value if k.tag != "tag:yaml.org,2002:merge"]
    _refuse_duplicates(loader, own)
    merged = len(node.value) != len(own)
    loader.flatten_mapping(node)  # PyYAML's merge: merged pairs first, then the own ones
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        if key in mapping and not merged:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {quote(key)}", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


def _refuse_duplicates(loader: BoundedLoader, pairs: list[tuple[Any, Any]]) -> None:
    seen: set[Any] = set()
    for key_node, _ in pairs:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {quote(key)}", key_node.start_mark
            )
        seen.add(key)


BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


_TAB_COMMENT: Final = re.compile(r"[ \t]*\t[ \t]*#")


def _tabs_before_comments(text: str) -> str:
    """``text`` with the tabs that separate a comment (``key: 1\t# why``) as spaces.

    YAML lets tabs separate a comment from what precedes it; PyYAML refuses them
    ("found character '\\t' that cannot start any token"). Each such tab becomes one
    space (columns in messages stay right); a ``#`` inside quotes is left alone. Linear
    in the length of ``text``; text without a tab is returned as it is.
    """
    if "\t" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "\t" not in line or "#" not in line:
            continue
        quote_char = ""
        out: list[str] = []
        last = 0
        for m in _TAB_COMMENT.finditer(line):
            # Quotes opened and not closed before the match: the # is text.
            for ch in line[last : m.start()]:
                if quote_char:
                    quote_char = "" if ch == quote_char else quote_char
                elif ch in "'\"":
                    quote_char = ch
            out.append(line[last : m.start()])
            run = m.group()
            out.append(run if quote_char else run.replace("\t", " "))
            last = m.end()
        out.append(line[last:])
        lines[i] = "".join(out)
    return "\n".join(lines)


def load_yaml(text: str, source: str, error: type[ArchbenchError]) -> Any:
    """Parse one YAML document with :class:`BoundedLoader`.

    Raises:
        error: not YAML, a duplicate key, nesting or alias expansion past
            the limits, or a value PyYAML cannot build (an integer of more
            than 4300 digits); the message names ``source``.
    """
    if _flow_depth(text) > MAX_DEPTH:
        # PyYAML's scanner is quadratic in flow nesting ([[[[…): refuse before it runs.
        raise error(f"{source}: refused: nested deeper than {MAX_DEPTH} levels ([ and {{)")
    try:
        loader = BoundedLoader(_tabs_before_comments(text))
        loader.name = source
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except _Limits as exc:
        raise error(f"{source}: refused: {exc}") from None
    except yaml.YAMLError as exc:
        detail = _cut(str(exc)).replace("\n", "\n  ")
        raise error(f"{source}: not valid YAML: {detail}") from None
    except (ValueError, OverflowError, RecursionError) as exc:
        raise error(f"{source}: a value cannot be read: {_cut(str(exc))}") from None


_YAML_FLOW_TOKENS: Final = re.compile(
    r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|\'[^\']*+(?:\'\'[^\']*+)*+\'|(?:^|(?<=\s))#[^\n]*+|[\[\]{}]',
    re.MULTILINE | re.DOTALL,
)


def _flow_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """Deepest ``[``/``{`` nesting of YAML ``text`` outside quotes and comments.

    Stops counting past ``limit``. Brackets inside plain scalars are counted
    too; balanced ones (``http://h/[x]``) add one level only.
    """
    depth = deepest = 0
    for match in _YAML_FLOW_TOKENS.finditer(text):
        bracket = match.group()
        if bracket in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif bracket in ("]", "}"):
            depth = max(0, depth - 1)
    return deepest


# Unrolled and possessive: a (?:a|b)* group over a 60 MB string would grow the regex
# engine's stack per character (minutes and gigabytes); these run in linear time and memory.
_JSON_STRING: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_NOT_BRACKET: Final = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING: Final = frozenset(b"[{")


def _bare(text: str) -> bytes:
    """JSON ``text`` without its strings, as bytes: what is left is structure and numbers
    (anything but ASCII there is no JSON, and is only ever skipped)."""
    return _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass")


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """Deepest nesting of ``[``/``{`` in JSON ``text`` (strings skipped), stops past ``limit``."""
    return _depth(_bare(text), limit)


def _depth(bare: bytes, limit: int = MAX_DEPTH) -> int:
    """:func:`json_depth` of JSON text whose strings are gone (:func:`_bare`): its brackets
    alone (the rest deleted in C), counted in one pass."""
    depth = deepest = 0
    for bracket in bare.translate(None, _NOT_BRACKET):
        if bracket in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a results file may hold")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(
            f"the number {quote(text, 40)} is too large for a float (it would be infinity); "
            "machine-written files hold finite numbers only"
        )
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object: duplicate keys refused, its key and string values cleaned."""
    mapping: dict[str, Any] = {}
    for key, value in pairs:
        clean_key = _clean(key, key)
        if clean_key in mapping:
            raise ValueError(
                f"duplicate key {quote(clean_key, 40)} in one object (the second would "
                "silently win); machine-written files name each key once"
            )
        mapping[clean_key] = _clean(value, clean_key) if isinstance(value, str) else value
    return mapping


def _unique_plain(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """:func:`_unique_keys` of an object whose strings need no cleaning."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        return _unique_keys(pairs)  # raises, naming the duplicate
    return mapping


def _clean_lists(data: Any) -> Any:
    """``data`` with the strings of its lists cleaned as :func:`_unique_keys` cleans objects'.

    Iterative and O(size): objects were cleaned while parsing, lists are not hooked.
    """
    if isinstance(data, str):
        return _clean(data, "<top level>")
    if not isinstance(data, dict | list):
        return data
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        values = node.values() if isinstance(node, dict) else node
        if isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = _clean(value, "a list")
        stack.extend(v for v in values if isinstance(v, dict | list))
    return data


def _clean(text: str, where: str) -> str:
    # One search for the common case: nothing to refuse or escape.
    if _UNSAFE.search(text) is None:
        return text
    if _SURROGATE.search(text):
        raise ValueError(
            f"at {quote(where, 40)}: a lone surrogate (an escape such as \\ud800, half of "
            "a character) cannot be written as UTF-8; fix the file"
        )
    return neutralise(text)


_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_UNSAFE: Final = re.compile(CONTROL.pattern[:-1] + "\ud800-\udfff]")


def _plain(text: str) -> bool:
    """True when no string of the JSON ``text`` can need :func:`_clean`: no character it
    escapes is there raw, nor an escape that may decode to one (``\\uXXXX``, ``\\b``,
    ``\\f``; ``\\n``, ``\\r``, ``\\t`` decode to what is allowed)."""
    return (
        "\\u" not in text
        and "\\b" not in text
        and "\\f" not in text
        and _UNSAFE.search(text) is None
    )


_NUMBER_SHAPE: Final = bytes(
    ord("0") if 48 <= b <= 57 else ord("e") if b in b"eE" else ord("+") if b in b"+-" else 32
    for b in range(256)
)


def _huge_number(bare: bytes) -> bool:
    """True when JSON text without its strings (:func:`_bare`) has a number that may
    overflow a float to infinity, which :func:`_finite` refuses: an exponent of three
    digits or more, or 309 digits in a row. Digits, exponent letters and signs are mapped
    to ``0``, ``e`` and ``+``, everything else to a space (``true`` and ``false`` end in
    ``e ``), and the shapes looked for."""
    shape = bare.translate(_NUMBER_SHAPE)
    return b"e000" in shape or b"e+000" in shape or b"0" * 309 in shape


def load_json(text: str, source: str, error: type[ArchbenchError]) -> Any:
    """Parse machine-written JSON ``text`` strictly, in bounded time and memory.

    Nesting is at most :data:`MAX_DEPTH`; ``NaN``/``Infinity``, numbers that
    overflow to infinity (``1e400``), duplicate keys in one object and lone
    surrogates (``\\ud800``) are refused; control characters in strings (C0 but
    tab, newline and carriage return; DEL, C1, bidirectional overrides) become
    visible escapes (:func:`neutralise`), so no stored text can drive a terminal,
    a table or LaTeX.

    Raises:
        error: not JSON, nested too deeply, or a value that cannot be read;
            the message names ``source`` and, where known, the key.
    """
    bare = _bare(text)
    if _depth(bare) > MAX_DEPTH:
        raise error(f"{source}: refused: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        if _plain(text) and not _huge_number(bare):
            # Nothing to clean and nothing to overflow (most files archbench wrote): the
            # same data, read without a Python call per string and per number (a results
            # file of 50 kB in 1 ms instead of 4).
            return json.loads(
                text, parse_constant=_refuse_constant, object_pairs_hook=_unique_plain
            )
        return _load_checked(text)
    except json.JSONDecodeError as exc:
        raise error(f"{source}: not valid JSON: {_cut(str(exc))}") from None
    except (ValueError, RecursionError) as exc:
        raise error(f"{source}: a value cannot be read: {_cut(str(exc))}") from None


def _load_checked(text: str) -> Any:
    """``text`` parsed with every string cleaned and every float checked (the path of any
    text :func:`load_json` cannot tell needs neither).

    Raises:
        json.JSONDecodeError, ValueError, RecursionError: as :func:`json.loads`, and a
            value that cannot be read.
    """
    data = json.loads(
        text,
        parse_constant=_refuse_constant,
        parse_float=_finite,
        object_pairs_hook=_unique_keys,
    )
    return _clean_lists(data)


def _cut(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"
