"""The C extractor (tree-sitter-c), the `.h` language rule, and macro-robust C and C++."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORPORA
from repomap.extractors import extract
from repomap.extractors.cpp_macros import blank_macros

from repomap.languages import header_languages, language_of_header, resolve_language

KERNEL_STYLE = b"""\
// SPDX-License-Identifier: GPL-2.0
#include <linux/list.h>
#include "local.h"

#define MAX_ITEMS 16
#define item_next(i) ((i)->next)

/**
 * struct item - one entry of the list
 * @next: the following entry
 */
struct item {
\tstruct item *next;
\tstruct inner { int n; } in;
};

union value { int n; float f; };

typedef enum { ITEM_NEW, ITEM_OLD = 2 } item_state;
enum color { RED, GREEN };
typedef unsigned long item_id;

int item_count = 0, *item_cursor;
extern const char *item_names[];
static const char *banner = "item " "list";

/**
 * item_add() - add an item
 * @item: what to add
 *
 * Return: 0, or -ENOMEM.
 */
static int __init item_add(struct item *item)
{
\tif (!item)
\t\treturn -ENOMEM;
\tpr_info("added %s\\n", banner);
\treturn item_helper(item);
}
EXPORT_SYMBOL(item_add);

extern __printf(2, 3)
void item_log(struct item *item, const char *fmt, ...);

static __printf(1, 0) struct item *
item_vcreate(const char *fmt, va_list args)
{
\treturn NULL;
}

int item_remove(struct item *item);

