"""search_text: the comments, docstrings and string literals that match a query, best first.

`search_text(db, query, element_type="all", limit=20, path=None, language=None, mode="fts",
ignore_case=False, log=True) -> SearchResult` is the one query layer: the CLI, the MCP server
and the tests call it. The query language is in repomap/querylang.py; raw user text never
reaches FTS5 `MATCH`, and no SQLite error text reaches the user. `db` is anything with a
`.conn` (a sqlite_utils Store, or `Index` from `searching(path)`, which opens an index
read-only without importing sqlite_utils: most of a CLI query's start-up otherwise).

Filters: `element_type` is comment, docstring, string_literal or all; `path` is a prefix
(`src/db/`; a plain string prefix, so `src/db` also matches `src/dbutil.py`) or, when it holds
`*`, `?` or `[`, a glob with gitignore rules (`*` stays inside a folder, `**` crosses folders,
a pattern without `/` matches the file name at any depth: `*.rs`, `**/tests/*.py`);
`language` is python, rust, c or cpp (py, rs, c++ accepted).

Mode `fts` (ranked)
    BM25 (SQLite's bm25() over `content`, weight 1.0, and over `subwords`, the identifier
    parts, weight 0.5, so a word written out ranks above the same word found inside an
    identifier). rank = s / (1 + s) with s = -bm25 > 0: monotone, in (0, 1), comparable only
    within one query. Results by descending rank, ties by (file_path, line_number).
    For a question of two or more plain words (no phrase, quoted or typed as code like
    `csrf_token`) asked without a path or element-type filter, s is multiplied by TINY_LITERAL_WEIGHT for a string literal of at most two
    words and by TEST_FILE_WEIGHT for an element of a test, benchmark or example file
    (`paths.is_demoted_path`): BM25 favours the shortest elements, and those crowded out the
    explanations a plain question asks for. Which rows match does not change.

    Speed: ranking costs about 1 µs of CPU per matching row (bm25 reads each row's size and
    positions), so ranking all 50 000 rows that contain "the" in the index of the three test
    corpora (332k elements) takes ~45 ms, while reading them unranked takes ~2 ms. So a query
    ranks at most RANK_CAP matches: the first RANK_CAP in index order (rowid order, i.e. files
    in the order they were first indexed). Below the cap the ranking is exact; above it, the
    results are the best of those RANK_CAP, `total` is RANK_CAP and `total_exact` is False, and
    a note says so and suggests narrowing. This is deterministic (same index, same query, same
    answer) but can miss the best element of a broad query: in bench/search.py's sample a third
    of one-word queries (and most `a OR b` of common words) reach the cap. Rows tied at the
    cut-off are resolved by (file_path, line_number) reading only the files that can hold them.
    Measured and rejected: FTS5's `ORDER BY rank` (the same bm25, no faster); a precomputed
    per-word top-k table (exact only for one-word queries, and costly to keep current on every
    incremental index run); a 2-character prefix index (another ~10 MB on the three corpora).
    The 3-character prefix index of schema v7 was dropped in v16 (3.9 MB of the LLVM headers'
    9.5 MB text index): a prefix query merges the lists of the words it names, which cost
    `con*` 5.4 ms against 4.0, `get*` 3.7 against 2.8 (same rows, same scores); 1-character
    prefixes are refused.

Mode `literal` (exact)
    A case-sensitive substring match on code points, unranked: results by (file_path,
    line_number), rank 1.0. `ignore_case=True` compares both sides lower-cased with str.lower();
    for an all-ASCII query SQLite's LIKE picks the rows first, so a non-ASCII letter that
    lower-cases to ASCII (the Kelvin sign) is not matched. An index without the trigram index (built from
    24 MiB of code, emptied under half of it: store/literal.py) reads its text in path order (`_literal_read`),
    every match counted up to LITERAL_CAP: ~12 ms on LLVM's headers. Queries of 3 or more characters take
    candidates from the trigram index `code_text_literal` (up to MAX_TRIGRAMS of the query's
    trigrams, ANDed) and check them with instr(). Up to LITERAL_CAP candidates are all checked
    (`total` exact); beyond that the text is common, so the first PREFIX_FILES files in path
    order are read, and when they hold fewer than `limit` + 1 matches the files holding a
    candidate are read in path order; reading stops after `limit` matches (`total` is then a
    lower bound).
    An ASCII query of 2 characters takes its candidates from the indexed trigrams that begin
    with it (schema v10 adds a sentinel after each element, so a pair at its very end begins
    one too): none means no element holds it; more than MAX_PAIR_TRIGRAMS means it is common.
    A common pair, a single character and a non-ASCII pair scan every file in path order,
    which is quick when the text is common and a full pass over the index (~100 ms of CPU on
    the three corpora) when it is rare; the scan is bounded by `limit`, not by time, so it is
    complete.

Results: `content` is the whole element up to CONTENT_LIMIT characters, then
TRUNCATION_MARK; `snippet` is one line of about SNIPPET_WORDS words around the best match,
the matched words between `[MATCH]` and `[/MATCH]` (for an identifier matched by its parts,
the whole identifier), `…` where text was cut.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from repomap import paths, store
from repomap.errors import BadArgument, CorruptIndex, IndexOutdated, RepomapError
from repomap.languages import resolve_language
from repomap.limits import check_limit
from repomap.search import querylang
from repomap.store import ELEMENT_TYPE_CODES, ROWS_PER_FILE, Store
from repomap.subwords import split_identifier

RANK_CAP = 4000  # matches ranked per query (see the module docstring)
LITERAL_CAP = 2000  # trigram candidates checked one by one before scanning in path order
CONTENT_LIMIT = 2000  # characters of `content` returned
TRUNCATION_MARK = " […{} more characters]"
SNIPPET_WORDS = 32
# Each trigram ANDed in is one more posting list read: on the Linux kernel 8 cut the literal
# queries' CPU by ~20% against 16 (bench/README.md), the candidates still few.
MAX_TRIGRAMS = 8
PREFIX_FILES = 64  # files read in path order before common literal text gathers its candidates
W_CONTENT, W_SUBWORDS = 1.0, 0.5
MATCH_OPEN, MATCH_CLOSE = "[MATCH]", "[/MATCH]"
ELEMENT_TYPES = ("all", *ELEMENT_TYPE_CODES)
MODES = ("fts", "literal")


class TextHit(NamedTuple):
    file_path: str
    line_number: int
    end_line: int
    element_type: str
    symbol_name: str | None
    language: str
    content: str
    snippet: str
    rank: float


class SearchResult(NamedTuple):
    query: str
    mode: str
    hits: tuple[TextHit, ...]
    total: int  # matching elements: exact, or a lower bound when total_exact is False
    total_exact: bool
    took_ms: float
    notes: tuple[str, ...] = ()  # what the user should know: words left out, a cap reached

    def as_dict(self) -> dict[str, Any]:
        """The `--json` shape: query, results, total, took_ms (and the rest)."""
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [hit._asdict() for hit in self.hits],
            "total": self.total,
            "total_exact": self.total_exact,
            "took_ms": self.took_ms,
            "notes": list(self.notes),
        }


class _Filters(NamedTuple):
    file_ids: list[int] | None  # None: every file
    type_code: int | None  # None: every element type


# --- the entry point ---------------------------------------------------------------------------


def search_text(
    db: Store,
    query: str,
    element_type: str = "all",
    limit: int = 20,
    path: str | None = None,
    language: str | None = None,
    mode: str = "fts",
    ignore_case: bool = False,
    log: bool = True,
) -> SearchResult:
    """Comments, docstrings and string literals matching `query`, best first (see module doc)."""
    started = time.perf_counter()
    result: SearchResult | None = None
    error: str | None = None
    try:
        result = _search(db, query, element_type, limit, path, language, mode, ignore_case, started)
        return result
    except RepomapError as problem:
        error = str(problem)
        raise
    finally:
        if log:
            _log(db, query, mode, element_type, limit, path, language, ignore_case, result, error,
                 started)  # fmt: skip


def _search(db: Store, query: str, element_type: str, limit: int, path: str | None,
            language: str | None, mode: str, ignore_case: bool, started: float) -> SearchResult:  # fmt: skip
    _check_arguments(element_type, limit, mode)
    conn = db.conn
    try:
        if mode == "literal":
            querylang.check_literal(query)
            filters = _filters(db, element_type, path, language)
            if store.literal_indexed(db):
                ids, total, exact = _literal(conn, query, filters, limit, ignore_case)
            else:
                ids, total, exact = _literal_read(conn, query, filters, limit, ignore_case)
            hits = _hits(conn, ids, lambda text: _literal_spans(text, query, ignore_case))
            notes = [] if exact else [f"stopped after the first {total} matches in path order"]
            if not ids:
                notes += _quote_note(query)
        else:
            parsed = querylang.parse(query)
            filters = _filters(db, element_type, path, language)
            # A question of plain words, asked of everything: see _demoted.
            demote = path is None and element_type == "all" and _is_question(parsed.root)
            ranked, total, exact = _ranked(conn, parsed, filters, limit, demote)
            pattern = _terms_pattern(querylang.query_terms(parsed))
            hits = _hits(conn, ranked, lambda text: _term_spans(text, pattern))
            notes = _fts_notes(parsed, total, exact)
            if not ranked:
                notes += alone_note(conn, "code_text_fts", parsed, "comment, docstring or string")
    except sqlite3.OperationalError as error:
        raise _translate(error) from None
    except sqlite3.DatabaseError:
        raise CorruptIndex(
            "the index could not be read (the file is damaged); run `repomap index --force` to "
            "rebuild it"
        ) from None
    took = round((time.perf_counter() - started) * 1000, 3)
    return SearchResult(query, mode, tuple(hits), total, exact, took, tuple(notes))


def _check_arguments(element_type: str, limit: int, mode: str) -> None:
    if element_type not in ELEMENT_TYPES:
        raise BadArgument(
            f"unknown element type {element_type!r}; use one of {', '.join(ELEMENT_TYPES)}"
        )
    check_limit(limit)
    if mode not in MODES:
        raise BadArgument(f"unknown mode {mode!r}; use fts or literal")


def _translate(error: sqlite3.OperationalError) -> RepomapError:
    """SQLite's words stay inside: the user gets ours, with what to do."""
    message = str(error)
    if "no such table" in message or "no such column" in message:
        return IndexOutdated(
            "this index lacks the search tables (it was built by an older repomap); run "
            "`repomap index` to upgrade it"
        )
    if "locked" in message or "busy" in message:
        return RepomapError("the index is busy (another process holds a lock); try again")
    if "interrupt" in message:
        return RepomapError("the search was interrupted")
    return CorruptIndex(
        "the index could not be searched (it may be damaged); run `repomap index --force` to "
        "rebuild it"
    )


