"""A definition's chunk holds the plain comment right above it; include guards are no chunks.

The chunks are made by the real extractors from real source; the search runs through the real
CLI in a subprocess over a real index in a temp dir.
"""

from __future__ import annotations

import json
import subprocess
import sys
from operator import attrgetter
from pathlib import Path

from repomap.extractors import extract

from repomap import store
from repomap.index.chunks import ChunkRow, code_chunks

QUEUE_H = b"""#ifndef SPDLOG_QUEUE_H
#define SPDLOG_QUEUE_H

#define QUEUE_MAX_ITEMS 1024

// A queue shared by the threads of a pool.
template <typename T>
class blocking_queue {
public:
    // try to enqueue and block if no room left
    void enqueue(T &&item) { wait_for_room(); push(item); }

    // enqueue immediately. overrun the oldest message in the queue if no room left.
    void enqueue_nowait(T &&item) { push(item); }

    int size_; // the number of items held
    void clear() { size_ = 0; }

private:
    void push(T &item) { size_ += 1; }
    void wait_for_room() {}
};

#endif // SPDLOG_QUEUE_H
"""

WORKER_PY = b'''import os


class Worker:
    """Runs jobs."""

    # Jobs that failed are tried again at most three times, then dropped.
    def retry(self, job):
        return job.run()

    def stop(self):
        """Stop after the current job."""
        # flush first
        return None
        # the worker's thread ends here

    def pause(self):
        return None
'''


def chunks_of(language: str, path: str, source: bytes) -> dict[str, ChunkRow]:
    extraction = extract(language, source, path)
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extraction.symbols]
    texts = [(t.element_type, t.content, t.line, t.end_line, t.symbol_name, "")
             for t in extraction.texts]  # fmt: skip
    return {chunk.name: chunk for chunk in code_chunks(path, source, rows, texts)}


def test_a_cpp_method_holds_the_comment_above_it_and_its_class_does_not() -> None:
    chunks = chunks_of("cpp", "queue.h", QUEUE_H)
    nowait = chunks["blocking_queue::enqueue_nowait"]
    assert "overrun the oldest message" in nowait.head
    assert "block if no room left" in chunks["blocking_queue::enqueue"].head
    assert "oldest" not in chunks["blocking_queue"].head  # moved, not copied
    assert "A queue shared by the threads" in chunks["blocking_queue"].head  # across `template`


def test_a_comment_trailing_a_statement_is_not_the_next_definitions() -> None:
    chunks = chunks_of("cpp", "queue.h", QUEUE_H)
    assert "number of items" not in chunks["blocking_queue::clear"].head


def test_a_python_method_holds_the_comment_above_it_and_keeps_its_docstring() -> None:
    chunks = chunks_of("python", "worker.py", WORKER_PY)
    assert "tried again at most three times" in chunks["Worker.retry"].head
    assert "tried again" not in chunks["Worker"].head
    stop = chunks["Worker.stop"].head
    assert "Stop after the current job." in stop and "flush first" in stop  # inner comments stay
    assert "thread ends here" not in chunks["Worker.pause"].head  # the end of stop's body


def test_a_python_definition_with_a_docstring_holds_the_comment_above_it_too() -> None:
    # marshmallow's `_get_fields_by_mro`: the `#` comment above a documented `def` was the
    # module's, and a search by its words found the module and not the function.
    source = (
        b"import time\n\n\n# Retries with exponential backoff while the server answers 503\n"
        b'def fetch(url):\n    """Get a URL."""\n    return url\n'
    )
    chunks = chunks_of("python", "net.py", source)
    assert chunks["fetch"].head == (
        "def fetch(url)\nGet a URL.\nRetries with exponential backoff while the server answers 503"
    )
    assert "backoff" not in chunks["net.py"].head


def test_a_comment_above_an_include_or_an_import_is_not_the_next_definitions() -> None:
    c_source = (
        b"/* Copyright the authors. */\n#include <stdio.h>\nint answer(void) { return 42; }\n"
    )
    assert "Copyright" not in chunks_of("c", "answer.c", c_source)["answer"].head
    py_source = b"# Copyright the authors.\nimport os\ndef answer():\n    return 42\n"
    assert "Copyright" not in chunks_of("python", "answer.py", py_source)["answer"].head
    decorated = b"# Cached: computed once.\n@cache\ndef answer():\n    return 42\n"
    assert "computed once" in chunks_of("python", "answer.py", decorated)["answer"].head


