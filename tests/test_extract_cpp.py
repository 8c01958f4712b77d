"""The C++ extractor: symbols, references, comments, docstrings and string literals."""

from __future__ import annotations

import gc
import time
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap.extractors import cpp, extract
from repomap.extractors.cpp_macros import blank_macros
from repomap.extractors.cpp_namespaces import definitions, merged
from repomap.extractors.treesitter import query

HEADER = b"""\
// Copyright banner
// second line

#ifndef DEMO_H
#define DEMO_H

#include "demo/base.h"
#include <vector>

#define LLVM_DEBUG(X) do { X; } while (false)
#define MAX_SIZE 64 // bytes

namespace llvm {
namespace {
int hidden() { return 1; }
}

class Forward;

/// A vector that is small.
/// Second line of the doc.
template <typename T, unsigned N = 4>
class SmallVector : public SmallVectorImpl<T> {
public:
  SmallVector();
  ~SmallVector() { destroy(); }
  /** Adds \\p A to every element. */
  int add(int A) const;
  bool operator==(const SmallVector &RHS) const { return size() == RHS.size(); }
  unsigned Size = 0; ///< number of elements
  enum class Kind : unsigned { Small, Large };
  using value_type = T;
  friend class Other;
  friend bool operator<(const SmallVector &, const SmallVector &);
};

int SmallVector::add(int A) const {
  const char *Msg = "added " "twice";
  return helper(A, Msg);
}

void ns_free(int);
struct Point { int X, Y; };
union Bits { int I; float F; };
typedef unsigned long size_type;
typedef enum { Red, Green } Color;
constexpr int Limit = 10;
} // namespace llvm
#endif
"""


def symbols(source: bytes, fields: bool = False) -> list[tuple[str, str, int]]:
    """The symbols of `source`; a record's data members (`field`) only with `fields`: these
    tests were written about the declarations around them."""
    return [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "a.h").symbols
        if fields or s.kind != "field"
    ]


def texts(source: bytes) -> list[tuple[str, str, int, str | None]]:
    return [
        (t.element_type, t.content, t.line, t.symbol_name) for t in cpp.extract(source, "a.h").texts
    ]


def by_name(source: bytes) -> dict[str, object]:
    return {s.qualified_name: s for s in cpp.extract(source, "a.h").symbols}


# --- symbols --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "qualified_name, kind, line, is_definition",
    [
        ("LLVM_DEBUG", "macro", 10, True),
        ("MAX_SIZE", "macro", 11, True),
        ("llvm", "namespace", 13, True),
        ("llvm::(anonymous)", "namespace", 14, True),
        ("llvm::(anonymous)::hidden", "function", 15, True),
        ("llvm::SmallVector", "class", 22, True),  # the range starts at `template`
        ("llvm::SmallVector::SmallVector", "method", 25, False),
        ("llvm::SmallVector::~SmallVector", "method", 26, True),
        ("llvm::SmallVector::operator==", "method", 29, True),
        ("llvm::SmallVector::Kind", "enum", 31, True),
        ("llvm::SmallVector::value_type", "type", 32, True),
        ("llvm::ns_free", "function", 42, False),
        ("llvm::Point", "struct", 43, True),
        ("llvm::Bits", "union", 44, True),
        ("llvm::size_type", "type", 45, True),
        ("llvm::Color", "enum", 46, True),  # typedef enum {...} Color names the enum
        ("llvm::Limit", "constant", 47, True),
    ],
)
def test_header_symbols_have_kind_line_and_definition_flag(
    qualified_name: str, kind: str, line: int, is_definition: bool
) -> None:
    symbol = by_name(HEADER)[qualified_name]
    assert (symbol.kind, symbol.start_line, symbol.is_definition) == (kind, line, is_definition)


def test_the_header_s_include_guard_is_no_symbol() -> None:
    # `#ifndef DEMO_H` / `#define DEMO_H`: it names only the file (a search user's outline).
    assert "DEMO_H" not in by_name(HEADER)


def test_in_class_declaration_and_out_of_line_definition_share_a_qualified_name() -> None:
    adds = [s for s in cpp.extract(HEADER, "a.h").symbols if s.name == "add"]
    assert [(s.kind, s.start_line, s.is_definition, s.parent) for s in adds] == [
        ("method", 28, False, "llvm::SmallVector"),
        ("method", 37, True, "llvm::SmallVector"),
    ]
    assert {s.qualified_name for s in adds} == {"llvm::SmallVector::add"}


def test_forward_declarations_and_friends_are_not_symbols() -> None:
    names = {s.name for s in cpp.extract(HEADER, "a.h").symbols}
    assert not names & {"Forward", "Other", "operator<"}


@pytest.mark.parametrize(
    "qualified_name, signature",
    [
        (
            "llvm::SmallVector",
            "template <typename T, unsigned N = 4> class SmallVector : public SmallVectorImpl<T>",
        ),
        ("llvm::SmallVector::operator==", "bool operator==(const SmallVector &RHS) const"),
        ("llvm::SmallVector::Kind", "enum class Kind : unsigned"),
        ("llvm::SmallVector::value_type", "using value_type = T"),
        ("LLVM_DEBUG", "#define LLVM_DEBUG(X)"),
        ("MAX_SIZE", "#define MAX_SIZE 64"),  # the value, not its comment
        ("llvm", "namespace llvm"),
        ("llvm::Color", "typedef enum {…} Color"),
        ("llvm::Limit", "constexpr int Limit"),
        ("llvm::ns_free", "void ns_free(int)"),
    ],
)
def test_signature_is_the_header_without_body(qualified_name: str, signature: str) -> None:
    assert by_name(HEADER)[qualified_name].signature == signature


def test_signature_is_one_line_without_comments() -> None:
    source = b"int add(int a,   // the left side\n        int b) { return a + b; }\n"
    assert by_name(source)["add"].signature == "int add(int a, int b)"


def test_out_of_line_definition_in_a_namespace_is_a_qualified_method() -> None:
    source = b"namespace ns {\nint Foo::add(int a) const { return a; }\n}\n"
    add = by_name(source)["ns::Foo::add"]
    assert (add.name, add.kind, add.parent, add.is_definition) == ("add", "method", "ns::Foo", True)
    assert add.signature == "int Foo::add(int a) const"


@pytest.mark.parametrize(
    "source, expected",
    [
        # A known namespace qualifier makes a free function; a class or unknown one a method.
        (b"namespace sys { void f(); }\nvoid sys::f() {}\n", ("sys::f", "function", "sys")),
        (b"using namespace llvm;\nvoid llvm::g() {}\n", ("llvm::g", "function", "llvm")),
        (b"struct A { void f(); };\nvoid A::f() {}\n", ("A::f", "method", "A")),
        (b"void Unknown::f() {}\n", ("Unknown::f", "method", "Unknown")),
        (b"template <class T> Box<T>::Box() {}\n", ("Box::Box", "method", "Box")),
        (b"A::~A() {}\n", ("A::~A", "method", "A")),
        (
            b"bool A::operator<(const A &o) const { return true; }\n",
            ("A::operator<", "method", "A"),
        ),
        (b"A::operator bool() const { return true; }\n", ("A::operator bool", "method", "A")),
    ],
)
def test_out_of_line_definition_is_a_method_unless_qualified_by_a_namespace(
    source: bytes, expected: tuple[str, str, str]
) -> None:
    defined = [s for s in cpp.extract(source, "a.cpp").symbols if s.is_definition]
    last = defined[-1]
    assert (last.qualified_name, last.kind, last.parent) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"struct S {\n  S() = default;\n};\n", [("S", "struct", 1), ("S::S", "method", 2)]),
        (
            b"class C {\n  Foo *create();\n  const Foo &get() const;\n  operator bool() const;\n};\n",
            [
                ("C", "class", 1),
                ("C::create", "method", 2),
                ("C::get", "method", 3),
                ("C::operator bool", "method", 4),
            ],
        ),
        (b"struct P { void (*callback)(int); int *ptr; };\n", [("P", "struct", 1)]),
        (b"void f() { int local = 1; void g(int); }\n", [("f", "function", 1)]),
        (b"namespace a::b { void f(); }\n", [("a::b", "namespace", 1), ("a::b::f", "function", 1)]),
        (
            b"struct Outer { struct Inner { void m(); }; };\n",
            [
                ("Outer", "struct", 1),
                ("Outer::Inner", "struct", 1),
                ("Outer::Inner::m", "method", 1),
            ],
        ),
        (b"template <class T> using Vec = std::vector<T>;\n", [("Vec", "type", 1)]),
        (b"typedef int (*Callback)(void *);\n", [("Callback", "type", 1)]),
        (b"typedef struct Node *NodeRef;\n", [("NodeRef", "type", 1)]),
        (b"typedef struct Tag { int x; } Alias;\n", [("Alias", "type", 1), ("Tag", "struct", 1)]),
        (b"typedef struct { int x; } A, *B;\n", [("A", "struct", 1), ("B", "type", 1)]),
        (
            # A plain enum's constants live in its scope, an `enum class`'s in the enum.
            b"enum Color { Red };\nenum class E : int { A };\n",
            [
                ("Color", "enum", 1),
                ("Red", "constant", 1),
                ("E", "enum", 2),
                ("E::A", "constant", 2),
            ],
        ),
        (
            b"extern int counter;\nstatic const char *names[] = {0};\n",
            [
                ("counter", "variable", 1),
                ("names", "variable", 2),
            ],
        ),
        (b"const int a = 1, *b = 0;\n", [("a", "constant", 1), ("b", "variable", 1)]),
        (b'extern "C" {\nvoid c_api(void);\n}\n', [("c_api", "function", 2)]),
        (b"struct { int x; } anonymous_var;\n", [("anonymous_var", "variable", 1)]),
        (b"class Fwd;\nstruct Fwd2;\n", []),
    ],
)
def test_declarations_become_these_symbols(
    source: bytes, expected: list[tuple[str, str, int]]
) -> None:
    assert symbols(source) == expected


def test_enumerators_are_constants_named_in_the_scope_the_language_gives_them() -> None:
    source = (
        b"namespace ns {\nenum Mode { Fast = 1, Slow };\n"
        b"class K {\n public:\n  enum class State : char { On, Off };\n};\n}\n"
    )
    found = by_name(source)
    assert {name for name, s in found.items() if s.kind == "constant"} == {
        "ns::Fast", "ns::Slow", "ns::K::State::On", "ns::K::State::Off",
    }  # fmt: skip
    assert found["ns::Fast"].parent == "ns::Mode" and found["ns::Fast"].signature == "Fast = 1"
    assert found["ns::K::State::Off"].parent == "ns::K::State"
    assert found["ns::K::State::Off"].start_line == 5


def test_export_macro_between_class_and_name_is_not_the_class_name() -> None:
    source = b"class LLVM_ABI Foo : public Bar {\npublic:\n  void run();\n};\n"
    assert symbols(source) == [("Foo", "class", 1), ("Foo::run", "method", 3)]
    assert by_name(source)["Foo"].signature == "class LLVM_ABI Foo : public Bar"


def test_symbol_positions_are_one_based_lines_and_byte_columns() -> None:
    source = (
        b"namespace n {\n  struct S {\n    int f();\n  };\n}\n#define TWICE(x) \\\n  ((x) * 2)\n"
    )
    found = by_name(source)
    s = found["n::S"]
    assert (s.start_line, s.end_line, s.start_col, s.end_col) == (2, 4, 2, 3)
    assert source[s.start_byte : s.end_byte] == b"struct S {\n    int f();\n  }"
    macro = found["TWICE"]  # ends on its last line, not after its newline
    assert (macro.start_line, macro.end_line, macro.end_col) == (6, 7, 11)
    assert source[macro.start_byte : macro.end_byte].endswith(b"((x) * 2)")


# --- docstrings and comments ----------------------------------------------------------------


@pytest.mark.parametrize(
    "element",
    [
        ("comment", "Copyright banner\nsecond line", 1, None),
        ("comment", "bytes", 11, "MAX_SIZE"),  # found in the #define body
        ("docstring", "A vector that is small.\nSecond line of the doc.", 20, "llvm::SmallVector"),
        ("docstring", "Adds \\p A to every element.", 27, "llvm::SmallVector::add"),
        ("docstring", "number of elements", 30, "llvm::SmallVector"),  # a field: its class
        ("comment", "namespace llvm", 48, None),
        ("string_literal", "demo/base.h", 7, None),
        ("string_literal", "added twice", 38, "llvm::SmallVector::add"),
    ],
)
def test_header_text_elements(element: tuple[str, str, int, str | None]) -> None:
    assert element in texts(HEADER)


def test_header_has_no_other_text_elements() -> None:
    assert len(texts(HEADER)) == 8


def test_struct_in_a_variable_declaration_keeps_the_doc() -> None:
    found = {s.name: s.doc for s in cpp.extract(b"/// The S.\nstruct S {} s;\n", "a.h").symbols}
    assert found == {"S": "The S.", "s": None}


def test_doc_comments_set_the_documented_symbols_doc() -> None:
    found = by_name(HEADER)
    assert found["llvm::SmallVector"].doc == "A vector that is small.\nSecond line of the doc."
    declaration = next(s for s in cpp.extract(HEADER, "a.h").symbols if s.name == "add")
    assert declaration.doc == "Adds \\p A to every element."
    assert found["llvm::SmallVector::operator=="].doc is None