def _fts_notes(parsed: querylang.Query, total: int, exact: bool) -> list[str]:
    notes = []
    if parsed.ignored:
        words = " ".join(parsed.ignored)
        notes.append(f"left out (no letters or digits, so no word index can match them): {words}; "
                     "use literal mode to find them")  # fmt: skip
    if not exact:
        notes.append(f"more than {total} elements match; the results are the best of the first "
                     f"{total} in index order: add words or filters to narrow the search")  # fmt: skip
    return notes


def alone_note(
    conn: sqlite3.Connection,
    table: str,
    parsed: querylang.Query,
    what: str,
    counted: str = "elements",
    count: str = "count(*)",
) -> list[str]:
    """For a query of several words ANDed that matched nothing: in how many of `table`'s rows
    (`count` of them: its files, for docs sections that nest) each word is alone, so the word
    to drop shows (a search user's "emit a map in flow style" found no docs section, where
    "map in flow" found the one it wanted)."""
    terms = querylang.and_terms(parsed)
    if len(terms) < 2:
        return []
    counts = [
        (term.text, conn.execute(
            f"SELECT {count} FROM {table} WHERE {table} MATCH ?", (querylang.term_match(term),)
        ).fetchone()[0])
        for term in terms
    ]  # fmt: skip
    alone = ", ".join(f"{text} {number}" for text, number in counts)
    return [f"no {what} holds all {len(terms)} words; {counted} {_ALONE} {alone}"]


