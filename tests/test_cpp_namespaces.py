"""C++ namespaces opened by macros (`FMT_BEGIN_NAMESPACE`): their members' qualified names.

Libraries define such macros in one header and use them everywhere else, so the index reads
every C++ file's definitions first (repomap/index/namespaces.py) and each file's extractor puts
the namespaces the uses open into the names (extractors/cpp_namespaces.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli
from repomap.extractors import extract
from repomap.extractors.cpp_namespaces import Closer, Opener, Table, definitions, merged

from repomap import config
from repomap.index import pipeline

FMT_CORE = r"""
#ifndef LIB_CORE_H_
#define LIB_CORE_H_
#define LIB_API __attribute__((visibility("default")))
#define LIB_BEGIN_NAMESPACE \
    namespace lib {       \
    inline namespace v9 {
#define LIB_END_NAMESPACE \
    }                     \
    }  // namespace lib
#define LIB_NS lib __attribute__((visibility("hidden")))
#define LIB_OPEN(name) namespace name { LIB_WARNING_PUSH
#define LIB_CLOSE(name) LIB_WARNING_POP }
#define LIB_EXTERN_C_BEGIN extern "C" {
#define LIB_EXTERN_C_END }
#define NOT_A_NAMESPACE { return 0; }

LIB_BEGIN_NAMESPACE
template <typename T> struct buffer { void push_back(T value); };
LIB_END_NAMESPACE
#endif
"""

FMT_FORMAT = """
#include "core.h"

LIB_BEGIN_NAMESPACE
namespace detail {
inline int count_digits(unsigned n) { return n < 10 ? 1 : 2; }
}  // namespace detail

/* Formats arguments into the output. */
template <typename Out, typename... T>
Out format_to(Out out, T&&... args) { return out; }

class LIB_API writer {
 public:
  void write(int value);
};

void writer::write(int value) {}
LIB_END_NAMESPACE

LIB_EXTERN_C_BEGIN
int lib_c_entry(void);
LIB_EXTERN_C_END

namespace outer {
LIB_OPEN(inner)
int nested() { return 1; }
LIB_CLOSE(inner)
}  // namespace outer

LIB_OPEN(LIB_NS)
int aliased() { return 2; }
LIB_CLOSE(LIB_NS)

LIB_OPEN(a + b)
int unnamed() { return 3; }
LIB_CLOSE(a + b)

