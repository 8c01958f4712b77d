"""C++ extractor (C headers are read as C++): symbols, references, comments, docs and strings.

One tree-sitter parse and one query walk (tags.scm and text.scm compiled together); Python then
visits only captured nodes. Qualified names come from a sweep over the definitions' byte
ranges, and the enclosing symbol of any offset from a bisect over those ranges.

Decisions:
- A symbol's range starts at its `template <...>` header, so the signature shows it and a doc
  comment above the header documents it. Specialisations are named without their arguments
  (`DenseMapInfo`), as the `Foo<T>::` qualifier of an out-of-line member is.
- `ret Foo::f() {}` is a method of `Foo` unless `Foo` is known as a namespace in the file
  (`namespace Foo`, `using namespace Foo`, an alias) and not as a class: `.cpp` files define
  members of classes declared elsewhere far more often than namespace functions that way.
- In-class member declarations (`int add(int);`) are methods with is_definition False; an
  in-class `= default`/`= delete` is a definition. Friend and local declarations and forward
  declarations (`class Foo;`) are not symbols; hidden friends defined in a class are methods.
- `typedef struct {...} Name;` is the struct `Name` (C's way to name it); with a tag it is the
  struct plus a type. Macros are global: qualified name = name, no parent.
- Namespace-scope variables are symbols, `constant` when `constexpr` or `const` (not behind a
  pointer); `extern` ones without an initialiser are declarations.
- Doc comments document the next declaration; when that is not a symbol (a field), or for
  `///<` the previous one, the enclosing symbol's name is used. Nothing after: None.
- References are the tags kinds: call targets, types, qualifier segments, `.`/`->` members,
  macros tested by `#ifdef`/`defined()`, and identifiers in `#define` bodies. As the refs table
  keeps them, each name appears once per enclosing symbol, at its first line.
- `class LLVM_ABI Foo {`: an ALL-CAPS word between `class`/`struct` and the name is an export
  macro. cpp_macros.py blanks it before parsing (same length, offsets kept); otherwise tree-sitter reads
  it as the class name and the class as a function.
- Macros in declaration position are blanked the same way when a declaration follows them
  (`SPDLOG_INLINE void logger::flush()`, `FMT_CONSTEXPR color_type() noexcept`,
  `NLOHMANN_JSON_NAMESPACE_BEGIN`, `Q_OBJECT`, `extern __printf(4, 5) void f(...)`): a run of
  ALL_CAPS words with an underscore, or `__name(...)` calls, at a line's start. Their names stay
  references. A word without an underscore (`DWORD`, `BOOL`) is a type and is left alone.
- Text tree-sitter leaves unread is scanned with a small regex lexer: `#define` bodies
  (preproc_arg) for comments, strings and names, and ERROR nodes for string literals that error
  recovery split into `"` and words. `#include "x.h"` paths are string literals.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from operator import attrgetter, itemgetter

from tree_sitter import Node, Query, QueryCursor

from .cpp_macros import (
    CASTS,
    KEYWORDS,
    NOT_MACROS,
    TOKEN,
    WORD,
    blank_macros,
    closing_brace,
    on_directive_line,
    previous_code,
)
from .cpp_namespaces import EMPTY, SCOPE_KINDS, Table, looked_up, opened, qualified
from .model import LICENCE, Extraction, Reference, Symbol, TextElement
from .treesitter import language, parse

_CLASS_KINDS = {
    "class_specifier": "class",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
}
_MEMBER_SCOPES = frozenset({"class", "struct", "union"})
_DECLARATION_SCOPES = _MEMBER_SCOPES | {"namespace"}  # where a prototype declares something
# What recovered_classes finds again among an ERROR's tokens: the keyword, then the name.
_RECOVERED_SCOPES = _DECLARATION_SCOPES | {"enum"}
_RECOVERED_NAMES = frozenset({"type_identifier", "namespace_identifier", "identifier"})
_CONTAINERS = _DECLARATION_SCOPES | {"enum", "function", "method"}  # may hold symbols
_FUNCTION_KINDS = frozenset({"function", "method"})
# Capture name -> what _Reader.build makes of it.
_DEFINITIONS = {
    "definition.namespace": "namespace",
    "definition.class": "class",
    "definition.struct": "struct",
    "definition.union": "union",
    "definition.enum": "enum",
    "definition.enumerator": "enumerator",
    "definition.function": "function",
    "definition.method": "method",
    "definition.declaration": "declaration",
    "definition.macro": "macro",
    "definition.type": "type",
    "definition.field": "field",
}
_REFERENCES = (
    "reference.call",
    "reference.type",
    "reference.namespace",
    "reference.field",
    "reference.macro",
)
_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef"})
_NOT_GUARDED = frozenset({"comment", "preproc_else", "preproc_elif", "preproc_elifdef"})
_PLAIN_NAMES = frozenset({"identifier", "field_identifier", "type_identifier"})
_DECLARED_NAMES = _PLAIN_NAMES | {"qualified_identifier"}
# The grammars read the standard's type names (`size_t`, `int8_t`, `uintptr_t` ...) as primitive
# types wherever they stand: `typedef signed char int8_t;` (a libc's or a compatibility
# header's own <stdint.h>) declares one.
_TYPEDEF_NAMES = _DECLARED_NAMES | {"primitive_type"}
_FUNCTION_NAMES = _DECLARED_NAMES | {
    "macro_named",
    "destructor_name",
    "operator_name",
    "operator_cast",
    "template_function",
    "template_method",
    "template_type",
}
# Declarators that wrap the name a declaration declares.
_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "init_declarator",
        "function_declarator",
    }
)
_CAPITALS_NAME = re.compile(rb"[A-Z][A-Z0-9_]*")  # a macro's, after a declared name
_C_KEYWORDS = frozenset(
    b"""auto break case char const continue default do double else enum extern float for goto
    if int long register return short signed sizeof static struct switch typedef union
    unsigned void volatile while""".split()
)
# Words no variable is named either: C++'s and C99's built-in types (gflags'
# `INSTANTIATE_FLAG_REGISTERER_CTOR(bool);` read as a variable `bool`). Not `nullptr`: C++98
# code defines one (flatbuffers' `const class nullptr_t {..} nullptr = {};`).
_NOT_VARIABLE_NAMES = _C_KEYWORDS | frozenset(
    b"bool wchar_t char8_t char16_t char32_t _Bool _Complex".split()
)
_CALLED = re.compile(rb"[ \t]*\(")
# A blanked conditional's directive lines are read by scan_text too: their words are no names.
_DIRECTIVE_WORDS = frozenset(b"ifdef ifndef elif endif defined define undef include pragma".split())
_ONE_WORD = re.compile(rb"\(\s*[A-Za-z_]\w*\s*\)")  # `FN(Initialize)`'s argument
_MEMBER_POINTER = re.compile(rb"\(\s*[A-Za-z_][\w:<>, ]*::\s*\*\s*[A-Za-z_]\w*\s*\)")  # `(C::*f)`
_QUALIFIED_ONLY = re.compile(rb"\(\s*[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)+\s*\)")  # `(A::b)`
# A function's head at a line's start, found again in text tree-sitter left as an ERROR: an
# optional line of type words (`PyObject *`, `LZ4_FORCE_INLINE int`), then type words and the
# name at column 0, then `(`. _Reader.recovered_functions checks the rest by hand.
_RECOVERED_HEAD = re.compile(
    # `__printf(3, 4)`; a comment on that line: libpng's `int /* PRIVATE */`
    # (ended at its first `*/`: one way to read a line of comments, no ReDoS)
    rb"^(?P<head>(?:[A-Za-z_](?:[\w \t*&]|/\*(?:[^*\n]|\*(?!/))*\*/)*"
    rb"(?:\([\w ,]*\)[\w \t*&]*)?\n)?"
    rb"(?:[A-Za-z_][\w \t*&]*?[ \t*&])?)"
    rb"(?P<name>[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*)[ \t]*\(",
    re.MULTILINE,
)
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/")
_AFTER_PARAMETERS = re.compile(
    rb"(?:\s|//[^\n]*|/\*.*?\*/|(?:const|noexcept|override|final)\b"
    # `__releases(rq->lock)`, `LOCKS_EXCLUDED(mu)`; `(?!\w)`: one way to split words, no ReDoS
    rb"|(?:__\w+|[A-Z][A-Z0-9_]*)(?!\w)(?:\([^(){};]*\))?)*\{",
    re.DOTALL,
)
_NOT_IN_HEADS = frozenset(
    b"""return else case goto do typedef sizeof new delete throw if while for switch using
    namespace template operator""".split()
)
_SPACE_OR_CONTINUATION = re.compile(rb"(?:\s|\\\r?\n)*")
# TOKEN where a `#define` body holds no `/`, `"` or `'`: no comment, string or character
# literal can start, so its tokens are numbers (skipped, the same pattern) and names (group 1).
# Most of the kernel's 300,000 bodies; their names are taken without TOKEN's loop per token.
_NUMBER_OR_NAME = re.compile(rb"\.?\d(?:[\w.]|[eEpP][+-])*|([A-Za-z_]\w*)")
_LITERAL_OR_COMMENT = re.compile(rb"[/\"']")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")  # TEST, TEST_F, BOOST_AUTO_TEST_CASE
_SYSCALL = re.compile(
    r"(?:COMPAT_)?SYSCALL_DEFINE\d"
)  # the kernel's, named by their first argument
_TEST_MACRO = re.compile(r"(?:\A|_)TEST(?:_|\Z)", re.IGNORECASE)  # TEST, START_TEST, Test
_MACRO_CALL_BYTES = 2000  # a typedef's macro call read at most this far for its `)`
# What splits a macro's arguments: a comment or literal is skipped whole (`void /* PRIVATE */`)
_ARGUMENT_TOKEN = re.compile(
    rb"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|[(),]", re.DOTALL
)
# The argument naming a function before its parameter list: `png_malloc`, `PNGAPI\npng_error`,
# `(PNGCBAPI\npng_safe_error)`; the name is the last word.
_NAME_ARGUMENT = re.compile(rb"(\(?)\s*(?:[A-Za-z_]\w*\s+)*([A-Za-z_]\w*)\s*(\)?)")
_DEFAULTED = re.compile(rb"=\s*(?:default|delete)\s*;?\s*$")

_LINE, _BLOCK = "line", "block"  # plain comments
_HAS_LETTER = re.compile(r"[^\W\d_]")  # a comment that says something, not a rule of `*`s
# A plain comment that is a licence (a file's header right above its first declaration,
# model.LICENCE) or a tool's mark (`// NOLINT`, `/* clang-format off */`, `/* FALLTHROUGH */`)
# documents nothing.
_TOOL_MARK = re.compile(
    r"(?:NOLINT\w*(?:\([^)]*\))?|NOLINTNEXTLINE|clang-format (?:on|off)|IWYU pragma:.*|lint"
    r"|LINTED|ARGSUSED\d*|NOTREACHED|FALL ?THR(?:OUGH|U)|fall ?through|NOSONAR|cppcheck-suppress.*"
    r"|coverity\[[^\]]*\].*|lgtm\[[^\]]*\].*|PRINTFLIKE\d*|VARARGS\d*)\.?",
)
# A doc comment that only opens or closes a Doxygen member group (`/// @{`, `/// \name
# Accessors` then `/// @{`): it names the group, not the first member.
_GROUP_MARK = re.compile(r"(?:[@\\]name\b[^\n]*\n\s*)?[@\\]?[{}]")
_DOC_LINE, _DOC_BLOCK = "doc_line", "doc_block"  # document what follows
_TRAILING_LINE, _TRAILING_BLOCK = "trailing_line", "trailing_block"  # `///<`: what precedes
_LINE_KINDS = frozenset({_LINE, _DOC_LINE, _TRAILING_LINE})
_LEADING_DOCS = frozenset({_DOC_LINE, _DOC_BLOCK})
_MARKER_LENGTH = {_LINE: 2, _BLOCK: 2, _DOC_LINE: 3, _DOC_BLOCK: 3}
_MARKER_LENGTH |= {_TRAILING_LINE: 4, _TRAILING_BLOCK: 4}
# Comment openers: four bytes decide first (`///<`, `////`), then three (`///`).
_KIND_BY_HEAD = {
    b"///<": _TRAILING_LINE,
    b"//!<": _TRAILING_LINE,
    b"/**<": _TRAILING_BLOCK,
    b"/*!<": _TRAILING_BLOCK,
    b"////": _LINE,
    b"/***": _BLOCK,
    b"/**/": _BLOCK,
    b"///": _DOC_LINE,
    b"//!": _DOC_LINE,
    b"/**": _DOC_BLOCK,
    b"/*!": _DOC_BLOCK,
}

_SPACE_BEFORE_POINTER = re.compile(r"\s+(?=[*&])")
_STAR_MARGIN = re.compile(r"^[ \t]*\*(?!/) ?", re.MULTILINE)  # ` * ` of block comment lines
_STARS_MARGIN = re.compile(r"^[ \t]*\*\*(?![*/]) ?", re.MULTILINE)  # SQLite's `** `
_BRIEF = re.compile(r"\A[\\@]brief[ \t]+")  # Doxygen's `\brief` before a summary
_TRAILING_BLANKS = re.compile(r"[ \t\r]+$", re.MULTILINE)
_UNINDENTED = re.compile(r"^\S", re.MULTILINE)
_NO_NAME: tuple[None, str] = (None, "")

# A comment: start and end offsets, kind, and its node, or its (line, end line) when it was
# found in a `#define` body.
_Token = tuple[int, int, str, "Node | tuple[int, int]"]


@cache
def _query(lang: str) -> Query:
    """tags.scm and text.scm as one query: one walk of the tree instead of two."""
    folder = resources.files(__package__) / "queries" / lang
    source = "\n".join(folder.joinpath(f"{p}.scm").read_text() for p in ("tags", "text"))
    return Query(language(lang), source)


def extract(source: bytes, rel_path: str, namespaces: Table = EMPTY) -> Extraction:
    """Symbols, references, comments, docs and strings of one C++ file; never raises.
    `namespaces`: the project's namespace macros (cpp_namespaces.py), put in the names."""
    return extract_as("cpp", source, namespaces)