def test_a_brief_line_over_a_doc_block_is_the_doc_with_the_block() -> None:
    # cereal (256 definitions): a `//!` brief line, then a `/*! */` block with the details,
    # both Doxygen's doc of the method. The block alone was its doc, and the brief's words
    # (`frobnicator`) found the class instead. A blank line between keeps the closest alone.
    source = (
        b"class Archive\n{\n  public:\n"
        b"    //! Registers the widget with the frobnicator\n"
        b"    /*! Longer details about ids.\n        @return the id */\n"
        b"    int registerWidget(int w) { return w + 1; }\n\n"
        b"    /// A group's title\n\n"
        b"    /** Unregisters the gadget. */\n"
        b"    int unregisterGadget(int g) { return g - 1; }\n"
        b"};\n"
    )
    found = {s.name: s.doc for s in cpp.extract(source, "w.hpp").symbols}
    assert found["registerWidget"] == (
        "Registers the widget with the frobnicator\nLonger details about ids.\n@return the id"
    )
    assert found["unregisterGadget"] == "Unregisters the gadget."
    assert found["Archive"] is None


@pytest.mark.parametrize(
    "source, expected",
    [
        # Trailing member docs document what precedes them.
        (b"struct S {\n  int f(); ///< does f\n};\n", ("docstring", "does f", 2, "S::f")),
        (b"enum E {\n  A, /**< first */\n};\n", ("docstring", "first", 2, "A")),
        # `//!` and `/*!` are doc comments too.
        (b"//! Qt style\nvoid f();\n", ("docstring", "Qt style", 1, "f")),
        (b"/*! Qt block */\nvoid f();\n", ("docstring", "Qt block", 1, "f")),
        # A doc comment with nothing after it documents nothing.
        (b"void f();\n/// dangling\n", ("docstring", "dangling", 2, None)),
        # Template header between doc and declaration.
        (b"/// Box.\ntemplate <class T>\nstruct Box {};\n", ("docstring", "Box.", 1, "Box")),
        (b"/// Doubles.\n#define TWICE(x) ((x) * 2)\n", ("docstring", "Doubles.", 1, "TWICE")),
        # A comment between doc and declaration does not break the link.
        (b"/// Doc.\n// FIXME\nint g();\n", ("docstring", "Doc.", 1, "g")),
        # A struct defined in a variable declaration takes the doc, not the variable.
        (b"/// The S.\nstruct S { int a; } s;\n", ("docstring", "The S.", 1, "S")),
        (b"#define LIMIT 4 ///< the limit\n", ("docstring", "the limit", 1, "LIMIT")),
        (b"/// Exported.\nclass LLVM_ABI Foo {};\n", ("docstring", "Exported.", 1, "Foo")),
    ],
)
def test_doc_comment_names_the_symbol_it_documents(
    source: bytes, expected: tuple[str, str, int, str | None]
) -> None:
    assert expected in texts(source)


@pytest.mark.parametrize(
    "source, expected",
    [
        # Consecutive `//` lines are one comment; a blank line or code splits them.
        (b"// a\n// b\n\n// c\n", [("comment", "a\nb", 1, None), ("comment", "c", 4, None)]),
        # A comment after code describes its own line: it starts no run (as in Python).
        (b"int x; // a\n// b\n", [("comment", "a", 1, None), ("comment", "b", 2, None)]),
        (b"// a\nint x;\n// b\n", [("comment", "a", 1, None), ("comment", "b", 3, None)]),
        # `///` lines are one docstring, dedented like inspect.cleandoc.
        (
            b"/// Summary.\n///\n///   indented\n///   block\nvoid f();\n",
            [("docstring", "Summary.\n\nindented\nblock", 1, "f")],
        ),
        # A `//` run and a `///` run next to each other stay apart.
        (
            b"// plain\n/// doc\nvoid f();\n",
            [("comment", "plain", 1, None), ("docstring", "doc", 2, "f")],
        ),
        # Banners and `/***`, `/**/` are plain comments.
        (b"//===- x.h ---===//\n", [("comment", "===- x.h ---===//", 1, None)]),
        (b"////////\n", [("comment", "//////", 1, None)]),
        (b"/*** stars ***/\n", [("comment", "** stars **", 1, None)]),
        (b"/**/\n", [("comment", "", 1, None)]),
        # Block comments lose their ` * ` margins.
        (
            b"/*\n * One.\n *   Two.\n */\n",
            [("comment", "One.\n  Two.", 1, None)],
        ),
        (b"/**\n * Doc.\n */\nint v;\n", [("docstring", "Doc.", 1, "v")]),
    ],
)
def test_line_comment_runs_merge_and_lose_their_markers(
    source: bytes, expected: list[tuple[str, str, int, str | None]]
) -> None:
    assert texts(source) == expected


def test_comments_name_their_innermost_enclosing_symbol() -> None:
    source = b"namespace n {\nstruct S {\n  void f() {\n    // inside f\n  }\n  // in S\n};\n}\n"
    assert texts(source) == [("comment", "inside f", 4, "n::S::f"), ("comment", "in S", 6, "n::S")]


def test_multi_line_comment_has_first_and_last_line() -> None:
    element = cpp.extract(b"\n/* a\n   b\n   c */\n", "a.h").texts[0]
    assert (element.line, element.end_line) == (2, 4)


# --- string literals ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, content",
    [
        (b'const char *s = "plain";', "plain"),
        (b'auto s = u8"utf8";', "utf8"),
        (b'auto s = u"utf16";', "utf16"),
        (b'auto s = U"utf32";', "utf32"),
        (b'auto s = L"wide";', "wide"),
        (b'auto s = R"(raw \\n)";', "raw \\n"),
        (b'auto s = R"x(has )" inside)x";', 'has )" inside'),
        (b'auto s = "tab\\tand \\"quote\\"";', 'tab\\tand \\"quote\\"'),  # escapes as written
        (b'auto s = "one" "two"\n  "three";', "onetwothree"),
        (b'f("a" PRIu64 "b");', "ab"),  # recovery splits it: joined again
        (b'#define NAME "in a macro"\n', "in a macro"),
        (b'#define JOINED "a" \\\n  "b"\n', "ab"),
        (b'#define URL "http://example.com" // not a comment inside\n', "http://example.com"),
        (b'#include "path/to/file.h"\n', "path/to/file.h"),
        (b'extern "C" void f();', "C"),
    ],
)
def test_string_literal_content_has_no_quotes_prefixes_or_delimiters(
    source: bytes, content: str
) -> None:
    strings = [t[1] for t in texts(source) if t[0] == "string_literal"]
    assert strings == [content]


def test_char_literals_and_system_includes_are_not_strings() -> None:
    source = b"#include <vector>\nchar c = '\"';\nchar d = 'x';\n"
    assert [t for t in texts(source) if t[0] == "string_literal"] == []


def test_concatenated_string_spans_its_lines() -> None:
    element = cpp.extract(b'auto s = "one"\n  "two";\n', "a.cpp").texts[0]
    assert (element.content, element.line, element.end_line) == ("onetwo", 1, 2)


def test_comment_in_a_define_body_is_found() -> None:
    source = b'#define F(x) g(x, "s") /* block */ // line\n'
    assert texts(source) == [
        ("string_literal", "s", 1, "F"),
        ("comment", "block", 1, "F"),
        ("comment", "line", 1, "F"),
    ]


def test_string_split_by_error_recovery_is_still_one_literal() -> None:
    # An #include inside an enum body: tree-sitter's recovery reads `"`, words and `"`.
    source = b'enum : unsigned {\n#define X(a) a,\n#include "llvm/IR/Kinds.def"\n};\n'
    strings = [t[1:3] for t in texts(source) if t[0] == "string_literal"]
    assert strings == [("llvm/IR/Kinds.def", 3)]


# --- references -----------------------------------------------------------------------------


def test_references_are_used_names_with_their_enclosing_symbol() -> None:
    refs = {(r.name, r.line, r.symbol) for r in cpp.extract(HEADER, "a.h").references}
    assert {
        ("SmallVectorImpl", 23, "llvm::SmallVector"),  # a base class
        ("destroy", 26, "llvm::SmallVector::~SmallVector"),  # a call
        ("size", 29, "llvm::SmallVector::operator=="),  # a method call through `.`
        ("SmallVector", 37, "llvm::SmallVector::add"),  # a qualifier segment
        ("helper", 39, "llvm::SmallVector::add"),
        ("Forward", 18, "llvm"),  # a type
        ("DEMO_H", 4, None),  # a macro tested by #ifndef
        ("X", 10, "LLVM_DEBUG"),  # a name in a #define body
    } <= refs


@pytest.mark.parametrize(
    "source, expected",
    [
        # Each name once per enclosing symbol, at its first line.
        (b"void f() {\n  g();\n  g();\n}\nvoid h() { g(); }\n", [("g", 2, "f"), ("g", 5, "h")]),
        # Definitions' own names are not references; parameter and local names neither.
        (b"int add(int a, int b) { int c = a; return c; }\n", []),
        (
            b"struct S { int x; };\nint get(S s) { return s.x; }\n",
            [("S", 2, "get"), ("x", 2, "get")],
        ),
        (b"auto v = ns::make<int>(1);\n", [("ns", 1, "v"), ("make", 1, "v")]),
    ],
)
def test_each_name_is_referenced_once_per_enclosing_symbol(
    source: bytes, expected: list[tuple[str, int, str | None]]
) -> None:
    refs = [(r.name, r.line, r.symbol) for r in cpp.extract(source, "a.cpp").references]
    assert refs == expected


# --- robustness, status and plumbing --------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        b"",
        b"\x00\x00\x00",
        b"\xff\xfe invalid \xc3\x28 utf-8 \x80",
        b"class A { void f() {",
        b"}}}} namespace { ]",
        b'const char *s = "unterminated\n',
        b"/* unterminated comment",
        b"/// doc at end of file",
        b'#define M(x) "unterminated \\\n',
        b'R"delim(never closed',
        b"template <",
        b"int Foo::",
        b"\xef\xbb\xbfint bom;",
    ],
)
def test_broken_source_is_extracted_without_raising(source: bytes) -> None:
    result = cpp.extract(source, "broken.h")
    assert result.status == "ok"


def test_syntax_errors_are_noted_and_what_parses_is_kept() -> None:
    result = cpp.extract(b"class A {\n  void f();\n  int = ;\n};\n/// doc\nvoid g();\n", "a.h")
    assert result.note == "syntax errors"
    assert {s.qualified_name for s in result.symbols} >= {"A", "A::f", "g"}


def test_clean_source_has_no_note() -> None:
    assert cpp.extract(b"int f();\n", "a.h").note is None


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    result = cpp.extract(b'// caf\xe9\nconst char *s = "\xff";\n', "a.h")
    assert [t.content for t in result.texts] == ["caf\ufffd", "\ufffd"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_are_extracted_without_raising(source: bytes) -> None:
    cpp.extract(source, "fuzz.h")


_CPP_PIECES = st.sampled_from(
    [
        "namespace n {",
        "}",
        "{",
        "class C",
        "struct S",
        ":",
        "public B",
        ";",
        "template <class T>",
        "int f(int a)",
        "const",
        "/// doc\n",
        "// c\n",
        "/*",
        "*/",
        '"s"',
        'R"x(',
        ')x"',
        "'c'",
        "#define M(x) x\n",
        '#include "h.h"\n',
        "\\\n",
        "\n",
        "::",
        "~",
        "operator==",
        "=",
        "0",
        "typedef",
        "using U =",
        "enum class E",
        "friend",
        'extern "C"',
        "(",
        ")",
        "<",
        ">",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_CPP_PIECES, max_size=60))
def test_cpp_like_garbage_is_extracted_without_raising(pieces: list[str]) -> None:
    result = cpp.extract(" ".join(pieces).encode(), "fuzz.h")
    for symbol in result.symbols:
        assert 1 <= symbol.start_line <= symbol.end_line
        assert symbol.start_byte <= symbol.end_byte


@pytest.mark.parametrize("enabled", [True, False])
def test_garbage_collector_is_left_as_it_was(enabled: bool) -> None:
    was_enabled = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        cpp.extract(b"class C { void f(); };\n", "a.h")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_dispatch_by_language_key() -> None:
    assert extract("cpp", b"void f();\n", "a.h").symbols[0].name == "f"


@pytest.mark.parametrize("purpose", ["tags", "text"])
def test_every_query_file_compiles(purpose: str) -> None:
    assert query("cpp", purpose).pattern_count > 0


def test_query_files_ship_with_the_package() -> None:
    folder = resources.files("repomap.extractors").joinpath("queries", "cpp")
    assert {p.name for p in folder.iterdir() if p.name.endswith(".scm")} == {"tags.scm", "text.scm"}


CONVERSIONS = b"""\
struct caster {
  operator EnumType *() { return ptr; }
  operator EnumType &();
  operator bool() const;
  explicit operator const std::vector<T> &&() &&;
};
caster::operator int*() const { return 0; }
"""


def test_conversion_operators_are_named_with_their_whole_type() -> None:
    """pybind11's casters convert to `T*` and to `T&`: two operators, not one name twice."""
    found = [
        (s.qualified_name, s.start_line)
        for s in extract("cpp", CONVERSIONS, "c.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("caster", 1),
        ("caster::operator EnumType*", 2),
        ("caster::operator EnumType&", 3),
        ("caster::operator bool", 4),
        ("caster::operator const std::vector<T>&&", 5),
        ("caster::operator int*", 7),
    ]


def test_a_function_a_test_macro_defines_is_named_with_its_arguments():
    # GoogleTest's TEST(Suite, Name) { .. } parses as a function `TEST` with no return type and
    # two parameters that are bare type names: every test was one more `TEST`.
    source = (
        b'TEST(ParserTest, HandlesEmptyInput) {\n  EXPECT_TRUE(parse("").empty());\n}\n'
        b"TEST_F(CacheFixture, EvictsOldest) { cache.put(1); }\n"
        b"BOOST_AUTO_TEST_CASE(test_addition) { BOOST_CHECK(1 + 1 == 2); }\n"
        b"namespace t { TEST(Inside, Namespace) {} }\n"
        b"FOO(int x) { return x; }\n"  # a real parameter: the name stays as tree-sitter reads it
        b"struct S { S(A, B) {} };\n"  # a constructor of unnamed parameters stays `S`
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "t.cc").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("TEST(ParserTest, HandlesEmptyInput)", "function", 1),
        ("TEST_F(CacheFixture, EvictsOldest)", "function", 4),
        ("BOOST_AUTO_TEST_CASE(test_addition)", "function", 5),  # named `test_addition`
        ("t", "namespace", 6),
        ("t::TEST(Inside, Namespace)", "function", 6),
        ("FOO", "function", 7),
        ("S", "struct", 8),
        ("S::S", "method", 8),
    ]


def test_a_function_a_test_macro_with_string_arguments_defines_is_named_by_its_first():
    # Catch2 / doctest: `TEST_CASE("..", "[tag]") { .. }` is a call statement and a block to
    # tree-sitter-cpp; the test vanished and a local in its body became a namespace variable.
    source = (
        b'TEST_CASE("Factorials are computed", "[factorial]") {\n'
        b"    REQUIRE(Factorial(1) == 1);\n}\n"
        b'SCENARIO("vectors resize", "[vector]") {\n'
        b'    GIVEN("A vector") {\n        std::vector<int> v(5);\n    }\n}\n'
        b"#define EXPECT_OK(x) \\\n  EXPECT_TRUE(x.ok())\n"  # a continued #define: not code
        + b"/// A long comment.\n" * 30
        + b'MATCHER(Succeeded, "") { return arg.ok(); }\n'
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "t.cc").symbols
        if s.kind != "field"
    ]
    assert found == [
        ('TEST_CASE("Factorials are computed")', "function", 1),
        ('SCENARIO("vectors resize")', "function", 4),
        ("EXPECT_OK", "macro", 9),
        ("MATCHER(Succeeded)", "function", 41),
    ]


