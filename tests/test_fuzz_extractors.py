"""Every extractor, fed random bytes, code-like noise and damaged real files: no exception
escapes, every record it returns is well-formed, and what it extracts from a valid file is
stable (the same bytes give the same records; a trailing comment changes nothing above it)."""

from __future__ import annotations

import os
import pickle
import random
from functools import cache
from pathlib import Path

import pytest
from conftest import CORPORA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repomap.extractors import extract
from repomap.extractors.model import ELEMENT_TYPES, KINDS, Extraction
from synthetic_repo import cpp_module, python_module, rust_module

LANGUAGES = ("python", "rust", "c", "cpp")
SUFFIX = {"python": ".py", "rust": ".rs", "c": ".c", "cpp": ".h"}
COMMENT = {
    "python": "# a trailing comment",
    "rust": "// a trailing comment",
    "c": "// trailing",
    "cpp": "// trailing",
}
EXAMPLES = int(os.environ.get("REPOMAP_FUZZ_EXAMPLES", "60"))  # CI budget; raise it locally
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces each language is made of, joined at random: more structure than random bytes reach.
PIECES = {
    "python": [
        "def f(", "class C", "(", ")", ":", "\n", "    ", "'", '"', "'''", '"""', "#", "\\",
        "lambda", "x", "=", "import os", "@deco", "async ", "yield", "[", "]", "{", "}", "f'",
        "r'", "b'", "print 'py2'", "\t", "\r\n", "\0", "\ufeff", "é", "if x:", "else:", ",",
    ],
    "rust": [
        "fn f(", "struct S", "impl", "trait T", "mod m", "enum E", "{", "}", "(", ")", "<", ">",
        ";", "\n", "//", "/*", "*/", "///", "//!", '"', "r#\"", '"#', "'a", "b'x'", "macro_rules!",
        "x", "=", "pub", "::", "#[derive(Debug)]", "\\", "é", "\0", "'", "where", "->",
    ],
    "cpp": [
        "namespace n", "class C", "struct S", "template <typename T>", "{", "}", "(", ")", ";",
        "\n", "//", "/*", "*/", "///", '"', 'R"x(', ')x"', "#define M", "#if A", "#endif", "<",
        ">", "::", "~", "operator", "x", "=", "virtual", "\\\n", "'", "é", "\0", "enum E", ":",
    ],
    "c": [
        "struct S", "union U", "enum E", "typedef", "static", "int f(", "{", "}", "(", ")", ";",
        "\n", "//", "/*", "*/", "/**", "*", '"', "#define M", "#define F(a)", "#if A", "#endif",
        "x", "=", ",", "[", "]", "\\\n", "'", "é", "\0", "EXPORT_SYMBOL(f)", "__attribute__((x))",
        ".a =", "extern \"C\" {",
    ],
}  # fmt: skip


def _check_records(result: Extraction, source: bytes, language: str) -> None:
    """What the writer and every query rely on, whatever the input was."""
    assert isinstance(result, Extraction)
    lines = source.count(b"\n") + 1
    # Byte offsets hold for what the indexer hands over, UTF-8 (index.decode turns the rest away
    # or re-encodes it); in other bytes, Python's count each replacement character as 3 bytes.
    utf8 = _is_utf8(source)
    for symbol in result.symbols:
        assert symbol.kind in KINDS, symbol
        assert symbol.name and symbol.qualified_name, symbol
        assert 1 <= symbol.start_line <= symbol.end_line <= lines, symbol
        assert not utf8 or 0 <= symbol.start_byte <= symbol.end_byte <= len(source), symbol
        assert isinstance(symbol.signature, str) and "\0" not in symbol.name
    for text in result.texts:
        assert text.element_type in ELEMENT_TYPES, text
        assert 1 <= text.line <= text.end_line <= lines, text
        assert isinstance(text.content, str)
    for reference in result.references:
        assert reference.name, reference
        assert 1 <= reference.line <= lines, reference
    assert result.status in ("ok", "fallback")
    pickle.loads(pickle.dumps(result))  # it crosses from a worker process to the writer


