"""Rust files a `mod` declaration loads from elsewhere (`#[path = "extern_impl.rs"] mod imp;`):
their items are qualified by the module Rust gives them (`fmt::imp::Formatter`), not by their
file's name (repomap/index/rust_paths.py). Real files in a temp dir, the real indexer, the real
CLI where users meet the names (`symbols`, `show`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli

from repomap import config
from repomap.index import rust_paths
from repomap.index.rust_paths import Declaration, declarations

FMT = {
    "Cargo.toml": '[package]\nname = "fmtdemo"\n',
    "src/lib.rs": "pub mod fmt;\n",
    "src/fmt/mod.rs": '#[path = "extern_impl.rs"]\nmod imp;\npub use self::imp::Formatter;\n',
    "src/fmt/extern_impl.rs": """
        pub struct Formatter;
        impl Formatter {
            pub fn style(&self) {}
        }
        mod styles {
            pub struct Bold;
        }
        pub use self::styles::Bold as Strong;
        """,
}


def names(root: Path, path: str) -> set[str]:
    with sqlite3.connect(config.resolve(root).db_path) as db:
        rows = db.execute(
            "SELECT s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE f.path = ?",
            (path,),
        )
        return {row[0] for row in rows}


def shown(root: Path, name: str) -> tuple[str, str]:
    done = run_cli("show", name, "--json", "--root", root)
    assert done.returncode == 0, (name, done.stderr)
    hit = json.loads(done.stdout)["results"][0]
    return hit["file_path"], hit["qualified_name"]


def test_a_path_attribute_names_the_file_s_items_by_the_module_it_declares(make_repo) -> None:
    root = make_repo(FMT)
    assert run_cli("index", root).returncode == 0
    listed = run_cli("symbols", "style", "--root", root)
    assert "method fmt::imp::Formatter::style" in listed.stdout, listed.stdout
    assert "extern_impl::" not in listed.stdout
    impl = "src/fmt/extern_impl.rs"
    method = (impl, "fmt::imp::Formatter::style")
    assert shown(root, "fmt::imp::Formatter::style") == method
    # Through the `pub use` of fmt/mod.rs, as for a module in a file of its own name.
    assert shown(root, "crate::fmt::Formatter::style") == method
    assert shown(root, "fmtdemo::fmt::Formatter::style") == method
    # A re-export in the loaded file is its module's: `fmt::imp::Strong`.
    assert shown(root, "crate::fmt::imp::Strong") == (impl, "fmt::imp::styles::Bold")
    done = run_cli("show", "fmt::extern_impl::Formatter::style", "--root", root)
    assert done.returncode == 1 and "no symbol named" in done.stderr


def test_cfg_alternatives_under_one_name_each_take_the_module(make_repo, index) -> None:
    """env_logger 0.9's filter/mod.rs: one `mod inner;` from regex.rs or string.rs."""
    root = make_repo(
        {
            "src/lib.rs": "mod filter;\n",
            "src/filter/mod.rs": """
                #[cfg(feature = "regex")]
                #[path = "regex.rs"]
                mod inner;

                #[cfg(not(feature = "regex"))]
                #[path = "string.rs"]
                mod inner;

                pub use self::inner::Filter;
                """,
            "src/filter/regex.rs": "pub struct Filter {\n    inner: String,\n}\n",
            "src/filter/string.rs": "pub struct Filter {\n    inner: String,\n}\n",
        }
    )
    index(root)
    for path in ("src/filter/regex.rs", "src/filter/string.rs"):
        assert names(root, path) == {"filter::inner::Filter", "filter::inner::Filter::inner"}


FORMS = {
    "src/lib.rs": """
        /// The platform's layer.
        #[allow(dead_code)]
        #[path = "platform/unix_impl.rs"]
        #[cfg(unix)]
        pub mod sys;

        #[cfg_attr(windows, path = "conf_windows.rs")]
        mod conf;

        mod outer {
            #[path = r"deep.rs"]
            mod inner;
        }

        cfg_if::cfg_if! {
            if #[cfg(unix)] {
                #[path = "gated_impl.rs"]
                mod gated;
            }
        }

        #[path = "missing.rs"]
        mod ghost;

        mod parser;
        """,
    "src/platform/unix_impl.rs": "mod fd;\npub fn open() {}\n",
    "src/platform/fd.rs": "pub struct Fd;\n",
    "src/conf_windows.rs": "pub fn load() {}\n",
    "src/conf.rs": "pub fn load() {}\n",
    "src/outer/deep.rs": "pub fn dive() {}\n",
    "src/gated_impl.rs": "pub fn gate() {}\n",
    # Not a mod.rs: a `#[path]` is still relative to its folder; inline modules' from
    # parser/ and their names.
    "src/parser.rs": """
        #[path = "lexer_impl.rs"]
        mod lexer;
        mod nested {
            #[path = "tok.rs"]
            mod token;
        }
        """,
    "src/lexer_impl.rs": "pub fn lex() {}\n",
    "src/parser/nested/tok.rs": "pub struct Token;\n",
}


