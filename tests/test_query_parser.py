"""The search query language (repomap/querylang.py): every form, every error and its position."""

from __future__ import annotations

import sqlite3

import pytest

from repomap.errors import BadQuery, ExitCode
from repomap.search.querylang import (
    MAX_DEPTH,
    MAX_QUERY_LENGTH,
    MAX_WORDS,
    Or,
    Term,
    check_literal,
    parse,
    query_terms,
    to_match,
    words_of,
)
from repomap.search.unicode61 import SEPARATOR_BOUNDS, is_separator


def words(node) -> object:
    """A compact view of a tree: Term -> its words (+ '*'), And/Or -> tuples."""
    if isinstance(node, Term):
        text = " ".join(node.words) + ("*" if node.prefix else "")
        return f'"{text}"' if node.quoted else text
    if isinstance(node, Or):
        return ("OR", *map(words, node.items))
    if node.excluded:
        return ("AND", *map(words, node.items), ("NOT", *map(words, node.excluded)))
    return ("AND", *map(words, node.items))


@pytest.mark.parametrize(
    "query, expected",
    [
        ("pool", "pool"),
        ("configure authentication", ("AND", "configure", "authentication")),
        ('"a phrase"', '"a phrase"'),
        ('"Connection  Pool"', '"connection pool"'),
        ("database AND timeout", ("AND", "database", "timeout")),
        ("timeout OR deadline", ("OR", "timeout", "deadline")),
        ("database AND (timeout OR deadline)", ("AND", "database", ("OR", "timeout", "deadline"))),
        ("pool NOT thread", ("AND", "pool", ("NOT", "thread"))),
        ("pool AND NOT thread", ("AND", "pool", ("NOT", "thread"))),
        ("NOT thread pool", ("AND", "pool", ("NOT", "thread"))),
        ("connect*", "connect*"),
        ("std::vec*", "std vec*"),
        # precedence: NOT binds tightest, then AND (explicit or a space), then OR
        ("a b OR c", ("OR", ("AND", "a", "b"), "c")),
        ("a OR b c", ("OR", "a", ("AND", "b", "c"))),
        ("a AND b OR c AND d", ("OR", ("AND", "a", "b"), ("AND", "c", "d"))),
        ("a NOT b c", ("AND", "a", "c", ("NOT", "b"))),
        ("a NOT b OR c", ("OR", ("AND", "a", ("NOT", "b")), "c")),
        ("a NOT (b OR c)", ("AND", "a", ("NOT", ("OR", "b", "c")))),
        ("(a OR b) (c OR d)", ("AND", ("OR", "a", "b"), ("OR", "c", "d"))),
        ("((a))", "a"),
        ("a AND (b AND c)", ("AND", "a", "b", "c")),
        ("a OR (b OR c)", ("OR", "a", "b", "c")),
        ("the the THE", "the"),
        ("a OR b OR a", ("OR", "a", "b")),
        ("a b NOT c NOT c", ("AND", "a", "b", ("NOT", "c"))),
        ('pool "pool" pool*', ("AND", "pool", '"pool"', "pool*")),
        # lower-case operators are words
        ("and or not", ("AND", "and", "or", "not")),
        ("Not", "not"),
        # punctuation inside a word: the phrase of its words, never syntax
        ("std::vector", "std vector"),
        ("self.pool", "self pool"),
        ("error:", "error"),
        ("content:foo", "content foo"),
        ("foo-bar", "foo bar"),
        ("-foo", "foo"),
        ("C++", "c"),
        ("#include", "include"),
        ("don't", "don t"),
        ("^start", "start"),
        ("NEAR(a b)", ("AND", "near a", "b")),
        ("foo()", "foo"),
        ("f(x)", "f x"),
        ("f(x, y)", ("AND", "f x", "y")),
        ('printf("%d", x)', ("AND", "printf", '"d"', "x")),
        ("(f(x) OR g)", ("OR", "f x", "g")),
        ("foo( (a OR b) )", ("AND", "foo", ("OR", "a", "b"))),
        ("connection_pool", "connection pool"),
        ("café", "cafe"),
        ("naïve*", "naive*"),
    ],
)
def test_every_form_parses_to_its_tree(query: str, expected: object) -> None:
    assert words(parse(query).root) == expected