def test_the_comment_a_file_begins_with_is_the_files_unless_a_definition_follows_it() -> None:
    # Lua's lgc.c begins `/* $Id: lgc.c $ Garbage Collector */`, a blank line, `#define lgc_c`:
    # the macro took the file's description, and ranked first for any question about it.
    header = b"/*\n** $Id: lgc.c $\n** Garbage Collector\n*/\n\n#define lgc_c\n"
    body = b"\n/* Mark an object gray. */\nstatic void mark(int o) { (void)o; }\n"
    chunks = chunks_of("c", "lgc.c", header + body)
    assert "Garbage Collector" not in chunks["lgc_c"].head
    assert "Garbage Collector" in chunks["lgc.c"].head + chunks["lgc.c"].body  # the file's chunk
    assert "Mark an object gray." in chunks["mark"].head
    # A licence, then the function's own comment right above it: only the latter is its.
    licensed = b"/* Licensed under the MIT licence. */\n/* Answers. */\nint answer(void);\n"
    head = chunks_of("c", "answer.h", licensed)["answer"].head
    assert "Answers." in head and "licence" not in head
    # A file that begins with the definition's comment, the definition right below it.
    direct = b"// Computes the checksum of a frame.\nunsigned checksum(const char *f);\n"
    assert "checksum of a frame" in chunks_of("c", "sum.h", direct)["checksum"].head


def test_an_include_guard_is_no_chunk_and_a_valued_macro_is_one() -> None:
    chunks = chunks_of("cpp", "queue.h", QUEUE_H)
    assert "SPDLOG_QUEUE_H" not in chunks
    assert "QUEUE_MAX_ITEMS" in chunks


