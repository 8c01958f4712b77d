"""Retrieval chunks: the units `repomap search` ranks, made from one file's extraction.

A question asks what code *does*; the words that say it are spread over a definition's path,
name, signature, docstring, comments and the identifiers of its body. A chunk gathers them for
one definition, in four columns that BM25 weighs differently (`title`: the name, `place`: the
path, `head`: signature, docstring and comments, `body`: the body's identifiers split into their
words, each once). Identifiers are split (`parseHeaderLines` -> `parse header lines`; unicode61 already
splits `parse_header_lines` at `_`) and FTS5's porter stemmer meets `parsing headers` with them.

Chunks are made in the worker processes, from the rows the extractor produced and the source.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Callable, Container, Iterable, Sequence
from itertools import accumulate, chain
from typing import NamedTuple

from repomap.embed import TOKENIZER_FILE
from repomap.extractors.model import LICENCE
from repomap.index.signatures import parameters_key, specialized_name
from repomap.languages import DECLARATION_MACRO_LINE, language_of, leading_start
from repomap.paths import is_demoted_path
from repomap.subwords import split_identifier
from repomap.textfile import line_count

# What the chunks are made with: a change makes the next `repomap index` read every file again.
# 5: paths.is_demoted_path also counts bench/, benchmarks/, example/ folders and conftest.py
# 6: ... and vendored code (third_party/, bundled/, a top vendor/ or deps/)
# 7: ... and type stubs (.pyi)
# 8: a definition without a doc comment takes the plain comment block right above it; a
#    header's include guard is no chunk
# 9: ... but not the comment the file begins with, unless the definition follows it directly;
#    a C++ function deleted or defaulted where it is declared is no chunk
# 10: a comment inside one of several definitions of one name (a property's getter and setter,
#    Rust's cfg variants, C++ overloads) is that one's alone; tool pragmas (`type: ignore`,
#    `noqa`, `NOLINT` ...) are in no chunk; paths.is_demoted_path also counts `test.rs`
# 11: a Python function decorated `@overload` (a signature for type checkers) is no chunk
# 12: ... nor are its lines module-level code (a method's stubs too); a pragma line inside a
#    comment block leaves the block's other lines, and a pragma is never a definition's comment
# 13: a macro defined again in the same file (another branch of an `#if`) is no chunk
# 14: editor and encoding lines (`-*- coding: utf-8 -*-`, `vim: set ts=4:`) are pragmas too
# 15: a module chunk ends at the file's last line, not one past it when the file ends in a
#    newline
# 16: folders named as tests (`libtests/`, `selftests/`, `testdata/`) demote their chunks
# 17: so do fuzzing harnesses (`fuzz/`, `oss-fuzz/`, `fuzzers/`, `x_fuzzer.cc`)
# 18: a long Rust crate or module doc (`//!`) is cut into sections at its Markdown headings
# 19: a comment's rulers (`//-----`, `/*****/`) are in no chunk
# 20: a Rust `#[cfg(test)] mod NAME {` demotes its chunks as `mod tests` does
# 21: a container's chunk holds its own lines (fields, enumerators, variants and their comments),
#    the module's no longer does
# 22: a type alias outside any record (typedef, `using`, Rust `type`, `TypeAlias`) is a chunk
# 23: the doc comments, decorators and attributes right above a chunked definition are its own:
#    its decorators and attributes in its body, none of them in the module's
# 24: the comment right below a C function's declaration, a blank line after it, is that
#    declaration's (zlib.h), not the next one's
# 25: a C name written of two English words in lower case (`addquoted`, `computesizes`) has
#    them in its title too
# 26: paths.is_demoted_path also counts code in `doc/`, `docs/`, `sample(s)/`, `demo(s)/`
# 27: ... and in a C chunk's body (`sched_getaffinity` holds affinity)
# 28: Python's special methods expanded as abbreviations are (`__setstate__`: unpickle)
# 29: ... and `x_unittest.cc`, `x-test.cc`, `x_test_tool.cc`, `x_benchmark.cc`, `typing-examples/`
# 30: a C or C++ macro alone on the line above a function stands as an attribute: the comment
#    above it is the function's (zstd's `FORCE_INLINE_TEMPLATE`)
# 31: a word of letters and digits in a body is a word whole too (`u128`, `int64`, `utf8`)
# 32: paths.is_demoted_path also counts `external/` at any depth, `contrib/` and `sandbox/` at
#    the top of the tree; a Python definition with a docstring takes the comment above it too;
#    a file whose header says a tool wrote it (`DO NOT EDIT`, byacc's, Bison's) is demoted
# 33: a Python module's docstring and a Rust file's `//!` docs are its module chunk's head
#    (their owner is the module's name, no definition); a licence comment is not
# 34: a C++ operator's title says what it does (`operator<`: less than compare)
# 35: of a comment that holds a licence, only the licence is left out (an SPDX line alone, else
#    from its line to the comment's end); a Python module's docstring outside a definition of
#    the module's name is the module's
# 36: 34's operator words taken out: tomlplusplus' many `operator=` and `operator==` overloads,
#    each a small chunk, took "assigned twice" and "compare for equality" (two answers lost)
# 37: `int` and `bool` in a name are followed by "integer" and "boolean"; `_vendor/` and
#    `_vendored/` folders at any depth are vendored code (demoted)
# 38: a module comment's licence lines (an SPDX line alone too) are out of the module chunk's
#    body words, as they are out of its head
# 39: a `.txt` file's sections are the docs index's (reST titles), which outline, get_section
#    and search_docs name too; the chunker no longer finds titles of its own
# 40: a Rust function marked `#[test]` or `#[bench]` (`#[tokio::test]`) is a test wherever it is
#    (the map's order reads is_test too: a change of which chunks are tests needs a new
#    index/ranking.py RANK_FORMAT as well, or a stored ranking keeps the old order);
#    paths.is_demoted_path also counts a bundled C test harness (`tinytest/`, `cmocka/`); and
#    a C preprocessor line's comment (`#endif  // GUARD_H`) is no comment above a definition;
#    C++'s empty exception specification `throw()` is no word of a chunk
# 41: a documented C or C++ declaration inside a class or namespace (`void tidy();` under its
#    doc) is a chunk of its own, its doc out of its container's chunk; a definition below its
#    documented declaration in the same file holds that doc in its head
CHUNKS_VERSION = "42"

# Definitions that become a chunk of their own. Containers (classes, impls, traits) hold their
# header, docstring and member signatures, not the members' bodies: those are chunks too.
FUNCTION_KINDS = frozenset({"function", "method", "macro"})
CONTAINER_KINDS = frozenset({"class", "struct", "enum", "union", "trait", "impl"})
CHUNK_KINDS = FUNCTION_KINDS | CONTAINER_KINDS
# A type alias outside any record is a chunk too (a C typedef, a C++ `using`, a Rust `type`, a
# Python `TypeAlias`): expat's `XML_CharacterDataHandler`, a callback's signature under its doc,
# was in no search's answers, though `symbols` listed it. One inside a record (`using
# value_type = T;`, a trait's `type Item;`) is a member, in the record's own lines.
ALIAS_KIND = "type"
FIELD_KIND = "field"  # a C/C++ data member, a Rust named field: a symbol, never a chunk
SEARCH_KINDS = CHUNK_KINDS | {ALIAS_KIND}

HEAD_CHARS = 1200  # signature, docstring and comments kept for one chunk
BODY_WORDS = 400  # distinct body words kept for one chunk, in order of first use
MODULE_WORDS = 300

# Words every function of a language has: they tell nothing about what one of them does.
_NOISE_TEXT = """
    self cls def return if else elif for while in is not and or none true false import from as
    pass raise try except finally with lambda yield async await class fn let mut pub impl use
    mod struct enum trait where ref const unsafe extern crate super dyn some ok err usize isize
    u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 bool void int unsigned signed auto typename namespace
    public private protected virtual override inline explicit typedef using nullptr this
    operator sizeof std args kwargs