int global() { return 4; }
"""


def table_of(*sources: tuple[str, str]) -> Table:
    return merged((path, *definitions(text.encode())) for path, text in sources)


def test_definitions_of_openers_closers_and_the_aliases_an_opener_may_use() -> None:
    macros, aliases = definitions(FMT_CORE.encode())
    assert macros == {
        "LIB_BEGIN_NAMESPACE": Opener(None, ("lib", "")),  # the inline namespace: not named
        "LIB_END_NAMESPACE": Closer(2),
        "LIB_OPEN": Opener(("name",), ("name",)),  # LIB_WARNING_PUSH left out
        "LIB_CLOSE": Closer(1),
        "LIB_EXTERN_C_BEGIN": Opener(None, ("",)),  # a brace, no namespace
        "LIB_EXTERN_C_END": Closer(1),
    }
    assert aliases["LIB_NS"] == "lib" and aliases["LIB_API"] == "__attribute__"
    assert definitions(b"#define NOT_A_NAMESPACE { return 0; }\n#define X 1\n") == ({}, {})
    stray = (
        b'// sources in src/*.cc\nconst char* accept = "*/*";\n#define NS_BEGIN namespace ns {\n'
    )
    assert definitions(stray)[0] == {"NS_BEGIN": Opener(None, ("ns",))}  # no comment opened
    documented = (
        b"/* for example\n#define NS_BEGIN namespace my { namespace ns {\n*/\n"
        b"#define NS_BEGIN namespace ns {\n"
    )
    assert definitions(documented)[0] == {"NS_BEGIN": Opener(None, ("ns",))}  # not the example
    crlf = (
        b"#define A_BEGIN \\\r\n  namespace a { \\\r\n  inline namespace v1 {\r\n#define A_END } }"
    )
    assert definitions(crlf)[0] == {"A_BEGIN": Opener(None, ("a", "")), "A_END": Closer(2)}
    table = table_of(("core.h", FMT_CORE))
    assert table.aliases == {"LIB_NS": "lib"}  # only what an opener could be named by
    assert Table.from_json(json.loads(json.dumps(table.to_json()))) == table


def test_members_get_the_namespaces_macros_open() -> None:
    table = table_of(("core.h", FMT_CORE))
    plain = extract("cpp", FMT_FORMAT.encode(), "format.h")
    named = extract("cpp", FMT_FORMAT.encode(), "format.h", table)
    names = {s.name: s.qualified_name for s in named.symbols if s.kind != "namespace"}
    assert names["count_digits"] == "lib::detail::count_digits"
    assert names["format_to"] == "lib::format_to"
    assert names["write"] == "lib::writer::write"  # in the class, and out of line
    assert [s.qualified_name for s in named.symbols if s.name == "write"] == [
        "lib::writer::write",
        "lib::writer::write",
    ]
    assert names["lib_c_entry"] == "lib_c_entry"  # extern "C" is a brace, not a namespace
    assert names["nested"] == "outer::inner::nested"  # after the namespace it is used in
    assert names["aliased"] == "lib::aliased"  # LIB_OPEN(LIB_NS): LIB_NS names `lib`
    assert names["unnamed"] == "unnamed"  # `a + b` names no namespace; its brace closes
    assert names["global"] == "global"
    parents = {s.name: s.parent for s in named.symbols}
    assert parents["format_to"] == "lib" and parents["count_digits"] == "lib::detail"
    spaces = [(s.qualified_name, s.start_line, s.end_line) for s in named.symbols
              if s.kind == "namespace"]  # fmt: skip
    assert ("lib", 4, 19) in spaces and ("outer::inner", 26, 28) in spaces
    # The parse is the same: every other symbol keeps its lines, kind and name.
    shape = sorted((s.name, s.kind, s.start_line, s.end_line) for s in plain.symbols)
    assert shape == sorted(
        (s.name, s.kind, s.start_line, s.end_line) for s in named.symbols
        if (s.kind, s.qualified_name) not in {("namespace", q) for q, _, _ in spaces}
        or s.name == "detail" or s.name == "outer"
    )  # fmt: skip
    # Without the table (another tree, or no definitions found): as before.
    assert {s.name: s.qualified_name for s in plain.symbols}["format_to"] == "format_to"
    # The uses stay references to the macros.
    used = {r.name for r in named.references}
    assert {"LIB_BEGIN_NAMESPACE", "LIB_END_NAMESPACE", "LIB_OPEN", "LIB_CLOSE"} <= used


def test_one_macro_opening_two_namespaces_names_them_outer_first() -> None:
    table = table_of(("config.h", "#define NS_BEGIN namespace llvm { namespace demangle {\n"
                                  "#define NS_END } }\n"))  # fmt: skip
    source = b"NS_BEGIN\nclass Node {};\nNS_END\nNS_BEGIN\nint f();\nNS_END\n"
    symbols = extract("cpp", source, "nodes.h", table).symbols
    assert [(s.qualified_name, s.kind, s.start_line, s.end_line, s.parent) for s in symbols] == [
        ("llvm", "namespace", 1, 3, None),
        ("llvm::demangle", "namespace", 1, 3, "llvm"),
        ("llvm::demangle::Node", "class", 2, 2, "llvm::demangle"),
        ("llvm", "namespace", 4, 6, None),
        ("llvm::demangle", "namespace", 4, 6, "llvm"),
        ("llvm::demangle::f", "function", 5, 5, "llvm::demangle"),
    ]


def test_uses_in_comments_and_unread_branches_and_closers_of_other_macros_are_not_counted() -> None:
    table = table_of(("core.h", FMT_CORE + "#define LIB_CATCH_END }\n"))
    source = b"""// sources in src/*.cc