_ALONE = "holding each alone:"


def is_alone_note(note: str) -> bool:
    """Whether `note` is alone_note's (a server of several roots drops it when another root
    found what this one did not)."""
    return _ALONE in note


# --- filters -----------------------------------------------------------------------------------


def _filters(db: Store, element_type: str, path: str | None,
             language: str | None) -> _Filters:  # fmt: skip
    type_code = None if element_type == "all" else ELEMENT_TYPE_CODES[element_type]
    lang = None if language is None else resolve_language(language)
    return _Filters(store.filtered_ids(db, path, language=lang), type_code)


def _filter_sql(filters: _Filters, rowid: str) -> tuple[str, dict[str, int | str]]:
    """WHERE terms (and parameters) that keep only rows passing the filters."""
    sql = ""
    params: dict[str, int | str] = {}
    if filters.file_ids is not None:
        ids = filters.file_ids
        sql += (f" AND {rowid} >= :low_row AND {rowid} < :high_row"
                f" AND ({rowid} >> 20) IN (SELECT value FROM json_each(:file_ids))")  # fmt: skip
        params.update(low_row=ids[0] * ROWS_PER_FILE, high_row=(ids[-1] + 1) * ROWS_PER_FILE,
                      file_ids=json.dumps(ids))  # fmt: skip
    if filters.type_code is not None:
        sql += f" AND (SELECT element_type FROM code_text WHERE id = {rowid}) = :type_code"
        params["type_code"] = filters.type_code
    return sql, params


# --- fts: ranked ---------------------------------------------------------------------------------

RANKED_SQL = """SELECT f.rowid, bm25(code_text_fts, 0, 0, 0, 0, {content}, {subwords}, 0, 0)
FROM code_text_fts f WHERE code_text_fts MATCH :match{filters} LIMIT :cap"""
FILE_PATHS_SQL = "SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(:ids))"
KEYS_SQL = """SELECT t.id, f.path, t.line_number FROM code_text t JOIN files f ON f.id = t.file_id
WHERE t.id IN (SELECT value FROM json_each(:ids))"""
Scored = tuple[int, float]  # a RANKED_SQL row: (id, bm25)
Placed = tuple[int, str, int]  # a KEYS_SQL, CHECK_SQL or SCAN_SQL row: (id, file_path, line_number)


def _bm25(row: Scored) -> float:
    _, bm25 = row
    return bm25


def _place(row: Placed) -> tuple[str, int]:
    _, file_path, line_number = row
    return file_path, line_number


