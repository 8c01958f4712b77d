"""Namespaces that C++ libraries open and close with macros, so their members get their names.

fmt writes `FMT_BEGIN_NAMESPACE` for `namespace fmt { inline namespace v9 {`, nlohmann
`NLOHMANN_JSON_NAMESPACE_BEGIN`, pybind11 `PYBIND11_NAMESPACE_BEGIN(detail)`. The extractor
blanks such a line (cpp_macros.py), so every member came out without its namespace:
`format_to`, not `fmt::format_to`. The macros are defined in one header and used in every
other, so the index gathers the tree's definitions first (`definitions`, merged into a
`Table`: repomap/index/namespaces.py), and the extractor then finds the uses of one file
(`opened`) and puts the namespaces they open into the names of the symbols inside
(`qualified`). The parse itself is not changed: writing `namespace fmt {` into the parsed
bytes changed how tree-sitter recovered from syntax errors in 5 of pybind11's 54 headers.

- An opener's body is `namespace NAME {` items (`inline`, anonymous, or named by a macro call:
  not in the names, as C++ names a member of an inline namespace without it) or `extern "C" {`
  (a brace, no namespace), with ALL_CAPS macros around them left out (`PYBIND11_WARNING_PUSH`).
  NAME is a word, one of the macro's parameters (the use's argument), or an object-like macro
  (`#define PYBIND11_NAMESPACE pybind11 __attribute__(...)`: its first word).
- A closer's body is `}` items (and such macros). A closer closes the braces of the last open
  use of its opener, the one whose name differs from its own only by BEGIN / END (OPEN /
  CLOSE, START / END): `BOOST_CATCH_END` (`}`) closes no namespace, and an `extern "C"` macro
  closed by a literal `}` does not take the namespace's closer.
- A use stands alone on its line, outside comments and outside the branches of a conditional
  the parse does not read; a definition inside a block comment is an example (rapidjson's).
- The names go where the scopes are, literal and macro namespaces in the order they open:
  `namespace outer { NS_BEGIN(inner)` gives `outer::inner::f`. `#define`s stay unqualified, as
  in a literal namespace: the preprocessor has no namespaces.
"""

from __future__ import annotations

import re
from bisect import bisect_right
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
# Here rather than in cpp_macros.py (which imports it): importing that module compiles its ~170
# patterns, ~14 ms, which a run that parses no C or C++ file (a no-change one) need not pay.
CONDITIONAL_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")


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
    it defines an opener (aliases); the first definition of a name wins. A file that never
    says `namespace` defines no opener (its closers would close nothing): not looked at."""
    if b"namespace" not in source:
        return {}, {}
    comments = _Comments(source)
    macros: dict[str, Definition] = {}
    for name, params, body in _defines(source, comments, braced=True):
        found = _opener(body, params) or _closer(body)
        if found is not None:
            macros.setdefault(name, found)
    words: dict[str, str] = {}
    if any(isinstance(d, Opener) for d in macros.values()):
        for name, params, body in _defines(source, comments, braced=False):
            if params is None and name not in macros and (alias := _ALIAS_BODY.match(body)):
                words.setdefault(name, alias[1].decode("ascii"))
    return macros, words


# A block comment, or what may hold `/*` without starting one: a line comment, a string or a
# character literal (`"*/*"`, `// src/*.cc`).
_LEXEMES = re.compile(
    rb"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S
)


def block_comments(source: bytes) -> list[tuple[int, int]]:
    """The spans of the block comments of `source`, in order."""
    if b"/*" not in source:
        return []
    return [m.span() for m in _LEXEMES.finditer(source) if m[0].startswith(b"/*")]


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether `offset` lies in one of `spans` (sorted, not overlapping)."""
    index = bisect_right(spans, (offset, 1 << 62)) - 1
    return index >= 0 and offset < spans[index][1]


class _Comments:
    """A file's block comments, found when first asked: most files define nothing to check."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.spans: list[tuple[int, int]] | None = None

    def hold(self, offset: int) -> bool:
        if self.spans is None:
            self.spans = block_comments(self.source)
        return _inside(self.spans, offset)


def _defines(
    source: bytes, comments: _Comments, braced: bool
) -> Iterator[tuple[str, tuple[str, ...] | None, bytes]]:
    """Each `#define`'s name, parameters and body (continued lines joined, comments blanked),
    outside block comments; with `braced`, only those whose text holds a brace. Found by
    bytes.find, several times quicker than a regular expression's scan of every line."""
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
        if match is not None and comments.hold(at):
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
    """A namespace a macro opened: from the opener's use to its closer's (`stop`, where the
    closer's use starts: a declaration glued to it starts outside; `end`, where it ends)."""

    name: str
    start: int  # byte offsets in the source
    stop: int
    end: int
    start_line: int  # 1-based
    end_line: int


_PAIRED_WORDS = re.compile(r"(?<![A-Z0-9])(?:BEGIN|START|OPEN|END|CLOSE)(?![A-Z0-9])")