@pytest.mark.parametrize(
    ("path", "qualified"),
    [
        ("src/platform/unix_impl.rs", {"sys::fd", "sys::open"}),  # attributes, a doc around
        ("src/platform/fd.rs", {"sys::fd::Fd"}),  # a `mod fd;` of a file `#[path]` loads
        ("src/conf_windows.rs", {"conf::load"}),  # `cfg_attr`
        ("src/conf.rs", {"conf::load"}),  # where it is when the `cfg_attr` does not apply
        ("src/outer/deep.rs", {"outer::inner::dive"}),  # in an inline module
        ("src/gated_impl.rs", {"gated::gate"}),  # in `cfg_if!`
        ("src/lexer_impl.rs", {"parser::lexer::lex"}),
        ("src/parser/nested/tok.rs", {"parser::nested::token::Token"}),
    ],
)
def test_the_forms_of_path_attributes_rust_reads(
    make_repo, index, path: str, qualified: set[str]
) -> None:
    root = make_repo(FORMS)
    index(root)
    assert names(root, path) == qualified


def test_a_file_declared_from_several_places_keeps_its_own_path_s_module_if_one_gives_it(
    make_repo, index
) -> None:
    """Rust std's `#[path = "../unix/cmath.rs"] mod cmath;` in each platform's mod.rs: the
    file is unix's. A file that declarations give several modules, none its path's, keeps
    its path's too (not one picked); one they give one module takes it; a crate's root
    included from another crate stays its crate's."""
    root = make_repo(
        {
            "src/lib.rs": 'mod sys;\n#[path = "../vendor/src/lib.rs"]\nmod vendored;\n',
            "src/sys/mod.rs": "mod unix;\nmod wasm;\n",
            "src/sys/unix/mod.rs": 'mod cmath;\n#[path = "../shared/pipe.rs"]\nmod pipe;\n',
            "src/sys/wasm/mod.rs": (
                '#[path = "../unix/cmath.rs"]\nmod cmath;\n'
                '#[path = "../shared/pipe.rs"]\nmod pipe;\n'
                '#[path = "../shared/time.rs"]\nmod time;\n'
            ),
            "src/sys/unix/cmath.rs": "pub fn hypot() {}\n",
            "src/sys/shared/pipe.rs": "pub fn read2() {}\n",
            "src/sys/shared/time.rs": "pub fn now() {}\n",
            "vendor/src/lib.rs": "pub fn vendored_api() {}\n",
        }
    )
    index(root)
    assert names(root, "src/sys/unix/cmath.rs") == {"sys::unix::cmath::hypot"}
    assert names(root, "src/sys/shared/pipe.rs") == {"sys::shared::pipe::read2"}
    assert names(root, "src/sys/shared/time.rs") == {"sys::wasm::time::now"}
    assert names(root, "vendor/src/lib.rs") == {"vendored_api"}