static const struct file_operations item_fops = {
\t.open = item_open,
};
"""


def _symbols(
    source: bytes, language: str = "c", fields: bool = False
) -> list[tuple[str, str, int, int]]:
    """The symbols of `source`; a record's data members (`field`) only with `fields`: these
    tests were written about the declarations around them."""
    result = extract(language, source, "x.c")
    return [
        (s.qualified_name, s.kind, s.start_line, s.end_line)
        for s in result.symbols
        if fields or s.kind != "field"
    ]


@pytest.mark.parametrize(
    "expected",
    [
        ("MAX_ITEMS", "macro", 5, 5),
        ("item_next", "macro", 6, 6),
        ("item", "struct", 12, 15),
        ("inner", "struct", 14, 14),  # C has one tag scope: not `item::inner`
        ("value", "union", 17, 17),
        ("item_state", "enum", 19, 19),
        ("ITEM_NEW", "constant", 19, 19),
        ("ITEM_OLD", "constant", 19, 19),
        ("color", "enum", 20, 20),
        ("RED", "constant", 20, 20),
        ("item_id", "type", 21, 21),
        ("item_count", "variable", 23, 23),
        ("item_cursor", "variable", 23, 23),
        ("item_names", "variable", 24, 24),
        ("banner", "variable", 25, 25),
        ("item_add", "function", 33, 39),
        ("item_log", "function", 42, 43),  # behind `extern __printf(2, 3)`
        ("item_vcreate", "function", 45, 49),  # behind `static __printf(1, 0)`
        ("item_remove", "function", 51, 51),
        ("item_fops", "constant", 53, 55),
    ],
)
def test_c_symbols_have_kind_and_extent(expected: tuple[str, str, int, int]) -> None:
    assert expected in _symbols(KERNEL_STYLE)


def test_c_symbols_are_only_these() -> None:
    names = {name for name, _, _, _ in _symbols(KERNEL_STYLE)}
    # Calls, locals and members are not symbols; neither are macro invocations.
    assert not names & {"item_helper", "pr_info", "EXPORT_SYMBOL", "next", "n", "fmt", "args"}


def test_enum_constants_name_their_enum_as_parent() -> None:
    by_name = {s.name: s for s in extract("c", KERNEL_STYLE, "x.c").symbols}
    assert (by_name["ITEM_OLD"].parent, by_name["ITEM_OLD"].signature) == (
        "item_state",
        "ITEM_OLD = 2",
    )
    assert by_name["GREEN"].parent == "color"


@pytest.mark.parametrize(
    "name, signature",
    [
        ("item_add", "static int __init item_add(struct item *item)"),
        (
            "item_log",
            "extern __printf(2, 3) void item_log(struct item *item, const char *fmt, ...)",
        ),
        ("item_next", "#define item_next(i)"),
        ("item_state", "typedef enum {…} item_state"),
        ("item_cursor", "int *item_cursor"),
    ],
)
def test_c_signatures_are_the_declaration_header(name: str, signature: str) -> None:
    by_name = {s.name: s for s in extract("c", KERNEL_STYLE, "x.c").symbols}
    assert by_name[name].signature == signature


def test_kernel_doc_comments_are_the_docstrings_of_what_follows() -> None:
    result = extract("c", KERNEL_STYLE, "x.c")
    by_name = {s.name: s for s in result.symbols}
    assert by_name["item_add"].doc == (
        "item_add() - add an item\n@item: what to add\n\nReturn: 0, or -ENOMEM."
    )
    assert by_name["item"].doc == "struct item - one entry of the list\n@next: the following entry"
    docs = [(t.symbol_name, t.line) for t in result.texts if t.element_type == "docstring"]
    assert docs == [("item", 8), ("item_add", 27)]


def test_c_string_literals_join_adjacent_parts_and_name_their_function() -> None:
    texts = extract("c", KERNEL_STYLE, "x.c").texts
    strings = [
        (t.content, t.line, t.symbol_name) for t in texts if t.element_type == "string_literal"
    ]
    assert ("item list", 25, "banner") in strings
    assert ("added %s\\n", 37, "item_add") in strings
    assert ("local.h", 3, None) in strings


def test_c_references_are_calls_types_and_initialised_functions() -> None:
    refs = {(r.name, r.symbol) for r in extract("c", KERNEL_STYLE, "x.c").references}
    assert {("item_helper", "item_add"), ("pr_info", "item_add")} <= refs
    assert ("item_open", "item_fops") in refs  # `.open = item_open`
    assert ("file_operations", "item_fops") in refs
    assert ("item_add", "item_add") not in refs  # a definition's own name is no reference
    assert ("__printf", "item_log") in refs  # blanked before parsing, still a use


@pytest.mark.parametrize(
    "language, source, expected",
    [
        # spdlog's out-of-line members behind SPDLOG_INLINE.
        (
            "cpp",
            b"namespace spdlog {\nSPDLOG_INLINE void logger::flush()\n{\n    SPDLOG_TRY\n    {\n"
            b"        flush_();\n    }\n    SPDLOG_LOGGER_CATCH(source_loc())\n}\n}\n",
            [("spdlog", "namespace", 1), ("spdlog::logger::flush", "method", 2)],
        ),
        # nlohmann's namespace macros and a class behind them.
        (
            "cpp",
            b"NLOHMANN_JSON_NAMESPACE_BEGIN\n\n/// @brief a serializer\ntemplate<typename T>\n"
            b"struct adl_serializer\n{\n    int x;\n};\nNLOHMANN_JSON_NAMESPACE_END\n",
            [("adl_serializer", "struct", 4)],
        ),
        # fmt's constructors behind FMT_CONSTEXPR, with an initialiser list.
        (
            "cpp",
            b"struct color_type {\n  FMT_CONSTEXPR color_type() noexcept : is_rgb(), value{} {}\n"
            b"  bool is_rgb;\n};\n",
            [("color_type", "struct", 1), ("color_type::color_type", "method", 2)],
        ),
        # Q_OBJECT in a class body, and an export macro between `class` and the name.
        (
            "cpp",
            b"class Q_CORE_EXPORT Widget : public QObject\n{\n    Q_OBJECT\npublic:\n"
            b"    void show();\n};\n",
            [("Widget", "class", 1), ("Widget::show", "method", 5)],
        ),
        # A macro that is the type (no underscore) stays: `DWORD count;` declares `count`.
        (
            "c",
            b"DWORD count;\nFOO_T limit;\n",
            [("count", "variable", 1), ("limit", "variable", 2)],
        ),
        # Statement macros are not prefixes.
        (
            "c",
            b"LIST_HEAD(items);\nDEFINE_MUTEX(lock);\nint after(void);\n",
            [("after", "function", 3)],
        ),
    ],
)
def test_declarations_behind_macros_are_found(
    language: str, source: bytes, expected: list[tuple[str, str, int]]
) -> None:
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in extract(language, source, "m.h").symbols
        if s.kind != "field"
    ]
    assert found == expected


@pytest.mark.parametrize(
    "paths, expected",
    [
        # A C project: headers are C.
        (["src/a.c", "src/a.h", "include/lib.h"], {"src/a.h": "c", "include/lib.h": "c"}),
        # C++ source beside a header makes it C++; elsewhere in a C project, C.
        (["core/a.c", "core/a.h", "ui/w.cpp", "ui/w.h"], {"core/a.h": "c", "ui/w.h": "cpp"}),
        # Headers alone (LLVM's include/, /usr/include/curl): C candidates, each read as C++
        # when its text shows C++ syntax (language_of_header), as in a C project.
        (["include/llvm/ADT/StringRef.h", "include/llvm-c/Core.h"], {
            "include/llvm/ADT/StringRef.h": "c", "include/llvm-c/Core.h": "c",
        }),
        # A C++ project without `.c` files: its headers are C++, wherever they sit.
        (["src/w.cpp", "include/w.h"], {"include/w.h": "cpp"}),
        # A C folder's few C++ files (Lua's src/ with `lua.hpp` for C++ callers, Vim's GUI
        # files) leave its headers C; a folder of more C++ than C makes them C++.
        (["src/lapi.c", "src/lgc.c", "src/lua.hpp", "src/lua.h"], {"src/lua.h": "c"}),
        (["src/a.c", "src/ole.cpp", "src/vim.h"], {"src/vim.h": "c"}),
        (["src/a.c", "src/w.cpp", "src/x.cpp", "src/w.h"], {"src/w.h": "cpp"}),
    ],
)  # fmt: skip
def test_headers_are_c_in_a_c_project_and_cpp_beside_cpp_sources(
    paths: list[str], expected: dict[str, str]
) -> None:
    assert header_languages(paths) == expected


@pytest.mark.parametrize(
    "source, language",
    [
        (b'#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n', "c"),
        (b"namespace util {\nint f();\n}\n", "cpp"),
        (b"template <typename T>\nT max(T a, T b);\n", "cpp"),
        (b"class Pool : public Base {\n};\n", "cpp"),
        (b"struct S {\npublic:\n  int x;\n};\n", "cpp"),
        (b"int class_count;\nstruct class_info { int class; };\n", "c"),
        (b"struct holder {\n  holder(holder &&) noexcept {}\n};\n", "cpp"),
        (b"PYBIND11_NAMESPACE_BEGIN(detail)\nvoid *p = nullptr;\n", "cpp"),
        # pythoncapi_compat.h, brotli's memory.h: C headers that name nullptr for C++ readers.
        (b"// _Py_NULL is defined as nullptr.\n#  define _Py_NULL nullptr\n", "c"),
        (b"#define BROTLI_IS_NULL(A) ((A) == nullptr)\nint f(void);\n", "c"),
        # Each sign found wherever it is: a later indented line, mid-line, the last line.
        (b"int f(void);\n  using namespace std;", "cpp"),
        (b"int f(void);\nint g(void) { return std::max(1, 2); }\n", "cpp"),
        (b'int f(void);\nextern "C++" {\n', "cpp"),
        (b"int f(void); /* namespace x */ int g; // template <T>\n", "c"),
        # A header of a mixed tree: member functions, operators, `enum class` (helper, t7).
        (b"struct Point {\n  Point& operator+=(const Point& o);\n};\n", "cpp"),
        (b"struct F {\n  bool operator()(int x) const;\n};\n", "cpp"),
        (b"enum class Mode { Fast, Slow };\n", "cpp"),
        (
            b"/*\n * \\enum struct drx_version\n * the operator+( of it\n */\nint operator_count;\n",
            "c",
        ),
        # Prose in a block comment whose lines do not start with `*` (expat.h): no C++.
        (
            b"/* element type names are expanded only if there is a default\n   namespace. The"
            b" name\n   class names: a {\n   template <T> std::x enum class y */\nint f(void);\n",
            "c",
        ),
        (b"/* a comment */\nnamespace util {\n}\n/* another */\n", "cpp"),
    ],
)
def test_a_c_candidate_header_with_cpp_syntax_is_read_as_cpp(source: bytes, language: str) -> None:
    assert language_of_header("include/x.h", "c", source) == language
    assert language_of_header("src/x.c", "c", source) == "c"  # only headers change


def test_upper_case_c_files_are_cpp_sources_for_their_headers() -> None:
    # GCC's `.C` is C++: its folder's header is C++ as beside `.cpp` files, `.c` keeps it C.
    assert header_languages(["src/a.C", "src/b.C", "src/k.h"]) == {"src/k.h": "cpp"}
    assert header_languages(["src/a.c", "src/k.h"]) == {"src/k.h": "c"}


def test_a_build_template_of_a_c_or_cpp_file_is_read_as_that_file(make_repo) -> None:
    """glog's whole public API (`LOG`, `CHECK_NOTNULL`) is in `src/glog/logging.h.in`, which
    CMake turns into the header: it was not indexed, and nothing said so."""
    from repomap.languages import doc_format, is_read, language_of

    assert language_of("src/glog/logging.h.in") == "cpp" and is_read("x.hpp.in")
    assert language_of("src/config.c.in") == "c"
    for other in ("Makefile.in", "setup.py.in", "CMakeLists.txt.in", "grammar.y.in", "x.in"):
        assert not is_read(other) and doc_format(other) is None, other
    assert header_languages(["src/a.c", "src/glog/logging.h.in"]) == {"src/glog/logging.h.in": "c"}
    root = make_repo(
        {
            "src/logging.cc": "namespace google { void Log() {} }\n",
            "src/glog/logging.h.in": (
                "#define GOOGLE_GLOG_DLL_DECL @GLOG_EXPORT@\nnamespace google {\n"
                "template <typename T> T CheckNotNull(const char* file, T t) { return t; }\n}\n"
            ),
        }
    )
    repomap = [sys.executable, "-m", "repomap.cli"]
    subprocess.run([*repomap, "index", str(root)], check=True, capture_output=True)
    run = subprocess.run(
        [*repomap, "symbols", "CheckNotNull", "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = [(r["file_path"], r["language"]) for r in json.loads(run.stdout)["results"]]
    assert found == [("src/glog/logging.h.in", "cpp")]


def test_a_kernel_syscall_is_named_by_its_first_argument_and_qualified_as_written() -> None:
    # `symbols umask` found nothing on the kernel: its 400-odd syscalls were named
    # `SYSCALL_DEFINE1(umask)` (one argument: `getpid`, since extractor 58)
    source = (
        b"SYSCALL_DEFINE1(umask, int, mask)\n{\n\treturn ksys_umask(mask);\n}\n\n"
        b"COMPAT_SYSCALL_DEFINE3(open, const char __user *, filename, int, flags, umode_t, m)\n"
        b"{\n\treturn 0;\n}\n\nDEFINE_TEST(foo, int, x)\n{\n\treturn 0;\n}\n"
    )
    found = [(s.name, s.qualified_name) for s in extract("c", source, "kernel/sys.c").symbols]
    assert found == [
        ("umask", "SYSCALL_DEFINE1(umask)"),
        ("open", "COMPAT_SYSCALL_DEFINE3(open)"),
        ("DEFINE_TEST(foo)", "DEFINE_TEST(foo)"),  # another macro's first argument: as before
    ]


def test_c_is_a_language_filters_accept() -> None:
    assert resolve_language(" C ") == "c"
    assert resolve_language("c++") == "cpp"


def test_a_tree_of_c_headers_alone_is_c(make_repo) -> None:
    """curl's, zlib's and libuv's include/ have no `.c` file beside them: read as C++ they were
    missing from `--lang c`; LLVM's C++ headers stay C++ by their syntax."""
    root = make_repo(
        {
            "curl/easy.h": GUARDED_HEADER.replace(b"int add", b"int curl_easy_add"),
            "llvm/ADT/StringRef.h": "namespace llvm {\nclass StringRef {\n};\n}\n",
        }
    )
    repomap = [sys.executable, "-m", "repomap.cli"]
    subprocess.run([*repomap, "index", str(root)], check=True, capture_output=True)
    found = {}
    for name in ("curl_easy_add", "StringRef"):
        run = subprocess.run(
            [*repomap, "symbols", name, "--root", str(root), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        found[name] = [(r["file_path"], r["language"]) for r in json.loads(run.stdout)["results"]]
    assert found == {
        "curl_easy_add": [("curl/easy.h", "c")],
        "StringRef": [("llvm/ADT/StringRef.h", "cpp")],
    }


def test_indexing_a_c_project_reads_c_and_filters_by_lang_c(make_repo, tmp_path: Path) -> None:
    root = make_repo(
        {
            "src/list.c": KERNEL_STYLE,
            "src/list.h": "/** list_len() - how long */\nint list_len(struct item *head);\n",
            "ui/view.cpp": "namespace ui { int draw() { return 0; } }\n",
            "ui/view.h": "namespace ui { int draw(); }\n",
        }
    )
    repomap = [sys.executable, "-m", "repomap.cli"]
    subprocess.run([*repomap, "index", str(root)], check=True, capture_output=True)
    run = subprocess.run(
        [*repomap, "symbols", "list_len", "--root", str(root), "--lang", "c", "--json"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)["results"]
    assert [(r["file_path"], r["kind"]) for r in results] == [("src/list.h", "function")]
    # The C++ folder's header stays C++: `--lang c` leaves ui/ out, `--lang cpp` finds it.
    c_only = subprocess.run(
        [*repomap, "symbols", "draw", "--root", str(root), "--lang", "c"], capture_output=True
    )
    assert c_only.returncode == 1
    cpp = subprocess.run(
        [*repomap, "symbols", "draw", "--root", str(root), "--lang", "cpp", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(r["file_path"] for r in json.loads(cpp.stdout)["results"]) == [
        "ui/view.cpp",
        "ui/view.h",
    ]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags is not installed")
def test_recall_against_ctags_is_at_least_95_percent_on_the_real_corpora() -> None:
    bench = Path(__file__).resolve().parent.parent / "bench" / "c_recall.py"
    corpora = [
        name
        for name, folder in {
            "llvm": CORPORA / "cpp",
            "nlohmann": Path("/usr/include/nlohmann"),
            "spdlog": Path("/usr/include/spdlog"),
            "fmt": Path("/usr/include/fmt"),
            "kernel": CORPORA / "large",
        }.items()
        if folder.is_dir()
    ]
    if not corpora:
        pytest.skip("no corpus present")
    run = subprocess.run(
        [sys.executable, str(bench), "--corpus", ",".join(corpora), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    for corpus in json.loads(run.stdout):
        assert corpus["files"] > 0, corpus["name"]
        assert corpus["found"] >= 0.95 * corpus["expected"], (corpus["name"], corpus["misses"][:20])


@pytest.mark.parametrize(
    "source",
    [
        # One comment from the first `/*` to the end: every macro line in it looks for `*/`.
        # (Left unclosed, tree-sitter-cpp's own parse of it is quadratic, with or without us.)
        b"".join(b"\nFOO_BAR /* open" for _ in range(50_000)) + b" */\n",
        b"\n" + b"template <> " * 5_000 + b"FOO_BAR x\n",
        b"\nA_B\n" * 50_000 + b"int x;\n",
        # Attribute macros after a `)`: one long name must not split into a run of them.
        b"int f(void) " + b"A_B_C_D_E_F_G_H_I_J_K_L_M_N_O_P_Q_R_S_T_U_V_W_X_Y_Z_" * 3 + b"x\n",
        # ... and in lower case: one long word after a prototype's `)` (ceph_features.h's took 10 s)
        b"int f(int a)\n" + (b"abcdefghijklmnopqrstuvwxyz" * 8 + b"\n") * 200,
        # Conditionals in a row, each branch leaving a parenthesis open.
        b"int f(void) {\n" + b"#if A\nif (a\n#else\nif (b\n#endif\n) {}\n" * 20_000 + b"}\n",
        # Statements as macro arguments, never closed: each call scanned 4,000 bytes (17 s).
        b"X(for(" * 100_000,
    ],
    ids=[
        "far-closed-comment",
        "templates",
        "macro-lines",
        "trailing-macros",
        "trailing-words",
        "conditionals",
        "statement-arguments",
    ],  # fmt: skip
)
def test_the_macro_scan_stays_linear_on_hostile_input(source: bytes) -> None:
    """A quadratic or exponential scan takes minutes here; a generous bound, as in
    test_hostile_inputs."""
    started = time.monotonic()
    for language in ("c", "cpp"):
        extract(language, source, "hostile.h")
    assert time.monotonic() - started < 60


# Real code repomap had never read (issue 20, "C and C++ never indexed before" in
# bench/README.md): libuv's, xxhash's, cffi's, psutil's and lz4's ways to hide declarations.
UV_STYLE = b"""\
#define UV_REQ_FIELDS \\
  void* data; \\
  uv_req_type type;

/* Abstract base class of all requests. */
struct uv_req_s {
  UV_REQ_FIELDS
};

struct uv_shutdown_s {
  UV_REQ_FIELDS
  uv_stream_t* handle;
  uv_shutdown_cb cb;
  UV_SHUTDOWN_PRIVATE_FIELDS
};

enum uv_last { UV_FIRST,
  UV_LAST_ONE
};

enum {
  UV_ONLY_ONE
};

static const int uv_sizes[] = {
  UV_HANDLE_TYPE_MAX
};

struct uv_stream_s {
  UV_HANDLE_FIELDS
  UV_STREAM_FIELDS
};
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_macro_alone_on_a_line_in_a_struct_body_is_members(language: str) -> None:
    found = _symbols(UV_STYLE, language)
    assert ("uv_req_s", "struct", 6, 8) in found
    assert ("uv_shutdown_s", "struct", 10, 15) in found
    assert ("uv_stream_s", "struct", 29, 32) in found
    assert extract(language, UV_STYLE, "uv.h").note is None  # every macro line blanked
    # The same shape in an enum or an initialiser is a value, not a macro to skip.
    names = {name.rpartition("::")[2] for name, _, _, _ in found}
    assert {"UV_FIRST", "UV_LAST_ONE", "UV_ONLY_ONE", "uv_sizes"} <= names


XXHASH_STYLE = b"""\
XXH_FORCE_INLINE void
XXH3_hashLong_internal_loop(xxh_u64* XXH_RESTRICT acc,
                      const xxh_u8* XXH_RESTRICT input, size_t len)
{
    size_t const nbStripesPerBlock = len;
}
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_macro_between_a_pointer_and_its_name_is_a_qualifier(language: str) -> None:
    result = extract(language, XXHASH_STYLE, "xxhash.h")
    assert [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ] == [("XXH3_hashLong_internal_loop", "function", 1, 6)]
    assert result.symbols[0].signature == (
        "void XXH3_hashLong_internal_loop(xxh_u64* XXH_RESTRICT acc, "
        "const xxh_u8* XXH_RESTRICT input, size_t len)"
    )


CFFI_STYLE = b"""\
_cffi_to_c_SIGNED_FN(int, 16)
_cffi_to_c_UNSIGNED_FN(unsigned PY_LONG_LONG, 64)

static PyObject *_cffi_from_c_pointer(char *ptr, CTypeDescrObject *ct)
{
    return convert_to_object((char *)&ptr, ct);
}

int
old_style(a, b)
    int a;
    char *b;
{
    return a;
}
"""


def test_macro_calls_alone_at_file_scope_are_not_part_of_the_next_function() -> None:
    result = extract("c", CFFI_STYLE, "backend.c")
    found = [
        (s.name, s.kind, s.start_line, s.end_line, s.signature)
        for s in result.symbols
        if s.kind != "field"
    ]
    assert found == [
        (
            "_cffi_from_c_pointer",
            "function",
            4,
            7,
            "static PyObject *_cffi_from_c_pointer(char *ptr, CTypeDescrObject *ct)",
        ),
        ("old_style", "function", 9, 15, "int old_style(a, b)"),  # K&R: not a macro call
    ]
    refs = {r.name for r in result.references}
    assert {"_cffi_to_c_SIGNED_FN", "_cffi_to_c_UNSIGNED_FN"} <= refs  # still uses


PSUTIL_STYLE = b"""\
/** Raise the right error for a PID. */
PyObject *
psutil_raise_for_pid(pid_t pid, char *syscall) {
    const char *name = "raise";
    if (errno != 0)
        psutil_oserror_wsyscall(syscall);
#define RAISE_FOR(e) raise(e)
#if defined(PSUTIL_OSX)
    else if (is_zombie(pid))
        PyErr_SetString(ZombieProcessError, "");
#endif
    else
        psutil_runtime_error("%s syscall failed", syscall);
    return NULL;
}


// Get PID priority.
PyObject *
psutil_proc_priority_get(PyObject *self, PyObject *args) {
    pid_t pid;
    int priority;
    errno = 0;

    if (!PyArg_ParseTuple(args, _Py_PARSE_PID, &pid))
        return NULL;

#ifdef PSUTIL_OSX
    priority = getpriority(PRIO_PROCESS, (id_t)pid);
#else
    priority = getpriority(PRIO_PROCESS, pid);
#endif
    if (errno != 0)
        return psutil_oserror();
    return Py_BuildValue("i", priority);
}

int after(void) { return 0; }
"""


def test_a_function_tree_sitter_cannot_read_is_recovered_from_its_error() -> None:
    """`#if` between `if` and `else` leaves tree-sitter an ERROR where the function was: its
    head and its braces still say where it is; its locals are not globals."""
    result = extract("c", PSUTIL_STYLE, "proc.c")
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ]
    assert found == [
        ("psutil_raise_for_pid", "function", 2, 15),
        ("RAISE_FOR", "macro", 7, 7),  # a macro is global, even in a body
        # Tree-sitter starts this one inside the lost function: it starts at its own head.
        ("psutil_proc_priority_get", "function", 19, 36),
        ("after", "function", 38, 38),
    ]
    assert result.symbols[2].signature == (
        "PyObject * psutil_proc_priority_get(PyObject *self, PyObject *args)"
    )
    function = result.symbols[0]
    assert function.signature == "PyObject * psutil_raise_for_pid(pid_t pid, char *syscall)"
    assert function.doc == "Raise the right error for a PID."
    strings = {(t.content, t.symbol_name) for t in result.texts if t.element_type != "comment"}
    assert ("%s syscall failed", "psutil_raise_for_pid") in strings
    refs = {(r.name, r.symbol) for r in result.references}
    assert ("psutil_runtime_error", "psutil_raise_for_pid") in refs


GUARDED_HEADER = b"""\
#ifdef __cplusplus
extern "C" {
#endif

/** Add two numbers. */
int add(int a, int b);
struct point { int x; };

#ifdef __cplusplus
} /* extern "C" */
#endif
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
@pytest.mark.parametrize("opening", [b'extern "C" {', b'extern "C"\n{'])
def test_the_cplusplus_guard_of_a_c_header_is_read_around(language: str, opening: bytes) -> None:
    """`extern "C" {` opens in one `#ifdef` and closes in another: tree-sitter can only misread
    that (xxhash.h became one ERROR from its guard to its end); the guard is blanked."""
    header = GUARDED_HEADER.replace(b'extern "C" {', opening)
    result = extract(language, header, "lib.h")
    assert result.note is None
    found = [(s.name, s.kind, s.start_line, s.doc) for s in result.symbols if s.kind != "field"]
    shift = opening.count(b"\n")
    assert found == [
        ("add", "function", 6 + shift, "Add two numbers."),
        ("point", "struct", 7 + shift, None),
    ]


UV_DEFINE = b"""\
#define UV_REQ_FIELDS                                                         \\
  /* public */                                                                \\
  void* data;                                                                 \\
  uv_req_type type; /* read-only */                                           \\
  void* reserved[6];                                                          \\

struct uv_req_s {
  int n;
};
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_comment_in_a_continued_define_does_not_end_it(language: str) -> None:
    """Left to tree-sitter, the comment ends the `#define` and `reserved` leaks out as a
    global variable; the comments stay comments of the macro."""
    result = extract(language, UV_DEFINE, "uv.h")
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ]
    assert found == [("UV_REQ_FIELDS", "macro", 1, 6), ("uv_req_s", "struct", 7, 9)]
    comments = [(t.content, t.line, t.symbol_name) for t in result.texts]
    assert comments == [("public", 2, "UV_REQ_FIELDS"), ("read-only", 4, "UV_REQ_FIELDS")]


RETURNS_FUNCTION_POINTER = b"""\
void (*signal(int sig, void (*func)(int)))(int);

/** The handler for a signal. */
void (*signal_handler(int sig))(int)
{
    return handlers[sig];
}

int (*compare)(const void *, const void *);
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_function_returning_a_function_pointer_is_a_function(language: str) -> None:
    """`signal` returns `void (*)(int)`: its name sits inside the declarator of the pointer
    it returns. A pointer to a function (`compare`) stays a variable."""
    result = extract(language, RETURNS_FUNCTION_POINTER, "signal.c")
    found = [
        (s.name, s.kind, s.start_line, s.end_line, s.is_definition)
        for s in result.symbols
        if s.kind != "field"
    ]
    assert found == [
        ("signal", "function", 1, 1, False),
        ("signal_handler", "function", 4, 7, True),
        ("compare", "variable", 9, 9, True),
    ]
    by_name = {s.name: s for s in result.symbols}
    assert by_name["signal_handler"].signature == "void (*signal_handler(int sig))(int)"
    assert by_name["signal_handler"].doc == "The handler for a signal."


BROTLI_STYLE = b"""\
/* Hashes one position. */
static BROTLI_INLINE size_t FN(HashTypeLength)(void) { return 8; }

static BROTLI_INLINE void FN(Initialize)(
    HasherCommon* common, HashLongestMatch* BROTLI_RESTRICT self) {
  self->common = common;
}
"""


def test_functions_a_macro_names_are_named_as_written() -> None:
    """brotli defines each hasher's functions once, named by `FN(x)` (pasting a suffix on):
    each is its own function, found by the name its source shows."""
    result = extract("c", BROTLI_STYLE, "hash_inc.h")
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ]
    assert found == [
        ("FN(HashTypeLength)", "function", 2, 2),
        ("FN(Initialize)", "function", 4, 7),
    ]
    assert result.symbols[1].signature == (
        "static BROTLI_INLINE void FN(Initialize)( HasherCommon* common, "
        "HashLongestMatch* BROTLI_RESTRICT self)"
    )


LZ4_DOC_BEFORE_IF = b"""\
/*! LZ4_createStreamDecode() and LZ4_freeStreamDecode() :
 *  creation / destruction of streaming decompression tracking context.
 */
#if !defined(RC_INVOKED) /* windows resources */
#if !defined(LZ4_STATIC_LINKING_ONLY_DISABLE_MEMORY_ALLOCATION)
LZ4LIB_API LZ4_streamDecode_t* LZ4_createStreamDecode(void);
LZ4LIB_API int                 LZ4_freeStreamDecode (LZ4_streamDecode_t* LZ4_stream);
#endif
#endif
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_doc_comment_before_an_if_documents_the_declaration_inside(language: str) -> None:
    """lz4.h documents a function, then guards it with `#if`: the doc is the function's."""
    result = extract(language, LZ4_DOC_BEFORE_IF, "lz4.h")
    docs = {s.name: s.doc for s in result.symbols}
    assert docs["LZ4_createStreamDecode"] == (
        "LZ4_createStreamDecode() and LZ4_freeStreamDecode() :\n"
        "creation / destruction of streaming decompression tracking context."
    )
    assert docs["LZ4_freeStreamDecode"] is None
    names = [t.symbol_name for t in result.texts if t.element_type == "docstring"]
    assert names == ["LZ4_createStreamDecode"]


CPYTHON_THREADS = b"""\
static PyObject *
decompress(PyObject *self, PyObject *args)
{
    size_t zresult;
    Py_BEGIN_ALLOW_THREADS
    zresult = ZSTD_decompress(dst, n, src, m);
    Py_END_ALLOW_THREADS
    if (ZSTD_isError(zresult)) {
        return NULL;
    }
    else if (zresult) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    zresult = ZSTD_decompressStream(dctx, &out, &in);
    Py_END_ALLOW_THREADS if (ZSTD_isError(zresult)) {
        return NULL;
    }
    /*
        Otherwise if nothing failed, the result.
    */
    return result;
}

enum level {
    Level_Max
};
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_statement_macro_alone_on_its_line_is_not_a_type(language: str) -> None:
    """CPython's `Py_BEGIN_ALLOW_THREADS` / `Py_END_ALLOW_THREADS` (every C extension): left in,
    `Py_END_ALLOW_THREADS if (...) {` read as a function named `if`."""
    result = extract(language, CPYTHON_THREADS, "decompressor.c")
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ]
    assert found == [
        ("decompress", "function", 1, 23),
        ("level", "enum", 25, 27),
        ("Level_Max", "constant", 26, 26),  # alone in an enum: a value, kept
    ]
    refs = {(r.name, r.symbol) for r in result.references}
    assert {("Py_END_ALLOW_THREADS", "decompress"), ("ZSTD_isError", "decompress")} <= refs
    assert "Otherwise" not in {name for name, _ in refs}  # a comment's word is no use


KERNEL_SYSCALL = b"""\
/**
 * sys_foo - do foo
 * @x: the x
 */
SYSCALL_DEFINE1(foo, int, x)
{
\tint ret = do_foo(x);
\treturn ret;
}

#ifdef CONFIG_COMPAT
COMPAT_SYSCALL_DEFINE2(foo2, int, x, int, y)
{
\treturn 0;
}
#endif

#ifdef CONFIG_HIST_TRIGGERS
static int __init __printf(3, 4)
append_printf(char **bufp, char *end, const char *fmt, ...)
{
	int ret;
	return 0;
}
#endif

/**
 * schedule_tail - first thing a freshly forked thread must call.
 */
asmlinkage __visible void schedule_tail(struct task_struct *prev)
\t__releases(rq->lock)
{
\tfinish();
}
"""


def test_functions_a_macro_defines_are_functions_with_their_docs() -> None:
    """`SYSCALL_DEFINE1(foo, ...) { ... }` is the kernel's `sys_foo`: tree-sitter-c reads a call
    and a block, repomap had no symbol (and `ret` as a global). Named by the macro and its
    first argument. And `asmlinkage __visible` no longer keeps the next doc from its function."""
    result = extract("c", KERNEL_SYSCALL, "kernel/sys.c")
    found = [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ]
    assert found == [
        ("foo", "function", 5, 9),  # qualified as written: SYSCALL_DEFINE1(foo)
        ("foo2", "function", 12, 15),
        ("append_printf", "function", 19, 24),  # its head's first line ends in `(3, 4)`
        ("schedule_tail", "function", 30, 34),
    ]
    by_name = {s.qualified_name: s for s in result.symbols}
    assert by_name["SYSCALL_DEFINE1(foo)"].doc == "sys_foo - do foo\n@x: the x"
    assert by_name["SYSCALL_DEFINE1(foo)"].signature == "SYSCALL_DEFINE1(foo, int, x)"
    assert "COMPAT_SYSCALL_DEFINE2(foo2)" in by_name
    assert by_name["schedule_tail"].doc == (
        "schedule_tail - first thing a freshly forked thread must call."
    )
    refs = {(r.name, r.symbol) for r in result.references}
    assert ("do_foo", "SYSCALL_DEFINE1(foo)") in refs


@pytest.mark.parametrize(
    "source",
    [
        # A function head in an ERROR after every line, its body never closed: each recovery
        # would scan to the end of the file.
        b"int x = (;\n" + b"int\nf(void) {\n" * 20_000,
        # Its head followed by an unclosed comment.
        b"int x = (;\n" + b"int\nf(void) /* \n" * 2_000,
        # Statement macros on every line.
        b"void f(void) {\n" + b"    Py_BEGIN_ALLOW_THREADS\n" * 50_000 + b"}\n",
    ],
    ids=["unclosed-bodies", "unclosed-comments", "statement-macros"],
)
def test_the_recovery_stays_linear_on_hostile_input(source: bytes) -> None:
    """Quadratic, the first took 110 s; a generous bound, as in test_hostile_inputs."""
    started = time.monotonic()
    extract("c", source, "hostile.c")
    assert time.monotonic() - started < 30


def test_symbol_rows_are_the_symbols_fields_in_the_store_order(tmp_path: Path) -> None:
    """The worker stores tuple(symbol): a Symbol's fields must stay store.SYMBOL_FIELDS in
    order, or every column after a moved field would be written into the wrong one."""
    from repomap.extractors.model import Symbol

    from repomap import store

    assert Symbol._fields == store.SYMBOL_FIELDS
    source = b"/* Adds. */\nint add(int a, int b) { return a + b; }\n#define TWICE(x) ((x) * 2)\n"
    found = extract("c", source, "m.c").symbols
    assert [tuple(s) for s in found] == [
        tuple(getattr(s, name) for name in store.SYMBOL_FIELDS) for s in found
    ]
    add = next(s for s in found if s.name == "add")
    assert (add.kind, add.start_line, add.is_definition) == ("function", 2, True)


@pytest.mark.parametrize(
    "body",
    [
        b"0x1F + FOO_BAR",
        b"1.5e+3f * x",
        b"(a)->b.c1 + 1.foo",
        b"sizeof(int) defined X",
        b"L + u8 R",
    ],
)
def test_a_define_body_without_literals_gives_the_names_the_token_scan_gives(body: bytes) -> None:
    """A `#define` body with no `/`, `"` or `'` is read by a names-only pattern: the names
    and offsets must be those TOKEN's full scan finds (numbers like `1.foo` hold no name)."""
    from repomap.extractors.cpp_macros import KEYWORDS, TOKEN

    source = b"#define M(a, x) " + body + b"\n"
    expected = [
        (m[0], 16 + m.start())
        for m in TOKEN.finditer(body)
        if m.lastgroup == "name" and m[0] not in KEYWORDS
    ]
    names = [(r.name.encode(), r.line) for r in extract("c", source, "m.c").references]
    assert {name for name, _ in expected} == {name for name, _ in names}
    assert expected  # every case names something


def test_functions_macros_define_are_named_by_their_arguments():
    # SYSCALL_DEFINE0(getpid) { .. } parses as a function of type SYSCALL_DEFINE0 declaring
    # `(getpid)`: no name was found, and the kernel's getpid, gettid, fork... were missing, a
    # local of the body read as a global instead. A test macro's two names are both kept.
    source = (
        b"SYSCALL_DEFINE1(umask, int, mask)\n{\n\treturn 0;\n}\n\n"
        b"SYSCALL_DEFINE0(getpid)\n{\n\tstruct pt_regs *regs = current_pt_regs();\n"
        b"\treturn 1;\n}\n\n"
        b'TEST(Parser, HandlesEmpty)\n{\n\tTEST_ASSERT_EQUAL(0, parse(""));\n}\n\n'
        b"Test(misc, passing) {\n\tcr_assert(1);\n}\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in extract("c", source, "t.c").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("SYSCALL_DEFINE1(umask)", "function", 1),  # a syscall's other arguments: types, names
        ("SYSCALL_DEFINE0(getpid)", "function", 6),
        ("TEST(Parser, HandlesEmpty)", "function", 12),
        ("Test(misc, passing)", "function", 17),
    ]


def test_a_macro_head_with_a_parameter_list_names_the_function_before_it():
    # libpng defines its functions as `PNG_FUNCTION(type, name, (params), attributes) {`: a
    # call statement, then a block. They were named `PNG_FUNCTION(png_voidp)` (22 of the core,
    # png_malloc and png_error among them), and `repomap symbols png_error` found none.
    source = (
        b"PNG_FUNCTION(png_voidp /* PRIVATE */,\npng_realloc_array,(png_const_structrp png_ptr,"
        b"\n    int add_elements),PNG_ALLOCATED)\n{\n   return 0;\n}\n\n"
        b"PNG_FUNCTION(void,PNGAPI\npng_error,(png_const_structrp png_ptr, png_const_charp m),"
        b"\n    PNG_NORETURN)\n{\n   abort();\n}\n\n"
        b"SYSCALL_DEFINE1(umask, int, mask)\n{\n\treturn 0;\n}\n"
    )
    assert _symbols(source) == [
        ("png_realloc_array", "function", 1, 6),
        ("png_error", "function", 8, 13),
        ("SYSCALL_DEFINE1(umask)", "function", 15, 18),  # no parameter list among them
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_function_a_macro_of_another_file_names_is_named_by_its_argument(language: str) -> None:
    # lighttpd: plugin.h's `#define REQUEST_FUNC(x) static handler_t x(request_st *r, ..)`,
    # then mod_expire.c's `REQUEST_FUNC(mod_expire_handler) {`: the function was named
    # `REQUEST_FUNC(mod_expire_handler)` (215 handlers), and `repomap symbols
    # mod_expire_handler` found none. Its qualified name keeps the macro as written; a macro
    # this file defines makes a plain function, as before. A test macro's argument names its
    # test only when it says so: systemd's `TEST(strv_find)` tests strv_find (and makes
    # `test_strv_find`), jemalloc's `TEST_BEGIN(test_zero)` makes `test_zero`.
    source = (
        b'#include "plugin.h"\n'
        b"REQUEST_FUNC(mod_expire_handler) {\n    return helper(r);\n}\n\n"
        b"SYSCALL_DEFINE0(getpid)\n{\n\treturn 1;\n}\n\n"
        b"#define HANDLER(name) static int name(int r)\n"
        b"HANDLER(local_handler) {\n    return r;\n}\n\n"
        b"TEST(strv_find) {\n    check(1);\n}\n\n"
        b"TEST_BEGIN(test_zero) {\n    check(0);\n}\n"
    )
    result = extract(language, source, "mod_expire.c")
    found = [(s.name, s.qualified_name, s.start_line) for s in result.symbols]
    assert found == [
        ("mod_expire_handler", "REQUEST_FUNC(mod_expire_handler)", 2),
        ("getpid", "SYSCALL_DEFINE0(getpid)", 6),
        ("HANDLER", "HANDLER", 11),
        ("local_handler", "local_handler", 12),
        ("TEST(strv_find)", "TEST(strv_find)", 16),
        ("test_zero", "TEST_BEGIN(test_zero)", 20),
    ]
    used = {r.name for r in result.references}
    assert not used & {"mod_expire_handler", "getpid", "local_handler", "test_zero"}


@pytest.mark.parametrize("language", ["c", "cpp"])
@pytest.mark.parametrize("storage", [b"static ", b""])
def test_a_static_macro_head_with_a_parameter_list_names_its_function_and_keeps_the_next(
    storage: bytes, language: str
) -> None:
    # libpng's pngerror.c: `static PNG_FUNCTION(void /* PRIVATE */,\npng_default_error,(..),
    # PNG_NORETURN) {` was a function named `PNG_FUNCTION`, and png_longjmp after it was lost
    # (its head had no return type before the macro); `PNG_FUNCTION(void, (PNGCBAPI\n
    # png_safe_error),(..), ..)` was named `PNG_FUNCTION(void)`.
    source = (
        storage + b"PNG_FUNCTION(void /* PRIVATE */,\ndefault_error,(int p, const char *msg),\n"
        b"    PNG_NORETURN)\n{\n   report(msg);\n}\n\n"
        b"PNG_FUNCTION(void,PNGAPI\njump_back,(int p, int val),PNG_NORETURN)\n{\n"
        b"   do_longjmp(p, val);\n}\n\n"
        b"PNG_FUNCTION(void /* PRIVATE */, (PNGCBAPI\nsafe_error),(int p, const char *msg),\n"
        b"    PNG_NORETURN)\n{\n   report(msg);\n}\n\n"
        b"static PNG_FUNCTION(void,\nlast_one,(int p),PNG_NORETURN)\n{\n   other(p);\n}\n\n"
        b"void normal_fn(int p)\n{\n   other(p);\n}\n"
    )
    assert _symbols(source, language) == [
        ("default_error", "function", 1, 6),
        ("jump_back", "function", 8, 12),
        ("safe_error", "function", 14, 19),
        ("last_one", "function", 21, 25),
        ("normal_fn", "function", 27, 30),
    ]


def test_a_macro_this_file_defines_names_its_function_after_its_argument():
    # libtiff: `#define DECLAREContigPutFunc(name) static void name(...)`, then
    # `DECLAREContigPutFunc(putgreytile)\n{ .. }`: tree-sitter reads a function of type
    # `DECLAREContigPutFunc` declaring `(putgreytile)`. The mixed-case name was not taken for a
    # macro, so 63 functions were lost and their locals read as the file's variables.
    source = (
        b"#define DECLAREContigPutFunc(name) \\\n"
        b"    static void name(int *img, unsigned *cp, \\\n"
        b"                     int w, int h)\n\n"
        b"DECLAREContigPutFunc(putgreytile)\n{\n    int samples = img[0];\n    *cp = samples;\n}\n\n"
        b"DeclareOther(putother)\n{\n    int count = 0;\n    (void)count;\n}\n\n"
        b"foreach(item)\n{\n    int inner = 1;\n}\n"
        b"int file_level = 2;\n"
        b"static MLX5E_DECLARE_STATS_GRP_OP_FILL_STRS(sw)\n{\n\tint i;\n\treturn i;\n}\n"
    )
    assert _symbols(source) == [
        ("DECLAREContigPutFunc", "macro", 1, 3),
        ("putgreytile", "function", 5, 9),  # the macro's body names its argument's function
        ("DeclareOther(putother)", "function", 11, 15),  # defined elsewhere: named as written
        ("file_level", "variable", 21, 21),  # `foreach(item) {`'s local is no file variable
        ("MLX5E_DECLARE_STATS_GRP_OP_FILL_STRS(sw)", "function", 22, 26),  # the kernel's
    ]


OPENSSL_STYLE = b"""\
IMPLEMENT_ASN1_ALLOC_FUNCTIONS(GENERAL_SUBTREE)
IMPLEMENT_ASN1_ALLOC_FUNCTIONS(NAME_CONSTRAINTS)

#define IA5_OFFSET_LEN(ia5base, offset) \\
    ((ia5base)->length - ((unsigned char *)(offset) - (ia5base)->data))

static char *ia5memrchr(ASN1_IA5STRING *str, int c)
{
    return NULL;
}

#define skip_64(p, end, bad) \\
skip_n(p, end, sizeof(u64), bad)

#define skip_32(p, end, bad) \\
skip_n(p, end, sizeof(u32), bad)
"""


def test_macro_calls_before_a_continued_define_are_not_a_function() -> None:
    # openssl's v3_ncons.c: the second call was read as the head of a function that swallowed
    # the two functions after it, since the `#define`'s second line looked like code. The
    # last line of a continued `#define` is its body, not a call to blank (ceph's decode.h).
    assert _symbols(OPENSSL_STYLE) == [
        ("IA5_OFFSET_LEN", "macro", 4, 5),
        ("ia5memrchr", "function", 7, 10),
        ("skip_64", "macro", 12, 13),
        ("skip_32", "macro", 15, 16),
    ]


LUA_STYLE = b"""\
LUA_API int   (lua_gettop) (lua_State *L);
LUA_API const char *(lua_typename) (lua_State *L, int tp);
LUALIB_API lua_Number (luaL_checknumber) (lua_State *L, int arg);
extern void (*handler)(int);
static int (square)(int x) { return x * x; }
Py_LOCAL_INLINE(Py_ssize_t)
STRINGLIB(count)(const STRINGLIB_CHAR* str, Py_ssize_t str_len)
{
    return 0;
}
"""


def test_a_name_in_parentheses_is_the_function_name() -> None:
    # Lua writes its API `int (lua_gettop) (lua_State *L)`, so that a macro of the same name
    # does not expand there: functions, not variables named with their type. A pointer to a
    # function stays a variable; CPython's STRINGLIB(count) keeps its return type's macro.
    assert [(name, kind) for name, kind, _, _ in _symbols(LUA_STYLE)] == [
        ("lua_gettop", "function"),
        ("lua_typename", "function"),
        ("luaL_checknumber", "function"),
        ("handler", "variable"),
        ("square", "function"),
        ("STRINGLIB(count)", "function"),
    ]


def test_a_conditional_in_a_leading_comma_enum_is_no_constant() -> None:
    # Vim's option.h: tree-sitter-c read `#ifdef FEAT_QUICKFIX` between `, BV_X` lines as an
    # enumerator named FEAT_QUICKFIX.
    source = b"enum\n{\n    BV_AI = 0\n    , BV_AR\n#ifdef FEAT_QUICKFIX\n    , BV_BH\n#endif\n};\n"
    names = [name for name, kind, _, _ in _symbols(source) if kind == "constant"]
    assert "FEAT_QUICKFIX" not in names
    assert {"BV_AI", "BV_BH"} <= set(names)


ATTRIBUTE_STYLE = b"""\
int smsg(const char *, ...) ATTRIBUTE_COLD ATTRIBUTE_FORMAT_PRINTF(1, 2);
int vim_vsnprintf(char *str, size_t str_m, const char *fmt, va_list ap)
\tATTRIBUTE_FORMAT_PRINTF(3, 0);
int test(void)
{
#if defined(__QEMU__)
  RETURN_SKIP("Test does not currently work in QEMU");
#endif
  return 0;
}
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_attribute_macros_after_a_prototype_are_read_around(language: str) -> None:
    # Vim's proto.h, libevent's log-internal.h, curl's dynbuf.h: a run of attribute macros
    # after the `)` (or on the next line) made the prototype a call, lost. A call after a
    # directive's parentheses is no such macro, nor is a macro type's name (`STACK_OF(X) NAME`).
    result = extract(language, ATTRIBUTE_STYLE, "x.h")
    assert [
        (s.name, s.kind, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"
    ] == [
        ("smsg", "function", 1, 1),
        ("vim_vsnprintf", "function", 2, 3),
        ("test", "function", 4, 10),
    ]
    assert "Test does not currently work in QEMU" in {t.content for t in result.texts}
    if language == "c":
        typedef = b"typedef STACK_OF(OSSL_CMP_MSG) OSSL_CMP_MSGS;\n"
        assert _symbols(typedef) == [("OSSL_CMP_MSGS", "type", 1, 1)]


ZLIB_STYLE = b"""\
int inflate(z_streamp strm, int flush)
{
    switch (state->mode) {
    case HEAD:
#ifdef GUNZIP
        if (!(state->wrap & 1) ||   /* check if zlib header allowed */
#else
        if (   /* no gzip: "zlib only" */
#endif
            ((BITS(8) << 8) + (hold >> 8)) % 31) {
            strm->msg = (char *)"incorrect header check";
            break;
        }
    }
#if 0
    if (legacy(strm)) {
#else
    if (modern(strm)) {
#endif
        return 1;
    }
    return 0;
}

int inflateEnd(z_streamp strm)
{
    return Z_OK;
}
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_conditional_whose_branches_each_open_a_parenthesis_is_read_as_one(
    language: str,
) -> None:
    # zlib's inflate(): each branch of the conditional leaves `if (` open. tree-sitter lost
    # inflate() there and every function after it; the parse reads one branch (the `#else`
    # of an `#if 0`), and the other branch's comment and string are still texts.
    result = extract(language, ZLIB_STYLE, "inflate.c")
    assert [(s.name, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"] == [
        ("inflate", 1, 23),
        ("inflateEnd", 25, 28),
    ]
    texts = [(t.content, t.line) for t in result.texts]
    assert ('no gzip: "zlib only"', 8) in texts
    assert ("check if zlib header allowed", 6) in texts
    assert ("incorrect header check", 11) in texts
    assert len(texts) == len(set(texts))  # each once
    names = {r.name for r in result.references}
    assert {"legacy", "modern"} <= names
    assert not {"ifdef", "endif", "else"} & names  # a directive's words are no names


def test_a_return_type_macro_alone_on_its_line_is_kept_before_the_head() -> None:
    # CPython's `PyAPI_FUNC(int)\n_PyArg_Parse_SizeT(..)\n{`: a call alone on its line before a
    # head without a return type is that type, not a macro expanding to definitions (which is
    # blanked); blanked, `incr_true(void)` read as a type and a parenthesised name, lost.
    source = (
        b"#define X 1\n\nPy_LOCAL_INLINE(PyObject *)\nincr_true(void)\n{\n    return Py_True;\n}\n\n"
        b"PyAPI_FUNC(int)\nparse_size_t(PyObject *args,\n             const char *format, ...)\n"
        b"{\n    return 0;\n}\n\nDEFINE_FN(int, 16)\nstatic int after(void) { return 0; }\n"
    )
    result = extract("c", source, "x.c")
    assert [
        (s.name, s.start_line, s.end_line, s.signature) for s in result.symbols if s.kind != "field"
    ] == [
        ("X", 1, 1, "#define X 1"),
        ("incr_true", 3, 7, "Py_LOCAL_INLINE(PyObject *) incr_true(void)"),
        (
            "parse_size_t",
            9,
            14,
            "PyAPI_FUNC(int) parse_size_t(PyObject *args, const char *format, ...)",
        ),
        ("after", 17, 17, "static int after(void)"),
    ]


VIM_STYLE = b"""\
int win_close(win_T *win)
{
    {
#ifdef MESSAGE_QUEUE
\tdid_decrement =
#else
\t(void)
#endif
\t    win_enter_ext(wp, WEE_CURWIN_INVALID);
    }
    return OK;
}

#if (NGX_HAVE_VARIADIC_MACROS)
void
ngx_log_error_core(ngx_uint_t level, const char *fmt, ...)
#else
void
ngx_log_error_core(ngx_uint_t level, const char *fmt, va_list args)
#endif
{
    return;
}

#if GTK_CHECK_VERSION(3,22,2)
    static void
style_updated_cb(GtkWidget *widget)
#else
    static void
style_set_cb(GtkWidget *widget, GtkStyle *previous)
#endif
{
    new_colors();
}

int after(void) { return 0; }
"""


def test_a_conditional_whose_branches_end_inside_an_expression_is_read_as_one() -> None:
    # Vim's win_close(): `did_decrement =` or `(void)` before one call; nginx's two heads of
    # one function before one body. Two heads that name two functions stay as they were read
    # (both names found; the body with the last).
    symbols = extract("c", VIM_STYLE, "x.c").symbols
    found = [(s.name, s.start_line, s.end_line) for s in symbols if "style" not in s.name]
    assert found == [("win_close", 1, 12), ("ngx_log_error_core", 15, 23), ("after", 36, 36)]
    assert [s.name for s in symbols if "style" in s.name] == ["style_updated_cb", "style_set_cb"]


def test_attribute_macros_in_a_conditional_after_a_prototype_are_read_around() -> None:
    # coreutils' error.h: the attribute in both branches of a conditional, the `;` after it;
    # CPython's pegen.h: a function named in capitals on the line after its return type's
    # macro is no attribute.
    source = (
        b"extern void error (int __status, const char *__format, ...)\n"
        b"#if GNULIB_VFPRINTF_POSIX\n"
        b"     _GL_ATTRIBUTE_FORMAT ((_GL_ATTRIBUTE_SPEC_PRINTF_STANDARD, 2, 3))\n"
        b"#else\n"
        b"     _GL_ATTRIBUTE_FORMAT ((_GL_ATTRIBUTE_SPEC_PRINTF_SYSTEM, 2, 3))\n"
        b"#endif\n"
        b"     ;\n"
        b"\n"
        b"Py_LOCAL_INLINE(void *)\n"
        b"CHECK_CALL(Parser *p, void *result)\n"
        b"{\n"
        b"    return result;\n"
        b"}\n"
    )
    assert _symbols(source) == [("error", "function", 1, 7), ("CHECK_CALL", "function", 9, 13)]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_attribute_macro_after_a_parameter_name_is_read_around(language: str) -> None:
    # Vim writes `expand_T *xp UNUSED` 1,271 times; get_user_cmd_flags and a dozen others were
    # lost. A type's own capitalised word (`const DWORD`, `struct foo BAR`) is no such macro.
    source = (
        b"    char_u *\n"
        b"get_user_cmd_flags(expand_T *xp UNUSED, int idx)\n"
        b"{\n"
        b'    static char *user_cmd_flags[] = {"addr", "bang"};\n'
        b"    return (char_u *)user_cmd_flags[idx];\n"
        b"}\n"
        b"int h(const DWORD d, struct foo BAR, int **pp UNUSED_PARAM);\n"
    )
    blanked = blank_macros(source, language)[0]
    assert b"UNUSED" not in blanked and b"DWORD" in blanked and b"BAR" in blanked
    result = extract(language, source, "x.c")
    assert [(s.name, s.start_line, s.end_line) for s in result.symbols if s.kind != "field"] == [
        ("get_user_cmd_flags", 1, 6),
        ("h", 7, 7),
    ]
    assert "UNUSED" in {r.name for r in result.references}  # still a use of the macro


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_macro_around_a_prototype_s_parameters_is_read_around(language: str) -> None:
    # zlib's `OF((..))` (150 prototypes were functions named `OF`), bash's `PARAMS((..))` (two
    # thousand prototypes lost), BSD's `__P((..))`, after a name or a function pointer's `)`.
    # An attribute's arguments in two parentheses (`_GL_ARG_NONNULL ((3))`) are no parameters.
    source = (
        b"local void fill_window OF((deflate_state *s));\n"
        b"extern int *find_flag PARAMS((int));\n"
        b"int getopt_internal __P((int, char * const *, const char *));\n"
        b"typedef voidpf (*alloc_func) OF((voidpf opaque, uInt items));\n"
        b"static void _GL_ATTRIBUTE_FORMAT_PRINTF_STANDARD (3, 0) _GL_ARG_NONNULL ((3))\n"
        b"error_tail (int status, const char *message)\n"
        b"{\n"
        b"  return;\n"
        b"}\n"
        b"#define OF(args) args\n"
        b"int f(void) { return FOO((1)); }\n"
    )
    symbols = [
        (s.name, s.kind, s.start_line, s.end_line)
        for s in extract(language, source, "x.c").symbols
        if s.kind != "field"
    ]
    assert symbols[:4] == [
        ("fill_window", "function", 1, 1),
        ("find_flag", "function", 2, 2),
        ("getopt_internal", "function", 3, 3),
        ("alloc_func", "type", 4, 4),
    ]
    assert ("OF", "function") not in {(name, kind) for name, kind, _, _ in symbols}
    assert ("f", "function", 11, 11) in symbols
    # gnulib's attributes before the name on its own line are blanked whole, as attributes
    # (the function was named `_GL_ATTRIBUTE_FORMAT_PRINTF_STANDARD`)
    assert ("error_tail", "function", 5, 9) in symbols
    blanked = blank_macros(source, language)[0]
    assert b"fill_window    (deflate_state *s) ;" in blanked
    assert b"static void" + b" " * 66 + b"\nerror_tail (" in blanked
    assert b"#define OF(args) args" in blanked
    assert b"FOO((1))" in blanked  # `return` is no name


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_attribute_macro_between_return_type_and_name_is_not_the_name(language: str) -> None:
    # gnulib's `static size_t _GL_ATTRIBUTE_PURE\nstring_hash (..)`, glibc regex's
    # `internal_function` on its own line (in git, bash and coreutils).
    source = (
        b"static size_t _GL_ATTRIBUTE_PURE\n"
        b"string_hash (const void *x)\n"
        b"{\n"
        b"  return 0;\n"
        b"}\n"
        b"static void\n"
        b"internal_function\n"
        b"init_word_char (re_dfa_t *dfa)\n"
        b"{\n"
        b"}\n"
    )
    assert [
        (s.name, s.start_line, s.end_line)
        for s in extract(language, source, "x.c").symbols
        if s.kind != "field"
    ] == [
        ("string_hash", 1, 5),
        ("init_word_char", 6, 10),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_macro_after_a_declared_name_is_no_function(language: str) -> None:
    # Vim's globals.h: `EXTERN long Columns INIT(= 80);`, 600 of them; LevelDB's members
    # `int count_ GUARDED_BY(mu_);` were methods named GUARDED_BY. A capitalised function
    # after an attribute (`noinline int FOO(void);`) stays a function.
    source = (
        b"EXTERN long Columns INIT(= 80);\n"
        b"EXTERN int do_profiling INIT(= PROF_NONE);\n"
        b"struct state {\n"
        b"  int count_ GUARDED_BY(mu_);\n"
        b"  int total_ GUARDED_BY(mu_) = 0;\n"
        b"};\n"
        b"noinline int LONGEST_NAME(void);\n"
    )
    names = {(s.name, s.kind) for s in extract(language, source, "x.c").symbols}
    assert not {name for name, _ in names} & {"INIT", "GUARDED_BY", "state::GUARDED_BY"}
    assert ("LONGEST_NAME", "function") in names
    if language == "c":
        assert ("Columns", "variable") in names


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_attribute_macro_ending_the_return_type_s_line_is_not_the_name(language: str) -> None:
    # The kernel's `static void __printf(2, 3)\nsend_monitor_note(..)` (69 such lines), tmux's
    # `printflike(3, 4)`: the function was named after the macro, or ran into the next one.
    # A call's numbers before a newline (`return f(1, 2)\n`) are no attribute.
    source = (
        b"static void __printf(2, 3)\n"
        b"send_monitor_note(struct sock *sk, const char *fmt, ...)\n"
        b"{\n"
        b"}\n"
        b"static int __init printflike(3, 4)\n"
        b"append_printf(char **bufp, char *end, const char *fmt, ...)\n"
        b"{\n"
        b"\tva_list args;\n"
        b"\tint ret;\n"
        b"\tva_start(args, fmt);\n"
        b"\tif (ret < end - *bufp) {\n"
        b"\t\t*bufp += ret;\n"
        b"\t} else {\n"
        b"\t\tret = -ERANGE;\n"
        b"\t}\n"
        b"\treturn ret;\n"
        b"}\n"
        b"static int __init\n"
        b"append_str(char **bufp)\n"
        b"{\n"
        b"  return f(1, 2)\n"
        b"g(x);\n"
        b"}\n"
    )
    found = [
        (s.name, s.start_line, s.end_line)
        for s in extract(language, source, "x.c").symbols
        if s.kind != "field"
    ]
    assert found == [("send_monitor_note", 1, 4), ("append_printf", 5, 17), ("append_str", 18, 23)]
    assert b"return f(1, 2)" in blank_macros(source, language)[0]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_storage_macro_and_an_initializer_macro_leave_the_variable(language: str) -> None:
    # Vim declares 2,266 globals as `EXTERN char e_interrupted[]\n\tINIT(= N_("..."));`: none was
    # a symbol. A capitalised word that is a type (`DWORD count;`, `BOOL WINAPI f(void);`)
    # stays; a `(=` in a comment or after a lower-case name is no initialiser macro.
    source = (
        b"EXTERN char e_interrupted[]\n"
        b'\tINIT(= N_("E11: Invalid; :q<CR> closes"));\n'
        b"EXTERN schar_T\t*ScreenLines INIT(= NULL);\n"
        b"EXTERN long Columns INIT(= 80);\n"
        b"STATIC const unsigned mask_bits[] = {0, 1};\n"
        b"DWORD count;\n"
        b"/* INIT(= 0) sets it */\n"
        b"int x = f(= 1);\n"
    )
    found = {(s.name, s.kind) for s in extract(language, source, "x.c").symbols}
    assert {
        ("e_interrupted", "variable"),
        ("ScreenLines", "variable"),
        ("Columns", "variable"),
        ("mask_bits", "constant"),
        ("count", "variable"),
    } <= found
    assert not {name for name, _ in found} & {"EXTERN", "INIT", "STATIC", "DWORD"}
    blanked = blank_macros(source, language)[0]
    assert b"DWORD count;" in blanked and b"/* INIT(= 0) sets it */" in blanked
    assert b"f(= 1)" in blanked
    assert b'\t     = N_("E11: Invalid; :q<CR> closes") ;' in blanked


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_attribute_macros_after_a_record_s_brace_declare_nothing(language: str) -> None:
    # The kernel ends 11,507 records with `} __packed;`, `} __packed __aligned(4);` or
    # `} __randomize_layout;`: each was a variable named `__packed` (or a function `__aligned`
    # holding its struct). A typedef's name after the brace stays the name; after attributes
    # (`} __aligned(8) psw_compat_t;`) too, where the struct was named `__aligned`.
    source = (
        b"struct a {\n\tint x;\n} __packed;\n"
        b"struct b {\n\tint y;\n\tunion {\n\t\tint z;\n\t} __packed;\n} __packed __aligned(4);\n"
        b"struct c {\n\tint w;\n} __randomize_layout;\n"
        b"typedef struct {\n\tint val[2];\n} __kernel_fsid_t;\n"
        b"typedef struct {\n\tunsigned int mask;\n} __aligned(8) psw_compat_t;\n"
        b"typedef struct d {\n\tint u;\n} __packed __aligned(2) d_t;\n"
    )
    found = [
        (s.name, s.kind, s.start_line)
        for s in extract(language, source, "x.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("a", "struct", 1),
        ("b", "struct", 4),
        ("c", "struct", 10),
        ("__kernel_fsid_t", "struct", 13),
        ("psw_compat_t", "struct", 16),
        ("d_t", "type", 19),
        ("d", "struct", 19),
    ]


def spans(language: str, source: bytes, *kinds: str) -> list[tuple[str, str, int, int]]:
    """(name, kind, start line, end line) of each symbol, of `kinds` only when given (data
    members only then: these tests were written about the declarations around them)."""
    return [
        (s.name, s.kind, s.start_line, s.end_line)
        for s in extract(language, source, "x.c").symbols
        if s.kind in kinds or (not kinds and s.kind != "field")
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_function_whose_body_the_parser_misread_ends_at_its_own_brace(language: str) -> None:
    # Lua's `LUA_QL("=") " or "` (a macro call then a string) and systemd's
    # `_unused_ _cleanup_(f) Barrier *b = x;`: tree-sitter's recovery ran the function's body
    # over the functions after it (sqlite's sqlite3JournalCreate: 14,919 lines, 306 functions
    # nested in it), and read a function `_cleanup_` inside it that swallowed the next one.
    source = (
        b'#define LUA_QL(x) "\'" x "\'"\n'
        b"static void forstat (LexState *ls, int line) {\n"
        b"  switch (ls->t.token) {\n"
        b'    default: luaX_syntaxerror(ls, LUA_QL("=") " or " LUA_QL("in") " expected");\n'
        b"  }\n"
        b"}\n"
        b"static int test_then_block (LexState *ls) {\n"
        b"  return 0;\n"
        b"}\n"
        b"int barrier_create(Barrier *b) {\n"
        b"        _unused_ _cleanup_(barrier_destroyp) Barrier *staging = b;\n"
        b"        return 0;\n"
        b"}\n"
        b"\n"
        b"Barrier* barrier_destroy(Barrier *b) {\n"
        b"        return NULL;\n"
        b"}\n"
    )
    assert spans(language, source, "function") == [
        ("forstat", "function", 2, 6),
        ("test_then_block", "function", 7, 9),
        ("barrier_create", "function", 10, 13),
        ("barrier_destroy", "function", 15, 17),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_macro_around_a_whole_function_head_leaves_the_function(language: str) -> None:
    # libuv's `UV_UNUSED(static int cmpxchgi(..)) {` and `HEAP_EXPORT(void heap_init(..)) {`:
    # the macro was read as a type and the function lost. A test macro naming its test
    # (`TEST_BEGIN(test_log)`) and a call with arguments stay as they were.
    source = (
        b"#define UV_UNUSED(declaration) __attribute__((unused)) declaration\n"
        b"UV_UNUSED(static int cmpxchgi(int* ptr, int oldval, int newval)) {\n"
        b"  return *ptr == oldval ? newval : oldval;\n"
        b"}\n"
        b"HEAP_EXPORT(void heap_init(struct heap* heap))\n"
        b"{\n"
        b"  heap->min = NULL;\n"
        b"}\n"
        b"TEST_BEGIN(test_log_disabled) {\n"
        b"  test_skip_if(!config_log);\n"
        b"}\n"
        b"TEST_END\n"
    )
    symbols = extract(language, source, "x.c").symbols
    assert spans(language, source, "function") == [
        ("cmpxchgi", "function", 2, 4),
        ("heap_init", "function", 5, 8),
        ("test_log_disabled", "function", 9, 11),  # qualified `TEST_BEGIN(test_log_disabled)`
    ]
    cmpxchgi = next(s for s in symbols if s.name == "cmpxchgi")
    assert cmpxchgi.signature == "static int cmpxchgi(int* ptr, int oldval, int newval)"


def test_a_comment_after_the_return_type_of_a_recovered_function_keeps_it() -> None:
    # libpng's png.c: `int /* PRIVATE */\npng_icc_check_header(..)` after a function whose
    # `#if` and `#else` branches each hold an `else if` (tree-sitter reads those as functions
    # named `if`, and recovery finds the next heads in the text). The comment on the type's
    # line kept the head from being found: all three png_icc_check_* functions were lost.
    source = (
        b"int check_length(int n)\n{\n   if (n)\n      return 0;\n#if 1\n"
        b"   else if (n > 10)\n      return 0;\n#else\n   else if (MAX < n)\n"
        b'      return error(n,\n             "too long");\n#endif\n   return 1;\n}\n\n'
        b"int /* PRIVATE */\ncheck_header(int n)\n{\n   return n;\n}\n\n"
        b"int check_tags(int n)\n{\n   return n;\n}\n"
    )
    assert _symbols(source) == [
        ("check_length", "function", 1, 14),
        ("check_header", "function", 16, 20),
        ("check_tags", "function", 22, 25),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_else_if_branch_behind_a_conditional_loses_no_function(language: str) -> None:
    # mbedtls' udp_proxy.c: `#if defined(X)` / `else if (..) {` / `#endif` in an if chain.
    # tree-sitter read the branch as a function named `if`, which was dropped by its name but
    # still kept the functions around it from being recovered (and their locals were indexed
    # as file-level variables). The text after them decides how tree-sitter recovers, so the
    # test has what followed in the real file: another function's body and a prototype.
    head = (
        b"static void get_options(int argc, char *argv[])\n"
        b"{\n"
        b"    int i;\n"
        b"    for (i = 1; i < argc; i++) {\n"
        b'        if (strcmp(p, "a") == 0) {\n'
        b"            x = 1;\n"
        b"        }\n"
        b"#if defined(X)\n"
        b'        else if (strcmp(p, "bad_cid") == 0) {\n'
        b"            y = 2;\n"
        b"        }\n"
        b"#endif\n"
        b'        else if (strcmp(p, "c") == 0) {\n'
        b"            z = 3;\n"
        b"        }\n"
        b"    }\n"
        b"}\n"
    )
    tail = (
        b"static int ctx_buffer_flush(ctx_buffer *buf)\n"
        b"{\n"
        b"    int ret;\n"
        b'    mbedtls_printf("  %05u flush    %s: %u bytes\\n",\n'
        b"                   elapsed_time(), buf->description);\n"
        b"    return ret;\n"
        b"}\n"
        b"\n"
        b"static unsigned ctx_buffer_time_remaining(ctx_buffer *buf)\n"
    )
    symbols = extract(language, head + tail, "x.c").symbols
    found = {(s.name, s.kind, s.start_line, s.end_line) for s in symbols}
    assert ("get_options", "function", 1, 17) in found
    assert ("ctx_buffer_flush", "function", 18, 24) in found
    assert not {s.name for s in symbols} & {"i", "ret", "if"}  # locals are no file-level names


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_attributes_around_a_record_and_a_member_path_in_offsetof(language: str) -> None:
    # systemd's `struct _packed_ header {`, the kernel's `struct __packed pucan_command {` (read
    # as functions, their fields as file-level variables) and `} ____cacheline_aligned;` (a
    # variable of that name); nginx's `offsetof(conf_t, upstream.timeout)`, which lost whole
    # command tables. C++'s `struct addrinfo hints{};` stays a variable, not a struct.
    source = (
        b"struct _packed_ credential_header {\n"
        b"        unsigned id;\n"
        b"};\n"
        b"struct __packed pucan_command {\n"
        b"\tint args;\n"
        b"} ____cacheline_aligned;\n"
        b"typedef struct {\n"
        b"\tunsigned int softirq;\n"
        b"} ____cacheline_aligned irq_cpustat_t;\n"
        b"static int offsets[] = {\n"
        b"    offsetof(conf_t, upstream.timeout),\n"
        b"    offsetof(conf_t, peers[2]->name),\n"
        b"};\n"
        b"int after(void) { return 0; }\n"
    )
    assert spans(language, source) == [
        ("credential_header", "struct", 1, 3),
        ("pucan_command", "struct", 4, 6),
        ("irq_cpustat_t", "struct", 7, 9),
        ("offsets", "variable", 10, 13),
        ("after", "function", 14, 14),
    ]
    if language == "cpp":
        local = b"void f() {\n  struct addrinfo hints{};\n  g(&hints);\n}\n"
        assert [s.kind for s in extract(language, local, "x.cpp").symbols if s.kind != "field"] == [
            "function"
        ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_function_the_parser_closed_at_an_inner_brace_ends_at_its_own(language: str) -> None:
    # systemd's veritysetup parse_options: an `else if` behind `#ifdef`, and tree-sitter closed
    # the function at the loop's `}` (its last lines read as file-level code).
    source = (
        b"static int parse_options(const char *options) {\n"
        b"        int r = 0;\n"
        b"        for (;;) {\n"
        b'                if (streq(word, "a"))\n'
        b"                        x = 1;\n"
        b"#ifdef X\n"
        b'                else if (streq(word, "b"))\n'
        b"                        y = 2;\n"
        b"#endif\n"
        b'                else if ((val = startswith(word, "c="))) {\n'
        b"                        r = 3;\n"
        b"                } else\n"
        b"                        log_warning(\"unknown '%s'\", word);\n"
        b"        }\n"
        b"\n"
        b"        return r;\n"
        b"}\n"
        b"\n"
        b"int after(void) {\n"
        b"        return 0;\n"
        b"}\n"
    )
    assert spans(language, source) == [
        ("parse_options", "function", 1, 17),
        ("after", "function", 19, 21),
    ]


def test_attribute_macros_before_a_name_whose_type_is_on_the_line_before() -> None:
    # jemalloc's `void JEMALLOC_NOTHROW *\nJEMALLOC_ATTR(malloc) JEMALLOC_ALLOC_SIZE(1)\n
    # je_malloc(..)` (six functions named JEMALLOC_ATTR), systemd's `_malloc_ _alloc_(1, 2)
    # static inline void *f(..)` (named `_alloc_`, swallowing the next function) and
    # `_public_ const unsigned v = 242;`. A macro line before a test stays as it was.
    source = (
        b"JEMALLOC_EXPORT JEMALLOC_ALLOCATOR JEMALLOC_RESTRICT_RETURN\n"
        b"void JEMALLOC_NOTHROW *\n"
        b"JEMALLOC_ATTR(malloc) JEMALLOC_ALLOC_SIZE(1)\n"
        b"je_malloc(size_t size) {\n"
        b"\treturn imalloc(size);\n"
        b"}\n"
        b"JEMALLOC_EXPORT int JEMALLOC_NOTHROW\n"
        b"JEMALLOC_ATTR(nonnull(1))\n"
        b"je_posix_memalign(void **memptr, size_t alignment, size_t size) {\n"
        b"\treturn 0;\n"
        b"}\n"
        b"_malloc_ _alloc_(1, 2) static inline void *malloc_multiply(size_t n, size_t size) {\n"
        b"        return malloc(size * n ?: 1);\n"
        b"}\n"
        b"_public_ const unsigned sd_bus_object_vtable_format = 242;\n"
        b"int after(void) {\n"
        b"        return 0;\n"
        b"}\n"
    )
    assert spans("c", source) == [
        ("je_malloc", "function", 2, 6),
        ("je_posix_memalign", "function", 7, 11),
        ("malloc_multiply", "function", 12, 14),
        ("sd_bus_object_vtable_format", "constant", 15, 15),
        ("after", "function", 16, 18),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_sqlite_margins_and_a_doxygen_brief_are_cleaned_from_comments(language: str) -> None:
    # SQLite writes `**` margins (the text kept a `* ` at each line's start); mbedtls starts
    # its doc comments with `\brief` (in every summary). A ` * **bold**` line keeps its stars.
    source = (
        b"/*\n"
        b"** Insert a new record into the BTree.\n"
        b"**\n"
        b"** The content is described by pX.\n"
        b"*/\n"
        b"int sqlite3BtreeInsert(int x);\n"
        b"/**\n"
        b" * \\brief          Set up an SSL context for use\n"
        b" *\n"
        b" * \\param ssl      SSL context\n"
        b" */\n"
        b"int mbedtls_ssl_setup(int ssl);\n"
        b"/*\n"
        b" * Some text\n"
        b" * **bold** start\n"
        b" */\n"
        b"int g(void);\n"
    )
    extraction = extract(language, source, "x.c")
    texts = [t.content for t in extraction.texts if t.element_type in ("comment", "docstring")]
    assert texts == [
        "Insert a new record into the BTree.\n\nThe content is described by pX.",
        "Set up an SSL context for use\n\n\\param ssl      SSL context",
        "Some text\n**bold** start",
    ]
    docs = {s.name: s.doc for s in extraction.symbols}
    assert docs["mbedtls_ssl_setup"] == texts[1]


def test_a_long_run_of_underscores_after_a_brace_is_read_in_linear_time() -> None:
    # `}` then 56 underscores and a name: the attribute pattern split the run into words in
    # every possible way (85 s at 54 underscores, about 10x per 6 more).
    source = b"struct s {\n  int a;\n}" + b"_" * 56 + b" x\nint main(void) { return 0; }\n"
    code = "import sys; from repomap.extractors import extract; extract('c', sys.stdin.buffer.read(), 'x.c')"
    done = subprocess.run(
        [sys.executable, "-c", code], input=source, timeout=60, capture_output=True
    )
    assert done.returncode == 0, done.stderr


def test_a_typedef_of_a_standard_type_name_is_a_type():
    # The grammars read `int8_t`, `size_t`, `bool` as primitive types even where a libc's or a
    # compatibility header's own <stdint.h> defines them (rapidjson's msinttypes, brotli, the
    # kernel's types.h): every such typedef was dropped.
    source = (
        b"typedef signed char int8_t;\ntypedef signed __int64 int64_t;\n"
        b"typedef unsigned long size_t;\ntypedef int bool;\ntypedef int my_t;\n"
    )
    for language in ("c", "cpp"):
        assert [name for name, *_ in _symbols(source, language)] == [
            "int8_t", "int64_t", "size_t", "bool", "my_t",
        ]  # fmt: skip


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_capital_macros_after_a_record_s_brace_and_after_typedef(language: str) -> None:
    # glib's `} GStaticMutex GLIB_DEPRECATED_TYPE_IN_2_32_FOR(GMutex);` and `} GLIB_DEP..;`
    # declared a function or a variable named after the macro; zstd's `typedef
    # __attribute__((aligned(1))) U16 unalign16;` was a type named `aligned`, the real one a
    # variable. A typedef's name in capitals alone after the brace stays the name.
    source = (
        b"typedef struct _GFoo {\n  int a;\n} GFoo G_GNUC_DEPRECATED_FOR(GBar);\n"
        b"struct _GRec {\n  int b;\n} GLIB_DEPRECATED_TYPE_IN_2_32;\n"
        b"typedef struct tagTHREADNAME_INFO {\n  int c;\n} THREADNAME_INFO;\n"
        b"typedef __attribute__((aligned(1))) unsigned short unalign16;\n"
        b"typedef __declspec(align(16)) struct { float f[4]; } M128;\n"
    )
    assert spans(language, source) == [
        ("GFoo", "type", 1, 3),
        ("_GFoo", "struct", 1, 3),
        ("_GRec", "struct", 4, 6),
        ("THREADNAME_INFO", "type", 7, 9),
        ("tagTHREADNAME_INFO", "struct", 7, 9),
        ("unalign16", "type", 10, 10),
        ("M128", "struct", 11, 11),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_export_macro_before_an_enum_s_name(language: str) -> None:
    # `enum MYLIB_API STATUS_CODE {` was an enum named `MYLIB_API` in C++ and lost in C.
    source = b"enum MYLIB_API STATUS_CODE { STATUS_OK, STATUS_FAIL };\nenum Plain { P };\n"
    assert spans(language, source, "enum") == [
        ("STATUS_CODE", "enum", 1, 1),
        ("Plain", "enum", 2, 2),
    ]


def test_defines_in_initializers_whose_brace_is_on_the_next_line_or_after_a_row() -> None:
    # FreeType's `table[] =\n{\n#define FT_STRUCTURE ..` and sqlite's `aSyscall[] = {\n  { ..
    # },\n#define osOpen ..`: 47 and 29 macros were lost, FreeType's tables too.
    source = (
        b"static const int table[] =\n{\n#undef  FT_STRUCTURE\n#define FT_STRUCTURE  Rec\n"
        b"  1,\n};\n"
        b"static struct unix_syscall {\n  const char *zName;\n} aSyscall[] = {\n"
        b'  { "open" },\n#define osOpen ((int(*)(const char*))aSyscall[0].zName)\n'
        b'  { "close" },\n#define osClose ((int(*)(int))aSyscall[1].zName)\n};\n'
        b"int after(void) { return 1; }\n"
    )
    assert spans("c", source) == [
        ("table", "constant", 1, 6),
        ("FT_STRUCTURE", "macro", 4, 4),
        ("aSyscall", "variable", 7, 14),
        ("unix_syscall", "struct", 7, 9),
        ("osOpen", "macro", 11, 11),
        ("osClose", "macro", 13, 13),
        ("after", "function", 15, 15),
    ]


def test_an_indented_return_type_on_its_own_line_is_no_statement_macro() -> None:
    # FreeType writes `  FT_Error\n  ft_hash_str_init( FT_Hash  hash )\n  {`: the type alone on
    # an indented line after a `}` was blanked as a statement macro (`Py_BEGIN_ALLOW_THREADS`)
    # and 26 functions were lost. A macro before a statement in a body still is one.
    source = (
        b"int a(void)\n{\n  return 0;\n}\n\n"
        b"  FT_Error\n  bar( int  x )\n  {\n    return 0;\n  }\n"
        b"static int f(int x)\n{\n    int r;\n    Py_BEGIN_ALLOW_THREADS\n    r = g(x);\n"
        b"    Py_END_ALLOW_THREADS\n    return r;\n}\n"
    )
    assert spans("c", source, "function") == [
        ("a", "function", 1, 4),
        ("bar", "function", 6, 10),
        ("f", "function", 11, 18),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_empty_define_with_trailing_blanks_keeps_the_next_line(language: str) -> None:
    # `#define sqlite3_mutex_enter(X)    ` (blanks, no value): tree-sitter read the next line
    # as its value, and the `#define` there was lost (sqlite 3, libarchive and onetbb 1 each).
    source = (
        b"#define mutex_enter(X)    \n#define mutex_try(X)      SQLITE_OK\n"
        b"#define ICONV_CONST \n#define SIZEOF_WCHAR_T 4\n#define LAST\t\nint n;\n"
    )
    assert spans(language, source) == [
        ("mutex_enter", "macro", 1, 1),
        ("mutex_try", "macro", 2, 2),
        ("ICONV_CONST", "macro", 3, 3),
        ("SIZEOF_WCHAR_T", "macro", 4, 4),
        ("LAST", "macro", 5, 5),
        ("n", "variable", 6, 6),
    ]


def test_macro_named_arrays_and_string_macro_runs() -> None:
    # pcre2's `const uint8_t PRIV(OP_lengths)[] = {..}` (58 arrays and constants named `PRIV`,
    # six of them functions) is named as its functions are, `PRIV(OP_lengths)`; its
    # `static const char alasnames[] =\n  STRING_pla0\n  STRING_asr;` (string macros the
    # compiler joins) was named after the last macro. The kernel's `static LIST_HEAD(name);`
    # stays a variable `name`.
    source = (
        b"const uint8_t PRIV(OP_lengths)[] = { 1, 2 };\n"
        b"extern const int PRIV(utf8_table1)[];\n"
        b"int PRIV(memmove)(void *d, int n) { return n; }\n"
        b"static const char alasnames[] =\n  STRING_pla0\n  STRING_plb0\n  STRING_asr;\n"
        b"static LIST_HEAD(foo_list);\n"
        b"int z = A + B;\n"
    )
    assert spans("c", source) == [
        ("PRIV(OP_lengths)", "constant", 1, 1),
        ("PRIV(utf8_table1)", "constant", 2, 2),
        ("PRIV(memmove)", "function", 3, 3),
        ("alasnames", "constant", 4, 7),
        ("foo_list", "variable", 8, 8),
        ("z", "variable", 9, 9),
    ]


def test_an_attribute_call_after_a_records_brace_is_no_function():
    # haproxy's `struct fdlist_entry {..} ALIGNED(8);`: a function `ALIGNED` over the struct's
    # lines (7 of them). After a function's `}` the call stays (`} EXPORT(f);`).
    source = (
        b"struct fdlist_entry {\n\tint next;\n\tint prev;\n} ALIGNED(8);\n"
        b"struct plain { int a; };\n"
        b"void f(void) {\n  g();\n} EXPORT(f);\n"
    )
    found = [
        (s.qualified_name, s.kind, s.start_line)
        for s in extract("c", source, "t.h").symbols
        if s.kind != "field"
    ]
    assert found == [("fdlist_entry", "struct", 1), ("plain", "struct", 5), ("f", "function", 6)]


def test_a_calling_convention_macro_inside_a_functions_name_parentheses_is_blanked():
    # libpng's `png_uint_32 (PNGAPI\npng_get_uint_32)(png_const_bytep buf) {`: the parentheses
    # keep the name from macro expansion; with the macro inside, the function was lost and its
    # locals read as the file's variables. `(CAST x)` elsewhere is no declaration.
    source = (
        b"png_uint_32 (PNGAPI\npng_get_uint_32)(png_const_bytep buf)\n{\n"
        b"   png_uint_32 uval = 1;\n   return uval;\n}\n"
        b"int (plain)(int x) { return x; }\n"
    )
    assert _symbols(source) == [
        ("png_get_uint_32", "function", 1, 6),
        ("plain", "function", 7, 7),
    ]


def test_an_attribute_between_enum_and_its_name_hides_neither_the_enum_nor_what_follows() -> None:
    # haproxy's `enum __attribute__((__packed__)) srv_ws_mode {`: the enum, its constants and
    # every declaration after them in the file were lost (tree-sitter takes a struct's).
    source = (
        b"enum __attribute__((__packed__)) srv_ws_mode {\n\tSRV_WS_AUTO = 0,\n\tSRV_WS_H1,\n};\n"
        b"enum __packed mode { M1 };\n"
        b"enum __attribute__ ((packed, aligned(4))) two { T1 };\n"
        b"int after(void) { return 0; }\n"
    )
    assert [(name, kind, start) for name, kind, start, _ in _symbols(source)] == [
        ("srv_ws_mode", "enum", 1),
        ("SRV_WS_AUTO", "constant", 2),
        ("SRV_WS_H1", "constant", 3),
        ("mode", "enum", 5),
        ("M1", "constant", 5),
        ("two", "enum", 6),
        ("T1", "constant", 6),
        ("after", "function", 7),
    ]


def test_a_block_comment_over_lines_in_a_continued_define_does_not_end_it() -> None:
    # jemalloc's tsd.h, test/unit/atomic.c: of 41 such `#define`s in ten projects 35 were cut at
    # the comment, the rest of the body read as code (23 bogus functions and variables).
    source = (
        b"#define O(n) \\\nint f(void) { \\\n\t/* a \\\n\t * b */ \\\n\tuint8_t s = 1; \\\n"
        b"\treturn s; \\\n}\n"
        b"#define DO_TESTS(t) do { \\\n\t/* a \\\n\t * b */ \\\n\tf(t); \\\n} while (0)\n"
        b"#define SC_NBINS ( \\\n    /* c */ \\\n    SC_NTINY)\n"
        b"int g(void);\n"
    )
    assert _symbols(source) == [
        ("O", "macro", 1, 7),
        ("DO_TESTS", "macro", 8, 12),
        ("SC_NBINS", "macro", 13, 15),
        ("g", "function", 16, 16),
    ]
    comments = [(t.content, t.line) for t in extract("c", source, "x.c").texts]
    assert comments == [("a \\\nb", 3), ("a \\\nb", 9), ("c", 14)]  # still the macros' comments


def test_a_define_inside_a_typedef_enum_is_a_macro() -> None:
    # jemalloc's mutex_prof.h, libjpeg-turbo's jerror.h: `typedef enum {\n#define OP(m) ..`
    source = b"typedef enum {\n#define OP(m) p_##m,\n\tLIST\n#undef OP\n\tp_num\n} ind_t;\nint g(void);\n"
    assert [(name, kind, start) for name, kind, start, _ in _symbols(source)] == [
        ("ind_t", "enum", 1),
        ("OP", "macro", 2),
        ("p_num", "constant", 5),
        ("g", "function", 7),
    ]


def test_a_capitals_word_alone_before_a_return_type_macro_is_no_function_name() -> None:
    # libjpeg-turbo's `INLINE\nLOCAL(void)\nconvert(..)`: 21 functions were named `LOCAL`.
    source = (
        b"INLINE\nLOCAL(void)\nconvert(int cinfo)\n{\n  int y = cinfo;\n}\n"
        b"static INLINE\nMETHODDEF(int)\nother (int a)\n{\n  return a;\n}\n"
    )
    assert [(name, kind, start) for name, kind, start, _ in _symbols(source)] == [
        ("convert", "function", 2),
        ("other", "function", 7),
    ]


JSIMD = b"""GLOBAL(void)
jsimd_ycc_rgb_convert(j_decompress_ptr cinfo, JSAMPIMAGE input_buf,
                      int num_rows)
{
  switch (cinfo->out_color_space) {
#ifndef NEON_INTRINSICS
#endif
#ifndef NEON_INTRINSICS
#endif
#ifndef NEON_INTRINSICS
    if (simd_features & JSIMD_FASTST3)
#endif
      neonfct = jsimd_ycc_extbgr_convert_neon;
#ifndef NEON_INTRINSICS
    if (simd_features & JSIMD_FASTST3)
#endif
      neonfct = jsimd_ycc_extrgb_convert_neon;
#ifndef NEON_INTRINSICS
#endif
  }
}
GLOBAL(JOCTET *)
jsimd_huff_encode_one_block(void *state, JOCTET *buffer, JCOEFPTR block,
                            c_derived_tbl *actbl)
{
#ifndef NEON_INTRINSICS
  if (simd_features & JSIMD_FASTTBL)
#endif
    return jsimd_huff_encode_one_block_neon(state, buffer, block, last_dc_val,
                                            dctbl, actbl);
#ifndef NEON_INTRINSICS
  else
    return jsimd_huff_encode_one_block_neon_slowtbl(state, buffer, block,
                                                    last_dc_val, dctbl, actbl);
#endif
}"""


def test_a_file_without_a_final_newline_reads_as_with_one() -> None:
    # libjpeg-turbo's jsimd.c, cut down: ending in `}` the last function was lost to a call.
    assert (
        _symbols(JSIMD)
        == _symbols(JSIMD + b"\n")
        == [
            ("jsimd_ycc_rgb_convert", "function", 1, 21),
            ("jsimd_huff_encode_one_block", "function", 22, 36),
        ]
    )


def test_macro_calls_whose_arguments_run_over_lines_do_not_name_the_next_function() -> None:
    # jemalloc's ctl.c: after a run of `CTL_RO_NL_CGEN(a, b,\n    bool)` lines the function
    # was named `CTL_RO_NL_CGEN` and started at the first of them.
    source = (
        b"CTL_RO_NL_CGEN(config_prof, opt_prof_sys_thread_name, opt_prof_sys_thread_name,\n"
        b"    bool)\n"
        b"CTL_RO_NL_CGEN(config_prof, opt_prof_time_res,\n"
        b"    prof_time_res_mode_names[opt_prof_time_res], const char *)\n"
        b"CTL_RO_NL_CGEN(config_uaf_detection, opt_lg_san_uaf_align,\n"
        b"    opt_lg_san_uaf_align, ssize_t)\n"
        b"CTL_RO_NL_GEN(opt_zero_realloc,\n"
        b"    zero_realloc_mode_names[opt_zero_realloc_action], const char *)\n"
        b"static int\n"
        b"thread_arena_ctl(tsd_t *tsd, const size_t *mib, size_t miblen,\n"
        b"    void *oldp, size_t *oldlenp, void *newp, size_t newlen) {\n"
        b"\tint ret;\n"
        b"\tif (newind != oldind) {\n"
        b"\t\tif (newind >= narenas_total_get()) {\n"
        b"\t\t\tif (newind < percpu_arena_ind_limit(opt_percpu_arena)) {\n"
        b"\t\t\t}\n"
        b"\t\t}\n"
        b"\t\tif (newarena == NULL) {\n"
        b"\t\t}\n"
        b"\t}\n"
        b"\treturn ret;\n"
        b"}\n"
    )
    assert _symbols(source) == [("thread_arena_ctl", "function", 9, 22)]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_attribute_macro_after_a_compilers_inline_keyword_is_no_function(language: str) -> None:
    # The kernel's `static __always_inline __alloc_size(1) void *kmalloc(..)`: kmalloc and
    # kmalloc_node were lost, and a function `__alloc_size` took the lines of the next one.
    source = (
        b"static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)\n"
        b"{\n"
        b"\tif (__builtin_constant_p(size)) {\n"
        b"#ifndef CONFIG_SLOB\n"
        b"\t\tunsigned int index;\n"
        b"#endif\n"
        b"\t\treturn kmalloc_large(size, flags);\n"
        b"\t}\n"
        b"\treturn __kmalloc(size, flags);\n"
        b"}\n"
        b"static __inline__ __alloc_size(1, 2) void *kcalloc(size_t n, size_t size)\n"
        b"{\n"
        b"\treturn 0;\n"
        b"}\n"
    )
    found = [(s.name, s.kind, s.start_line, s.end_line) for s in extract(language, source, "x.h").symbols
             if s.kind == "function"]  # fmt: skip
    assert found == [("kmalloc", "function", 1, 10), ("kcalloc", "function", 11, 14)]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_define_under_a_has_include_condition_is_a_macro(language: str) -> None:
    # lighttpd's `#if __has_include(<nss3/nss.h>)` then `#define NSS_VER_INCLUDE`: tree-sitter
    # reads no `<header>` in an expression, and its recovery took the define.
    source = (
        b"#ifdef __has_include\n"
        b"#if __has_include(<nss3/nss.h>)\n"
        b"#define NSS_VER_INCLUDE\n"
        b"#elif __has_include_next( <nss.h> )\n"
        b"#define NSS_NEXT 1\n"
        b"#endif\n"
        b"#endif\n"
        b"int version(void) { return 0; }\n"
    )
    found = [
        (s.name, s.kind, s.start_line)
        for s in extract(language, source, "x.h").symbols
        if s.kind != "field"
    ]
    assert found == [
        ("NSS_VER_INCLUDE", "macro", 3),
        ("NSS_NEXT", "macro", 5),
        ("version", "function", 8),
    ]


def test_a_k_and_r_definition_returning_a_pointer_spans_its_body() -> None:
    # oniguruma's st.c and tcl's zlib: tree-sitter-c reads K&R parameters only after a plain
    # declarator, so `table*\ninit_table(type, size)` was a declaration ending at `int type;`.
    source = (
        b"typedef struct table table;\n\n"
        b"table*\n"
        b"init_table(type, size)\n"
        b"    int type;\n"
        b"    int size;\n"
        b"{\n"
        b"  table *t = 0;\n"
        b"  return t;\n"
        b"}\n\n"
        b"const char * ZEXPORT zError(err)\n"
        b"    int err;\n"
        b"{\n"
        b'    return err ? "x" : "y";\n'
        b"}\n"
        b"char *prototype(int a);\n"
    )
    found = [
        (s.name, s.kind, s.start_line, s.end_line, s.signature)
        for s in extract("c", source, "st.c").symbols
        if s.kind == "function"
    ]
    assert found == [
        ("init_table", "function", 3, 10, "table* init_table(type, size)"),
        ("zError", "function", 12, 16, "const char * ZEXPORT zError(err)"),
        ("prototype", "function", 17, 17, "char *prototype(int a)"),
    ]


BISON = b"""\
%{
#include <stdio.h>
/* The parser's error report. */
static void report(const char *message);
%}
%code requires {
  typedef struct span { int first; int last; } span_t;
}
%union { int number; }
%token NUMBER
%%
input : /* empty */
      | input line { count_lines(); }
      ;
line : NUMBER '\\n' { printf("%d", $1); }
     ;
%%
/* Says where the parse failed. */
static void report(const char *message)
{
    fprintf(stderr, "parse error: %s\\n", message);
}

int yyerror(const char *message) { report(message); return 0; }
"""

FLEX = b"""\
%option noyywrap
%top{
#define LEXER_BUFFER 64
}
%{
static char *trim_whitespace(char *text, unsigned int length);
%}
DIGIT [0-9]
%%
{DIGIT}+   { return atoi(trim_whitespace(yytext, yyleng)); }
"#".*      /* comments are skipped */
%%
static char *trim_whitespace(char *text, unsigned int length)
{
    while (length && text[length - 1] == ' ')
        text[--length] = 0;
    return text;
}
"""


@pytest.mark.parametrize(
    ("source", "path", "comment", "expected"),
    [
        (
            BISON,
            "calc/parse.y",
            "Says where the parse failed.",
            {
                ("report", "function", 4, 4, 0),  # the prototype in the %{ %} block
                ("span", "struct", 7, 7, 1),
                ("span_t", "type", 7, 7, 1),
                ("report", "function", 19, 22, 1),
                ("yyerror", "function", 24, 24, 1),
            },
        ),
        (
            FLEX,
            "calc/scan.l",
            "comments are skipped",
            {
                ("LEXER_BUFFER", "macro", 3, 3, 1),
                ("trim_whitespace", "function", 6, 6, 0),
                ("trim_whitespace", "function", 13, 18, 1),
            },
        ),
    ],
)
def test_grammar_files_give_the_c_they_hold(
    source: bytes, path: str, comment: str, expected: set
) -> None:
    """yacc/bison and lex/flex files: the definitions of their C blocks and user code, at their
    lines in the file, and nothing of the grammar (rules, tokens, patterns, actions)."""
    found = extract("c", source, path)
    assert {
        (s.name, s.kind, s.start_line, s.end_line, int(s.is_definition))
        for s in found.symbols
        if s.kind != "field"
    } == expected
    texts = {text.content for text in found.texts}
    if path.endswith(".y"):
        assert comment in texts
    else:  # a comment of the rules is the grammar's, not C's
        assert comment not in texts
    assert not any(r.name == "count_lines" for r in found.references)  # an action's call


def test_a_grammar_file_is_indexed_as_c_and_found_by_what_it_does(make_repo, index) -> None:
    from repomap import config, store
    from repomap.search.code import search_code

    root = make_repo({"calc/scan.l": FLEX.decode(), "calc/parse.y": BISON.decode()})
    index(root)
    with store.reading(config.default_db_path(root)) as db:
        languages = dict(db.conn.execute("SELECT path, language FROM files"))
        hits = search_code(
            db, "where is whitespace trimmed from a token", mode="lexical", log=False
        )
    assert languages == {"calc/scan.l": "c", "calc/parse.y": "c"}
    assert (hits.hits[0].path, hits.hits[0].start_line) == ("calc/scan.l", 13)


@pytest.mark.parametrize(
    "source, expected",
    [
        # curl's connect.c: a parameter under `#if` .. `#endif` in a parameter list.
        (
            b"void Curl_conncontrol(struct connectdata *conn,\n"
            b"                      int ctrl /* see defines in header */\n"
            b"#if defined(DEBUGBUILD) && !defined(CURL_DISABLE_VERBOSE_STRINGS)\n"
            b"                      , const char *reason\n"
            b"#endif\n"
            b"  )\n{\n  bool closeit, is_multiplex;\n  DEBUGASSERT(conn);\n}\n",
            [("Curl_conncontrol", "function", 1, 10)],
        ),
        # curl's http.c: a conditional link of an if-else chain, opening with `else` ...
        (
            b"int send_it(int r)\n{\n  if(r)\n    failf(r);\n#ifdef USE_WEBSOCKETS\n"
            b"  else if(ws(r))\n    setup(r, 1);\n#endif\n  else\n    setup(r, 0);\n"
            b"  return r;\n}\n",
            [("send_it", "function", 1, 12)],
        ),
        # ... and one ending with it, the chain's last block after the `#endif`.
        (
            b"int body(int r)\n{\n#ifndef USE_HYPER\n  if(r) {\n    r = 2;\n  }\n  else\n"
            b"#endif\n  {\n    r = 3;\n  }\n  return r;\n}\n",
            [("body", "function", 1, 13)],
        ),
        # redis' module API: a function pointer's trailing attribute macro, and an export
        # macro before a typedef-name return type; the definition 2 lines on was lost.
        (
            b"REDISMODULE_API float (*RedisModule_Ratio)() REDISMODULE_ATTR;\n"
            b"REDISMODULE_API size_t (*RedisModule_MallocSize)(void* ptr) REDISMODULE_ATTR;\n"
            b"static int RedisModule_Init(void *ctx) REDISMODULE_ATTR_UNUSED;\n"
            b"static int RedisModule_Init(void *ctx) {\n    void *api = ((void**)ctx)[0];\n"
            b"    return 0;\n}\n",
            [
                ("RedisModule_Ratio", "variable", 1, 1),
                ("RedisModule_MallocSize", "variable", 2, 2),
                ("RedisModule_Init", "function", 3, 3),
                ("RedisModule_Init", "function", 4, 7),
            ],
        ),
    ],
)
def test_conditionals_inside_heads_and_else_chains_keep_the_function(
    source: bytes, expected: list[tuple[str, str, int, int]]
) -> None:
    """Directive lines where tree-sitter takes none (a parameter list, an if-else chain) and
    attribute macros after a function pointer's declarator: the function is found whole, and
    the one after it in the file too."""
    after = b"int after(void) { return 1; }\n"
    found = extract("c", source + after, "m.c").symbols
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in found] == [
        *expected,
        ("after", "function", source.count(b"\n") + 1, source.count(b"\n") + 1),
    ]


@pytest.mark.parametrize(
    "source",
    [
        b"  if(r)\n    failf(r);\n#ifdef USE_WEBSOCKETS\n  else if(ws(r))\n    setup(r, 1);\n"
        b"#endif\n  else\n    setup(r, 0);\n",
        b"#ifndef USE_HYPER\n  if(r) {\n    r = 2;\n  }\n  else\n#endif\n  {\n    r = 3;\n  }\n",
        b"#if !HYPER\n  if(r) {\n    r = 2;\n  } else /* no hyper */\n# endif\n  {\n    r = 3;\n  }\n",
    ],
)
def test_the_directive_lines_of_a_conditional_link_in_an_else_chain_are_left_out(
    source: bytes,
) -> None:
    """Inside a long file's conditional (curl's http.c is one `#ifndef CURL_DISABLE_HTTP`),
    tree-sitter's recovery from a directive inside an if-else chain lost Curl_http_bodysend
    and Curl_http_cookies; in a short file it recovers. So the blanking itself is checked:
    the `#if` and `#endif` lines become spaces, everything else stays."""
    body = b"int f(int r)\n{\n" + source + b"  return r;\n}\n"
    blanked, _, _ = blank_macros(body, "c")
    kept = [line for line in body.split(b"\n") if not line.lstrip().startswith(b"#")]
    assert [line for line in blanked.split(b"\n") if line.strip()] == [
        line for line in kept if line.strip()
    ]
    assert len(blanked) == len(body)


def test_a_conditional_else_of_its_own_is_not_an_else_chain_link() -> None:
    """`#if A\n  else\n#else ..`: an `#if` whose `#endif` is not the next directive is
    another shape (_split_conditionals'), left as it is by this scan."""
    body = b"int f(int r)\n{\n  if(r)\n    r = 1;\n#if A\n  else\n    r = 2;\n#else\n  r = 3;\n#endif\n  return r;\n}\n"
    from repomap.extractors.cpp_macros import _conditionals_in_else_chains

    assert _conditionals_in_else_chains(body) == []


def test_a_type_then_const_on_a_parameter_list_s_next_line_is_no_macro() -> None:
    # OpenSSL's siv128.c: `SIV_BLOCK const *y` on the second line of the parameters was read as
    # a macro in declaration position and blanked; the function was lost.
    source = (
        b"static ossl_inline void siv128_xorblock(SIV_BLOCK *x,\n    SIV_BLOCK const *y)\n"
        b"{\n    x->word[0] ^= y->word[0];\n}\n"
    )
    assert [(n, k, s) for n, k, s, _ in _symbols(source)] == [("siv128_xorblock", "function", 1)]


def test_glibc_s_internal_function_after_a_prototype_is_an_attribute() -> None:
    # glibc's regex (git's compat/regex): `)\n     internal_function;` after each prototype;
    # the prototypes ran into the next function, and `regexec` was lost.
    source = (
        b"static int check_halt_state_context (const re_match_context_t *mctx,\n"
        b"\t\t\t\t     const re_dfastate_t *state, int idx)\n     internal_function;\n"
        b"static void update_regs (const re_dfa_t *dfa, int cur_idx) internal_function;\n\n"
        b"int\nregexec (\n\tconst regex_t *__restrict preg,\n\tconst char *__restrict string)\n"
        b"{\n  return 0;\n}\n"
    )
    assert [(n, k, s, e) for n, k, s, e in _symbols(source)] == [
        ("check_halt_state_context", "function", 1, 3),
        ("update_regs", "function", 4, 4),
        ("regexec", "function", 6, 12),
    ]


@pytest.mark.parametrize(
    "source, name",
    [
        # FFmpeg's compat/cuda: CUDA's attributes, one with arguments, before a struct's name
        (
            b"typedef struct __device_builtin__ __align__(2) uchar2\n{\n    unsigned char x, y;\n} uchar2;\n",
            "uchar2",
        ),
        # FFmpeg's lower-case `attribute_` macros
        (b"struct attribute_deprecated xvmc_pix_fmt {\n    int x;\n};\n", "xvmc_pix_fmt"),
    ],
)
def test_record_attributes_with_arguments_or_ffmpeg_s_spelling_are_no_names(
    source: bytes, name: str
) -> None:
    # both lost the struct (named `__align__` or none) and read its members as the file's
    found = [(n, k) for n, k, _, _ in _symbols(source + b"int after(void) { return 1; }\n")]
    assert (name, "struct") in found and ("after", "function") in found
    assert not any(kind == "variable" for _, kind in found)


# FFmpeg 5.1's libavdevice/android_camera.c (fewer cases)
RETURN_CASES = r"""static const char *camera_status_string(camera_status_t val)
{
    switch(val) {
        RETURN_CASE(ACAMERA_OK)
        RETURN_CASE(ACAMERA_ERROR_NOT_ENOUGH_MEMORY)
        RETURN_CASE(ACAMERA_ERROR_SESSION_CLOSED)
        RETURN_CASE(ACAMERA_ERROR_MAX_CAMERA_IN_USE)
        RETURN_DEFAULT(ACAMERA_ERROR_UNKNOWN)
    }
}

static const char *media_status_string(media_status_t val)
{
    switch(val) {
        RETURN_CASE(AMEDIA_ERROR_UNKNOWN)
        RETURN_CASE(AMEDIA_ERROR_INVALID_PARAMETER)
        RETURN_CASE(AMEDIA_DRM_DEVICE_REVOKED)
        RETURN_CASE(AMEDIA_DRM_VERIFY_FAILED)
        RETURN_CASE(AMEDIA_IMGREADER_MAX_IMAGES_ACQUIRED)
        RETURN_DEFAULT(AMEDIA_ERROR_UNKNOWN)
    }
}

static const char *error_state_callback_string(int val)
{
    switch(val) {
        RETURN_CASE(ERROR_CAMERA_IN_USE)
        RETURN_CASE(ERROR_CAMERA_SERVICE)
        default:
            return "ERROR_CAMERA_UNKNOWN";
    }
}

static void camera_dev_disconnected(void *context, ACameraDevice *device)
{
    AVFormatContext *avctx = context;
    AndroidCameraCtx *ctx = avctx->priv_data;
    atomic_store(&ctx->exit, 1);
    av_log(avctx, AV_LOG_ERROR, "Camera with id %s disconnected.\n",
           ACameraDevice_getId(device));
}

static void camera_dev_error(void *context, ACameraDevice *device, int error)
{
    AVFormatContext *avctx = context;
    AndroidCameraCtx *ctx = avctx->priv_data;
    atomic_store(&ctx->exit, 1);
    av_log(avctx, AV_LOG_ERROR, "Error %s on camera with id %s.\n",
           error_state_callback_string(error), ACameraDevice_getId(device));
}
"""


def test_statement_macros_called_without_a_semicolon_lose_no_function() -> None:
    """`RETURN_CASE(X)` lines (a macro expanding to `case X: return "X";`) in a switch, no `;`
    after them: every function of the file was lost but one named `RETURN_CASE` (in the whole
    file, two of 23). The calls stay references."""
    found = extract("c", RETURN_CASES.encode(), "android_camera.c")
    functions = [(s.name, s.start_line, s.end_line) for s in found.symbols if s.kind == "function"]
    assert functions == [
        ("camera_status_string", 1, 10),
        ("media_status_string", 12, 22),
        ("error_state_callback_string", 24, 32),
        ("camera_dev_disconnected", 34, 41),
        ("camera_dev_error", 43, 50),
    ]
    assert {"RETURN_CASE", "RETURN_DEFAULT"} <= {r.name for r in found.references}


def test_a_block_split_over_two_conditionals_keeps_its_function() -> None:
    """jq's (and netlib's) dtoa.c: a block opened under `#ifndef X` and closed under the next
    `#ifndef X`, an `if (..)` whose body follows its `#endif`, a label alone under `#ifdef`:
    the functions (`ulp`, `bigcomp`, `netlib_strtod`, `dtoa_r`) were lost, their locals read
    as the file's variables."""
    source = (
        b"typedef union { double d; unsigned L[2]; } U;\n\n"
        b" static double\nulp\n (U *x)\n{\n\tlong L = x->L[1];\n"
        b"#ifndef Avoid_Underflow\n#ifndef Sudden_Underflow\n\tif (L > 0) {\n#endif\n#endif\n"
        b"\t\tx->L[0] = 0;\n#ifndef Avoid_Underflow\n#ifndef Sudden_Underflow\n\t\t}\n"
        b"\telse {\n\t\tx->L[0] = 1;\n\t\t}\n#endif\n#endif\n\treturn x->d;\n\t}\n\n"
        b" static void\nbigcomp\n (U *rv, int i)\n{\n\tint speccase = 0;\n"
        b"#ifdef Honor_FLT_ROUNDS\n\tif (i == 1)\n#endif\n\t\t{\n\t\tspeccase = 1;\n"
        b"\t\tgoto have_i;\n\t\t}\n#ifndef Sudden_Underflow\n have_i:\n#endif\n"
        b"\trv->d = speccase;\n\t}\n\n"
        b"int after(void)\n{\n\treturn 1;\n}\n"
    )
    found = [(n, k, a, b) for n, k, a, b in _symbols(source) if k in ("function", "variable")]
    assert found == [
        ("ulp", "function", 3, 23),
        ("bigcomp", "function", 25, 41),
        ("after", "function", 43, 46),
    ]


def test_a_block_opened_under_else_and_closed_under_the_opposite_condition() -> None:
    """dtoa.c's `#ifdef Avoid_Underflow .. #else .. if (!d) {\\n#endif ..\\n#ifndef
    Avoid_Underflow\\n .. }\\n#endif`: one macro's two conditionals split a block. jq's
    `jvp_dtoa` (700 lines) was lost, its locals read as the file's variables. Read with the
    macro as the first branch says, the function is whole."""
    source = (
        b"int scale(double *d, int e)\n{\n\tint j = 0, L = 0;\n"
        b"#ifdef Avoid_Underflow\n\tif (e & 1)\n\t\tj = 2;\n"
        b"#else\n\tfor (j = 0; e > 1; j++)\n\t\t*d *= 0.5;\n\tif (!*d) {\n\t\t*d = 1.0;\n"
        b"#endif\n\t\tif (!*d) {\n\t\t\tL = 1;\n\t\t}\n"
        b"#ifndef Avoid_Underflow\n\t\t*d = 2.0;\n\t}\n#endif\n"
        b"\treturn j + L;\n}\n\n"
        b"int after(void)\n{\n\treturn 1;\n}\n"
    )
    found = [(n, k, a, b) for n, k, a, b in _symbols(source) if k in ("function", "variable")]
    assert found == [("scale", "function", 1, 21), ("after", "function", 23, 26)]
    # what the parse reads (tree-sitter's recovery found this small one either way; in jq's
    # 4,000 lines it did not): the first branch, not the `#else` one nor the `#ifndef` block
    read = blank_macros(source, "c")[0]
    assert len(read) == len(source)
    assert b"j = 2;" in read and b"*d *= 0.5" not in read and b"*d = 2.0" not in read
    assert b"#" not in read and read.count(b"{") == read.count(b"}")


def test_a_capitals_macro_after_the_return_type_on_the_head_s_first_line() -> None:
    # expat's calling conventions: `static int PTRFASTCALL\nPREFIX(name)(..)` was read as a
    # declaration and a function `name` starting a line late, while `PTRCALL` (shorter) gave
    # `PREFIX(name)` from the first line: tree-sitter's recovery went by the word's length.
    source = (
        b"static int PTRCALL\nPREFIX(scanComment)(const ENCODING *enc, const char *ptr) {\n"
        b"  return 0;\n}\n\n"
        b"static int PTRFASTCALL\nPREFIX(charRefNumber)(const ENCODING *enc, const char *ptr) {\n"
        b"  int result = 0;\n  return result;\n}\n\n"
        b"char * ESECT\nmdb_version(int *major) {\n  return 0;\n}\n\n"
        b"FORCE_INLINE_TEMPLATE U32\nHUF_decode(const void *p) {\n  return 1;\n}\n"
    )
    assert _symbols(source) == [
        ("PREFIX(scanComment)", "function", 1, 4),
        ("PREFIX(charRefNumber)", "function", 6, 10),
        ("mdb_version", "function", 12, 15),
        ("HUF_decode", "function", 17, 20),
    ]
    found = extract("c", source, "x.c").symbols
    assert found[1].signature == (
        "static int PTRFASTCALL PREFIX(charRefNumber)(const ENCODING *enc, const char *ptr)"
    )
    assert found[3].signature == "U32 HUF_decode(const void *p)"  # the type kept


def test_a_prototype_whose_type_a_macro_makes_on_the_line_above() -> None:
    # libyaml's public API in yaml.h: 48 `YAML_DECLARE(type)\nname(..);` prototypes, where its
    # docs are, and one of them was a symbol (the macro line read as a statement macro's call).
    source = (
        b"#define API_DECLARE(type) type\n\n"
        b"/** Open the widget store. */\nAPI_DECLARE(int)\nopen_store(const char *path);\n\n"
        b"/** The version. */\nAPI_DECLARE(const char *)\nversion_string(void);\n\n"
        b"DEFINE_STACK_OF(NAME_FUNCS)\nDEFINE_LHASH_OF(OBJ_NAME);\n"
    )
    found = extract("c", source, "api.h").symbols
    assert [(s.name, s.kind, s.start_line, s.end_line, s.doc) for s in found] == [
        ("API_DECLARE", "macro", 1, 1, None),
        ("open_store", "function", 4, 5, "Open the widget store."),
        ("version_string", "function", 8, 9, "The version."),
    ]  # a macro called after another is no prototype (OpenSSL's obj_local.h)
    assert found[2].signature == "API_DECLARE(const char *) version_string(void)"


def test_a_typedef_s_record_has_the_alias_s_doc() -> None:
    # `symbols yaml_parser_s` and the struct's search result had no doc: it was the alias's.
    source = (
        b"/** The position in the stream. */\ntypedef struct pos_s {\n  int index;\n} pos_t;\n\n"
        b"/** Token kinds. */\ntypedef enum kind_e { KIND_A } kind_t;\n\n"
        b"/** Its own. */\nstruct own { int a; };\n"
    )
    docs = {(s.name, s.kind): s.doc for s in extract("c", source, "x.h").symbols}
    assert docs["pos_s", "struct"] == docs["pos_t", "type"] == "The position in the stream."
    assert docs["kind_e", "enum"] == "Token kinds."
    assert docs["own", "struct"] == "Its own."


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_record_s_data_members_are_fields_named_in_their_record(language: str) -> None:
    """`symbols m_errorCode` found nothing: a struct's members were no symbols (universal-ctags
    lists them). Each declarator is one, a function pointer too; a member function's
    declaration and a macro's call in a record's body are not; in C a member is named in its
    record (`request::len`), as C++ names it; its doc comment is its own."""
    source = (
        b"struct request {\n"
        b"    /** Bytes left to send. */\n"
        b"    int len, *data;\n"
        b"    char name[16];\n"
        b"    unsigned done : 1;\n"
        b"    void (*on_done)(struct request *r, int status);\n"
        b"    DECLARE_BITMAP(flags, 8);\n"
        b"};\n"
        b"typedef struct { int w; } box;\n"
        b"int g(void) { return 0; }\n"
    )
    found = {s.qualified_name: s for s in extract(language, source, "r.h").symbols}
    fields = sorted(
        (s.qualified_name, s.start_line, s.parent, s.signature)
        for s in found.values()
        if s.kind == "field"
    )
    assert fields == [
        ("box::w", 9, "box", "int w"),
        ("request::data", 3, "request", "int *data"),
        ("request::done", 5, "request", "unsigned done"),
        ("request::len", 3, "request", "int len"),
        ("request::name", 4, "request", "char name[16]"),
        ("request::on_done", 6, "request", "void (*on_done)(struct request *r, int status)"),
    ]
    assert found["request::len"].doc == "Bytes left to send."
    # The record still owns the comments in its body, and the file what follows it.
    texts = extract(language, source, "r.h").texts
    assert [(t.content, t.symbol_name) for t in texts] == [("Bytes left to send.", "request")]


def test_a_class_s_data_members_are_fields_and_its_methods_methods() -> None:
    source = (
        b"namespace ns {\n"
        b"class Conn {\n"
        b"public:\n"
        b"    void run();\n"
        b"    int count() const { return n_; }\n"
        b"    static const int kMax = 4;\n"
        b"    int (*handler(int signal))(int);\n"
        b"private:\n"
        b"    int n_ = 0;\n"
        b"    std::map<int, std::vector<int>> table_;\n"
        b"};\n"
        b"}\n"
    )
    found = [(s.qualified_name, s.kind, s.signature) for s in extract("cpp", source, "c.h").symbols]
    assert found == [
        ("ns", "namespace", "namespace ns"),
        ("ns::Conn", "class", "class Conn"),
        ("ns::Conn::run", "method", "void run()"),
        ("ns::Conn::count", "method", "int count() const"),
        ("ns::Conn::kMax", "field", "static const int kMax"),
        # a method returning a function pointer is no field (a review's finding)
        ("ns::Conn::handler", "method", "int (*handler(int signal))(int)"),
        ("ns::Conn::n_", "field", "int n_"),
        ("ns::Conn::table_", "field", "std::map<int, std::vector<int>> table_"),
    ]


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_member_behind_an_if_or_an_annotation_macro_is_a_field(language: str) -> None:
    """leveldb's `list_` inside `#if !defined(NDEBUG)` and the kernel's `const char __user
    *data;` (an ERROR beside the declarator) were no fields: ctags lists both."""
    source = (
        b"struct snap {\n"
        b"  int prev_;\n"
        b"#if !defined(NDEBUG)\n"
        b"  int list_;\n"
        b"#endif\n"
        b"  const char __user *data;\n"
        b"  struct cap *__percpu *sgc;\n"
        b"};\n"
    )
    fields = [
        s.qualified_name for s in extract(language, source, "s.h").symbols if s.kind == "field"
    ]
    assert fields == ["snap::prev_", "snap::list_", "snap::data", "snap::sgc"]


def test_a_plain_comment_right_above_a_declaration_is_its_doc() -> None:
    # libevent's and redis's functions are described in plain `/* */` comments: `symbols
    # sdsfree` had no doc where clangd's hover shows that comment (4,312 of redis's and nginx's
    # 25,542 symbols now have one; 13 had).
    source = (
        b"/* Free a string. */\nvoid sds_free(char *s);\n\n"
        b"/* Not adjacent. */\n\nvoid apart(void);\n\n"
        b"int x; /* after code */\nint after_code;\n\n"
        b"/******************/\nvoid under_a_rule(void);\n\n"
        b"/** The doc comment. */\n/* a plain note */\nvoid both(void);\n\n"
        b"/* Most entries. */\n#define MAX_ENTRIES 64\n"
        b"struct table {\n    /* How many are used. */\n    int used;\n};\n"
    )
    docs = {s.qualified_name: s.doc for s in extract("c", source, "x.c").symbols}
    assert docs == {
        "sds_free": "Free a string.",
        "apart": None,
        "x": None,
        "after_code": None,
        "under_a_rule": None,
        "both": "The doc comment.",
        "MAX_ENTRIES": "Most entries.",
        "table": None,
        "table::used": "How many are used.",
    }


def test_a_licence_or_a_tools_mark_right_above_a_declaration_is_no_doc() -> None:
    # A file's licence header with no blank line before its first declaration became that
    # function's description in `symbols` and `show`; so did `// NOLINT`.
    source = (
        b"/* Copyright (c) 2020 Foo.\n * SPDX-License-Identifier: MIT */\nint licensed(void);\n\n"
        b"// NOLINT\nint marked(void);\n\n/* FALLTHROUGH */\nint fell(void);\n\n"
        b"// clang-format off\nint unformatted(void);\n\n"
        b"/* Copy the lint flags. */\nint copies(void);\n\n"
        b"/* Returns the copyright notice. */\nconst char *notice(void);\n"
    )
    docs = {s.qualified_name: s.doc for s in extract("c", source, "x.c").symbols}
    assert docs == {
        "licensed": None,
        "marked": None,
        "fell": None,
        "unformatted": None,
        "copies": "Copy the lint flags.",
        "notice": "Returns the copyright notice.",
    }


def test_a_doxygen_member_group_mark_documents_no_member() -> None:
    # LLVM's `/// @{` and `/// \name Accessors` + `/// @{` open a group of members: the first
    # member's doc was "@{".
    source = (
        b"class Box {\npublic:\n  /// @{\n  int width() const;\n  /// @}\n\n"
        b"  /// \\name Accessors\n  /// @{\n  int height() const;\n  /// @}\n\n"
        b"  /// The depth.\n  int depth() const;\n};\n"
    )
    docs = {s.qualified_name: s.doc for s in extract("cpp", source, "box.h").symbols}
    assert docs == {
        "Box": None,
        "Box::width": None,
        "Box::height": None,
        "Box::depth": "The depth.",
    }


def test_a_run_of_line_comments_above_a_cpp_method_is_its_doc() -> None:
    # Google's style (re2, leveldb): `//` comments above a declaration describe it.
    source = (
        b"class Cache {\n public:\n  // Insert a mapping from key->value.\n"
        b"  // Returns a handle.\n  Handle* Insert(const Slice& key);\n\n"
        b"  int n_;  // the count\n  void Erase(const Slice& key);\n};\n"
    )
    docs = {s.qualified_name: s.doc for s in extract("cpp", source, "cache.h").symbols}
    assert docs["Cache::Insert"] == "Insert a mapping from key->value.\nReturns a handle."
    assert docs["Cache::Erase"] is None
    assert docs["Cache"] is None


def test_an_object_like_macros_signature_holds_its_value_on_one_line() -> None:
    # The MCP agent user: `# define SQLITE_DEFAULT_WAL_AUTOCHECKPOINT` cost a call more to
    # learn it is 1000 (a Python constant's signature shows its value).
    long_value = b'"' + b"x" * 200 + b'"'
    source = (
        b"# define CHECKPOINT  1000 /* pages */\n#define GUARD_H\n"
        b"#define SUM (1 + \\\n    2)\n#define LONG " + long_value + b"\n#define F(x) ((x) + 1)\n"
        b'#define HOME "http://example.org/a" // the project page\n'
    )
    signatures = {s.name: s.signature for s in extract("c", source, "x.h").symbols}
    assert signatures["CHECKPOINT"] == "# define CHECKPOINT 1000"
    assert signatures["GUARD_H"] == "#define GUARD_H"
    assert signatures["SUM"] == "#define SUM (1 + 2)"
    assert signatures["F"] == "#define F(x)"  # a function-like macro: its parameters
    assert signatures["HOME"] == '#define HOME "http://example.org/a"'  # `//` in a string stays
    assert len(signatures["LONG"]) == 121 and signatures["LONG"].endswith("xx…")


XZ_DEFINITIONS = b"""\
#define lzma_attribute(attr) __attribute__(attr)
#define lzma_attr_alloc_size(x) __attribute__((__alloc_size__(x)))

/* Allocates memory. */
extern void * lzma_attribute((__malloc__)) lzma_attr_alloc_size(1)
lzma_alloc(size_t size)
{
\treturn malloc(size);
}

/// Allocates memory and zeroes it.
extern void * lzma_attribute((__malloc__)) lzma_attr_alloc_size(1)
\t\tlzma_alloc_zero(size_t size, const lzma_allocator *allocator);

static inline uint32_t lzma_attribute((__always_inline__)) lzma_memcmplen(const uint8_t *a)
{
\treturn 0;
}

bool __init __attribute((weak)) arch_valid_size(unsigned long size)
{
\treturn size == 1;
}
"""


def test_attribute_macros_before_a_function_s_name_leave_its_name() -> None:
    # xz-utils' liblzma: `lzma_attribute((..)) lzma_attr_alloc_size(1)` between the type and
    # the name named both of common.c's functions (and common.h's prototype) `lzma_attribute`,
    # and `show lzma_alloc_zero` found nothing; the kernel's `__attribute((weak))` lost one.
    found = [
        (s.name, s.kind, s.start_line, s.end_line, s.is_definition, s.doc)
        for s in extract("c", XZ_DEFINITIONS, "common.c").symbols
        if s.kind != "macro"
    ]
    assert found == [
        ("lzma_alloc", "function", 5, 9, True, "Allocates memory."),
        ("lzma_alloc_zero", "function", 12, 13, False, "Allocates memory and zeroes it."),
        ("lzma_memcmplen", "function", 15, 18, True, None),
        ("arch_valid_size", "function", 20, 23, True, None),
    ]


XZ_API = b"""\
#define LZMA_API(type) type
#define lzma_nothrow __attribute__((__nothrow__))

/** Finish the coding. */
extern LZMA_API(void) lzma_end(lzma_stream *strm) lzma_nothrow;

/** Memory in use. */
extern LZMA_API(uint64_t) lzma_memusage(const lzma_stream *strm)
\t\tlzma_nothrow lzma_attr_pure;

/** The version. */
extern LZMA_API(uint32_t) lzma_version_number(void) lzma_nothrow lzma_attr_const;

/// Allocates memory
extern void *lzma_alloc(size_t size, const lzma_allocator *allocator)
\t\tlzma_attribute((__malloc__)) lzma_attr_alloc_size(1);

/* Prints and exits. */
extern void message_fatal(const char *fmt, ...)
\t\tlzma_attribute((__format__(__printf__, 1, 2)))
\t\tlzma_attribute((__noreturn__));

AVInteger av_add_i(AVInteger a, AVInteger b) av_const;
static void f(int x) __releases(x) __attribute__((cold));
void blake2s_compress(struct blake2s_state *state, const u8 *block)
\t\t__weak __alias(blake2s_compress_generic);
"""


def test_attribute_macros_in_any_case_after_a_prototype_leave_it_and_its_doc() -> None:
    # xz-utils' liblzma: `lzma_nothrow` (and `lzma_attr_pure`, ...) after 105 of its 107 API
    # prototypes lost them, and their doc comments documented nothing; FFmpeg's `av_const`,
    # the kernel's `__releases(x)` and `__weak __alias(..)` the same.
    found = [
        (s.name, s.kind, s.start_line, s.end_line, s.is_definition, s.doc)
        for s in extract("c", XZ_API, "base.h").symbols
        if s.kind != "macro"
    ]
    assert found == [
        ("lzma_end", "function", 5, 5, False, "Finish the coding."),
        ("lzma_memusage", "function", 8, 9, False, "Memory in use."),
        ("lzma_version_number", "function", 12, 12, False, "The version."),
        ("lzma_alloc", "function", 15, 16, False, "Allocates memory"),
        ("message_fatal", "function", 19, 21, False, "Prints and exits."),
        ("av_add_i", "function", 23, 23, False, None),
        ("f", "function", 24, 24, False, None),
        ("blake2s_compress", "function", 25, 26, False, None),
    ]
    # C++ keeps its own words after the parameters
    source = (
        b"class A {\n  void n(int a) const my_attr override;\n  virtual void p(int a) my_attr = 0;\n"
        b"  template <class T> void r(T t) requires C<T>;\n};\n"
        b"int run(int a) {\n  auto l = [](int b) mutable { return b; };\n  return l(a);\n}\n"
    )
    blanked = blank_macros(source, "cpp")[0]
    assert b"void n(int a) const         override;" in blanked
    assert b"void p(int a)         = 0;" in blanked
    assert b"requires C<T>;" in blanked and b"(int b) mutable {" in blanked
    assert [(s.qualified_name, s.kind) for s in extract("cpp", source, "a.cc").symbols] == [
        ("A", "class"),
        ("A::n", "method"),
        ("A::p", "method"),
        ("A::r", "method"),
        ("run", "function"),
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        # K&R parameter declarations after the names: the words are no attributes
        (b"int\nadd(a, b)\n\tint a;\n\tlong b;\n{\n\treturn a + b;\n}\n", [("add", "function")]),
        (b"int\nlen(s)\n\tsize_t s;\n{\n\treturn s;\n}\n", [("len", "function")]),
        # a type a macro makes, then the declared name (BSD's queue.h, CPython's PyAPI_DATA)
        (
            b"struct entry {\n\tTAILQ_ENTRY(entry) link;\n\tint n;\n};\n",
            [("entry", "struct"), ("entry::link", "field"), ("entry::n", "field")],
        ),
        (b"PyAPI_DATA(const char *) Py_FileSystemDefaultEncoding;\n", [("Py_FileSystemDefaultEncoding", "variable")]),
        (b"PyAPI_DATA(unsigned long) Py_Flags;\n", [("Py_Flags", "variable")]),
        # statements: a cast, a condition
        (b"void f(int x)\n{\n\t(void) x;\n\tif (x) g;\n}\n", [("f", "function")]),
    ],
)  # fmt: skip
def test_a_name_after_a_parenthesis_that_is_no_prototype_s_stays(
    source: bytes, expected: list[tuple[str, str]]
) -> None:
    found = [(s.qualified_name, s.kind) for s in extract("c", source, "x.c").symbols]
    assert found == expected


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_an_include_guard_is_no_symbol(language: str) -> None:
    # A search user's outline of yaml-cpp's convert.h began with its guard,
    # `macro NODE_CONVERT_H_62B23520_...`: it defines nothing and names only the file.
    source = (
        b"#ifndef FOO_H\n#define FOO_H\n"
        b"#ifndef BUFSIZE\n#define BUFSIZE 1024\n#endif\n"  # a default with a value: kept
        b"#define FLAG\nint f(void);\n#endif\n"
        b"#if !defined(BAR_H)\n#define BAR_H\n#endif\n"
        b"#ifndef X\nint a;\n#define X\n#endif\n"  # not the first thing inside: kept
    )
    found = [(s.name, s.kind) for s in extract(language, source, "include/foo.h").symbols]
    assert found == [("BUFSIZE", "macro"), ("FLAG", "macro"), ("f", "function"),
                     ("a", "variable"), ("X", "macro")]  # fmt: skip
