"""An FTS5 table's postings read into memory, for BM25 scored with numpy (search/bm25.py).

FTS5's bm25() reads every row that matches any of a question's words: ~6,900 of Django's 47,912
chunks for the median question, ~2 us each, 7-15 ms a question. A long-running server reads the
postings once per index state instead and scores them with numpy. What it needs is what bm25()
reads: per term, the rows holding it and their per-column counts (FTS5's `fts5vocab` instance
table, so it holds for any content option of the table), each row's size in tokens, and the
table's row count and total size (FTS5's own averages record). Nothing is read from the content
table: the chunks' texts may live elsewhere or nowhere.

The query's words go through the same tokenizer as the indexed text (the `tokenize=` option
the table was created with, run by SQLite in a private in-memory database), so a word is
stemmed as FTS5 stems it.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass

import numpy as np

from repomap.store.connection import Store

_VOCAB = "repomap_vocab_{table}"  # a temp fts5vocab table over `table`, per connection
# One row per term: the row ids holding it and the column of each instance (a digit each; the
# instance table's order: term, row, column, offset), as text numpy parses in one call.
_INSTANCES_SQL = """SELECT term, count(*), group_concat(doc), group_concat({column_case}, '')
FROM temp.{vocab} GROUP BY term"""
_AVERAGES_SQL = "SELECT block FROM {table}_data WHERE id = 1"  # FTS5_AVERAGES_ROWID
_TOKENIZE_OPTION = re.compile(r"tokenize\s*=\s*'((?:[^']|'')*)'", re.IGNORECASE)
_DETAIL_OPTION = re.compile(r"detail\s*=\s*'?(\w+)", re.IGNORECASE)


@dataclass
class Postings:
    """Every term's postings in one pair of arrays, rows by ascending rowid.

    `rowids` (n,) int64, ascending: the table's rows (their rowids), each a row index
    `sizes` (n,) float64: each row's size in tokens, all columns (bm25()'s D)
    `terms` {token: (start, end)}: its slice of `rows` and `counts`
    `rows` (p,) int32: the row index of each posting, ascending within a term
    `counts` (p, columns) uint16 or uint32: the term's instances in each column of the row
    `total_rows`, `total_tokens`: FTS5's averages record (bm25()'s N and N * avgdl)
    """

    rowids: np.ndarray
    sizes: np.ndarray
    terms: dict[str, tuple[int, int]]
    rows: np.ndarray
    counts: np.ndarray
    total_rows: int
    total_tokens: int
    tokenize: str

    @property
    def nbytes(self) -> int:
        arrays = (self.rowids, self.sizes, self.rows, self.counts)
        return sum(array.nbytes for array in arrays) + sum(
            len(term) + 120 for term in self.terms
        )  # a str and a tuple of two ints per term, roughly


def read_postings(db: Store, table: str) -> Postings | None:
    """The postings of FTS5 table `table` as `db`'s snapshot shows them; None when the table
    is missing or its tokenizer cannot be read back."""
    tokenize = tokenizer_of(db, table)
    if tokenize is None:
        return None
    columns = _columns(db, table)
    if len(columns) > 10:
        return None  # a column is one digit in _INSTANCES_SQL
    vocab = _VOCAB.format(table=table)
    db.conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {table}, instance)"
    )
    column_case = "CASE col " + " ".join(
        f"WHEN '{name}' THEN {i}" for i, name in enumerate(columns)
    )
    column_case += " END"
    total_rows, column_totals = _averages(db, table, len(columns))
    total = sum(column_totals)  # every token is one instance
    docs = np.empty(total, dtype=np.int64)
    cols = np.empty(total, dtype=np.uint8)
    names: list[str] = []
    term_starts: list[int] = []
    start = 0
    sql = _INSTANCES_SQL.format(vocab=vocab, column_case=column_case)
    for term, count, docs_text, cols_text in db.conn.execute(sql):
        end = start + count
        if end > total:
            return None  # the averages record disagrees with the index: leave it to FTS5
        names.append(term)
        term_starts.append(start)
        docs[start:end] = np.fromstring(docs_text, dtype=np.int64, sep=",")
        cols[start:end] = np.frombuffer(cols_text.encode("ascii"), dtype=np.uint8)
        start = end
    if start != total:
        return None
    cols -= ord("0")
    rowids, rows, counts, posting_starts = _group(docs, cols, term_starts, len(columns))
    posting_ends = [*posting_starts[1:], len(rows)]
    # A row's size (bm25()'s D) is its count of token instances, all columns: what the table's
    # docsize record holds, read without needing that record.
    sizes = np.bincount(rows, weights=counts.sum(axis=1), minlength=len(rowids))
    return Postings(
        rowids=rowids,
        sizes=sizes.astype(np.float64),
        terms=dict(zip(names, zip(posting_starts, posting_ends, strict=True), strict=True)),
        rows=rows,
        counts=counts,
        total_rows=total_rows,
        total_tokens=sum(column_totals),
        tokenize=tokenize,
    )


def _group(
    docs: np.ndarray, cols: np.ndarray, term_starts: list[int], width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Instances (term runs of row ids, each instance's column) -> postings, one per (term,
    row): (row ids ascending, each posting's row index, its count per column, each term's
    first posting). Few temporaries: Django's 2.7M instances peak at ~1.5x their own arrays."""
    total = len(docs)
    boundary = np.zeros(total, dtype=bool)
    boundary[np.asarray(term_starts, dtype=np.int64)] = True
    if total > 1 and not np.all((docs[1:] >= docs[:-1]) | boundary[1:]):
        # Not FTS5's order (rowids ascending within a term): sort within each term.
        term_of = np.cumsum(boundary) - 1
        order = np.lexsort((docs, term_of))
        docs, cols = docs[order], cols[order]
        del term_of, order
    new = boundary.copy()
    new[1:] |= docs[1:] != docs[:-1]
    posting_of = (np.cumsum(new, dtype=np.int64) - 1).astype(np.int32)
    firsts = np.flatnonzero(new)
    postings = len(firsts)
    counts = np.zeros((postings, width), dtype=np.uint32)
    for column in range(width):
        counts[:, column] = np.bincount(posting_of[cols == column], minlength=postings)
    dtype = np.uint16 if postings == 0 or counts.max() < 1 << 16 else np.uint32
    posting_docs = docs[firsts]
    del docs, firsts, new
    rowids = np.unique(posting_docs)
    rows = np.searchsorted(rowids, posting_docs).astype(np.int32)
    starts = posting_of[np.asarray(term_starts, dtype=np.int64)].tolist() if term_starts else []
    return rowids, rows, counts.astype(dtype), starts