def test_a_test_crate_that_borrows_a_library_file_leaves_it_the_library_s(make_repo, index) -> None:
    """ryu's tests/s2d_test.rs compiles `#[path = "../src/s2d.rs"] mod s2d;` into itself: the
    file stayed `tests::s2d_test::s2d`, so its parser was demoted as test code and search did
    not find it. A test, bench or example crate borrows a library file; it names only files
    of its own kind (a shared `tests/common/mod.rs`)."""
    root = make_repo(
        {
            "Cargo.toml": '[package]\nname = "floats"\n',
            "src/lib.rs": "mod fmt;\n",
            "src/fmt.rs": "/// Format a number as decimal text.\npub fn format_number() {}\n",
            "src/parse.rs": (
                "/// Parse decimal text into a floating point number.\n"
                "pub fn parse_decimal(text: &str) -> f64 { text.len() as f64 }\n"
            ),
            "tests/parse_test.rs": (
                '#[path = "../src/parse.rs"]\nmod parse;\n'
                '#[path = "common/helpers.rs"]\nmod helpers;\n'
                '#[test]\nfn parses() { helpers::check(parse::parse_decimal("1")); }\n'
            ),
            "tests/common/helpers.rs": "pub fn check(value: f64) { assert!(value > 0.0); }\n",
        }
    )
    index(root)
    assert names(root, "src/parse.rs") == {"parse::parse_decimal"}
    assert names(root, "tests/common/helpers.rs") == {"tests::parse_test::helpers::check"}
    found = run_cli(
        "search", "parse decimal text into a floating point number", "--json", "--root", root
    )
    first = json.loads(found.stdout)["results"][0]
    assert (first["path"], first["name"]) == ("src/parse.rs", "parse::parse_decimal")


def test_an_edit_of_the_declaring_file_renames_its_unchanged_target(make_repo, index) -> None:
    root = make_repo(FMT)
    index(root)
    impl = "src/fmt/extern_impl.rs"
    assert "fmt::imp::Formatter::style" in names(root, impl)
    declaring = root / "src/fmt/mod.rs"
    declaring.write_text(declaring.read_text().replace("mod imp;", "mod backend;"))
    summary = index(root)
    assert (summary.modified, summary.unchanged) == (2, 1)  # mod.rs, and its target again
    assert "fmt::backend::Formatter::style" in names(root, impl)
    assert not any(name.startswith("fmt::imp::") for name in names(root, impl))
    declaring.write_text("mod extern_impl;\n")  # no `#[path]`: its own path's module again
    index(root)
    assert "fmt::extern_impl::Formatter::style" in names(root, impl)
    declaring.write_text(FMT["src/fmt/mod.rs"])
    index(root)
    assert "fmt::imp::Formatter::style" in names(root, impl)
    assert index(root).modified == 0  # and only once
    declaring.unlink()  # the declaration gone with its file
    index(root)
    assert "fmt::extern_impl::Formatter::style" in names(root, impl)


