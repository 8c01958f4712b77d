"""Rust extraction: symbols, references, comments, docstrings and string literals."""

from __future__ import annotations

import textwrap
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap.extractors import rust
from repomap.extractors.treesitter import language
from tree_sitter import Query

SOURCE = textwrap.dedent("""\
    //! Connection pools.
    //! Second line of crate docs.

    use std::fmt::{self, Display};
    use std::sync::Mutex;

    /// Upper bound on pool size.
    pub const LIMIT: usize = 10;
    static COUNTER: AtomicUsize = AtomicUsize::new(0);

    /// A pool of connections.
    ///
    ///     indented example
    #[derive(Debug)]
    pub struct Pool<T> {
        /// The idle connections.
        items: Vec<T>,
    }

    /** Kinds of pool. */
    pub enum Kind { Small, Large(u8) }

    pub union Bits { int: u32, float: f32 }

    pub type Shared<T> = Arc<Mutex<Pool<T>>>;

    pub trait Checkout: Clone {
        /// What a checkout yields.
        type Item;
        fn checkout(&self) -> Option<Self::Item>;
        fn ready(&self) -> bool { true }
    }

    impl<T: Clone> Pool<T> {
        pub fn new() -> Self {
            Pool { items: Vec::new() }
        }

        /// Get one.
        pub fn get(
            &self,
            key: &str,
        ) -> Option<&T> {
            // look it up
            // in the items
            let raw = r#"raw "quoted""#;
            let bytes = b"bytes";
            let c = 'x';
            println!("key = {}", key);
            self.items.first()
        }
    }

    impl<T> fmt::Display for Pool<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            /* block
             * comment */
            write!(f, "pool")
        }
    }

    mod inner {
        //! Inner module docs.
        pub fn helper() -> u8 { 1 }
    }

    mod sibling;

    macro_rules! pool {
        ($x:expr) => {
            // inside a macro
            Pool::new()
        };
    }

    fn outer() {
        fn nested() {}
        //// four slashes: a plain comment
        let s = "multi
    line";
    }
    """)


@pytest.fixture(scope="module")
def extraction():
    return rust.extract(SOURCE.encode(), "src/pool.rs")


@pytest.mark.parametrize(
    "rel_path, module",
    [
        ("src/pool.rs", "pool"),
        ("library/std/src/sync/mutex.rs", "sync::mutex"),
        ("src/lib.rs", ""),
        ("src/main.rs", ""),
        ("src/net/mod.rs", "net"),
        ("crates/a/src/bin/tool/main.rs", "bin::tool"),
        ("src/tests/src/deep.rs", "deep"),  # after the last `src/`
        ("tests/smoke.rs", "tests::smoke"),
        ("build.rs", "build"),
        # a folder named as no module can be is a crate's (walkdir's `walkdir-list/main.rs`,
        # a binary's root, made `walkdir-list::print_paths`), a file so named a crate's root
        ("walkdir-list/main.rs", ""),
        ("walkdir-list/args.rs", "args"),
        ("crates/my-tool/tests/smoke.rs", "tests::smoke"),
        ("tests/run-time-detect.rs", ""),
    ],
)
def test_module_path_is_the_path_after_the_last_src(rel_path, module):
    assert rust.module_path(rel_path) == module


@pytest.mark.parametrize(
    "qualified_name, name, kind, start_line, end_line, parent",
    [
        ("pool::LIMIT", "LIMIT", "constant", 8, 8, None),
        ("pool::COUNTER", "COUNTER", "constant", 9, 9, None),
        ("pool::Pool", "Pool", "struct", 15, 18, None),
        ("pool::Pool::items", "items", "field", 17, 17, "pool::Pool"),
        ("pool::Kind", "Kind", "enum", 21, 21, None),
        ("pool::Kind::Small", "Small", "constant", 21, 21, "pool::Kind"),
        ("pool::Kind::Large", "Large", "constant", 21, 21, "pool::Kind"),
        ("pool::Bits", "Bits", "union", 23, 23, None),
        ("pool::Bits::int", "int", "field", 23, 23, "pool::Bits"),
        ("pool::Bits::float", "float", "field", 23, 23, "pool::Bits"),
        ("pool::Shared", "Shared", "type", 25, 25, None),
        ("pool::Checkout", "Checkout", "trait", 27, 32, None),
        ("pool::Checkout::Item", "Item", "type", 29, 29, "pool::Checkout"),
        ("pool::Checkout::checkout", "checkout", "method", 30, 30, "pool::Checkout"),
        ("pool::Checkout::ready", "ready", "method", 31, 31, "pool::Checkout"),
        ("pool::Pool::new", "new", "method", 35, 37, "pool::Pool"),
        ("pool::Pool::get", "get", "method", 40, 51, "pool::Pool"),
        ("pool::Display for Pool", "Pool", "impl", 54, 60, None),
        ("pool::Pool::fmt", "fmt", "method", 55, 59, "pool::Display for Pool"),
        ("pool::inner", "inner", "module", 62, 65, None),
        ("pool::inner::helper", "helper", "function", 64, 64, "pool::inner"),
        ("pool::sibling", "sibling", "module", 67, 67, None),
        ("pool::pool", "pool", "macro", 69, 74, None),
        ("pool::outer", "outer", "function", 76, 81, None),
        ("pool::outer::nested", "nested", "function", 77, 77, "pool::outer"),
    ],
)
def test_symbols_have_qualified_names_kinds_lines_and_parents(
    extraction, qualified_name, name, kind, start_line, end_line, parent
):
    symbol = next(s for s in extraction.symbols if s.qualified_name == qualified_name)
    assert (symbol.name, symbol.kind, symbol.start_line, symbol.end_line, symbol.parent) == (
        name,
        kind,
        start_line,
        end_line,
        parent,
    )


