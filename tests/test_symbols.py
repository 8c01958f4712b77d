"""search_symbols, find_symbol and get_symbol_content on real indexed fixture repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import GETTER_AND_SETTER, run_cli

from repomap import config, store
from repomap.errors import BadQuery
from repomap.gateway.show import get_symbol_content
from repomap.search import symbols
from repomap.store import reading

PYTHON_REPO = {
    "shop/models.py": '''
        """Models of the shop."""
        import json
        import os.path
        from collections import OrderedDict, defaultdict as dd
        from typing import Any

        # A connection to the store.
        # Kept open between requests.
        class Connection:
            def open(self):
                return 1


        class Order:
            """An order."""

            class Meta:
                ordering = ["id"]

            # Persist the order.
            @property
            @staticmethod(
                "multi-line",
            )
            def save(self, force=False):
                """Write it."""
                data = json.dumps(OrderedDict())
                return data
        ''',
    "shop/views.py": """
        from shop.models import Connection, Order


        def make_connection():
            return Connection()


        def checkout(order: Order):
            order.save()
            return make_connection()
        """,
    "shop/admin.py": """
        from shop.models import Connection


        def connection_admin():
            return Connection()


        def cnxtion():
            return None
        """,
}

RUST_REPO = {
    "src/geo.rs": """
        pub mod shapes {
            /// A point.
            #[derive(Debug)]
            pub struct Point {
                x: i32,
            }

            impl Point {
                pub fn new(x: i32) -> Self {
                    Point { x }
                }
            }

            pub trait Area {
                fn area(&self) -> f64;
            }

            impl Area for Point {
                fn area(&self) -> f64 {
                    0.0
                }
            }
        }
        """,
}

CPP_REPO = {
    "include/calc.h": """
        #include <vector>
        namespace geo {
        class Calc {
         public:
          int add(int a, int b);
          class Inner {
            void f();
          };
        };
        }  // namespace geo
        """,
    "src/calc.cpp": """
        #include "calc.h"
        namespace geo {
        // Adds two numbers.
        int Calc::add(int a, int b) {
          return a + b;
        }
        }  // namespace geo
        """,
}


@pytest.fixture
def python_repo(make_repo, index) -> Path:
    root = make_repo(PYTHON_REPO)
    index(root)
    return root


def _db(root: Path) -> Path:
    return config.resolve(root).db_path


def _search(root: Path, query: str, **kwargs) -> list[symbols.SymbolHit]:
    with reading(_db(root)) as db:
        return symbols.search_symbols(db, query, **kwargs)


def test_python_methods_and_nested_classes_have_qualified_names(python_repo: Path) -> None:
    assert [hit.qualified_name for hit in _search(python_repo, "Meta")] == ["Order.Meta"]
    (save,) = _search(python_repo, "Order.save")
    assert (save.kind, save.file_path, save.line_number) == ("method", "shop/models.py", 25)
    assert save.signature == "def save(self, force=False)"
    assert save.doc == "Write it."


def test_the_cli_says_when_every_name_it_shows_is_only_spelled_alike(python_repo: Path) -> None:
    """A fuzzy match printed as plainly as an exact one read as an answer (`symbols mv_size`
    listing `mdb_env_set_mapsize`): a note on stderr says none holds the name; stdout keeps
    its lines, and a name that is found gets no note."""
    fuzzy = run_cli("symbols", "cnxn", "--root", python_repo)
    assert fuzzy.returncode == 0 and "cnxtion" in fuzzy.stdout
    assert fuzzy.stderr.startswith("note: no name holds 'cnxn'")
    found = run_cli("symbols", "cnxtion", "--root", python_repo)
    assert found.returncode == 0 and "cnxtion" in found.stdout and "note" not in found.stderr
    # Exact names, then others that only start with it or resemble it (re2's `Set::Match`
    # then 16 more): where the exact ones end is said too.
    mixed = run_cli("symbols", "connection", "--root", python_repo)
    lines = mixed.stdout.splitlines()
    assert len(lines) > 1 and " class Connection " in f" {lines[0]} "
    assert mixed.stderr == "note: the first is named 'connection'; the rest only resemble it\n"


def test_search_ranks_exact_then_prefix_then_substring_then_fuzzy(python_repo: Path) -> None:
    hits = _search(python_repo, "connection")
    assert [(h.name, h.match) for h in hits] == [
        ("Connection", "exact"),
        ("connection_admin", "prefix"),
        ("make_connection", "substring"),
    ]
    fuzzy = _search(python_repo, "cnxn")
    assert [h.match for h in fuzzy] == ["fuzzy"] * len(fuzzy)
    assert "cnxtion" in [h.name for h in fuzzy]


def test_among_equal_matches_names_used_from_more_files_come_first(make_repo, index) -> None:
    root = make_repo(
        {
            "a.py": "def parse_rare():\n    pass\n\ndef parse_common():\n    pass\n",
            "b.py": "from a import parse_common\nparse_common()\n",
            "c.py": "from a import parse_common\nparse_common()\n",
        }
    )
    index(root)
    hits = _search(root, "parse")
    assert [h.name for h in hits] == ["parse_common", "parse_rare"]
    assert hits[0].ref_files == 2


def test_search_filters_by_kind_language_and_path(python_repo: Path) -> None:
    assert {h.kind for h in _search(python_repo, "o", kind="method")} == {"method"}
    assert _search(python_repo, "Connection", language="rust") == []
    assert {h.file_path for h in _search(python_repo, "connection", path="shop/admin.py")} == {
        "shop/admin.py"
    }
    assert {h.file_path for h in _search(python_repo, "c", path="*/views.py")} == {"shop/views.py"}


def test_an_unknown_name_suggests_close_names(python_repo: Path) -> None:
    with reading(_db(python_repo)) as db, pytest.raises(symbols.SymbolNotFound) as raised:
        symbols.find_symbol(db, "Conection")
    assert "did you mean: Connection" in str(raised.value)


def test_a_large_index_looks_for_a_typo_among_names_of_its_first_letter(
    python_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past TYPO_SCAN_SYMBOLS symbols (the kernel's 4 million: 3-9 s a misspelt `show`), the
    names difflib compares start with the typo's first letter, in either case."""
    with reading(_db(python_repo)) as db:
        everything = {name for (name,) in symbols._typo_candidates(db, "conection")}
        monkeypatch.setattr(symbols, "TYPO_SCAN_SYMBOLS", 0)
        initial = {name for (name,) in symbols._typo_candidates(db, "conection")}
        assert "Connection" in initial and initial < everything
        assert {name[0].lower() for name in initial} == {"c"}
        with pytest.raises(symbols.SymbolNotFound) as raised:
            symbols.find_symbol(db, "Conection")
    assert "did you mean: Connection" in str(raised.value)


def test_did_you_mean_leaves_out_names_that_only_hold_the_letters_in_order(
    make_repo, index
) -> None:
    """The kernel's `list_add_tial` was also offered a 70-letter register mask: its letters
    appear in it in order (a fuzzy match), but it reads like nothing typed."""
    root = make_repo(
        {
            "list.c": "void list_add_tail(int *a) { }\n",
            "regs.h": "#define MILLISECOND_TIME_BASE_DIV__MILLISECOND_TIME_BASE_CLOCK_SOURCE_SEL_MASK 0x3\n",
        }
    )
    index(root)
    with reading(_db(root)) as db:
        fuzzy = symbols.search_symbols(db, "list_add_tial")
        assert any(hit.name.startswith("MILLISECOND") for hit in fuzzy)  # a fuzzy match
        with pytest.raises(symbols.SymbolNotFound) as raised:
            symbols.find_symbol(db, "list_add_tial")
    assert str(raised.value) == "no symbol named 'list_add_tial'; did you mean: list_add_tail"


def test_max_lines_truncates_with_the_count_of_lines_left_out(python_repo: Path) -> None:
    content = get_symbol_content(config.resolve(python_repo), "Order.save", max_lines=2)
    assert content.content.splitlines() == [
        "    def save(self, force=False):",
        '        """Write it."""',
    ]
    assert content.truncated_lines == 2
    assert content.as_text().rstrip().endswith("... (2 more lines)")


