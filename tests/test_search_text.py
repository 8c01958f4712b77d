"""search_text on a real index of Python, Rust and C++ fixture files (repomap/query.py)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sqlite3
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repomap import config, store
from repomap.errors import BadArgument, BadQuery, CorruptIndex, IndexOutdated, RepomapError
from repomap.index import pipeline as indexer
from repomap.search import querylang
from repomap.search import text as query
from repomap.search.text import SearchResult, search_text
from repomap.store.literal import set_literal_index

HAVE_RUST = importlib.util.find_spec("repomap.extractors.rust") is not None
HAVE_CPP = importlib.util.find_spec("repomap.extractors.cpp") is not None

PYTHON_FILES = {
    "src/db/pool.py": '''
        """Connection pooling for the database layer."""

        # TODO: the ConnectionPool should expire idle connections
        class ConnectionPool:
            """A pool of open connections; see connection_pool_size."""

            def get(self):
                # self.pool is locked by the caller
                raise ValueError("Failed to open %s: %d" % (1, 2))

            def release(self):
                "Give a connection back; thread safe."
                return "error: don't release twice"
        ''',
    "src/db/timeouts.py": '''
        def wait(deadline):
            """Wait until the database timeout or the deadline, whichever is first."""
            # a timeout without a deadline waits for ever
            return "foo-bar->baz"


        MESSAGE = "failed to open the file"  # lower case on purpose
        ''',
    "app/views.py": '''
        """Views that render pages; not about databases."""

        # not a pool of threads: a thread pool lives elsewhere
        TEMPLATE = "Hello, {name}! Über naïve café."
        ''',
}
RUST_FILES = {
    "crates/net/src/socket.rs": """
        //! Socket helpers.

        /// A ConnectionPool hands out sockets; see `connection_pool_size`.
        pub struct ConnectionPool {
            size: usize, // TODO: grow the pool on demand
        }

        impl ConnectionPool {
            /// Opens the socket or fails with a message.
            pub fn open(&self) -> Result<(), String> {
                Err(format!("Failed to open {}: {}", "a", 1))
            }
        }
        """,
}
CPP_FILES = {
    "include/db/vec.hpp": """
        #include <vector>
        // std::vector keeps the items; ptr->next walks them. #include order matters.
        namespace db {
        /// Returns the C++ pool size.
        int pool_size();
        const char* kMessage = "Failed to open %s: %d";
        }
        """,
}


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def build(root: Path) -> Path:
    """An index of `root` that keeps its trigram index for literal search, whatever its size
    (a small tree's keeps none: read_db below has none)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REPOMAP_LITERAL_INDEX_BYTES", "0")
        summary = indexer.run(config.resolve(root, workers=1))
    assert not summary.skipped, summary.skipped
    return Path(summary.db_path)


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search") / "repo"
    write_files(root, PYTHON_FILES)
    if HAVE_RUST:
        write_files(root, RUST_FILES)
    if HAVE_CPP:
        write_files(root, CPP_FILES)
    return build(root)


@pytest.fixture
def db(db_path: Path) -> Iterator:
    with store.reading(db_path) as database:
        yield database


def search(db, text: str, **options) -> SearchResult:
    return search_text(db, text, log=False, **options)


def places(result: SearchResult) -> list[tuple[str, int]]:
    return [(hit.file_path, hit.line_number) for hit in result.hits]


def contents(result: SearchResult) -> list[str]:
    return [hit.content for hit in result.hits]


# --- syntax --------------------------------------------------------------------------------------


def test_bare_words_match_in_any_order(db) -> None:
    assert search(db, "database timeout").hits == search(db, "timeout database").hits
    assert contents(search(db, "database timeout")) == [
        "Wait until the database timeout or the deadline, whichever is first."
    ]


def test_a_phrase_needs_its_words_adjacent_and_in_order(db) -> None:
    assert contents(search(db, '"timeout without"')) == [
        "a timeout without a deadline waits for ever"
    ]
    assert search(db, '"without timeout"').hits == ()
    assert len(search(db, "without timeout").hits) == 1


def test_and_or_and_parentheses_combine(db) -> None:
    both = contents(search(db, "database AND (timeout OR deadline)"))
    assert both == ["Wait until the database timeout or the deadline, whichever is first."]
    either = {
        hit.line_number for hit in search(db, "timeout OR deadline", path="src/db/timeouts.py").hits
    }
    assert either == {2, 3}  # line 1 is code: `def wait(deadline):`


def test_not_excludes_elements(db) -> None:
    with_thread = set(contents(search(db, "pool")))
    without = set(contents(search(db, "pool NOT thread")))
    assert "not a pool of threads: a thread pool lives elsewhere" in with_thread - without
    assert without and all("thread" not in text.lower() for text in without)
    assert search(db, "pool AND NOT thread").hits == search(db, "pool NOT thread").hits


def test_lower_case_operator_words_are_plain_words(db) -> None:
    assert contents(search(db, "not about")) == ["Views that render pages; not about databases."]


def test_a_prefix_matches_every_word_starting_with_it(db) -> None:
    found = contents(search(db, "connect*"))
    assert "Connection pooling for the database layer." in found
    assert "A pool of open connections; see connection_pool_size." in found
    assert set(contents(search(db, "con*"))) >= set(found)  # a 3-character prefix: its own index
    assert contents(search(db, "timeo*", path="app/")) == []
    assert search(db, "wh*").total >= 1  # a 2-character prefix still works


def test_a_phrase_can_end_in_a_prefix_word(db) -> None:
    assert contents(search(db, "idle conn*")) == [
        "TODO: the ConnectionPool should expire idle connections"
    ]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("self.pool", "self.pool is locked by the caller"),
        ("error:", "error: don't release twice"),
        ("don't", "error: don't release twice"),
        ("foo-bar", "foo-bar->baz"),
        pytest.param("std::vector", "std::vector keeps the items; ptr->next walks them. #include order matters.",
                     marks=pytest.mark.skipif(not HAVE_CPP, reason="no C++ extractor")),
        pytest.param("#include", "std::vector keeps the items; ptr->next walks them. #include order matters.",
                     marks=pytest.mark.skipif(not HAVE_CPP, reason="no C++ extractor")),
        pytest.param("C++", "Returns the C++ pool size.",
                     marks=pytest.mark.skipif(not HAVE_CPP, reason="no C++ extractor")),
        ("ptr->next", None),  # C++ only; in Python it must simply not fail
    ],
)  # fmt: skip
def test_punctuation_words_match_as_the_phrase_of_their_words(db, query: str, expected) -> None:
    result = search(db, query)
    if expected is not None:
        assert expected in contents(result)
    assert result.notes == ()