def test_every_item_is_one_symbol(extraction):
    # The inherent impl shares its qualified name `pool::Pool` with the struct; a struct's and
    # a union's named fields are symbols too (Pool::items, Bits::int, Bits::float).
    assert len(extraction.symbols) == 26
    assert [s.kind for s in extraction.symbols if s.qualified_name == "pool::Pool"] == [
        "struct",
        "impl",
    ]


@pytest.mark.parametrize(
    "qualified_name, kind, signature",
    [
        ("pool::LIMIT", "constant", "pub const LIMIT: usize"),
        ("pool::COUNTER", "constant", "static COUNTER: AtomicUsize"),
        ("pool::Pool", "struct", "pub struct Pool<T>"),
        ("pool::Pool::items", "field", "items: Vec<T>"),
        ("pool::Bits::float", "field", "float: f32"),
        ("pool::Kind", "enum", "pub enum Kind"),
        ("pool::Kind::Large", "constant", "Large(u8)"),
        ("pool::Shared", "type", "pub type Shared<T> = Arc<Mutex<Pool<T>>>"),
        ("pool::Checkout", "trait", "pub trait Checkout: Clone"),
        ("pool::Checkout::Item", "type", "type Item"),
        ("pool::Checkout::checkout", "method", "fn checkout(&self) -> Option<Self::Item>"),
        ("pool::Pool", "impl", "impl<T: Clone> Pool<T>"),
        ("pool::Pool::get", "method", "pub fn get(&self, key: &str) -> Option<&T>"),
        ("pool::Display for Pool", "impl", "impl<T> fmt::Display for Pool<T>"),
        ("pool::inner", "module", "mod inner"),
        ("pool::sibling", "module", "mod sibling"),
        ("pool::pool", "macro", "macro_rules! pool"),
    ],
)
def test_signatures_are_one_line_headers_without_body_or_attributes(
    extraction, qualified_name, kind, signature
):
    symbol = next(
        s for s in extraction.symbols if (s.qualified_name, s.kind) == (qualified_name, kind)
    )
    assert symbol.signature == signature


def test_positions_slice_the_symbol_out_of_the_source(extraction):
    data = SOURCE.encode()
    symbol = next(s for s in extraction.symbols if s.qualified_name == "pool::Pool::get")
    assert data[symbol.start_byte : symbol.end_byte].startswith(b"pub fn get(")
    assert data[symbol.start_byte : symbol.end_byte].endswith(b"self.items.first()\n    }")
    assert (symbol.start_col, symbol.end_col) == (4, 5)


def test_symbols_carry_their_outer_doc_comments(extraction):
    docs = {(s.qualified_name, s.kind): s.doc for s in extraction.symbols}
    assert docs["pool::Pool", "struct"] == "A pool of connections.\n\n    indented example"
    assert docs["pool::Pool::items", "field"] == "The idle connections."
    assert docs["pool::LIMIT", "constant"] == "Upper bound on pool size."
    assert docs["pool::Kind", "enum"] == "Kinds of pool."
    assert docs["pool::Checkout::Item", "type"] == "What a checkout yields."
    assert docs["pool::Pool::get", "method"] == "Get one."
    assert docs["pool::Pool", "impl"] is None
    assert docs["pool::outer", "function"] is None


def test_enum_variants_are_constants_of_their_enum_with_their_docs():
    # `symbols InvalidByte` found nothing: C and C++ enumerators were symbols, Rust's variants
    # were only lines of their enum (base64's DecodeError, a user's first lookup).
    source = textwrap.dedent("""\
        /// Errors.
        pub enum DecodeError {
            /// An invalid byte was found.
            InvalidByte(usize, u8),
            // not a doc
            #[default]
            InvalidLength,
            Named {
                /// Where.
                at: usize,
            },
            Valued = 3,
        }
        fn check(e: DecodeError) {
            if let DecodeError::InvalidByte(at, _) = e {}
        }
    """).encode()
    extraction = rust.extract(source, "src/decode.rs")
    variants = [
        (s.qualified_name, s.start_line, s.end_line, s.signature, s.parent, s.doc)
        for s in extraction.symbols
        if s.kind == "constant"
    ]
    assert variants == [
        ("decode::DecodeError::InvalidByte", 4, 4, "InvalidByte(usize, u8)",
         "decode::DecodeError", "An invalid byte was found."),
        ("decode::DecodeError::InvalidLength", 7, 7, "InvalidLength", "decode::DecodeError", None),
        ("decode::DecodeError::Named", 8, 11, "Named", "decode::DecodeError", None),
        ("decode::DecodeError::Valued", 12, 12, "Valued = 3", "decode::DecodeError", None),
    ]  # fmt: skip
    enum = next(s for s in extraction.symbols if s.kind == "enum")
    assert (enum.doc, enum.end_line) == ("Errors.", 13)
    # A variant named where it is used is a reference to it (the ranking's edge to its enum).
    assert ("InvalidByte", 15, "decode::check") in {
        (r.name, r.line, r.symbol) for r in extraction.references
    }