def _ranked(conn: sqlite3.Connection, parsed: querylang.Query, filters: _Filters,
            limit: int, demote: bool = False) -> tuple[list[tuple[int, float]], int, bool]:  # fmt: skip
    """[(id, rank)] of the best `limit` matches, the match count, and whether it is exact;
    with `demote`, scores of tiny string literals and of test files' elements are lowered."""
    match = querylang.to_match(parsed)
    if match is None or filters.file_ids == []:
        return [], 0, True
    where, params = _filter_sql(filters, "f.rowid")
    sql = RANKED_SQL.format(content=W_CONTENT, subwords=W_SUBWORDS, filters=where)
    rows: list[Scored] = conn.execute(
        sql, {"match": match, "cap": RANK_CAP + 1, **params}
    ).fetchall()
    exact = len(rows) <= RANK_CAP
    del rows[RANK_CAP:]
    total = len(rows)
    rows.sort(key=_bm25)  # lower is better
    if demote:
        rows = _demoted(conn, rows, limit)
    if len(rows) > limit:
        # The best `limit` rows end inside a group of equal scores: the group's first rows by
        # (file_path, line_number) complete them.
        _, cutoff = rows[limit - 1]
        head: list[Scored] = []
        tied: list[int] = []
        for row in rows:
            row_id, bm25 = row
            if bm25 < cutoff:
                head.append(row)
            elif bm25 == cutoff:
                tied.append(row_id)
            else:
                break  # sorted: no later row ties
        rows = head + [
            (row_id, cutoff) for row_id in _first_in_place(conn, tied, limit - len(head))
        ]
    scores = dict(rows)
    keys: list[Placed] = conn.execute(KEYS_SQL, {"ids": json.dumps(list(scores))}).fetchall()

    def best_first(key: Placed) -> tuple[float, str, int]:  # ties: file_path, line_number
        row_id, file_path, line_number = key
        return scores[row_id], file_path, line_number

    keys.sort(key=best_first)
    return [(row_id, _rank(scores[row_id])) for row_id, _, _ in keys[:limit]], total, exact


# Natural-language questions (`csrf token`, `time zone`) matched one- and two-word string
# literals ('csrf_token', 'TIME_ZONE': keys, not explanations) and test files first: BM25 favours
# the shortest elements, and tests repeat what the code says. Their scores are multiplied by
# these weights (both for a tiny literal in a test), which moves them in the order only.
TINY_LITERAL_WEIGHT = 0.25
TINY_LITERAL_WORDS = 2
TEST_FILE_WEIGHT = 0.5
DEMOTE_BATCH = 64  # rows weighed at first; doubled while rows further down could still rise
WEIGHED_SQL = """SELECT id, CASE WHEN element_type = :literal AND length(content) <= 200
    THEN content END FROM code_text WHERE id IN (SELECT value FROM json_each(:ids))"""


def _is_question(node: querylang.Node | None) -> bool:
    """Two or more plain words (`csrf token`, `cache OR key`): not one word, whose own short
    literals are fair answers, nor a phrase, quoted or typed as code (`csrf_token`,
    `self.pool`), which asks for that text."""
    terms: list[querylang.Term] = []

    def visit(item: querylang.Node) -> None:
        if isinstance(item, querylang.Term):
            terms.append(item)
        else:
            for child in item.items:
                visit(child)

    if node is None:
        return False
    visit(node)
    return len(terms) >= 2 and not any(term.quoted or len(term.words) > 1 for term in terms)


def _demoted(conn: sqlite3.Connection, rows: list[Scored], limit: int) -> list[Scored]:
    """The rows that can reach the best `limit` once weighed, with weighed scores, best first.

    `rows` are sorted best first (bm25 ascending, negative), and a weight never raises a score,
    so once `limit` weighed rows beat the best unweighed score left, no row left can enter.
    When the best left only equals the `limit`-th weighed score, the rows left can enter only as
    ties of it (weight 1.0), decided by (file_path, line_number): see _first_ties."""
    weighed: list[Scored] = []
    test_files: dict[int, bool] = {}
    words: dict[str, int] = {}  # the same short literal comes back often ('id' hundreds of times)
    start, batch = 0, DEMOTE_BATCH
    while start < len(rows):
        chunk = rows[start : start + batch]
        start += len(chunk)
        weights = _weights(conn, [row_id for row_id, _ in chunk], test_files, words)
        weighed += [(row_id, bm25 * weights[row_id]) for row_id, bm25 in chunk]
        if len(weighed) >= limit and start < len(rows):
            weighed.sort(key=_bm25)
            cutoff = weighed[limit - 1][1]
            if rows[start][1] > cutoff:
                break
            if rows[start][1] == cutoff:
                end = start
                while end < len(rows) and rows[end][1] == cutoff:
                    end += 1
                tied = [row_id for row_id, _ in rows[start:end]]
                first = _first_ties(conn, tied, limit, test_files, words)
                weighed += [(row_id, cutoff) for row_id in first]
                break
        batch *= 2
    weighed.sort(key=_bm25)
    return weighed