def test_a_question_in_a_methods_comment_finds_the_method_before_its_class(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "queue.h").write_bytes(QUEUE_H)
    (root / "pool.h").write_bytes(
        b"#ifndef POOL_H\n#define POOL_H\n"
        b"/// A pool of threads that take messages from a queue.\n"
        b"class thread_pool {\npublic:\n    void post(int message);\n};\n#endif\n"
    )
    run = [sys.executable, "-m", "repomap.cli"]
    done = subprocess.run([*run, "index", str(root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    question = "what happens to the oldest message when the queue has no room?"
    done = subprocess.run(
        [*run, "search", question, "--mode", "lexical", "--json", "--root", str(root)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = [hit["name"] for hit in json.loads(done.stdout)["results"]]
    assert names[0] == "blocking_queue::enqueue_nowait"
    assert not any(name.endswith("_H") for name in names)


def test_a_deleted_or_defaulted_cpp_function_is_no_chunk_and_a_defined_one_is() -> None:
    source = (
        b"class MemTable {\n public:\n  MemTable();\n"
        b"  MemTable(const MemTable&) = delete;\n"
        b"  MemTable& operator=(const MemTable&) = delete;  // not copyable\n"
        b"  ~MemTable() = default;\n"
        b"  int Flush() { return write_level0(); }\n"
        b"};\n"
        b"MemTable::MemTable() { refs_ = 0; }\n"
    )
    extraction = extract("cpp", source, "memtable.h")
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extraction.symbols]
    texts = [(t.element_type, t.content, t.line, t.end_line, t.symbol_name, "")
             for t in extraction.texts]  # fmt: skip
    chunks = code_chunks("memtable.h", source, rows, texts)
    named = [(c.name, c.start_line) for c in chunks if c.kind in ("function", "method")]
    assert sorted(named) == [("MemTable::Flush", 7), ("MemTable::MemTable", 9)]
    assert "MemTable" in {c.name for c in chunks}  # the class keeps its members' signatures


def _heads(language: str, path: str, source: bytes) -> list[tuple[str, int, str]]:
    extraction = extract(language, source, path)
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extraction.symbols]
    texts = [(t.element_type, t.content, t.line, t.end_line, t.symbol_name, "")
             for t in extraction.texts]  # fmt: skip
    return [(c.name, c.start_line, c.head) for c in code_chunks(path, source, rows, texts)]


def test_definitions_of_one_name_keep_their_own_comments() -> None:
    # A property's getter and setter share a qualified name, as do Rust's cfg variants and C++
    # overloads; each comment inside one of them was in every one's chunk.
    python = (
        b"class Box:\n"
        b"    @property\n"
        b"    def size(self):\n"
        b"        # measured in pixels, rounded down\n"
        b"        return self._size\n"
        b"\n"
        b"    @size.setter\n"
        b"    def size(self, value):\n"
        b"        # negative sizes are clamped to zero\n"
        b"        self._size = max(value, 0)\n"
    )
    heads = {line: head for name, line, head in _heads("python", "box.py", python)
             if name == "Box.size"}  # fmt: skip
    assert len(heads) == 2
    getter, setter = heads[min(heads)], heads[max(heads)]
    assert "pixels" in getter and "clamped" not in getter
    assert "clamped" in setter and "pixels" not in setter
    rust = (
        b'#[cfg(unix)]\nfn home() -> String {\n    // read $HOME first\n    env("HOME")\n}\n'
        b"#[cfg(windows)]\nfn home() -> String {\n    // ask the shell for the profile folder\n"
        b"    profile()\n}\n"
    )
    cpp = (
        b"int area(int side) {\n  // a square\n  return side * side;\n}\n"
        b"int area(int w, int h) {\n  // a rectangle\n  return w * h;\n}\n"
    )
    for language, path, source, name, first, second in (
        ("rust", "home.rs", rust, "home::home", "$HOME", "profile folder"),
        ("cpp", "area.cc", cpp, "area", "a square", "a rectangle"),
    ):
        one, other = sorted((line, head) for found, line, head in _heads(language, path, source)
                            if found == name)  # fmt: skip
        assert first in one[1] and second not in one[1]
        assert second in other[1] and first not in other[1]


def test_a_tools_pragma_is_in_no_chunk_and_a_readers_comment_is() -> None:
    python = (
        b"def view(**kwargs):\n"
        b"    # the class is made once per request\n"
        b"    self = view.view_class()  # type: ignore[attr-defined]\n"
        b"    return self.dispatch(**kwargs)  # noqa: E501\n"
        b"\n"
        b"def parse(text):  # pragma: no cover\n"
        b"    # fmt: off\n"
        b"    return text  # type: str\n"
    )
    heads = {name: head for name, _, head in _heads("python", "views.py", python)}
    assert "made once per request" in heads["view"]
    assert "ignore" not in heads["view"] and "noqa" not in heads["view"]
    assert "cover" not in heads["parse"] and "fmt" not in heads["parse"]
    assert "type: str" in heads["parse"]  # a type comment says what the value is
    cpp = (
        b"int scale(int x) {\n"
        b"  // NOLINTNEXTLINE(readability-magic-numbers)\n"
        b"  return x * 3;  // three lanes per unit\n}\n"
    )
    head = {name: head for name, _, head in _heads("cpp", "scale.cc", cpp)}["scale"]
    assert "three lanes" in head and "NOLINT" not in head


def test_an_overload_stub_is_no_chunk_and_the_implementation_is() -> None:
    # jinja2's sync_do_map and pluggy's HookimplMarker.__call__: two `@overload` signatures
    # above the function that does the work were answers of their own, ranked above it.
    source = (
        b"import typing\n"
        b"from typing import overload\n\n"
        b"@typing.overload\n"
        b"def apply(value: Widgetzz) -> Widgetzz: ...\n\n"
        b"@overload  # noqa: F811\n"
        b"def apply(value: str) -> str: ...\n\n"
        b"@cached\n"
        b"def apply(value):\n"
        b'    """Apply the filter to a value."""\n'
        b"    return value\n\n"
        b"class Marker:\n"
        b"    @t.overload\n"
        b"    @staticmethod\n"
        b"    def mark(x: Gadgetzz) -> Gadgetzz: ...\n"
        b"    @staticmethod\n"
        b"    def mark(x):\n"
        b"        return x\n"
    )
    found = _heads("python", "filters.py", source)
    chunks = [(name, line) for name, line, _ in found]
    assert ("apply", 11) in chunks and ("Marker.mark", 20) in chunks
    assert not {("apply", 5), ("apply", 8), ("Marker.mark", 18)} & set(chunks)
    module = chunks_of("python", "filters.py", source)["filters.py"]
    # the stubs' lines, a method's too, are no module-level code either
    assert "widgetzz" not in module.body and "gadgetzz" not in module.body


def test_a_pragma_line_leaves_its_comment_block_and_is_no_definitions_comment() -> None:
    python = (
        b"# fmt: off\n"
        b"# rows are colour channels, columns the gamma table\n"
        b"GAMMA = [[1, 2], [3, 4]]\n\n"
        b"# pylint: disable=too-many-arguments\n"
        b"def blend(a, b, c, d, e, f):\n"
        b"    return a\n"
    )
    chunks = chunks_of("python", "gamma.py", python)
    assert "gamma table" in chunks["gamma.py"].head and "fmt" not in chunks["gamma.py"].head
    assert "pylint" not in chunks["blend"].head and "disable" not in chunks["blend"].head
    cpp = (
        b"// NOLINTNEXTLINE(readability-function-size)\n"
        b"int scale(int x) { return x * 3; }\n"
        b"// Doubles a lane count.\n"
        b"// NOLINTNEXTLINE(readability-magic-numbers)\n"
        b"int twice(int x) { return x * 2; }\n"
    )
    chunks = chunks_of("cpp", "scale.cc", cpp)
    assert "NOLINT" not in chunks["scale"].head and "NOLINT" not in chunks["twice"].head


def test_a_comments_rulers_are_in_no_chunk_and_its_words_are() -> None:
    # muparser's test methods, each under a `//-----` line, showed the ruler as their snippet.
    cpp = (
        b"//---------------------------------------------------------------------------\n"
        b"int expression_tests() { return 0; }\n\n"
        b"/****************************************/\n"
        b"/* Scales a lane count.                 */\n"
        b"/* ==================================== */\n"
        b"int scale(int x) {\n"
        b"  // ____________\n"
        b"  return x * 3;  // three lanes -> per unit ---- see below\n}\n"
    )
    chunks = chunks_of("cpp", "scale.cc", cpp)
    assert chunks["expression_tests"].head == "int expression_tests()"
    head = chunks["scale"].head
    assert "Scales a lane count." in head and "three lanes -> per unit ---- see below" in head
    assert "****" not in head and "====" not in head and "____" not in head
    python = b"# ======\n# Parses dates.\n# ------\ndef parse(text):\n    return text\n"
    assert chunks_of("python", "dates.py", python)["parse"].head.endswith("\nParses dates.")


def test_editor_and_encoding_lines_are_no_words_of_a_chunk() -> None:
    # dateutil's parser module chunk showed `-*- coding: utf-8 -*- vim:ts=4:sw=4:et` as all
    # its text; they are lines for an editor and the interpreter, not for a reader.
    python = (
        b"# -*- coding: utf-8 -*-\n"
        b"# vim:ts=4:sw=4:et\n"
        b"# coding=latin-1\n"
        b"# vim: set expandtab:\n"
        b"# Parses dates written by people.\n"
        b"# vim: a fine editor, says this comment\n"
        b"import re\n"
    )
    head = chunks_of("python", "parser.py", python)["parser.py"].head
    assert "Parses dates written by people." in head
    assert "fine editor" in head  # prose that names an editor stays
    assert "coding" not in head and "ts=4" not in head and "expandtab" not in head


MAIN_RS = b"""use std::env;

// Reads the arguments once.
static NAMES: [&str; 2] = ["a", "b"];

fn main() {
    let _ = env::args();
}
"""


def test_a_module_chunk_ends_at_the_files_last_line() -> None:
    # A file's text ends with a newline; the module chunk ended one line past it (the helper's
    # `toolz/itertoolz.py`, 1,057 lines, shown as 1-1058), with or without that newline.
    for language, path, source in (
        ("python", "worker.py", WORKER_PY),
        ("rust", "main.rs", MAIN_RS),
    ):
        last = source.count(b"\n")
        for text, lines in (
            (source, last),
            (source.rstrip(b"\n"), last),
            (source + b"\n", last + 1),
        ):
            module = chunks_of(language, path, text)[path]
            assert (module.kind, module.start_line, module.end_line) == ("module", 1, lines), (
                language,
                text[-20:],
            )


def test_a_rust_module_compiled_only_for_tests_is_demoted_whatever_its_name() -> None:
    # memchr's `#[cfg(test)] mod testsimples {` helpers ranked first for "find first occurrence
    # of a substring", above the function that does it.
    rust = (
        b"pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {\n    None\n}\n\n"
        b"#[cfg(test)]\n#[allow(dead_code)]\nmod testsimples {\n"
        b"    pub fn run_search_tests_fwd() {}\n}\n\n"
        b'#[cfg(all(test, feature = "std"))]\npub(crate) mod prop {\n'
        b"    pub fn check_find() {}\n}\n\n"
        b"mod simple {\n    pub fn find_simple() {}\n}\n"
    )
    chunks = chunks_of("rust", "src/memmem.rs", rust)
    tested = {name: chunk.is_test for name, chunk in chunks.items()}
    assert tested["memmem::testsimples::run_search_tests_fwd"] is True
    assert tested["memmem::prop::check_find"] is True
    assert tested["memmem::find"] is False and tested["memmem::simple::find_simple"] is False


PALETTE_RS = b"""/// Available colour palettes.
pub enum Palette {
    /// The solarized scheme, popular with terminal users.
    Solarized,
    /// Gruvbox: warm retro colours.
    Gruvbox,
}

/// Settings for rendering.
pub struct Settings {
    /// Whether to draw a zebra stripe behind every other row.
    zebra: bool,
}

impl Settings {
    /// Turn the stripes off.
    pub fn plain(&mut self) {
        self.zebra = false;
    }
}

pub fn render() {}
"""

PALETTE_C = b"""/** Available colour palettes. */
enum palette {
\tSOLARIZED,\t/**< popular with terminal users */
\tGRUVBOX\t\t/**< warm retro colours */
};

/** Settings for rendering. */
struct settings {
\tint zebra;\t/**< draw a stripe behind every other row */
};

void render(void) {}
"""


def test_a_record_s_chunk_holds_its_fields_and_variants_with_their_comments() -> None:
    """A C struct's fields, a C enum's values with their trailing comments, a Rust enum's
    variants and a struct's fields with their `///` docs: what the record is made of. They were
    in no chunk but the file's (no symbol brings a field or a variant to its record's chunk);
    a method's own comment and body stay its own."""
    extraction = extract("rust", PALETTE_RS, "lib.rs")
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extraction.symbols]
    texts = [(t.element_type, t.content, t.line, t.end_line, t.symbol_name, "")
             for t in extraction.texts]  # fmt: skip
    rust = {(c.kind, c.name): c for c in code_chunks("lib.rs", PALETTE_RS, rows, texts)}
    assert "warm retro colours" in rust["enum", "Palette"].body
    assert "zebra stripe behind" in rust["struct", "Settings"].body
    # every line is a definition's or its doc's: no module chunk repeats them (chunks 23)
    assert ("module", "lib.rs") not in rust
    # the impl's method is its own: its doc is in no other chunk
    assert "stripes" in rust["method", "Settings::plain"].head
    assert not any("stripes" in chunk.body for chunk in rust.values())
    c = chunks_of("c", "pal.c", PALETTE_C)
    assert "warm retro colours" in c["palette"].body
    assert "zebra draw stripe behind" in c["settings"].body
    queue = chunks_of("cpp", "queue.h", QUEUE_H)["blocking_queue"]
    assert "number of items held" in queue.body  # a field's comment
    assert "oldest" not in queue.body and "room" not in queue.body.replace("wait room", "")


def test_a_variant_s_words_find_its_enum(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "lib.rs").write_bytes(PALETTE_RS)
    (root / "pal.c").write_bytes(PALETTE_C)
    run = [sys.executable, "-m", "repomap.cli"]
    done = subprocess.run([*run, "index", str(root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = {}
    for question in ("warm retro colours", "zebra stripe behind every other row"):
        done = subprocess.run(
            [*run, "search", question, "--mode", "lexical", "--json", "--root", str(root)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        found[question] = [(h["path"], h["name"]) for h in json.loads(done.stdout)["results"]]
    assert {found["warm retro colours"][0], found["warm retro colours"][1]} == {
        ("src/lib.rs", "Palette"), ("pal.c", "palette"),
    }  # fmt: skip
    assert {hit[1] for hit in found["zebra stripe behind every other row"][:2]} == {
        "Settings", "settings",
    }  # fmt: skip


def test_what_leads_a_definition_is_its_own_not_the_modules() -> None:
    """A function's `///` doc made its file's module chunk a second answer (semver's eval.rs,
    a search user's report): the lines above a definition that lead it (doc comments,
    decorators, attributes) are its own. Its decorators' words are in its body."""
    rust = chunks_of(
        "rust",
        "src/eval.rs",
        b"use std::fmt;\n\nconst LIMIT: u32 = 3;\n\n"
        b'/// Compute the frobnication quotient of a zebra.\n#[cfg(feature = "simd")]\n'
        b"pub fn quotient(x: u32) -> u32 {\n    x * LIMIT\n}\n",
    )
    assert "frobnication" in rust["eval::quotient"].head
    assert "simd" in rust["eval::quotient"].body.split()
    assert "limit" in rust["src/eval.rs"].body.split()  # the module's own code stays
    assert not {"frobnication", "zebra", "simd"} & set(rust["src/eval.rs"].body.split())
    python = chunks_of(
        "python",
        "app.py",
        b'import flask\n\napp = flask.Flask("shop")\n\n\n'
        b'# Served to visitors who are not signed in.\n@app.route("/welcome")\ndef home():\n'
        b'    return "hello"\n',
    )
    assert "welcome" in python["home"].body.split()
    assert "shop" in python["app.py"].body.split()
    assert not {"welcome", "route", "visitors"} & set(python["app.py"].body.split())


ZLIB_STYLE_H = b"""/* zlib-like API: each declaration, then what it does. */

int inflateSync(void *strm);
/*
     Skips invalid compressed data until a possible full flush point is found.
*/

int inflateCopy(void *dest, void *source);
/*
     Sets the destination stream as a complete copy of the source stream.
*/

/* Streams that are not flushed yet. */
int pending(void *strm);

int later(void *strm);
/* An aside the next declaration begins with. */
int next_one(void *strm);
"""


def test_the_comment_right_below_a_declaration_with_a_blank_line_after_it_is_its_own() -> None:
    """zlib.h writes each prototype's description below it: every prototype's chunk held its
    predecessor's description (inflateCopy was first for what inflateSync does)."""
    chunks = chunks_of("c", "zlib.h", ZLIB_STYLE_H)
    assert "Skips invalid compressed data" in chunks["inflateSync"].head
    copy = chunks["inflateCopy"].head
    assert "complete copy of the source" in copy and "Skips" not in copy
    # Not the module's words either, and a comment above a declaration is still its own.
    assert "skips" not in chunks["zlib.h"].body.split()
    assert "not flushed yet" in chunks["pending"].head
    # A comment touching the next declaration is that one's, as before.
    assert "An aside" in chunks["next_one"].head and "An aside" not in chunks["later"].head


def test_a_macro_alone_above_a_c_function_leaves_it_the_comment_above() -> None:
    # zstd's `FORCE_INLINE_TEMPLATE` on its own line: the comment went to the file's chunk.
    source = (
        b"#define FORCE_INLINE_TEMPLATE static inline\n\n"
        b"/* Returns the longest match length found in the dictionary. */\n"
        b"FORCE_INLINE_TEMPLATE\n"
        b"int longest_match(int a) { return a; }\n\n"
        b"/* Returns the shortest match length. */\n"
        b"static inline int shortest_match(int a) { return a; }\n"
    )
    chunks = chunks_of("c", "m.c", source)
    assert "longest match length" in chunks["longest_match"].head
    assert "longest match" not in chunks["m.c"].head
    assert "shortest match length" in chunks["shortest_match"].head