def test_punctuation_words_never_read_as_fts5_syntax(db) -> None:
    for text in ("content:pool", "subwords:pool", "NEAR(pool thread)", "^pool", "pool +", "a - b",
                 "{content}: pool", '"AND"', "OR*"):  # fmt: skip
        search(db, text)  # no error: every word is quoted


def test_a_word_without_letters_or_digits_matches_nothing_and_says_to_use_literal(db) -> None:
    result = search(db, "->")
    assert result.hits == () and result.total == 0
    assert "literal" in result.notes[0] and "->" in result.notes[0]
    assert contents(search(db, "foo -> bar")) == ["foo-bar->baz"]  # the arrow is left out
    assert "foo-bar->baz" in contents(search(db, "->", mode="literal"))


def test_identifiers_are_found_by_their_parts(db) -> None:
    found = contents(search(db, "connection pool"))
    assert "TODO: the ConnectionPool should expire idle connections" in found  # PascalCase
    assert "A pool of open connections; see connection_pool_size." in found  # snake_case
    phrase = contents(search(db, '"connection pool"'))
    assert "TODO: the ConnectionPool should expire idle connections" in phrase
    assert "A pool of open connections; see connection_pool_size." in phrase


def test_an_identifier_is_still_found_as_typed_and_ranks_first(db) -> None:
    result = search(db, "ConnectionPool", path="src/")
    assert result.hits[0].content == "TODO: the ConnectionPool should expire idle connections"
    assert "A pool of open connections; see connection_pool_size." in contents(result)  # its parts
    assert search(db, "connectionpool", path="src/").hits[0].content == result.hits[0].content


def test_snippets_mark_identifiers_matched_by_their_parts(db) -> None:
    hit = next(
        h for h in search(db, "connection pool", path="src/db/pool.py").hits if h.line_number == 3
    )
    assert "[MATCH]ConnectionPool[/MATCH]" in hit.snippet


def test_diacritics_and_case_are_ignored_in_words(db) -> None:
    assert contents(search(db, "UBER NAIVE cafe")) == ["Hello, {name}! Über naïve café."]
    assert search(db, "naïve").hits == search(db, "naive").hits


# --- filters and limits --------------------------------------------------------------------------


def test_element_type_filter(db) -> None:
    for element_type in ("comment", "docstring", "string_literal"):
        result = search(db, "pool OR open OR timeout", element_type=element_type)
        assert result.hits and {hit.element_type for hit in result.hits} == {element_type}
    assert search(db, "TODO", element_type="docstring").hits == ()


@pytest.mark.parametrize(
    "path, expected",
    [
        ("src/db/", {"src/db/pool.py", "src/db/timeouts.py"}),
        ("./src/db/timeouts.py", {"src/db/timeouts.py"}),
        ("src/db/t", set()),  # a path names whole segments (paths.py), not a string prefix
        ("src/db/t*", {"src/db/timeouts.py"}),
        ("timeouts.py", {"src/db/timeouts.py"}),  # nothing at the root: a path tail
        ("db/", {"src/db/pool.py", "src/db/timeouts.py"}),  # a folder's tail
        ("app", {"app/views.py"}),
        ("*.py", {"src/db/pool.py", "src/db/timeouts.py", "app/views.py"}),
        ("**/pool.py", {"src/db/pool.py"}),
        ("src/*.py", set()),  # * stays inside a folder
        ("src/**/*.py", {"src/db/pool.py", "src/db/timeouts.py"}),
        ("src/db/[pq]*.py", {"src/db/pool.py"}),
        ("nothing/here/", set()),
        (".", {"src/db/pool.py", "src/db/timeouts.py", "app/views.py"}),
    ],
)
def test_path_filter_takes_a_prefix_or_a_glob(db, path: str, expected: set) -> None:
    files = {
        hit.file_path
        for hit in search(db, "pool OR timeout OR databases OR views", path=path, limit=1000).hits
    }
    assert files - {p for p in files if not p.endswith(".py")} == expected