FIELDS = textwrap.dedent("""\
    /// A JSON deserializer.
    pub struct Deserializer<R> {
        read: R,
        /// How deep the parser may
        /// still recurse.
        #[cfg(not(feature = "unbounded_depth"))]
        #[serde(skip)]
        pub(crate) remaining_depth: u8, // a plain comment
        scratch: Option<(
            u8,
            u16,
        )>,
    }
    pub struct Position(pub usize, usize);
    pub struct Unit;
    mod read {
        pub struct Slice<T> { v: Vec<T> }
        pub union Bits { int: u32, float: f32 }
    }
    pub enum Event {
        Key {
            /// The key.
            name: String,
        },
        End(u8),
    }
    fn local() {
        struct Local { n: [u8; { const N: usize = 2; N }] }
    }
""").encode()


def test_named_fields_are_fields_named_in_their_record():
    # `symbols remaining_depth` found nothing in serde_json (ctags lists 42 fields there), and
    # `outline` showed structs without theirs: C's and C++'s data members were symbols already.
    # A tuple struct's fields have no name: none is a symbol.
    extraction = rust.extract(FIELDS, "src/de.rs")
    fields = [
        (s.qualified_name, s.start_line, s.end_line, s.parent, s.signature, s.doc)
        for s in extraction.symbols
        if s.kind == "field"
    ]
    assert fields == [
        ("de::Deserializer::read", 3, 3, "de::Deserializer", "read: R", None),
        # its own lines, without the attributes above it; no trailing comma
        ("de::Deserializer::remaining_depth", 8, 8, "de::Deserializer",
         "pub(crate) remaining_depth: u8", "How deep the parser may\nstill recurse."),
        ("de::Deserializer::scratch", 9, 12, "de::Deserializer",
         "scratch: Option<(u8, u16)>", None),
        ("de::read::Slice::v", 17, 17, "de::read::Slice", "v: Vec<T>", None),
        ("de::read::Bits::int", 18, 18, "de::read::Bits", "int: u32", None),
        ("de::read::Bits::float", 18, 18, "de::read::Bits", "float: f32", None),
        # a struct-like variant's, inside the variant (the constant `de::Event::Key`)
        ("de::Event::Key::name", 23, 23, "de::Event::Key", "name: String", "The key."),
        ("de::local::Local::n", 28, 28, "de::local::Local",
         "n: [u8; { const N: usize = 2; N }]", None),
    ]  # fmt: skip
    field = next(s for s in extraction.symbols if s.name == "remaining_depth")
    assert FIELDS[field.start_byte : field.end_byte] == b"pub(crate) remaining_depth: u8"
    kinds = {s.qualified_name: s.kind for s in extraction.symbols}
    assert kinds["de::Position"] == kinds["de::Unit"] == "struct"
    assert not any(s.parent in ("de::Position", "de::Event::End") for s in extraction.symbols)
    # What a field's type holds is its record's, as before: the const in an array's length.
    assert next(s for s in extraction.symbols if s.name == "N").parent == "de::local::Local"


def test_a_field_owns_no_comment_string_nor_reference():
    # Its record's chunk and the ranking's graph read them as its record's, as C's fields.
    extraction = rust.extract(FIELDS, "src/de.rs")
    texts = [(t.element_type, t.content, t.symbol_name) for t in extraction.texts]
    assert texts == [
        ("docstring", "A JSON deserializer.", "de::Deserializer"),
        ("docstring", "How deep the parser may\nstill recurse.", "de::Deserializer"),
        ("string_literal", "unbounded_depth", "de::Deserializer"),
        ("comment", "a plain comment", "de::Deserializer"),
        ("docstring", "The key.", "de::Event::Key"),
    ]
    owners = {(r.name, r.symbol) for r in extraction.references}
    assert owners >= {
        ("R", "de::Deserializer"),
        ("Option", "de::Deserializer"),
        ("Vec", "de::read::Slice"),
        ("String", "de::Event::Key"),
    }
    assert not {symbol for _, symbol in owners} & {
        s.qualified_name for s in extraction.symbols if s.kind == "field"
    }