def test_an_export_macro_before_a_named_type_keeps_the_variable():
    # glog: `GLOG_EXPORT fail_func_t g_fail = nullptr;` was lost (tree-sitter read
    # `fail_func_t` as the declared name) while `GLOG_EXPORT int g_int = 0;` was found. A
    # macro that is the type itself, before a list of names, stays the type.
    source = (
        b"typedef void (*fail_func_t)();\n"
        b"GLOG_EXPORT fail_func_t g_fail = nullptr;\n"
        b"GLOG_EXPORT int g_int = 0;\n"
        b"MY_API std::vector<int> *g_list;\n"
        b"MY_API table_t g_tables[4];\n"
        b"FOO_T first, second;\n"
    )
    assert [(s.name, s.kind, s.start_line) for s in cpp.extract(source, "g.cc").symbols] == [
        ("fail_func_t", "type", 1),
        ("g_fail", "variable", 2),
        ("g_int", "variable", 3),
        ("g_list", "variable", 4),
        ("g_tables", "variable", 5),
        ("first", "variable", 6),
        ("second", "variable", 6),
    ]


def test_a_conditional_inside_an_initializer_keeps_the_variable():
    # glog's `const struct {..} kSignals[] = { {..},\n#if !defined(_WIN32)\n {..},\n#endif\n};`:
    # the directives are errors inside the initializer list, and the table was lost. A
    # declaration broken elsewhere still gives no variable.
    source = (
        b"const struct {\n  int number;\n  const char *name;\n} kSignals[] = {\n"
        b'  { 11, "SIGSEGV" },\n#if !defined(_WIN32)\n  { 7, "SIGBUS" },\n#endif\n'
        b'  { 15, "SIGTERM" },\n};\n'
        b"static const int kAfter = 1;\n"
        b"int broken = (1 +;\n"
    )
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in cpp.extract(source, "s.cc").symbols
    ]
    assert [f for f in found if f[1] != "field"] == [
        ("kSignals", "constant", 1, 10),
        ("kAfter", "constant", 11, 11),
    ]


def test_a_macro_after_a_function_declarator_keeps_the_function():
    # spdlog's `size_t pid() SPDLOG_NOEXCEPT {`: tree-sitter-cpp read `pid()` as an initialiser
    # and the macro as the declared name; `now`, `pid` and `empty` were lost.
    source = (
        b"namespace os {\n"
        b"SPDLOG_INLINE spdlog::log_clock::time_point now() SPDLOG_NOEXCEPT\n{\n  return 1;\n}\n"
        b"SPDLOG_INLINE size_t pid() SPDLOG_NOEXCEPT\n{\n  return 1;\n}\n"
        b"}\n"
        b"struct source_loc {\n"
        b"  SPDLOG_CONSTEXPR bool empty() const SPDLOG_NOEXCEPT\n  {\n    return line == 0;\n  }\n"
        b"  StringRef str() const LLVM_LVALUE_FUNCTION { return s; }\n"
        b"  int line;\n"
        b"};\n"
        b"void body() {\n  if (ready) FOO_BAR;\n  x = (int)UINT32_MAX;\n}\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "o.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("os", "namespace", 1),
        ("os::now", "function", 2),
        ("os::pid", "function", 6),
        ("source_loc", "struct", 11),
        ("source_loc::empty", "method", 12),
        ("source_loc::str", "method", 16),
        ("body", "function", 19),
    ]
    # Only a macro after a declarator is blanked, not one in a statement or a cast.
    blanked = blank_macros(source, "cpp")[0]
    assert b"SPDLOG_NOEXCEPT" not in blanked and b"LLVM_LVALUE_FUNCTION" not in blanked
    assert b"if (ready) FOO_BAR;" in blanked and b"(int)UINT32_MAX" in blanked


def test_a_macro_on_the_line_after_a_qualifier_keeps_the_function():
    # GoogleTest's `void f() const\n      GTEST_EXCLUSIVE_LOCK_REQUIRED_(mu);` (and `{ body }`
    # out of line): the macro was a method of its own, or a function holding f's body.
    source = (
        b"class Base {\n"
        b"  bool Ready() const\n"
        b"      GTEST_EXCLUSIVE_LOCK_REQUIRED_(g_mutex);\n"
        b"  virtual void Describe(int* os) const\n"
        b"      GTEST_LOCK_EXCLUDED_(g_mutex) = 0;\n"
        b"};\n"
        b"bool Base::Ready() const\n"
        b"    GTEST_EXCLUSIVE_LOCK_REQUIRED_(g_mutex) {\n"
        b"  return true;\n"
        b"}\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in cpp.extract(source, "o.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("Base", "class", 1, 6),
        ("Base::Ready", "method", 2, 3),
        ("Base::Describe", "method", 4, 5),
        ("Base::Ready", "method", 7, 10),
    ]


def test_a_class_whose_body_tree_sitter_cannot_close_is_recovered_with_its_members():
    # LLVM's X-macro enums (`enum Mask {` then only `#define` and `#include`) and nlohmann's
    # macros leave `class Name {` among an ERROR's tokens: the class was lost and its members
    # read as free functions. It is found with its braces matched by hand, and what tree-sitter
    # read inside it is its own.
    source = (
        b"namespace nl {\n"
        b"class basic_json {\n"
        b"  enum HeaderFlagMask {\n"
        b"#define HANDLE_MACRO_FLAG(ID, NAME) MACRO_##NAME = ID,\n"
        b'#include "llvm/BinaryFormat/Dwarf.def"\n'
        b"  };\n"
        b"  struct MacroHeader {\n"
        b"    int Version = 0;\n"
        b"    void dump() const;\n"
        b"  };\n"
        b"  template<class T, class U> class list_storage { void add(); };\n"
        b"  enum class Kind : unsigned char {\n"
        b"#define KIND(X) X,\n"
        b'#include "kinds.def"\n'
        b"  };\n"
        b"  bool get() const\n"
        b"  {\n"
        b"    return x;\n"
        b"  }\n"
        b"};\n"
        b"}\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in cpp.extract(source, "json.hpp").symbols
        if s.kind
        not in ("namespace", "field")  # tree-sitter ends `nl` early; nothing here says where
    ]
    assert found == [
        ("nl::basic_json", "class", 2, 20),
        ("nl::basic_json::HeaderFlagMask", "enum", 3, 6),
        ("HANDLE_MACRO_FLAG", "macro", 4, 4),  # a `#define` inside an enum is a macro too
        ("nl::basic_json::MacroHeader", "struct", 7, 10),
        ("nl::basic_json::MacroHeader::dump", "method", 9, 9),
        # `class T` of the template is a parameter, not a class
        ("nl::basic_json::list_storage", "class", 11, 11),
        ("nl::basic_json::list_storage::add", "method", 11, 11),
        ("nl::basic_json::Kind", "enum", 12, 15),
        ("KIND", "macro", 13, 13),
        ("nl::basic_json::get", "method", 16, 19),
    ]