def _first_ties(conn: sqlite3.Connection, ids: list[int], need: int, test_files: dict[int, bool],
                words: dict[str, int]) -> list[int]:  # fmt: skip
    """Of rows whose BM25 equals the cut-off score, those of weight 1.0 that can still be among
    the best `need`: the first `need` such rows by (file_path, line_number) at most.

    The same boilerplate comment in thousands of files (the kernel's SPDX line) ties thousands
    of rows; weighing them all cost ~40 ms a query, while the tie-break reads files in path
    order and never gets past the first few. So files are taken in path order, a batch at a
    time, until `need` rows of weight 1.0 are found; every row of a file taken is weighed."""
    files = _files_in_path_order(conn, ids)
    found: list[int] = []
    taken = 0
    while taken < len(files) and len(found) < need:
        batch: list[int] = []
        while taken < len(files) and len(batch) < need - len(found):
            batch += files[taken]
            taken += 1
        weights = _weights(conn, batch, test_files, words)
        found += [row_id for row_id in batch if weights[row_id] == 1.0]
    return found


def _files_in_path_order(conn: sqlite3.Connection, ids: list[int]) -> list[list[int]]:
    """`ids` grouped by their file (ids carry it: ROWS_PER_FILE), files in path order."""
    by_file: dict[int, list[int]] = {}
    for row_id in ids:
        by_file.setdefault(row_id // ROWS_PER_FILE, []).append(row_id)
    file_paths = dict(conn.execute(FILE_PATHS_SQL, {"ids": json.dumps(list(by_file))}))
    return [by_file[file_id] for file_id in sorted(by_file, key=file_paths.__getitem__)]


def _weights(
    conn: sqlite3.Connection, ids: list[int], test_files: dict[int, bool], words: dict[str, int]
) -> dict[int, float]:
    """TINY_LITERAL_WEIGHT and TEST_FILE_WEIGHT (or both, or 1.0) for each row; `test_files`
    and `words` (word counts of short literals) are filled as rows need them."""
    new_files = {row_id // ROWS_PER_FILE for row_id in ids} - set(test_files)
    if new_files:
        for file_id, path in conn.execute(FILE_PATHS_SQL, {"ids": json.dumps(sorted(new_files))}):
            test_files[file_id] = paths.is_demoted_path(path)
    weights = {}
    literal = ELEMENT_TYPE_CODES["string_literal"]
    for row_id, short in conn.execute(WEIGHED_SQL, {"ids": json.dumps(ids), "literal": literal}):
        weight = TEST_FILE_WEIGHT if test_files[row_id // ROWS_PER_FILE] else 1.0
        if short is not None:
            count = words.get(short)
            if count is None:
                count = words[short] = _word_count(short)
            if count <= TINY_LITERAL_WORDS:
                weight *= TINY_LITERAL_WEIGHT
        weights[row_id] = weight
    return weights


_ASCII_WORD = re.compile(r"[0-9A-Za-z]+")  # unicode61's words, for ASCII text


def _word_count(text: str) -> int:
    """How many words the index holds for `text` (querylang.words_of, ~20x faster on ASCII)."""
    return len(_ASCII_WORD.findall(text)) if text.isascii() else len(querylang.words_of(text))


def _first_in_place(conn: sqlite3.Connection, ids: list[int], need: int) -> list[int]:
    """The `need` ids that come first by (file_path, line_number).

    A common word can tie thousands of rows (the same short string in many files), so only the
    files that can hold the first `need` rows are read: ids carry their file (ROWS_PER_FILE).
    """
    chosen: list[int] = []
    for rows in _files_in_path_order(conn, ids):
        if len(chosen) >= need:
            break
        chosen += rows
    keys: list[Placed] = conn.execute(KEYS_SQL, {"ids": json.dumps(chosen)}).fetchall()
    keys.sort(key=_place)
    return [row_id for row_id, _, _ in keys[:need]]


def _rank(bm25: float) -> float:
    """(0, 1], monotone in the BM25 score: s / (1 + s) with s = -bm25."""
    score = -bm25
    return score / (1.0 + score) if score > 0 else 1e-9


# --- literal: exact ----------------------------------------------------------------------------

CANDIDATES_SQL = """SELECT l.rowid FROM code_text_literal l
WHERE code_text_literal MATCH :trigrams{filters} LIMIT :cap"""
CHECK_SQL = """SELECT t.id, f.path, t.line_number FROM code_text t JOIN files f ON f.id = t.file_id
WHERE t.id IN (SELECT value FROM json_each(:ids)) AND {contains}{filters}"""
# Files in path order (the files.path index), each file's rows by id range; LIMIT stops early.
SCAN_SQL = """SELECT t.id, f.path, t.line_number FROM files f CROSS JOIN code_text t
WHERE t.id >= f.id * 1048576 AND t.id < (f.id + 1) * 1048576 AND {contains}{filters}
ORDER BY f.path, t.line_number LIMIT :limit"""
# The same over the first :files files in path order only: common text (more than LITERAL_CAP
# candidates) is usually found there, and then the candidates' files need not be gathered.
PREFIX_SCAN_SQL = """WITH first_files(id, path) AS MATERIALIZED (
    SELECT id, path FROM files ORDER BY path LIMIT :files)
SELECT t.id, f.path, t.line_number FROM first_files f CROSS JOIN code_text t
WHERE t.id >= f.id * 1048576 AND t.id < (f.id + 1) * 1048576 AND {contains}{filters}
ORDER BY f.path, t.line_number LIMIT :limit"""
# The same, reading only files with a candidate row: text that is common overall but clustered
# in a few late files (`aarch64` in LLVM's ARM headers) is found without reading every file
# before them. `f.id + 0` keeps the planner on the path index instead of driving by candidates.
SCAN_CANDIDATES_SQL = """WITH candidate_files(id) AS MATERIALIZED (
    SELECT DISTINCT l.rowid >> 20 FROM code_text_literal l WHERE code_text_literal MATCH :trigrams)
SELECT t.id, f.path, t.line_number FROM files f CROSS JOIN code_text t
WHERE f.id + 0 IN candidate_files AND t.id >= f.id * 1048576 AND t.id < (f.id + 1) * 1048576
    AND {contains}{filters}
ORDER BY f.path, t.line_number LIMIT :limit"""


def _literal(conn: sqlite3.Connection, text: str, filters: _Filters, limit: int,
             ignore_case: bool) -> tuple[list[tuple[int, float]], int, bool]:  # fmt: skip
    """[(id, 1.0)] of the first `limit` elements containing `text`, the count, and if exact."""
    if filters.file_ids == []:
        return [], 0, True
    contains, params = _contains_sql(conn, text, ignore_case)
    scan, trigrams = SCAN_SQL, dict[str, str]()
    match = _trigram_match(text) if len(text) >= 3 else _pair_match(conn, text)
    if match == NO_TRIGRAM:  # no trigram begins with these two characters: no element holds them
        return [], 0, True
    if match:
        trigrams = {"trigrams": match}
        where, filter_params = _filter_sql(filters, "l.rowid")
        candidates = conn.execute(
            CANDIDATES_SQL.format(filters=where),
            {**trigrams, "cap": LITERAL_CAP + 1, **filter_params},
        ).fetchall()
        if len(candidates) <= LITERAL_CAP:
            where, filter_params = _filter_sql(filters, "t.id")
            sql = CHECK_SQL.format(contains=contains, filters=where)
            ids = json.dumps([row_id for (row_id,) in candidates])
            found: list[Placed] = conn.execute(
                sql, {"ids": ids, **params, **filter_params}
            ).fetchall()
            found.sort(key=_place)
            return [(row_id, 1.0) for row_id, _, _ in found[:limit]], len(found), True
        scan = SCAN_CANDIDATES_SQL
    where, filter_params = _filter_sql(filters, "t.id")
    if scan is SCAN_CANDIDATES_SQL:
        # Gathering every candidate's file costs ~30-55 ms on the Linux kernel for text in most
        # of its files (the SPDX line, "the"), where the first files in path order hold enough.
        # Any match beyond those files comes later in path order: when they hold more than
        # `limit` matches, these are the first ones.
        found = conn.execute(
            PREFIX_SCAN_SQL.format(contains=contains, filters=where),
            {"limit": limit + 1, "files": PREFIX_FILES, **params, **filter_params},
        ).fetchall()
        if len(found) > limit:
            return [(row_id, 1.0) for row_id, _, _ in found[:limit]], limit, False
    sql = scan.format(contains=contains, filters=where)
    found = conn.execute(
        sql, {"limit": limit + 1, **trigrams, **params, **filter_params}
    ).fetchall()
    exact = len(found) <= limit
    return [(row_id, 1.0) for row_id, _, _ in found[:limit]], len(found) if exact else limit, exact


_QUOTES = "\"'`"


def _quote_note(query: str) -> list[str]:
    """Why a literal that starts or ends with a quote finds nothing: a string literal's text is
    indexed without its quotes (`"recv: ` found nothing where `recv: ` is in a string)."""
    inside = query.strip(_QUOTES)
    if inside == query or not inside.strip():
        return []
    return [
        "string literals are indexed without their quotes: search for the text inside them"
        f" ({inside!r})"
    ]


def _literal_read(conn: sqlite3.Connection, text: str, filters: _Filters, limit: int,
                  ignore_case: bool) -> tuple[list[tuple[int, float]], int, bool]:  # fmt: skip
    """As _literal, in an index without the trigram index (a small tree: store/literal.py):
    the text read in path order, every match counted up to LITERAL_CAP (`total` exact then;
    beyond it `total` is `limit`, as _literal gives it for common text)."""
    if filters.file_ids == []:
        return [], 0, True
    contains, params = _contains_sql(conn, text, ignore_case)
    where, filter_params = _filter_sql(filters, "t.id")
    cap = max(limit, LITERAL_CAP)
    found = conn.execute(
        SCAN_SQL.format(contains=contains, filters=where),
        {"limit": cap + 1, **params, **filter_params},
    ).fetchall()
    exact = len(found) <= cap
    return [(row_id, 1.0) for row_id, _, _ in found[:limit]], len(found) if exact else limit, exact


def _contains_sql(
    conn: sqlite3.Connection, text: str, ignore_case: bool
) -> tuple[str, dict[str, str]]:
    if not ignore_case:
        return "instr(t.content, :needle) > 0", {"needle": text}
    lowered = text.lower()
    conn.create_function("repomap_icontains", 2, _icontains, deterministic=True)
    contains = "repomap_icontains(t.content, :needle)"
    if lowered.isascii():  # LIKE folds ASCII case in C: a cheap first pass
        escaped = lowered.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        contains = f"t.content LIKE :pattern ESCAPE '\\' AND {contains}"
        return contains, {"needle": lowered, "pattern": f"%{escaped}%"}
    return contains, {"needle": lowered}


def _icontains(content: str | None, lowered: str) -> bool:
    return content is not None and lowered in content.lower()


NO_TRIGRAM = "no trigram"
PAIR_TERMS_SQL = """SELECT term FROM code_text_literal_terms
WHERE term >= :low AND term < :high LIMIT :cap"""
MAX_PAIR_TRIGRAMS = 64  # more trigrams begin with a pair: it is common, and a scan stops early


def _pair_match(conn: sqlite3.Connection, text: str) -> str | None:
    """For a 2-character query: the OR of the indexed trigrams that begin with it (schema v10
    puts a sentinel after each element, so a pair at the very end begins one too), NO_TRIGRAM
    when none does, or None (scan) for a common pair, a single character or non-ASCII text,
    whose case folding in the trigram tokenizer Python may not mirror."""
    if len(text) != 2 or not text.isascii():
        return None
    low = text.lower()
    high = low[0] + chr(ord(low[1]) + 1)
    terms = [
        term
        for (term,) in conn.execute(
            PAIR_TERMS_SQL, {"low": low, "high": high, "cap": MAX_PAIR_TRIGRAMS + 1}
        )
    ]
    if len(terms) > MAX_PAIR_TRIGRAMS:
        return None
    if not terms:
        return NO_TRIGRAM
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _trigram_match(text: str) -> str:
    """Up to MAX_TRIGRAMS of the text's trigrams, spread over it, each a quoted FTS5 string."""
    grams = list(dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2)))
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


# --- results -----------------------------------------------------------------------------------


class _Details(NamedTuple):
    """A DETAILS_SQL row, in its column order."""

    id: int
    file_path: str
    line_number: int
    end_line: int
    type_code: int
    symbol_name: str | None
    language: str
    content: str


# The symbol a text row belongs to: its owner (a docstring's), the definition it documents (a C
# or C++ doc comment above a function: sqlite's comment on lookupKey came back with none), or
# the one enclosing it. The documented one starts in the dozen lines below the comment (by
# symbols_file's file and line: a header of 80,000 `#define`s took 8 s for 1,000 hits when
# every symbol of the file was read); no index by doc_text, which the kernel would pay for.
DETAILS_SQL = """SELECT t.id, f.path, t.line_number, t.end_line, t.element_type,
    coalesce(t.symbol_name,
             (SELECT d.qualified_name FROM symbols d
              WHERE d.file_id = t.file_id AND d.start_line BETWEEN t.end_line
                    AND t.end_line + 12 AND d.doc_text = t.id LIMIT 1),
             s.qualified_name),
    f.language, t.content
FROM code_text t JOIN files f ON f.id = t.file_id LEFT JOIN symbols s ON s.id = t.symbol_id
WHERE t.id IN (SELECT value FROM json_each(:ids))"""
TYPE_NAMES = {code: name for name, code in ELEMENT_TYPE_CODES.items()}
Spans = list[tuple[int, int]]


def _hits(
    conn: sqlite3.Connection, ranked: list[tuple[int, float]], spans_of: Callable[[str], Spans]
) -> list[TextHit]:
    """TextHits in `ranked` order, with snippets marked where spans_of(content) says."""
    if not ranked:
        return []
    ids = json.dumps([row_id for row_id, _ in ranked])
    rows = map(_Details._make, conn.execute(DETAILS_SQL, {"ids": ids}))
    details = {row.id: row for row in rows}
    hits = []
    for row_id, rank in ranked:
        row = details[row_id]
        content = row.content
        hits.append(TextHit(row.file_path, row.line_number, row.end_line, TYPE_NAMES[row.type_code],
                            row.symbol_name, row.language, _truncate(content),
                            snippet(content, spans_of(content)), rank))  # fmt: skip
    return hits


def _truncate(content: str) -> str:
    if len(content) <= CONTENT_LIMIT:
        return content
    return content[:CONTENT_LIMIT] + TRUNCATION_MARK.format(len(content) - CONTENT_LIMIT)


# --- snippets ----------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*")
SNIPPET_SCAN = 100_000  # characters of an element searched for the snippet
EDGE_CHARS = 16  # characters without a word at either end shown rather than cut
MAX_ANCHORS = 64  # matches tried as the start of the snippet's window


def _terms_pattern(terms: Sequence[tuple[str, bool]]) -> re.Pattern[str] | None:
    """A regex of whole words (prefixes: word starts) for the query's terms."""
    if not terms:
        return None
    parts = sorted({re.escape(word) + (r"[^\W_]*" if prefix else "") for word, prefix in terms},
                   key=len, reverse=True)  # fmt: skip
    return re.compile(r"(?<![^\W_])(?:" + "|".join(parts) + r")(?![^\W_])", re.IGNORECASE)


def _term_spans(content: str, pattern: re.Pattern[str] | None) -> Spans:
    """Where the query's words are; failing that, identifiers containing them as parts."""
    if pattern is None:
        return []
    text = content[:SNIPPET_SCAN]
    spans = [match.span() for match in pattern.finditer(text)]
    if spans:
        return spans
    folded = querylang.fold(text)
    if len(folded) == len(text):  # diacritics: the words may be there without their accents
        spans = [match.span() for match in pattern.finditer(folded)]
        if spans:
            return spans
    for identifier in _IDENTIFIER.finditer(text):
        parts = split_identifier(identifier.group())
        if len(parts) > 1 and any(pattern.fullmatch(part) for part in parts):
            spans.append(identifier.span())
    return spans


def _literal_spans(content: str, text: str, ignore_case: bool) -> Spans:
    haystack, needle = (content.lower(), text.lower()) if ignore_case else (content, text)
    if len(haystack) != len(content):  # lower() changed lengths: mark nothing rather than wrong
        return []
    spans, start = [], haystack.find(needle)
    while start >= 0 and start < SNIPPET_SCAN:
        spans.append((start, start + len(needle)))
        start = haystack.find(needle, start + max(1, len(needle)))
    return spans


def snippet(content: str, spans: Spans, words: int = SNIPPET_WORDS) -> str:
    """One line of about `words` words around the best cluster of spans, spans marked.

    The best window holds the most distinct matched words (the earliest on a tie); only the
    first MAX_ANCHORS spans are tried as its anchor, so a long element full of matches costs
    no more than a short one.
    """
    words_at = [match.span() for match in _WORD.finditer(content, 0, SNIPPET_SCAN)]
    if not spans or not words_at:
        end = min(len(content), 200)
        if words_at:
            _, end = words_at[min(words, len(words_at)) - 1]
        return _one_line(_ellipsis(content, 0, end, []))
    starts = [start for start, _ in words_at]
    span_starts = [start for start, _ in spans]
    best_start, best_end, best_score = 0, 0, -1
    for span_start, span_end in spans[:MAX_ANCHORS]:
        first = max(0, _word_index(starts, span_start) - words // 4)
        last = min(len(words_at), first + words) - 1
        first_start, _ = words_at[first]
        _, last_end = words_at[last]
        start, end = min(first_start, span_start), max(last_end, span_end)
        inside = spans[bisect_left(span_starts, start) : bisect_right(span_starts, end)]
        score = len({content[a:b].lower() for a, b in inside if b <= end})
        if score > best_score:
            best_start, best_end, best_score = start, end, score
    return _one_line(_ellipsis(content, best_start, best_end, spans))


def _word_index(starts: list[int], offset: int) -> int:
    return max(0, bisect_right(starts, offset) - 1)


def _ellipsis(content: str, start: int, end: int, spans: Spans) -> str:
    """content[start:end] with spans inside it marked, and … where text was cut.

    A window ends at a word, so a few characters with no word in them before or after it (the
    full stop after the last word, a quote or bracket around the text) are shown, not cut:
    `…` says that words were left out, never that a full stop was."""
    if len(content) - end <= EDGE_CHARS and not _WORD.search(content, end):
        end = len(content)
    if start <= EDGE_CHARS and not _WORD.search(content, 0, start):
        start = 0
    pieces, position = [], start
    for span_start, span_end in spans:
        if span_start < position or span_end > end:
            continue
        pieces += [
            content[position:span_start],
            MATCH_OPEN,
            content[span_start:span_end],
            MATCH_CLOSE,
        ]
        position = span_end
    pieces.append(content[position:end])
    head = "…" if content[:start].strip() else ""
    tail = "…" if content[end:].strip() else ""
    return head + "".join(pieces) + tail


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- the search log ----------------------------------------------------------------------------


def _log(db: Store, query: str, mode: str, element_type: str, limit: int, path: str | None,
         language: str | None, ignore_case: bool, result: SearchResult | None, error: str | None,
         started: float) -> None:  # fmt: skip
    from repomap.search import log as searchlog

    searchlog.log_event(
        "search_text",
        index=db.path,
        query=query,
        mode=mode,
        element_type=element_type,
        limit=limit,
        path=path,
        language=language,
        ignore_case=ignore_case,
        results=len(result.hits) if result else 0,
        total=result.total if result else 0,
        ms=round((time.perf_counter() - started) * 1000, 3),
        error=error,
    )