def extract_as(lang: str, source: bytes, namespaces: Table = EMPTY) -> Extraction:
    """`source` read with the grammar and queries of `lang`, "cpp" or "c" (see c.py)."""
    # Thousands of short-lived objects per file and no reference cycles: the cyclic collections
    # they trigger only rescan the caller's heap (~15% of the time when a caller keeps every
    # file's records). Reference counting still frees everything.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _extract(source, lang, namespaces)
    finally:
        if collecting:
            gc.enable()


def _extract(source: bytes, lang: str, namespaces: Table = EMPTY) -> Extraction:
    last_line = None
    if source and not source.endswith(b"\n"):
        # The scans for lines (`\n}`, a directive's line) find a last line without its end
        # only sometimes: a file ending in `}` lost its last function to a call (libjpeg-turbo's
        # jsimd.c, cut down). One more newline changes no offset nor line of the file's own,
        # but what ends in a `\` takes it (`"\`, `// ...\`): such ends are cut back below.
        source += b"\n"
        last_line = source.count(b"\n")
    blanked, macro_spans, unread = _blank_macros(source, lang)
    root = parse(lang, blanked)
    reader = _Reader(source, QueryCursor(_query(lang)).captures(root), lang)
    reader.scan_macro_bodies()
    row, counted_to = 1, 0
    for start, end in sorted(unread):  # a conditional's branches the parse did not read
        row += source.count(b"\n", counted_to, start)
        counted_to = start
        reader.scan_text(start, end, row)
    comment_starts, comment_nodes = reader.comment_starts, reader.comment_nodes
    for start, end in macro_spans:  # a blanked `SPDLOG_INLINE` is still a use of the macro
        index = bisect_right(comment_starts, start) - 1
        if index >= 0 and comment_nodes[index].end_byte > start:
            continue  # a word in a comment that looked like one: no use
        words = WORD.finditer(source, start, end)
        reader.macro_names += [(w[0], w.start()) for w in words if w[0] not in KEYWORDS]
    groups = reader.comment_groups()
    symbols = reader.symbols()
    if unread:  # `#define`s the parse did not read (inside an enum's braces): macros all the same
        hidden = [m for span in unread for m in reader.hidden_macros(*span)]
        if hidden:
            symbols = sorted([*symbols, *hidden], key=attrgetter("start_byte"))
    if lang == "c":
        symbols = [_flat(symbol) for symbol in symbols]
    elif namespaces.macros:  # `FMT_BEGIN_NAMESPACE`: its members are `fmt::...`
        symbols = qualified(symbols, opened(source, namespaces), source)
    # A data member owns no comment, string nor reference: they stay its record's, as the
    # record's chunk and the ranking's graph read them.
    records = [symbol for symbol in symbols if symbol.kind != "field"]
    owners = _Owners(records)
    texts = reader.comments(groups, records, owners) + reader.strings(owners)
    if len(records) < len(symbols):  # the records as comments() left them (docs given), in place
        given = iter(records)
        symbols = [symbol if symbol.kind == "field" else next(given) for symbol in symbols]
    else:
        symbols = records
    texts.sort(key=itemgetter(0))  # document order
    elements = [element for _, element in texts]
    if last_line is not None:
        elements = [
            e if e.end_line <= last_line else e._replace(end_line=last_line) for e in elements
        ]
    return Extraction(
        symbols=_records_documented_by_aliases(symbols),
        references=reader.references(owners),
        texts=elements,
        note="syntax errors" if root.has_error else None,
    )


_RECORD_KINDS = frozenset({"struct", "enum", "union", "class"})


def _records_documented_by_aliases(symbols: list[Symbol]) -> list[Symbol]:
    """`/** The parser structure. */ typedef struct yaml_parser_s {..} yaml_parser_t;`: the doc
    is the alias's, and the record it defines (what `symbols yaml_parser_s` and search return)
    had none; it has the alias's now, when it has none of its own."""
    docs = {s.start_line: s.doc for s in symbols if s.kind == "type" and s.doc}
    if not docs:
        return symbols
    return [
        s._replace(doc=docs[s.start_line])
        if s.doc is None and s.kind in _RECORD_KINDS and s.start_line in docs
        else s
        for s in symbols
    ]


def _blank_macros(
    source: bytes, lang: str
) -> tuple[bytes, list[tuple[int, int]], list[tuple[int, int]]]:
    """cpp_macros.blank_macros, whose patterns end lines at `\n`: in a CRLF file (a Windows
    checkout) they found no macro to blank, and fmt lost 12% of its symbols, nlohmann-json 22%.
    They read the file with each `\r\n` as ` \n` (a continued line's `\\\r\n` as ` \\\n`:
    every offset and line kept), and the parse gets the original bytes back wherever no macro
    was blanked (tree-sitter reads a `#define` ended by ` \n` differently)."""
    if b"\r\n" not in source:
        return blank_macros(source, lang)
    lines = source.replace(b"\\\r\n", b" \\\n").replace(b"\r\n", b" \n")
    blanked, macro_spans, unread = blank_macros(lines, lang)
    restored = bytearray(blanked)
    at = source.find(b"\r\n")
    while at >= 0:
        for j in (at - 1, at):  # what the substitution moved, where blanking left it
            if j >= 0 and lines[j] != source[j] and blanked[j] == lines[j]:
                restored[j] = source[j]
        at = source.find(b"\r\n", at + 2)
    return bytes(restored), macro_spans, unread


MACRO_SIGNATURE_CHARS = 120  # an object-like macro's `#define NAME value`, its value cut after


def _include_guard(define: Node, name: bytes) -> bool:
    """`#ifndef X_H` / `#define X_H` (or `#if !defined(X_H)`): a header's guard, which defines
    nothing and names only the file (a search user's outline of yaml-cpp's convert.h began with
    `macro NODE_CONVERT_H_62B23520_7C8E_11DE_8A39_0800200C9A66`). Read from the tree: the
    `#define` is the first thing inside the `#ifndef` of its own name."""
    parent = define.parent
    if parent is None or parent.child_count < 3:
        return False
    if parent.type == "preproc_ifdef":
        tested = parent.child_by_field_name("name")
        return (
            parent.children[0].type == "#ifndef"
            and tested is not None
            and tested.text == name
            and tested.next_named_sibling == define
        )
    if parent.type == "preproc_if":
        condition = parent.child_by_field_name("condition")
        return (
            condition is not None
            and condition.text is not None
            and condition.text.replace(b" ", b"")
            in (b"!defined(" + name + b")", b"!defined" + name)
            and condition.next_named_sibling == define
        )
    return False


def _uncommented(text: str) -> str:
    """`text` (one line) without its comments, outside string and character literals: a
    `#define`'s value as tree-sitter-cpp gives it holds the comment after it (`64 // bytes`)."""
    if "/" not in text:
        return text  # most: one look, no walk
    kept: list[str] = []
    at, quote = 0, ""
    while at < len(text):
        char = text[at]
        if quote:
            if char == "\\":
                kept.append(text[at : at + 2])
                at += 2
                continue
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif text.startswith("//", at):
            break
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            if end < 0:
                break
            at = end + 2
            continue
        kept.append(char)
        at += 1
    return " ".join("".join(kept).split())


@cache
def _field_ids(lang: str, *names: str) -> tuple[int, ...]:
    """The numbers of the fields `names` in the grammar of `lang`."""
    grammar = language(lang)
    field_ids = tuple(i for name in names if (i := grammar.field_id_for_name(name)) is not None)
    if len(field_ids) != len(names):  # a grammar upgrade renamed one: every file would fail
        raise LookupError(f"tree-sitter-{lang} has no field among {names}")
    return field_ids


def _flat(symbol: Symbol) -> Symbol:
    """C has one scope for tags and one for everything else: a nested `struct b` is `b`."""
    parent = symbol.parent
    if symbol.kind == "field" and parent:  # a member is named in its record: `request::len`
        parent = parent.rsplit("::", 1)[-1]
        return symbol._replace(qualified_name=f"{parent}::{symbol.name}", parent=parent)
    # Only a scope's `::` is dropped: `REQUEST_FUNC(mod_expire_handler)` names the function
    # `mod_expire_handler` and stays qualified as written.
    if "::" not in symbol.qualified_name and (parent is None or "::" not in parent):
        return symbol
    parent = parent.rsplit("::", 1)[-1] if parent else None
    return symbol._replace(qualified_name=symbol.name, parent=parent)


class _Owners:
    """The innermost symbol around any offset: nested ranges flattened into sorted bounds."""

    def __init__(self, symbols: list[Symbol]) -> None:
        bounds: list[int] = [0]
        names: list[str | None] = [None]
        open_spans: list[tuple[int, str | None]] = [(1 << 62, None)]  # the file: never closed
        for symbol in symbols:  # outer before inner, in start order
            start, name = symbol.start_byte, symbol.qualified_name
            while open_spans[-1][0] <= start:  # what ended before: its parent owns from there
                end = open_spans.pop()[0]
                if bounds[-1] == end:
                    names[-1] = open_spans[-1][1]
                else:
                    bounds.append(end)
                    names.append(open_spans[-1][1])
            if bounds[-1] == start:
                names[-1] = name
            else:
                bounds.append(start)
                names.append(name)
            open_spans.append((symbol.end_byte, name))
        while len(open_spans) > 1:
            bounds.append(open_spans.pop()[0])
            names.append(open_spans[-1][1])
        self.bounds, self.names = bounds, names

    def at(self, position: int) -> str | None:
        return self.names[bisect_right(self.bounds, position) - 1]


def _alone_on_line(source: bytes, start: int) -> bool:
    """Whether only blanks precede `start` on its line."""
    line_start = source.rfind(b"\n", 0, start) + 1
    return not source[line_start:start].strip()


@dataclass(slots=True, frozen=True)
class _Span:
    """A function (or a class) found again in an ERROR: what Reader.symbol reads of a node."""

    start_byte: int
    end_byte: int
    start_point: tuple[int, int]
    end_point: tuple[int, int]
    name: str
    signature_end: int
    kind: str = "function"  # or a class-like kind, "namespace" or "enum": recovered_classes
    written: str | None = None  # the name it is qualified by, when not `name` (a syscall's)


# A `#define` the parse did not read (cpp_macros: inside an enum's braces): its name, its
# parameters, then the rest of its lines.
_HIDDEN_DEFINE = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^()\n]*\))?(?:[^\\\n]|\\(?:\r?\n|.))*",
    re.MULTILINE,
)


# What counting parentheses skips: comments, string and character literals (`LPAREN = '('`).
_PARENTHESIS_TOKEN = re.compile(
    rb"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[()]", re.DOTALL
)


