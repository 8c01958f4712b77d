"""Namespaces that C++ libraries open and close with macros, so their members get their names.

fmt writes `FMT_BEGIN_NAMESPACE` for `namespace fmt { inline namespace v9 {`, nlohmann
`NLOHMANN_JSON_NAMESPACE_BEGIN`, pybind11 `PYBIND11_NAMESPACE_BEGIN(detail)`. Blanked, such a
line left every member without its namespace: `format_to`, not `fmt::format_to`, so
`repomap symbols fmt::format_to` found nothing. The macros are defined in one header and used in
every other, so the index gathers their definitions from all C++ files first (`definitions`,
merged into a `Table`), and the extractor then writes each use as the namespace it opens, in
the bytes tree-sitter parses (`rewrite`): `namespace fmt {` padded with spaces to the macro's
length, so every offset and line stays where it was.

- An opener's body is `namespace NAME {` items (`inline`, anonymous, or named by a macro call:
  not written, as `fmt::format_to` is how C++ names a member of an inline namespace), with
  ALL_CAPS macros around them left out (`PYBIND11_WARNING_PUSH`). NAME is a word, one of the
  macro's parameters (the use's argument), or an object-like macro of a header that defines
  an opener (`#define PYBIND11_NAMESPACE pybind11 __attribute__(...)`: its first word).
- A closer's body is `}` items (and such macros). Each use closes as many of the braces the
  openers opened, last first, and writes only those that were written.
- A use is rewritten only at a line's start, on one line, and when `namespace a::b {` fits
  in its bytes; otherwise it stays blanked as before, and so does its closer's brace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from .model import Symbol

_IDENT = rb"[A-Za-z_]\w*"
# `#define NAME(params) body`, the body continued by backslashes; comments go first.
_DEFINE = re.compile(
    rb"[ \t]*#[ \t]*define[ \t]+(" + _IDENT + rb")(\([^()\n]*\))?((?:[^\n\\]|\\\r?\n|\\)*)"
)
_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*", re.DOTALL)
_CALL_ARGS = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"  # three levels: __attribute__((x(y)))
_NOISE_MACRO = re.compile(rb"\s*[A-Z][A-Z0-9_]*(?:\s*" + _CALL_ARGS + rb")?(?![\w(])")
_OPEN_ITEM = re.compile(
    rb"\s*(?:(inline\s+)?namespace(?:\s+(" + _IDENT + rb")(\s*" + _CALL_ARGS + rb")?)?"
    rb"(?:\s*(?:__attribute__|[A-Z_][A-Z0-9_]*)\s*" + _CALL_ARGS + rb")?"  # visibility
    rb'|extern\s*"C(?:\+\+)?")\s*\{'  # `extern "C" {`: a brace, no namespace
)
_CLOSE_ITEM = re.compile(rb"\s*\}")
_ALIAS_BODY = re.compile(rb"\s*(" + _IDENT + rb")")
_WORD = re.compile(_IDENT)


class Opener(NamedTuple):
    """What a namespace-opening macro opens: per brace, the namespace's name token (a word, a
    parameter or an alias; "" for one not written: inline, anonymous or named by a call)."""

    params: tuple[str, ...] | None
    names: tuple[str, ...]


class Closer(NamedTuple):
    braces: int


Definition = Opener | Closer


class Table(NamedTuple):
    """Definitions merged from a project's C++ files: macro name -> definition, and the
    object-like macros an opener's namespace may be named by (name -> first word)."""

    macros: Mapping[str, Definition]
    aliases: Mapping[str, str]

    def to_json(self) -> dict[str, object]:
        return {
            "macros": {
                name: {
                    "params": list(d.params) if d.params is not None else None,
                    "names": list(d.names),
                }
                if isinstance(d, Opener)
                else {"braces": d.braces}
                for name, d in sorted(self.macros.items())
            },  # fmt: skip
            "aliases": dict(sorted(self.aliases.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Table:
        macros: dict[str, Definition] = {}
        for name, entry in dict(data.get("macros") or {}).items():  # type: ignore[call-overload]
            if "braces" in entry:
                macros[name] = Closer(int(entry["braces"]))
            else:
                params = entry["params"]
                macros[name] = Opener(
                    None if params is None else tuple(params), tuple(entry["names"])
                )
        return cls(macros, dict(data.get("aliases") or {}))  # type: ignore[call-overload]


EMPTY = Table({}, {})


def definitions(source: bytes) -> tuple[dict[str, Definition], dict[str, str]]:
    """The namespace macros one file defines, and its object-like macros named by a word when
    it defines an opener (aliases); the first definition of a name wins."""
    macros: dict[str, Definition] = {}
    for name, params, body in _defines(source, braced=True):
        found = _opener(body, params) or _closer(body)
        if found is not None:
            macros.setdefault(name, found)
    words: dict[str, str] = {}
    if any(isinstance(d, Opener) for d in macros.values()):
        for name, params, body in _defines(source, braced=False):
            if params is None and name not in macros and (alias := _ALIAS_BODY.match(body)):
                words.setdefault(name, alias[1].decode("ascii"))
    return macros, words


def _defines(source: bytes, braced: bool) -> Iterator[tuple[str, tuple[str, ...] | None, bytes]]:
    """Each `#define`'s name, parameters and body (continued lines joined, comments blanked);
    with `braced`, only those whose text holds a brace. Found by bytes.find, several times
    quicker than a regular expression's scan of every line: a C++ tree's headers are read
    once more for this, before the workers, and most of their `#define`s hold no brace."""
    at = source.find(b"define")
    while at >= 0:
        line_end = source.find(b"\n", at)
        if line_end < 0:
            line_end = len(source)
        continued = source[max(at, line_end - 2) : line_end].rstrip(b"\r").endswith(b"\\")
        if braced and not continued:  # one line: a quick look
            text = source[at:line_end]
            if b"{" not in text and b"}" not in text:
                at = source.find(b"define", line_end)
                continue
        line_start = source.rfind(b"\n", 0, at) + 1
        match = _DEFINE.match(source, line_start)
        if match is not None and source.rfind(b"/*", 0, at) > source.rfind(b"*/", 0, at):
            match = None  # an example in a comment (rapidjson documents its own this way)
        if match is not None and match.start(1) > at:
            body = match[3].replace(b"\\\r\n", b" ").replace(b"\\\n", b" ")
            if not braced or b"{" in body or b"}" in body:
                params = None if match[2] is None else _params(match[2])
                yield match[1].decode("ascii"), params, _COMMENT.sub(b" ", body)
            at = source.find(b"define", match.end())
        else:
            at = source.find(b"define", at + 6)


_NOT_NAMES = frozenset(
    ("inline", "constexpr", "consteval", "constinit", "extern", "static", "restrict", "const",
     "volatile", "virtual", "explicit", "friend", "typename", "template", "class", "struct",
     "union", "enum", "namespace")
)  # fmt: skip


def _namespace_like(word: str) -> bool:
    return not (word.isupper() or word.startswith("_") or word in _NOT_NAMES)


def _params(text: bytes) -> tuple[str, ...]:
    return tuple(p.strip().decode("ascii", "replace") for p in text[1:-1].split(b",") if p.strip())


def _opener(body: bytes, params: tuple[str, ...] | None) -> Opener | None:
    names: list[str] = []
    at = 0
    while at < len(body):
        item = _OPEN_ITEM.match(body, at)
        if item is not None:
            written = item[2] is not None and item[1] is None and item[3] is None
            names.append(item[2].decode("ascii") if written else "")
            at = item.end()
            continue
        noise = _NOISE_MACRO.match(body, at)
        if noise is not None and noise.end() > at:
            at = noise.end()
            continue
        if body[at:].strip():
            return None
        break
    return Opener(params, tuple(names)) if names else None


def _closer(body: bytes) -> Closer | None:
    braces = 0
    at = 0
    while at < len(body):
        item = _CLOSE_ITEM.match(body, at) or _NOISE_MACRO.match(body, at)
        if item is None or item.end() == at:
            if body[at:].strip():
                return None
            break
        braces += item[0].strip() == b"}"
        at = item.end()
    return Closer(braces) if braces else None


def merged(per_file: Iterable[tuple[str, dict[str, Definition], dict[str, str]]]) -> Table:
    """One table from every file's definitions, in path order (the first path's wins)."""
    macros: dict[str, Definition] = {}
    aliases: dict[str, str] = {}
    for _path, found, words in sorted(per_file, key=lambda item: item[0]):
        for name, definition in found.items():
            macros.setdefault(name, definition)
        for name, word in words.items():
            aliases.setdefault(name, word)
    # Only the aliases an opener can be named by, so that editing another changes nothing:
    # those its body names, and with a parameter (`PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)`)
    # any that names a word a namespace could have.
    openers = [d for d in macros.values() if isinstance(d, Opener)]
    wanted = {t for d in openers for t in d.names if t}
    if any(d.params for d in openers):
        wanted |= {name for name, word in aliases.items() if _namespace_like(word)}
    kept: dict[str, str] = {}
    while wanted:
        name = wanted.pop()
        if name in aliases and name not in kept:
            kept[name] = aliases[name]
            wanted.add(aliases[name])
    return Table(macros, dict(sorted(kept.items())))


class Opened(NamedTuple):
    """A namespace a macro opened: from the opener's use to the end of its closer's."""

    name: str
    start: int  # byte offsets in the source
    end: int
    start_line: int  # 1-based
    end_line: int


def opened(source: bytes, table: Table) -> list[Opened]:
    """The namespaces the macro uses of one file open, outer before inner; a use the table
    cannot name (an argument that is no word) opens braces that are not namespaces; a brace
    left open ends with the file."""
    if not table.macros or not any(name.encode("ascii") in source for name in table.macros):
        return []  # most files of a tree use none: the plain search is ~50x cheaper
    pattern = _use_pattern(tuple(sorted(table.macros)))
    found: list[tuple[int, Opened]] = []  # with its depth: one use may open two at once
    stack: list[tuple[str, int, int] | None] = []  # per brace: name, start, line (None: not one)
    line, counted = 1, 0
    for use in pattern.finditer(source):
        start, end = use.span(1)
        line += source.count(b"\n", counted, start)
        counted = start
        definition = table.macros[use[2].decode("ascii")]
        if isinstance(definition, Opener):
            names = _names(definition, use[3], table.aliases)
            for token in definition.names:
                stack.append((names.pop(0), start, line) if token and names else None)
            continue
        for _ in range(min(definition.braces, len(stack))):
            brace = stack.pop()
            if brace is not None:
                found.append((len(stack), Opened(brace[0], brace[1], end, brace[2], line)))
    last_line = line + source.count(b"\n", counted, max(counted, len(source) - 1))
    found += [(depth, Opened(b[0], b[1], len(source), b[2], last_line))
              for depth, b in enumerate(stack) if b is not None]  # fmt: skip
    found.sort(key=lambda item: (item[1].start, -item[1].end, item[0]))
    return [o for _, o in found]


_PATTERNS: dict[tuple[str, ...], re.Pattern[bytes]] = {}


def _use_pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    pattern = _PATTERNS.get(names)
    if pattern is None:
        if len(_PATTERNS) > 64:
            _PATTERNS.clear()
        alternatives = b"|".join(re.escape(name.encode("ascii")) for name in names)
        pattern = _PATTERNS[names] = re.compile(
            rb"^[ \t]*((" + alternatives + rb")(?!\w)(?:[ \t]*\(([^()\n]*)\))?)[ \t]*;?[ \t]*"
            rb"(?=\n|\r|//|/\*|$)",
            re.MULTILINE,
        )
    return pattern


def _names(definition: Opener, arguments: bytes | None, aliases: Mapping[str, str]) -> list[str]:
    """The names of the namespaces one use opens (inline ones left out), each a word; none
    if one cannot be told."""
    names = []
    for token in definition.names:
        if not token:
            continue
        word = _resolve(token, definition, arguments, aliases)
        if word is None:
            return []
        names.append(word)
    return names


def _resolve(token: str, definition: Opener, arguments: bytes | None,
             aliases: Mapping[str, str]) -> str | None:  # fmt: skip
    if definition.params is not None and token in definition.params:
        values = [] if arguments is None else [a.strip() for a in arguments.split(b",")]
        index = definition.params.index(token)
        if index >= len(values) or not _WORD.fullmatch(values[index]):
            return None
        token = values[index].decode("ascii")
    for _ in range(4):  # an alias of an alias
        if token not in aliases:
            break
        token = aliases[token]
    return token if token.isidentifier() and _namespace_like(token) else None


def qualified(symbols: list[Symbol], namespaces: list[Opened], source: bytes) -> list[Symbol]:
    """`symbols` (in start order) with the namespaces macros opened around them in their
    qualified names and parents, and a namespace symbol for each, in start order too.

    The names go after those of the scope the macro is used in (`namespace outer {
    NS_BEGIN(inner)` makes `outer::inner::f`), so the first opened namespace's literal
    enclosing namespace is looked up among `symbols`."""
    if not namespaces:
        return symbols
    enclosing = [_enclosing(symbols, o.start) for o in namespaces]
    out: list[tuple[int, int, Symbol]] = []
    for index, o in enumerate(namespaces):
        path = [n.name for n in namespaces[: index + 1] if n.start <= o.start < n.end]
        outer = _outer(namespaces, enclosing, o.start)
        parent = _join(outer, path[:-1])
        line_start = source.rfind(b"\n", 0, o.start) + 1
        end_line_start = source.rfind(b"\n", 0, o.end) + 1
        namespace = Symbol(
            o.name, _join(outer, path) or o.name, "namespace", o.start_line, o.end_line,
            o.start - line_start, o.end - end_line_start, o.start, o.end,
            f"namespace {o.name}", parent or None,
        )  # fmt: skip
        out.append((o.start, 0, namespace))
    for symbol in symbols:
        path = [o.name for o in namespaces if o.start <= symbol.start_byte < o.end]
        if not path:
            out.append((symbol.start_byte, 1, symbol))
            continue
        outer = _outer(namespaces, enclosing, symbol.start_byte)
        inside = _join(outer, path)
        name = _inserted(symbol.qualified_name, outer, inside)
        parent = inside if symbol.parent is None else _inserted(symbol.parent, outer, inside)
        out.append((symbol.start_byte, 1, symbol._replace(qualified_name=name, parent=parent)))
    out.sort(key=lambda item: (item[0], item[1]))  # stable: the rest keep their order
    return [symbol for _, _, symbol in out]


def _enclosing(symbols: list[Symbol], offset: int) -> str | None:
    """The innermost namespace among `symbols` around `offset`."""
    found = None
    for symbol in symbols:
        if symbol.start_byte > offset:
            break
        if symbol.kind == "namespace" and offset < symbol.end_byte:
            found = symbol.qualified_name
    return found


def _outer(namespaces: list[Opened], enclosing: list[str | None], offset: int) -> str | None:
    """The literal namespace around the outermost macro namespace that holds `offset`."""
    for o, scope in zip(namespaces, enclosing, strict=True):
        if o.start <= offset < o.end:
            return scope
    return None


def _join(outer: str | None, path: list[str]) -> str:
    return "::".join(([outer] if outer else []) + path)


def _inserted(name: str, outer: str | None, inside: str) -> str:
    """`name` with the macro namespaces put after `outer`, its literal enclosing namespace."""
    if outer and (name == outer or name.startswith(outer + "::")):
        return inside + name[len(outer) :]
    return f"{inside}::{name}"