def test_an_access_specifier_behind_a_macro_is_read_as_one():
    # nlohmann's `JSON_PRIVATE_UNLESS_TESTED:` (and Qt's `Q_SIGNALS:`), alone on its line.
    source = (
        b"class basic_json {\n"
        b"  JSON_PRIVATE_UNLESS_TESTED:\n"
        b"    using lexer = int;\n"
        b"  Q_SIGNALS:\n"
        b"    void changed();\n"
        b"};\n"
        b"void f() {\n"
        b"RETRY_AGAIN:\n"  # a label in a body: blanked too, and the function is whole
        b"  if (g()) goto RETRY_AGAIN;\n"
        b"}\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"JSON_PRIVATE_UNLESS_TESTED" not in blanked and b"Q_SIGNALS" not in blanked
    assert blanked.count(b"\n") == source.count(b"\n")
    found = [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in cpp.extract(source, "a.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("basic_json", "class", 1, 6),
        ("basic_json::lexer", "type", 3, 3),
        ("basic_json::changed", "method", 5, 5),
        ("f", "function", 7, 10),
    ]


def test_a_macro_before_a_destructor_is_blanked():
    # fmt's `FMT_CONSTEXPR20 ~basic_memory_buffer() { .. }`: the destructor was lost.
    source = (
        b"template <typename T> class basic_memory_buffer {\n public:\n"
        b"  FMT_CONSTEXPR20 ~basic_memory_buffer() { deallocate(); }\n"
        b"  FMT_CONSTEXPR20 void grow() {}\n};\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "f.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("basic_memory_buffer", "class", 1),
        ("basic_memory_buffer::~basic_memory_buffer", "method", 3),
        ("basic_memory_buffer::grow", "method", 4),
    ]


def test_macro_calls_that_expand_to_declarations_do_not_swallow_what_follows():
    # gmock-actions.h: `MACRO(signed char, '\0');` at column 0, a run of them; tree-sitter-cpp
    # read them as one function whose body held the 280 lines after it.
    source = (
        b"namespace internal {\n"
        b"GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(void, );  // NOLINT\n"
        b'GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(::std::string, "");\n'
        b"GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(signed char, '\\0');\n"
        b"GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(float, 0);\n"
        b'REGISTER_OP("MatMul");\n'  # blanked too, its string read from the text
        b"DEFINE_FLAG(int, regexp_stack_limit, 256 << 10,\n"  # re2: over two lines
        b'            "default PCRE stack limit (bytes)");\n'
        b'SNAPPY_FLAG(bool, zlib, true, "Run zlib (http://www.zlib.net)");\n'  # `//`, `(`
        b'SNAPPY_FLAG(bool, lzo, true, "Run LZO");\n'  # after a `//` in a string, no comment
        b"template <typename P>\n"
        b"struct negation : std::integral_constant<bool, bool(!P::value)> {};\n"
        b"}\n"
        b"void f() {\n"
        b"EXPECT_EQ(g(), 0);\n"  # a statement in a body at column 0: not a declaration place
        b"}\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"GMOCK_DEFINE" not in blanked and b"REGISTER_OP" not in blanked
    assert b"DEFINE_FLAG" not in blanked and b"EXPECT_EQ(g(), 0);" in blanked
    extraction = cpp.extract(source, "a.h")
    found = [
        (s.qualified_name, s.kind, s.start_line) for s in extraction.symbols if s.kind != "field"
    ]
    assert found == [
        ("internal", "namespace", 1),
        ("internal::negation", "struct", 11),
        ("f", "function", 14),
    ]
    texts = [(t.content, t.line) for t in extraction.texts]
    assert ("MatMul", 6) in texts and ("default PCRE stack limit (bytes)", 8) in texts
    assert ("Run zlib (http://www.zlib.net)", 9) in texts and ("Run LZO", 10) in texts
    assert b"SNAPPY_FLAG" not in blanked
    assert {"regexp_stack_limit", "DEFINE_FLAG"} <= {r.name for r in extraction.references}
    # the blanked macro is still a use of it
    assert "GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_" in {r.name for r in extraction.references}


def test_an_export_macro_ending_in_an_underscore_or_before_a_specialization_is_blanked():
    source = (
        b"class GTEST_API_ Cardinality {\n public:\n  Cardinality() {}\n};\n"
        b"template <typename T, size_t I>\n"
        b"struct ABSL_INTERNAL_COMPRESSED_TUPLE_DECLSPEC Storage<T, I, true> : T {\n"
        b"  constexpr Storage() = default;\n};\n"
        b"class Q_CORE_EXPORT QEvent           // event base class\n{\n  void accept();\n};\n"
        b"class Q_CORE_EXPORT QCoreApplication\n#ifndef QT_NO_QOBJECT\n    : public QObject\n"
        b"#endif\n{\n  void exec();\n};\n"
        b"class LLVM_GSL_POINTER LLVM_NODISCARD ArrayRef {\n  size_t size() const;\n};\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "a.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("Cardinality", "class", 1),
        ("Cardinality::Cardinality", "method", 3),
        ("Storage", "struct", 5),
        ("Storage::Storage", "method", 7),
        ("QEvent", "class", 9),
        ("QEvent::accept", "method", 11),
        ("QCoreApplication", "class", 13),
        ("QCoreApplication::exec", "method", 18),
        ("ArrayRef", "class", 20),  # two export macros: LLVM's ArrayRef was lost
        ("ArrayRef::size", "method", 21),
    ]


def test_try_and_catch_macros_are_read_as_the_keywords_they_stand_for():
    # boost's deque: `BOOST_TRY {` .. `BOOST_CATCH(...) {` .. `BOOST_CATCH_END`; every member
    # after the first function that used them was lost.
    source = (
        b"class deque {\n"
        b"  void priv_create_nodes(int n)\n  {\n"
        b"    BOOST_TRY {\n      allocate(n);\n    }\n"
        b"    BOOST_CATCH(...) {\n      destroy(n);\n      BOOST_RETHROW\n    }\n"
        b"    BOOST_CATCH_END\n  }\n"
        b"  void priv_destroy_nodes(int n) BOOST_NOEXCEPT_OR_NOTHROW\n  {\n  }\n"
        b"};\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"    try       {\n" in blanked and b"    catch      (...) {\n" in blanked
    assert len(blanked) == len(source)
    extraction = cpp.extract(source, "deque.hpp")
    found = [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in extraction.symbols
        if s.kind != "field"
    ]
    assert found == [
        ("deque", "class", 1, 16),
        ("deque::priv_create_nodes", "method", 2, 12),
        ("deque::priv_destroy_nodes", "method", 13, 15),
    ]
    assert {"BOOST_TRY", "BOOST_CATCH"} <= {r.name for r in extraction.references}


def test_a_try_macro_without_catch_clauses_after_it_stays_a_plain_block():
    # spdlog: `SPDLOG_TRY { .. } SPDLOG_CATCH_STD`, the catch clauses all inside one macro; a
    # `try` without them made the destructor swallow every function after it.
    source = (
        b"SPDLOG_INLINE thread_pool::~thread_pool()\n{\n"
        b"    SPDLOG_TRY\n    {\n        join();\n    }\n    SPDLOG_CATCH_STD\n}\n\n"
        b"void SPDLOG_INLINE thread_pool::post_log(int n)\n{\n    post(n);\n}\n\n"
        b"SPDLOG_INLINE void logger::flush_()\n{\n"
        b"    SPDLOG_TRY\n    {\n        sink->flush();\n    }\n"
        b"    SPDLOG_LOGGER_CATCH(source_loc())\n}\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"try" not in blanked and b"catch" not in blanked
    found = [
        (s.qualified_name, s.start_line, s.end_line)
        for s in cpp.extract(source, "t.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("thread_pool::~thread_pool", 1, 8),
        ("thread_pool::post_log", 10, 13),
        ("logger::flush_", 15, 22),
    ]


def test_a_conditional_inside_a_declaration_is_read_as_its_first_branch():
    # beast's `class basic_stream\n#if ! BOOST_BEAST_DOXYGEN\n : private base\n#endif\n{` and
    # fmt's constructor `:\n#if FMT_GCC_VERSION ..\n base(*this),\n#endif\n data_{..}`.
    source = (
        b"template <class Protocol>\n"
        b"class basic_stream\n"
        b"#if ! BOOST_BEAST_DOXYGEN\n"
        b"    : private detail::stream_base\n"
        b"#else\n"
        b"    : public documented_base\n"
        b"#endif\n"
        b"{\n"
        b"  template <typename... T>\n"
        b"  basic_stream(T&&... args)\n"
        b"      :\n"
        b"#if FMT_GCC_VERSION && FMT_GCC_VERSION < 409\n"
        b"        base(*this),\n"
        b"#endif\n"
        b"        data_{args...} {\n"
        b"  }\n"
        b"  void close();\n"
        b"};\n"
        b"#if defined(_WIN32)\n"  # between declarations: left to tree-sitter
        b"void windows_only();\n"
        b"#endif\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"documented_base" not in blanked and b"#if ! BOOST" not in blanked
    assert b"#if defined(_WIN32)" in blanked and b"base(*this)," in blanked
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in cpp.extract(source, "a.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("basic_stream", "class", 1),
        ("basic_stream::basic_stream", "method", 9),
        ("basic_stream::close", "method", 17),
        ("windows_only", "function", 20),
    ]


def test_a_conditional_inside_a_member_s_initializer_keeps_the_member():
    # CLI11's `bool allow_windows_style_options_{\n#ifdef _WIN32\n true\n#else ..};`: read as
    # a function without parameters, the member was lost (ctags finds it); after `= {` the
    # class ended there and every member after it was lost. Each is read as its first branch,
    # the other branches' strings from the text; a conditional in a body is left as it was.
    source = (
        b"class App {\n"
        b"    bool before_{false};\n"
        b"    bool windows_style_{\n#ifdef _WIN32\n        true\n#else\n        false\n#endif\n"
        b"    };\n"
        b"    int mode_ = {\n#if X\n        1\n#elif Y\n        2\n#endif\n    };\n"
        b"    std::map<int, std::vector<int>> table_{\n#if X\n        {1, {2}},\n#endif\n    };\n"
        b'    const char *names_[2] = {\n#ifdef X\n        "x", "y"\n#else\n'
        b'        "unix", "other"\n#endif\n    };\n'
        b"    bool verbose_ =\n#ifdef NDEBUG\n        false;\n#else\n        true;\n#endif\n"
        b"    bool after_{false};\n"
        b"};\n"
        b"bool g_flag{\n#ifdef X\n    true\n#endif\n};\n"
        b"enum E {\n#ifdef A\n    ONE,\n#else\n    TWO,\n#endif\n};\n"
        b"struct S final {\n#ifdef A\n    int a;\n#endif\n};\n"
    )
    extraction = cpp.extract(source, "app.hpp")
    found = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in extraction.symbols]
    assert found == [
        ("App", "class", 1, 36),
        ("App::before_", "field", 2, 2),
        ("App::windows_style_", "field", 3, 9),
        ("App::mode_", "field", 10, 16),
        ("App::table_", "field", 17, 21),
        ("App::names_", "field", 22, 28),
        ("App::verbose_", "field", 29, 31),
        ("App::after_", "field", 35, 35),
        ("g_flag", "variable", 37, 41),
        ("E", "enum", 42, 48),
        ("ONE", "constant", 44, 44),
        ("TWO", "constant", 46, 46),
        ("S", "struct", 49, 53),
        ("S::a", "field", 51, 51),
    ]
    texts = [(t.content, t.line, t.symbol_name) for t in extraction.texts]
    assert texts == [("x", 24, "App"), ("y", 24, "App"), ("unix", 26, "App"), ("other", 26, "App")]
    blanked = blank_macros(source, "cpp")[0]
    assert b"#ifdef A\n    ONE,\n#else\n    TWO," in blanked
    assert b"#ifdef A\n    int a;\n#endif" in blanked


def test_an_out_of_line_conversion_after_a_specifier_is_named_as_the_operator():
    # abseil's int128.h: after `constexpr`, tree-sitter-cpp reads `uint128::operator` as the
    # return type and `bool` as a free function's name.
    source = (
        b"namespace absl {\n"
        b"constexpr uint128::operator bool() const { return lo_ || hi_; }\n"
        b"inline uint128::operator int() const { return 1; }\n"
        b"uint128::operator char() const { return 1; }\n"  # no specifier: read right already
        b"constexpr uint128::operator signed char() const { return 1; }\n"
        b"}\n"
    )
    found = [(s.qualified_name, s.kind) for s in cpp.extract(source, "int128.h").symbols]
    assert found == [
        ("absl", "namespace"),
        ("absl::uint128::operator bool", "method"),
        ("absl::uint128::operator int", "method"),
        ("absl::uint128::operator char", "method"),
        ("absl::uint128::operator signed char", "method"),
    ]


MACRO_HEAVY = b"""#pragma once
#define LIB_API __attribute__((visibility("default")))
#define LIB_CHECK(cond, msg) \\
    do { if (!(cond)) fail(msg); } while (0)

LIB_BEGIN_NAMESPACE
namespace detail {
template <typename T> struct node { T value; };
}  // namespace detail
LIB_END_NAMESPACE

namespace lib {
class LIB_API logger {
 public:
  LIB_INLINE void flush();
  LIB_CONSTEXPR int level() const noexcept { return level_; }
 private:
  int level_ = 0;
};

LIB_INLINE void logger::flush() {
  LIB_CHECK(level_ >= 0, "bad level");
}
}  // namespace lib
"""


@pytest.mark.parametrize("language", ["cpp", "c"])
def test_a_crlf_file_reads_as_its_lf_twin(language: str) -> None:
    """A Windows checkout's CRLF line ends: the macros that hide declarations are blanked as
    in the LF file (before, fmt lost 12% of its symbols that way, nlohmann-json 22%)."""
    source = (
        MACRO_HEAVY
        if language == "cpp"
        else MACRO_HEAVY.split(b"namespace lib {")[0]
        + (
            b"LIB_API int lib_init(void);\nstatic LIB_INLINE int twice(int x) {\n  return 2 * x;\n}\n"
        )
    )

    def shape(text: bytes) -> list[tuple[str, str, str, int, int]]:
        found = extract(language, text, "x.h").symbols
        return [(s.name, s.qualified_name, s.kind, s.start_line, s.end_line) for s in found]

    lf = shape(source)
    assert {"flush", "level", "logger", "node"} <= {name for name, *_ in lf} or language == "c"
    assert shape(source.replace(b"\n", b"\r\n")) == lf


def test_a_macro_around_a_qualified_name_names_the_method_it_wraps() -> None:
    """greenlet's `void GREENLET_NOINLINE(Greenlet::expose_frames)()`: a macro cannot paste
    `::` into a name, so it wraps this one (an attribute); the definition is the method, not a
    function named after the macro. A one-word argument may be pasted (brotli's `FN(x)`) and
    stays as written; a pointer to a member function is a member variable, no method."""
    source = b"""namespace greenlet {
class Greenlet {
    void expose_frames();
};
void GREENLET_NOINLINE(Greenlet::expose_frames)()
{
    if (!ready) {
        return;
    }
}
static int GREENLET_NOINLINE(slp_save_state_trampoline)(char* stackref)
{
    return 0;
}
struct DisplayHandler {
    int tag;
    Error (Parser::*routine)(unsigned);
};
}
"""
    found = [
        (s.name, s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in extract("cpp", source, "x.cpp").symbols
        if s.kind != "field"
    ]
    assert ("expose_frames", "greenlet::Greenlet::expose_frames", "method", 5, 10) in found
    assert (
        "GREENLET_NOINLINE(slp_save_state_trampoline)",
        "greenlet::GREENLET_NOINLINE(slp_save_state_trampoline)",
        "function",
        11,
        14,
    ) in found
    assert not [name for name, *_ in found if name in ("GREENLET_NOINLINE", "Error", "routine")]


def test_a_macro_after_a_class_name_keeps_the_class_and_its_members():
    # flatbuffers' `class Verifier FLATBUFFERS_FINAL_CLASS {` (67 classes lost, their members
    # read as free functions), `struct Type MY_FINAL : private Base {`; a capitals name only
    # before a FINAL / SEALED macro (`class A2 FINAL :`), an export macro before the name too.
    source = (
        b"namespace fb {\n"
        b"class Verifier FLATBUFFERS_FINAL_CLASS {\n public:\n  bool Check(bool ok) const;\n};\n"
        b"struct Type MY_FINAL : private Base { int f() const { return 1; } };\n"
        b"class A2 FINAL : public Base { void g(); };\n"
        b"class API Foo FINAL { void k(); };\n"
        b"FLATBUFFERS_MANUALLY_ALIGNED_STRUCT(4) Vec3 FLATBUFFERS_FINAL_CLASS {\n"
        b"  float x() const { return x_; }\n};\n"
        b"}  // namespace fb\n"
        b"int after() { return 0; }\n"
    )
    assert symbols(source) == [
        ("fb", "namespace", 1),
        ("fb::Verifier", "class", 2),
        ("fb::Verifier::Check", "method", 4),
        ("fb::Type", "struct", 6),
        ("fb::Type::f", "method", 6),
        ("fb::A2", "class", 7),
        ("fb::A2::g", "method", 7),
        ("fb::Foo", "class", 8),
        ("fb::Foo::k", "method", 8),
        ("fb::Vec3", "struct", 9),
        ("fb::Vec3::x", "method", 10),
        ("after", "function", 13),
    ]
    # `class API FOO {`: which word is the name is not known; the export macro reading stays.
    assert symbols(b"class LIB_API RNG { int next(); };\n")[0] == ("RNG", "class", 1)


def test_a_macro_without_an_underscore_after_a_declarator_keeps_the_function():
    source = (
        b"class D {\n public:\n  void d1() UNDEF {}\n  void d3() UNDEF1 {}\n"
        b"  void d5() const OVERRIDE {}\n};\n"
        b"void e1() NOEXCEPT {}\n"
        b"int run(int x) { if (x) RETURN; return FOO(x); }\n"
    )
    assert symbols(source) == [
        ("D", "class", 1),
        ("D::d1", "method", 3),
        ("D::d3", "method", 4),
        ("D::d5", "method", 5),
        ("e1", "function", 7),
        ("run", "function", 8),
    ]
    assert b"if (x) RETURN;" in blank_macros(source, "cpp")[0]


def test_an_annotation_macro_after_a_member_name_is_no_method():
    # leveldb's `bool bg_compaction_scheduled_ GUARDED_BY(mutex_);` was a method GUARDED_BY.
    source = (
        b"class DBImpl {\n"
        b"  bool scheduled_ GUARDED_BY(mutex_);\n"
        b"  std::deque<Writer*> writers_ GUARDED_BY(mutex_);\n"
        b"  int count_ GUARDED_BY(mu_) = 0;\n"
        b"  void Compact() EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n"
        b"};\n"
        b"int f(int x) { return FOO_OF(x); }\n"
    )
    assert symbols(source) == [
        ("DBImpl", "class", 1),
        ("DBImpl::Compact", "method", 5),
        ("f", "function", 7),
    ]
    blanked = blank_macros(source, "cpp")[0]
    assert b"GUARDED_BY" not in blanked and b"return FOO_OF(x);" in blanked


def test_a_macro_call_with_a_type_keyword_is_no_variable_of_that_name():
    # yaml-cpp's `YAML_DEFINE_CONVERT_STREAMABLE_SIGNED(int);` was `variable YAML::int`.
    source = (
        b"namespace YAML {\n"
        b"YAML_DEFINE_CONVERT_STREAMABLE_SIGNED(int);\n"
        b"YAML_DEFINE_CONVERT_STREAMABLE_SIGNED(double);\n"
        b"int real_var = 3;\n"
        b"}\n"
    )
    assert symbols(source) == [("YAML", "namespace", 1), ("YAML::real_var", "variable", 4)]


@pytest.mark.parametrize(
    "line",
    [
        b"// The class " + b"AB " * 33_000,  # the words around a name, split at every word
        b"#define OPCODES(OP) " + b"".join(b"OP(OPC%d) " % i for i in range(8_000)),
        b") " + b"AB(x) " * 16_000,
        b"class Foo_API " * 8_000,  # export macros not in capitals, no name or body after
        b"\n" + b"x_inline " * 12_000,  # lower-case specifiers, no declaration after
        b") const " + b"x_noexcept " * 10_000,
        b"class " + b'DEPRECATED(\n "x"' * 8_000,  # arguments over lines, never closed
    ],
    ids=[
        "class-words",
        "x-macro-list",
        "trailing-calls",
        "lower-export-macros",
        "lower-specifiers",
        "trailing-lower-specifiers",
        "arguments-over-lines",
    ],
)
def test_a_100kb_line_of_macro_like_words_is_scanned_in_bounded_time(line: bytes) -> None:
    """Quadratic before the runs were bounded: 20 KB of `class AB AB ...` took 6 s, a 47 KB
    X-macro list 6 s (~150 s and more at 100 KB). A generous bound: a hang, not a speed."""
    started = time.monotonic()
    for lang in ("c", "cpp"):
        blanked = blank_macros(line + b"\n", lang)[0]
        assert len(blanked) == len(line) + 1
    assert time.monotonic() - started < 10


def test_catch2_s_exception_macros_keep_the_function_whole():
    # `CATCH_TRY { } CATCH_CATCH_ANON (std::exception&) { } CATCH_CATCH_ALL { }`: run() ended
    # at the first clause, and `CATCH_CATCH_ANON` was a function of its own.
    source = (
        b"void run() {\n  int x = 0;\n  CATCH_TRY {\n    x = 1;\n"
        b"  } CATCH_CATCH_ANON (std::exception&) {\n    x = 2;\n"
        b"  } CATCH_CATCH_ALL {\n    x = 3;\n  }\n  Stats stats(x, 2);\n}\n"
        b"int after() { return 0; }\n"
    )
    assert [(s.qualified_name, s.start_line, s.end_line) for s in by_name(source).values()] == [
        ("run", 1, 11),
        ("after", 12, 12),
    ]
    alone = blank_macros(b"void f() {\n  CATCH_TRY { g(); } CATCH_CATCH_ALL { h(); }\n}\n", "cpp")[
        0
    ]
    assert b"try       {" in alone and b"catch(...)      {" in alone


def test_a_calling_convention_in_a_declaration_inside_extern_c_loses_nothing_after_it():
    # Catch2's `extern "C" __declspec(dllimport) void __stdcall DebugBreak();`: tree-sitter read
    # the declaration as an error, and the rest of the file went into it.
    source = (
        b'extern "C" __declspec(dllimport) void __stdcall DebugBreak();\n'
        b"#define TRAP() DebugBreak()\n"
        b"namespace N {\nint h() { return 1; }\n}\n"
        b"int __cdecl plain(int a) { return a; }\n"
    )
    assert symbols(source) == [
        ("DebugBreak", "function", 1),
        ("TRAP", "macro", 2),
        ("N", "namespace", 3),
        ("N::h", "function", 4),
        ("plain", "function", 6),
    ]
    assert b"__declspec" in blank_macros(b"#define CALL __stdcall\n" + source, "cpp")[0]


def test_an_inline_friend_and_a_name_in_parentheses_are_read_as_written():
    # `inline friend std::ostream& operator<<` (a tree-sitter-cpp error: the friend was lost)
    # and Catch2's `static constexpr result_type (min)()` (named `result_type (min)`).
    source = (
        b"class C {\n"
        b"  inline friend std::ostream& operator<<(std::ostream& os, C const& c) { return os; }\n"
        b"  using result_type = unsigned;\n"
        b"  static constexpr result_type (min)() { return 0; }\n"
        b"  int after() { return 1; }\n"
        b"};\n"
        b"static void FN(Initialize)(int a) {}\n"  # brotli: a name a macro makes stays as written
    )
    assert symbols(source) == [
        ("C", "class", 1),
        ("C::operator<<", "method", 2),
        ("C::result_type", "type", 3),
        ("C::min", "method", 4),
        ("C::after", "method", 5),
        ("FN(Initialize)", "function", 7),
    ]
    # the comments keep their words: only the parse sees `friend inline`
    assert texts(b"// an inline friend\nint x;\n")[0][1] == "an inline friend"


def test_a_qualified_name_that_repeats_its_enclosing_namespace_is_not_doubled():
    # Catch2: `namespace Catch { void Catch::IStream::flush() {} }` was
    # `Catch::Catch::IStream::flush`, and not linked to its declaration.
    source = (
        b"namespace Catch {\n  struct IStream { virtual ~IStream(); void flush(); };\n"
        b"  Catch::IStream::~IStream() = default;\n  void Catch::IStream::flush() {}\n"
        b"  namespace detail { void Catch::Other::f() {} }\n}\n"
    )
    assert [name for name, _, _ in symbols(source)] == [
        "Catch",
        "Catch::IStream",
        "Catch::IStream::~IStream",
        "Catch::IStream::flush",
        "Catch::IStream::~IStream",
        "Catch::IStream::flush",
        "Catch::detail",
        "Catch::Other::f",
    ]
    # ... but a class of the namespace's name is what the name finds first (C++'s lookup)
    widget = b"namespace widget {\nclass widget { void draw(); };\nvoid widget::draw() {}\n}\n"
    assert [name for name, _, _ in symbols(widget)][-1] == "widget::widget::draw"


def test_a_qualified_name_inside_a_macro_namespace_is_not_doubled_either():
    core = b"#define LIB_BEGIN namespace lib {\n#define LIB_END }\n"
    table = merged([("core.h", *definitions(core))])
    source = (
        b"LIB_BEGIN\nnamespace detail { int g(); }\nint lib::detail::g() { return 1; }\n"
        b"class lib { void run(); };\nvoid lib::run() {}\nLIB_END\n"
    )
    found = [
        s.qualified_name for s in extract("cpp", source, "a.h", table).symbols if s.kind != "field"
    ]
    assert found == [
        "lib",
        "lib::detail",
        "lib::detail::g",
        "lib::detail::g",  # not lib::lib::detail::g
        "lib::lib",
        "lib::lib::run",
        "lib::lib::run",  # the class `lib`: its members keep both names
    ]


def test_defines_inside_an_enum_or_an_initializer_are_macros_and_keep_the_enum():
    # brotli's BrotliDecoderErrorCode (lost), LLVM's X-macro enums, rapidjson's `Z16`.
    source = (
        b"typedef enum {\n#define COMMA_ ,\n#define ITEM_(P, N, C) \\\n    DEC ## P ## N = C\n"
        b"  ERROR_CODES_LIST(ITEM_, COMMA_)\n} DecoderErrorCode;\n#undef ITEM_\n"
        b"enum class Index : size_t {\n#define POPULATE(N, S) N,\n  FEATURES(POPULATE)\n"
        b"#undef POPULATE\n  NumberOfFeatures\n};\n"
        b"static const char escape[4] = {\n#define Z16 0,0,0,0\n  Z16\n#undef Z16\n};\n"
    )
    found = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in by_name(source).values()]
    assert found == [
        ("DecoderErrorCode", "enum", 1, 6),
        ("COMMA_", "macro", 2, 2),
        ("ITEM_", "macro", 3, 4),
        ("Index", "enum", 8, 13),
        ("POPULATE", "macro", 9, 9),
        ("Index::NumberOfFeatures", "constant", 12, 12),
        ("escape", "constant", 14, 18),
        ("Z16", "macro", 15, 15),
    ]
    # the directive words are no names used, nor is a macro's own name where it is defined
    used = {(r.name, r.line) for r in cpp.extract(source, "a.h").references}
    assert not {name for name, _ in used} & {"define", "undef"}
    assert ("Z16", 15) not in used and ("Z16", 17) in used  # its #undef names it


def test_an_x_macro_call_in_an_enum_is_no_constant():
    # luajit's `VMEVENT_DEF(TRACE, 0x12d91467),`: the macro and its arguments were constants.
    source = (
        b"typedef enum {\n  VMEVENT_DEF(BC, 0x3883),\n  VMEVENT_DEF(TRACE, 0x1467),\n  LAST\n} E;\n"
    )
    assert [name for name, kind, _ in symbols(source) if kind == "constant"] == ["LAST"]
    # a parenthesis in a character literal or a comment opens no call (the review's case)
    tokens = (
        b"enum Tok {\n  LPAREN = '(', // (\n  PLUS,\n  OLD DEPRECATED_ENUMERATOR,\n  LAST\n};\n"
    )
    constants = [name for name, kind, _ in symbols(tokens) if kind == "constant"]
    assert constants == ["LPAREN", "PLUS", "OLD", "DEPRECATED_ENUMERATOR", "LAST"]
    # a `#define` in a comment inside an enum is no macro
    commented = b"enum Color {\n  RED,\n/*\n#define NEW_COLOR 1\n*/\n  GREEN\n};\n"
    assert [name for name, _, _ in symbols(commented)] == ["Color", "RED", "GREEN"]


@pytest.mark.parametrize(
    "source",
    [
        b"int a = {" * 11_000 + b"\n#define X 1\n",  # openings that nothing closes
        b"#define X 1\n" + b"enum " * 20_000,  # enum words with no brace after them
        b";A_B(x) {" * 12_000 + b"} else {}\n",  # macro ifs whose blocks nothing closes
        b";A_B(x, /* */" * 12_000 + b")\n",  # comments before a closing parenthesis
    ],
    ids=["open-initializers", "enum-words", "macro-ifs", "commented-arguments"],
)
def test_the_enum_and_initializer_scans_take_bounded_time(source: bytes) -> None:
    """55 s and 6 s at 100 KB before the scans were bounded (the review's inputs); a generous
    bound: a hang, not a speed."""
    started = time.monotonic()
    blank_macros(source, "cpp")
    assert time.monotonic() - started < 5


def test_operator_names_are_spelled_one_way():
    # Catch2 writes `operator <<` (141 names), LLVM `operator<<`: one spelling, so that a lookup
    # and an out-of-line definition's link to its declaration do not depend on the spacing.
    source = (
        b"struct S {\n  S& operator <<(int);\n  bool operator ()() const;\n"
        b"  void* operator new [](unsigned long n);\n  operator bool() const;\n};\n"
        b"S& S::operator<<(int) { return *this; }\n"
    )
    assert [name for name, _, _ in symbols(source)] == [
        "S",
        "S::operator<<",
        "S::operator()",
        "S::operator new[]",
        "S::operator bool",
        "S::operator<<",
    ]
    linked = [s for s in cpp.extract(source, "a.h").symbols if s.qualified_name == "S::operator<<"]
    assert [s.is_definition for s in linked] == [False, True]


def c_symbols(source: bytes) -> list[tuple[str, str, int, int]]:
    found = cpp.extract_as("c", source).symbols
    return [
        (s.qualified_name, s.kind, s.start_line, s.end_line) for s in found if s.kind != "field"
    ]


def test_a_function_pointer_typedef_with_a_macro_in_its_parentheses_is_named_by_its_name():
    # OpenGL's and Windows' headers (SDL2): unless the return type was a keyword, tree-sitter
    # read a call, and the typedef was named after a parameter (`flags`, `void`) or lost.
    source = (
        b"typedef GLsync (APIENTRYP PFNGLFENCESYNCPROC) (GLenum condition, GLbitfield flags);\n"
        b"typedef GLenum (APIENTRYP PFNGLGETERRORPROC) (void);\n"
        b"typedef HRESULT (WINAPI *CONVERTFN)(\n    LPDWORD lpdwMode,\n    LPINT lpnDstSize\n);\n"
        b"typedef BOOL(WINAPI* LPFN_GLPI)(PSYSTEM_LOGICAL_PROCESSOR_INFORMATION, PDWORD);\n"
        b"typedef NTSTATUS (WINAPI GETVER) (PRTL_OSVERSIONINFOEXW);\n"
        b"typedef void (*plain)(int);\n"
        b"typedef int (MYINT)(int);\n"
    )
    assert [(name, kind, start) for name, kind, start, _ in c_symbols(source)] == [
        ("PFNGLFENCESYNCPROC", "type", 1),
        ("PFNGLGETERRORPROC", "type", 2),
        ("CONVERTFN", "type", 3),
        ("LPFN_GLPI", "type", 7),
        ("GETVER", "type", 8),
        ("plain", "type", 9),
        ("MYINT", "type", 10),
    ]


def test_a_define_with_a_comment_before_code_or_inside_a_string_is_one_macro():
    # zstd: tree-sitter-c ends a `#define`'s body at a comment, and the macro was lost or
    # named after a word of the string (`stdin`), the next `#define`s with it.
    source = (
        b"#define A1 ((8 << 10) + 512 /* scratch */)\n"
        b"#define A2 (1 + 2) /* trailing only */\n"
        b"#define A3(x) (((x) + 2) /* note */)\n"
        b'#define stdinmark  "/*stdin*\\\\"\n'
        b"#define B2 1 /* a */ + /* b */ 2\n"
        b"#define END_LOOP \\\n    } \\\n    /* x */ \\\n    w0 += d; \\\n  }\n"
        b"int after(void) { return 0; }\n"
    )
    assert c_symbols(source) == [
        ("A1", "macro", 1, 1),
        ("A2", "macro", 2, 2),
        ("A3", "macro", 3, 3),
        ("stdinmark", "macro", 4, 4),
        ("B2", "macro", 5, 5),
        ("END_LOOP", "macro", 6, 10),
        ("after", "function", 11, 11),
    ]
    kept = texts(source)  # the parse's copy is blanked, the text rows are the source's
    assert ("comment", "scratch", 1, "A1") in kept and (
        "string_literal",
        "/*stdin*\\\\",
        4,
        "stdinmark",
    ) in kept


def test_a_macro_between_the_return_type_and_the_name_of_a_void_function():
    # hidapi's `int HID_API_EXPORT hid_init(void)`, libxml2's `static void\nATTRIBUTE_DESTRUCTOR
    # \nxmlDestructor(void)`; capitals after a specifier are the return type, not a macro.
    source = (
        b"int HID_API_EXPORT hid_init(void)\n{\n\treturn 0;\n}\n"
        b"static void\nATTRIBUTE_DESTRUCTOR\nxmlDestructor(void) {\n}\n"
        b"static CRITICAL_SECTION *\ng_rec_mutex_impl_new (void)\n{\n  return 0;\n}\n"
        b"int HID_API_EXPORT hid_open(int vendor) { return vendor; }\n"
        b"void g(void) { return FOO_BAR baz(void); }\n"
    )
    # Capitals that are the return type, none of them a macro (the review's cases, lost by the
    # first version of this rule; the old code read each one).
    types = (
        b"struct LIST_ENTRY *list_first(void);\n"
        b"struct FOO_BAR *foo_make(void)\n{\n    return 0;\n}\n"
        b"enum ERR_CODE get_err(void)\n{\n    return 0;\n}\n"
        b"union VAL_T val_zero(void) { union VAL_T v; return v; }\n"
        b'#include "x.h"\n#endif\nMY_HANDLE handle_open(void)\n{\n    return 0;\n}\n'
        b"// returns the\nMY_HANDLE handle_get(void)\n{\n    return 0;\n}\n"
        b"OPENSSL_EXPORT EVP_MD_CTX *EVP_MD_CTX_new(void);\n"
    )
    assert [name for name, *_ in c_symbols(types)] == [
        "list_first", "foo_make", "get_err", "val_zero", "handle_open", "handle_get",
        "EVP_MD_CTX_new",
    ]  # fmt: skip
    assert [(name, kind, start) for name, kind, start, _ in c_symbols(source)] == [
        ("hid_init", "function", 1),
        ("xmlDestructor", "function", 5),
        ("g_rec_mutex_impl_new", "function", 9),
        ("hid_open", "function", 14),
        ("g", "function", 15),
    ]


def test_a_head_whose_parameters_a_macro_lists_twice_is_named_by_its_name():
    # trio (in libxml2): `TrioGetPosition\nTRIO_ARGS2((format, indexPointer), ...)` was
    # the function `TRIO_ARGS2`, 215 times.
    source = (
        b"#define TRIO_ARGS2(list,a1,a2) (a1,a2)\n"
        b"static int\nTrioGetPosition\nTRIO_ARGS2((format, indexPointer),\n"
        b"\t   const char *format,\n\t   int *indexPointer)\n{\n  return 0;\n}\n"
        b"int use(void) { return ((a) + (b)); }\n"
    )
    assert c_symbols(source) == [
        ("TRIO_ARGS2", "macro", 1, 1),
        ("TrioGetPosition", "function", 2, 9),
        ("use", "function", 10, 10),
    ]


def test_enums_tree_sitter_cpp_reads_no_base_of_and_a_function_returning_an_array_reference():
    # Vulkan's `enum : VkFlags {` was an enum named `VkFlags` (111 in SDL2's headers);
    # flatbuffers' `enum VTableOffset FLATBUFFERS_VTYPE {` was lost, and its generated
    # `const Color (&EnumValuesColor())[3] {` too (its local `values` a constant of the file).
    # An anonymous enum's constants are named in the scope around it.
    source = (
        b"namespace vk {\n"
        b"enum : VkFlags { allFlags = 1 };\n"
        b"enum class Named : VkFlags { a = 1 };\n"
        b"struct Type {\n  enum VTableOffset UNDERLYING_TYPE {\n    VT_BASE_TYPE = 4\n  };\n};\n"
        b"inline const Color (&EnumValuesColor())[3] {\n"
        b"  static const Color values[] = { Red, Green, Blue };\n  return values;\n}\n"
        b"class A { enum { k = 1 }; };\n"
        b"enum class EABI { GNU };\n"
        b"}\n"
    )
    assert symbols(source) == [
        ("vk", "namespace", 1),
        ("vk::allFlags", "constant", 2),
        ("vk::Named", "enum", 3),
        ("vk::Named::a", "constant", 3),
        ("vk::Type", "struct", 4),
        ("vk::Type::VTableOffset", "enum", 5),
        ("vk::Type::VT_BASE_TYPE", "constant", 6),
        ("vk::EnumValuesColor", "function", 9),
        ("vk::A", "class", 13),
        ("vk::A::k", "constant", 13),
        ("vk::EABI", "enum", 14),  # not `enum class` + the macro `EABI`
        ("vk::EABI::GNU", "constant", 14),
    ]


def test_an_if_around_an_attribute_inside_a_function_head_loses_no_function():
    # gnulib's xsize.h and valgrind.h (copied into glib and many other trees): tree-sitter lost
    # the function; its directive lines are left out of the parse, the words between kept.
    source = (
        b"XSIZE_INLINE size_t\n#if __GNUC__ >= 3\n__attribute__ ((__pure__))\n#endif\n"
        b"xsum (size_t size1, size_t size2)\n{\n  return size1 + size2;\n}\n"
        b"static int\n#if defined(_MSC_VER)\n__inline\n#endif\n"
        b"VALGRIND_PRINTF(const char *format, ...)\n{\n  return 0;\n}\n"
        b"int x;\n#ifdef FOO\nint y;\n#endif\ncall (x);\n"
        b"#if A\n#if B\n__inline\n#endif\n#else\nstatic\n#endif\nint z(void) { return 0; }\n"
    )
    assert c_symbols(source) == [
        ("xsum", "function", 1, 8),
        ("VALGRIND_PRINTF", "function", 9, 16),
        ("x", "variable", 17, 17),
        ("y", "variable", 19, 19),
        ("z", "function", 29, 29),
    ]


def test_an_if_around_an_attribute_alone_loses_nothing_after_it():
    # libtomcrypt's gcm_state (copied into dropbear and others): the conditional attribute of a
    # field, between its declarator and its `;`, lost the struct and every declaration after
    # it in the file (six of dropbear's states).
    source = (
        b"typedef struct {\n   int mode;\n#ifdef TABLES\n   unsigned char PC[16][256]\n"
        b"#ifdef TABLES_SSE2\n__attribute__ ((aligned (16)))\n#endif\n;\n#endif\n} gcm_state;\n"
        b"\nvoid gcm_mult_h(gcm_state *gcm);\n"
        b"typedef struct pelican_state {\n    int buflen;\n} pelican_state;\n"
    )
    assert c_symbols(source) == [
        ("gcm_state", "struct", 1, 10),
        ("gcm_mult_h", "function", 12, 12),
        ("pelican_state", "type", 13, 15),
        ("pelican_state", "struct", 13, 15),
    ]


def test_gnulib_templates_and_directives_before_a_body_lose_nothing():
    # gnulib (copied into gzip, nano, most GNU trees): an autoconf placeholder in a condition
    # hid the branch's `#define`s; directive lines between a function's head and its body ended
    # the function at its head, and its locals became the file's variables.
    source = (
        b"#if @EMULTIHOP_HIDDEN@\n# define EMULTIHOP @EMULTIHOP_VALUE@\n#endif\n"
        b"#define VISIBLE 1\n"
        b"int\nfcntl (int fd, int action, ...)\n#undef fcntl\n#ifdef __KLIBC__\n"
        b"# define fcntl klibc_fcntl\n#endif\n{\n  int result = -1;\n  return result;\n}\n"
        b"#define F(x) (x)\n#define G\n{\n"
        b"}\nvoid flush(int bit)\n{\n#ifdef NDEBUG\n  if (bit)\n#endif\n  {\n    bit++;\n  }\n}\n"
    )
    assert c_symbols(source) == [
        ("EMULTIHOP", "macro", 2, 2),
        ("VISIBLE", "macro", 4, 4),
        ("fcntl", "function", 5, 14),
        ("fcntl", "macro", 9, 9),
        ("F", "macro", 15, 15),
        ("G", "macro", 16, 16),
        ("flush", "function", 19, 27),  # LLVM's: an `#endif` alone is no run of its own
    ]


def test_an_attribute_or_a_macro_between_a_typedefs_type_and_its_name_is_no_name():
    # libtomcrypt's LTC_FAST_TYPE, the kernel's tools/ and BPF samples' `__u8_alias_t`: the
    # type was named `__attribute__` (11 in the kernel).
    source = (
        b"typedef unsigned long ulong64;\n"
        b"typedef ulong64 __attribute__((__may_alias__)) LTC_FAST_TYPE;\n"
        b"typedef __u8 __attribute__((__may_alias__))  __u8_alias_t;\n"
        b"void stop(void) __attribute__((noreturn)) NORETURN_MACRO;\n"
        # libtommath's: a capitals macro call there too; OpenSSL's STACK_OF(..) is the type
        b"typedef int cb_t(int);\ntypedef cb_t MP_DEPRECATED(rand_source) ltm_prime_callback;\n"
        b"typedef STACK_OF(X509) X509_CHAIN;\n"
    )
    assert c_symbols(source) == [
        ("ulong64", "type", 1, 1),
        ("LTC_FAST_TYPE", "type", 2, 2),
        ("__u8_alias_t", "type", 3, 3),
        ("stop", "function", 4, 4),
        ("cb_t", "type", 5, 5),
        ("ltm_prime_callback", "type", 6, 6),
        ("X509_CHAIN", "type", 7, 7),
    ]


def test_macro_calls_in_a_class_body_are_no_methods():
    # `FLATBUFFERS_DELETE_FUNC(DetachedBuffer(const DetachedBuffer &));`,
    # `DISALLOW_COPY_AND_ASSIGN(Account);`, gmock's `MOCK_METHOD1(OnStart, void(int));` were
    # methods named after the macro. A constructor (the class's name, in capitals or not), a
    # method in capitals with a return type and one taking its class by value stay.
    source = (
        b"class Account {\n public:\n  Account(int);\n  DELETE_FUNC(Account(const Account &));\n"
        b"  MOCK_METHOD1(OnStart, void(int));\n  Q_DISABLE_COPY(Account)\n"
        b"  DISALLOW_COPY_AND_ASSIGN(Account);\n  void Deposit(int amount);\n};\n"
        b"class FOO_BAR {\n  FOO_BAR(int);\n  int GET_X(int a);\n  void SET_ME(FOO_BAR);\n};\n"
    )
    assert symbols(source) == [
        ("Account", "class", 1),
        ("Account::Account", "method", 3),
        ("Account::Deposit", "method", 8),
        ("FOO_BAR", "class", 10),
        ("FOO_BAR::FOO_BAR", "method", 11),
        ("FOO_BAR::GET_X", "method", 12),
        ("FOO_BAR::SET_ME", "method", 13),
    ]


def test_a_test_macro_s_local_types_are_its_own():
    # doctest's `TEST_CASE("..") {` (onetbb: 118 local `using`s and structs were lost): the
    # macro's call and its block, read as a function, keep their local types as any function.
    source = (
        b'TEST_CASE("basic test for return value") {\n'
        b"    using preset = presets::preset_default<int, int>;\n"
        b"    struct throwing_obj {\n        throwing_obj() { }\n    };\n}\n"
    )
    assert symbols(source) == [
        ('TEST_CASE("basic test for return value")', "function", 1),
        ('TEST_CASE("basic test for return value")::preset', "type", 2),
        ('TEST_CASE("basic test for return value")::throwing_obj', "struct", 3),
        ('TEST_CASE("basic test for return value")::throwing_obj::throwing_obj', "method", 4),
    ]


def test_macros_around_and_before_declarations_of_harfbuzz_onetbb_and_llvm():
    # HarfBuzz's `struct {..}\nHB_FUNCOBJ (hb_identity);` was a function `HB_FUNCOBJ` over its
    # `operator ()`; onetbb's `__TBB_NOINLINE_SYM split_node(..)` constructors were lost or named
    # after a member initializer, and `__TBB_requires(..)` (over two lines) was a function; LLVM's
    # `LLVM_ATTRIBUTE_DEPRECATED(void insertEdge(..), "..");` a method named after the macro
    # (HarfBuzz's `DEFINE_SIZE_STATIC (.. sizeof (HBUINT));` declares no method `sizeof`).
    source = (
        b"struct\n{\n  template <typename T> constexpr T&\n"
        b"  operator () (T& v) const { return v; }\n}\nHB_FUNCOBJ (hb_identity);\n"
        b"template<typename Input>\n    __TBB_requires(std::default_initializable<Input> &&\n"
        b"                   std::copyable<Input>)\nclass split_node : public graph_node {\n"
        b"public:\n    __TBB_NOINLINE_SYM split_node(const split_node& other)\n"
        b"        : graph_node(other.my_graph),\n"
        b"          my_ports(init_ports<ports_type>::call(other.my_graph, my_ports))\n"
        b"    {\n        fgt(this);\n    }\n"
        b"    ports_type &output_ports() { return my_ports; }\n"
        b'    LLVM_ATTRIBUTE_DEPRECATED(void insertEdge(int *From, int *To),\n        "Use X.");\n'
        b"    DEFINE_SIZE_STATIC (Header::static_size + 5 * sizeof (HBUINT));\n"
        b"};\n"
    )
    assert symbols(source) == [
        ("operator()", "function", 3),
        ("split_node", "class", 7),
        ("split_node::split_node", "method", 12),
        ("split_node::output_ports", "method", 18),
        ("split_node::insertEdge", "method", 19),
    ]


def test_macros_of_capnproto_pybind11_glog_xz_and_ncurses_hide_no_declaration():
    # capnproto's `KJ_IF_MAYBE(x, y) {..} else {..}` in a class's method lost the members after
    # it (50), and `static KJ_ALWAYS_INLINE(void f(..)) {` was a method `KJ_ALWAYS_INLINE` (78);
    # pybind11's `{ PYBIND11_OVERRIDE(int, B, foo, ); }` (an empty last argument) lost its class's
    # members (30); glog's bare `_START_GOOGLE_NAMESPACE_` line took the enum after it.
    source = (
        b"_START_GOOGLE_NAMESPACE_\n\nenum GLogColor {\n  COLOR_DEFAULT\n};\n"
        b"class Maybe {\n  Maybe(Maybe&& other) {\n    KJ_IF_MAYBE(val, other) {\n"
        b"      KJ_IF_MAYBE(k, f(g(h()))) { ptr = val; } else { ptr = k; }\n"
        b"    } else {\n      ptr = nullptr;\n    }\n  }\n"
        b"  int get() const { return 1; }\n"
        b"  static KJ_ALWAYS_INLINE(bool boundsCheck(\n      const word* start, int size)) {\n"
        b"    return start == nullptr;\n  }\n"
        b"  int foo() const override { OVERRIDE(int, B, foo, ); }\n"
        b"  void *bar() override { OVERRIDE(void *, B, bar, /* no arguments */\n  ); }\n"
        b"  int other() const { return 1; }\n"
        b"  KJ_ALWAYS_INLINE(Kind kind() const) {\n    return k;\n  }\n"
        b"  static KJ_ALWAYS_INLINE(\n      ElementCountN<29> count(int n)) {\n    return n;\n  }\n};\n"
    )
    assert symbols(source) == [
        ("GLogColor", "enum", 3),
        ("COLOR_DEFAULT", "constant", 4),  # an unscoped enum's constants are its scope's
        ("Maybe", "class", 6),
        ("Maybe::Maybe", "method", 7),
        ("Maybe::get", "method", 14),
        ("Maybe::boundsCheck", "method", 15),
        ("Maybe::foo", "method", 19),
        ("Maybe::bar", "method", 20),
        ("Maybe::other", "method", 22),
        ("Maybe::kind", "method", 23),
        ("Maybe::count", "method", 26),
    ]
    # Strings are read from the text as written (the comma blanked for the parse only).
    assert ("string_literal", "a, )", 1, "f") in texts(b'void f() { g("a, )"); }\n')


def test_attribute_macros_of_xz_and_ncurses_prototypes_in_c():
    # xz's `static void lzma_attribute((__noreturn__))\nname(..)` was a function named after the
    # macro; ncurses' `extern GCC_NORETURN NCURSES_EXPORT(void) err_abort (..) ATTR(1,2);` was a
    # function `NCURSES_EXPORT` spanning the rest of the file.
    source = (
        b"static void lzma_attribute((__noreturn__))\nerror_lzma_preset(const char *v)\n{\n"
        b"\tmessage_fatal(v);\n}\n"
        b"extern GCC_NORETURN NCURSES_EXPORT(void) err_abort (const char *const,...)"
        b" GCC_PRINTFLIKE(1,2);\n"
        b"extern void get_type (char *name);\n#define NUM_PARM 9\nint later(void)\n{\n"
        b"\treturn 0;\n}\n"
    )
    assert c_symbols(source) == [
        ("error_lzma_preset", "function", 1, 5),
        ("err_abort", "function", 6, 6),
        ("get_type", "function", 7, 7),
        ("NUM_PARM", "macro", 8, 8),
        ("later", "function", 9, 12),
    ]


def test_a_record_whose_body_an_if_surrounds_keeps_its_struct_and_typedef():
    # ncurses' form.h, menu.h and panel.h: the body exists only in a non-opaque build. The
    # struct and its typedef were lost, the members read as variables of the file.
    source = (
        b"typedef struct pagenode\n#if !NCURSES_OPAQUE_FORM\n{\n  short pmin;\n"
        b"#ifdef WIDE\n  short wide;\n#endif\n}\n#endif /* !NCURSES_OPAQUE_FORM */\n_PAGE;\n"
        b"int after(void) { return 0; }\n"
    )
    assert c_symbols(source) == [
        ("_PAGE", "type", 1, 10),
        ("pagenode", "struct", 1, 8),
        ("after", "function", 11, 11),
    ]


def test_export_macros_of_poco_mosquitto_and_box2d_before_a_record_name():
    # Poco's `class Foundation_API Runnable`, mosquitto's `class mosqpp_EXPORT mosquittopp`: an
    # export macro not in capitals; box2d's `union B2_API b2ContactID`. Each record was lost,
    # its members with it. A return type `struct stat` before a method's `Timer::` is no macro.
    source = (
        b"namespace Poco {\nclass Foundation_API Runnable\n{\npublic:\n  virtual void run() = 0;\n"
        b"};\nclass mosqpp_EXPORT mosquittopp : public base {\n  int loop();\n};\n}\n"
        b"union B2_API b2ContactID\n{\n  int key;\n};\n"
        b"struct stat Timer::now() const {\n  return st;\n}\n"
        b"class Net_API HTTPIOS: public virtual std::ios\n\t/// The base class, documented.\n{\npublic:\n"
        b"  int rdbuf();\n};\n"
    )
    assert symbols(source) == [
        ("Poco", "namespace", 1),
        ("Poco::Runnable", "class", 2),
        ("Poco::Runnable::run", "method", 5),
        ("Poco::mosquittopp", "class", 7),
        ("Poco::mosquittopp::loop", "method", 8),
        ("b2ContactID", "union", 11),
        ("Timer::now", "method", 15),
        ("HTTPIOS", "class", 18),
        ("HTTPIOS::rdbuf", "method", 22),
    ]


def test_libgit2s_attribute_callback_and_declaration_macros_hide_no_c_declaration():
    # `static int GIT_FORMAT_PRINTF(2, 3) name(..)` was a function named after the macro;
    # `typedef int GIT_CALLBACK(name)(..)` a type named GIT_CALLBACK; a `GIT_BEGIN_DECL` line, a
    # doc comment and `GIT_EXTERN(int) f(..);` a function `GIT_EXTERN` over the struct after it.
    # xxhash's `typedef struct _U32_S {..} _PACKED U32_S;` was a type `_PACKED`.
    source = (
        b"GIT_BEGIN_DECL\n\n/**\n * Check it.\n *\n * More.\n */\n"
        b"GIT_EXTERN(int) git_worktree_validate(const git_worktree *wt);\n\n"
        b"typedef struct git_opts {\n\tint lock;\n} git_opts;\n\n"
        b"typedef int GIT_CALLBACK(git_apply_delta_cb)(\n\tconst void *delta,\n\tvoid *payload);\n"
        b"static int GIT_FORMAT_PRINTF(2, 3) cl_setenv_printf(const char *name, const char *fmt, ...)"
        b"\n{\n\treturn 0;\n}\n"
        b"typedef struct _U32_S { unsigned v; } _PACKED U32_S;\n"
        b"int main(void) {\n\tif (x) free(p);\n\treturn f(1, 2) ? g(3) : 0;\n}\n"
    )
    assert [s for s in c_symbols(source) if s[1] != "field"] == [
        ("git_worktree_validate", "function", 8, 8),
        ("git_opts", "type", 10, 12),
        ("git_opts", "struct", 10, 12),
        ("git_apply_delta_cb", "type", 14, 16),
        ("cl_setenv_printf", "function", 17, 20),
        ("U32_S", "type", 21, 21),
        ("_U32_S", "struct", 21, 21),
        ("main", "function", 22, 25),
    ]


def test_a_packed_macro_between_a_records_brace_and_its_name_or_semicolon_declares_nothing():
    # The kernel's bcm3510_priv.h: `} PACKED ACQUIRE0;` inside a struct, `} PACKED;` after it,
    # PACKED a macro the file defines. No variable `PACKED`, and the member keeps its name.
    source = (
        b"#define PACKED __attribute__((packed))\n"
        b"struct cmd {\n\tstruct {\n\t\tu8 MODE :4;\n\t} PACKED ACQUIRE0;\n\tu8 IF_OFFSET0;\n"
        b"} PACKED;\n"
        b"struct { int a; } CONFIG;\n"
    )
    found = [(name, kind, start) for name, kind, start, _ in c_symbols(source)]
    assert ("PACKED", "variable", 2) not in found
    assert [s for s in found if s[1] in ("struct", "variable")] == [
        ("cmd", "struct", 2),
        ("CONFIG", "variable", 8),  # a record's instance in capitals, no macro of this file
    ]


def test_expats_test_macros_and_libtiffs_deprecation_macros_name_nothing():
    # expat: `END_TEST` ends each test, `START_TEST(name) {` opens the next; the END_TEST line
    # was read as a return type and 259 tests were named `START_TEST`. libtiff: `typedef
    # TIFF_MSC_DEPRECATED int8_t int8 TIFF_GCC_DEPRECATED;` was a type `int8_t` (and, in C++, a
    # variable named after the macro). A macro that is the type leaves it be.
    source = (
        b"START_TEST(test_nul_byte) {\n  check();\n}\nEND_TEST\n\n"
        b"START_TEST(test_u0000_char) {\n  check();\n}\nEND_TEST\n"
        b"#define TIFF_GCC_DEPRECATED __attribute__((deprecated))\n#define TIFF_MSC_DEPRECATED\n"
        b"typedef TIFF_MSC_DEPRECATED int8_t int8 TIFF_GCC_DEPRECATED;\n"
        b"#define MY_INT_T int\ntypedef MY_INT_T count_t;\n"
    )
    assert [s for s in c_symbols(source) if s[1] != "macro"] == [
        ("START_TEST(test_nul_byte)", "function", 1, 3),
        ("START_TEST(test_u0000_char)", "function", 6, 8),
        ("int8", "type", 12, 12),
        ("count_t", "type", 14, 14),
    ]


def test_lower_case_specifier_macros_hide_no_constructor_operator_or_method():
    # simdjson's `simdjson_inline`, string-view lite's `nssv_constexpr` / `nssv_noexcept`:
    # read as a return type, they lost 165 of simdjson's constructors, conversion operators and
    # methods (a helper's ten unseen projects), and after a parameter list 74 more. Variables
    # named like them (`is_inline`, `has_noexcept`) are no macros.
    source = (
        b"simdjson_inline doc::doc(int x) noexcept\n  : a{x}\n{ }\n"
        b"simdjson_inline doc::operator double() noexcept(false) { return 1; }\n"
        b"class S {\n"
        b"  nssv_constexpr bool ends_with( char c ) const nssv_noexcept  // (2)\n  {\n"
        b"    return false;\n  }\n"
        b"  simdjson_inline std::string_view get_sv(int obj) { return {}; }\n"
        b"};\n"
        b"bool is_inline = true;\n"
        b"int f(bool has_noexcept) { return is_inline ? g(use_constexpr) : 0; }\n"
    )
    assert symbols(source) == [
        ("doc::doc", "method", 1),
        ("doc::operator double", "method", 4),
        ("S", "class", 5),
        ("S::ends_with", "method", 6),
        ("S::get_sv", "method", 10),
        ("is_inline", "variable", 12),
        ("f", "function", 13),
    ]


def test_an_attribute_macro_whose_arguments_run_over_lines_hides_no_record_or_alias():
    # benchmark's `class BENCHMARK_EXPORT BENCHMARK_DEPRECATED_MSG(\n"..") CSVReporter`, range-v3's
    # `using X RANGES_DEPRECATED(\n"..") = T;`: on one line the macro was blanked, over two the
    # class or alias was lost (32 of them) and a function `DEPRECATED_MSG` made instead.
    source = (
        b"template<typename T>\nusing value_type_t RANGES_DEPRECATED(\n"
        b'    "value_type_t is deprecated.") = iter_value_t<T>;\n'
        b'struct DEPRECATED_MSG(\n  "x") S3 {\n  int a;\n};\n'
        b"class EXPORT DEPRECATED_MSG(\n"
        b'    "The CSV Reporter will be removed") CSVReporter : public BenchmarkReporter {\n'
        b" public:\n  CSVReporter() : printed_header_(false) {}\n};\n"
    )
    assert symbols(source) == [
        ("value_type_t", "type", 1),  # from its template head
        ("S3", "struct", 4),
        ("CSVReporter", "class", 8),
        ("CSVReporter::CSVReporter", "method", 11),
    ]


def test_locals_of_a_lambda_in_a_namespace_scope_initializer_are_no_file_variables():
    # rocksdb's option tables: 28 locals of 15 such lambdas were the file's variables.
    source = (
        b"static std::unordered_map<std::string, OptionTypeInfo> type_info = {\n"
        b'    {"read_amp",\n     {0, OptionType::kUInt32T,\n'
        b"      [](const ConfigOptions&, const std::string& value, void* addr) {\n"
        b"        uint64_t bits = ParseUint64(value);\n"
        b"        *(static_cast<uint32_t*>(addr)) = bits;\n"
        b"        return Status::OK();\n      }}},\n};\n"
        b"namespace n {\nauto handler = [](int x) { int doubled = x * 2; return doubled; };\n}\n"
        b"int after() { return 1; }\n"
    )
    assert symbols(source) == [
        ("type_info", "variable", 1),
        ("n", "namespace", 10),
        ("n::handler", "variable", 11),
        ("after", "function", 13),
    ]


def test_a_typedef_through_a_macro_call_names_what_it_declares_not_its_argument_types():
    # libpng's `typedef PNG_CALLBACK(void, *png_rw_ptr, (png_structp, png_bytep, size_t));`:
    # each parameter type was a type of its own (23 on png.h's 12 lines).
    source = (
        b"typedef PNG_CALLBACK(void, *png_error_ptr, (png_structp, png_const_charp));\n"
        b"typedef PNG_CALLBACK(void, *png_rw_ptr, (png_structp, png_bytep, size_t));\n"
        b"typedef STACK_OF(X509) chain_t;\n"
        b"typedef void (*plain_ptr)(png_structp, int);\n"
    )
    assert symbols(source) == [
        ("png_error_ptr", "type", 1),
        ("png_rw_ptr", "type", 2),
        ("chain_t", "type", 3),
        ("plain_ptr", "type", 4),
    ]


def test_an_out_of_class_conversion_to_a_qualified_type_is_named_by_the_whole_type():
    # simdjson's `inline element::operator std::string_view() const`: named `string_view`.
    source = (
        b"inline element::operator std::string_view() const noexcept(false) { return {}; }\n"
        b"inline element::operator double() const { return 1; }\n"
        b"inline element::operator ::ns::handle() const { return {}; }\n"
    )
    assert symbols(source) == [
        ("element::operator std::string_view", "method", 1),
        ("element::operator double", "method", 2),
        ("element::operator ::ns::handle", "method", 3),
    ]


def test_a_conversion_in_a_nested_class_after_a_specifier_is_named_so():
    # graphite2's `inline\nGlyphCache::Loader::operator bool () const throw()`: named `bool`.
    source = b"inline\nA::B::operator bool () const throw()\n{\n    return true;\n}\n"
    assert symbols(source) == [("A::B::operator bool", "method", 1)]


def test_a_macro_call_of_a_built_in_type_is_no_variable():
    # gflags' `INSTANTIATE_FLAG_REGISTERER_CTOR(bool);` made a variable named `bool`.
    source = b"INSTANTIATE_CTOR(bool);\nINSTANTIATE_CTOR(wchar_t);\nint real_var;\n"
    assert symbols(source) == [("real_var", "variable", 3)]


def test_a_braced_member_initialiser_in_a_conditional_keeps_the_constructor_s_body():
    # glm's type_mat*.inl: 144 constructors ended at their head line, their bodies no symbol's.
    source = b"""namespace glm
{
	template<typename T>
	mat<T>::mat(T scalar)
#		if HAS_INIT_LISTS
			: value{col_type(scalar, 0), col_type(0, scalar)}
#		else
			: value()
#		endif
	{
#		if !HAS_INIT_LISTS
			this->value = scalar;
#		endif
	}

	template<typename T>
	mat<T>::mat(T a, T b)
	{
		this->value = a + b;
	}
}
"""
    spans = [
        (s.qualified_name, s.start_line, s.end_line)
        for s in cpp.extract(source, "a.inl").symbols
        if s.kind != "field"
    ]
    assert spans == [("glm", 1, 21), ("glm::mat::mat", 3, 14), ("glm::mat::mat", 16, 20)]
    # two whole definitions in the branches stay two (oneTBB's concurrent_monitor.h)
    source = (
        b"class wait_node {\npublic:\n#if OLD_GLIBCXX\n"
        b"    wait_node(C c) : my_context(c), my_flag(false) {}\n#else\n"
        b"    wait_node(C c) : my_context(c) {}\n#endif\n};\n"
    )
    assert symbols(source) == [
        ("wait_node", "class", 1),
        ("wait_node::wait_node", "method", 4),
        ("wait_node::wait_node", "method", 6),
    ]


QT_QDOC = b"""class QListSpecialMethods
{
public:
    void sort();
#ifndef Q_QDOC
private:
    inline QStringList *self();
};

class QStringList : public QList<QString>
{
#endif
public:
    inline QStringList() noexcept { }
};

#ifndef Q_QDOC
inline QStringList *QListSpecialMethods::self()
{ return static_cast<QStringList *>(this); }

namespace QtPrivate {
    int QStringList_removeDuplicates(QStringList *that);
}

inline void QListSpecialMethods::sort()
{
    Q_FOREVER {
        if (step())
            return;
    }
}
#endif // Q_QDOC

class
#if QT_VERSION < QT_VERSION_CHECK(6, 0, 0)
Q_CORE_EXPORT
#endif
QByteRef {  // ### Qt 7: remove
    int i;
public:
    inline operator char() const { return i; }
};
int after() { return 1; }
"""


def test_qt_s_conditionals_around_a_record_s_end_and_its_export_macro_lose_nothing() -> None:
    """QtCore's headers: an `#ifndef Q_QDOC` that closes a class and opens another (or goes on
    to definitions after it), `Q_FOREVER {` (a loop macro opening a block), and an export macro
    under `#if` between `class` and the name. Each lost what followed it (qstringlist.h: 40
    definitions; qgenericatomic.h: 23; QByteRef and QCharRef with their members)."""
    found = [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in extract("cpp", QT_QDOC, "q.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("QListSpecialMethods", "class", 1, 8),
        ("QListSpecialMethods::sort", "method", 4, 4),
        ("QListSpecialMethods::self", "method", 7, 7),
        ("QStringList", "class", 10, 15),
        ("QStringList::QStringList", "method", 14, 14),
        ("QListSpecialMethods::self", "method", 18, 19),
        ("QtPrivate", "namespace", 21, 23),
        ("QtPrivate::QStringList_removeDuplicates", "function", 22, 22),
        ("QListSpecialMethods::sort", "method", 25, 31),
        ("QByteRef", "class", 34, 42),
        ("QByteRef::operator char", "method", 41, 41),
        ("after", "function", 43, 43),
    ]


def test_a_macro_around_an_if_s_condition_keeps_the_method_whole() -> None:
    """tomlplusplus' `if TOML_UNLIKELY(cond) {` (a macro that wraps the condition): a method
    with two ended at the second, and the rest became a method named `TOML_UNLIKELY`."""
    source = (
        b"class reader\n{\n    bool read_block()\n    {\n        if UNLIKELY(!n)\n        {\n"
        b"            return false;\n        }\n        while LIKELY(more && !eof())\n"
        b"        {\n            step();\n        }\n        if UNLIKELY(more && eof())\n"
        b'        {\n            fail("truncated sequence");\n        }\n'
        b"        if constexpr (true) { done(); }\n        return true;\n    }\n};\n"
    )
    found = extract("cpp", source, "reader.hpp")
    assert [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in found.symbols
        if s.kind != "field"
    ] == [
        ("reader", "class", 1, 20),
        ("reader::read_block", "method", 3, 19),
    ]
    assert {"UNLIKELY", "LIKELY"} <= {r.name for r in found.references}


def test_a_statement_as_a_capitals_macro_s_argument_loses_no_definition() -> None:
    # pugixml's tests: `CHECK_ALLOC_FAIL(for (..) ..);` made one TEST run over the next five
    # (a `for` is no expression: tree-sitter's error took the definitions after it).
    source = (
        b'TEST(first)\n{\n\tCHECK_ALLOC_FAIL(for (int i = 0; i < 10; ++i) work("a;b"));\n}\n\n'
        b"TEST(second)\n{\n\twork();\n}\n\n"
        b"template <typename T> bool fp_equal(T lhs, T rhs)\n{\n\treturn lhs == rhs;\n}\n"
    )
    found = extract("cpp", source, "t.cpp")
    assert [
        (s.qualified_name, s.start_line, s.end_line) for s in found.symbols if s.kind != "field"
    ] == [
        ("TEST(first)", 1, 4),
        ("TEST(second)", 6, 9),
        ("fp_equal", 11, 14),
    ]
    # the argument is read from its text: its names are still references, its string a string
    assert {"CHECK_ALLOC_FAIL", "work"} <= {r.name for r in found.references}
    assert "a;b" in [t.content for t in found.texts if t.element_type == "string_literal"]


def test_a_declaration_as_a_capitals_macro_s_argument_loses_no_test() -> None:
    # cpp-httplib's tests: `ASSERT_ANY_THROW(Client cli("scheme://yahoo.com"));` (a declaration
    # is no expression: tree-sitter's recovery read the string's `//` as a comment's start) lost
    # the TEST around it and the next one, and made a variable `cli` of the file.
    source = (
        b"TEST(InvalidScheme, SimpleInterface) {\n"
        b'  ASSERT_ANY_THROW(Client cli("scheme://yahoo.com"));\n'
        b"}\n\n"
        b"TEST(NoScheme, SimpleInterface) {\n"
        b'  EXPECT_NO_THROW(std::string s{"http://x"});\n'
        b'  Client cli("yahoo.com:80");\n'
        b"  ASSERT_TRUE(cli.is_valid());\n"
        b"}\n\n"
        b"class Wrapper {\n"
        b'  LLVM_ATTRIBUTE_DEPRECATED(Client make(int port = 80), "use open");\n'  # kept
        b"};\n"
        b"TEST(After, Other) { ASSERT_TRUE(true); }\n"
    )
    found = extract("cpp", source, "test.cc")
    assert [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in found.symbols] == [
        ("TEST(InvalidScheme, SimpleInterface)", "function", 1, 3),
        ("TEST(NoScheme, SimpleInterface)", "function", 5, 9),
        ("Wrapper", "class", 11, 13),
        ("Wrapper::make", "method", 12, 12),
        ("TEST(After, Other)", "function", 14, 14),
    ]
    # the argument is read from its text: its names are still references, its string a string
    assert {"ASSERT_ANY_THROW", "Client"} <= {r.name for r in found.references if r.line == 2}
    strings = [(t.content, t.line) for t in found.texts if t.element_type == "string_literal"]
    assert strings[:2] == [("scheme://yahoo.com", 2), ("http://x", 6)]
    assert not [t for t in found.texts if t.element_type == "comment"]


# cpp-httplib's test.cc, ServerTest::SetUp cut down: conditional links of a method chain.
METHOD_CHAIN = b"""\
#include <vector>
struct Request {};
struct Response { void set_content(const char *, const char *) {} };
struct Server {
  template <class F> Server &Get(const char *, F) { return *this; }
};

class ServerTest {
  virtual void SetUp() {
    svr_.Get("/hi",
             [&](const Request & /*req*/, Response &res) {
             })
#if 0
        .Get("/slowpost",
             [&](const Request & /*req*/, Response &res) {
             })
#endif
        .Get("/remote_addr",
             [&](const Request &req, Response &res) {
             })
#if defined(WITH_ZLIB)
        .Get("/compress",
             [&](const Request & /*req*/, Response &res) {
             })
        ->Get("/nocompress",
             [&](const Request & /*req*/, Response &res) {
               res.set_content("0123456789",
                               "application/octet-stream");
             })
#endif
        ;
  }
  virtual void TearDown() {}
  Server svr_;
  std::vector<int> request_threads_;
};
"""


def test_a_conditional_link_of_a_method_chain_loses_no_member() -> None:
    """An `#if` .. `#endif` around links of a method chain (`svr_.Get(..)\\n#if 0\\n .Get(..)
    \\n#endif\\n .Get(..);`): tree-sitter takes no directive inside an expression, and lost the
    method and every member of its class after it (SetUp, TearDown's neighbours svr_ and
    request_threads_)."""
    found = extract("cpp", METHOD_CHAIN, "test.cc")
    assert [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in found.symbols] == [
        ("Request", "struct", 2, 2),
        ("Response", "struct", 3, 3),
        ("Response::set_content", "method", 3, 3),
        ("Server", "struct", 4, 6),
        ("Server::Get", "method", 5, 5),
        ("ServerTest", "class", 8, 36),
        ("ServerTest::SetUp", "method", 9, 32),
        ("ServerTest::TearDown", "method", 33, 33),
        ("ServerTest::svr_", "field", 34, 34),
        ("ServerTest::request_threads_", "field", 35, 35),
    ]
    assert found.note is None
    # the `#if 0` link is read from its text; the condition's macro is a use
    strings = [(t.content, t.line) for t in found.texts if t.element_type == "string_literal"]
    assert ("/slowpost", 14) in strings and ("/nocompress", 25) in strings
    assert "WITH_ZLIB" in {r.name for r in found.references}


def test_a_conditional_in_an_initializer_after_an_access_label_or_a_doc_comment_keeps_the_member():
    # A review's cases: `public:` right above the member read as a record's head, and a doc
    # comment over several lines was not taken out of the head: the member was lost.
    conditional = b"{\n#ifdef _WIN32\n        true\n#else\n        false\n#endif\n    };\n"
    labelled = (
        b"class App {\npublic:\n    bool allow_"
        + conditional
        + b"    int after() { return 1; }\n};\n"
    )
    documented = (
        b"class App {\n    int first_ = 0;\n    /**\n     * Whether windows style options are"
        b" allowed.\n     */\n    bool allow_"
        + conditional
        + b"    int after() { return 1; }\n};\n"
    )
    for source in (labelled, documented):
        names = [s.qualified_name for s in extract("cpp", source, "app.hpp").symbols]
        assert "App::allow_" in names and "App::after" in names, names