def _parenthesized(source: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The outermost parenthesized spans between `start` and `end`, in order."""
    spans: list[tuple[int, int]] = []
    depth = opened = 0
    for token in _PARENTHESIS_TOKEN.finditer(source, start, end):
        if token[0] == b"(":
            if depth == 0:
                opened = token.start()
            depth += 1
        elif token[0] == b")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((opened, token.end()))
    if depth:
        spans.append((opened, end))
    return spans


def _point(source: bytes, offset: int) -> tuple[int, int]:
    line_start = source.rfind(b"\n", 0, offset) + 1
    return source.count(b"\n", 0, offset), offset - line_start


@dataclass(slots=True)
class _Group:
    """A comment, or a run of `//` comments merged into one, with what it documents."""

    start: int
    kind: str
    content: str
    line: int
    end_line: int
    sibling: Node | None = None  # the declaration a doc comment sits next to
    in_macro: bool = False  # found in a `#define` body: it documents that macro


class _Reader:
    """Turns the captures of one file into records; holds what the passes share."""

    def __init__(self, source: bytes, found: dict[str, list[Node]], lang: str) -> None:
        self.source = source
        self.found = found
        # A field by its number, not its name: half the cost of the lookup, for the kernel's
        # 300,000 `#define`s (the grammars number their fields apart).
        self.name_field, self.parameters_field, self.value_field = _field_ids(
            lang, "name", "parameters", "value"
        )
        self.comment_nodes, self.comment_starts = _in_order(found.get("comment", []))
        self.name_starts: set[int] = set()  # definitions' own names: not references
        self.parenthesized: dict[int, list[tuple[int, int]]] = {}  # per enum list (in_macro_call)
        self.scope_names: set[str] = set()  # namespaces and classes read so far (lookup)
        self.docs: dict[int, str] = {}  # declaration start -> its doc comment
        # declaration start -> the plain comment right above it: its doc when it has none
        self.plain_docs: dict[int, str] = {}
        self.macro_comments: list[_Token] = []
        self.macro_strings: list[tuple[int, TextElement]] = []
        self.scanned: list[tuple[int, int]] = []  # blanked text scan_text read, not the tree
        self.macro_names: list[tuple[bytes, int]] = []
        self.recovered_spans: list[_Span] = []
        self.unclosed = 0  # bodies whose braces never closed (recovered_span)
        self.argument_named_macros: dict[str, bool] = {}  # defines_function_named_by_argument
        self.last_leading: tuple[int, int] | None = None  # note_doc: (declaration, last line)

    def text(self, start: int, end: int) -> str:
        return self.source[start:end].decode("utf-8", "replace")

    def node_text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def header(self, start: int, end: int) -> str:
        """Source between two offsets on one line, comments left out: a signature."""
        raw = self.source[start:end]
        if b"/" in raw:
            first = bisect_left(self.comment_starts, start)
            for node in reversed(self.comment_nodes[first : bisect_left(self.comment_starts, end)]):
                raw = raw[: node.start_byte - start] + b" " + raw[node.end_byte - start :]
        return " ".join(raw.decode("utf-8", "replace").split())

    def header_around_body(self, start: int, end: int, type_node: Node | None) -> str:
        """A signature that shows a class body written inside a declaration as `{…}`."""
        body = None
        if type_node is not None and type_node.type in _CLASS_KINDS:
            body = type_node.child_by_field_name("body")
        if body is None or not start <= body.start_byte < end:
            return self.header(start, end)
        return f"{self.header(start, body.start_byte)} {{…}} {self.header(body.end_byte, end)}"

    # --- comments: grouped and cleaned first, so symbols can take their docs ---------------

    def comment_groups(self) -> list[_Group]:
        """Comments with `//` runs merged; doc comments note their declaration's start."""
        source = self.source
        starts, nodes = self.comment_starts, self.comment_nodes
        ends = [node.end_byte for node in nodes]
        kinds = [_comment_kind(source[start : start + 4]) for start in starts]
        if self.macro_comments:  # rare: merge them in, in document order
            merged = sorted(
                [*zip(starts, ends, kinds, nodes, strict=True), *self.macro_comments],
                key=itemgetter(0),
            )
            starts, ends, kinds, nodes = (list(column) for column in zip(*merged, strict=True))
        groups = []
        count, first = len(starts), 0
        while first < count:
            kind, last = kinds[first], first
            # One run: same kind, next line, only blanks between; a comment after code on its
            # line describes that line and starts no run.
            if kind in _LINE_KINDS and _alone_on_line(source, starts[first]):
                while last + 1 < count and kinds[last + 1] is kind:
                    gap = source[ends[last] : starts[last + 1]]
                    if not gap.isspace() or gap.count(b"\n") != 1:
                        break
                    last += 1
            start = starts[first]
            if first == last:
                content = _clean_comment(kind, [source[start : ends[first]]])
            else:
                raws = [source[starts[i] : ends[i]] for i in range(first, last + 1)]
                content = _clean_comment(kind, raws)
            head, tail = nodes[first], nodes[last]
            first = last + 1
            if isinstance(head, tuple) or isinstance(tail, tuple):  # in a `#define` body
                groups.append(_Group(start, kind, content, head[0], tail[1], in_macro=True))
                continue
            end_row, end_column = tail.end_point
            # A `//` comment ending in `\` takes the line break with it (tree-sitter ends it at
            # the next row's column 0): its last line is the one the break ends. At the end of a
            # file, that row was past the file's last line.
            end_line = end_row + (end_column > 0 or end_row == head.start_point[0])
            group = _Group(start, kind, content, head.start_point[0] + 1, end_line)
            if kind is not _LINE and kind is not _BLOCK:
                self.note_doc(group, head, tail)
            elif _alone_on_line(source, start):
                self.note_plain_doc(content, tail)
            groups.append(group)
        return groups

    def note_doc(self, group: _Group, first: Node, last: Node) -> None:
        """Find the declaration a doc comment documents; remember the doc under its start."""
        if group.kind in _LEADING_DOCS:
            if _GROUP_MARK.fullmatch(group.content.strip()):
                return
            sibling = last.next_named_sibling
            while sibling is not None and sibling.type == "comment":
                sibling = sibling.next_named_sibling
            while sibling is not None and sibling.type in _CONDITIONALS:
                sibling = _first_guarded(sibling)  # lz4.h: the doc, then `#if`, then the function
            if sibling is not None:
                # The closest doc wins, but a doc comment on the lines right above it is the
                # declaration's too, as Doxygen joins them: cereal's `//! brief` line over a
                # `/*! details */` block (256 definitions lost their brief to the class).
                start, content = sibling.start_byte, group.content
                if self.last_leading == (start, group.line - 1):
                    content = f"{self.docs[start]}\n{content}"
                self.docs[start] = content
                self.last_leading = (start, group.end_line)
        else:  # `///<` documents what precedes it
            sibling = first.prev_named_sibling
            while sibling is not None and sibling.type == "comment":
                sibling = sibling.prev_named_sibling
            if sibling is not None:
                self.docs.setdefault(sibling.start_byte, group.content)
        group.sibling = sibling

    def note_plain_doc(self, content: str, last: Node) -> None:
        """A plain comment on the lines right above a declaration is its doc when it has no doc
        comment, as clangd shows it (`/* Compute the checksum. */` over zlib's, libevent's and
        Google-style `//` functions); a blank line between, or a rule of `*`s, is not."""
        sibling = last.next_named_sibling
        if (
            sibling is not None
            and sibling.start_point[0] == last.end_point[0] + 1
            and sibling.type != "comment"
            and _HAS_LETTER.search(content)
            and not LICENCE.search(content)
            and not _TOOL_MARK.fullmatch(content.strip())
        ):
            self.plain_docs[sibling.start_byte] = content

    def comments(
        self, groups: list[_Group], symbols: list[Symbol], owners: _Owners
    ) -> list[tuple[int, TextElement]]:
        """Text elements of the comment groups, docs named after what they document."""
        by_start: dict[int, Symbol] = {}
        for symbol in symbols:
            existing = by_start.get(symbol.start_byte)
            if existing is None or existing.kind in ("variable", "constant"):
                by_start[symbol.start_byte] = symbol  # `struct S {...} s;`: the struct
        starts = [symbol.start_byte for symbol in symbols]
        bounds, names = owners.bounds, owners.names
        texts = []
        for group in groups:
            kind, owner = group.kind, names[bisect_right(bounds, group.start) - 1]
            if kind is _LINE or kind is _BLOCK:
                element = TextElement("comment", group.content, group.line, group.end_line, owner)
            else:
                name = self.documented(group, owner, by_start, symbols, starts)
                element = TextElement("docstring", group.content, group.line, group.end_line, name)
            texts.append((group.start, element))
        return texts

    def documented(
        self,
        group: _Group,
        owner: str | None,
        by_start: dict[int, Symbol],
        symbols: list[Symbol],
        starts: list[int],
    ) -> str | None:
        """The qualified name of what a doc comment documents, else of what encloses it."""
        sibling = group.sibling
        if sibling is None:  # nothing follows in this scope: None; nothing precedes: owner
            return None if group.kind in _LEADING_DOCS and not group.in_macro else owner
        target = by_start.get(sibling.start_byte)
        if target is None and group.kind in _LEADING_DOCS:
            # A declaration tree-sitter could not read whole (an ERROR), or read in two
            # (`asmlinkage __visible` apart from `void schedule_tail(...)`): the first symbol
            # in it or on its first line.
            line_end = self.source.find(b"\n", sibling.start_byte)
            until = max(sibling.end_byte if sibling.type == "ERROR" else 0, line_end)
            index = bisect_left(starts, sibling.start_byte)
            if index < len(symbols) and starts[index] < until:
                target = symbols[index]
                if target.doc is None:
                    symbols[index] = target._replace(doc=group.content)
        return target.qualified_name if target is not None else owner

    # --- symbols ---------------------------------------------------------------------------

    def symbols(self) -> list[Symbol]:
        """Every symbol, outer before inner, qualified by a sweep over nested byte ranges."""
        templates = _template_anchors(self.found.get("local.template", []))
        self.friends = {n.start_byte for n in self.found.get("local.friend", ())}
        self.namespaces: set[str] | None = None  # read when an out-of-line member needs it
        candidates: list[tuple[int, int, int, str, Node | None, Node | _Span]] = []
        for capture, kind in _DEFINITIONS.items():
            for node in self.found.get(capture, ()):
                start = node.start_byte
                anchor = templates.get(start)
                if anchor is None:
                    anchor, end = node, node.end_byte
                else:
                    start, end = anchor.start_byte, anchor.end_byte
                # One int sorts outer before inner: by start, then the longer first.
                candidates.append(((start << 32) - end, start, end, kind, node, anchor))
        spans = self.macro_defined_functions() if "local.block" in self.found else []
        macro_defined = {span.start_byte for span in spans}
        self.overrun_ends = self.overruns() if "error" in self.found else {}
        if "error" in self.found:
            spans += self.recovered_functions() + self.recovered_classes()
        if spans:
            for span in spans:
                key = (span.start_byte << 32) - span.end_byte
                candidates.append((key, span.start_byte, span.end_byte, "recovered", None, span))
        candidates.sort(key=itemgetter(0))
        symbols: list[Symbol] = []
        open_scopes: list[tuple[int, Symbol]] = []  # (end byte, container symbol)
        recovered_until = -1  # what tree-sitter found inside a recovered function is local
        error_starts = sorted(n.start_byte for n in self.found.get("error", ()))
        macro = self.macro
        for _, start, end, kind, read, extent in candidates:
            if kind == "macro" and read is not None:
                # Global, even in a body, and never a scope: nothing below applies. A C file
                # has more macros than anything else (the kernel: half its candidates).
                found_macro = macro(read)
                if found_macro is not None:
                    symbols.append(found_macro)
                continue
            trimmed = None
            if start < recovered_until:
                if kind != "function" or end <= recovered_until or read is None:
                    continue
                # Tree-sitter glued the end of a lost function before this one's head.
                trimmed = self.trimmed(read, recovered_until)
                if trimmed is None:
                    continue
                start = trimmed.start_byte
            while open_scopes and open_scopes[-1][0] <= start:
                open_scopes.pop()
            scope = open_scopes[-1][1] if open_scopes else None
            if isinstance(extent, _Span) and extent.kind != "function":
                found = [self.recovered_class(extent, scope)]  # its members are read as ever
            elif isinstance(extent, _Span):  # a recovered function
                if extent.start_byte not in macro_defined:
                    recovered_until = end
                # else a macro's call and a block, both read well (`TEST_CASE("..") {`): its
                # local types are its own, as in any function (onetbb: 118 `using` lost)
                found = self.recovered(extent, scope)
            elif read is None:
                continue
            elif trimmed is not None:
                function = self.function(read, trimmed, scope, True)
                found = [function] if function is not None else []
            elif kind in _FUNCTION_KINDS and scope is not None and scope.kind in _FUNCTION_KINDS:
                continue  # no function is defined in another's body: a misread statement
            else:
                found = self.build(kind, read, extent, scope)
                if error_starts and found and found[0].kind in _DECLARATION_SCOPES:
                    found[0], end = self.closed_by_hand(found[0], read, end, error_starts)
                elif self.overrun_ends and found and found[0].kind in _FUNCTION_KINDS:
                    found[0], end = self.ended_by_hand(found[0], read, end)
            for symbol in found:
                symbols.append(symbol)
                if symbol.kind in _CONTAINERS:
                    open_scopes.append((end, symbol))
        return symbols

    def closed_by_hand(
        self, symbol: Symbol, node: Node, end: int, error_starts: list[int]
    ) -> tuple[Symbol, int]:
        """A namespace or class tree-sitter closed too early: an ERROR after its end, before
        the `}` that matches its `{` by hand (an enum of `#include`d values took the
        namespace's brace). Its end moves there, and what follows up to it is its own."""
        body = node.child_by_field_name("body")
        if body is None or body.type == "ERROR":
            return symbol, end
        index = bisect_left(error_starts, end)
        if index == len(error_starts):
            return symbol, end  # no ERROR after it: tree-sitter's end is right
        closing = closing_brace(self.source, body.start_byte)
        if closing <= end or error_starts[index] >= closing:
            return symbol, end
        return self.ended_at(symbol, closing), closing

    def overruns(self) -> dict[int, int]:
        """Function node start -> where its braces end, for each function whose body
        tree-sitter's error recovery ran on past its `}`, over the functions after it (Lua's
        `LUA_QL("=") " or "`, systemd's `_cleanup_(f) T *x = b;`, an `#ifdef` inside an
        `if (` condition), or closed at an inner block's `}` (systemd's parse_one_option,
        its `else if` chain's second half read as file-level code): an ERROR between its `{`
        and the `}` that matches it by hand, which is not tree-sitter's end. What tree-sitter
        read after that `}` is not its own: recovered_functions reads it again."""
        errors = sorted(n.start_byte for n in self.found["error"])
        functions = self.found.get("definition.function", ())
        starts = sorted(n.start_byte for n in functions)
        ends: dict[int, int] = {}
        for node in functions:
            body = node.child_by_field_name("body")
            if body is None or body.type != "compound_statement":
                continue
            index = bisect_right(errors, body.start_byte)
            if index == len(errors):
                continue  # no ERROR in it or after it: tree-sitter's end is right
            closing = closing_brace(self.source, body.start_byte)
            if closing < 0 or errors[index] >= max(closing, node.end_byte):
                continue
            if closing < node.end_byte:  # ran past its `}`
                ends[node.start_byte] = closing
            elif closing > node.end_byte:  # closed at one of its blocks' `}`
                later = bisect_right(starts, node.start_byte)
                if later == len(starts) or starts[later] >= closing:
                    ends[node.start_byte] = closing  # else the braces went astray (`#if`s)
        return ends

    def ended_by_hand(self, symbol: Symbol, node: Node, end: int) -> tuple[Symbol, int]:
        """A function of `overruns`, ended where its braces end."""
        closing = self.overrun_ends.get(node.start_byte)
        if closing is None:
            return symbol, end
        return self.ended_at(symbol, closing), closing

    def ended_at(self, symbol: Symbol, end: int) -> Symbol:
        """`symbol` ending at byte `end` (a `}` matched by hand)."""
        row, column = _point(self.source, end)
        return symbol._replace(end_line=row + 1, end_col=column, end_byte=end)

    def macro_defined_functions(self) -> list[_Span]:
        """`SYSCALL_DEFINE1(foo, int, x) { ... }` at file scope, read by tree-sitter-c as a call
        statement then a block: a function, named by the macro and its first argument."""
        spans = []
        for block in self.found["local.block"]:
            statement = block.prev_named_sibling
            if statement is None or statement.type != "expression_statement":
                continue
            if statement.start_point[1] != 0 or statement.named_child_count != 1:
                continue  # a macro defining a function starts its line
            call = statement.named_children[0]
            if call.type != "call_expression":
                continue
            macro, arguments = (
                call.child_by_field_name("function"),
                call.child_by_field_name("arguments"),
            )
            if macro is None or arguments is None or macro.type != "identifier":
                continue
            start, end = statement.start_byte, block.end_byte
            written = None
            # A test or syscall after a long doc comment (LLVM's `MATCHER(Succeeded, "")`
            # follows 20 lines of comments and #defines): walked back further than blanking.
            before, line_start = previous_code(self.source, start, lines=64, continued=True)
            if before in (b";", b"}", b""):
                given = [a for a in arguments.named_children if a.type != "comment"]
                named = _name_before_parameters(
                    self.source, arguments.start_byte + 1, arguments.end_byte - 1
                )
                if named is not None:
                    name = named  # libpng's `PNG_FUNCTION(png_voidp, png_malloc, (..), ..) {`
                elif len(given) == 2 and all(a.type == "identifier" for a in given):
                    # `TEST(Group, Name)` (Unity), `Test(suite, name)` (Criterion): a test's
                    # name is both; a syscall's arguments after its name are types and names
                    shown = ", ".join(self.node_text(a) for a in given)
                    name = f"{self.node_text(macro)}({shown})"
                else:
                    shown = self.node_text(given[0]) if given else ""
                    name = f"{self.node_text(macro)}({shown})"
                    if _SYSCALL.fullmatch(self.node_text(macro)) and given:
                        # the kernel's `SYSCALL_DEFINE1(umask, int, mask)`: the syscall
                        # `umask`, qualified as written (as `SYSCALL_DEFINE0(getpid)` is)
                        written, name = name, shown
            elif before == b")" or before.isalnum() or before in (b"_", b"*"):
                # `static int __init __printf(3, 4)\nappend_printf(...)\n{`: the head began on
                # the line before; the function is the name on this one.
                name, start = self.node_text(macro), line_start
            else:
                continue
            point = _point(self.source, start)
            spans.append(
                _Span(start, end, point, block.end_point, name, call.end_byte, written=written)
            )
            self.recovered_spans.append(spans[-1])
        return spans

    def recovered_functions(self) -> list[_Span]:
        """Functions tree-sitter lost to an ERROR (`#if` between `if` and `else`, lz4's
        `(64 KB)`): a head at a line's start in the ERROR's text, its braces matched by hand.
        Heads inside a function tree-sitter did read are left to it."""
        source = self.source
        ends = self.overrun_ends
        nodes = self.found.get("definition.function", ())
        overrun = sorted(
            (n.start_byte, ends[n.start_byte], n.end_byte) for n in nodes if n.start_byte in ends
        )
        # From each read function's declarator: recovery can glue junk before its head. An
        # overrun function ends at its own `}`; one read inside it is none (it was a statement),
        # nor is one named by a keyword (`#if X` `else if (..) {` `#endif`: a function `if`).
        read = sorted(
            (
                (n.child_by_field_name("declarator") or n).start_byte,
                ends.get(n.start_byte, n.end_byte),
            )
            for n in nodes
            if not any(start < n.start_byte < end for start, end, _ in overrun)
            and not _keyword_named(n)
        )
        read_starts = [start for start, _ in read]
        spans: list[_Span] = []
        macro_defined = list(self.recovered_spans)  # macro_defined_functions ran first
        scanned_to = -1
        regions = [(n.start_byte, n.end_byte) for n in self.found["error"]]
        regions += [(end, misread) for _, end, misread in overrun if end < misread]  # after `}`
        for region_start, region_end in sorted(regions):
            if region_end <= scanned_to:
                continue  # inside a region already scanned
            # From the line before the region's: a head's type can sit there.
            line_start = source.rfind(b"\n", 0, region_start)
            start = max(source.rfind(b"\n", 0, max(line_start, 0)) + 1, scanned_to, 0)
            scanned_to = region_end
            for head in _RECOVERED_HEAD.finditer(source, start, region_end + 400):
                if head.start() >= region_end:
                    break
                if spans and head.start() < spans[-1].end_byte:
                    continue  # in the body of the function found before
                if any(m.start_byte <= head.start() < m.end_byte for m in macro_defined):
                    continue  # in a function a macro defines
                span = self.recovered_span(head, read, read_starts)
                if span is not None:
                    spans.append(span)
                    self.recovered_spans.append(span)
                    scanned_to = max(scanned_to, span.end_byte)
        return spans

    def recovered_classes(self) -> list[_Span]:
        """Classes, namespaces and enums whose head tree-sitter left among an ERROR's own
        tokens: `class Name ... {` where the body never closed for it, because something
        further down could not be read (nlohmann's basic_json, 5,000 lines of macros). The
        braces are matched by hand; the members tree-sitter read inside are the class's."""
        source = self.source
        spans: list[_Span] = []
        for error in self.found["error"]:
            children = error.children
            for index, keyword in enumerate(children):
                if keyword.type not in _RECOVERED_SCOPES:
                    continue
                name, brace, bases = None, None, False
                for child in children[index + 1 : index + 12]:
                    if child.type == "comment":
                        continue
                    if name is None:
                        if child.type not in _RECOVERED_NAMES:
                            break  # `struct { int a; } s;` read as tokens: anonymous
                        name = child
                    elif child.type == "{":
                        brace = child
                        break
                    elif child.type in (":", "base_class_clause"):
                        bases = True
                    elif child.type in (";", "}", "(", ")", "=") or (
                        not bases and child.type in (",", ">")
                    ):
                        break  # `template <class T, class U>`: a parameter, not a class
                if name is None or brace is None or self.unclosed > 4:
                    continue
                end = closing_brace(source, brace.start_byte)
                if end < 0:
                    self.unclosed += 1
                    continue
                first, kind = keyword, keyword.type
                previous = children[index - 1] if index else None
                if previous is not None and previous.type == "enum":
                    first, kind = previous, "enum"  # `enum class Kind : uint8_t {`
                spans.append(
                    _Span(
                        first.start_byte,
                        end,
                        first.start_point,
                        _point(source, end),
                        self.node_text(name),
                        brace.start_byte,
                        kind,
                    )
                )
        return spans

    def recovered_class(self, span: _Span, scope: Symbol | None) -> Symbol:
        prefix = scope.qualified_name if scope is not None else None
        signature = self.header(span.start_byte, span.signature_end)
        return self.symbol(
            span.name, _join(prefix, [span.name]), span.kind, span, signature, prefix
        )

    def recovered_span(
        self, head: re.Match[bytes], read: list[tuple[int, int]], read_starts: list[int]
    ) -> _Span | None:
        source = self.source
        name = head["name"]
        text = head["head"]
        if b"/*" in text:
            text = _BLOCK_COMMENT.sub(b" ", text)  # `int /* PRIVATE */`
        words = text.replace(b"*", b" ").replace(b"&", b" ").split()
        if name in _NOT_IN_HEADS or name in NOT_MACROS or _NOT_IN_HEADS.intersection(words):
            return None
        index = bisect_right(read_starts, head.start()) - 1
        if index >= 0 and read[index][1] > head.start():
            return None  # inside a function tree-sitter read
        depth, at = 1, head.end()
        for at in range(head.end(), min(len(source), head.end() + 4000)):
            byte = source[at]
            if byte == 40:  # (
                depth += 1
            elif byte == 41:  # )
                depth -= 1
                if depth == 0:
                    break
            elif byte in b";{}":
                return None
        else:
            return None
        named = _name_before_parameters(source, head.end(), at)
        if named is not None:
            # libpng's `static PNG_FUNCTION(void, png_longjmp, (..), PNG_NORETURN) {`: named
            # `PNG_FUNCTION` and the definition after it lost; that one, at a line's start
            # after the first's `}` in the same ERROR, has no return type before the macro
            name = named.encode()
        elif not words and b"::" not in name:
            return None  # C needs a return type; `FOR_EACH(x) {` is a statement
        parameters_end = at + 1
        # A window: an unclosed `/*` after every head would make the scan quadratic.
        body = _AFTER_PARAMETERS.match(source, parameters_end, parameters_end + 2000)
        if body is None:
            return None
        if self.unclosed > 4:
            return None  # hostile or hopeless: each try scans to the end, 5 are enough
        end = closing_brace(source, body.end() - 1)
        if end < 0:
            self.unclosed += 1
            return None
        start = head.start()
        if index + 1 < len(read) and read[index + 1][0] < end:
            return None  # a function tree-sitter read inside: the braces went astray
        return _Span(
            start,
            end,
            _point(source, start),
            _point(source, end),
            name.decode("utf-8", "replace"),
            parameters_end,
        )

    def trimmed(self, node: Node, after: int) -> _Span | None:
        """A read function's extent from its own head, for one that starts in a recovered
        function's body (`after` is where that ends)."""
        declarator = node.child_by_field_name("declarator")
        if declarator is None:
            return None
        source = self.source
        line_start = source.rfind(b"\n", 0, declarator.start_byte) + 1
        search_from = max(after, source.rfind(b"\n", 0, max(line_start - 1, 0)) + 1)
        for head in _RECOVERED_HEAD.finditer(source, search_from, declarator.end_byte):
            if head.start() >= after and head.start("name") >= declarator.start_byte:
                return _Span(
                    head.start(),
                    node.end_byte,
                    _point(source, head.start()),
                    node.end_point,
                    "",
                    declarator.end_byte,
                )
        return None

    def recovered(self, span: _Span, scope: Symbol | None) -> list[Symbol]:
        """The symbol of a recovered function, named as `function` names a read one."""
        parts = [span.name] if "(" in span.name else span.name.replace(" ", "").split("::")
        prefix = scope.qualified_name if scope is not None else None
        signature = self.header(span.start_byte, span.signature_end)
        name = parts[-1]
        if span.written is not None:
            return [
                self.symbol(
                    name, _join(prefix, [span.written]), "function", span, signature, prefix
                )
            ]
        if len(parts) == 1:
            member = scope is not None and scope.kind in _MEMBER_SCOPES
            kind = "method" if member else "function"
            return [self.symbol(name, _join(prefix, parts), kind, span, signature, prefix)]
        parent = _join(prefix, parts[:-1])
        if self.namespaces is None:
            self.namespaces = self.namespace_names()
        kind = "function" if parts[-2] in self.namespaces else "method"
        return [self.symbol(name, f"{parent}::{name}", kind, span, signature, parent)]

    def namespace_names(self) -> set[str]:
        """Names known as namespaces and not as classes: `ns::f() {}` is then a function."""
        names = {self.node_text(n) for n in self.found.get("local.namespace", ())}
        for node in self.found.get("definition.namespace", ()):
            name = node.child_by_field_name("name")
            if name is not None:
                names.add(self.node_text(name))
        names = {name.rsplit("::", 1)[-1].strip() for name in names}
        for capture in ("definition.class", "definition.struct", "definition.union"):
            for node in self.found.get(capture, ()):
                name = node.child_by_field_name("name")
                if name is not None:
                    names.discard(self.node_text(name).rsplit("::", 1)[-1].split("<", 1)[0])
        return names

    def symbol(
        self,
        name: str,
        qualified_name: str,
        kind: str,
        anchor: Node | _Span,
        signature: str,
        parent: str | None,
        is_definition: bool = True,
        documented: bool = True,
    ) -> Symbol:
        start_byte, end_byte = anchor.start_byte, anchor.end_byte
        start_row, start_col = anchor.start_point
        end_row, end_col = anchor.end_point
        if end_col == 0 and end_byte > start_byte and self.source[end_byte - 1] == 10:
            # A `#define` ends after its newline: end it on its own last line instead.
            end_byte -= 2 if self.source[end_byte - 2 : end_byte] == b"\r\n" else 1
            end_row -= 1
            end_col = end_byte - (self.source.rfind(b"\n", 0, end_byte) + 1)
        if kind in SCOPE_KINDS:
            self.scope_names.add(qualified_name)
        return Symbol(
            name,
            qualified_name,
            kind,
            start_row + 1,
            end_row + 1,
            start_col,
            end_col,
            start_byte,
            end_byte,
            signature,
            parent,
            self.docs.get(start_byte, self.plain_docs.get(start_byte)) if documented else None,
            is_definition,
        )

    def build(self, kind: str, node: Node, anchor: Node, scope: Symbol | None) -> list[Symbol]:
        """The symbols one captured declaration defines: none, one, or a few."""
        if kind == "function" or kind == "method":
            found = self.function(node, anchor, scope, kind == "function")
        elif kind == "declaration":
            if scope is not None and scope.kind not in _DECLARATION_SCOPES:
                return []  # a local declaration (or a vexing parse) in a function body
            if (scope is None and _in_macro_headed_body(node)) or _in_lambda(node):
                # a local of a body whose function was not read (`Declare(f) {`), or of a
                # lambda in a namespace-scope initializer (rocksdb's option tables)
                return []
            found = self.function(node, anchor, scope, False)
            if found is None:
                return self.variables(node, anchor, scope) or self.annotated(node, anchor, scope)
        elif kind == "macro":
            found = self.macro(node)
        elif kind == "enumerator":
            found = self.enumerator(node, scope)
        elif kind == "field":
            return self.fields(node, anchor, scope)
        elif kind == "namespace":
            found = self.namespace(node, anchor, scope)
        elif kind == "type":
            if node.type == "type_definition":
                return self.typedef(node, anchor, scope)
            found = self.alias(node, anchor, scope)
        else:
            found = self.class_like(kind, node, anchor, scope)
        return [found] if found is not None else []

    def namespace(self, node: Node, anchor: Node, scope: Symbol | None) -> Symbol | None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            parts = ["(anonymous)"]
        else:
            self.name_starts.add(name_node.start_byte)
            parts = [p.strip() for p in self.node_text(name_node).split("::") if p.strip()]
            if not parts or not all(_IDENTIFIER.fullmatch(part) for part in parts):
                return None  # recovery read a run of tokens as the name
        body = node.child_by_field_name("body")
        prefix = scope.qualified_name if scope else None
        signature = self.header(anchor.start_byte, (body or node).start_byte)
        parent = _join(prefix, parts[:-1]) or None
        return self.symbol(parts[-1], _join(prefix, parts), "namespace", anchor, signature, parent)

    def class_like(
        self, kind: str, node: Node, anchor: Node, scope: Symbol | None
    ) -> Symbol | None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        path = self.name_path(name_node) if name_node is not None else None
        if path is None or body is None:
            return None  # anonymous: its members belong to the enclosing symbol
        parts, is_global = path
        prefix = None if is_global or scope is None else self.lookup(scope.qualified_name, parts)
        signature = self.header(anchor.start_byte, body.start_byte)
        parent = _join(prefix, parts[:-1]) or None
        return self.symbol(parts[-1], _join(prefix, parts), kind, anchor, signature, parent)

    def function(
        self, node: Node, anchor: Node | _Span, scope: Symbol | None, is_definition: bool
    ) -> Symbol | None:
        """A function or method, defined or only declared."""
        if not is_definition and node.start_byte in self.friends:
            return None  # `friend bool operator==(...);` declares no member
        if not is_definition and _annotated_name(node) is not None:
            return None  # `int count_ GUARDED_BY(mu_);`: a variable, not `GUARDED_BY`
        declarator = node.child_by_field_name("declarator")
        if declarator is None:
            return None
        if declarator.type == "array_declarator" and _macro_named(declarator) is not None:
            return None  # pcre2's `extern const int PRIV(utf8_table1)[];`: an array, named below
        if declarator.type == "parenthesized_declarator" and is_definition:
            return self.macro_named_function(node, declarator, anchor, scope)
        kind_node = node.child_by_field_name("type")
        if is_definition and kind_node is not None and kind_node.type == "macro_type_specifier":
            found = self.function_in_macro_type(node, kind_node, anchor, scope)
            if found is not None:
                return found
        name_node, name_kind = _function_name(declarator)
        if name_kind == "macro_named" and name_node and node.child_by_field_name("type") is None:
            # `static constexpr result_type (min)() {` (Catch2): no type before it, so the first
            # word is the return type and the name the one in parentheses (kept out of reach of
            # a `min` macro), not a name a macro makes (brotli's `static void FN(Init)(...)`).
            name_node, name_kind = _parenthesized_name(name_node) or (name_node, name_kind)
        wrapper = name_node.parent if name_node is not None else None
        if wrapper is not None and wrapper.type == "parameter_declaration" and not is_definition:
            return None  # `Error LOG(std::string)(unsigned);`: a macro's call, no method named
        path = self.name_path(name_node, name_kind) if name_node is not None else None
        if path is None:
            return None
        parts, is_global = path
        parts = self.misread_conversion(node, parts, is_global)  # `Foo::operator bool`
        name = parts[-1]
        if name.encode() in _C_KEYWORDS:
            return None  # `MACRO if (x) {...}` read as a function named `if`
        prefix = None if is_global or scope is None else self.lookup(scope.qualified_name, parts)
        end = declarator.end_byte
        signature = self.header(anchor.start_byte, end)
        if not is_definition and node.end_byte - end > 4:
            # An in-class `= default` parses as a definition already; this is the safety net.
            is_definition = _DEFAULTED.search(self.source, end, node.end_byte) is not None
        if len(parts) == 1:  # the common case, kept cheap
            member = scope is not None and scope.kind in _MEMBER_SCOPES
            if member and not is_definition and _macro_call_in_class(node, declarator, name, scope):
                # `LLVM_ATTRIBUTE_DEPRECATED(void insertEdge(..), "use ..");` wraps a method
                # (LLVM: 99 methods were named after the macro); anything else writes members
                # no method is named after
                inner = _wrapped_declaration(declarator)
                if inner is None:
                    return None
                name = self.node_text(inner)
            written = name
            if is_definition and not member and node.child_by_field_name("type") is None:
                name, written = self.test_macro_name(name, declarator) or (name, name)
            qualified_name = f"{prefix}::{written}" if prefix else written
            kind = "method" if member else "function"
            return self.symbol(name, qualified_name, kind, anchor, signature, prefix, is_definition)
        parent = _join(prefix, parts[:-1])
        if self.namespaces is None:
            self.namespaces = self.namespace_names()
        kind = "function" if parts[-2] in self.namespaces else "method"
        return self.symbol(
            name, f"{parent}::{name}", kind, anchor, signature, parent, is_definition
        )

    def misread_conversion(self, node: Node, parts: list[str], is_global: bool) -> list[str]:
        """`constexpr uint128::operator bool() const`: after a specifier, tree-sitter-cpp reads
        `uint128::operator` as the return type and `bool` as the function's name (abseil's
        int128.h: `bool`, `char`, `int`... as free functions; simdjson's `inline
        element::operator std::string_view()` as `std::string_view`). The name is then the
        conversion operator's, to the type as written, in the type's scope; otherwise `parts`
        as they were."""
        type_node = node.child_by_field_name("type")
        if type_node is None or type_node.type != "qualified_identifier":
            return parts
        scopes = []  # `A::B::operator` nests: A, then `B::operator` (graphite2's GlyphCache)
        last: Node | None = type_node
        while last is not None and last.type == "qualified_identifier":
            scope = last.child_by_field_name("scope")
            if scope is None:
                return parts
            scopes.append(self.node_text(scope).replace(" ", ""))
            last = last.child_by_field_name("name")
        if last is None or self.node_text(last) != "operator":
            return parts
        target = "::".join(parts)
        return [
            *"::".join(scopes).split("::"),
            f"operator {'::' if is_global else ''}{target}",
        ]

    def macro_named_function(
        self, node: Node, declarator: Node, anchor: Node | _Span, scope: Symbol | None
    ) -> Symbol | None:
        """`SYSCALL_DEFINE0(getpid) { ... }`: tree-sitter reads a function of type
        `SYSCALL_DEFINE0` whose declarator is `(getpid)`, and no function name was found (the
        kernel's `getpid`, `gettid`, `fork`, `sched_yield`...). Named `getpid`, qualified as
        written, `SYSCALL_DEFINE0(getpid)`: the macro's `#define` is mostly in a header
        (lighttpd's `REQUEST_FUNC(mod_expire_handler)`, 215 handlers defined by plugin.h), and
        `repomap symbols mod_expire_handler` found none. When this file's `#define` of the macro
        opens a function of its argument's name, both are `getpid`; None when it is not that
        shape."""
        kind = node.child_by_field_name("type")
        inner = declarator.named_children[0] if declarator.named_child_count == 1 else None
        if kind is None or kind.type != "type_identifier" or inner is None:
            return None
        if node.start_point[1] != 0:  # indented: a loop macro in a body tree-sitter lost
            return None  # (`CAP_FOR_EACH_U32(i) {` in security/commoncap.c)
        macro = self.node_text(kind)
        if inner.type != "identifier":
            return None
        name = self.node_text(inner)
        if self.defines_function_named_by_argument(macro):
            written = name  # libtiff's `DECLAREContigPutFunc(putgreytile) {`: a plain function
        elif not macro.islower():  # a capital in it: `SYSCALL_DEFINE0`, `DeclarePutFunc`
            written = f"{macro}({name})"
            if _names_tested_function(macro, name):
                name = written
        else:
            return None  # `foreach(x) {`: more likely a loop whose function was lost
        prefix = scope.qualified_name if scope is not None and scope.kind == "namespace" else None
        signature = self.header(anchor.start_byte, declarator.end_byte)
        qualified_name = f"{prefix}::{written}" if prefix else written
        return self.symbol(name, qualified_name, "function", anchor, signature, prefix, True)

    def function_in_macro_type(
        self, node: Node, kind_node: Node, anchor: Node | _Span, scope: Symbol | None
    ) -> Symbol | None:
        """libpng's `static PNG_FUNCTION(void, png_longjmp, (..), PNG_NORETURN) {`: tree-sitter
        reads the macro's call, up to the parameter list, as the return type and a word after
        it as the name (`PNG_NORETURN`), which no function has. The function is the one the
        macro's arguments name (as without `static`, a call then a block); None when they
        name none."""
        body = node.child_by_field_name("body")
        opening = self.source.find(b"(", kind_node.start_byte, kind_node.end_byte)
        if body is None or opening < 0:
            return None
        depth, closing = 0, -1
        for token in _ARGUMENT_TOKEN.finditer(self.source, opening, body.start_byte):
            if token[0] == b"(":
                depth += 1
            elif token[0] == b")":
                depth -= 1
                if depth == 0:
                    closing = token.start()
                    break
        named = _name_before_parameters(self.source, opening + 1, closing) if closing > 0 else None
        if named is None:
            return None
        prefix = scope.qualified_name if scope is not None and scope.kind == "namespace" else None
        signature = self.header(anchor.start_byte, closing + 1)
        qualified_name = f"{prefix}::{named}" if prefix else named
        return self.symbol(named, qualified_name, "function", anchor, signature, prefix, True)

    def defines_function_named_by_argument(self, macro: str) -> bool:
        """Whether this file's `#define MACRO(name)` opens a function of that name, as libtiff's
        `#define DECLAREContigPutFunc(name) static void name(TIFFRGBAImage *img, ...)` does: a
        `MACRO(arg) {` then defines the function `arg` (63 functions were lost, and their 267
        locals read as the file's variables). Read from the source once per macro."""
        known = self.argument_named_macros.get(macro)
        if known is None:
            found = re.search(
                rb"#[ \t]*define[ \t]+"
                + re.escape(macro.encode())
                + rb"\([ \t]*(\w+)[ \t]*\)((?:\\\r?\n|[^\n])*)",
                self.source,
            )
            known = found is not None and (
                re.search(rb"\b" + found[1] + rb"[ \t]*\(", found[2]) is not None
            )
            self.argument_named_macros[macro] = known
        return known

    def test_macro_name(self, name: str, declarator: Node) -> tuple[str, str] | None:
        """`TEST(ParserTest, HandlesEmpty) { .. }` (GoogleTest), `BOOST_AUTO_TEST_CASE(name)`:
        a function a macro defines outside any class, read by tree-sitter-cpp as a function
        `TEST` without a return type taking parameters of types `ParserTest` and `HandlesEmpty`.
        Its name and the name it is qualified by: as written, every argument kept (each test was
        one more `TEST`, and `repomap symbols HandlesEmpty` found none), but a single argument
        is the name, as C's `macro_named_function` has it (`BOOST_AUTO_TEST_CASE(test_add)`:
        `test_add`), and a name before a parameter list among them is the function's (libpng's
        `PNG_FUNCTION`, see _name_before_parameters); None when it is not that shape."""
        if declarator.type != "function_declarator" or not _MACRO_NAME.fullmatch(name):
            return None
        parameters = declarator.child_by_field_name("parameters")
        if parameters is not None and parameters.end_byte - parameters.start_byte > 2:
            # libpng's `PNG_FUNCTION(void, png_error, (..), PNG_NORETURN) {` in C++
            named = _name_before_parameters(
                self.source, parameters.start_byte + 1, parameters.end_byte - 1
            )
            if named is not None:
                return named, named
        arguments = []
        for parameter in parameters.named_children if parameters is not None else ():
            kind = (
                parameter.child_by_field_name("type") if parameter.named_child_count == 1 else None
            )
            if kind is None or kind.type != "type_identifier":
                return None  # `FOO(int x)`: a real parameter list
            arguments.append(kind)
        if len(arguments) == 1:
            argument = self.node_text(arguments[0])
            written = f"{name}({argument})"
            if self.defines_function_named_by_argument(name):
                written = argument
            elif _names_tested_function(name, argument):
                return written, written  # `TEST(strv_find)`: a use of strv_find, as it was
            self.name_starts.add(arguments[0].start_byte)  # its own name: no use of itself
            return argument, written
        written = f"{name}({', '.join(self.node_text(a) for a in arguments)})"
        return (written, written) if arguments else None

    def variables(self, node: Node, anchor: Node, scope: Symbol | None) -> list[Symbol]:
        """Namespace-scope variables and constants: `int a = 1, *b;` declares two."""
        if (scope is not None and scope.kind != "namespace") or (
            node.has_error and not _directives_misplaced(node)
        ):
            return []  # locals and members are not symbols, nor is a broken parse
        declarators = node.children_by_field_name("declarator")
        if not declarators:
            return []
        specifiers = {
            self.node_text(c)
            for c in node.children
            if c.type in ("type_qualifier", "storage_class_specifier")
        }
        type_node = node.child_by_field_name("type")
        # The shared type, then each declarator without its initialiser: `const int *b`.
        type_part = self.header_around_body(anchor.start_byte, declarators[0].start_byte, type_node)
        # `struct S {...} s;`: a doc comment documents the struct, not the variable.
        documented = type_node is None or type_node.type not in _CLASS_KINDS
        symbols = []
        for declarator in declarators:
            has_value = declarator.type == "init_declarator"
            inner = declarator.child_by_field_name("declarator") if has_value else declarator
            name_node, pointer = _declared_name(inner)
            named = _macro_named(inner) if inner is not None else None
            path = self.name_path(name_node) if name_node is not None else None
            if inner is None:
                continue
            if named is not None:  # `PRIV(OP_lengths)[] = {..}`, as its functions are named
                path = ([named], False)
            elif path is None or not _IDENTIFIER.fullmatch(path[0][-1]):
                continue
            if path[0][-1].encode() in _NOT_VARIABLE_NAMES:
                continue  # `DEFINE_CONVERT(int);` read as a variable `int` (yaml-cpp's convert.h)
            parts, is_global = path
            prefix = (
                None if is_global or scope is None else self.lookup(scope.qualified_name, parts)
            )
            constant = "constexpr" in specifiers or ("const" in specifiers and not pointer)
            signature = f"{type_part} {self.header(declarator.start_byte, inner.end_byte)}"
            symbols.append(
                self.symbol(
                    parts[-1],
                    _join(prefix, parts),
                    "constant" if constant else "variable",
                    anchor,
                    signature.strip(),
                    _join(prefix, parts[:-1]) or None,
                    has_value or "extern" not in specifiers,
                    documented,
                )
            )
        return symbols

    def fields(self, node: Node, anchor: Node, scope: Symbol | None) -> list[Symbol]:
        """A record's data members: `int a, *b;` declares two, `void (*on_event)(int);` one
        (a member function's declaration is read as a method, a macro's call as nothing)."""
        if scope is None or scope.kind not in _MEMBER_SCOPES:
            return []  # an anonymous record's outside any other, a local type's
        declarators = node.children_by_field_name("declarator")
        if not declarators:
            return []  # `struct { .. };` inside a record: its members are the record's
        type_node = node.child_by_field_name("type")
        type_part = self.header_around_body(anchor.start_byte, declarators[0].start_byte, type_node)
        type_part = type_part.rstrip()
        symbols = []
        for declarator in declarators:
            if declarator.type == "function_declarator":
                inner = declarator.child_by_field_name("declarator")
                if inner is None or inner.type != "parenthesized_declarator":
                    continue  # `void run();`, `DECLARE_BITMAP(mask, N);`: no data member
                if _declares_function(inner):
                    continue  # `int (*get(void))(int);`: a method returning a function pointer
            # An annotation tree-sitter cannot read (`const char __user *data;`, `struct s
            # *__percpu *sgc;`) is an ERROR beside the declarator: its name is still the field's.
            name_node, _ = _declared_name(declarator)
            if name_node is None or name_node.type != "field_identifier" or name_node.has_error:
                continue
            name = self.node_text(name_node)
            signature = f"{type_part} {self.header(declarator.start_byte, declarator.end_byte)}"
            symbols.append(
                self.symbol(
                    name,
                    _join(scope.qualified_name, [name]),
                    "field",
                    anchor,
                    signature.strip(),
                    scope.qualified_name,
                )
            )
        return symbols

    def annotated(self, node: Node, anchor: Node, scope: Symbol | None) -> list[Symbol]:
        """The namespace-scope variable of `EXTERN long Columns INIT(= 80);` (Vim's globals.h),
        whose parse holds an error (_annotated_name); its signature ends at its name."""
        found = _annotated_name(node) if scope is None or scope.kind == "namespace" else None
        if found is None:
            return []
        name_node, declarator = found
        name = self.node_text(name_node)
        prefix = scope.qualified_name if scope is not None else None
        signature = self.header(anchor.start_byte, name_node.end_byte)
        has_value = declarator.type == "init_declarator"
        return [
            self.symbol(
                name,
                f"{prefix}::{name}" if prefix else name,
                "variable",
                anchor,
                signature,
                prefix,
                has_value or not signature.startswith("extern"),
            )
        ]

    def hidden_macros(self, start: int, end: int) -> list[Symbol]:
        """The `#define`s in text the parse did not read, from `start` to `end`."""
        found = []
        for define in _HIDDEN_DEFINE.finditer(self.source, start, end):
            name_start = define.start(1)
            self.name_starts.add(name_start)
            signature = self.header(define.start(), define.end(2) if define[2] else define.end(1))
            last = define.end()
            while last > define.start() and self.source[last - 1 : last] in (b"\n", b"\r"):
                last -= 1
            span = _Span(
                define.start(), last, _point(self.source, define.start()),
                _point(self.source, last), define[1].decode("utf-8", "replace"), last, "macro",
            )  # fmt: skip
            found.append(self.symbol(span.name, span.name, "macro", span, signature, None))
        if found:  # the text scan took each name for a use: it is the definition's own
            own = {define.start(1) for define in _HIDDEN_DEFINE.finditer(self.source, start, end)}
            self.macro_names = [(name, at) for name, at in self.macro_names if at not in own]
        return found

    def enumerator(self, node: Node, scope: Symbol | None) -> Symbol | None:
        """An enum's constant: `RED = 1`, its enum the parent (an anonymous enum's: the scope
        around it). It is named where the language puts it: `Color::Red` in an `enum class`; in
        the enum's own scope for a plain or anonymous enum (`ns::Red`; C flattens every name
        later)."""
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.start_byte == name_node.end_byte:
            return None
        if on_directive_line(self.source, name_node.start_byte):
            return None  # `, A\n#ifdef FEAT_X\n , B`: tree-sitter-c took `FEAT_X` for a name
        listing = node.parent
        while listing is not None and listing.type != "enumerator_list":
            listing = listing.parent
        if listing is not None and listing.has_error and self.in_macro_call(listing, name_node):
            return None  # `typedef enum { ERROR_CODES_LIST(ITEM_, COMMA_) } Code;` (brotli)
        self.name_starts.add(name_node.start_byte)
        name = self.node_text(name_node)
        # A function's local enum is not named in it: nothing outside can name its constants.
        around = scope is not None and scope.kind in ("enum", *_ENUM_SCOPES)
        parent = scope.qualified_name if scope is not None and around else None
        if scope is not None and scope.kind == "enum" and not _scoped_enum(node):
            qualified_name = _join(scope.qualified_name.rpartition("::")[0] or None, [name])
        else:  # an `enum class`'s, or an anonymous enum's in its namespace or class (`vk::a`)
            qualified_name = _join(parent, [name])
        signature = self.header(node.start_byte, node.end_byte)
        return self.symbol(name, qualified_name, "constant", node, signature, parent)

    def lookup(self, prefix: str, parts: list[str]) -> str | None:
        """The scope a qualified name written inside `prefix` names (cpp_namespaces.looked_up,
        among the namespaces and classes read so far)."""
        if len(parts) < 2 or parts[0] not in prefix:
            return prefix  # the common case, kept cheap
        return "::".join(looked_up(prefix.split("::"), parts, self.scope_names)) or None

    def in_macro_call(self, listing: Node, name: Node) -> bool:
        """Whether `name` in an enum's list is a macro called there, or inside its arguments."""
        after = self.source[name.end_byte : name.end_byte + 80].lstrip()
        if after.startswith(b"("):
            return True
        spans = self.parenthesized.get(listing.start_byte)
        if spans is None:  # once per list: each enumerator looked up, not counted again
            spans = self.parenthesized[listing.start_byte] = _parenthesized(
                self.source, listing.start_byte, listing.end_byte
            )
        at = bisect_right(spans, (name.start_byte, 1 << 62)) - 1
        return at >= 0 and spans[at][0] <= name.start_byte < spans[at][1]

    def macro(self, node: Node) -> Symbol | None:
        name_node = node.child_by_field_id(self.name_field)
        if name_node is None:
            return None
        name_start, name_end = name_node.start_byte, name_node.end_byte
        if name_start == name_end:
            return None
        self.name_starts.add(name_start)
        params = node.child_by_field_id(self.parameters_field)
        name = self.source[name_start:name_end].decode("utf-8", "replace")
        if params is not None:
            signature = self.header(node.start_byte, params.end_byte)
        else:  # an object-like macro's value is what it is (`#define SQLITE_BUSY 5`): an
            # agent asked again for it (the MCP agent user), where a constant's shows its own
            value = node.child_by_field_id(self.value_field)
            if value is None and _include_guard(node, self.source[name_start:name_end]):
                return None
            signature = self.header(node.start_byte, value.end_byte if value else name_end)
            signature = _uncommented(signature.replace(" \\ ", " "))  # continued: one line
            if len(signature) > MACRO_SIGNATURE_CHARS:
                signature = signature[:MACRO_SIGNATURE_CHARS].rstrip() + "…"
        return self.symbol(name, name, "macro", node, signature, None)  # global, like the CPP

    def typedef(self, node: Node, anchor: Node, scope: Symbol | None) -> list[Symbol]:
        type_node = node.child_by_field_name("type")
        signature = self.header_around_body(anchor.start_byte, node.end_byte, type_node)
        signature = signature.rstrip("; ")
        prefix = scope.qualified_name if scope else None
        kind = "type"
        if type_node is not None and type_node.type in _CLASS_KINDS:
            anonymous = type_node.child_by_field_name("name") is None
            if anonymous and type_node.child_by_field_name("body") is not None:
                kind = _CLASS_KINDS[type_node.type]  # `typedef enum {...} Name;` names the enum
        symbols = []
        declarators = node.children_by_field_name("declarator")
        if (close := self._macro_type_end(type_node)) is not None:
            # `typedef PNG_CALLBACK(void, *png_rw_ptr, (png_structp, size_t));`, `typedef
            # STACK_OF(X509) chain;`: the macro's arguments are read as declarators, their
            # types as names. Its arguments name a pointer (the first form), else nothing.
            outside = [d for d in declarators if d.start_byte >= close]
            pointers = [
                d for d in declarators if d.start_byte < close and d.type == "pointer_declarator"
            ]
            declarators = outside + pointers or declarators
        for declarator in declarators:
            name_node, _ = _declared_name(declarator, _TYPEDEF_NAMES)
            if name_node is None or name_node.start_byte == name_node.end_byte:
                continue
            self.name_starts.add(name_node.start_byte)
            name = self.node_text(name_node)
            symbols.append(
                self.symbol(name, _join(prefix, [name]), kind, anchor, signature, prefix)
            )
            kind = "type"  # `typedef struct {...} A, *B;`: B is an alias
        return symbols

    def _macro_type_end(self, type_node: Node | None) -> int | None:
        """Where the call ends (after its `)`) when a typedef's type is a macro called in
        capitals (`PNG_CALLBACK(...)`), else None."""
        if type_node is None or type_node.type != "type_identifier":
            return None
        end = type_node.end_byte
        if self.source[end : end + 1] != b"(" or not _MACRO_NAME.fullmatch(
            self.node_text(type_node)
        ):
            return None
        depth = 0
        for at in range(end, min(len(self.source), end + _MACRO_CALL_BYTES)):
            byte = self.source[at]
            depth += (byte == 40) - (byte == 41)  # ( and )
            if depth == 0:
                return at + 1
        return None

    def alias(self, node: Node, anchor: Node, scope: Symbol | None) -> Symbol | None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.start_byte == name_node.end_byte:
            return None
        self.name_starts.add(name_node.start_byte)
        name = self.node_text(name_node)
        prefix = scope.qualified_name if scope else None
        signature = self.header(anchor.start_byte, node.end_byte).rstrip("; ")
        return self.symbol(name, _join(prefix, [name]), "type", anchor, signature, prefix)

    def name_path(self, node: Node, kind: str = "") -> tuple[list[str], bool] | None:
        """Segments of a maybe qualified name (`A::B<T>::f`: A, B, f) and whether `::` leads."""
        kind = kind or node.type
        if kind in _PLAIN_NAMES:  # the common case, kept cheap
            start = node.start_byte
            self.name_starts.add(start)
            name = self.source[start : node.end_byte].decode("utf-8", "replace")
            return ([name], False) if name else None
        parts: list[str] = []
        is_global = False
        while kind == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            if scope is None:
                is_global = not parts
            else:
                parts.append(self.simple_name(scope, scope.type))
            child = node.child_by_field_name("name")
            if child is None:
                return None
            node, kind = child, child.type
        if kind not in _FUNCTION_NAMES:
            return None  # `A::(anything else)` is a misread macro, not a name
        self.name_starts.add(node.start_byte)
        parts.append(self.simple_name(node, kind))
        # an `operator` name is read as written, up to its `(`: in a broken file that text can
        # hold a NUL byte, which no name has
        return (parts, is_global) if all(parts) and "\0" not in "".join(parts) else None

    def simple_name(self, node: Node, kind: str) -> str:
        """`Foo` of `Foo<T>`, `operator bool` of a conversion, else the name as written."""
        if kind in ("template_type", "template_function", "template_method"):
            name = node.child_by_field_name("name")
            if name is not None:
                return self.node_text(name)
        elif kind == "operator_cast":
            # Up to the parameters: `operator T *()` converts to `T*`, `operator T &()` to `T&`.
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "abstract_function_declarator":
                declarator = declarator.child_by_field_name("declarator") or _last_named(declarator)
            parameters = declarator.child_by_field_name("parameters") if declarator else None
            text = self.header(node.start_byte, (parameters or declarator or node).start_byte)
            return _SPACE_BEFORE_POINTER.sub("", text)
        elif kind == "operator_name":
            return _operator_name(self.node_text(node))
        return " ".join(self.node_text(node).split())

    # --- strings and `#define` bodies --------------------------------------------------------

    def scan_macro_bodies(self) -> None:
        """Comments, strings and names in `#define` bodies, which tree-sitter leaves as text."""
        for node in self.found.get("preproc.argument", ()):
            start = node.start_byte
            raw = self.source[start : node.end_byte]
            if _LITERAL_OR_COMMENT.search(raw) is None:  # names only: one comprehension
                self.macro_names += [
                    (name, start + m.start())
                    for m in _NUMBER_OR_NAME.finditer(raw)
                    if (name := m[1]) is not None and name not in KEYWORDS
                ]
                continue
            self.scan_text(start, node.end_byte, node.start_point.row + 1)

    def scan_text(self, start: int, end: int, row: int) -> None:
        """Comments, strings and names in text tree-sitter did not read (a `#define` body, a
        blanked branch), from `start` on line `row` to `end`."""
        raw = self.source[start:end]
        self.scanned.append((start, end))
        string_end = -1  # end of the previous string, to join `"a" "b"`
        for match in TOKEN.finditer(raw):
            group, token, at = match.lastgroup, match[0], match.start()
            if group == "name":
                if token not in KEYWORDS and token not in _DIRECTIVE_WORDS:
                    self.macro_names.append((token, start + at))
                continue
            if group != "comment" and group != "string":
                continue
            line = row + raw.count(b"\n", 0, at)
            end_line = line + token.count(b"\n")
            if group == "comment":
                kind = _comment_kind(token[:4])
                self.macro_comments.append(
                    (start + at, start + match.end(), kind, (line, end_line))
                )
                continue
            body = _string_body(token.decode("utf-8", "replace"))
            gap = _SPACE_OR_CONTINUATION.match(raw, max(string_end, 0), at)
            if string_end >= 0 and gap is not None and gap.end() == at:
                first_start, joined = self.macro_strings[-1]
                content = joined.content + body
                element = TextElement("string_literal", content, joined.line, end_line, None)
                self.macro_strings[-1] = (first_start, element)
            else:
                element = TextElement("string_literal", body, line, end_line, None)
                self.macro_strings.append((start + at, element))
            string_end = match.end()

    def strings(self, owners: _Owners) -> list[tuple[int, TextElement]]:
        """String literals by start offset; literals the compiler joins are one."""
        literals = []  # (start, end, body, node)
        read = []  # ranges tree-sitter read: literals, then macro bodies
        in_concatenation: set[int] = set()
        for node in self.found.get("string.concatenated", ()):
            parts = [c for c in node.named_children if c.type.endswith("string_literal")]
            in_concatenation.update(c.start_byte for c in parts)
            body = "".join(_string_body(self.node_text(c)) for c in parts)
            literals.append((node.start_byte, node.end_byte, body, node))
        for node in self.found.get("string", ()):
            start, end = node.start_byte, node.end_byte
            read.append((start, end))
            if start not in in_concatenation:
                literals.append((start, end, _string_body(self.text(start, end)), node))
        literals.sort(key=itemgetter(0))
        texts: list[tuple[int, TextElement]] = []
        previous_end = -1
        for start, end, body, node in literals:
            end_line = node.end_point.row + 1
            if texts and not self.source[previous_end:start].strip():
                # Only blanks between: recovery split `"a" PRIu64 "b"` (or `"a"` `"b"`).
                first, joined = texts[-1]
                content, line, owner = joined.content + body, joined.line, joined.symbol_name
                texts[-1] = (first, TextElement("string_literal", content, line, end_line, owner))
            else:
                line, owner = node.start_point.row + 1, owners.at(start)
                texts.append((start, TextElement("string_literal", body, line, end_line, owner)))
            previous_end = end
        for start, t in self.macro_strings:
            owner = owners.at(start)
            texts.append((start, TextElement(t.element_type, t.content, t.line, t.end_line, owner)))
        errors = self.found.get("error")
        if errors:
            read += [(n.start_byte, n.end_byte) for n in self.found.get("string.concatenated", ())]
            read += [(n.start_byte, n.end_byte) for n in self.found.get("preproc.argument", ())]
            read += self.scanned
            texts += self.strings_in_errors(errors, sorted(read), owners)
        return texts

    def strings_in_errors(
        self, errors: list[Node], read: list[tuple[int, int]], owners: _Owners
    ) -> list[tuple[int, TextElement]]:
        """Literals in ERROR nodes that tree-sitter's recovery split into `"` and words."""
        texts = []
        read_starts = [start for start, _ in read]
        scanned_to = -1
        for node in sorted(errors, key=attrgetter("start_byte")):
            start = node.start_byte
            # On to the end of the line: recovery can split one literal over two ERRORs.
            end = self.source.find(b"\n", node.end_byte)
            end = len(self.source) if end < 0 else end
            raw = self.source[start:end]
            if start < scanned_to or b'"' not in raw:
                continue  # inside an ERROR already scanned, or no literal at all
            scanned_to = end
            row = node.start_point.row + 1
            for match in TOKEN.finditer(raw):
                if match.lastgroup != "string":
                    continue
                at, until = start + match.start(), start + match.end()
                index = bisect_right(read_starts, until - 1) - 1
                if index >= 0 and read[index][1] > at:
                    continue  # tree-sitter read this literal
                line = row + raw.count(b"\n", 0, match.start())
                end_line = line + match[0].count(b"\n")
                body = _string_body(match[0].decode("utf-8", "replace"))
                texts.append(
                    (at, TextElement("string_literal", body, line, end_line, owners.at(at)))
                )
        return texts

    # --- references ------------------------------------------------------------------------

    def references(self, owners: _Owners) -> list[Reference]:
        """Names used, each once per enclosing symbol at its first line; definitions skipped."""
        source, defined = self.source, self.name_starts
        bounds, names = owners.bounds, owners.names
        first_use: dict[tuple[bytes, str | None], int] = {}
        get = first_use.get
        for capture in _REFERENCES:
            for node in self.found.get(capture, ()):  # the hottest loop: few attribute reads
                start = node.start_byte
                if start not in defined:
                    key = (source[start : node.end_byte], names[bisect_right(bounds, start) - 1])
                    if get(key, start) >= start:
                        first_use[key] = start
        for name, start in self.macro_names + self.recovered_calls():
            key = (name, names[bisect_right(bounds, start) - 1])
            if get(key, start) >= start:
                first_use[key] = start
        refs = []
        line, counted = 1, 0  # newlines are counted up to offset `counted`
        for (name, owner), start in sorted(first_use.items(), key=itemgetter(1)):
            line += source.count(b"\n", counted, start)
            counted = start
            if name and name not in CASTS and name not in _C_KEYWORDS:
                refs.append(Reference(name.decode("utf-8", "replace"), line, owner))
        return refs

    def recovered_calls(self) -> list[tuple[bytes, int]]:
        """Names called in the bodies of recovered functions: tree-sitter's captures there are
        whatever its recovery made of the text."""
        calls = []
        source = self.source
        for span in self.recovered_spans:
            for match in TOKEN.finditer(source, span.signature_end, span.end_byte):
                if match.lastgroup == "name" and _CALLED.match(source, match.end()):
                    name = match[0]
                    if name not in KEYWORDS and name not in NOT_MACROS:
                        calls.append((name, match.start()))
        return calls


def _names_tested_function(macro: str, argument: str) -> bool:
    """Whether a test macro's one argument names the function under test, not the test: the
    function systemd's `TEST(strv_find) {` makes is `test_strv_find`, and 598 of its 1,013
    tests named by their argument shared their name with the function they test (`show`,
    `refs` and the ranking's graph then took the test for it). jemalloc's
    `TEST_BEGIN(test_zero)` and expat's `START_TEST(test_xml_parse)` name the test itself."""
    return _TEST_MACRO.search(macro) is not None and not argument.lower().startswith("test")


def _name_before_parameters(source: bytes, start: int, end: int) -> str | None:
    """The function a macro's arguments (`source[start:end]`, inside its parentheses) name when
    one of them, after the first, is its parameter list: libpng's `PNG_FUNCTION(type, name,
    (params), attributes)` (22 core functions, png_malloc and png_error among them, were named
    `PNG_FUNCTION(type)`). The name is the last word of the argument before the list, which
    may be in parentheses itself (`(PNGCBAPI\npng_safe_error),(params)`: the list is then the
    second of the two); None when there is no such argument."""
    arguments: list[bytes] = []
    pieces: list[bytes] = []  # of the argument being read, comments left out
    depth, last = 0, start
    for token in _ARGUMENT_TOKEN.finditer(source, start, end):
        text = token[0]
        if text == b"(":
            depth += 1
        elif text == b")":
            depth -= 1
        elif text == b",":
            if depth == 0:
                pieces.append(source[last : token.start()])
                arguments.append(b"".join(pieces).strip())
                pieces, last = [], token.end()
        elif text[:2] in (b"//", b"/*"):
            pieces += [source[last : token.start()], b" "]
            last = token.end()
    pieces.append(source[last:end])
    arguments.append(b"".join(pieces).strip())
    lists = [
        index
        for index, argument in enumerate(arguments)
        if index > 0 and argument.startswith(b"(") and argument.endswith(b")")
    ]
    if not lists:
        return None
    index = lists[0]
    while index + 1 < len(arguments) and index + 1 in lists:
        index += 1  # `(PNGCBAPI name),(params)`: the last of adjacent lists is the parameters
    found = _NAME_ARGUMENT.fullmatch(arguments[index - 1])
    if found is None or bool(found[1]) != bool(found[3]) or found[2] in KEYWORDS:
        return None  # `void` before `(name)`: no name
    return found[2].decode()


def _directives_misplaced(node: Node) -> bool:
    """Whether each error in `node` is a directive line tree-sitter could not place, as one in
    an initializer list (glog's `kSignals[] = { {..},\n#if !defined(_WIN32)\n {..},\n#endif`):
    the declaration is whole around it, and the variable was lost."""
    stack = [node]
    while stack:
        for child in stack.pop().children:
            if child.type == "ERROR":
                if child.start_point[1] != 0 or child.text is None or child.text[:1] != b"#":
                    return False
            elif child.is_missing:
                return False
            elif child.has_error:
                stack.append(child)
    return True


def _in_order(nodes: list[Node]) -> tuple[list[Node], list[int]]:
    """`nodes` in document order and their start offsets (captures come in set order)."""
    starts = [n.start_byte for n in nodes]
    order = sorted(range(len(nodes)), key=starts.__getitem__)
    return [nodes[i] for i in order], [starts[i] for i in order]


def _template_anchors(templates: list[Node]) -> dict[int, Node]:
    """Start of each templated declaration -> its outermost template_declaration."""
    anchors: dict[int, Node] = {}
    for template in sorted(templates, key=attrgetter("start_byte")):  # outer before inner
        inner = _last_named(template)
        if inner is not None:
            anchors[inner.start_byte] = anchors.get(template.start_byte, template)
    return anchors


_SPACE_BY_PUNCTUATION = re.compile(r"\s+(?=\W)|(?<=\W)\s+")


def _operator_name(text: str) -> str:
    """An operator's name as C++ spells it most: `operator<<` of `operator <<`, `operator()` of
    `operator ( )`, `operator new[]` of `operator new [ ]` (Catch2 writes 141 with a space, and
    `symbols 'C::operator<<'` found them only by fuzzy match)."""
    words = " ".join(text.split())
    if not words.startswith("operator"):
        return words
    rest = _SPACE_BY_PUNCTUATION.sub("", words[len("operator") :].strip())
    return f"operator {rest}" if rest[:1].isalnum() or rest[:1] == "_" else f"operator{rest}"


def _parenthesized_name(declarator: Node) -> tuple[Node, str] | None:
    """The word in `X (word)`, read as a function declarator whose one parameter is a type."""
    parameters = declarator.child_by_field_name("parameters")
    only = parameters.named_children if parameters is not None else []
    if len(only) != 1 or only[0].type != "parameter_declaration" or only[0].named_child_count != 1:
        return None
    word = only[0].child_by_field_name("type")
    return (word, word.type) if word is not None and word.type in _PLAIN_NAMES else None


def _function_name(declarator: Node) -> tuple[Node | None, str]:
    """The name in a function declarator (`Foo::add` of `int *Foo::add(int) const`), its type."""
    while True:
        kind = declarator.type
        if kind == "function_declarator":
            name = declarator.child_by_field_name("declarator")
            name_kind = name.type if name is not None else ""
            if name_kind == "function_declarator" and name is not None:
                # `static void FN(Initialize)(...)` (brotli): a name a macro makes; named as
                # written, each one its own.
                inner = name.child_by_field_name("declarator")
                argument = name.child_by_field_name("parameters")
                if argument is not None and _MEMBER_POINTER.fullmatch(argument.text or b""):
                    return _NO_NAME  # `Error (Parser::*routine)(unsigned);`: a member variable
                if inner is not None and inner.type == "identifier" and argument is not None:
                    if _ONE_WORD.fullmatch(argument.text or b""):
                        return name, "macro_named"
                    wrapped = _qualified_argument(argument)
                    if wrapped is not None and _CAPITALS_NAME.fullmatch(inner.text or b""):
                        # `void GREENLET_NOINLINE(Greenlet::expose_frames)()` (greenlet): a
                        # macro cannot paste `::` into a name, so it only wraps this one.
                        return wrapped, wrapped.type
            if name_kind == "parenthesized_declarator" and name is not None:
                # `LUA_API int (lua_gettop) (lua_State *L);`: a name in parentheses, as Lua
                # writes its API so that a macro of the same name does not expand there.
                inner = name.named_children[0] if name.named_child_count == 1 else None
                if inner is not None and inner.type in ("identifier", "qualified_identifier"):
                    return inner, inner.type
            if name_kind not in _FUNCTION_NAMES:
                returned = _returning_function(name)
                if returned is None:
                    return _NO_NAME  # a pointer to a function, or a macro call read as one
                declarator = returned  # `void (*signal(int))(int)` returns a function pointer
                continue
            if name is not None and name_kind == "identifier":
                return _name_after_macro(name) or name, name_kind
            return name, name_kind
        if kind == "operator_cast":
            return declarator, kind
        if kind == "qualified_identifier":  # `Foo::operator bool() {}` has no function_declarator
            last: Node | None = declarator
            while last is not None and last.type == "qualified_identifier":
                last = last.child_by_field_name("name")
            is_cast = last is not None and last.type == "operator_cast"
            return (declarator, kind) if is_cast else _NO_NAME
        # `const Color (&EnumValuesColor())[3] {` (flatbuffers' generated code): a function
        # returning a reference to an array is named inside the array's and the parentheses'
        # declarators.
        if kind not in _WRAPPING_DECLARATORS:
            return _NO_NAME
        inner = declarator.child_by_field_name("declarator") or _last_named(declarator)
        if kind == "array_declarator" and (
            inner is None or inner.type != "parenthesized_declarator"
        ):
            return _NO_NAME  # no function returns an array: `char __bootdata(x)[N];` is data
        if inner is None:
            return _NO_NAME
        declarator = inner


_ENUM_SCOPES = ("namespace", "class", "struct", "union")  # an anonymous enum's constants'
_WRAPPING_DECLARATORS = frozenset(
    ("pointer_declarator", "reference_declarator", "attributed_declarator", "array_declarator",
     "parenthesized_declarator")
)  # fmt: skip


def _macro_call_in_class(node: Node, declarator: Node, name: str, scope: Symbol | None) -> bool:
    """`DISALLOW_COPY_AND_ASSIGN(Account);`, `DELETE_FUNC(Account);` in a class's body: a macro
    that writes members, not a method. Its name is in capitals with an underscore, and either
    it has no return type and is not the class's name (only a constructor has neither), or its
    one parameter is the class's name alone and its "type" another such macro
    (`Q_DISABLE_COPY(A)\n MACRO(A);`). ctags reads them as prototypes; no method is named after them."""
    if scope is None or "_" not in name or not _MACRO_NAME.fullmatch(name) or name == scope.name:
        return False
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return True
    parameters = declarator.child_by_field_name("parameters")
    return (
        type_node.type == "type_identifier"
        and "_" in (type_text := (type_node.text or b"").decode())
        and _MACRO_NAME.fullmatch(type_text) is not None
        and parameters is not None
        and parameters.named_child_count == 1
        and parameters.named_children[0].text == scope.name.encode()
    )


_INNER_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator"})
_INNER_NAMES = frozenset({"identifier", "field_identifier", "operator_name", "destructor_name"})


def _in_macro_headed_body(node: Node) -> bool:
    """Whether a declaration is a statement in the body of a `name(arg) {` head no function
    was read from (`foreach(x) {` at the top level): a local, not the file's variable. Only
    that shape: a broken parse's function also swallows the rest of a file (glib's gsignal.c,
    SDL's cpuinfo), whose declarations stay the file's."""
    body = node.parent
    outer = body.parent if body is not None and body.type == "compound_statement" else None
    if outer is None or outer.type != "function_definition":
        return False
    declarator = outer.child_by_field_name("declarator")
    return declarator is not None and declarator.type == "parenthesized_declarator"


def _in_lambda(node: Node) -> bool:
    """Whether a declaration is inside a lambda's body (up to the namespace or file it is in)."""
    parent = node.parent
    while parent is not None and parent.type not in _OUTSIDE_LAMBDAS:
        if parent.type == "lambda_expression":
            return True
        parent = parent.parent
    return False


_OUTSIDE_LAMBDAS = frozenset({"translation_unit", "declaration_list", "field_declaration_list"})


def _macro_named(declarator: Node) -> str | None:
    """`PRIV(name)` when a variable's declarator (through `[]` or `*`) is a macro in capitals
    called with one name (pcre2's `const uint8_t PRIV(OP_lengths)[] = {..}`, which pastes a
    prefix to it: 58 arrays and constants were named `PRIV`), else None."""
    while declarator.type in ("array_declarator", "pointer_declarator"):
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            return None
        declarator = inner
    if declarator.type != "function_declarator":
        return None
    macro = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters")
    if macro is None or parameters is None or macro.type != "identifier":
        return None
    if parameters.end_byte != declarator.end_byte:
        return None  # FreeType's `FT_LOCAL_ARRAY( T )\n  name[];`: the macro is the type
    name = (macro.text or b"").decode()
    if not _MACRO_NAME.fullmatch(name) or parameters.named_child_count != 1:
        return None
    argument = (parameters.named_children[0].text or b"").decode().strip()
    return f"{name}({argument})" if _IDENTIFIER.fullmatch(argument) else None


def _wrapped_declaration(declarator: Node) -> Node | None:
    """The name of the function a macro call's first argument declares (`MACRO(void f(int),
    "..")`: `f`), or None."""
    parameters = declarator.child_by_field_name("parameters")
    if parameters is None or not parameters.named_child_count:
        return None
    first = parameters.named_children[0]
    if first.type != "parameter_declaration" or first.child_by_field_name("type") is None:
        return None
    inner = first.child_by_field_name("declarator")
    while inner is not None and inner.type in _INNER_DECLARATORS:
        inner = inner.child_by_field_name("declarator") or inner.named_children[-1]
    if inner is None or inner.type != "function_declarator":
        return None
    name = inner.child_by_field_name("declarator")
    if name is None or name.type not in _INNER_NAMES or (name.text or b"") in _C_KEYWORDS:
        return None  # `DEFINE_SIZE_STATIC (4 + 5 * sizeof (HBUINT));` declares nothing
    return name


def _keyword_named(function: Node) -> bool:
    """A function definition tree-sitter read with a keyword for its name (see `function`)."""
    declarator = function.child_by_field_name("declarator")
    name = _function_name(declarator)[0] if declarator is not None else None
    return name is not None and (name.text or b"") in _C_KEYWORDS


def _qualified_argument(arguments: Node) -> Node | None:
    """The qualified name that is a macro call's one argument (`(Greenlet::expose_frames)`,
    which tree-sitter reads as a parameter of that type), or None (`(Parser::*routine)`, a
    pointer to a member function)."""
    if arguments.named_child_count != 1 or not _QUALIFIED_ONLY.fullmatch(arguments.text or b""):
        return None
    argument = arguments.named_children[0]
    if argument.type != "parameter_declaration" or argument.named_child_count != 1:
        return None
    name = argument.named_children[0]
    return name if name.type == "qualified_identifier" else None


def _first_guarded(conditional: Node) -> Node | None:
    """The first declaration inside `#if`/`#ifdef` (not its condition, a comment or `#else`)."""
    condition = conditional.child_by_field_name("condition")
    condition = condition or conditional.child_by_field_name("name")
    for child in conditional.named_children:
        if child.type not in _NOT_GUARDED and (
            condition is None or child.start_byte != condition.start_byte
        ):
            return child
    return None


def _returning_function(declarator: Node | None) -> Node | None:
    """The function declarator inside `(*f(int sig))` of `void (*f(int sig))(int)`, a
    function returning a pointer to a function; None for a pointer to a function `(*f)`."""
    while declarator is not None and declarator.type in (
        "parenthesized_declarator",
        "pointer_declarator",
        "attributed_declarator",
    ):
        declarator = declarator.child_by_field_name("declarator") or _last_named(declarator)
    return (
        declarator if declarator is not None and declarator.type == "function_declarator" else None
    )


def _name_after_macro(name: Node) -> Node | None:
    """The real name when a macro stands between the return type and it: tree-sitter reads
    `PyObject *FASTCALL_MSVC decode_true (...)` (ujson) as the function `FASTCALL_MSVC` with
    `decode_true` in an ERROR just before the parameters; the name is the identifier there.
    Whatever the macro's spelling: gnulib's `static size_t _GL_ATTRIBUTE_PURE\nstring_hash (`,
    glibc regex's `static void\ninternal_function\ninit_word_char (` (in git and bash); two
    names before one parameter list are never both the function's."""
    error = name.next_sibling
    if error is None or error.type != "ERROR" or error.next_sibling is None:
        return None
    if error.next_sibling.type != "parameter_list" or error.named_child_count != 1:
        return None
    inner = error.named_children[0]
    return inner if inner.type == "identifier" else None


def _annotated_name(node: Node) -> tuple[Node, Node] | None:
    """(the name, the declarator) of a declaration with a macro after its name: tree-sitter
    reads `EXTERN long Columns INIT(= 80);` (Vim) and `int count_ GUARDED_BY(mu_);` as a
    function declarator named by the macro, the name before it in an ERROR. None for any other
    declaration."""
    declarator = node.child_by_field_name("declarator")
    error = declarator.prev_sibling if declarator is not None else None
    if error is None or error.type != "ERROR" or error.named_child_count != 1:
        return None
    name = error.named_children[0]
    if name.type not in _PLAIN_NAMES or (name.text or b"") in _C_KEYWORDS:
        return None  # `noinline int FOO(void);`: `int` is the type, FOO the function
    assert declarator is not None  # the ERROR is its sibling
    function: Node | None = declarator
    if declarator.type == "init_declarator":  # `INIT(= 80)`: the `=` made it an initialiser
        function = declarator.child_by_field_name("declarator")
    macro = function.child_by_field_name("declarator") if function is not None else None
    if function is None or function.type != "function_declarator" or macro is None:
        return None
    if not _CAPITALS_NAME.fullmatch(macro.text or b""):
        return None
    # A macro's arguments, not parameters: bare names (`GUARDED_BY(mu_)`), or any after an
    # initialiser; `attr type FOO(void)` or `(int x)` is a function FOO.
    arguments = function.child_by_field_name("parameters")
    bare = arguments is not None and all(
        argument.type == "parameter_declaration"
        and argument.named_child_count == 1
        and argument.named_children[0].type == "type_identifier"
        for argument in arguments.named_children
    )
    return (name, declarator) if bare or declarator.type == "init_declarator" else None


def _declared_name(
    declarator: Node | None, names: frozenset[str] = _DECLARED_NAMES
) -> tuple[Node | None, bool]:
    """The name a variable or typedef declarator declares, and whether a pointer wraps it."""
    pointer = False
    while declarator is not None:
        kind = declarator.type
        if kind in names:
            return declarator, pointer
        if kind not in _WRAPPERS:
            return None, pointer
        pointer = pointer or kind == "pointer_declarator"
        declarator = declarator.child_by_field_name("declarator") or _last_named(declarator)
    return None, pointer


def _declares_function(parenthesized: Node) -> bool:
    """Whether the name inside `( .. )` is a function's (`(*get(void))`), not a pointer's."""
    node = _last_named(parenthesized)
    while node is not None:
        if node.type == "function_declarator":
            return True
        if node.type in _PLAIN_NAMES:
            return False
        node = node.child_by_field_name("declarator") or _last_named(node)
    return False


def _last_named(node: Node) -> Node | None:
    children = [c for c in node.named_children if c.type != "comment"]
    return children[-1] if children else None


def _scoped_enum(enumerator: Node) -> bool:
    """Whether an enumerator belongs to an `enum class` / `enum struct`."""
    listing = enumerator.parent
    specifier = listing.parent if listing is not None else None
    if specifier is None or specifier.type != "enum_specifier":
        return False
    return any(child.type in ("class", "struct") for child in specifier.children)


def _join(prefix: str | None, parts: list[str]) -> str:
    return "::".join([prefix, *parts] if prefix else parts)


@lru_cache(maxsize=4096)  # few distinct heads in real code; bounded for hostile input
def _comment_kind(head: bytes) -> str:
    """One of the six comment kinds, from a comment's first four bytes."""
    kind = _KIND_BY_HEAD.get(head) or _KIND_BY_HEAD.get(head[:3])
    return kind or (_LINE if head[:2] == b"//" else _BLOCK)


def _clean_comment(kind: str, raws: list[bytes]) -> str:
    """Comment text without delimiters or `*` margins, dedented like inspect.cleandoc."""
    cut = _MARKER_LENGTH[kind]
    if kind in _LINE_KINDS:
        if len(raws) == 1 and b"\n" not in raws[0]:
            return raws[0][cut:].decode("utf-8", "replace").strip()
        spaced = cut + 1  # the marker and one space after it go
        lines = [raw[spaced:] if raw[cut:spaced] == b" " else raw[cut:] for raw in raws]
        return _dedent(b"\n".join(lines).decode("utf-8", "replace"))
    body = raws[0][cut:].decode("utf-8", "replace")
    first, newline, rest = (body[:-2] if body.endswith("*/") else body).partition("\n")
    if not newline:
        return _BRIEF.sub("", first.strip(), count=1)
    # SQLite's `** text` margins: two stars when every line has them (a ` * **bold**` stays).
    written = [line for line in rest.split("\n") if line.strip()]
    margin = (
        _STARS_MARGIN
        if written and all(_STARS_MARGIN.match(line) for line in written)
        else _STAR_MARGIN
    )
    return _BRIEF.sub("", _dedent(f"{first}\n{margin.sub('', rest)}"), count=1)


def _dedent(text: str) -> str:
    """inspect.cleandoc without tab expansion: first line stripped, common indent removed."""
    first, _, rest = text.partition("\n")
    if rest:
        if " \n" in rest or "\t\n" in rest or "\r" in rest or rest[-1] in " \t":
            rest = _TRAILING_BLANKS.sub("", rest)
        if not _UNINDENTED.search(rest):  # every line is indented: remove the margin
            lines = rest.split("\n")
            margin = min((len(line) - len(line.lstrip()) for line in lines if line), default=0)
            rest = "\n".join([line[margin:] for line in lines])
    return f"{first.strip()}\n{rest}".strip("\n")


def _string_body(literal: str) -> str:
    """A literal without prefix, quotes or raw delimiters; escapes are kept as written."""
    quote = literal.find('"')
    if quote < 0:
        return literal
    if quote > 0 and literal[quote - 1] == "R":
        paren = literal.find("(", quote)
        if paren >= 0:
            closing = ")" + literal[quote + 1 : paren] + '"'
            end = len(literal) - len(closing) if literal.endswith(closing) else len(literal)
            return literal[paren + 1 : max(end, paren + 1)]
    body = literal[quote + 1 :]
    return body[:-1] if body.endswith('"') else body