def test_a_target_whose_stat_changed_but_not_its_bytes_is_renamed_too(make_repo, index) -> None:
    root = make_repo(FMT)
    index(root)
    declaring, impl = root / "src/fmt/mod.rs", root / "src/fmt/extern_impl.rs"
    declaring.write_text(declaring.read_text().replace("mod imp;", "mod backend;"))
    stat = impl.stat()
    os.utime(impl, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same bytes, new stat
    index(root)
    assert "fmt::backend::Formatter::style" in names(root, "src/fmt/extern_impl.rs")


def test_an_index_that_kept_no_modules_renames_unchanged_files(
    make_repo, index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index made before modules were worked out: its next run reads every Rust file's
    declarations, and re-extracts the files they rename, though none changed."""
    root = make_repo(FMT)
    with monkeypatch.context() as patched:  # as a repomap without them made it
        patched.setattr(rust_paths, "modules", lambda declared, present: {})
        patched.setattr(rust_paths, "save", lambda db, kept: None)
        index(root)
    impl = "src/fmt/extern_impl.rs"
    assert "fmt::extern_impl::Formatter::style" in names(root, impl)
    summary = index(root)
    assert summary.modified == 1 and "fmt::imp::Formatter::style" in names(root, impl)


def test_declarations_are_read_with_their_paths() -> None:
    source = b"""
        #[cfg(unix)]
        // a comment
        #[path = "a/b.rs"]
        #[allow(dead_code)]
        pub(crate) mod plain;
        #[cfg_attr(unix, path = "u.rs")]
        #[cfg_attr(windows, allow(x), path = "w.rs")]
        mod r#try;
        #[path = "inline"]
        mod q {
            #[path = "z.rs"]
            mod w;
            mod v;
        }
        mod body {
            fn f() {}
        }
        fn function() {
            #[path = "nowhere.rs"]
            mod local;
        }
        """
    assert declarations(source) == [
        Declaration((), "plain", ("a/b.rs",), False),
        Declaration((), "try", ("u.rs", "w.rs"), True),
        Declaration((("q", "inline"),), "w", ("z.rs",), False),
        Declaration((("q", "inline"),), "v", (), True),
    ]
    assert declarations(b"pub fn no_module() {}\n") == []


def read_declarations(root: Path) -> set[str]:
    """The files whose declarations the index keeps (read for a path attribute's sake)."""
    with sqlite3.connect(config.resolve(root).db_path) as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (rust_paths.META_KEY,)).fetchone()
    return set(json.loads(row[0])["files"]) if row else set()


def test_a_first_path_attribute_reads_the_unchanged_file_that_declares_its_target(
    make_repo, index
) -> None:
    """A plain `mod cmath;` is not parsed while no path attribute makes it matter. When a
    file gains one that loads the same file, the unchanged file declaring it plainly is read
    then, and the file keeps its own path's module; it loses that with the plain declaration,
    and every file its own when the last path attribute goes."""
    root = make_repo(
        {
            "src/lib.rs": "mod sys;\n",
            "src/sys/mod.rs": "mod unix;\nmod wasm;\n",
            "src/sys/unix/mod.rs": "mod cmath;\n",
            "src/sys/unix/cmath.rs": "pub fn hypot() {}\n",
            "src/sys/wasm/mod.rs": "pub fn init() {}\n",
            "src/sys/shared/time.rs": "pub fn now() {}\n",
        }
    )
    index(root)
    cmath, time = "src/sys/unix/cmath.rs", "src/sys/shared/time.rs"
    assert names(root, cmath) == {"sys::unix::cmath::hypot"}
    assert read_declarations(root) == set()  # no path attribute: no file parsed
    wasm = root / "src/sys/wasm/mod.rs"
    wasm.write_text(
        '#[path = "../unix/cmath.rs"]\nmod cmath;\n'
        '#[path = "../shared/time.rs"]\nmod time;\npub fn init() {}\n'
    )
    index(root)
    assert names(root, cmath) == {"sys::unix::cmath::hypot"}  # unix/mod.rs's, read now
    assert names(root, time) == {"sys::wasm::time::now"}
    assert "src/sys/unix/mod.rs" in read_declarations(root)
    (root / "src/sys/unix/mod.rs").write_text("pub fn unix() {}\n")  # no `mod cmath;` now
    index(root)
    assert names(root, cmath) == {"sys::wasm::cmath::hypot"}
    wasm.write_text("pub fn init() {}\n")  # its last path attribute gone
    index(root)
    assert names(root, cmath) == {"sys::unix::cmath::hypot"}
    assert names(root, time) == {"sys::shared::time::now"}


def test_an_unchanged_file_a_new_path_attribute_loads_has_its_declarations_read(
    make_repo, index
) -> None:
    """A file a `#[path]` loads is read as a mod.rs: its `mod styles;` is then `styles.rs`
    beside it, not `extern_impl/styles.rs`. Nothing made its declarations matter before:
    they are read when the declaration that loads it appears, though it did not change."""
    root = make_repo(
        {
            "src/lib.rs": "mod fmt;\n",
            "src/fmt/mod.rs": "mod extern_impl;\n",
            "src/fmt/extern_impl.rs": "mod styles;\npub struct Formatter;\n",
            "src/fmt/extern_impl/styles.rs": "pub struct Bold;\n",
            "src/fmt/styles.rs": "pub struct Italic;\n",
        }
    )
    index(root)
    assert names(root, "src/fmt/extern_impl/styles.rs") == {"fmt::extern_impl::styles::Bold"}
    assert names(root, "src/fmt/styles.rs") == {"fmt::styles::Italic"}
    (root / "src/fmt/mod.rs").write_text('#[path = "extern_impl.rs"]\nmod imp;\n')
    index(root)
    assert "fmt::imp::Formatter" in names(root, "src/fmt/extern_impl.rs")
    assert names(root, "src/fmt/styles.rs") == {"fmt::imp::styles::Italic"}
    assert names(root, "src/fmt/extern_impl/styles.rs") == {"fmt::extern_impl::styles::Bold"}


def test_plain_declarations_that_load_a_file_as_another_module_than_its_path(
    make_repo, index
) -> None:
    """No path attribute, yet another module than the file's path makes: `mod lib;` loads
    fmt/lib.rs as `fmt::lib` (its path's: `fmt`), and a test crate whose file name is no
    identifier loads tests/common.rs as `common`; in a later run too, declared then."""
    files = {
        "src/lib.rs": "mod fmt;\n",
        "src/fmt/mod.rs": "mod lib;\n",
        "src/fmt/lib.rs": "pub fn f() {}\n",
        "tests/run-time.rs": "mod common;\n",
        "tests/common.rs": "pub fn helper() {}\n",
    }
    root = make_repo(files)
    index(root)
    assert names(root, "src/fmt/lib.rs") == {"fmt::lib::f"}
    assert names(root, "tests/common.rs") == {"common::helper"}
    (root / "src/fmt/mod.rs").write_text("pub fn g() {}\n")
    index(root)
    assert names(root, "src/fmt/lib.rs") == {"fmt::f"}
    (root / "src/fmt/mod.rs").write_text(files["src/fmt/mod.rs"])
    index(root)
    assert names(root, "src/fmt/lib.rs") == {"fmt::lib::f"}


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("src/lib.rs", b'#[path = "a.rs"]\nmod a;\n', True),
        ("src/lib.rs", b'#[cfg_attr(unix, path = "a.rs")]\nmod a;\n', True),
        ("src/lib.rs", b'#[cfg_attr(\n    unix,\n    path = "a.rs"\n)]\nmod a;\n', True),
        ("src/lib.rs", b'#[cfg_attr(unix, /* here */ path = "a.rs")]\nmod a;\n', True),
        ("src/lib.rs", b'#[path=r"a.rs"]\nmod a;\n', True),
        ("src/lib.rs", b"mod a;\n", False),
        ("src/lib.rs", b'mod a;\nfn f() {\n    let path = "a.rs";\n}\n', False),
        ("src/lib.rs", b'/// `#[path = "a.rs"]` loads it\nmod a;\n', False),
        # A path no module's: its `mod x;` loads `tests/x.rs` as `x`, not `tests::x`.
        ("tests/run-time-detect.rs", b"mod common;\n", True),
        ("tests/detect.rs", b"mod common;\n", False),
    ],
)
def test_only_a_path_attribute_or_a_path_of_no_module_has_declarations_read(
    path: str, source: bytes, expected: bool
) -> None:
    assert rust_paths.may_load_elsewhere(path, source) is expected