def _pair(name: str) -> str:
    """What an opener's and its closer's names share: FMT_*_NAMESPACE, NAMESPACE_*."""
    return _PAIRED_WORDS.sub("*", name)


def opened(source: bytes, table: Table) -> list[Opened]:
    """The namespaces the macro uses of one file open, outer before inner. Uses inside a block
    comment are not uses. The branches of a conditional are alternatives, as the parse reads
    them all: each starts from the state before `#if`, what one opens and leaves open ends at
    its end, and the first branch's state goes on after `#endif`. A use the table cannot name
    (an argument that is no word) opens braces that are not namespaces; a brace left open ends
    with the file."""
    if not table.macros or not any(name.encode("ascii") in source for name in table.macros):
        return []  # most files of a tree use none: the plain search is ~50x cheaper
    comments = block_comments(source)
    uses = [(m.start(1), m) for m in _use_pattern(tuple(sorted(table.macros))).finditer(source)]
    directives = [(m.start(), m) for m in CONDITIONAL_DIRECTIVE.finditer(source)]
    events = sorted((at, m) for at, m in [*uses, *directives] if not _inside(comments, at))
    state = _Namespaces(table)
    conditionals: list[tuple[_Frames, _Frames | None]] = []  # per open `#if`: before, first
    line, counted = 1, 0
    for at, event in events:
        line += source.count(b"\n", counted, at)
        counted = at
        if event.re is CONDITIONAL_DIRECTIVE:
            word = event[1]
            if word in (b"if", b"ifdef", b"ifndef"):
                conditionals.append((state.copy(), None))
            elif conditionals:
                before, first = conditionals.pop()
                if first is None:
                    first = state.frames
                else:
                    state.end_branch(before, at, line)
                if word == b"endif":
                    state.frames = first
                else:
                    state.frames = [(key, list(braces)) for key, braces in before]
                    conditionals.append((before, first))
            continue
        state.use(event, line)
    last_line = line + source.count(b"\n", counted, max(counted, len(source) - 1))
    state.end_branch([], len(source), last_line)
    found = sorted(state.found, key=lambda item: (item[1].start, -item[1].stop, item[0]))
    result: list[Opened] = []
    seen: set[tuple[str, int]] = set()  # a brace two branches close: its first range
    for _, o in found:
        if (o.name, o.start) not in seen:
            seen.add((o.name, o.start))
            result.append(o)
    return result


def uses_opener(source: bytes, table: Table) -> bool:
    """Whether `source` opens a namespace with one of the tree's macros (outside a block
    comment): C++, whatever else its text shows (rapidjson's memorystream.h, in a tree of
    headers alone, has a struct with member functions and no other sign of C++)."""
    openers = tuple(sorted(n for n, d in table.macros.items() if isinstance(d, Opener)))
    if not openers or not any(name.encode("ascii") in source for name in openers):
        return False
    comments = block_comments(source)
    return any(
        not _inside(comments, use.start(1)) for use in _use_pattern(openers).finditer(source)
    )


_Brace = tuple[str, int, int] | None  # a brace a use opened: name, start, line (None: no name)
_Frames = list[tuple[str, list[_Brace]]]  # per opener use: its pair name, its braces left open