@pytest.mark.parametrize(
    "element_type, content, line, end_line, symbol_name",
    [
        ("docstring", "Connection pools.\nSecond line of crate docs.", 1, 2, "pool"),
        ("docstring", "Upper bound on pool size.", 7, 7, "pool::LIMIT"),
        ("docstring", "A pool of connections.\n\n    indented example", 11, 13, "pool::Pool"),
        ("docstring", "The idle connections.", 16, 16, "pool::Pool"),  # a field: its struct
        ("docstring", "Kinds of pool.", 20, 20, "pool::Kind"),
        ("docstring", "What a checkout yields.", 28, 28, "pool::Checkout::Item"),
        ("docstring", "Get one.", 39, 39, "pool::Pool::get"),
        ("comment", "look it up\nin the items", 44, 45, "pool::Pool::get"),
        ("string_literal", 'raw "quoted"', 46, 46, "pool::Pool::get"),
        ("string_literal", "bytes", 47, 47, "pool::Pool::get"),
        ("string_literal", "key = {}", 49, 49, "pool::Pool::get"),
        ("comment", "block\ncomment", 56, 57, "pool::Pool::fmt"),
        ("string_literal", "pool", 58, 58, "pool::Pool::fmt"),
        ("docstring", "Inner module docs.", 63, 63, "pool::inner"),
        ("comment", "inside a macro", 71, 71, "pool::pool"),
        ("comment", "four slashes: a plain comment", 78, 78, "pool::outer"),
        ("string_literal", "multi\nline", 79, 80, "pool::outer"),
    ],
)
def test_text_elements_lose_their_delimiters_and_keep_their_place(
    extraction, element_type, content, line, end_line, symbol_name
):
    found = [
        (t.element_type, t.content, t.line, t.end_line, t.symbol_name) for t in extraction.texts
    ]
    assert (element_type, content, line, end_line, symbol_name) in found


def test_every_element_is_listed_once_in_source_order(extraction):
    assert len(extraction.texts) == 17  # the char literal 'x' is not a string
    assert [t.line for t in extraction.texts] == sorted(t.line for t in extraction.texts)


def test_references_name_used_identifiers_but_not_definitions(extraction):
    found = {(r.name, r.line, r.symbol) for r in extraction.references}
    for expected in [
        ("Mutex", 5, None),  # `use` path
        ("AtomicUsize", 9, "pool::COUNTER"),
        ("new", 9, "pool::COUNTER"),  # `AtomicUsize::new(0)`
        ("Vec", 17, "pool::Pool"),
        ("Clone", 27, "pool::Checkout"),
        ("Pool", 34, "pool::Pool"),  # an impl's self type names the struct
        ("Display", 54, "pool::Display for Pool"),
        ("println", 49, "pool::Pool::get"),  # macro
        ("first", 50, "pool::Pool::get"),  # method call
        ("items", 50, "pool::Pool::get"),  # a field read: `self.items`
        ("Formatter", 55, "pool::Pool::fmt"),
        ("write", 58, "pool::Pool::fmt"),
        ("new", 72, "pool::pool"),  # `Pool::new()` inside macro_rules
    ]:
        assert expected in found
    names = {name for name, _, _ in found}
    assert not names & {"LIMIT", "get", "helper", "outer", "nested", "Kind", "Bits", "Shared"}
    assert len(found) == len(extraction.references)  # deduplicated


def test_the_same_source_gives_the_same_extraction():
    # tree-sitter's captures come in an order that changes with every parse.
    first = rust.extract(SOURCE.encode(), "src/pool.rs")
    assert all(rust.extract(SOURCE.encode(), "src/pool.rs") == first for _ in range(5))
    assert [r.line for r in first.references] == sorted(r.line for r in first.references)


def test_a_crate_root_has_no_module_prefix():
    source = b"//! The crate.\npub struct Pool;\nimpl Pool { pub fn get(&self) {} }\n"
    result = rust.extract(source, "pool/src/lib.rs")
    assert [s.qualified_name for s in result.symbols] == ["Pool", "Pool", "Pool::get"]
    assert result.texts[0].symbol_name is None  # crate docs at the root


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            b"/// a\n/// b\n\n/// c\nfn f() {}",
            [("docstring", "a\nb", 1, 2), ("docstring", "c", 4, 4)],
        ),
        (b"// a\n    // b\nlet x;\n", [("comment", "a\nb", 1, 2)]),
        (
            b"// a\n/// b\n//! c\n",
            [("comment", "a", 1, 1), ("docstring", "b", 2, 2), ("docstring", "c", 3, 3)],
        ),
        # A comment after code is about its line: it stays out of the run below it.
        (b"x(); // a\n// b\n// c\n", [("comment", "a", 1, 1), ("comment", "b\nc", 2, 3)]),
        (
            b"//// a\n/***\n b */ /**/\n",
            [("comment", "a", 1, 1), ("comment", "**\nb", 2, 3), ("comment", "", 3, 3)],
        ),
        (b"/* a /* nested */ b */", [("comment", "a /* nested */ b", 1, 1)]),
        (
            b"/*! inner */ /** outer */",
            [("docstring", "inner", 1, 1), ("docstring", "outer", 1, 1)],
        ),
        (b"/**\n * One.\n *\n * Two.\n */\nfn f() {}", [("docstring", "One.\n\nTwo.", 1, 5)]),
        (b"///   indented\n///   both\n", [("docstring", "indented\nboth", 1, 2)]),
        (b"//\n", [("comment", "", 1, 1)]),
    ],
)
def test_comment_runs_and_markers(source, expected):
    texts = rust.extract(source, "src/lib.rs").texts
    assert [(t.element_type, t.content, t.line, t.end_line) for t in texts] == expected