# FTS5_AVERAGES_ROWID and FTS5_STRUCTURE_ROWID: the structure record (the segments, a cookie and
# a write counter) is rewritten by every write that reaches the index.
_FINGERPRINT_SQL = """SELECT group_concat(hex(block), '.') FROM
    (SELECT block FROM {table}_data WHERE id IN (1, 10) ORDER BY id)"""


def fingerprint(db: Store, table: str) -> bytes | None:
    """What identifies the content of FTS5 table `table` in `db`'s snapshot: its structure and
    averages records, and the schema's version (a table dropped and made again); None when
    there is no such table."""
    try:
        records = db.scalar(_FINGERPRINT_SQL.format(table=table))
    except sqlite3.OperationalError:  # no such table
        return None
    if records is None:
        return None
    version = db.scalar("PRAGMA schema_version")
    return f"{version}:{records}".encode("ascii")


def _columns(db: Store, table: str) -> list[str]:
    return [row[1] for row in db.conn.execute(f"PRAGMA table_info({table})")]


def tokenizer_of(db: Store, table: str) -> str | None:
    """The `tokenize=` option FTS5 table `table` was created with ('unicode61' by default);
    None when it is no FTS5 table or not one with every instance's position (`detail=full`,
    the default: `detail=column` or `none` lists a term once per row, not once per instance,
    and bm25() then counts differently)."""
    sql = db.scalar("SELECT sql FROM sqlite_master WHERE name = ? AND type = 'table'", (table,))
    if not isinstance(sql, str) or "fts5" not in sql.lower():
        return None
    detail = _DETAIL_OPTION.search(sql)
    if detail is not None and detail.group(1).lower() != "full":
        return None
    found = _TOKENIZE_OPTION.search(sql)
    return "unicode61" if found is None else found.group(1).replace("''", "'")


def _averages(db: Store, table: str, columns: int) -> tuple[int, list[int]]:
    """FTS5's averages record: the row count, then each column's total size in tokens."""
    block = db.scalar(_AVERAGES_SQL.format(table=table))
    values = _varints(bytes(block or b""))
    if len(values) < 1 + columns:
        return 0, [0] * columns
    return values[0], values[1 : 1 + columns]


def _varints(data: bytes) -> list[int]:
    """SQLite's varints (big-endian, 7 bits a byte; the ninth byte whole), one after another."""
    values = []
    at = 0
    while at < len(data):
        value = 0
        for i in range(9):
            byte = data[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


class Tokenizer:
    """FTS5's tokenizer `spec` (e.g. 'porter unicode61 remove_diacritics 2') run by SQLite on
    a word: the tokens FTS5 would index it as, in order. Thread-safe; answers are cached."""

    CACHED = 50_000

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        quoted = spec.replace("'", "''")
        self._conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize='{quoted}')")
        self._conn.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, instance)")

    def tokens(self, word: str) -> tuple[str, ...]:
        found = self._cache.get(word)
        if found is not None:
            return found
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute("INSERT INTO words (rowid, word) VALUES (1, ?)", (word,))
                rows = self._conn.execute("SELECT term FROM tokens ORDER BY offset").fetchall()
            finally:
                self._conn.execute("ROLLBACK")
            found = tuple(term for (term,) in rows)
            if len(self._cache) >= self.CACHED:
                self._cache.clear()
            self._cache[word] = found
        return found


_TOKENIZERS: dict[str, Tokenizer] = {}
_TOKENIZERS_LOCK = threading.Lock()


def tokenizer(spec: str) -> Tokenizer:
    """The process's one Tokenizer for `spec`."""
    with _TOKENIZERS_LOCK:
        if spec not in _TOKENIZERS:
            _TOKENIZERS[spec] = Tokenizer(spec)
        return _TOKENIZERS[spec]


def chunks_tokenizer(db: Store) -> Tokenizer:
    """The tokenizer `chunks_fts` was made with (read once per index content): what a
    question's words and a result's lines are split and stemmed by."""
    return tokenizer(
        db.per_content("chunks tokenizer", lambda: tokenizer_of(db, "chunks_fts")) or "unicode61"
    )