def _is_utf8(source: bytes) -> bool:
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(source=st.binary(max_size=3000))
def test_random_bytes_never_raise(language, source):
    _check_records(extract(language, source, "fuzz" + SUFFIX[language]), source, language)


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(data=st.data())
def test_code_like_noise_never_raises(language, data):
    pieces = data.draw(st.lists(st.sampled_from(PIECES[language]), max_size=200))
    source = "".join(pieces).encode("utf-8", "surrogatepass")
    _check_records(extract(language, source, "noise" + SUFFIX[language]), source, language)


C_MODULE = b"""\
// SPDX-License-Identifier: GPL-2.0
#include <linux/list.h>
#include "local.h"

#define MAX_ITEMS 16
#define item_next(i) ((i)->next)

/**
 * struct item - one entry
 * @next: the following entry
 */
struct item {
	struct item *next;
	union { int n; float f; } value;
};

typedef enum { ITEM_NEW, ITEM_OLD = 2 } item_state;

static LIST_HEAD(items);
static const char *names[] = { "first" "second", "third" };

/**
 * item_add() - add an item
 * @item: what to add
 *
 * Return: 0, or -ENOMEM.
 */
static int __init item_add(struct item *item)
{
	if (!item)
		return -ENOMEM;
	pr_info("added %s\\n", names[0]);
	return 0;
}
EXPORT_SYMBOL(item_add);

static const struct file_operations item_fops = {
	.open = item_add,
};
"""


@cache
def _seed_files(language: str) -> tuple[bytes, ...]:
    """Small valid files: generated modules, repomap's own sources, and corpus files if present."""
    rng = random.Random(3)
    if language == "c":
        seeds = [C_MODULE]
    else:
        make = {"python": python_module, "rust": rust_module, "cpp": cpp_module}[language]
        seeds = [make(rng, number).encode() for number in range(3)]
    if language == "python":
        own = sorted(Path(__file__).resolve().parents[1].glob("extractors/*.py"))
        seeds += [path.read_bytes() for path in own if path.stat().st_size < 12_000]
    folder = CORPORA / {"python": "python", "c": "large"}.get(language, language)
    if folder.is_dir():
        folder = folder / "kernel" if language == "c" else folder
        pattern = {"python": "*.py", "rust": "*.rs", "c": "*.c", "cpp": "*.h"}[language]
        found = sorted(p for p in folder.rglob(pattern) if 200 < p.stat().st_size < 6_000)
        seeds += [path.read_bytes() for path in random.Random(5).sample(found, min(8, len(found)))]
    return tuple(seeds)