@pytest.mark.parametrize(
    "literal, content",
    [
        (rb'"plain \"escaped\" \n"', r"plain \"escaped\" \n"),
        (rb'r"raw \d"', r"raw \d"),
        (rb'r##"hash "# inside"##', 'hash "# inside'),
        (rb'b"bytes"', "bytes"),
        (rb'br#"raw bytes"#', "raw bytes"),
        (rb'c"c string"', "c string"),
        (rb'cr"raw c"', "raw c"),
        (rb'""', ""),
        (b'"caf\xc3\xa9"', "café"),
    ],
)
def test_string_literals_keep_their_text_as_written(literal, content):
    texts = rust.extract(b"fn f() { let s = " + literal + b"; }", "src/lib.rs").texts
    assert [(t.element_type, t.content, t.symbol_name) for t in texts] == [
        ("string_literal", content, "f")
    ]


@pytest.mark.parametrize(
    "literal, content",
    [
        # env_logger's message: the line's `\`, its newline and the next line's indent go
        (b"\"invalid logging spec '{}', \\\n             ignoring it\"",
         "invalid logging spec '{}', ignoring it"),
        (b'b"bytes \\\n    joined"', "bytes joined"),
        (b'c"c \\\n    joined"', "c joined"),
        (b'"crlf \\\r\n\tjoined"', "crlf joined"),
        (b'"blank lines \\\n\n    skipped too"', "blank lines skipped too"),
        (b'"two \\\n  continued \\\n  lines"', "two continued lines"),
        # an escaped backslash before a newline continues nothing; other escapes stay
        (b'"kept \\\\\n  newline \\n \\" "', 'kept \\\\\n  newline \\n \\" '),
        # raw strings have no escapes
        (b'r"raw \\\n    kept"', "raw \\\n    kept"),
        (b'br#"raw \\\n    kept"#', "raw \\\n    kept"),
    ],
)  # fmt: skip
def test_a_line_continuation_in_a_string_is_dropped_as_rust_drops_it(literal, content):
    source = b"fn f() {\n    let s = " + literal + b";\n}\n"
    texts = rust.extract(source, "src/lib.rs").texts
    assert [(t.content, t.line, t.end_line) for t in texts] == [
        (content, 2, 2 + literal.count(b"\n"))
    ]


def test_char_literals_and_lifetimes_are_not_strings():
    source = b"fn f<'a>(x: &'a str) -> char { let q = '\"'; b'\"'; 'x' }"
    assert rust.extract(source, "src/lib.rs").texts == []


def test_strings_and_comments_inside_macro_calls_are_found():
    source = b'fn f() { assert_eq!(a, "first", /* why */ "second"); format!("{x}"); }'
    texts = rust.extract(source, "src/lib.rs").texts
    assert [t.content for t in texts] == ["first", "why", "second", "{x}"]


@pytest.mark.parametrize(
    "source, qualified_name, kind, doc",
    [
        (
            b'/// Doc.\n#[inline]\n// note\n#[cfg(all(unix, x = "]"))]\nfn f() {}',
            "f",
            "function",
            "Doc.",
        ),
        (b"/// One.\n#[attr]\n/// Two.\nstruct S;", "S", "struct", "One.\nTwo."),
        (b"/// Doc.\nimpl<T> From<T> for io::Wrap<T> {}", "From for io::Wrap", "impl", "Doc."),
        (b"/// Doc.\n#[a(b(c(d)))]\nunion U { x: u8 }", "U", "union", "Doc."),
        (b"/// Not for f.\nuse x;\nfn f() {}", "f", "function", None),
        (b'/// Doc.\nextern "C" { fn ext(); }', "ext", "function", None),
    ],
)
def test_outer_docs_attach_through_attributes_and_comments(source, qualified_name, kind, doc):
    symbols = rust.extract(source, "src/lib.rs").symbols
    assert next(s for s in symbols if s.qualified_name == qualified_name).doc == doc
    assert next(s for s in symbols if s.qualified_name == qualified_name).kind == kind


def test_doc_comments_apart_from_their_item_by_plain_comments_all_document_it():
    # Each doc comment resolves through the next one: linear, however many there are.
    source = b"/// a\n// plain\n" * 1000 + b"#[inline]\nfn f() {}"
    (symbol,) = rust.extract(source, "src/lib.rs").symbols
    assert symbol.doc == "\n".join(["a"] * 1000)