def test_an_absolute_path_inside_the_root_works_like_a_relative_one(db, db_path: Path) -> None:
    root = db_path.parent.parent
    assert (
        search(db, "pool", path=str(root / "src" / "db")).hits
        == search(db, "pool", path="src/db").hits
    )


@pytest.mark.skipif(not (HAVE_RUST and HAVE_CPP), reason="needs the Rust and C++ extractors")
def test_language_filter_and_its_aliases(db) -> None:
    for language, suffix in (
        ("python", ".py"),
        ("rust", ".rs"),
        ("rs", ".rs"),
        ("cpp", ".hpp"),
        ("C++", ".hpp"),
    ):
        result = search(db, "pool OR open", language=language)
        assert result.hits and {Path(hit.file_path).suffix for hit in result.hits} == {suffix}
    assert {hit.language for hit in search(db, "open", limit=100).hits} == {"python", "rust", "cpp"}
    assert search(db, "**/*.rs" and "pool", path="**/*.rs").hits[0].language == "rust"


def test_unknown_filter_values_are_usage_errors(db) -> None:
    with pytest.raises(BadArgument, match="unknown language"):
        search(db, "pool", language="java")
    with pytest.raises(BadArgument, match="element type"):
        search(db, "pool", element_type="comments")
    with pytest.raises(BadArgument, match="mode"):
        search(db, "pool", mode="regex")


@pytest.mark.parametrize("limit", [0, -1, 1001, 2.5, True, "20"])
def test_limit_outside_1_to_1000_is_refused(db, limit) -> None:
    with pytest.raises(BadArgument, match="from 1 to 1000"):
        search(db, "pool", limit=limit)


def test_limit_bounds_are_accepted_and_respected(db) -> None:
    everything = search(db, "pool OR open OR timeout", limit=1000)
    assert len(everything.hits) == everything.total > 3
    one = search(db, "pool OR open OR timeout", limit=1)
    assert one.hits == everything.hits[:1] and one.total == everything.total


# --- ranking and output --------------------------------------------------------------------------


def test_ranks_are_in_0_1_and_descending(db) -> None:
    hits = search(db, "pool OR connection OR open", limit=1000).hits
    ranks = [hit.rank for hit in hits]
    assert all(0 < rank <= 1 for rank in ranks)
    assert ranks == sorted(ranks, reverse=True)


def test_equal_ranks_are_ordered_by_path_then_line(tmp_path: Path) -> None:
    same = "# the same words\nX = 1\n# the same words\n"
    write_files(tmp_path, {"c/a.py": same, "b.py": same})
    build(tmp_path)  # a.py comes later, so its rows have the highest ids
    write_files(tmp_path, {"a.py": same})
    with store.reading(build(tmp_path)) as db:
        result = search(db, "same words")
        first_three = search(db, "same words", limit=3)
    assert len({hit.rank for hit in result.hits}) == 1
    expected = [("a.py", 1), ("a.py", 3), ("b.py", 1), ("b.py", 3), ("c/a.py", 1), ("c/a.py", 3)]
    assert places(result) == expected
    assert places(first_three) == expected[:3]