FILLER = "fn filler() {\n" + "    let x = 1;\n" * 400 + "}\n"


@pytest.mark.parametrize("comment", ["/* { */", "/* /* nested } */ */"])
def test_declarations_are_read_past_braces_in_strings_chars_and_comments(comment: str) -> None:
    """Only the top-level items that hold a `mod` are parsed: a brace in a string, a raw
    string, a char or a comment does not move their bounds (a nested comment, which the
    scan does not follow, has the file parsed whole: the same declarations)."""
    source = (
        FILLER
        + r"""
        fn noise() {
            let a = "{"; let b = '}'; let c = r#"}"{"#; let d = b'{';
            let e = "\"}"; let f: &'static str = r"\"; // }
        """
        + comment
        + """
        }
        #[path = "a.rs"]
        mod a;
        mod outer {
            const X: &str = "}";
            #[path = "b.rs"]
            mod b;
        }
        cfg_if::cfg_if! {
            if #[cfg(unix)] {
                #[path = "c.rs"]
                mod c;
            }
        }
        """
        + FILLER.replace("filler", "more")
        + "struct S { x: u8 }\nmod d;\n"
    ).encode()
    spans = rust_paths._spans(source)  # what is parsed: a few items, or the whole file
    if "nested" in comment:
        assert spans is None
    else:
        assert spans is not None and 4 * sum(end - start for start, end in spans) < len(source)
    assert declarations(source) == [
        Declaration((), "a", ("a.rs",), False),
        Declaration((("outer", None),), "b", ("b.rs",), False),
        Declaration((), "c", ("c.rs",), False),
        Declaration((), "d", (), True),
    ]


def test_a_file_nested_too_deeply_to_read_its_declarations_does_not_stop_the_run(tmp_path):
    # A review's case: 1,500 nested inline modules in a file that loads another through
    # `#[path]`: reading its `mod` declarations raised RecursionError in the parent, and no
    # file was ever indexed.
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "lib.rs").write_text(
        '#[path = "x.rs"] mod x;\n' + "mod a {\n" * 1500 + "mod leaf;\n" + "}\n" * 1500
    )
    (root / "src" / "x.rs").write_text("pub fn deep_enough() {}\n")
    done = run_cli("index", root)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    found = run_cli("symbols", "deep_enough", "--root", root)
    assert found.returncode == 0 and "deep_enough" in found.stdout, found.stderr