def test_context_adds_decorators_comments_class_header_and_used_imports(python_repo: Path) -> None:
    content = get_symbol_content(config.resolve(python_repo), "save", context=True)
    assert content.leading is not None
    assert content.leading.splitlines() == [
        "    # Persist the order.",
        "    @property",
        "    @staticmethod(",
        '        "multi-line",',
        "    )",
    ]
    assert content.leading_line == 20
    assert content.parents == ["14: class Order"]
    assert content.imports == [
        "import json",
        "from collections import OrderedDict, defaultdict as dd",
    ]
    assert content.other_imports == 2  # os.path and typing are not used by save()
    class_context = get_symbol_content(config.resolve(python_repo), "Connection", context=True)
    assert class_context.leading == "# A connection to the store.\n# Kept open between requests."


def test_several_matches_give_the_best_and_a_warning_listing_the_others(make_repo, index) -> None:
    root = make_repo(
        {
            "a.py": "class A:\n    def run(self):\n        pass\n",
            "b.py": "def run():\n    pass\n",
        }
    )
    index(root)
    content = get_symbol_content(config.resolve(root), "run")
    # The top-level function's qualified name is exactly "run": it wins over A.run.
    assert (content.qualified_name, content.file_path) == ("run", "b.py")
    assert content.warning is not None and "a.py:2" in content.warning
    assert content.others == ["method A.run a.py:2"]
    assert get_symbol_content(config.resolve(root), "run", file="a.py").qualified_name == "A.run"


def test_a_changed_file_is_reindexed_before_its_lines_are_served(python_repo: Path) -> None:
    models = python_repo / "shop" / "models.py"
    models.write_text("# new first line\n# and another\n" + models.read_text())
    content = get_symbol_content(config.resolve(python_repo), "Order.save")
    assert content.line_number == 27
    assert content.content.splitlines()[0] == "    def save(self, force=False):"


def test_a_changed_file_is_reported_when_reindexing_is_off(python_repo: Path) -> None:
    models = python_repo / "shop" / "models.py"
    models.write_text(models.read_text().replace("return 1", "return 2"))
    with pytest.raises(symbols.FileChanged, match="shop/models.py changed since it was indexed"):
        get_symbol_content(config.resolve(python_repo), "Connection.open", reindex=False)


def test_a_deleted_file_is_reported(python_repo: Path) -> None:
    (python_repo / "shop" / "admin.py").unlink()
    with pytest.raises(symbols.FileChanged, match="is gone"):
        get_symbol_content(config.resolve(python_repo), "cnxtion", reindex=False)


def test_rust_impl_methods_and_trait_items_are_qualified(make_repo, index) -> None:
    root = make_repo(RUST_REPO)
    index(root)
    names = {(h.qualified_name, h.kind) for h in _search(root, "geo::shapes", limit=50)}
    assert {
        ("geo::shapes::Point", "struct"),
        ("geo::shapes::Point::new", "method"),
        ("geo::shapes::Area", "trait"),
        ("geo::shapes::Area::area", "method"),
        ("geo::shapes::Point::area", "method"),
    } <= names
    content = get_symbol_content(config.resolve(root), "Point::new", context=True)
    assert content.content.strip().startswith("pub fn new(x: i32) -> Self {")
    point = get_symbol_content(config.resolve(root), "Point", context=True)
    assert point.kind == "struct"
    assert point.leading == "    /// A point.\n    #[derive(Debug)]"


def test_a_rust_use_of_self_binds_the_module_not_the_receiver(make_repo, index) -> None:
    """smallvec's `impl fmt::Display for CollectionAllocErr { fn fmt(&self, ...) }` listed
    `use core::ops::{self, Range}` and `use core::ptr::{self, NonNull}` as imports it uses: the
    method says `self`, and `self` in a use list was taken for a name it binds."""
    root = make_repo(
        {
            "src/lib.rs": (
                "use core::fmt;\n"
                "use core::ops::{self, Range};\n"
                "use core::ptr::{self, NonNull};\n\n"
                "pub struct Err;\n\n"
                "impl fmt::Display for Err {\n"
                "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n"
                '        write!(f, "error: {:?}", ptr::null::<u8>())\n'
                "    }\n"
                "}\n"
            )
        }
    )
    index(root)
    content = get_symbol_content(config.resolve(root), "Err::fmt", context=True)
    assert content.imports == ["use core::fmt;", "use core::ptr::{self, NonNull};"]
    assert content.other_imports == 1


def test_context_says_when_a_symbol_uses_none_of_the_files_imports(make_repo, index) -> None:
    """Flask's `Scaffold.before_request --context` printed an `imports (+16 more ...):` header
    over an empty list, which read as an answer cut off."""
    root = make_repo({"m.py": "import os\nimport sys\n\n\ndef double(x):\n    return x * 2\n"})
    index(root)
    shown = run_cli("show", "double", "--context", "--root", root)
    assert shown.returncode == 0
    assert shown.stdout.splitlines()[1] == "imports: none of the file's 2 import statements is used"