def test_impls_of_non_path_types_keep_the_type_text():
    source = (
        b"unsafe impl<'a, T: ?Sized> Sync for &'a [T] {}\nimpl<T> Trait for Box<dyn Fn() -> T> {}"
    )
    symbols = rust.extract(source, "src/lib.rs").symbols
    assert [(s.name, s.qualified_name) for s in symbols] == [
        ("[T]", "Sync for &'a [T]"),  # named by the type the reference is to
        ("Box", "Trait for Box"),
    ]


def test_an_impl_for_a_reference_puts_its_items_under_the_type_it_points_to():
    # regex-syntax: `impl<'a> IntoIterator for &'a Utf8Sequence` named its method
    # `utf8::&'a Utf8Sequence::into_iter`; rustdoc lists it under Utf8Sequence. The impl keeps
    # its type as written.
    source = (
        b"impl<'a> IntoIterator for &'a Utf8Sequence {\n    fn into_iter(self) {}\n}\n"
        b"impl<'a, W: Write> Write for &'a mut Sink<W> {\n    fn flush(&mut self) {}\n}\n"
        b"impl Send for *const Raw {\n    fn send() {}\n}\n"
    )
    symbols = rust.extract(source, "src/utf8.rs").symbols
    assert [(s.kind, s.qualified_name) for s in symbols] == [
        ("impl", "utf8::IntoIterator for &'a Utf8Sequence"),
        ("method", "utf8::Utf8Sequence::into_iter"),
        ("impl", "utf8::Write for &'a mut Sink"),
        ("method", "utf8::Sink::flush"),
        ("impl", "utf8::Send for *const Raw"),
        ("method", "utf8::Raw::send"),
    ]
    # and is named by that type (`symbols Map` listed indexmap's 22 such impls as `&'a Map`)
    assert [s.name for s in symbols if s.kind == "impl"] == ["Utf8Sequence", "Sink", "Raw"]


def test_an_impl_for_a_type_written_with_a_path_puts_its_items_under_that_path():
    # walkdir's error.rs: `impl From<Error> for io::Error` was `From for Error` with a method
    # `Error::from`, the file's own Error's; `show io::Error::from` found nothing.
    source = (
        b"use std::io;\npub struct Error;\n"
        b"impl From<Error> for io::Error {\n    fn from(e: Error) -> io::Error { todo!() }\n}\n"
        b"impl<T> fmt::Display for crate::pool::Pool<T> {\n    fn fmt(&self) {}\n}\n"
        b"impl super::Walker {\n    fn new() -> Self { todo!() }\n}\n"
        b"impl fmt::Debug for Error {\n    fn fmt(&self) {}\n}\n"
    )
    symbols = rust.extract(source, "src/walk/error.rs").symbols
    assert [(s.kind, s.name, s.qualified_name, s.parent) for s in symbols] == [
        ("struct", "Error", "walk::error::Error", None),
        ("impl", "Error", "walk::error::From for io::Error", None),
        ("method", "from", "io::Error::from", "walk::error::From for io::Error"),
        ("impl", "Pool", "walk::error::Display for crate::pool::Pool", None),
        ("method", "fmt", "pool::Pool::fmt", "walk::error::Display for crate::pool::Pool"),
        ("impl", "Walker", "walk::Walker", None),  # an inherent impl: named as its type
        ("method", "new", "walk::Walker::new", "walk::Walker"),
        ("impl", "Error", "walk::error::Debug for Error", None),  # a type's own name: unchanged
        ("method", "fmt", "walk::error::Error::fmt", "walk::error::Debug for Error"),
    ]


def test_syntax_errors_keep_what_was_found():
    result = rust.extract(b"fn good() {}\nfn broken( {\n/// Doc.\nstruct After;\n", "src/lib.rs")
    assert result.status == "ok"
    assert result.note == "syntax errors"
    assert "good" in {s.name for s in result.symbols}
    assert rust.extract(b"fn good() {}\n", "src/lib.rs").note is None


@pytest.mark.parametrize(
    "source",
    [
        b"",
        b"\xff\xfe\x00garbage\x00",
        b'fn f() { let s = "unterminated',
        b"/* unterminated /* nested",
        b'fn f() { let s = r###"open',
        b"}}}}{{{{" * 100,
        b"impl for {} impl<T> {} mod ; struct ; fn ( ) -> {}",
        b"/// dangling doc at the end",
        b"#[attr(((((",
        b"\x00" * 100,
        b"'\\u{}'" * 10,
    ],
)
def test_nothing_raises_on_garbage(source):
    result = rust.extract(source, "src/lib.rs")
    assert result.status == "ok"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_nothing_raises_on_random_bytes(source):
    rust.extract(source, "src/x.rs")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(SOURCE)), st.integers(0, 40), st.binary(max_size=8))