"""
_NOISE = frozenset(_NOISE_TEXT.split())


class ChunkRow(NamedTuple):
    """A chunk as the writer stores it (see migrations/0013_chunks.sql)."""

    kind: str
    name: str
    start_line: int
    end_line: int
    is_test: bool
    # No hash of the text here: the embedding cache's key is computed when embedding (schema
    # v16 stores none), and making one per chunk cost the workers ~0.1 s of Django's cold run.
    title: str
    place: str
    head: str
    body: str


# Abbreviations code is full of, and the word a question uses instead.
ABBREVIATIONS = {
    "num": "number", "cnt": "count", "msg": "message", "err": "error", "ctx": "context",
    "cfg": "config", "conf": "config", "len": "length", "idx": "index", "buf": "buffer",
    "req": "request", "resp": "response", "res": "result", "auth": "authentication",
    "tmp": "temporary", "dir": "directory", "env": "environment", "addr": "address",
    "alloc": "allocate", "dealloc": "deallocate", "iter": "iterator", "init": "initialize",
    "impl": "implementation", "param": "parameter", "params": "parameters", "arg": "argument",
    "val": "value", "var": "variable", "fmt": "format", "str": "string", "db": "database",
    "prev": "previous", "cur": "current", "src": "source", "dst": "destination",
    "dest": "destination", "pos": "position", "ptr": "pointer", "ref": "reference",
    "attr": "attribute", "attrs": "attributes", "elem": "element", "expr": "expression",
    "stmt": "statement", "sep": "separator", "max": "maximum", "min": "minimum",
    "cmp": "compare", "eq": "equal", "dup": "duplicate", "sync": "synchronize",
    "async": "asynchronous", "tz": "timezone", "ts": "timestamp", "utf": "unicode",
    "url": "address", "mgr": "manager", "proc": "process", "exec": "execute", "calc": "calculate",
    # type names in names (`int_to_bytes`, `parse_bool`), noise in bodies: "convert an integer
    # to bytes" met `get_timestamp`'s "integer number of seconds" first (a search user)
    "int": "integer", "bool": "boolean",
    # Python's special methods, by what a question calls what they do (cachetools' `__setstate__`
    # never said "unpickling")
    "setstate": "unpickle", "getstate": "pickle", "getitem": "subscript", "setitem": "subscript",
    "delitem": "subscript", "repr": "representation", "lt": "less", "gt": "greater",
    # Acronyms, by the words a question spells out: "which cache evicts the least recently used
    # entry?" found boltons' LRI (least recently inserted) first and its `LRU` fourth; "when a
    # float is infinite or not a number" (serde_json's `FpCategory::Nan`), "detect the byte
    # order mark" (expat's `XML_TOK_BOM`): search users' questions.
    "lru": "least recently used", "lfu": "least frequently used", "mru": "most recently used",
    "fifo": "first in first out", "lifo": "last in first out", "ttl": "time to live",
    "eof": "end of file", "eol": "end of line", "bom": "byte order mark", "nan": "not a number",
    "crlf": "carriage return line feed", "oom": "out of memory", "gc": "garbage collection",
    "ctor": "constructor", "dtor": "destructor", "regex": "regular expression",
    "fd": "file descriptor", "pid": "process id", "cb": "callback", "hdr": "header",
    "cmd": "command", "seq": "sequence", "msec": "milliseconds", "usec": "microseconds",
    "nsec": "nanoseconds", "ipc": "interprocess communication",
}  # fmt: skip


def words_of(text: str, limit: int, noise: frozenset[str] = _NOISE, compounds: bool = False) -> str:
    """The distinct words of `text`'s identifiers, split into their parts, `noise` dropped, an
    abbreviation followed by the word it stands for; once `limit` words are reached, no group
    (a part and its expansion) is added after the one that reached it.

    The words are gathered by C loops (findall, map, chain, dict.fromkeys) over the text's
    runs of letters, each split once per process (a cache per noise set); only a text with
    more than `limit` distinct words, where the cut must fall after a whole group, is walked
    group by group. A run seen again adds no word, so the walk stops where one over each
    distinct identifier's groups would. With `compounds` (C's chunks), a lower-case part
    written of two words (`addquoted`) is followed by them (compound_words).
    """
    return _words(_run_finder(text)(text), limit, noise, compounds)


def _words(runs: list[str], limit: int, noise: frozenset[str], compounds: bool = False) -> str:
    """words_of from the runs of letters (and lone underscores) of a text, in order."""
    cache = _WORDS.get((noise, compounds))
    if cache is None or len(cache) > WORD_CACHE_SIZE:
        cache = _WORDS[noise, compounds] = _Words(noise, compounds)
    seen = dict.fromkeys(chain.from_iterable(map(cache.__getitem__, runs)))
    if len(seen) <= limit:  # no cut: the words in order, as the walk below would give them
        return " ".join(seen)
    seen.clear()
    for run in dict.fromkeys(runs):
        for group in cache.groups(run):
            seen.update(dict.fromkeys(group))
            if len(seen) >= limit:
                return " ".join(seen)
    return " ".join(seen)  # pragma: no cover - more than `limit` words were counted above


# An identifier's words are those of its runs of letters and digits: split_identifier cuts at
# every digit and underscore and drops digits, which are never words alone; a part with digits
# after its letters is a word as well, whole (`u128`, `int64` of `int64_t`, `utf8` of
# `utf8Decode`, `ipv4`), as the question's tokenizer keeps it (`search u128` found nothing
# where `parse::<u128>()` was in a body). Runs repeat far more than whole
# identifiers (the kernel sample: 116,000 distinct runs, 790,000 identifiers, most of them in one
# file only), so splitting each identifier once cost a third of C's chunks, the runs' cache
# hardly anything. One identifier has no run: underscores only (after digits, which never
# start one), whose one word is itself (`__`); _LONE_HINT finds where one may be.
_RUN = re.compile(r"[A-Za-z0-9]+")
_LONE_HINT = re.compile(r"__(?![A-Za-z0-9_])")
_RUN_OR_LONE = re.compile(r"(?<![A-Za-z0-9_])[0-9]*__+(?![A-Za-z0-9_])|[A-Za-z0-9]+")
# Letters and the digits right after them, in a run that starts with a letter (not a number:
# `0x1f00`); of the letters, their last word when they change from lower to upper case.
_DIGIT_PARTS = re.compile(r"([A-Za-z]+)([0-9]+)")


# Every ASCII character that is neither a letter nor a digit, as a space: an ASCII text's runs
# are then its words by str.split, 2-3x quicker than the regular expression (C's and Python's
# chunks).
_NOT_RUNS = str.maketrans({code: " " for code in range(128) if not chr(code).isalnum()})


def _runs_of(text: str) -> list[str]:
    return text.translate(_NOT_RUNS).split() if text.isascii() else _RUN.findall(text)


def _with_digits(run: str) -> tuple[str, ...]:
    """The words of letters and digits in a run that starts with a letter, lower case:
    `u128`, `int64`, `sha256` (of `sha256sum`), `utf8` (`utf8Decode`), `u128` (`parseU128`),
    `ipv4` (`IPv4`: no lower-to-upper change in it)."""
    found = []
    for letters, digits in _DIGIT_PARTS.findall(run):
        cut = max((i for i in range(1, len(letters)) if letters[i - 1].islower()
                   and letters[i].isupper()), default=0)  # fmt: skip
        word = (letters[cut:] + digits).lower()
        if len(word) > 1:
            found.append(word)
    return tuple(found)


def _run_finder(text: str) -> Callable[[str], list[str]]:
    """How to find the runs of `text`, or of any part of it cut at line ends."""
    return _RUN_OR_LONE.findall if _has_lone(text) else _runs_of


_IDENTIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _has_lone(text: str) -> bool:
    """Whether _RUN_OR_LONE finds an identifier of underscores only (after digits) in `text`:
    the end of every dunder name (`__init__(`) is a hint, so each hint's whole identifier is
    looked at (one search for the exact pattern cost Django's chunks 0.18 s)."""
    for hint in _LONE_HINT.finditer(text):
        start = hint.start()
        while start and text[start - 1] in _IDENTIFIER_CHARS:
            start -= 1
        if _LONE_WHOLE.fullmatch(text, start, hint.end()):
            return True
    return False


_LONE_WHOLE = re.compile(r"[0-9]*__+")


WORD_CACHE_SIZE = 200_000  # runs per noise set; the cache starts over beyond it


class _Words(dict[str, tuple[str, ...]]):
    """A run's words as words_of adds them (its groups, flattened), made on first use: map()
    looks up the ones seen before without a Python call."""

    def __init__(self, noise: frozenset[str], compounds: bool) -> None:
        super().__init__()
        self.noise = noise
        self.compounds = compounds
        # The groups too, for the walk of a text past its limit: every file's rest is one, and
        # splitting its runs again cost as much as the cache saved them.
        self.grouped: dict[str, tuple[tuple[str, ...], ...]] = {}

    def __missing__(self, run: str) -> tuple[str, ...]:
        words = tuple(chain.from_iterable(self.groups(run)))
        self[run] = words
        return words

    def groups(self, run: str) -> tuple[tuple[str, ...], ...]:
        found = self.grouped.get(run)
        if found is None:  # `12__` is the word `__`
            found = _word_groups(run.lstrip("0123456789"), self.noise, self.compounds)
            if run[0].isalpha() and not run.isalpha():
                found += tuple((word,) for word in _with_digits(run) if word not in self.noise)
            self.grouped[run] = found
        return found


_WORDS: dict[tuple[frozenset[str], bool], _Words] = {}


def _word_groups(
    identifier: str, noise: frozenset[str], compounds: bool = False
) -> tuple[tuple[str, ...], ...]:
    """An identifier's words as words_of adds them: each kept part, with the word it
    abbreviates after it, or the two words it is written of (words_of checks its limit after
    each group)."""
    groups: list[tuple[str, ...]] = []
    for part in split_identifier(identifier) or [identifier.lower()]:
        if len(part) > 1 and part not in noise and not part.isdigit():
            expanded = ABBREVIATIONS.get(part)
            if expanded is not None:
                groups.append((part, expanded))
            elif compounds and len(part) >= COMPOUND_LENGTH and (two := compound_words(part)):
                groups.append((part, *(word for word in two if word not in noise)))
            else:
                groups.append((part,))
    return tuple(groups)


COMPOUND_LENGTH = 6  # letters of the shortest name written as two words (`addquoted`)
# Three-letter words that start or end names (`addquoted`, `setdefault`, `bitmap`); any other
# three letters the vocabulary holds were mostly a longer word's pieces (`par`, `ser`, `app`).
_SHORT_TEXT = """add all any bad big bit box bus buf cut day end fix get has hex hit key log low map
max min new not now off old one out own pad pop put raw row run see set sum tag top try two use
way win zip"""
_SHORT_WORDS = frozenset(_SHORT_TEXT.split())
# A word the vocabulary holds with an ending it lacks the whole of: `parser`, `printable`.
_ENDINGS = ("er", "ers", "able", "ible", "ing", "ed", "es", "s", "ly", "ment", "ion", "or")


def _derived(part: str, words: dict[str, int]) -> bool:
    """Whether `part` is a word of the vocabulary with an ending (`parse` + r, `print` + able)."""
    for ending in _ENDINGS:
        if part.endswith(ending):
            stem = part[: -len(ending)]
            if stem in words or stem + "e" in words:
                return True
    return False


@functools.cache
def _dictionary() -> dict[str, int]:
    """The English words of three letters or more in the bundled model's vocabulary, each by
    its place there (the more common, the earlier)."""
    vocabulary = json.loads(TOKENIZER_FILE.read_text(encoding="utf-8"))["model"]["vocab"]
    return {
        word: rank
        for word, rank in vocabulary.items()
        if len(word) >= 3 and word.isascii() and word.isalpha() and word.islower()
    }


def compound_words(part: str) -> tuple[str, str] | None:
    """The two words a lower-case name is written of, when it is no word itself: `addquoted`
    -> add, quoted; `computesizes` -> compute, sizes; `setdefault` -> set, default (Lua's and
    C's names, Python's builtins). Of several cuts, the one whose rarer word is commoner
    (`namespace` -> name, space, not names, pace); none when either side is no word."""
    words = _dictionary()
    if not part.isalpha() or part in words or _derived(part, words):
        return None
    best: tuple[int, str, str] | None = None
    for cut in range(3, len(part) - 2):
        first, second = part[:cut], part[cut:]
        first_rank, second_rank = words.get(first), words.get(second)
        if first_rank is not None and second_rank is not None:
            if (len(first) == 3 and first not in _SHORT_WORDS) or (
                len(second) == 3 and second not in _SHORT_WORDS
            ):
                continue  # `app`+`end`, `par`+`ser`: pieces of one word the vocabulary lacks
            rarer = max(first_rank, second_rank)
            if best is None or rarer < best[0]:
                best = (rarer, first, second)
    return (best[1], best[2]) if best is not None else None


_SPDX_LINE = re.compile(r"^[^\n]*SPDX-License-Identifier[^\n]*\n?", re.MULTILINE)


def _without_licence(comment: str) -> str:
    """A comment without its licence: an SPDX line alone, else from the line that says it is a
    licence to the comment's end (zlib's "deflate.c -- compress data using the deflation
    algorithm" above its Copyright line stays; the licence after it, however long, goes)."""
    comment = _SPDX_LINE.sub("", comment)
    found = LICENCE.search(comment)
    if found is None:
        return comment.strip()
    return comment[: comment.rfind("\n", 0, found.start()) + 1].strip()


def title_of(name: str, compounds: bool = False) -> str:
    """A name and its words (`QuerySet.filter` -> `QuerySet.filter query set filter`); with
    `compounds`, a lower-case part's two words too (`addquoted` -> add quoted)."""
    return f"{name} {words_of(name, 40, frozenset(), compounds)}"


def place_of(path: str) -> str:
    """A path's words (`db/models/query_utils.py` -> `db models query utils`)."""
    return words_of(path.rsplit(".", 1)[0], 40, frozenset())


@functools.lru_cache(maxsize=1024)
def _path_facts(path: str) -> tuple[str, bool]:
    """place_of(path) and is_demoted_path(path): the same for every chunk of a file."""
    return place_of(path), is_demoted_path(path)


# What a tool wrote from another file, as its header says (in a file's first HEADER_CHARS):
# tmux's `cmd-parse.c` (byacc's, from cmd-parse.y: every parser function was a search's answer
# twice), Bison's and flex's output, protobuf's, LLVM's `IntrinsicsX86.h`, Rust core's unicode
# tables, the kernel's register headers (`auto-generated file`). Demoted as vendored code is.
# Not any mention of "generated" (Django's "autogenerated permissions" is a docstring's).
# Only on a comment's (or a directive's) line: a generator's own source writes the words in a
# string (`HEADER = "/* DO NOT EDIT */"`), and a person's `# do not edit the order` is no mark.
_GENERATED = re.compile(
    r"^[ \t]*(?:#|//|/\*|\*|--|;|\|)[^\n]*?"  # `|*`: LLVM's TableGen banners
    r"(?:DO NOT EDIT|(?i:do not edit(?: directly)?!|do not edit directly)|@generated\b|\bYYBYACC\b|A Bison parser, made by|generated by flex"
    r"|Generated by the protocol buffer compiler"
    r"|(?i:This file (?:is|was|has been) (?:automatically |auto-?)generated)"
    r"|(?i:Automatically generated (?:file|by)|auto-?generated (?:file|by)))",
    re.MULTILINE,
)
HEADER_CHARS = 1500


def is_generated(text: str) -> bool:
    """Whether a file's header says a tool wrote it (_GENERATED)."""
    return _GENERATED.search(text, 0, HEADER_CHARS) is not None


def make_chunk(
    kind: str,
    name: str,
    start: int,
    end: int,
    path: str,
    head: str,
    body: str,
    generated: bool = False,
) -> ChunkRow:
    title = place_of(name) if kind == "module" else title_of(name)
    place, test_path = _path_facts(path)
    head = head[:HEAD_CHARS]
    return ChunkRow(
        kind,
        name,
        start,
        end,
        test_path or generated or "::tests::" in f"::{name}::",
        title,
        place,
        head,
        body,
    )


class _Definition(NamedTuple):
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent: str | None
    doc: str | None


def code_chunks(
    path: str,
    source: bytes,
    symbols: Sequence[tuple],  # store.SymbolFields
    texts: Sequence[tuple],  # store.TextFields: (element_type, content, line, end_line, owner, _)
    hidden: Iterable[str] = (),
    read_as: str | None = None,
) -> list[ChunkRow]:
    """One chunk per definition worth finding on its own, and one for the rest of the file.

    `hidden`: string contents the text index redacted (credentials); they are cut from the
    source before its words are taken, so a chunk never holds what the text rows hide.
    `read_as`: the language the file was extracted as (a `.h` may be C), else its path's.
    """
    text = source.decode("utf-8", "replace")
    # Longest first, then by text: a set's order changes with the hash seed, and one secret
    # can hold another, so any other order gave other chunk rows from one process to the next.
    for secret in sorted(hidden, key=lambda value: (-len(value), value)):
        text = text.replace(secret, "")
    lines = text.split("\n")
    covered = bytearray(len(lines) + 2)  # lines inside a chunked definition
    language = read_as or language_of(path) or ""
    python = language == "python"
    # C writes names of two words as one (Lua's `addquoted`, `computesizes`, libuv's call of
    # `sched_getaffinity`): titles and bodies hold the words too. Python's and C++'s such
    # names are few and mostly words spelled apart elsewhere too (`username`,
    # `ringbuffer_sink`): splitting them moved the benchmark's answers down (bench/README.md).
    c_names = language == "c"
    definitions = []
    prototypes: set[int] = set()  # first lines of C and C++ free functions' declarations
    member_declarations: set[int] = set()  # first lines of documented member declarations
    # A C or C++ declaration's doc may be the plain comment right above it (extractor 54): here
    # it is a leading comment as before, moved out of its class's chunk, its pragmas dropped.
    plain_above = {(row[3] + 1, row[1]) for row in texts if row[0] == "comment"}
    for (
        name, qualified_name, kind, start_line, end_line, _start_col, _end_col, _start_byte,
        _end_byte, signature, parent, doc, is_definition,
    ) in symbols:  # fmt: skip
        # The extractor's only Python declaration is an `@overload` stub, a signature for type
        # checkers beside the function that does the work: no chunk, and its lines are no
        # module-level code either (jinja2's sync_do_map was three answers). A C++ in-class
        # declaration is found through its definition; a free function's prototype (a C API
        # header: llvm-c/Core.h) is often all the index has of it.
        stub = python and not is_definition
        # A documented one inside a class or namespace is a chunk too: C++ documents an out of
        # line method on its declaration (tclap: 103 of 110 such definitions), and that doc was
        # in its class's chunk, none in the definition's. Search folds it into its linked
        # definition (search/code.py, _declaration_folds); with no definition indexed (LLVM's
        # headers) it is the API, found as precisely as a definition would be.
        documented_member = (
            not is_definition
            and parent is not None
            and kind in ("function", "method")
            and doc is not None
            and language in ("c", "cpp")
        )
        if not (
            stub or is_definition or documented_member or (kind == "function" and parent is None)
        ):
            continue
        if doc is not None and (start_line, doc) in plain_above:
            doc = None
        found = _Definition(
            name, qualified_name, kind, start_line, end_line, signature, parent, doc
        )
        if stub:
            _cover(covered, found, len(lines))
        else:
            definitions.append(found)
            if not (is_definition or documented_member):  # a member's comment below is not its
                prototypes.add(start_line)
            if documented_member:
                member_declarations.add(start_line)
    containers = {d.qualified_name for d in definitions if d.kind in CONTAINER_KINDS}
    # `typedef struct tag {..} TAG;`: the record is the chunk, its alias names it (no second one)
    record_starts = {d.start_line for d in definitions if d.kind in CONTAINER_KINDS}

    def chunked(d: _Definition) -> bool:
        if d.kind != ALIAS_KIND:
            return d.kind in CHUNK_KINDS
        return d.parent not in containers and d.start_line not in record_starts

    chunked_definitions = [d for d in definitions if chunked(d)]
    # Each one's first line with the comments, attributes and decorators right above it (what
    # leads it is its own), looked up once: the members' spans and the chunks both read it.
    firsts = [
        leading_start(lines, d.start_line - 1, language) + 1 if d.start_line > 0 else 0
        for d in chunked_definitions
    ]

    # A pragma is a linter's line, not a reader's: out of every comment block, so a block that
    # holds one (`# fmt: off` above a table's explanation) keeps its other lines.
    kept = []
    for row in texts:
        if row[0] == "comment":
            content = _without_lines(row[1], _PRAGMA)
            if not content:
                continue
            # A ruler's row stays, emptied: the comment above it is still the definition's.
            row = (row[0], _without_lines(content, _RULER), *row[2:])
        kept.append(row)
    texts = kept
    leading = _leading_comments(chunked_definitions, texts, lines, prototypes, python)
    # A comment's owner is a qualified name, and several definitions can share one (a property's
    # getter and setter, a nested function defined in both branches of an `if`, Rust's cfg
    # variants, C++ overloads): each comment goes to the one whose lines hold it.
    twins: dict[str, list[int]] = {}
    held_by: dict[str | None, list[tuple[int, int]]] = {}  # each name's definitions' lines
    for d in definitions:
        twins.setdefault(d.qualified_name, []).append(d.start_line)
        held_by.setdefault(d.qualified_name, []).append((d.start_line, d.end_line))
    comments: dict[tuple[str | None, int], list[str]] = {}
    docstrings: list[str] = []  # the module's own, which no symbol owns
    module_docs: list[tuple[str, int, int]] = []  # the same, with their lines
    for element_type, content, line, end, owner, _parts in texts:
        if element_type == "comment" and owner is None and content:
            _cover_licence(covered, content, line, end)
        if element_type == "comment" and content and line not in leading.taken:
            starts = twins.get(owner, [0]) if owner is not None else [0]
            holder = max((start for start in starts if start <= line), default=starts[0])
            comments.setdefault((owner, holder), []).append(content)
        elif element_type == "docstring" and (
            owner not in held_by
            or (python and not any(start <= line <= end for start, end in held_by[owner]))
        ):
            # the module's own: Python names it by the module (`tqdm.contrib.telegram`), Rust's
            # `//!` by the file's module path, neither a definition of the file (a search user's
            # tqdm: every module's head was a comment, "Aliases", or empty). A Python docstring
            # is inside what it documents: `retry.py`'s is outside its `def retry`, which
            # shares the module's name (a Rust or C++ doc is above its item, outside it).
            docstrings.append(content)
            module_docs.append((content, line, end))
    members: dict[str, list[str]] = {}
    for d in definitions:
        if d.parent and d.kind != FIELD_KIND:  # a data member's line is its record's own line
            members.setdefault(d.parent, []).append(d.signature or d.name)

    # The chunked definitions' lines, with the comments, attributes and decorators right above
    # them, by first line: what a container's own lines leave out.
    spans = sorted(
        (first, d.end_line)
        for d, first in zip(chunked_definitions, firsts, strict=True)
        if d.parent is not None
    )
    chunks: list[ChunkRow] = []
    place, demoted = _path_facts(path)
    generated = is_generated(text)
    demoted = demoted or generated
    test_modules = frozenset(
        _CFG_TEST_MODULE.findall(text) if "cfg(" in text and language == "rust" else ()
    )
    # One look for an identifier of underscores only in the file, not one per definition.
    runs = _run_finder(text)
    macros: set[str] = set()
    declared_docs = _declared_docs(chunked_definitions, member_declarations, leading)
    for d, first in zip(chunked_definitions, firsts, strict=True):
        if d.kind == "macro":
            if d.qualified_name in macros:
                # One chunk for a macro defined in several branches of an `#if` (jansson's
                # JSON_INTEGER_FORMAT took three of a search's first four places): the first.
                _cover(covered, d, len(lines))
                continue
            macros.add(d.qualified_name)
        if _bodiless(d, lines):
            _cover(covered, d, len(lines))  # its line is no module-level code either
            continue
        doc = "\n".join(filter(None, (d.doc, leading.of.get((d.start_line, d.qualified_name)))))
        inner = " ".join(comments.get((d.qualified_name, d.start_line), ()))
        # A definition below its documented declaration in the same file (a header-only
        # library's out of line method: tclap) holds that doc too, beside its body's words: the
        # fold (search/code.py) gives it the declaration's score, not the two together.
        declared = ""
        if d.start_line not in member_declarations:
            declared = _declared_doc(declared_docs.get(d.qualified_name, ()), d)
        signature = _EMPTY_THROW.sub("", d.signature) if language == "cpp" else d.signature
        head = "\n".join(filter(None, (signature, doc, inner, declared)))
        # What leads it is its own too: its doc comment (in its head already), its decorators
        # and attributes (`@app.route("/login")`, `#[derive(..)]`: in its body). The file's
        # chunk held them, and a function's doc made the module a second answer.
        decorations = []
        if 0 < first < d.start_line:
            leads = lines[first - 1 : d.start_line - 1]
            decorations = [line for line in leads if not _COMMENT_START.match(line)]
        if d.kind in CONTAINER_KINDS:
            own = _own_lines(d, spans, lines)
            members_and_own = [*members.get(d.qualified_name, ()), *decorations, *own]
            text = "\n".join(members_and_own)
            if language == "cpp" and "throw" in text:
                text = _EMPTY_THROW.sub("", text)
            body = words_of(text, BODY_WORDS, _NOISE, c_names)
        else:
            lines_of = [*decorations, *lines[d.start_line - 1 : d.end_line]]
            text = "\n".join(lines_of)
            if language == "cpp" and "throw" in text:
                text = _EMPTY_THROW.sub("", text)
            body = _words(runs(text), BODY_WORDS, _NOISE, c_names)
        _cover(covered, d, len(lines), first)  # a record's fields too: its own, not the module's
        if d.start_line in leading.below:  # and the comment below a declaration that is its own
            _cover(covered, d._replace(end_line=leading.below[d.start_line]), len(lines))
        name = d.qualified_name
        if d.kind in CONTAINER_KINDS:  # `From<Utc> for DateTime<Local>`, `convert<bool>`
            name = specialized_name(name, d.kind, d.signature, language)
        test_function = language == "rust" and any(map(_RUST_TEST_ATTRIBUTE.match, decorations))
        chunks.append(
            ChunkRow(
                d.kind,
                name,
                d.start_line,
                d.end_line,
                demoted or test_function or _in_test_module(name, test_modules),
                title_of(name, compounds=c_names),
                place,
                head[:HEAD_CHARS],
                body,
            )
        )

    if language == "rust":
        for content, line, end in module_docs:
            chunks += _doc_sections(path, content, line, end)
    rest = _uncovered(lines, covered)
    # A licence says nothing of the code (googletest's 28 lines of BSD filled 181 of its 184
    # module heads, and cut "This file implements cardinalities." out of the embedded text).
    module_comments = " ".join(
        said for comment in comments.get((None, 0), ()) if (said := _without_licence(comment))
    )[:HEAD_CHARS]
    head = "\n".join([*docstrings, module_comments])
    body = _words(runs("\n".join(rest)), MODULE_WORDS, _NOISE, c_names)
    if head.strip() or body:
        last = max(line_count(source), 1)  # not len(lines): a final newline ends no line
        chunks.append(make_chunk("module", path, 1, last, path, head, body, generated))
    return chunks


def _declared_docs(
    definitions: Sequence[_Definition], declarations: Container[int], leading: _Leading
) -> dict[str, list[tuple[_Definition, str]]]:
    """Each qualified name's documented member declarations in the file, with their doc."""
    found: dict[str, list[tuple[_Definition, str]]] = {}
    for d in definitions:
        if d.start_line not in declarations:
            continue
        said = "\n".join(filter(None, (d.doc, leading.of.get((d.start_line, d.qualified_name)))))
        if said:
            found.setdefault(d.qualified_name, []).append((d, said))
    return found


def _declared_doc(declared: Sequence[tuple[_Definition, str]], d: _Definition) -> str:
    """The doc of `d`'s own declaration among `declared`: the one of its parameter types
    (index/signatures.py; read only here, for the few names declared and defined in one
    file), else the only one; '' when none is."""
    if not declared:
        return ""
    key = parameters_key(d.signature, d.name)
    same = [
        said
        for declaration, said in declared
        if key is not None and parameters_key(declaration.signature, declaration.name) == key
    ]
    if len(same) == 1:
        return same[0]
    return declared[0][1] if len(declared) == 1 else ""


# Comments written for a tool, not a reader: they say nothing of what the code does, and
# their words (`type ignore attr defined`) filled snippets (Flask's nested `view` functions).
_PRAGMA = re.compile(
    r"\s*(?:(?:type:\s*ignore|noqa|pragma:\s*no\s*(?:cover|branch)|fmt:\s*(?:on|off|skip)|nosec"
    r"|NOLINT(?:NEXTLINE|BEGIN|END)?|clang-format\s+(?:on|off)|LCOV_EXCL_(?:LINE|START|STOP)"
    r"|NOSONAR|cppcheck-suppress)(?![\w-])|IWYU\s+pragma:"
    r"|(?:pylint|isort|pyright|mypy):\s*[a-z][\w-]*(?:=|\[|,|\s*$)"
    # An editor's or the interpreter's: Emacs' `-*- coding: utf-8 -*-`, a bare `coding: utf-8`
    # (PEP 263), Vim's `vim: set ts=4 sw=4:` / `vim:ts=4:sw=4:et` (dateutil's module chunks
    # showed nothing else as their snippet).
    r"|-\*-.*-\*-\s*$|coding[:=]\s*[-\w.]+\s*$|(?:vim?|ex):\s*(?:set?\s+\S|[^\s=]*=).*$)"
)


SPLIT_DOC_LINES = 40  # a crate or module doc this long is cut at its headings


def _doc_sections(path: str, content: str, line: int, end: int) -> list[ChunkRow]:
    """A long Rust crate or module doc (`//!`, Markdown) as a README is chunked: a section
    chunk per heading, never cut inside a code fence (crossbeam-channel's 340-line crate doc was
    one module chunk, and its `# Disconnection` section answered at rank 134). What comes before
    the first heading stays the module chunk's head. Only a doc whose text has a line per line
    of the file (`//!` lines), so each section's lines are its own."""
    if end - line + 1 < SPLIT_DOC_LINES or content.count("\n") != end - line or "#" not in content:
        return []
    from repomap.index import markdown  # its patterns compile on import: only for such a doc

    offset = line - 1
    sections = [
        (number, s.name, s.level, s.start_line + offset, s.end_line + offset, s.content)
        for number, s in enumerate(markdown.parse(content).sections, 1)
        if s.level
    ]
    return doc_chunks(path, sections)


def _without_lines(comment: str, pattern: re.Pattern[str]) -> str:
    """A comment block without its lines that `pattern` matches ('' when that is all it is):
    _PRAGMA's (a linter's, type checker's or formatter's instruction) or _RULER's."""
    if "\n" not in comment:
        return "" if pattern.match(comment) else comment
    return "\n".join(line for line in comment.split("\n") if not pattern.match(line)).strip()


# A ruler: one character repeated, a line that divides a file for the eye and says nothing
# (`//-----`, `/*****/`, `# =====`). muparser's test methods showed a ruler as their snippet.
_RULER = re.compile(r"\s*([^\w\s]|_)\1{3,}\s*$")


def _in_test_module(qualified_name: str, test_modules: frozenset[str] = frozenset()) -> bool:
    """A Rust or C++ name inside a `tests` or `test` module or namespace (`mod tests {`), or
    inside one of `test_modules` (the file's `#[cfg(test)] mod NAME {`)."""
    return any(
        part in ("tests", "test") or part in test_modules
        for part in qualified_name.split("::")[:-1]
    )


# A Rust test or benchmark function's attribute: `#[test]`, `#[bench]`, `#[tokio::test]`
# (not `#[test_case(..)]`'s argument lists, which come with `#[test]`'s own line or not at all).
_RUST_TEST_ATTRIBUTE = re.compile(r"\s*#\[(?:\w+::)*(?:test|bench)\b(?!_)")

# A Rust module compiled only for tests under another name: memchr's `#[cfg(test)] mod
# testsimples {` helpers ranked first for "find first occurrence of a substring".
_CFG_TEST_MODULE = re.compile(
    r"#\[cfg\((?:all\()?test\b[^\]\n]*\]\s*(?:#\[[^\]\n]*\]\s*)*"
    r"(?:pub(?:\([^)\n]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*\{"
)


def _own_lines(d: _Definition, spans: list[tuple[int, int]], lines: list[str]) -> list[str]:
    """A container's lines but those of the definitions inside it that are chunks of their own
    (methods, nested records) with the comments above them: its fields, enumerators and
    variants with their comments, which no symbol (a C struct's field, a Rust variant) or no
    member signature (the comment beside an enumerator) brings to its chunk. `spans`: the
    chunked definitions' (first, last) lines, sorted, what leads them included (leading_start)."""
    own: list[str] = []
    line = d.start_line + 1  # its first line is its signature, in the chunk's head
    at = bisect.bisect_right(spans, (d.start_line, len(lines) + 1))
    for start, end in spans[at:]:
        if start > d.end_line:
            break
        if start < line or end > d.end_line:
            continue  # inside one already left out, or not inside this one
        own += lines[line - 1 : start - 1]
        line = end + 1
    own += lines[line - 1 : d.end_line]
    return own


def _cover(covered: bytearray, d: _Definition, last_line: int, first: int = 0) -> None:
    """Mark a definition's lines (from `first` when what leads it is its own) as chunked, so
    the file's module chunk leaves them out."""
    # A slice's length must match what replaces it, or the bytearray grows.
    start, end = max(first or d.start_line, 0), min(d.end_line, last_line)
    if end >= start:
        covered[start : end + 1] = b"\x01" * (end + 1 - start)


def _cover_licence(covered: bytearray, comment: str, line: int, end: int) -> None:
    """Mark a module comment's licence lines (from its licence's line, or an SPDX line alone)
    as chunked: a licence's words said nothing of the module's code, yet were its body's first
    words (env_logger's Apache/MIT notice met "copied, modified or distributed")."""
    last = len(covered) - 2
    # SPDX lines each (their line kept, blank: the licence below is found at its own line)
    blanked = _SPDX_LINE.sub(lambda spdx: "\n" if spdx[0].endswith("\n") else "", comment)
    if blanked != comment:
        for offset, text in enumerate(comment.split("\n")):
            if "SPDX-License-Identifier" in text and line + offset <= last:
                covered[line + offset] = 1
    found = LICENCE.search(blanked)
    if found is None:
        return
    first, end = line + blanked.count("\n", 0, found.start()), min(end, last)
    if end >= first:  # a slice's length must match what replaces it
        covered[first : end + 1] = b"\x01" * (end + 1 - first)


def _uncovered(lines: list[str], covered: bytearray) -> list[str]:
    """The lines whose number is not marked in `covered`, found a run at a time."""
    found: list[str] = []
    number = 1
    while (number := covered.find(0, number)) != -1 and number <= len(lines):
        after = covered.find(1, number)
        after = len(lines) + 1 if after == -1 else after
        found += lines[number - 1 : after - 1]
        number = after
    return found


class _Leading(NamedTuple):
    of: dict[tuple[int, str], str]  # (start line, qualified name) -> the comment above it
    taken: set[int]  # first lines of the comments given to a definition
    below: dict[int, int]  # a declaration's first line -> the last of the comment below it


# A comment ends at most this many lines above the definition it describes (_may_separate).
LEADING_GAP = 2
_COMMENT_START = re.compile(r"\s*(//|/\*|\*|#(?!\[))")  # C, C++, Rust, Python
# C++'s empty exception specification says a function throws nothing; its word `throw` made
# libconfig's destructors the first answers to "throw an exception when a setting is missing".
_EMPTY_THROW = re.compile(r"\bthrow\s*\(\s*\)")
# Where `#` starts no comment: a C preprocessor line's comment (`#endif  // GUARD_HPP`) trails
# code, and was the next function's leading comment (its snippet read "answer() GUARD_HPP").
_BRACE_COMMENT_START = re.compile(r"\s*(//|/\*|\*)")  # C, C++, Rust


def _leading_comments(
    definitions: Sequence[_Definition],
    texts: Sequence[tuple],
    lines: Sequence[str],
    prototypes: Container[int] = (),
    docstrings: bool = False,
) -> _Leading:
    """The plain comment block right above each definition that has no doc comment of its own
    (with `docstrings`, Python's: above one with a docstring too, which is inside its body;
    marshmallow's `# Retries with exponential backoff` above a documented `def` was the
    module's).

    Extractors give a definition only its language's doc syntax (a docstring, `///`, `/**`);
    the `//` or `#` comment a C++ method or a Rust helper is commonly described with belongs
    to the enclosing class or file, so a search found the class by the method's words and the
    method by none (spdlog's `// enqueue immediately. overrun oldest message ...` above
    `enqueue_nowait`; bench/README.md, the failure analysis of issue 17). The block is moved to
    the definition: its container's chunk no longer holds it."""
    by_end: dict[int, tuple[int, str]] = {}
    starts = _COMMENT_START if docstrings else _BRACE_COMMENT_START  # Python's `#`, or none
    for element_type, content, line, end, _owner, _parts in texts:
        # A comment trailing a statement on its line is not one above a definition.
        if element_type == "comment" and 0 < line <= len(lines) and starts.match(lines[line - 1]):
            by_end[end] = (line, content)
    found = _Leading({}, set(), {})
    if not by_end:
        return found
    if prototypes:
        _trailing_comments(definitions, by_end, lines, prototypes, found)
    # The comment a file begins with is the file's (a licence, `$Id: lgc.c $ Garbage Collector`),
    # not the first definition's below it, unless that definition (or its decorator) follows it
    # with no blank line or other comment between.
    first_line = next((n for n, text in enumerate(lines, 1) if text.strip()), 0)
    for d in definitions:  # the chunked ones
        if (d.doc and not docstrings) or (d.start_line, d.qualified_name) in found.of:
            continue
        if not 0 < d.start_line <= len(lines):
            continue
        # Most definitions have no comment ending right above them: nothing else to look at.
        if by_end.keys().isdisjoint(range(d.start_line - LEADING_GAP, d.start_line)):
            continue
        indent = _indent(lines[d.start_line - 1])
        end = next(
            (
                d.start_line - gap
                for gap in range(1, LEADING_GAP + 1)
                if d.start_line - gap in by_end
                and all(_may_separate(lines[n - 1])
                        for n in range(d.start_line - gap + 1, d.start_line))
            ),
            None,
        )  # fmt: skip
        block: list[str] = []
        # Indented as the definition: a deeper comment ends the body above it (click's parser
        # explains the previous method's loop right above `_match_long_opt`).
        while (
            end is not None
            and end in by_end
            and by_end[end][0] not in found.taken
            and _indent(lines[by_end[end][0] - 1]) == indent
        ):
            line, content = by_end[end]
            if line == first_line and (
                block or any(not lines[n - 1].strip() for n in range(end + 1, d.start_line))
            ):
                break  # another comment or a blank line between: the file's own comment
            block.append(content)
            found.taken.add(line)
            end = line - 1
        if block:
            found.of[(d.start_line, d.qualified_name)] = "\n".join(filter(None, reversed(block)))
    return found


def _trailing_comments(
    definitions: Sequence[_Definition],
    by_end: dict[int, tuple[int, str]],
    lines: Sequence[str],
    prototypes: Container[int],
    found: _Leading,
) -> None:
    """The comment a C header writes right below a function's declaration, a blank line
    before the next one (zlib.h's API: `int inflateSync(z_streamp strm);` then `/* Skips
    invalid compressed data ... */`): the declaration's, not the next one's above which it
    stands (each prototype had its predecessor's description; bench/README.md)."""
    by_start = {line: (end, content) for end, (line, content) in by_end.items()}
    for d in definitions:
        if d.doc or d.start_line not in prototypes or d.end_line + 1 not in by_start:
            continue
        end, content = by_start[d.end_line + 1]
        if end < len(lines) and lines[end].strip():
            continue  # the next line is code: a comment above what follows, as ever
        found.of[(d.start_line, d.qualified_name)] = content
        found.taken.add(d.end_line + 1)
        found.below[d.start_line] = end


# `Slice(const Slice&) = delete;`, `~Pool() = default;`: C++ definitions with nothing written
# in them, whose chunk was their name alone (LevelDB's deleted `MemTable(const MemTable&)` ranked
# third for "how is the memtable flushed to disk").
_NO_BODY = re.compile(r"=\s*(?:delete|default)\s*;\s*(?://.*)?$")


def _bodiless(d: _Definition, lines: Sequence[str]) -> bool:
    """A function deleted or defaulted where it is declared: no body, nothing it does."""
    if d.kind not in ("function", "method") or not 0 < d.start_line <= d.end_line <= len(lines):
        return False
    if d.end_line - d.start_line > 3 or not _NO_BODY.search(lines[d.end_line - 1]):
        return False
    return "{" not in "".join(lines[d.start_line - 1 : d.end_line])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# What may stand between a comment and the definition it describes: a blank line, or the start
# of the definition's own header that its lines leave out (a decorator, an attribute, a
# template line). Anything else (an `#include`, an `import`, a statement) is what the comment
# was about.
_HEADER_START = ("@", "#[", "[[", "template", "__attribute__")


def _may_separate(line: str) -> bool:
    stripped = line.strip()
    return (
        not stripped
        or stripped.startswith(_HEADER_START)
        or DECLARATION_MACRO_LINE.fullmatch(stripped) is not None
    )


DOC_PIECE_CHARS = 1500  # a longer section is cut at paragraph ends into pieces about this long
_FENCE = re.compile(r"^\s*(```|~~~)")


def doc_chunks(
    path: str, sections: Iterable[tuple[int, str, int, int, int, str]]
) -> list[ChunkRow]:
    """Chunks of a Markdown or text file: a section each (named by its heading path), a long
    one cut at paragraph ends, never inside a code fence or a table, the last paragraph of a
    piece repeated at the start of the next so an answer that spans the cut is found whole.
    """
    chunks: list[ChunkRow] = []
    trail: list[tuple[int, str]] = []  # (level, heading) of the enclosing headings
    rows = list(sections)
    for number, (_ordinal, heading, level, start_line, end_line, content) in enumerate(rows):
        if level:
            trail = [(lvl, text) for lvl, text in trail if lvl < level] + [(level, heading)]
        lines = content.split("\n") if content else []
        first = end_line - len(lines) + 1  # content ends at end_line; leading blanks dropped
        if number + 1 < len(rows) and rows[number + 1][3] <= end_line:
            # A section's text runs on over its subsections: those are chunks of their own.
            own_end = rows[number + 1][3] - 1
            lines = lines[: max(own_end - first + 1, 0)]
            while lines and not lines[-1].strip():
                lines.pop()
        name = " > ".join(text for _, text in trail) or path
        title = trail[-1][1] if trail else heading
        for piece_start, piece_end in _pieces(lines):
            text = "\n".join(lines[piece_start:piece_end])
            if not text.strip() and not level:
                continue
            head = f"{title}\n{text[:400]}" if title else text[:400]
            start = start_line if piece_start == 0 and level else first + piece_start
            chunks.append(
                make_chunk("section", name, start, first + piece_end - 1,
                           path, head, words_of(text, BODY_WORDS))
            )  # fmt: skip
    return chunks


def _pieces(lines: list[str]) -> list[tuple[int, int]]:
    """[start, end) line ranges of about DOC_PIECE_CHARS, cut at blank lines outside fences and
    tables, each after the first starting with the previous piece's last paragraph."""
    if sum(len(line) + 1 for line in lines) <= DOC_PIECE_CHARS:
        return [(0, len(lines))]
    cuts = []  # blank lines where a piece may end: paragraph ends
    fenced = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and not line.strip():
            previous = lines[number - 1] if number else ""
            if not previous.lstrip().startswith("|"):  # a table ends at its blank line: fine
                cuts.append(number)
    pieces = []
    start, size, last_paragraph = 0, 0, 0
    cut_iter = iter(cuts + [len(lines)])
    previous_cut = 0
    # Characters before each line (its line break counted): a range's size is a difference,
    # where summing the lines of each range again made a long file quadratic.
    before = [0, *accumulate(map((1).__add__, map(len, lines)))]
    for cut in cut_iter:
        size = before[cut] - before[start]
        if size > DOC_PIECE_CHARS and previous_cut > start:
            pieces.append((start, previous_cut))
            overlap = before[previous_cut] - before[last_paragraph]
            repeat = last_paragraph > start and overlap <= DOC_PIECE_CHARS // 3
            start = last_paragraph if repeat else previous_cut  # a long paragraph: not twice
        last_paragraph, previous_cut = previous_cut, cut
    pieces.append((start, len(lines)))
    return pieces


# Records are chunks too, so `repomap search` finds "when did we change the timeout" in a commit
# message and "which setting holds the cache backend" in a data file. Their ids sit above every
# code chunk's (files.id * ROWS_PER_FILE + ordinal stays far below 2**56).
DATA_CHUNK_BASE = 1 << 56  # + data_files.id * ROWS_PER_FILE + ordinal
COMMIT_CHUNK_BASE = 1 << 60  # + commits.id
RECORD_LINE_CHARS = 300  # of one record in a data chunk


def data_chunks(
    path: str, records: Iterable[tuple[str, Sequence[tuple[str, str]], int | None]]
) -> list[ChunkRow]:
    """Chunks of a data file: its records as `key = value` (a leaf) or `key: field = value, …`
    (a row) lines, in pieces of about DOC_PIECE_CHARS, named by their first and last keys."""
    chunks: list[ChunkRow] = []
    lines: list[str] = []
    keys: list[str] = []
    first_line = last_line = 0
    size = 0

    def flush() -> None:
        if not lines:
            return
        text = "\n".join(lines)
        name = keys[0] if len(keys) == 1 else f"{keys[0]} … {keys[-1]}"
        title = f"{path.rsplit('/', 1)[-1]} {words_of(' '.join(keys), 60, frozenset())}"
        head = text[:HEAD_CHARS]
        body = words_of(text, BODY_WORDS)
        chunks.append(
            ChunkRow("data", name, first_line, max(last_line, first_line), is_demoted_path(path),
                     title, place_of(path), head, body)
        )  # fmt: skip

    for key, fields, line in records:
        if len(fields) == 1 and fields[0][0] == "value":
            text = f"{key} = {fields[0][1]}"
        else:
            text = f"{key}: " + ", ".join(f"{name} = {value}" for name, value in fields)
        text = text[:RECORD_LINE_CHARS]
        if lines and size + len(text) > DOC_PIECE_CHARS:
            flush()
            lines, keys, size = [], [], 0
        if not lines:
            first_line = line or 0
        lines.append(text)
        keys.append(key)
        last_line = line or first_line
        size += len(text) + 1
    flush()
    return chunks


def commit_chunk(subject: str, body: str, paths: Sequence[str]) -> ChunkRow:
    """A commit as a chunk: its subject the title, its message the head, the words of its
    message and changed paths the body (their places in `place`)."""
    title = title_of(subject)
    head = f"{subject}\n{body}".strip()[:HEAD_CHARS]
    shown = " ".join(paths[:40])
    words = words_of(f"{body} {shown}", BODY_WORDS)
    place = words_of(" ".join(p.rsplit(".", 1)[0] for p in paths[:40]), 80, frozenset())
    return ChunkRow("commit", subject, 0, 0, False, title, place, head, words)