def test_a_rust_enum_variant_is_looked_up_and_shown_by_name(make_repo, index) -> None:
    """`repomap symbols InvalidByte` on base64 found nothing (variants were no symbols, while C
    and C++ enumerators were); it finds the variant with its doc, `show` prints its lines."""
    root = make_repo(
        {
            "src/decode.rs": (
                "/// Errors that can occur while decoding.\n"
                "pub enum DecodeError {\n"
                "    /// An invalid byte was found in the input.\n"
                "    InvalidByte(usize, u8),\n"
                "    /// The length of the input is invalid.\n"
                "    InvalidLength,\n"
                "}\n\n"
                "pub fn check(e: DecodeError) -> bool {\n"
                "    matches!(e, DecodeError::InvalidLength)\n"
                "}\n"
            )
        }
    )
    index(root)
    found = run_cli("symbols", "InvalidByte", "--json", "--root", root)
    assert found.returncode == 0, found.stderr
    (hit,) = json.loads(found.stdout)["results"]
    assert (hit["qualified_name"], hit["kind"], hit["line_number"], hit["end_line"]) == (
        "decode::DecodeError::InvalidByte", "constant", 4, 4,
    )  # fmt: skip
    assert (hit["signature"], hit["doc"]) == (
        "InvalidByte(usize, u8)", "An invalid byte was found in the input.",
    )  # fmt: skip
    shown = run_cli("show", "DecodeError::InvalidLength", "--root", root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == ["6│    InvalidLength,"]


def test_show_prefers_what_a_name_does_to_a_rust_mod_line(make_repo, index) -> None:
    """`show memchr` showed the crate root's `mod memchr;` line over `memchr::memchr` (two
    search users' reports): a module declared on one line comes after the others, in the
    numbered list --nth picks from too."""
    root = make_repo(
        {
            "src/lib.rs": "mod memchr;\npub use memchr::memchr;\n",
            "src/memchr.rs": "/// Find a byte.\npub fn memchr(needle: u8) -> bool {\n    true\n}\n",
        }
    )
    index(root)
    shown = run_cli("show", "memchr", "--root", root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "src/memchr.rs:2-4  function memchr::memchr"
    assert "[2] module memchr src/lib.rs:1" in shown.stderr
    second = run_cli("show", "memchr", "--nth", "2", "--root", root)
    assert second.stdout.splitlines()[0] == "src/lib.rs:1-1  module memchr"


def test_cpp_namespaces_classes_and_out_of_line_methods(make_repo, index) -> None:
    root = make_repo(CPP_REPO)
    index(root)
    hits = _search(root, "Calc::add")
    assert {(h.qualified_name, h.file_path) for h in hits} == {
        ("geo::Calc::add", "include/calc.h"),
        ("geo::Calc::add", "src/calc.cpp"),
    }
    assert [h.qualified_name for h in _search(root, "Inner")] == ["geo::Calc::Inner"]
    content = get_symbol_content(config.resolve(root), "geo::Calc::add", context=True)
    assert content.file_path == "src/calc.cpp"  # the definition, not the declaration
    assert content.declaration == "include/calc.h:5: int add(int a, int b)"
    assert content.leading == "// Adds two numbers."
    assert content.imports == ['#include "calc.h"']


def test_a_c_definition_with_no_comment_shows_its_headers_doc(make_repo, index) -> None:
    # nghttp2 documents its API in the header: an MCP agent needed a second call to read it
    root = make_repo(
        {
            "include/api.h": "/**\n * @function\n *\n * Submits HEADERS frame.\n */\n"
            "int submit_request(int session);\n\n/* Frees it. */\nvoid session_del(int s);\n",
            "lib/api.c": '#include "api.h"\n\nint submit_request(int session)\n{\n'
            "\treturn session;\n}\n\n/* Releases the session's memory. */\n"
            "void session_del(int s)\n{\n}\n",
        }
    )
    index(root)
    content = get_symbol_content(config.resolve(root), "submit_request", context=True)
    assert content.file_path == "lib/api.c"
    assert content.declaration == "include/api.h:6: int submit_request(int session)"
    assert content.declaration_doc == "@function\n\nSubmits HEADERS frame."
    shown = run_cli("show", "submit_request", "--context", "--root", root)
    assert "\n  Submits HEADERS frame.\n" in shown.stdout
    own = get_symbol_content(config.resolve(root), "session_del", context=True)
    assert own.leading == "/* Releases the session's memory. */" and own.declaration_doc is None


def test_cli_symbols_json_and_show_errors(python_repo: Path) -> None:
    found = run_cli("symbols", "Order", "--json", "--root", python_repo)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["qualified_name"] == "Order"
    shown = run_cli("show", "Order.save", "--context", "--root", python_repo)
    assert shown.returncode == 0, shown.stderr
    assert "inside:\n  14: class Order" in shown.stdout
    missing = run_cli("show", "Ordr", "--root", python_repo)
    assert missing.returncode == 1  # nothing found: exit 1, not an error
    assert missing.stderr.startswith("no symbol named 'Ordr'; did you mean: Order")
    assert "Traceback" not in missing.stderr
    # a file's name: said to be one, with the commands that show it (it said only "no symbol")
    (python_repo / "NOTES.md").write_text("# Notes\n\nAbout orders.\n")
    assert run_cli("index", python_repo).returncode == 0
    a_file = run_cli("show", "NOTES.md", "--root", python_repo)
    assert a_file.returncode == 1
    assert "NOTES.md is a file: `repomap open NOTES.md` shows it" in a_file.stderr, a_file.stderr
    pattern = run_cli("show", "NOTE%.md", "--root", python_repo)  # a name, not a LIKE pattern
    assert pattern.returncode == 1 and "is a file" not in pattern.stderr


def test_cli_show_warns_on_stderr_when_several_symbols_match(make_repo, index) -> None:
    root = make_repo({"a.py": "def run():\n    pass\n", "b.py": "def run():\n    pass\n"})
    index(root)
    shown = run_cli("show", "run", "--root", root, env={"REPOMAP_ROOT": os.fspath(root)})
    assert shown.returncode == 0
    assert shown.stderr.startswith("warning: 2 symbols match 'run'")
    assert shown.stdout.startswith("a.py:1-2  function run")


def test_the_warning_offers_only_the_means_that_tell_the_matches_apart(make_repo, index) -> None:
    """A Rust type's `fmt` of Display and of Debug share file and qualified name: `--file` or
    a qualified name cannot choose between them, only --nth (the advice named all three)."""
    impl = 'impl fmt::{} for Version {{\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {{\n        write!(f, "v")\n    }}\n}}\n'
    root = make_repo(
        {
            "src/lib.rs": "use std::fmt;\npub struct Version;\n"
            + impl.format("Display")
            + impl.format("Debug"),
            "src/other.rs": "pub struct Version;\nimpl Version {\n    pub fn fmt(&self) {}\n}\n",
        }
    )
    index(root)
    same = run_cli("show", "Version::fmt", "--path", "src/lib.rs", "--root", root)
    assert same.returncode == 0, same.stderr
    assert same.stderr.strip().endswith(
        "Pass --nth N (nth=N over MCP and HTTP) as numbered here to choose."
    )
    apart = run_cli("show", "fmt", "--root", root)  # other.rs's is `other::Version::fmt`
    assert apart.stderr.strip().endswith(
        "as numbered here, --file or a qualified name to choose."
    ), apart.stderr


def test_cli_show_does_not_warn_of_a_c_function_s_prototype(make_repo, index) -> None:
    """A C function and its header's prototype: the definition is shown without a warning
    (every C function with a header had one); two definitions still warn."""
    root = make_repo(
        {
            "util.h": "int add(int a, int b);\n",
            "util.c": '#include "util.h"\nint add(int a, int b)\n{\n    return a + b;\n}\n',
            "other.c": "static int add(int a, int b) { return b + a; }\n",
        }
    )
    index(root)
    shown = run_cli("show", "add", "--path", "util.*", "--root", root)
    assert shown.returncode == 0 and shown.stderr == ""
    assert shown.stdout.startswith("util.c:2-5  function add")
    both = run_cli("show", "add", "--root", root)
    assert both.stderr.startswith("warning: 3 symbols match 'add'")
    prototype = run_cli("show", "add", "--path", "util.*", "--nth", "2", "--root", root)
    assert prototype.stdout.startswith("util.h:1-1  function add")


def test_show_context_lists_a_c_function_s_includes_above_it_once(make_repo, index) -> None:
    """redis' `zmalloc` listed 31 includes, platform headers from further down the file
    (`#ifdef __APPLE__` ... `#include <sys/sysctl.h>`) and the same header thrice."""
    root = make_repo(
        {
            "zmalloc.c": (
                "#include <stdlib.h>\n"
                '#include "zmalloc.h"\n'
                "#include <stdlib.h>\n"
                "void *zmalloc(size_t size) {\n"
                "    return malloc(size);\n"
                "}\n"
                "#ifdef __APPLE__\n"
                "#include <sys/sysctl.h>\n"
                "#endif\n"
                "size_t zmalloc_used(void) { return sysctl_count(); }\n"
            ),
        }
    )
    index(root)
    content = get_symbol_content(config.resolve(root), "zmalloc", context=True)
    assert content.imports == ["#include <stdlib.h>", '#include "zmalloc.h"']
    assert content.other_imports == 2
    below = get_symbol_content(config.resolve(root), "zmalloc_used", context=True)
    assert below.imports == [
        "#include <stdlib.h>",
        '#include "zmalloc.h"',
        "#include <sys/sysctl.h>",
    ]


def test_show_context_keeps_the_includes_that_may_declare_what_a_c_function_uses(
    make_repo, index
) -> None:
    """lmdb's `mdb_pack85` (arithmetic on its arguments) listed all 32 includes of mdb.c as
    imports it uses. An indexed header is kept when it defines a name the function uses; one
    the index does not hold (`<stdio.h>`) when it calls what the index defines nowhere."""
    root = make_repo(
        {
            "util.h": "struct pool { int n; };\n",
            "other.h": "int unrelated(void);\n",
            "pool.c": (
                "#include <stdio.h>\n"
                '#include "util.h"\n'
                '#include "other.h"\n'
                "int twice(int x) { return 2 * x; }\n"
                "int pool_size(struct pool *p) { return p->n; }\n"
                'int pool_print(struct pool *p) { return printf("%d", pool_size(p)); }\n'
            ),
        }
    )
    index(root)
    settings = config.resolve(root)
    twice = get_symbol_content(settings, "twice", context=True)
    assert (twice.imports, twice.other_imports) == ([], 3)
    size = get_symbol_content(settings, "pool_size", context=True)
    assert (size.imports, size.other_imports) == (['#include "util.h"'], 2)
    printed = get_symbol_content(settings, "pool_print", context=True)
    assert printed.imports == ["#include <stdio.h>", '#include "util.h"']
    shown = run_cli("show", "twice", "--context", "--root", root)
    assert "imports: none of the file's 3 import statements is used" in shown.stdout


def test_show_and_symbols_put_the_implementation_before_its_overload_stubs(
    make_repo, index
) -> None:
    """pluggy's `show HookimplMarker.__call__` showed the first of two `@overload` stubs (a
    signature ending in `...`), and no option chose the implementation below them."""
    root = make_repo(
        {
            "marker.py": (
                "from typing import overload\n"
                "import typing\n\n"
                "class Marker:\n"
                "    @overload\n"
                "    def __call__(self, f: int) -> int: ...\n"
                "    @typing.overload\n"
                "    def __call__(self, f: None) -> str: ...\n"
                "    def __call__(self, f=None):\n"
                '        """Mark the function."""\n'
                "        return f\n"
            )
        }
    )
    index(root)
    hits = _search(root, "Marker.__call__", limit=5)
    assert [h.line_number for h in hits] == [9, 6, 8]
    shown = run_cli("show", "Marker.__call__", "--root", root)
    assert shown.returncode == 0
    assert shown.stdout.startswith("marker.py:9-11  method Marker.__call__\n"), shown.stdout


def test_show_nth_chooses_among_matches_of_one_name_in_one_file(make_repo, index) -> None:
    """A property's getter and setter share a file and a qualified name: neither --file nor a
    qualified name could reach the setter."""
    root = make_repo({"box.py": GETTER_AND_SETTER})
    index(root)
    first = run_cli("show", "Box.size", "--root", root)
    assert first.stdout.startswith("box.py:3-4  method Box.size\n")
    assert (
        "showing [1] box.py:3. Others: [2] method Box.size box.py:7. Pass --nth N" in first.stderr
    )
    setter = run_cli("show", "Box.size", "--nth", "2", "--root", root)
    assert setter.returncode == 0
    assert setter.stdout.startswith("box.py:7-8  method Box.size\n"), setter.stdout
    assert "def size(self, value):" in setter.stdout
    assert "showing [2] box.py:7. Others: [1] method Box.size box.py:3." in setter.stderr
    again = run_cli("show", "Box.size", "--nth", "1", "--root", root)
    assert again.stdout == first.stdout
    past = run_cli("show", "Box.size", "--nth", "3", "--root", root)
    assert past.returncode == 2 and "Traceback" not in past.stderr
    assert past.stderr.strip() == "error: nth 3 is out of range: 2 symbols match 'Box.size'"
    filtered = run_cli("show", "Box.size", "--nth", "3", "--file", "box.py", "--root", root)
    assert filtered.stderr.strip().endswith("match 'Box.size' in files matching 'box.py'")


def test_the_exactly_cased_name_wins_even_with_limit_one(make_repo, index) -> None:
    root = make_repo(
        {
            "a.py": "class Queryset:\n    pass\n",
            "b.py": "class F:\n    def queryset(self):\n        pass\n",
            "c.py": "from b import F\nF().queryset()\n",
            "d.py": "from b import F\nF().queryset()\n",
        }
    )
    index(root)
    assert [h.qualified_name for h in _search(root, "Queryset", limit=1)] == ["Queryset"]
    assert [h.qualified_name for h in _search(root, "queryset", limit=1)] == ["F.queryset"]


def test_show_and_symbols_pick_the_same_best_match(make_repo, index) -> None:
    """show ranked the whole qualified name and PageRank first, symbols the typed case and the
    path: `show queryset` showed the class, `symbols queryset` put the method first."""
    users = {f"use_{i}.py": "from b import B\nB().save()\n" for i in range(3)}
    root = make_repo(
        {
            "a.py": "class A:\n    def save(self):\n        pass\n",
            "b.py": "class B:\n    def save(self):\n        pass\n",
            "q.py": "class Queryset:\n    pass\n",
            "r.py": "class F:\n    def queryset(self):\n        pass\n",
            **users,
        }
    )
    index(root)
    settings = config.resolve(root)
    for name, expected in (
        ("save", "B.save"),
        ("queryset", "F.queryset"),
        ("Queryset", "Queryset"),
    ):
        searched = _search(root, name, limit=5)
        shown = get_symbol_content(settings, name)
        assert (searched[0].qualified_name, shown.qualified_name) == (expected, expected), name
        assert [o.split()[1] for o in shown.others] == [h.qualified_name for h in searched[1:]]
    shown = run_cli("show", "queryset", "--root", root)
    assert shown.stdout.startswith("r.py:2-3  method F.queryset\n"), shown.stderr


def test_max_lines_caps_a_long_leading_comment_too(make_repo, index) -> None:
    """--context --max-lines 6 printed all 40 lines of a doc comment, then 6 of the body."""
    comment = "".join(f"# note {i}\n" for i in range(1, 41))
    body = "".join(f"    x{i} = {i}\n" for i in range(10))
    root = make_repo({"m.py": f"{comment}@decorated\ndef long():\n{body}"})
    index(root)
    settings = config.resolve(root)
    content = get_symbol_content(settings, "long", max_lines=6, context=True)
    assert content.leading == "# note 39\n# note 40\n@decorated"  # nearest the symbol
    assert (content.leading_line, content.truncated_leading_lines) == (39, 38)
    assert content.content.splitlines() == ["def long():", "    x0 = 0", "    x1 = 1"]
    assert content.truncated_lines == 11 - 3
    short = get_symbol_content(settings, "long", max_lines=20, context=True)
    assert len(short.leading.splitlines()) + len(short.content.splitlines()) == 20
    assert (short.truncated_lines, short.truncated_leading_lines) == (1, 31)  # half each
    shown = run_cli("show", "long", "--context", "--max-lines", "6", "--root", root)
    assert shown.returncode == 0, shown.stderr
    numbered = [line for line in shown.stdout.splitlines() if "│" in line]
    assert len(numbered) == 6
    assert "... (38 earlier lines)" in shown.stdout and "... (8 more lines)" in shown.stdout
    whole = get_symbol_content(settings, "long", context=True)
    assert len(whole.leading.splitlines()) == 41 and whole.truncated_leading_lines == 0


def test_symbols_finds_class_attributes_and_module_constants(make_repo, index) -> None:
    root = make_repo(
        {
            "client.py": "DEFAULT_TIMEOUT = 30\n\n\nclass Client:\n    DEFAULT_TIMEOUT = 60\n"
            "    name: str = 'client'\n",
            "use.py": "from client import DEFAULT_TIMEOUT\nprint(DEFAULT_TIMEOUT)\n",
        }
    )
    index(root)
    found = run_cli("symbols", "DEFAULT_TIMEOUT", "--root", root)
    assert found.returncode == 0, found.stderr
    assert "client.py:1" in found.stdout and "client.py:5" in found.stdout
    hits = _search(root, "DEFAULT_TIMEOUT")
    assert [(h.qualified_name, h.kind, h.signature) for h in hits] == [
        ("DEFAULT_TIMEOUT", "constant", "DEFAULT_TIMEOUT = 30"),
        ("Client.DEFAULT_TIMEOUT", "attribute", "DEFAULT_TIMEOUT = 60"),
    ]
    assert [h.qualified_name for h in _search(root, "name", kind="attribute")] == ["Client.name"]
    shown = get_symbol_content(config.resolve(root), "Client.name")
    assert shown.content == "    name: str = 'client'"


# --- a server's prepared table answers what SQL answers --------------------------------------

PREPARED_NAMES = [
    "QuerySet", "queryset_filter", "QUERY_LIMIT", "query", "Query", "_query_cache", "get_query",
    "über_query", "Über_Query", "naïve_sum", "percent%name", "under_score", "operator==",
    "operator<<", "opEq", "op", "x", "ß_strasse", "İstanbul", "istanbul", "a_b_c_d",
]  # fmt: skip


@pytest.fixture
def varied_repo(make_repo, index) -> Path:
    python = "\n".join(
        f"def {name}():\n    pass\n" for name in PREPARED_NAMES if name.isidentifier()
    )
    classes = "\n".join(
        f"class {name.title().replace('_', '')}Holder:\n    def {name}(self):\n        pass\n"
        for name in PREPARED_NAMES
        if name.isidentifier()
    )
    root = make_repo(
        {
            "pkg/names.py": python,
            "pkg/classes.py": classes,
            "tests/test_names.py": python,
            "src/ops.hpp": "namespace ns { struct Query { bool operator==(const Query&) const;"
            " int operator<<(int); }; int query(); }\n",
            "src/lib.rs": "pub mod inner { pub struct Query; impl Query { pub fn query() {} } }\n",
        }
    )
    index(root)
    return root


QUERIES = [
    "query", "Query", "QUERY", "que", "qry", "qs", "über", "ÜBER", "Über_q", "naive", "naï", "%",
    "percent%", "_", "under_", "op", "opera", "operator=", "ns::Query", "ns::query", "Query.query",
    "inner::Query::query", "::", "a.b", "x", "ß", "İst", "ist", "abcd", "a_b", "QuerySet.filter",
    "HOLDER", "holder", "qh", "Q",
]  # fmt: skip


def test_a_servers_prepared_table_answers_what_sql_answers(varied_repo: Path) -> None:
    """MCP searches through a kept reader, from a table prepared per index state; the CLI asks
    SQLite. Same query, same filters: the same hits, in the same order."""
    db_path = config.resolve(varied_repo).db_path
    kept = store.KeptReader(db_path)
    filters = [
        {},
        {"kind": "function"},
        {"kind": "method,struct"},
        {"language": "rust"},
        {"path": "pkg/"},
        {"limit": 1},
    ]
    compared = 0
    for query in QUERIES:
        for arguments in filters:
            with reading(db_path) as db:
                assert db.state is None
                expected = symbols.search_symbols(db, query, **arguments)
            with kept.snapshot() as db:
                assert db.state is not None
                assert symbols.search_symbols(db, query, **arguments) == expected, (
                    query,
                    arguments,
                )
            compared += bool(expected)
    assert compared > 100
    kept.close()


def test_a_kept_readers_state_changes_exactly_when_the_index_does(varied_repo: Path, index) -> None:
    db_path = config.resolve(varied_repo).db_path
    kept = store.KeptReader(db_path)
    with kept.snapshot() as db:
        first = db.state
        assert [hit.name for hit in symbols.search_symbols(db, "brand_new_function")] == []
    with kept.snapshot() as db:
        assert db.state == first  # nothing changed: the prepared table is reused
    (varied_repo / "pkg" / "new.py").write_text("def brand_new_function():\n    pass\n")
    index(varied_repo)
    with kept.snapshot() as db:
        assert db.state != first
        assert [hit.name for hit in symbols.search_symbols(db, "brand_new_func")] == [
            "brand_new_function"
        ]
        assert [hit.name for hit in symbols.search_symbols(db, "brndnwfnc")] == [
            "brand_new_function"
        ]
    kept.close()


def test_a_changing_index_is_answered_by_sql_until_its_new_state_settles(
    varied_repo: Path, index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a running re-index every commit is a new state: a table made per state cost each
    lookup ~0.3-1 s (bench/serve_load.py), so a new state asks SQLite until it has lasted."""
    db_path = config.resolve(varied_repo).db_path
    kept = store.KeptReader(db_path)
    with kept.snapshot() as db:
        symbols.search_symbols(db, "query")
        assert db.state in symbols._PREPARED  # a reader's first state: made at once
    (varied_repo / "pkg" / "newer.py").write_text("def settled_function():\n    pass\n")
    index(varied_repo)
    with kept.snapshot() as db:
        assert [hit.name for hit in symbols.search_symbols(db, "sttldfnc")] == ["settled_function"]
        assert db.state not in symbols._PREPARED  # changed just now: answered by SQLite
    monkeypatch.setattr(symbols, "SETTLE_SECONDS", 0.0)
    with kept.snapshot() as db:
        assert [hit.name for hit in symbols.search_symbols(db, "sttldfnc")] == ["settled_function"]
        assert symbols._PREPARED[db.state] is not None  # lasted: the table is made
    kept.close()


def test_a_c_struct_s_member_is_found_by_its_name_and_shown(tmp_path: Path) -> None:
    """`symbols m_errorCode` found nothing on expat: a struct's members were no symbols."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "parse.c").write_text(
        "struct parser {\n"
        "    /** Why the parse stopped. */\n"
        "    int m_errorCode;\n"
        "    const char *m_buffer;\n"
        "};\n"
        "int parser_error(struct parser *p) { return p->m_errorCode; }\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("symbols", "m_errorCode", "--json", "--root", root)
    assert found.returncode == 0, found.stderr
    first = json.loads(found.stdout)["results"][0]
    assert (first["qualified_name"], first["kind"], first["line_number"], first["doc"]) == (
        "parser::m_errorCode",
        "field",
        3,
        "Why the parse stopped.",
    )
    shown = run_cli("show", "parser::m_errorCode", "--root", root)
    assert shown.returncode == 0 and "int m_errorCode;" in shown.stdout
    # The struct's chunk still holds its members' lines: a search finds the struct by them.
    search = run_cli("search", "stopped buffer", "--json", "--root", root)
    hits = json.loads(search.stdout)["results"]
    assert hits[0]["name"] == "parser" and all(hit["kind"] != "field" for hit in hits)


def test_a_rust_struct_s_field_is_found_by_its_name_and_outlined_under_it(tmp_path: Path) -> None:
    """`symbols remaining_depth` found nothing in serde_json, and `outline` showed its structs
    without their fields: Rust's named fields are symbols, as C's members are."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "de.rs").write_text(
        "/// A JSON deserializer.\n"
        "pub struct Deserializer<R> {\n"
        "    read: R,\n"
        "    /// How deep the parser may still recurse.\n"
        '    #[cfg(not(feature = "unbounded_depth"))]\n'
        "    remaining_depth: u8,\n"
        "}\n"
        "pub struct Position(usize, usize);\n"
        "impl<R> Deserializer<R> {\n"
        "    fn recurse(&mut self) -> bool {\n"
        "        self.remaining_depth -= 1;\n"
        "        self.remaining_depth == 0\n"
        "    }\n"
        "}\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("symbols", "remaining_depth", "--json", "--root", root)
    assert found.returncode == 0, found.stderr
    first = json.loads(found.stdout)["results"][0]
    assert (first["qualified_name"], first["kind"], first["line_number"], first["doc"]) == (
        "de::Deserializer::remaining_depth",
        "field",
        6,
        "How deep the parser may still recurse.",
    )
    assert first["signature"] == "remaining_depth: u8"
    outline = run_cli("outline", "src/de.rs", "--root", root)
    assert outline.returncode == 0, outline.stderr
    assert outline.stdout.splitlines() == [
        "src/de.rs",
        "  struct Deserializer  L2-7",
        "    field read  L3-3",
        "    field remaining_depth  L6-6",
        "  struct Position  L8-8",  # a tuple struct's fields have no name: none listed
        "  impl Deserializer  L9-14",
        "    method recurse  L10-13",
    ]
    # Its uses, `self.remaining_depth`, read or written, as C's `p->m_errorCode`.
    uses = run_cli("refs", "Deserializer::remaining_depth", "--root", root)
    assert uses.stdout.splitlines() == [
        "src/de.rs:11  in de::Deserializer::recurse  self.remaining_depth -= 1;",
        "src/de.rs:12  in de::Deserializer::recurse  self.remaining_depth == 0",
    ]
    # The struct's chunk still holds its fields' lines: a search finds the struct by them.
    search = run_cli("search", "parser recurse deep", "--json", "--root", root)
    hits = json.loads(search.stdout)["results"]
    assert hits[0]["name"] == "de::Deserializer" and all(hit["kind"] != "field" for hit in hits)


def test_a_declaration_is_marked_as_one(tmp_path: Path) -> None:
    """libuv's static forward declaration `inet_pton6` was listed as a plain function beside
    its definition: text output says `(declaration)`, JSON `is_definition`."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "inet.c").write_text(
        "static int inet_pton6(const char *src);\n"
        "static int inet_pton6(const char *src) { return src != 0; }\n"
    )
    assert run_cli("index", root).returncode == 0
    shown = run_cli("symbols", "inet_pton6", "--root", root).stdout.splitlines()
    assert shown == [
        "inet.c:2-2  function inet_pton6  static int inet_pton6(const char *src)",
        "inet.c:1-1  function inet_pton6 (declaration)  static int inet_pton6(const char *src)",
    ]
    found = json.loads(run_cli("symbols", "inet_pton6", "--json", "--root", root).stdout)
    assert [hit["is_definition"] for hit in found["results"]] == [True, False]


def test_refs_lists_each_definition_that_uses_a_name(tmp_path: Path) -> None:
    """`repomap refs NAME`: who calls a function or reads a field, one line per definition
    that uses it, with its line as on disk; none found exits 1; not a name exits 2."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "parse.c").write_text(
        "struct parser { int m_errorCode; };\n"
        "static void parserInit(struct parser *p) { p->m_errorCode = 0; }\n"
        "void parser_reset(struct parser *p) {\n"
        "    parserInit(p);\n"
        "}\n"
        "/* parserInit is not called here */\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "parserInit", "--root", root)
    assert found.returncode == 0
    assert found.stdout == "parse.c:4  in parser_reset  parserInit(p);\n"
    field = json.loads(run_cli("refs", "parser::m_errorCode", "--json", "--root", root).stdout)
    assert [(r["line_number"], r["in_symbol"]) for r in field["results"]] == [(2, "parserInit")]
    assert field["name"] == "m_errorCode" and field["count"] == 1
    none = run_cli("refs", "nothing_here", "--root", root)
    assert none.returncode == 1 and none.stdout == "" and "no use of 'nothing_here'" in none.stderr
    bad = run_cli("refs", "a b(", "--root", root)
    assert bad.returncode == 2 and bad.stderr.startswith("error: not a name")
    # a --path that names no indexed file says so, as `search` does (not "no such name")
    for command in ("refs", "symbols"):
        typo = run_cli(command, "parserInit", "--path", "srcc/", "--root", root)
        assert typo.returncode == 1 and "note: no indexed file matches --path srcc/" in typo.stderr


def test_refs_lists_every_line_of_a_using_definition_and_finds_values_in_the_text(
    tmp_path: Path,
) -> None:
    """c-ares' `ares__send_query` calls `skip_server` three times: `refs` listed the first
    alone (the table keeps a name once per definition), so a rename missed two; a constant's
    uses (`ARES_ECONNREFUSED`) are values, no reference: `refs` answered nothing."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "send.c").write_text(
        "#define ECONNREFUSED_X 11\n"
        "static void skip_server(int q) { }\n"
        "int send_query(int q) {\n"
        "    skip_server(q);\n"
        "    if (q) {\n"
        "        // then skip_server again, below\n"
        "        skip_server(q + 1);\n"
        "    }\n"
        "    return skip_server(q), ECONNREFUSED_X;\n"
        "}\n"
        "int fail(void) { return ECONNREFUSED_X; }\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "skip_server", "--root", root)
    assert found.returncode == 0 and found.stderr == ""
    assert found.stdout == (
        "send.c:4  in send_query  skip_server(q);\n"
        "send.c:7  in send_query  skip_server(q + 1);\n"
        "send.c:9  in send_query  return skip_server(q), ECONNREFUSED_X;\n"
    )
    values = run_cli("refs", "ECONNREFUSED_X", "--json", "--root", root)
    answer = json.loads(values.stdout)
    assert [(r["line_number"], r["in_symbol"]) for r in answer["results"]] == [
        (9, "send_query"),
        (11, "fail"),
    ]  # not the #define itself
    assert "no use of 'ECONNREFUSED_X' is indexed" in answer["notes"][0]
    limited = json.loads(
        run_cli("refs", "skip_server", "--limit", "2", "--json", "--root", root).stdout
    )
    assert [r["line_number"] for r in limited["results"]] == [4, 7] and limited["truncated"]
    qualified = run_cli("refs", "Server::skip_server", "--root", root)
    assert qualified.stdout == found.stdout
    assert "note: uses are found by name: 'Server::' is not checked" in qualified.stderr


def test_a_path_filter_after_a_bang_keeps_every_file_but_those(tmp_path: Path) -> None:
    """`--path '!tests/'` matched nothing (a lone gitignore negation), though the dialect is
    read as in .gitignore: it is every file but the tests now, in every command."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "pool.py").write_text("def acquire_connection():\n    return 1\n")
    (root / "tests" / "test_pool.py").write_text("def acquire_connection():\n    return 2\n")
    assert run_cli("index", root).returncode == 0
    for command in ("symbols", "search"):
        found = run_cli(
            command, "acquire_connection", "--path", "!tests/", "--json", "--root", root
        )
        assert found.returncode == 0, found.stderr
        files = {r.get("file_path") or r.get("path") for r in json.loads(found.stdout)["results"]}
        assert files == {"src/pool.py"}, command
    empty = run_cli("symbols", "acquire_connection", "--path", "!", "--root", root)
    assert empty.returncode == 2 and "excludes nothing" in empty.stderr
    # a file whose name holds `[`, named by its tail (`[slug]` is no glob's class then)
    (root / "src" / "pages").mkdir()
    (root / "src" / "pages" / "[slug].py").write_text("def slug_page():\n    return 3\n")
    assert run_cli("index", root).returncode == 0
    slug = run_cli("symbols", "slug_page", "--path", "pages/[slug].py", "--json", "--root", root)
    assert [r["file_path"] for r in json.loads(slug.stdout)["results"]] == ["src/pages/[slug].py"]


def test_refs_lists_a_recursive_call_but_not_the_header_or_a_docstring_naming_it(
    tmp_path: Path,
) -> None:
    """flask's `_untag_scan` calls itself: `find_references` listed only the outside caller
    (Python kept a name's first use in a function, its own `def` line, and dropped it); a C
    function's own header was listed as a use, and so were a docstring's middle lines."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text(
        "def walk(node):\n"
        '    """Walk the tree: walk each child.\n'
        "\n"
        "    walk is recursive.\n"
        '    """\n'
        "    for child in node:\n"
        "        walk(child)\n"
        "\n"
        "\n"
        "def user():\n"
        "    return walk([])  # walk it\n"
    )
    (root / "b.c").write_text(
        "static int\n"
        "walk(int n)\n"
        "{\n"
        "    /* walk\n"
        "       walk again */\n"
        "    if (n) return walk(n - 1);\n"
        "    /* the child\n"
        '       walk */ if (n) return walk(n - 2, "a");\n'
        '    puts("x"); walk(n); /* a walk\n'
        "       note */\n"
        "    return 0;\n"
        "}\n"
        "int user(void) { return walk(3); }\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "walk", "--root", root)
    assert found.returncode == 0, found.stderr
    assert found.stdout == (
        "a.py:7  in walk  walk(child)\n"
        "a.py:11  in user  return walk([])  # walk it\n"
        "b.c:6  in walk  if (n) return walk(n - 1);\n"
        'b.c:8  in walk  walk */ if (n) return walk(n - 2, "a");\n'
        'b.c:9  in walk  puts("x"); walk(n); /* a walk\n'
        "b.c:13  in user  int user(void) { return walk(3); }\n"
    )


def test_refs_reads_a_name_as_code_writes_it_and_a_line_as_the_index_decodes_it(
    tmp_path: Path,
) -> None:
    """`größe` looked up `e` (an ASCII-only pattern), `a-b` looked up `b`, and a line of a
    Latin-1 file with a coding line came out garbled (a review's findings)."""
    from repomap.search.references import name_of

    for written, name in (("RE2::Set::Match", "Match"), ("self.parse", "parse"), ("p->len", "len"),
                          ("Match()", "Match"), ("größe", "größe"), ("::parse", "parse")):  # fmt: skip
        assert name_of(written) == name, written
    for bad in ("a-b", "foo bar", "", "x::", "1abc"):
        with pytest.raises(BadQuery):
            name_of(bad)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "p.py").write_bytes(
        "# -*- coding: latin-1 -*-\n"
        "def größe():\n    return 1\n"
        "def e():\n    return 2\n"
        "def use():\n    s = 'café'; x = größe()\n    return e() + x\n".encode("latin-1")
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "größe", "--root", root)
    assert found.returncode == 0, found.stderr
    assert found.stdout == "p.py:7  in use  s = 'café'; x = größe()\n"


def test_among_equal_symbols_the_projects_own_code_comes_before_tests_and_examples(
    tmp_path: Path,
) -> None:
    # `show parse` showed jinja2's docs/examples/ extension, `show main` c-ares' test runner,
    # before the library's and the tools' own.
    root = tmp_path / "repo"
    for rel, text in {
        "docs/examples/cache.py": "class Cache:\n    def parse(self, p):\n        return p\n",
        "test/runner.c": "int main(int argc, char **argv) { return run_all(); }\n",
        "src/ext.py": "class Extension:\n    def parse(self, parser):\n        return parser\n",
        "src/tools/dig.c": "int main(int argc, char **argv) { return dig(argv); }\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert run_cli("index", root).returncode == 0
    for name, expected in (("parse", "src/ext.py"), ("main", "src/tools/dig.c")):
        listed = json.loads(run_cli("symbols", name, "--json", "--root", root).stdout)
        assert [r["file_path"] for r in listed["results"]][0] == expected, name
        shown = run_cli("show", name, "--root", root)
        assert shown.stdout.startswith(expected), name


def test_show_puts_a_file_a_tool_wrote_after_the_one_it_was_made_from(tmp_path: Path) -> None:
    # tmux's cmd-parse.c (Bison's output of cmd-parse.y) was shown first for each parser
    # function: its path says nothing, its header comment does.
    root = tmp_path / "repo"
    for rel, text in {
        "a_pb2.py": "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n"
        "def user_name(user):\n    return user.name\n",
        "users.py": 'def user_name(user):\n    """The name shown."""\n    return user.name\n',
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert run_cli("index", root).returncode == 0
    shown = run_cli("show", "user_name", "--root", root)
    assert shown.stdout.startswith("users.py:1-3"), shown.stdout
    assert "[2] function user_name a_pb2.py:2" in shown.stderr
    assert run_cli("show", "user_name", "--nth", "2", "--root", root).stdout.startswith("a_pb2.py")
    listed = json.loads(run_cli("symbols", "user_name", "--json", "--root", root).stdout)
    assert [r["file_path"] for r in listed["results"]] == ["users.py", "a_pb2.py"]
    one = json.loads(
        run_cli("symbols", "user_name", "--limit", "1", "--json", "--root", root).stdout
    )
    assert [r["file_path"] for r in one["results"]] == ["users.py"]  # not the limit's cut first


def test_refs_of_a_value_lists_the_lines_naming_it_beside_its_indexed_uses(
    tmp_path: Path,
) -> None:
    # sqlite's SQLITE_DEFAULT_WAL_AUTOCHECKPOINT: its `#ifndef` was indexed, so the text was
    # not read, and main.c's use (a value, which no reference records) was left out unsaid.
    root = tmp_path / "repo"
    root.mkdir()
    (root / "limits.h").write_text(
        "#ifndef DEFAULT_CHECKPOINT\n# define DEFAULT_CHECKPOINT 1000\n#endif\n"
    )
    (root / "main.c").write_text(
        '#include "limits.h"\n\nint set_checkpoint(int db, int pages);\n\n'
        "int open_db(int db)\n{\n\t/* DEFAULT_CHECKPOINT pages */\n"
        "\treturn set_checkpoint(db, DEFAULT_CHECKPOINT);\n}\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "DEFAULT_CHECKPOINT", "--root", root)
    assert found.returncode == 0, found.stderr
    assert found.stdout == (
        "limits.h:1  #ifndef DEFAULT_CHECKPOINT\n"
        "main.c:8  in open_db  return set_checkpoint(db, DEFAULT_CHECKPOINT);\n"
    )
    assert "is a value" in found.stderr
    # the text read beside the indexed uses stops at its time budget, and says so
    from repomap import store
    from repomap.search import references

    with store.reading(root / ".repomap" / "index.db") as db:
        budget = references.VALUE_SCAN_SECONDS
        try:
            references.VALUE_SCAN_SECONDS = 0.0
            cut = references.find_references(db, root, "DEFAULT_CHECKPOINT")
        finally:
            references.VALUE_SCAN_SECONDS = budget
    assert [(use.file_path, use.line_number) for use in cut.results] == [("limits.h", 1)]
    assert any("its last 2 files (in path order) were not" in note for note in cut.notes)
    called = run_cli("refs", "set_checkpoint", "--root", root)  # a function: uses indexed
    assert called.stdout == "main.c:8  in open_db  return set_checkpoint(db, DEFAULT_CHECKPOINT);\n"
    assert called.stderr == ""


def test_refs_of_a_cpp_member_lists_its_uses_without_this(tmp_path: Path) -> None:
    """CLI11's `subcommands_`: 1 of the 42 lines naming it, as only `o->count_` and
    `this->count_` are recorded; inside its class's methods a member is named alone. A C
    struct's field or a Python attribute has no such use, and its text is not read."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "counter.hpp").write_text(
        "class Counter {\n  public:\n    void bump() { count_ += 1; }\n"
        "    int get() const { return count_; }\n"
        "    void copy(const Counter *o) { count_ = o->count_; }\n"
        "    void reset() { this->count_ = 0; }\n  private:\n    int count_{0};\n};\n"
    )
    (root / "point.c").write_text(
        "struct point { int x; };\nint getx(struct point *p) { return p->x; }\n"
        "int twice(int x) { return x + x; }\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "count_", "--root", root)
    assert found.returncode == 0, found.stderr
    assert [line.split("  ")[0] for line in found.stdout.splitlines()] == [
        "counter.hpp:3", "counter.hpp:4", "counter.hpp:5", "counter.hpp:6",
    ]  # fmt: skip
    assert "is a C++ member (named alone in its class's methods)" in found.stderr
    field = run_cli("refs", "x", "--root", root)  # a C field: its recorded use alone
    assert [line.split("  ")[0] for line in field.stdout.splitlines()] == ["point.c:2"]
    assert field.stderr == ""


def test_refs_of_a_local_variable_lists_the_lines_naming_it_and_a_typo_finds_nothing(
    tmp_path: Path,
) -> None:
    """nghttp2's `rv`, named on 821 lines, answered nothing (an MCP agent): a local variable is
    no symbol and its uses are no references. A name defined nowhere is read from the text."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "session.c").write_text(
        "int send_data(int n);\n\nint session_send(int n)\n{\n\tint rv;\n"
        "\t/* rv holds the result */\n\trv = send_data(n);\n\tif (rv < 0)\n\t\treturn rv;\n"
        "\treturn 0;\n}\n"
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("refs", "rv", "--root", root)
    assert found.returncode == 0, found.stderr
    assert [line.split("  ")[0] for line in found.stdout.splitlines()] == [
        "session.c:5", "session.c:7", "session.c:8", "session.c:9",
    ]  # fmt: skip
    assert "'rv' is defined nowhere in the index (a local variable" in found.stderr
    typo = run_cli("refs", "rvv", "--root", root)
    assert typo.returncode == 1 and typo.stdout == ""
    assert "defined nowhere" not in typo.stderr


def test_a_symbol_query_with_a_wildcard_that_finds_nothing_says_names_are_no_globs(
    tmp_path: Path,
) -> None:
    # an MCP agent's `Checker.handle*` answered nothing, with no word of why
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("class Checker:\n    def handle_node(self):\n        pass\n")
    assert run_cli("index", root).returncode == 0
    globbed = run_cli("symbols", "Checker.handle*", "--root", root)
    assert globbed.returncode == 1
    assert "no wildcards here" in globbed.stderr and "search for 'Checker.handle'" in globbed.stderr
    as_json = json.loads(run_cli("symbols", "Checker.handle*", "--root", root, "--json").stdout)
    assert as_json["results"] == [] and "no wildcards here" in as_json["notes"][0]
    found = run_cli("symbols", "Checker.handle", "--root", root)
    assert found.returncode == 0 and "handle_node" in found.stdout and found.stderr == ""


def test_refs_without_refresh_moves_a_row_whose_line_no_longer_names_it_to_the_nearest_that_does(
    tmp_path: Path,
) -> None:
    # An MCP agent, `--no-refresh`, two lines inserted at the top since indexing: a row at the
    # old line printed the text there now (`)`), beside the right one. Where no line near it
    # names it, the row is left out.
    root = tmp_path / "repo"
    root.mkdir()
    body = "def is_literal(node):\n    return (\n        node\n    )\n\n\ndef check(n):\n    x = is_literal(\n        n\n    )\n    return x\n"
    (root / "checker.py").write_text(body)
    assert run_cli("index", root).returncode == 0
    (root / "checker.py").write_text("import os\nimport sys\n" + body)
    found = run_cli("refs", "is_literal", "--root", root, "--no-refresh")
    assert found.returncode == 0, found.stderr
    assert [line.split("  ", 1)[0] for line in found.stdout.splitlines()] == ["checker.py:10"]
    assert all("is_literal" in line for line in found.stdout.splitlines())
    (root / "checker.py").write_text("def is_literal(node):\n    return node\n")
    gone = run_cli("refs", "is_literal", "--root", root, "--no-refresh")
    assert gone.returncode == 1 and gone.stdout == ""


def test_a_symbols_doc_line_skips_a_doc_tools_lone_tag(tmp_path: Path) -> None:
    # every public nghttp2 function's doc read "@function" (an MCP agent)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "api.h").write_text(
        "/**\n * @function\n *\n * Submits HEADERS frame and optionally one or more DATA frames.\n"
        " */\nint submit_request(int session);\n\n"
        "/**\n * @brief Frees the session.\n */\nvoid session_del(int session);\n"
    )
    assert run_cli("index", root).returncode == 0
    found = json.loads(run_cli("symbols", "submit_request", "--root", root, "--json").stdout)
    assert found["results"][0]["doc"] == (
        "Submits HEADERS frame and optionally one or more DATA frames."
    )
    freed = json.loads(run_cli("symbols", "session_del", "--root", root, "--json").stdout)
    assert freed["results"][0]["doc"] == "Frees the session."


def test_refs_gives_each_line_to_its_innermost_definition_and_skips_comments_and_strings(
    tmp_path: Path,
) -> None:
    """A review's findings: a use in a class body took its methods' lines, module-level uses
    showed the first line alone, `*out = f(x)` read as a comment line, `/* f */ x = f(x)` as a
    comment, Python's `# f` and `"f"` as uses, a global's type line as a use of it, and
    `Box.foo()`'s qualifier printed as `Box.fo`."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "mod.py").write_text(
        "def foo():\n    return 1\n\n\nclass Box:\n    value = foo()\n\n"
        "    def method(self):\n        # foo is called here\n        return foo()\n\n"
        "    def other(self):\n        return 'foo'\n\n\nfoo()\nprint(foo())\n"
    )
    (root / "lib.c").write_text(
        'int skip(int n);\nstatic const char *\ndefault_name = "x";\n'
        "int helper(int n, int *out) {\n    int x = skip(n);\n    *out = skip(x);\n"
        "    /* skip below */\n    x += 1; /* skip */ x = skip(x);\n    return x;\n}\n"
        "const char *get(void) { return default_name; }\n"
    )
    assert run_cli("index", root).returncode == 0
    foo = json.loads(run_cli("refs", "Box.foo()", "--json", "--root", root).stdout)
    assert [(r["line_number"], r["in_symbol"]) for r in foo["results"]] == [
        (6, "Box"), (10, "Box.method"), (16, None), (17, None)
    ]  # fmt: skip
    assert foo["notes"][0].startswith("uses are found by name: 'Box.' is not checked")
    skip = json.loads(run_cli("refs", "skip", "--json", "--root", root).stdout)
    assert [r["line_number"] for r in skip["results"]] == [5, 6, 8]
    name = json.loads(run_cli("refs", "default_name", "--json", "--root", root).stdout)
    assert [(r["line_number"], r["in_symbol"]) for r in name["results"]] == [(11, "get")]
    typo = run_cli("refs", "no_such_name_at_all", "--root", root)
    assert typo.returncode == 1 and "no use of 'no_such_name_at_all' is indexed" in typo.stderr


def test_a_definition_without_a_doc_shows_its_header_declarations(tmp_path: Path) -> None:
    # re2 and double-conversion describe methods in the header: `symbols Set::Match` showed
    # the .cc definition without a word. A static function's same-named prototype in another
    # .c file (the writer links by name) does not lend it its doc.
    root = tmp_path / "repo"
    root.mkdir()
    (root / "cache.h").write_text(
        "class Cache {\n public:\n  // Insert a mapping from key to value.\n"
        "  int Insert(int key);\n};\n\n/* Compute the checksum. */\nint checksum(const char *p);\n"
    )
    (root / "cache.cc").write_text(
        '#include "cache.h"\nint Cache::Insert(int key) { return key; }\n'
        "int checksum(const char *p) { return 0; }\n"
    )
    (root / "a.c").write_text("/* The first file's. */\nstatic void callback(void);\n")
    (root / "b.c").write_text("static void callback(void) {}\n")
    assert run_cli("index", root).returncode == 0

    def docs(name: str) -> list[tuple[str, bool, str | None]]:
        found = json.loads(run_cli("symbols", name, "--json", "--root", root).stdout)["results"]
        return [(r["file_path"], r["is_definition"], r["doc"]) for r in found]

    assert docs("Cache::Insert")[0] == ("cache.cc", True, "Insert a mapping from key to value.")
    assert docs("checksum")[0] == ("cache.cc", True, "Compute the checksum.")
    assert ("b.c", True, None) in docs("callback")


def test_a_search_of_common_words_alone_says_so(tmp_path: Path) -> None:
    """`search "how does it"` answered at 1.00 with exit 0 and no word of why (a search user):
    its common words are searched, as nothing else is left, and a note says so."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text('def how_it_works():\n    """How does it work? It does."""\n')
    assert run_cli("index", root).returncode == 0
    found = run_cli("search", "how does it", "--mode", "lexical", "--root", root)
    assert found.returncode == 0 and "a.py:1-2" in found.stdout
    assert "note: every word of the question is a common word (how, does, it)" in found.stderr
    as_json = run_cli("search", "how does it", "--mode", "lexical", "--root", root, "--json")
    notes = json.loads(as_json.stdout)["notes"]
    assert as_json.returncode == 0 and notes[0].startswith("every word of the question is a")
    assert as_json.stderr == ""
    plain = run_cli("search", "how the answer is computed", "--mode", "lexical", "--root", root)
    assert "common word" not in plain.stderr


def test_show_does_not_warn_of_two_symbols_of_the_same_lines(make_repo, index) -> None:
    """`typedef struct json_t {...} json_t;` is a struct and a type of one span: jansson's
    `show json_t` warned "2 symbols match" and offered the same lines as the other choice."""
    header = "typedef struct json_t {\n    int type;\n    long refcount;\n} json_t;\n"
    root = make_repo(
        {
            "src/jansson.h": header,
            "src/value.c": "int x;\n",
            "src/other.c": "struct json_t *make(void);\n",
        }
    )
    index(root)
    shown = run_cli("show", "json_t", "--root", root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == "" and shown.stdout.startswith("src/jansson.h:1-4  ")
    (root / "src/other.h").write_text(header.replace("long", "short"))  # a real second one
    index(root)
    warned = run_cli("show", "json_t", "--root", root).stderr
    assert warned.startswith("warning: 4 symbols match 'json_t'") and "src/other.h" in warned


def test_show_context_leaves_out_system_includes_for_member_calls(make_repo, index) -> None:
    """ninja's `Plan::AddSubTarget --context` listed <sys/termios.h> and <stdio.h> as imports
    it uses: its calls on objects (`want_.insert(`, `node->path(`) were read as calls of
    functions only a header outside the index could declare."""
    root = make_repo(
        {
            "graph.h": "struct Node { int path(); };\nint Mark(struct Node *n);\n",
            "build.cc": (
                "#include <stdio.h>\n"
                '#include "graph.h"\n'
                "int Walk(Node* node, Node& other) {\n"
                "  Mark(node);\n"
                "  return node->path() + other.path();\n"
                "}\n"
            ),
        }
    )
    index(root)
    walk = get_symbol_content(config.resolve(root), "Walk", context=True)
    assert (walk.imports, walk.other_imports) == (['#include "graph.h"'], 1)
    shown = run_cli("show", "Walk", "--context", "--root", root).stdout
    assert "includes that may declare what it uses (+1 more that do not):" in shown


def test_show_context_does_not_count_a_name_in_a_python_comment_or_string(make_repo, index) -> None:
    """dateutil's `tzfile._find_last_transition --context` listed `import time`: "time" was
    only in a comment of its body."""
    root = make_repo(
        {
            "tz.py": (
                "import json\nimport os\nimport time\n\n\n"
                "def find(path, x):\n"
                "    # the time of the last transition, not the time now\n"
                "    label = 'time'\n"
                '    return os.path.join(path, f"{json.dumps(x)}") + label\n'
            )
        }
    )
    index(root)
    found = get_symbol_content(config.resolve(root), "find", context=True)
    assert (found.imports, found.other_imports) == (["import json", "import os"], 1)