@pytest.mark.parametrize(
    "query, ignored, expected",
    [
        ("->", ("->",), None),
        ("self -> pool", ("->",), ("AND", "self", "pool")),
        ('"->" pool', ('"->"',), "pool"),
        ("a OR ::", ("::",), "a"),
        ("a NOT +=", ("+=",), "a"),
        ("-> NOT b", ("->",), None),
        ("😀", ("😀",), None),
    ],
)
def test_words_without_letters_or_digits_are_left_out_and_reported(
    query: str, ignored: tuple, expected: object
) -> None:
    parsed = parse(query)
    assert parsed.ignored == ignored
    assert (None if parsed.root is None else words(parsed.root)) == expected


@pytest.mark.parametrize(
    "query, position, problem",
    [
        ("", 1, "the query is empty"),
        ("   \t ", 1, "the query is empty"),
        ('"unclosed', 1, "this quote is never closed"),
        ('a "b" "c', 7, "this quote is never closed"),
        ("(a", 1, "this '(' is never closed"),
        ("x (", 3, "this '(' is never closed"),
        ("((a)", 1, "this '(' is never closed"),
        ("(foo(bar)", 1, "this '(' is never closed"),
        ("a)", 2, "this ')' closes nothing"),
        (") (", 1, "this ')' closes nothing"),
        ("foo) bar", 4, "this ')' closes nothing"),
        ("()", 1, "empty parentheses"),
        ("a ( ) b", 3, "empty parentheses"),
        ('""', 1, "empty quotes"),
        ('a "  "', 3, "empty quotes"),
        ("a AND", 3, "AND has nothing after it"),
        ("AND a", 1, "AND has nothing before it"),
        ("a AND OR b", 3, "AND has nothing after it"),
        ("(AND a)", 2, "AND has nothing before it"),
        ("a OR", 3, "OR has nothing after it"),
        ("OR a", 1, "OR has nothing before it"),
        ("a OR OR b", 3, "OR has nothing after it"),
        ("(a OR )", 4, "OR has nothing after it"),
        ("( OR a)", 3, "OR has nothing before it"),
        ("a NOT", 3, "NOT has nothing after it"),
        ("(a NOT)", 4, "NOT has nothing after it"),
        ("NOT a", 1, "NOT has nothing to exclude from"),
        ("a OR NOT b", 6, "NOT has nothing to exclude from"),
        ("a (NOT b)", 4, "NOT has nothing to exclude from"),
        ("a NOT NOT b", 7, "NOT is followed by another NOT"),
        ("*", 1, "a lone '*' matches nothing"),
        ("a *", 3, "a lone '*' matches nothing"),
        ("*a", 1, "'*' is allowed only at the end of a word"),
        ("a*b", 2, "'*' is allowed only at the end of a word"),
        ("**kwargs", 1, "'*' is allowed only at the end of a word"),
        ("a**", 2, "'*' is allowed only at the end of a word"),
        ("->*", 3, "'*' must follow a letter or digit"),
        ("foo.*", 5, "'*' must follow a letter or digit"),
        ('"a b"*', 6, "a quoted phrase cannot end in '*'"),
        ("a*", 1, "a prefix needs at least 2 letters or digits before '*'"),
        ("std::v*", 1, "a prefix needs at least 2 letters or digits before '*'"),
        ("x" * (MAX_QUERY_LENGTH + 1), MAX_QUERY_LENGTH + 1, "longer than 4096 characters"),
        ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), MAX_DEPTH + 1, "nested deeper"),
        ("ab\ud800", 3, "a lone surrogate is not a character"),
        (" ".join(["w"] * 33), 65, "more than 32 words"),
        ("a " * 16 + '"' + "b " * 17 + '"', 33, "more than 32 words"),
    ],
)
def test_bad_queries_name_the_problem_and_its_position(
    query: str, position: int, problem: str
) -> None:
    with pytest.raises(BadQuery) as caught:
        parse(query)
    assert caught.value.position == position
    assert problem in caught.value.problem
    assert str(caught.value).startswith(f"bad query at position {position}: ")
    assert caught.value.exit_code == ExitCode.USAGE