def _mutate(source: bytes, rng: random.Random, language: str) -> bytes:
    """One to three edits a fuzzer or a half-saved editor buffer makes."""
    data = bytearray(source)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(data) + 1)
        span = rng.randint(0, 60)
        edit = rng.choice(("cut", "duplicate", "insert", "flip", "truncate", "piece"))
        if edit == "cut":
            del data[at : at + span]
        elif edit == "duplicate":
            data[at:at] = data[at : at + span]
        elif edit == "insert":
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif edit == "flip" and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif edit == "truncate":
            del data[at:]
        else:
            data[at:at] = rng.choice(PIECES[language]).encode()
    return bytes(data)


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_damaged_real_files_never_raise(language, seed):
    rng = random.Random(seed)
    source = _mutate(rng.choice(_seed_files(language)), rng, language)
    _check_records(extract(language, source, "damaged" + SUFFIX[language]), source, language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_extraction_is_deterministic_on_valid_files(language):
    for source in _seed_files(language):
        first = extract(language, source, "same" + SUFFIX[language])
        assert extract(language, source, "same" + SUFFIX[language]) == first


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_trailing_comment_line_changes_no_symbol_above_it(language):
    for source in _seed_files(language):
        path = "stable" + SUFFIX[language]
        before = extract(language, source, path)
        body = source if source.endswith(b"\n") else source + b"\n"
        after = extract(language, body + COMMENT[language].encode() + b"\n", path)
        assert after.symbols == before.symbols
        assert after.references == before.references
        assert after.status == before.status


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_trailing_comment_after_a_blank_line_adds_one_comment_and_changes_no_text(language):
    for source in _seed_files(language):
        path = "stable" + SUFFIX[language]
        before = extract(language, source, path)
        body = (source if source.endswith(b"\n") else source + b"\n") + b"\n"
        after = extract(language, body + COMMENT[language].encode() + b"\n", path)
        assert after.texts[:-1] == before.texts
        last = after.texts[-1]
        assert (last.element_type, last.line) == ("comment", body.count(b"\n") + 1)


CODE_THEN_COMMENTS = {
    "python": b"x = 1  # the count\n# Helper for parsing.\ndef parse():\n    pass\n",
    "rust": b"const X: u8 = 1;  // the count\n// Helper for parsing.\nfn parse() {}\n",
    "c": b"int x = 1;  // the count\n// Helper for parsing.\nint parse(void);\n",
    "cpp": b"int x = 1;  // the count\n// Helper for parsing.\nint parse();\n",
}


@pytest.mark.parametrize(
    "language",
    [
        "python",
        "rust",
        "c",
        "cpp",
    ],
)
def test_a_comment_after_code_is_not_merged_with_the_comment_lines_below(language):
    """`x = 1  # the count` describes its line; the next line's comment documents what follows.
    Python keeps them apart (a block is consecutive lines holding only a comment); Rust and
    C++ join them into one element, so a search for either finds both at line 1."""
    texts = extract(language, CODE_THEN_COMMENTS[language], "merge" + SUFFIX[language]).texts
    assert [(t.content, t.line) for t in texts if t.element_type == "comment"] == [
        ("the count", 1),
        ("Helper for parsing.", 2),
    ]


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_damage_below_a_definition_leaves_the_definitions_above_it(language, seed):
    """Cutting a file short keeps every definition that ended before the cut, unchanged."""
    rng = random.Random(seed)
    source = rng.choice(_seed_files(language))
    cut = rng.randrange(len(source) + 1)
    complete = extract(language, source, "cut" + SUFFIX[language])
    damaged = extract(language, source[:cut] + b"\n", "cut" + SUFFIX[language])
    # Rust items inside a macro call (`cfg_if! { .. }`) are read as items once the call's
    # braces close: cut inside it, they are a token tree again, as before rust_macros.py.
    open_calls = _macro_calls_open_at(source, cut) if language == "rust" else []
    before_cut = [
        (s.name, s.kind, s.start_line)
        for s in complete.symbols
        if s.end_byte < cut
        and not s.parent
        and not any(start <= s.start_byte < end for start, end in open_calls)
    ]
    found = {(s.name, s.kind, s.start_line) for s in damaged.symbols}
    missing = [s for s in before_cut if s not in found]
    assert not missing, f"lost {missing} when cut at byte {cut}"


def _macro_calls_open_at(source: bytes, cut: int) -> list[tuple[int, int]]:
    """The item-level Rust macro calls (rust_macros' candidates) the cut falls inside."""
    from repomap.extractors import rust_macros
    from repomap.extractors.treesitter import parse

    calls = rust_macros._calls(parse("rust", source))  # noqa: SLF001 - the same candidates
    return [(c.start_byte, c.end_byte) for c in calls if c.start_byte < cut < c.end_byte]


def test_a_use_list_outside_use_gives_no_reference_with_an_empty_name():
    """Found by test_damaged_real_files_never_raise (seed 2390): a damaged `use` line.

    tree-sitter reads `rate::ops::{Deref, DerefMut};` as a struct expression whose type name is
    MISSING (error recovery made it up): it used to become a reference with an empty name. The
    path's parts are references; the braces hold shorthand field initializers, fields named in
    a struct literal, which are references since extractor 56 (`Pool { depth }`).
    """
    references = extract("rust", b"rate::ops::{Deref, DerefMut};\n", "damaged.rs").references
    assert [(r.name, r.line) for r in references] == [
        ("rate", 1), ("ops", 1), ("Deref", 1), ("DerefMut", 1)
    ]  # fmt: skip
    assert all(r.name for r in references)


def test_an_operator_read_up_to_a_nul_byte_is_no_symbol() -> None:
    """Found by the noise test: in a broken header, `operator` followed by other text and a
    NUL was read as a function named with the NUL in it."""
    source = b'operator#define M//:\x00enum E;"}::~)x"//struct S::class C}"virtual\n'
    result = extract("cpp", source, "noise.h")
    _check_records(result, source, "cpp")
    assert all("\0" not in symbol.name for symbol in result.symbols)