def test_the_same_files_indexed_in_another_order_give_the_same_results(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_files(first, PYTHON_FILES)
    write_files(second, dict(reversed(PYTHON_FILES.items())))
    outputs = []
    for root in (first, second):
        with store.reading(build(root)) as db:
            outputs.append(
                [search(db, q).hits for q in ("pool", "connection pool", "open*", "the")]
            )
    assert outputs[0] == outputs[1]


def test_a_query_repeated_gives_identical_output(db) -> None:
    runs = [search(db, "pool OR open OR timeout", limit=1000) for _ in range(3)]
    assert runs[0].hits == runs[1].hits == runs[2].hits


def test_rank_is_a_monotone_map_of_bm25() -> None:
    scores = [-0.000001, -0.5, -1.0, -7.25, -1000.0]
    ranks = [query._rank(score) for score in scores]
    assert ranks == sorted(ranks) and all(0 < rank < 1 for rank in ranks)
    assert query._rank(0.0) > 0


def test_above_the_rank_cap_the_best_of_the_first_matches_are_returned(db, monkeypatch) -> None:
    everything = search(db, "pool OR open OR timeout", limit=1000)
    monkeypatch.setattr(query, "RANK_CAP", 3)
    capped = search(db, "pool OR open OR timeout", limit=2)
    assert (capped.total, capped.total_exact) == (3, False)
    assert "more than 3 elements match" in capped.notes[0]
    assert len(capped.hits) == 2 and set(capped.hits) <= set(everything.hits)
    assert search(db, "pool OR open OR timeout", limit=2).hits == capped.hits  # deterministic


def test_results_carry_file_line_type_symbol_language_content_and_snippet(db) -> None:
    hit = search(db, "expire idle").hits[0]
    assert (hit.file_path, hit.line_number, hit.end_line) == ("src/db/pool.py", 3, 3)
    assert (hit.element_type, hit.symbol_name, hit.language) == ("comment", None, "python")
    assert hit.content == "TODO: the ConnectionPool should expire idle connections"
    assert (
        hit.snippet
        == "TODO: the ConnectionPool should [MATCH]expire[/MATCH] [MATCH]idle[/MATCH] connections"
    )
    docstring = search(db, "thread safe").hits[0]
    assert (docstring.element_type, docstring.symbol_name) == (
        "docstring",
        "ConnectionPool.release",
    )


def test_a_c_doc_comment_carries_the_function_it_documents(tmp_path: Path) -> None:
    # sqlite's comment above lookupKey came back with symbol_name null (the enclosing
    # definition alone was looked up: none at file level); one inside a body keeps its function.
    root = tmp_path / "repo"
    write_files(
        root,
        {
            "db.c": """
            /* Look up a key for reading: an expired key is deleted first. */
            int lookupKey(int db, int key)
            {
                /* a key past its expiry reads as missing */
                return db + key;
            }
            """
        },
    )
    with store.reading(build(root)) as database:
        found = search(database, "expired key").hits + search(database, "expiry").hits
    assert [(hit.line_number, hit.element_type, hit.symbol_name) for hit in found] == [
        (1, "comment", "lookupKey"),
        (4, "comment", "lookupKey"),
    ]


def test_long_content_is_truncated_with_a_marker_and_the_snippet_finds_the_match(
    tmp_path: Path,
) -> None:
    text = "word " * 1000 + "needle here " + "tail " * 100
    write_files(tmp_path, {"long.py": f'X = """{text}"""\n'})
    with store.reading(build(tmp_path)) as db:
        hit = search(db, "needle").hits[0]
    assert len(text) > query.CONTENT_LIMIT
    assert (
        hit.content
        == text[: query.CONTENT_LIMIT] + f" […{len(text) - query.CONTENT_LIMIT} more characters]"
    )
    assert "[MATCH]needle[/MATCH] here" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert 25 <= len(hit.snippet.replace("[MATCH]", "").replace("[/MATCH]", "").split()) <= 36


def test_as_dict_has_the_json_shape(db) -> None:
    data = search(db, "pool").as_dict()
    assert {"query", "results", "total", "took_ms"} <= set(data)
    assert set(data["results"][0]) >= {"file_path", "line_number", "element_type", "symbol_name",
                                       "content", "rank", "snippet", "end_line", "language"}  # fmt: skip


# --- literal mode --------------------------------------------------------------------------------


def test_literal_finds_exactly_the_elements_containing_the_text(db) -> None:
    result = search(db, "Failed to open %s: %d", mode="literal")
    expected = [("src/db/pool.py", 9)] + ([("include/db/vec.hpp", 6)] if HAVE_CPP else [])
    assert sorted(places(result)) == sorted(expected)
    assert places(result) == sorted(places(result))  # by (file_path, line_number)
    assert all(hit.rank == 1.0 for hit in result.hits)
    assert result.hits[0].snippet.startswith("[MATCH]Failed to open %s: %d[/MATCH]")


def test_literal_is_case_sensitive_unless_asked(db) -> None:
    sensitive = {hit.content for hit in search(db, "Failed to open", mode="literal").hits}
    assert "failed to open the file" not in sensitive
    insensitive = {
        hit.content for hit in search(db, "FAILED TO OPEN", mode="literal", ignore_case=True).hits
    }
    assert insensitive == sensitive | {"failed to open the file"}
    assert search(db, "ÜBER", mode="literal", ignore_case=True).total == 1  # not just ASCII


@pytest.mark.parametrize(
    "text, count",
    [("->", 1 + HAVE_CPP), ("%d", 1 + HAVE_CPP), ("é", 1), ("{", 1 + HAVE_RUST), ("Q", 0)],
)
def test_literals_shorter_than_three_characters_are_scanned(db, text: str, count: int) -> None:
    result = search(db, text, mode="literal", limit=1000)
    assert result.total == count and result.total_exact
    assert all(text in hit.content for hit in result.hits)


def test_every_two_character_literal_gives_exactly_what_a_scan_gives(db, monkeypatch) -> None:
    """2-character queries take candidates from the trigrams that begin with them (schema v10's
    sentinel makes a pair at an element's very end count): every pair of characters that
    occurs in the index, both cases and a few absent ones, against a plain scan."""
    rows = db.conn.execute("SELECT content FROM code_text").fetchall()
    pairs = sorted({text[i : i + 2] for (text,) in rows for i in range(len(text) - 1)})
    pairs = [p for p in pairs if p.isascii()] + ["Qz", "~~", "zz"]
    ends = {text[-2:] for (text,) in rows if len(text) >= 2 and text[-2:].isascii()}
    assert ends - {text[i : i + 2] for (text,) in rows for i in range(len(text) - 2)}  # tested
    quick = {}
    for pair in pairs:
        for ignore_case in (False, True):
            quick[pair, ignore_case] = search(
                db, pair, mode="literal", limit=1000, ignore_case=ignore_case
            )
    monkeypatch.setattr(query, "MAX_PAIR_TRIGRAMS", -1)  # every pair now scans
    for (pair, ignore_case), found in quick.items():
        scanned = search(db, pair, mode="literal", limit=1000, ignore_case=ignore_case)
        assert (found.hits, found.total) == (scanned.hits, scanned.total), (pair, ignore_case)
        assert found.total_exact


@pytest.mark.parametrize(
    "text", ['"', "AND", "*", "content:", "it's", '"%s"', "'; DROP TABLE files; --"]
)
def test_literal_text_is_never_syntax(db, text: str) -> None:
    result = search(db, text, mode="literal")
    assert all(text in hit.content for hit in result.hits)


def test_literal_keeps_spaces_and_finds_nothing_for_absent_text(db) -> None:
    assert search(db, " pool ", mode="literal").total == sum(
        " pool " in hit.content for hit in search(db, "pool", limit=1000).hits
    )
    assert search(db, "Failed to open %s: %x", mode="literal").hits == ()


def test_literal_scan_of_common_text_matches_the_candidate_path(db, monkeypatch) -> None:
    checked = search(db, "the", mode="literal", limit=1000)
    monkeypatch.setattr(query, "LITERAL_CAP", 1)  # every query now counts as common: scan
    scanned_all = search(db, "the", mode="literal", limit=1000)
    scanned_two = search(db, "the", mode="literal", limit=2)
    assert scanned_all.hits == checked.hits and scanned_all.total_exact
    assert scanned_two.hits == checked.hits[:2] and not scanned_two.total_exact


def test_common_literal_text_found_in_the_first_files_or_not_gives_what_the_checks_give(
    tmp_path: Path, monkeypatch
) -> None:
    """Common text is first looked for in the first PREFIX_FILES files in path order; where
    they hold no more than `limit` matches, the candidates' files are read. Either way the
    answer is the candidate checks' (every file's text of 'ring' holds the trigrams of
    'se ring' and 'use ring', which only the last files hold)."""
    files = {f"d{i:02}/m.py": f"# ring {i}\nx = 'a ring'\n" for i in range(12)}
    files |= {f"z{i}/late.py": "# close ring\ny = 1\n# use ring\n" for i in range(3)}
    write_files(tmp_path, files)
    with store.reading(build(tmp_path)) as db:
        texts = ["ring", "use ring", "se ring", "close ring", "ring 1", "absent ring"]
        checked = {text: search(db, text, mode="literal", limit=1000) for text in texts}
        assert checked["se ring"].total == 6 and checked["ring"].total == 24 + 6
        monkeypatch.setattr(query, "LITERAL_CAP", 1)  # every query now counts as common
        for first_files in (1, 2, 64):
            monkeypatch.setattr(query, "PREFIX_FILES", first_files)
            for text in texts:
                for limit in (1, 2, 3, 5, 1000):
                    found = search(db, text, mode="literal", limit=limit)
                    assert found.hits == checked[text].hits[:limit], (text, limit, first_files)
                    exact = checked[text].total <= limit
                    assert found.total_exact == exact
                    assert found.total == (checked[text].total if exact else limit)


def test_a_literal_in_quotes_that_finds_nothing_says_strings_are_kept_without_them(db) -> None:
    # an MCP agent searched `"Failed to open` (with the string's quote) and got nothing, unsaid
    quoted = search(db, '"Failed to open %s', mode="literal")
    assert quoted.hits == ()
    assert quoted.notes == (
        "string literals are indexed without their quotes: search for the text inside them"
        " ('Failed to open %s')",
    )
    assert search(db, "Failed to open %s", mode="literal").hits
    assert search(db, '"', mode="literal").notes == ()  # nothing inside: no advice
    assert search(db, "zz absent", mode="literal").notes == ()


def test_literal_filters(db) -> None:
    assert places(
        search(db, "Failed", mode="literal", path="src/", element_type="string_literal")
    ) == [("src/db/pool.py", 9)]
    assert (
        search(db, "Failed", mode="literal", language="python", element_type="comment").hits == ()
    )


# --- without the trigram index (a small tree's index: store/literal.py) -------------------------


@pytest.fixture(scope="module")
def read_db_path(db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture index with its trigram index emptied, as a small tree's index is made."""
    path = tmp_path_factory.mktemp("read") / "index.db"
    with sqlite3.connect(db_path) as source, sqlite3.connect(path) as copy:
        source.backup(copy)
    with store.writing(path) as database, database.atomic():
        set_literal_index(database, keep=False)
    return path


@pytest.fixture
def read_db(read_db_path: Path) -> Iterator:
    with store.reading(read_db_path) as database:
        assert not store.literal_indexed(database)
        assert database.scalar("SELECT count(*) FROM code_text_literal_terms") == 0
        yield database


def _literal_answer(result: SearchResult) -> tuple:
    return result.hits, result.notes


LITERAL_TEXTS = [
    "Failed to open %s: %d", "Failed", "FAILED TO OPEN", "the", "pool", " pool ", "->", "%d",
    "é", "ÜBER", "{", "Q", "e", "zz", '"', "'; DROP TABLE files; --", "absent text here",
]  # fmt: skip


@pytest.mark.parametrize("text", LITERAL_TEXTS)
@pytest.mark.parametrize("ignore_case", [False, True])
@pytest.mark.parametrize("limit", [1, 2, 1000])
def test_a_literal_search_reads_the_text_and_gives_what_the_trigram_index_gives(
    db, read_db, text: str, ignore_case: bool, limit: int
) -> None:
    indexed = search(db, text, mode="literal", limit=limit, ignore_case=ignore_case)
    read = search(read_db, text, mode="literal", limit=limit, ignore_case=ignore_case)
    assert read.hits == indexed.hits
    if indexed.total_exact:  # below LITERAL_CAP: every match counted either way
        assert (read.total, read.total_exact) == (indexed.total, True)


@pytest.mark.parametrize(
    "options",
    [
        {"path": "src/"}, {"language": "python"}, {"element_type": "string_literal"},
        {"path": "src/", "element_type": "comment"}, {"path": "nowhere/"},
    ],
)  # fmt: skip
def test_a_literal_search_read_whole_keeps_its_filters(db, read_db, options: dict) -> None:
    for text in ("Failed", "pool", "the", "%"):
        indexed = search(db, text, mode="literal", limit=1000, **options)
        read = search(read_db, text, mode="literal", limit=1000, **options)
        assert (read.hits, read.total) == (indexed.hits, indexed.total), (text, options)


def test_common_literal_text_read_whole_is_counted_up_to_the_cap_then_said_so(
    read_db, monkeypatch
) -> None:
    every = search(read_db, "e", mode="literal", limit=1000)
    assert every.total_exact and every.total > 3
    monkeypatch.setattr(query, "LITERAL_CAP", 3)
    first = search(read_db, "e", mode="literal", limit=2)
    assert first.hits == every.hits[:2] and not first.total_exact and first.total == 2
    assert first.notes == ("stopped after the first 2 matches in path order",)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), ignore_case=st.booleans())