class _Namespaces:
    """The braces macro uses opened and not yet closed, and the namespaces found."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.frames: _Frames = []
        self.found: list[tuple[int, Opened]] = []  # with its depth: one use may open two

    def copy(self) -> _Frames:
        return [(key, list(braces)) for key, braces in self.frames]

    def use(self, use: re.Match[bytes], line: int) -> None:
        start, end = use.span(1)
        name = use[2].decode("ascii")
        definition = self.table.macros[name]
        if isinstance(definition, Opener):
            names = _names(definition, use[3], self.table.aliases)
            braces: list[_Brace] = [(names.pop(0), start, line) if token and names else None
                                    for token in definition.names]  # fmt: skip
            self.frames.append((_pair(name), braces))
            return
        frames, key = self.frames, _pair(name)
        if key == name:  # no BEGIN / END in the name to pair by: the last open use
            at = len(frames) - 1 if frames else None
        else:
            at = next((i for i in range(len(frames) - 1, -1, -1) if frames[i][0] == key), None)
        if at is None:
            return  # closes no brace a macro opened (`BOOST_CATCH_END` is a `}`)
        braces = frames[at][1]
        for _ in range(min(definition.braces, len(braces))):
            brace = braces.pop()
            if brace is not None:
                depth = sum(len(f[1]) for f in frames[:at]) + len(braces)
                self.found.append((depth, Opened(brace[0], brace[1], start, end, brace[2], line)))
        if not braces:
            del frames[at]

    def end_branch(self, before: _Frames, at: int, line: int) -> None:
        """The braces opened since `before` and still open end at `at` (a branch's end)."""
        kept = {id(brace) for _, braces in before for brace in braces}
        depth = 0
        for _, braces in self.frames:
            for brace in braces:
                if brace is not None and id(brace) not in kept:
                    self.found.append((depth, Opened(brace[0], brace[1], at, at, brace[2], line)))
                depth += 1


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

    A name is rebuilt from the scopes around the symbol's start in the order they open: the
    macro namespaces and the literal ones of the parse (`namespace outer { NS_BEGIN(inner)
    namespace lit {` gives `outer::inner::lit::f`); what the parse put after its innermost
    literal namespace (a class, an out-of-line `X::f`) follows."""
    if not namespaces:
        return symbols
    literals = [s for s in symbols if s.kind == "namespace"]
    out: list[tuple[int, int, Symbol]] = []
    known: set[str] = set()  # scopes by their final names, for looked_up
    for index, o in enumerate(namespaces):
        outer = [n for n in namespaces[:index] if n.start <= o.start < n.stop]
        prefix = _scopes(outer, literals, o.start, None)
        parent = "::".join(prefix) or None
        line_start = source.rfind(b"\n", 0, o.start) + 1
        end_line_start = source.rfind(b"\n", 0, o.end) + 1
        namespace = Symbol(
            o.name, "::".join([*prefix, o.name]), "namespace", o.start_line, o.end_line,
            o.start - line_start, o.end - end_line_start, o.start, o.end,
            f"namespace {o.name}", parent,
        )  # fmt: skip
        out.append((o.start, 0, namespace))
        known.add(namespace.qualified_name)
    for symbol in symbols:
        around = [o for o in namespaces if o.start <= symbol.start_byte < o.stop]
        if not around or symbol.kind == "macro":  # the preprocessor has no namespaces
            out.append((symbol.start_byte, 1, symbol))
            continue
        inner = _innermost(literals, symbol.start_byte, symbol)
        if inner is None or _after(symbol.qualified_name, inner) != symbol.qualified_name:
            prefix = _scopes(around, literals, symbol.start_byte, symbol)
        else:  # the parse left the literal namespaces out of this name (an enumerator)
            prefix = [o.name for o in around]
        rest = _after(symbol.qualified_name, inner)
        prefix = looked_up(prefix, rest.split("::"), known)
        name = "::".join([*prefix, rest])
        if symbol.kind in SCOPE_KINDS:
            known.add(name)
        parent = "::".join(prefix)
        if symbol.parent is not None and symbol.parent != inner:
            parent = "::".join([*prefix, _after(symbol.parent, inner)])
        out.append((symbol.start_byte, 1, symbol._replace(qualified_name=name, parent=parent)))
    out.sort(key=lambda item: (item[0], item[1]))  # stable: the rest keep their order
    return [symbol for _, _, symbol in out]


SCOPE_KINDS = frozenset({"namespace", "class", "struct", "union", "enum"})  # what looked_up knows


def looked_up(scopes: list[str], parts: list[str], known: set[str]) -> list[str]:
    """The scopes a qualified name written inside `scopes` is in, as C++ looks its first part
    up: in the innermost scope, then outwards, among the namespaces and classes `known` by
    their qualified names. `Catch::IStream::flush` defined inside `namespace Catch` is
    `Catch::IStream::flush`, not `Catch::Catch::...`; `widget::draw` inside `namespace widget`
    that declares `class widget` is `widget::widget::draw`. Only a first part that names an
    enclosing scope changes anything; one not known keeps every scope."""
    if len(parts) < 2 or parts[0] not in scopes:
        return scopes
    for kept in range(len(scopes), -1, -1):
        if "::".join([*scopes[:kept], parts[0]]) in known:
            return scopes[:kept]
    return scopes


def _scopes(macro: list[Opened], literals: list[Symbol], offset: int,
            itself: Symbol | None) -> list[str]:  # fmt: skip
    """The names of the macro namespaces `macro` and of the literal namespaces around
    `offset` (not `itself`), merged in the order they open."""
    scopes: list[tuple[int, int, str]] = [(o.start, i, o.name) for i, o in enumerate(macro)]
    enclosing = None
    for literal in literals:
        if literal.start_byte > offset:
            break
        if literal is itself or offset >= literal.end_byte:
            continue
        own = _after(literal.qualified_name, enclosing)
        scopes.append((literal.start_byte, -1, own))
        enclosing = literal.qualified_name
    scopes.sort(key=lambda scope: (scope[0], scope[1]))
    return [name for _, _, name in scopes]


def _innermost(literals: list[Symbol], offset: int, itself: Symbol) -> str | None:
    """The qualified name (as the parse gave it) of the innermost literal namespace around
    `offset`, other than `itself`."""
    found = None
    for literal in literals:
        if literal.start_byte > offset:
            break
        if literal is not itself and offset < literal.end_byte:
            found = literal.qualified_name
    return found


def _after(name: str, enclosing: str | None) -> str:
    """`name` without the qualified name of the literal namespace around it."""
    if enclosing and name.startswith(enclosing + "::"):
        return name[len(enclosing) + 2 :]
    return name