def test_nothing_raises_on_damaged_rust(position, cut, insert):
    data = SOURCE.encode()
    damaged = data[:position] + insert + data[position + cut :]
    result = rust.extract(damaged, "src/pool.rs")
    lines = damaged.count(b"\n") + 1
    assert all(1 <= s.start_line <= s.end_line <= lines for s in result.symbols)
    assert all(1 <= t.line <= t.end_line <= lines for t in result.texts)
    assert all(1 <= r.line <= lines for r in result.references)


def test_queries_compile():
    folder = resources.files("repomap.extractors").joinpath("queries", "rust")
    for purpose in ("tags", "text"):
        Query(language("rust"), folder.joinpath(f"{purpose}.scm").read_text())


def test_references_come_once_each_in_the_order_of_their_first_use():
    source = b"fn f() { zeta(alpha(Mid::new())); alpha(); zeta::<u8>(); }\nfn g() { alpha(); }\n"
    found = [(r.name, r.line, r.symbol) for r in rust.extract(source, "src/lib.rs").references]
    assert found == [
        ("zeta", 1, "f"),
        ("alpha", 1, "f"),
        ("Mid", 1, "f"),
        ("new", 1, "f"),
        ("alpha", 2, "g"),
    ]


def test_a_field_used_is_a_reference_as_c_s_member_uses_are():
    # `refs remaining_depth` found no use: only method calls `a.b()` were references.
    source = textwrap.dedent("""\
        struct De { remaining_depth: u8, pair: (u8, u8) }
        impl De {
            fn recurse(&mut self) -> bool {
                self.remaining_depth -= 1;
                let first = self.pair.0;
                self.remaining_depth == 0 && self.scratch().is_empty()
            }
            fn new() -> Self { De { remaining_depth: 128, pair: (0, 0) } }
        }
    """).encode()
    found = [(r.name, r.line, r.symbol) for r in rust.extract(source, "src/de.rs").references]
    uses = [use for use in found if use[0] in ("remaining_depth", "pair", "scratch", "is_empty")]
    assert uses == [
        ("remaining_depth", 4, "de::De::recurse"),  # written
        ("pair", 5, "de::De::recurse"),  # `.0` has no name: no use of it
        ("remaining_depth", 6, "de::De::recurse"),  # read, once per line
        ("scratch", 6, "de::De::recurse"),  # method calls as before
        ("is_empty", 6, "de::De::recurse"),
        # a struct literal names its fields too: a rename of the field changes that line (a
        # review: `refs remaining_depth` missed `De { remaining_depth: 128 }`)
        ("remaining_depth", 8, "de::De::new"),
        ("pair", 8, "de::De::new"),
    ]


def test_fields_named_in_a_pattern_or_a_shorthand_literal_are_references():
    source = textwrap.dedent("""\
        fn make(items: Vec<u8>, p: Pool) -> Pool {
            let Pool { depth, .. } = p;
            let Pool { items: old, .. } = q;
            Pool { depth, items }
        }
    """).encode()
    found = [(r.name, r.line) for r in rust.extract(source, "src/a.rs").references]
    assert [use for use in found if use[0] in ("depth", "items")] == [
        ("depth", 2), ("items", 3), ("depth", 4), ("items", 4)
    ]  # fmt: skip


MACRO_ITEMS = textwrap.dedent("""\
    mod addr;
    cfg_net! {
        /// A TCP stream.
        pub struct TcpStream { io: u8 }
        mod lookup_host;
    }
    pub struct Runtime;
    impl Runtime {
        pub fn handle(&self) {}
        cfg_not_wasi! {
            /// Creates a runtime.
            pub fn new() -> Runtime { Runtime }
        }
    }
    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            mod unix;
            pub use self::unix::*;
        } else if #[cfg(windows)] {
            mod windows;
        } else {
            pub fn unsupported() -> &'static str { "none" }
        }
    }
    from_transmute! { unsafe u32x4 => __m128i }
    bitflags! { pub struct Flags: u32 { const A = 1; } }
    fn body() { thread_local! { static DEPTH: u8 = 0; } }
""").encode()


def test_items_inside_an_item_level_macro_call_are_symbols_where_they_are_written():
    # Crates gate items behind their own macros (tokio: cfg_net!, cfg_rt!; std: cfg_if!); the
    # parser read such a body as a token tree, so TcpStream and Runtime::new were not symbols.
    extraction = rust.extract(MACRO_ITEMS, "src/net/mod.rs")
    rows = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in extraction.symbols]
    assert rows == [
        ("net::addr", "module", 1, 1),
        ("net::TcpStream", "struct", 4, 4),
        ("net::TcpStream::io", "field", 4, 4),
        ("net::lookup_host", "module", 5, 5),
        ("net::Runtime", "struct", 7, 7),
        ("net::Runtime", "impl", 8, 14),
        ("net::Runtime::handle", "method", 9, 9),
        ("net::Runtime::new", "method", 12, 12),
        ("net::unix", "module", 17, 17),  # every branch of a cfg_if, as C's #if branches
        ("net::windows", "module", 20, 20),
        ("net::unsupported", "function", 22, 22),
        ("net::Flags", "struct", 26, 26),  # bitflags!: the struct, not its flags
        ("net::body", "function", 27, 27),  # a function body's macro calls stay calls
    ]
    found = {s.qualified_name: s for s in extraction.symbols if s.kind != "impl"}
    assert found["net::TcpStream"].doc == "A TCP stream."
    assert found["net::Runtime::new"].doc == "Creates a runtime."
    assert found["net::Runtime::new"].parent == "net::Runtime"
    assert found["net::Runtime::new"].signature == "pub fn new() -> Runtime"
    # Offsets are the file's own: the symbol's bytes are its source text.
    new = found["net::Runtime::new"]
    assert MACRO_ITEMS[new.start_byte : new.end_byte].startswith(b"pub fn new()")
    # Bodies that are not items stay token trees: no symbol from them, no syntax error noted.
    assert not {"u32x4", "__m128i", "A"} & {s.name for s in extraction.symbols}
    assert extraction.note is None
    # The text inside is found once, as before: the string of the cfg_if branch.
    assert [t.content for t in extraction.texts if t.element_type == "string_literal"] == ["none"]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(MACRO_ITEMS)), st.integers(0, 40), st.binary(max_size=8))