def test_any_piece_of_the_text_is_found_alike_with_and_without_the_trigram_index(
    db, read_db, data, ignore_case: bool
) -> None:
    contents = [text for (text,) in db.conn.execute("SELECT content FROM code_text ORDER BY id")]
    content = data.draw(st.sampled_from(contents))
    start = data.draw(st.integers(0, max(len(content) - 1, 0)))
    piece = content[start : start + data.draw(st.integers(1, 12))].strip() or "x"
    piece = data.draw(st.sampled_from([piece, piece.upper(), piece + "\u00e9", piece[::-1]]))
    indexed = search(db, piece, mode="literal", limit=1000, ignore_case=ignore_case)
    read = search(read_db, piece, mode="literal", limit=1000, ignore_case=ignore_case)
    assert (read.hits, read.total) == (indexed.hits, indexed.total)


# --- errors never change or expose the database ----------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "text", ["", "  ", '"open', "(a", "a)", "a AND", "OR", "NOT a", "*", "a*b", "x" * 4097]
)
def test_bad_queries_raise_bad_query_and_leave_the_database_unchanged(
    db, db_path: Path, text: str
) -> None:
    before = digest(db_path)
    with pytest.raises(BadQuery):
        search(db, text)
    assert digest(db_path) == before


def test_a_missing_search_table_is_reported_in_our_words(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.py": "# pool\n"})
    path = build(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE code_text_literal")
    with store.reading(path) as db, pytest.raises(IndexOutdated) as caught:
        search(db, "pool", mode="literal")
    assert "run `repomap index`" in str(caught.value) and "no such table" not in str(caught.value)


def test_a_damaged_index_is_reported_in_our_words(tmp_path: Path) -> None:
    write_files(tmp_path, {f"m{i}.py": f"# pool number {i}\n" * 50 for i in range(40)})
    path = build(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root_page = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'code_text'"
        ).fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as file:  # scribble over code_text's root page
        file.seek((root_page - 1) * page_size)
        file.write(b"\xff" * page_size)
    # CorruptIndex, from opening or from searching
    with pytest.raises(RepomapError) as caught, store.reading(path) as db:
        search(db, "pool", mode="literal")
    assert isinstance(caught.value, CorruptIndex)
    assert "malformed" not in str(caught.value) and "repomap index" in str(caught.value)


# --- the trigram index follows the indexer -------------------------------------------------------


def test_the_literal_index_follows_changed_and_deleted_files(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.py": 'A = "alpha beta"\n', "b.py": 'B = "gamma delta"\n'})
    path = build(tmp_path)
    write_files(tmp_path, {"a.py": 'A = "alpha epsilon"\n'})
    (tmp_path / "b.py").unlink()
    build(tmp_path)
    with store.reading(path) as db:
        assert search(db, "alpha beta", mode="literal").hits == ()
        assert places(search(db, "alpha epsilon", mode="literal")) == [("a.py", 1)]
        assert search(db, "gamma", mode="literal").hits == ()
    # Both FTS tables agree with code_text: no row of the old contents is left in them.
    with sqlite3.connect(path) as conn:
        for table in ("code_text_literal", "code_text_fts"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def test_a_v5_index_migrates_and_its_rows_are_searchable(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"a.py": '# the ConnectionPool\nX = "Failed to open %s"\n'})
    path = tmp_path / "index.db"
    store.open_index(path, migrate_to=5).conn.close()
    conn = sqlite3.connect(path)  # rows as a v5 repomap wrote them
    conn.execute("INSERT INTO files (id, path, language, size, mtime_ns, hash, line_count, status, "
                 "indexed_at, text_indexed) VALUES (1, 'a.py', 'python', 1, 1, 'x', 2, 'ok', 'now', 1)")  # fmt: skip
    conn.execute(
        "INSERT INTO code_text VALUES (1048576, 1, 2, 2, 3, NULL, 'Failed to open %s', '')"
    )
    conn.execute(
        "INSERT INTO code_text VALUES (1048577, 1, 1, 1, 1, NULL, 'the ConnectionPool', 'connection pool')"
    )
    conn.execute(
        "INSERT INTO code_text_fts (rowid, content, subwords) SELECT id, content, subwords FROM code_text"
    )
    conn.commit()
    conn.close()
    store.open_index(path).conn.close()  # migrates to the current schema
    with store.reading(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
        assert places(search(db, "open %s", mode="literal")) == [("a.py", 2)]
        assert places(search(db, "connection pool")) == [("a.py", 1)]
        assert places(search(db, "Conn*")) == [("a.py", 1)]


def test_a_late_migration_never_lowers_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    store.open_index(path).conn.close()
    with sqlite3.connect(path) as conn:  # as if 0007 had landed after 0008 was applied
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0007_literal'")
        conn.execute("DROP TABLE code_text_literal")
    store.open_index(path).conn.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
        assert (
            conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = 'code_text_literal'"
            ).fetchone()[0]
            == 1
        )


# --- any string: results or a clean error ----------------------------------------------------------

PIECES = st.sampled_from(
    list("\"()*:^-+.#'{}[]<>;,/\\ \t\n") + [" AND ", " OR ", " NOT ", "NEAR", "pool", "open"]
)
QUERY_TEXT = st.lists(st.one_of(PIECES, st.characters()), max_size=30).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.one_of(QUERY_TEXT, st.text()), literal=st.booleans(), ignore_case=st.booleans())
def test_any_string_gives_results_or_a_clean_error(
    db, text: str, literal: bool, ignore_case: bool
) -> None:
    try:
        result = search(db, text, mode="literal" if literal else "fts", ignore_case=ignore_case)
    except BadQuery as error:
        assert error.position is not None and 1 <= error.position <= len(text) + 1
        return
    assert isinstance(result, SearchResult) and len(result.hits) <= 20
    if literal and not ignore_case:
        assert all(text in hit.content for hit in result.hits)


def test_the_snippet_window_holds_the_most_distinct_matched_words() -> None:
    content = "pool " + "filler " * 60 + "connection pool here " + "tail " * 60
    spans = [(m.start(), m.end()) for m in re.finditer(r"pool|connection", content)]
    text = query.snippet(content, spans)
    assert "[MATCH]connection[/MATCH] [MATCH]pool[/MATCH] here" in text
    assert text.startswith("…") and text.endswith("…")
    many = "value " * 5000  # a long element full of matches stays cheap and marks its window
    marked = query.snippet(many, [(i * 6, i * 6 + 5) for i in range(5000)])
    assert marked.count("[MATCH]") == query.SNIPPET_WORDS


# --- tiny string literals and test files rank lower; the matches stay the same ---------------


def _crowded_repo(make_repo, index) -> Path:
    """A question's answer among many one- and two-word literals and test-file comments that
    BM25 alone ranks first (the shortest elements win)."""
    keys = "\n".join(f'KEY_{i} = "cache_key"' for i in range(150))
    root = make_repo(
        {
            "pkg/cache.py": f'''
                def make_key(request):
                    """Build the cache key of a request."""
                    return "GET"


                {keys}
                ''',
            "pkg/keys.py": '# the cache key is built once per request\nNAME = "cache key"\n',
            # Elements about other things, so that BM25's idf of `cache` and `key` is high.
            "pkg/other.py": "".join(f'NOTE_{i} = "unrelated note {i}"\n' for i in range(1000)),
            **{
                f"tests/test_cache_{i}.py": f"# cache key {i}\nVALUE = 'check the cache key'\n"
                for i in range(6)
            },
        }
    )
    index(root)
    return root


def _placed(hits) -> list[tuple[str, int]]:
    return [(hit.file_path, hit.line_number) for hit in hits]


def test_tiny_literals_and_test_files_rank_lower_but_match_the_same_rows(make_repo, index) -> None:
    root = _crowded_repo(make_repo, index)
    with store.reading(config.resolve(root).db_path) as db:
        oracle = {
            tuple(row)
            for row in db.conn.execute(
                "SELECT v.file_path, v.line_number FROM code_text_fts f JOIN code_text_view v "
                'ON v.id = f.rowid WHERE code_text_fts MATCH \'"cache" "key"\''
            )
        }
        ranked = search_text(db, "cache key", limit=1000, log=False)
        plain = search_text(db, "cache key", limit=1000, path="**", log=False)  # BM25 alone
        assert set(_placed(ranked.hits)) == set(_placed(plain.hits)) == oracle
        assert ranked.total == plain.total == len(oracle) and len(oracle) > 150
        assert _placed(ranked.hits) != _placed(plain.hits)  # only the order moved

        def kind(hit) -> str:
            if hit.file_path.startswith("tests/"):
                return "test"
            words = len(querylang.words_of(hit.content))
            return "tiny" if hit.element_type == "string_literal" and words <= 2 else "answer"

        # BM25 alone: tiny literals and tests fill the top 10. Weighed: the answers are in it,
        # and every tiny literal comes after them.
        assert [kind(hit) for hit in plain.hits[:10]].count("answer") == 0
        top = _placed(ranked.hits[:10])
        assert top[:2] == [("pkg/cache.py", 2), ("pkg/keys.py", 1)]
        order = [kind(hit) for hit in ranked.hits]
        assert "tiny" not in order[: max(i for i, k in enumerate(order) if k == "answer")]
        # Each score is BM25's times its weights: 1/2 in a test file, 1/4 for a tiny literal.
        score = {_placed([hit])[0]: hit.rank / (1 - hit.rank) for hit in plain.hits}
        for hit in ranked.hits:
            weight = {"answer": 1.0, "test": 0.5, "tiny": 0.25}[kind(hit)]
            assert hit.rank / (1 - hit.rank) == pytest.approx(score[_placed([hit])[0]] * weight)
        ranks = [hit.rank for hit in ranked.hits]
        assert ranks == sorted(ranks, reverse=True)  # rank is the weighed score
        cli = run_cli("search-text", "cache key", "--limit", "2", "--json", "--root", root)
        assert cli.returncode == 0, cli.stderr
        found = [(r["file_path"], r["line_number"]) for r in json.loads(cli.stdout)["results"]]
        assert found == [("pkg/cache.py", 2), ("pkg/keys.py", 1)]
        # Any limit gives the first rows of the longest answer (weighing stops early).
        for limit in (1, 3, 10, 64, 65, 150):
            assert search_text(db, "cache key", limit=limit, log=False).hits == ranked.hits[:limit]


def test_ties_of_one_boilerplate_line_in_many_files_are_decided_as_if_all_were_weighed(
    make_repo, index
) -> None:
    """The same comment in hundreds of files (a licence header) ties every row at one score;
    the best `limit` are the first of weight 1.0 by (file_path, line_number), tests and tiny
    literals after them, whether or not every tied row is weighed."""
    header = "# the cache key header\n"
    late = {f"pkg/x{i:03}.py": f'NAME = "cache key"\n{header}' for i in range(100, 300)}
    late["pkg/other.py"] = "".join(f'NOTE_{i} = "unrelated note {i}"\n' for i in range(500))
    root = make_repo(late)
    index(root)
    # Files indexed later have higher row ids, so the first rows in index order are not the
    # first in path order: the tie-break must find these among the rows left unweighed.
    early = {f"pkg/tests/test_m{i:03}.py": header for i in range(40)}  # first in path order
    early |= {f"pkg/x{i:03}.py": f'NAME = "cache key"\n{header}' for i in range(100)}
    for name, text in early.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    index(root)
    with store.reading(config.resolve(root).db_path) as db:
        plain = search_text(db, "cache key", limit=1000, path="**", log=False).hits  # BM25 alone
        assert len(plain) == 640

        def weighed(hit) -> tuple[float, str, int]:
            weight = 0.5 if "/tests/" in hit.file_path else 1.0
            if hit.element_type == "string_literal":
                weight *= 0.25
            score = hit.rank / (1 - hit.rank) * weight
            return -score, hit.file_path, hit.line_number

        expected = [(path, line) for _, path, line in sorted(map(weighed, plain))]
        assert expected[0] == ("pkg/x000.py", 2)  # the tests' comments come after the others'
        for limit in (1, 5, 10, 64, 65, 200, 640):
            hits = search_text(db, "cache key", limit=limit, log=False).hits
            assert _placed(hits) == expected[:limit]


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": "cache"},  # one word: its own short literals are fair answers
        {"query": '"cache key"'},  # a phrase
        {"query": "cache_key"},  # code: the phrase of its words
        {"query": "cache key", "element_type": "string_literal"},
        {"query": "cache key", "path": "pkg/"},
    ],
)
def test_phrases_code_and_filters_keep_bm25_order(make_repo, index, arguments) -> None:
    root = _crowded_repo(make_repo, index)
    with store.reading(config.resolve(root).db_path) as db:
        hits = search_text(db, limit=1000, log=False, **arguments).hits
        bm25 = sorted(hits, key=lambda hit: (-hit.rank, hit.file_path, hit.line_number))
        assert hits == tuple(bm25)
        assert hits[0].content == "cache_key"  # the shortest element, as BM25 ranks it


def test_an_and_of_words_that_matches_nothing_counts_each_word_alone(db) -> None:
    # Which word to drop: none of the elements holds all of them, each alone is counted.
    result = search(db, "database zebraword")
    assert result.hits == ()
    assert result.notes[-1].startswith("no comment, docstring or string holds all 2 words")
    counts = dict(part.rsplit(" ", 1) for part in result.notes[-1].split("alone: ")[1].split(", "))
    assert counts["zebraword"] == "0" and int(counts["database"]) > 0
    assert search(db, "database").notes == () or "holds all" not in " ".join(
        search(db, "database").notes
    )
    assert not [n for n in search(db, "zebraword OR okapiword").notes if "holds all" in n]