/* usage:
LIB_BEGIN_NAMESPACE
*/
#ifdef LIB_OLD
LIB_BEGIN_NAMESPACE
#else
LIB_BEGIN_NAMESPACE
#endif
#define HELPER(x) (x)
int f() {
  try { g(); } catch (...) {
LIB_CATCH_END
  return 1;
}
LIB_EXTERN_C_BEGIN
}
int h();
LIB_END_NAMESPACE
int after();
"""
    names = {s.name: s.qualified_name for s in extract("cpp", source, "x.h", table).symbols}
    assert names["f"] == "lib::f"  # one namespace: the commented and the #else uses are not
    assert names["h"] == "lib::h"  # LIB_CATCH_END and the literal `}` close no namespace
    assert names["after"] == "after"  # LIB_END_NAMESPACE closed it
    assert names["HELPER"] == "HELPER"  # the preprocessor has no namespaces


def test_literal_and_macro_namespaces_are_named_in_the_order_they_open() -> None:
    table = table_of(("core.h", FMT_CORE))
    source = b"LIB_OPEN(a)\nnamespace lit {\nLIB_OPEN(b)\nint f();\nstruct S { void m(); };\nLIB_CLOSE(b)\n}\nLIB_CLOSE(a)\n"
    symbols = extract("cpp", source, "x.h", table).symbols
    names = {s.name: (s.qualified_name, s.parent) for s in symbols}
    assert names["f"] == ("a::lit::b::f", "a::lit::b")
    assert names["m"] == ("a::lit::b::S::m", "a::lit::b::S")
    assert names["lit"] == ("a::lit", "a")
    assert names["b"] == ("a::lit::b", "a::lit")


def test_a_declaration_glued_to_a_closer_in_a_crlf_file_is_outside() -> None:
    table = table_of(("core.h", FMT_CORE))
    source = b"LIB_BEGIN_NAMESPACE\r\nint f();\r\nLIB_END_NAMESPACE\r\nint h();\r\n"
    names = {s.name: s.qualified_name for s in extract("cpp", source, "x.h", table).symbols}
    assert names["f"] == "lib::f" and names["h"] == "h"


def test_an_unclosed_namespace_runs_to_the_end_of_the_file() -> None:
    table = table_of(("core.h", FMT_CORE))
    source = b"LIB_BEGIN_NAMESPACE\nint f() { return 1; }\nint g();\n"
    symbols = extract("cpp", source, "open.h", table).symbols
    assert [(s.qualified_name, s.end_line) for s in symbols] == [
        ("lib", 3),
        ("lib::f", 2),
        ("lib::g", 3),
    ]


def _names(root: Path, name: str) -> list[tuple[str, str]]:
    done = run_cli("symbols", name, "--json", "--root", root)
    assert done.returncode in (0, 1), done.stderr
    return [(r["file_path"], r["qualified_name"]) for r in json.loads(done.stdout)["results"]]


def test_the_index_reads_the_definitions_of_the_whole_tree_and_follows_their_edits(
    make_repo,
) -> None:
    root = make_repo({"include/lib/core.h": FMT_CORE, "include/lib/format.h": FMT_FORMAT,
                      "src/main.cc": '#include "lib/format.h"\nint main() { return 0; }\n'})  # fmt: skip
    assert run_cli("index", root).returncode == 0
    assert ("include/lib/format.h", "lib::format_to") in _names(root, "lib::format_to")
    assert ("include/lib/core.h", "lib::buffer") in _names(root, "lib::buffer")

    # The definition changes; format.h's bytes do not, and its names follow.
    core = root / "include/lib/core.h"
    core.write_text(core.read_text().replace("namespace lib {", "namespace lib2 {"))
    done = run_cli("index", root, "--json")
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)["results"][0]
    assert files["modified"] == 2 and files["unchanged"] == 1  # core.h, and format.h again
    assert ("include/lib/format.h", "lib2::format_to") in _names(root, "lib2::format_to")
    with sqlite3.connect(config.resolve(root).db_path) as db:
        names = {row[0] for row in db.execute("SELECT qualified_name FROM symbols")}
    assert "lib2::format_to" in names and "lib::format_to" not in names
    again = json.loads(run_cli("index", root, "--json").stdout)["results"][0]
    assert again["modified"] == 0  # read once, not at every run

    # The header goes: nothing opens the namespace any more.
    core.unlink()
    assert run_cli("index", root).returncode == 0
    assert ("include/lib/format.h", "format_to") in _names(root, "format_to")


def test_a_run_stopped_after_a_definition_changed_still_renames_when_resumed(
    make_repo, index, monkeypatch
) -> None:
    root = make_repo({"include/lib/core.h": FMT_CORE, "include/lib/format.h": FMT_FORMAT})
    index(root)
    core = root / "include/lib/core.h"
    core.write_text(core.read_text().replace("namespace lib {", "namespace lib3 {"))

    def stopped(jobs, workers):  # the run is stopped once the table is saved
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "_extract_all", stopped)
        with pytest.raises(KeyboardInterrupt):
            index(root)
    index(root)  # resumed: format.h's bytes are unchanged, but it was marked to be read
    db = sqlite3.connect(config.resolve(root).db_path)
    names = {row[0] for row in db.execute("SELECT qualified_name FROM symbols")}
    assert "lib3::format_to" in names and "lib::format_to" not in names


def _symbol_names(root: Path) -> set[str]:
    with sqlite3.connect(config.resolve(root).db_path) as db:
        return {row[0] for row in db.execute("SELECT qualified_name FROM symbols")}


def test_a_user_touched_when_the_definition_changed_is_renamed_too(make_repo, index) -> None:
    root = make_repo({"include/lib/core.h": FMT_CORE, "include/lib/format.h": FMT_FORMAT})
    index(root)
    core, used = root / "include/lib/core.h", root / "include/lib/format.h"
    core.write_text(core.read_text().replace("namespace lib {", "namespace lib4 {"))
    stat = used.stat()
    os.utime(used, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same bytes, new stat
    index(root)
    names = _symbol_names(root)
    assert "lib4::format_to" in names and "lib::format_to" not in names


def test_a_c_tree_reads_no_header_for_definitions_and_a_change_of_rule_reads_them_all(
    make_repo, index
) -> None:
    root = make_repo({"include/lib/core.h": FMT_CORE, "include/lib/format.h": FMT_FORMAT})
    index(root)
    assert "lib::format_to" in _symbol_names(root)
    # A `.c` file and no C++ source: a C tree, whose headers are C (the kernel's 23,000 are
    # not read for definitions). The headers are unchanged, yet their names follow the rule.
    (root / "tools").mkdir()
    (root / "tools/helper.c").write_text("int helper(void) { return 0; }\n")
    index(root)
    names = _symbol_names(root)
    assert "format_to" in names and "lib::format_to" not in names
    (root / "src").mkdir()
    (root / "src/main.cc").write_text("int main() { return 0; }\n")  # C++ now: read again
    index(root)
    assert "lib::format_to" in _symbol_names(root)
    assert index(root).modified == 0  # and only once


def test_a_header_that_opens_a_namespace_with_the_tree_s_macro_is_cpp(make_repo) -> None:
    # rapidjson's memorystream.h, in a tree of headers alone: a struct with member functions
    # and no other sign of C++ than `RAPIDJSON_NAMESPACE_BEGIN`. Read as C, it lost its
    # members, and a member function became a free function.
    stream = (
        '#include "core.h"\nLIB_BEGIN_NAMESPACE\n'
        "struct Stream {\n  typedef char Ch;\n  Stream(const Ch *src) : src_(src) {}\n"
        "  Ch Take() { return *src_++; }\n  const Ch *src_;\n};\nLIB_END_NAMESPACE\n"
    )
    plain = "struct point { int x, y; };\nint point_sum(struct point p);\n"
    root = make_repo(
        {
            "include/lib/core.h": FMT_CORE,
            "include/lib/stream.h": stream,
            "include/lib/point.h": plain,
        }
    )
    assert run_cli("index", root).returncode == 0
    with sqlite3.connect(config.resolve(root).db_path) as db:
        languages = dict(db.execute("SELECT path, language FROM files"))
        names = {row[0] for row in db.execute("SELECT qualified_name FROM symbols")}
    assert languages["include/lib/stream.h"] == "cpp"
    assert languages["include/lib/point.h"] == "c"  # no macro of the tree's: as before
    assert {"lib::Stream", "lib::Stream::Ch", "lib::Stream::Stream", "lib::Stream::Take"} <= names