def test_damaged_macro_blocks_never_raise_and_keep_the_files_own_offsets(position, cut, insert):
    damaged = MACRO_ITEMS[:position] + insert + MACRO_ITEMS[position + cut :]
    result = rust.extract(damaged, "src/net/mod.rs")
    lines = damaged.count(b"\n") + 1
    for symbol in result.symbols:
        assert 1 <= symbol.start_line <= symbol.end_line <= lines
        assert damaged[symbol.start_byte : symbol.end_byte].count(b"\n") == (
            symbol.end_line - symbol.start_line
        )


def test_a_bitflags_struct_is_a_struct_and_its_flags_keep_their_docs_strings_and_calls():
    # bitflags! (and nix's libc_bitflags!) define the crate's flag types: `pub struct OFlags:
    # u32 { const RDONLY = 0; }` is no Rust the parser reads, so OFlag, CloneFlags... were not
    # symbols (nix 0.26: 34 structs).
    source = textwrap.dedent("""\
        bitflags! {
            /// Flags for open(2).
            #[derive(Default)]
            pub struct OFlags: u32 {
                /// Read only.
                const RDONLY = 0;
                #[cfg(target_os = "linux")]
                const DIRECT = libc::O_DIRECT;
                const RW = Self::RDONLY.bits() | encode(2);
            }
        }
        impl OFlags {
            pub fn is_read(&self) -> bool { true }
        }
    """).encode()
    extraction = rust.extract(source, "src/fcntl.rs")
    rows = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in extraction.symbols]
    assert rows == [
        ("fcntl::OFlags", "struct", 4, 10),
        ("fcntl::OFlags", "impl", 12, 14),
        ("fcntl::OFlags::is_read", "method", 13, 13),
    ]
    flags = extraction.symbols[0]
    assert flags.doc == "Flags for open(2)." and flags.signature == "pub struct OFlags: u32"
    texts = [(t.element_type, t.content, t.symbol_name) for t in extraction.texts]
    assert ("docstring", "Read only.", "fcntl::OFlags") in texts
    assert ("string_literal", "linux", "fcntl::OFlags") in texts
    assert ("encode", 9, "fcntl::OFlags") in {
        (r.name, r.line, r.symbol) for r in extraction.references
    }
    assert extraction.note is None


def test_a_malformed_macro_body_does_not_hide_the_well_formed_ones_after_it():
    # hyper's ffi_fn! { fn f() { .. } ?= default }: one call's body is no Rust, and the parser's
    # recovery showed its error inside the next call, which was then kept as a token tree too
    # (hyper gained 30 functions); thread_local!'s last item may go without its `;` (Rust std's
    # OUTPUT_CAPTURE ended 14 lines late, inside the next static).
    source = textwrap.dedent("""\
        ffi_fn! {
            /// Returns a new body.
            fn hyper_body_new() -> *mut hyper_body {
                Box::into_raw(Box::new(hyper_body(Body::empty())))
            } ?= ptr::null_mut()
        }

        ffi_fn! {
            /// Free a body.
            fn hyper_body_free(body: *mut hyper_body) {
                drop(body);
            }
        }

        thread_local! {
            static OUTPUT_CAPTURE: Cell<Option<LocalStream>> = {
                Cell::new(None)
            }
        }

        static OUTPUT_CAPTURE_USED: AtomicBool = AtomicBool::new(false);
    """).encode()
    extraction = rust.extract(source, "src/ffi/body.rs")
    rows = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in extraction.symbols]
    assert rows == [
        ("ffi::body::hyper_body_free", "function", 10, 12),
        ("ffi::body::OUTPUT_CAPTURE", "constant", 16, 19),  # to the call's brace, its end
        ("ffi::body::OUTPUT_CAPTURE_USED", "constant", 21, 21),
    ]
    assert extraction.symbols[0].doc == "Free a body."
    assert extraction.note is None  # the malformed call stays a call: no syntax error