def test_star_errors_suggest_literal_mode() -> None:
    for query in ("*", "*a", "a*b", "->*", '"a"*'):
        with pytest.raises(BadQuery, match="literal mode"):
            parse(query)


def test_a_query_of_exactly_the_maximum_length_parses() -> None:
    assert parse("x" * MAX_QUERY_LENGTH).root is not None


def test_a_query_of_exactly_the_maximum_word_count_parses() -> None:
    assert len(parse(" OR ".join(f"w{i}" for i in range(MAX_WORDS))).root.items) == MAX_WORDS
    assert parse("-> " * 100 + "w").ignored == ("->",) * 100  # punctuation is not counted


def test_nesting_up_to_the_maximum_depth_parses() -> None:
    assert words(parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH).root) == "a"


@pytest.mark.parametrize(
    "query, match",
    [
        ("pool", '"pool"'),
        ("configure authentication", '("configure" AND "authentication")'),
        ('"a phrase"', '"a phrase"'),
        ("a OR b", '("a" OR "b")'),
        ("pool NOT thread", '(("pool") NOT ("thread"))'),
        ("a b NOT c NOT d", '(("a" AND "b") NOT ("c" OR "d"))'),
        ("connect*", '"connect"*'),
        ("std::vector", '"std::vector"'),
        ("error:", '"error:"'),
        ("content:foo", '"content:foo"'),
        ("C++", '"C++"'),
        ("x\x00y", '"x y"'),
        # identifiers also match by their parts, which subwords.py indexes
        ("ConnectionPool", '("ConnectionPool" OR "connection pool")'),
        ("connectionPool", '("connectionPool" OR "connection pool")'),
        ("HTTPServer*", '("HTTPServer"* OR "http server"*)'),
        ("connection_pool", '"connection_pool"'),
        ('"ConnectionPool"', '"ConnectionPool"'),
        ("HTTP", '"HTTP"'),
    ],
)
def test_to_match_quotes_every_word(query: str, match: str) -> None:
    assert to_match(parse(query)) == match


def test_only_punctuation_gives_no_match_string() -> None:
    assert to_match(parse("-> ::")) is None


def test_query_terms_are_the_words_to_highlight_without_the_excluded_ones() -> None:
    parsed = parse("ConnectionPool conn* NOT thread")
    assert query_terms(parsed) == [
        ("connectionpool", False),
        ("connection", False),
        ("pool", False),
        ("conn", True),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("std::vector<int>", ("std", "vector", "int")),
        ("snake_case_name", ("snake", "case", "name")),
        ("Über-Größe", ("uber", "große")),
        ("x²", ("x²",)),
        ("", ()),
        ("-> ::", ()),
    ],
)
def test_words_are_split_and_folded_like_the_index(text: str, expected: tuple) -> None:
    assert words_of(text) == expected


def test_literal_queries_are_checked_but_kept_verbatim() -> None:
    check_literal("  Failed to open %s: %d  ")  # spaces count; no error
    for text, position in (("", 1), ("   ", 1), ("a\x00b", 2), ("x" * 4097, 4097)):
        with pytest.raises(BadQuery) as caught:
            check_literal(text)
        assert caught.value.position == position


def test_separator_table_matches_this_sqlite() -> None:
    """unicode61.py is a copy of FTS5's table: rebuild it from SQLite and compare."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    # Every code point in the BMP, and every 7th above it (all of them takes ~10 s).
    points = [
        p for p in range(1, 0x110000) if not 0xD800 <= p <= 0xDFFF and (p < 0x10000 or p % 7 == 0)
    ]
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", ((p, f"q{chr(p)}z") for p in points))
    separators = {row[0] for row in conn.execute("SELECT doc FROM v WHERE term = 'q'")}
    wrong = [hex(p) for p in points if is_separator(chr(p)) != (p in separators)]
    assert wrong == []
    assert sorted(SEPARATOR_BOUNDS) == SEPARATOR_BOUNDS
