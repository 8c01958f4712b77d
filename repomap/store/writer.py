"""The single writer of an index run: file, symbol, reference, text and doc rows, in batches."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import repeat
from typing import NamedTuple, Protocol

from repomap.store import chunk_texts
from repomap.store.connection import Store
from repomap.store.literal import literal_indexed, set_literal_index, wanted
from repomap.store.meta import get_meta, has_vectors, set_meta
from repomap.store.ranks import GRAPH_CHANGED, GRAPH_META
from repomap.store.test_code import in_test_lines, test_lines

ROWS_PER_FILE = 1 << 20  # code_text_fts rowid = files.id * ROWS_PER_FILE + ordinal

INSERT_FILE_SQL = """INSERT INTO files (id, path, language, size, mtime_ns, hash, line_count, status,
    note, indexed_at, text_indexed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)"""
# A docstring or doc comment is a code_text row too: a symbol whose doc is exactly one of its
# file's text rows names that row in doc_text and keeps '' in doc (schema v16: 3.3 MB of the
# LLVM headers' index, 3.6 MB of Rust std's). Readers take coalesce(that row's content, doc).
INSERT_SYMBOL_SQL = """INSERT INTO symbols (id, file_id, name, qualified_name, kind, start_line,
    end_line, start_col, end_col, start_byte, end_byte, signature, parent_id, doc, is_definition,
    doc_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_REF_SQL = "INSERT OR IGNORE INTO refs (file_id, name, line, symbol_id) VALUES (?, ?, ?, ?)"
INSERT_TEXT_SQL = """INSERT INTO code_text (id, file_id, line_number, end_line, element_type,
    symbol_id, symbol_name, content, subwords) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INDEX_TEXT_SQL = """INSERT INTO code_text_fts (rowid, content, subwords)
    SELECT id, content, subwords FROM code_text WHERE id >= ? AND id < ?"""
# External-content FTS5 forgets a row only when told its old indexed values.
UNINDEX_TEXT_SQL = """INSERT INTO code_text_fts (code_text_fts, rowid, content, subwords)
    SELECT 'delete', id, content, subwords FROM code_text WHERE id >= ? AND id < ?"""
# The trigram index of literal search (schema v7), kept like code_text_fts.
# The text as code_text_literal_source gives it (schema v10): with a sentinel after it.
INDEX_LITERAL_SQL = """INSERT INTO code_text_literal (rowid, content)
    SELECT id, content || char(57344) FROM code_text WHERE id >= ? AND id < ?"""
UNINDEX_LITERAL_SQL = """INSERT INTO code_text_literal (code_text_literal, rowid, content)
    SELECT 'delete', id, content || char(57344) FROM code_text WHERE id >= ? AND id < ?"""
# Retrieval chunks (schema v13): code chunk ids are the file's row range, docs chunk ids its
# negated range. Their words go to store/chunk_texts.py (schema v16), and from there into the
# contentless chunks_fts at the end of the batch, in one statement.
INSERT_CHUNK_SQL = """INSERT INTO chunks (id, file_id, doc_id, kind, start_line, end_line,
    is_test) VALUES (?, ?, ?, ?, ?, ?, ?)"""
ELEMENT_TYPE_CODES = {"comment": 1, "docstring": 2, "string_literal": 3}
TEXT_ELEMENT_TYPES = {code: name for name, code in ELEMENT_TYPE_CODES.items()}
COUNTED = ("files", "symbols", "references", *ELEMENT_TYPE_CODES)  # files.counts()' keys
TEXT_COUNTS_SQL = (
    "SELECT element_type, count(*) FROM code_text WHERE id >= ? AND id < ? GROUP BY element_type"
)
# meta: JSON {"schema": user_version, "counts": files.counts()'s answer}, "" when not known
ROW_COUNTS_META = "row_counts"
# The chunk id ranges whose vectors may hold a text their chunk no longer has (Writer.
# rewritten_chunks), as JSON [[start, end], ...], kept with each batch while the index has
# vectors: a run killed between its batches and its check (embedding.drop_stale) leaves them,
# and the next run checks them too. No row, or "": nothing to check.
VECTOR_CHECKS_META = "vector_checks_pending"


def stored_counts(db: Store) -> dict[str, int] | None:
    """The row counts the last run stored, if they still describe the tables (no change since,
    the same schema version: a migration may move rows)."""
    raw = get_meta(db, ROW_COUNTS_META)
    if not raw:
        return None
    try:
        stored = json.loads(raw)
    except ValueError:
        return None
    version = db.conn.execute("PRAGMA user_version").fetchone()[0]
    if not isinstance(stored, dict) or stored.get("schema") != version:
        return None
    counts = stored.get("counts")
    return counts if isinstance(counts, dict) else None


def counts_meta(db: Store, counts: dict[str, int]) -> dict[str, str]:
    """The meta row that stores `counts` for the next run."""
    version = db.conn.execute("PRAGMA user_version").fetchone()[0]
    return {ROW_COUNTS_META: json.dumps({"schema": version, "counts": counts}, sort_keys=True)}


# The text indexes a batch adds to (Writer._index_text) and a large run merges (optimize_text).
TEXT_INDEXES = ("code_text_fts", "code_text_literal", "chunks_fts")
# FTS5's merging while a large run loads (Writer.begin_bulk). By default each flush of the
# pending terms (at every statement's end, and every 1 MB: hashsize) writes a segment, and
# every write merges segments as they pile up (automerge 4; 16 at one level merge at once:
# crisismerge), so a cold run's text went through the merges several times before the final
# 'optimize' merged it all once more. Deferred, segments are merged only at 64 of one level
# and by the 'optimize': the text indexes' CPU of a cold run on 9,000 files of the Linux kernel
# 9.2 -> 5.9 s (bench/README.md, 2026-11-26 15:20-16:50 UTC). optimize_text restores FTS5's
# defaults; a run killed before it leaves the deferred settings, which the next run's writer
# finds and restores (end_bulk), so later small runs merge as before.
DEFERRED_MERGES = (("automerge", 0), ("crisismerge", 64), ("hashsize", 8 << 20))
FTS5_MERGES = (("automerge", 4), ("crisismerge", 16), ("hashsize", 1 << 20))  # FTS5's defaults
# Whether a table's merges are deferred: its configured automerge (no row: FTS5's default).
AUTOMERGE_SQL = "SELECT v FROM {table}_config WHERE k = 'automerge'"
# Indexes a large run into an index without symbols builds at its end instead of as it writes
# (Writer.begin_bulk): names arrive in no order, so each insert went to a random page of
# each, and the end rebuilt them anyway (REINDEX) to fill their pages. On 9,000 files of the
# Linux kernel: the symbols' inserts and commits 3.5 -> 2.3 s, and building both at the end
# cost 0.3 s where rebuilding them cost 0.4 s. Their CREATE statements wait in meta
# (DEFERRED_INDEXES_META, written with the DROP), so a run killed before its end leaves them
# for the next run, which builds them before it writes (end_bulk).
DEFERRED_INDEXES = ("symbols_name", "symbols_unsuffixed")
DEFERRED_INDEXES_META = "deferred_indexes"  # JSON {index: its CREATE INDEX}; no row when none

# Indexes rebuilt after a large run (optimize_text): the ones whose keys come in random order.
PACKED_AFTER_BULK = ("symbols_name", "symbols_file", "symbols_unsuffixed")
REFS_COPY = "refs_packing"  # refs copied out and back after a large run (Writer._pack_refs)
# ...unless it holds more rows than this: on the Linux kernel (8.9M) the copy, run beside the
# ranking, made the cold run ~80 s slower (bench/README.md, 2026-11-26 12:04-12:45 UTC).
PACK_REFS_MAX_ROWS = 2_000_000

# A definition's declaration: the first C or C++ declaration of the same name and qualified
# name. Schema v18 has no index on qualified names: a run that relinks every definition
# groups the declarations once (SQLite indexes the group for the lookups, ~70 ms on LLVM's
# headers), one that relinks a few looks each up by its name (symbols_name).
_LINK_SQL = """UPDATE symbols SET declaration_id = ({declaration})
    WHERE is_definition = 1 AND kind IN ('method', 'function')
      AND file_id IN (SELECT id FROM files WHERE language IN ('c', 'cpp'))"""
LINK_DECLARATIONS_SQL = """WITH declared AS MATERIALIZED (
        SELECT d.name, d.qualified_name, min(d.id) AS id FROM symbols d
        WHERE d.is_definition = 0
          AND d.file_id IN (SELECT id FROM files WHERE language IN ('c', 'cpp'))
        GROUP BY d.name, d.qualified_name)
    """ + _LINK_SQL.format(
    declaration="""SELECT declared.id FROM declared
        WHERE declared.name = symbols.name AND declared.qualified_name = symbols.qualified_name"""
)
# Only the definitions a run can have changed the link of: those in the files it wrote, and
# those named like a declaration it removed or added.
LINK_CHANGED_SQL = (
    _LINK_SQL.format(
        declaration="""SELECT d.id FROM symbols d JOIN files f ON f.id = d.file_id
        WHERE d.name = symbols.name COLLATE NOCASE  -- uses the index
          AND d.name = symbols.name AND d.qualified_name = symbols.qualified_name
          AND d.is_definition = 0 AND f.language IN ('c', 'cpp') ORDER BY d.id LIMIT 1"""
    )
    + """
      AND id IN (
        SELECT id FROM symbols WHERE file_id IN (SELECT value FROM json_each(:files))
        UNION
        SELECT id FROM symbols
        WHERE name COLLATE NOCASE IN (SELECT value FROM json_each(:names))
          AND qualified_name IN (SELECT value FROM json_each(:qualified_names)))"""
)
# What ranking reads of a file (its language, its symbols in id order, how many lines use each
# name), to tell whether rewriting it changed the reference graph.
GRAPH_FILE_SQL = "SELECT language FROM files WHERE id = ?"
GRAPH_SYMBOLS_SQL = """SELECT id, name, qualified_name, kind, doc IS NOT NULL, parent_id IS NULL,
    is_definition FROM symbols WHERE file_id = ? ORDER BY id"""
GRAPH_USES_SQL = "SELECT name, count(*) FROM refs WHERE file_id = ? GROUP BY name ORDER BY name"
# and which of its definitions are test code: the ranking reads the chunks' is_test (index/
# ranking.py TEST_CODE), so a `#[test]` added with no name changed changes the map's order
GRAPH_STARTS_SQL = "SELECT start_line FROM symbols WHERE file_id = ? ORDER BY id"
GRAPH_CHUNKS_SQL = f"""SELECT kind, start_line, end_line, is_test FROM chunks
    WHERE id >= ? * {ROWS_PER_FILE} AND id < (? + 1) * {ROWS_PER_FILE}"""
DECLARATIONS_OF_FILE_SQL = (
    "SELECT name, qualified_name FROM symbols WHERE file_id = ? AND is_definition = 0"
)
LINK_ALL_AFTER = 200  # files: a run that wrote more relinks every definition in one pass

# extractors.model.Symbol's fields, in the order FileRows.symbols tuples hold them.
SYMBOL_FIELDS = (
    "name", "qualified_name", "kind", "start_line", "end_line", "start_col", "end_col",
    "start_byte", "end_byte", "signature", "parent", "doc", "is_definition",
)  # fmt: skip
SymbolFields = tuple[str, str, str, int, int, int, int, int, int, str, str | None, str | None, bool]
ReferenceFields = tuple[str, int, str | None]  # name, line, enclosing qualified name
# element_type, content, line, end_line, symbol_name, subwords
TextFields = tuple[str, str, int, int, str | None, str]
# kind, name, start_line, end_line, is_test, title, place, head, body (index/chunks.py)
ChunkFields = tuple[str, str, int, int, bool, str, str, str, str]
Span = tuple[int, int, int]  # a symbol's id, start and end (lines, or bytes)


class FileRows(NamedTuple):
    """Everything one file contributes, ready to write (made by index.py from an Extraction)."""

    path: str
    language: str
    size: int
    mtime_ns: int
    hash: str
    line_count: int
    status: str
    note: str | None
    # Plain tuples, not the extractor's dataclasses: they cross from worker processes, and
    # pickling tuples costs a tenth of pickling slotted dataclasses.
    symbols: list[SymbolFields]  # SYMBOL_FIELDS order
    references: list[ReferenceFields]
    texts: list[TextFields]
    chunks: Sequence[ChunkFields]  # index/chunks.py ChunkRow


class DocRows(NamedTuple):
    """One Markdown or text file's rows (made by docs.py from a markdown.Document)."""

    path: str
    format: str  # markdown | text
    size: int
    mtime_ns: int
    hash: str
    line_count: int
    # (ordinal, name, level, start_line, end_line, content); ordinal 0 (level 0) is the text
    # before the first heading, ordinal n the section of the n-th heading.
    sections: list[tuple[int, str, int, int, int, str]]
    chunks: Sequence[ChunkFields]  # index/chunks.py ChunkRow


INSERT_DOC_SQL = """INSERT INTO doc_files (id, path, format, size, mtime_ns, hash, line_count,
    indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_HEADING_SQL = """INSERT INTO headings (id, file, text, level, start_line, end_line)
    VALUES (?, ?, ?, ?, ?, ?)"""
INSERT_SECTION_SQL = """INSERT INTO sections (rowid, file, section, content, start_line, end_line)
    VALUES (?, ?, ?, ?, ?, ?)"""


def _symbol_at(candidates: list[Span] | None, line: int, end_line: int) -> int | None:
    """Which of the symbols sharing a qualified name (id, start, end; outer first) something at
    [line, end_line] belongs to: the innermost one holding it, else the nearest one starting
    after it (a doc comment above its item, one of several overloads), else the first.
    Positions are lines for text elements and references (migrations/0009 chooses the same
    way) and bytes for a symbol's parent."""
    if not candidates:
        return None
    first_id, _, _ = candidates[0]
    if len(candidates) == 1:
        return first_id
    holding = [
        symbol_id for symbol_id, start, end in candidates if start <= line and end_line <= end
    ]
    if holding:
        return holding[-1]
    after = [(start, symbol_id) for symbol_id, start, _ in candidates if start >= end_line]
    if after:
        _, nearest_id = min(after)
        return nearest_id
    return first_id


def _owner_ids(
    first: dict[str | None, int],
    shared: dict[str | None, list[Span]],
    owners: Sequence[str | None],
    lines: Sequence[int],
    end_lines: Sequence[int],
) -> list[int | None]:
    """The symbol id of each row's owner (a qualified name): its one symbol, looked up by a C
    loop, or, for a name several symbols share, the one _symbol_at chooses by the row's lines
    (with ranking's collector counting in C too, replaying Django's rows into a new index took
    2.60 s of CPU against 2.68-2.75 s for a Python expression per row)."""
    ids = list(map(first.get, owners))
    if shared and not shared.keys().isdisjoint(owners):
        for index, owner in enumerate(owners):
            if owner in shared:
                ids[index] = _symbol_at(shared[owner], lines[index], end_lines[index])
    return ids


def _outer_first(symbol: SymbolFields) -> tuple[int, int]:
    """Sort key: a symbol before the symbols inside it (by start byte, the longer span first)."""
    (_name, _qualified_name, _kind, _start_line, _end_line, _start_col, _end_col, start_byte,
     end_byte, _signature, _parent, _doc, _is_definition) = symbol  # fmt: skip
    return start_byte, -end_byte


def _id_runs(ids: list[int]) -> Iterator[tuple[int, int]]:
    """Sorted ids as runs of consecutive ones: [1, 2, 3, 7] -> (1, 3), (7, 7)."""
    if not ids:
        return
    start = previous = ids[0]
    for item in ids[1:]:
        if item == previous + 1:
            previous = item
            continue
        yield start, previous
        start = previous = item
    yield start, previous


def _doc_chunk_range(first: int, last: int) -> tuple[int, int]:
    """The chunk ids of doc files first..last: -(id * ROWS_PER_FILE + ordinal)."""
    return (-((last + 1) * ROWS_PER_FILE) + 1, -(first * ROWS_PER_FILE) + 1)


def _row_range(file_id: int) -> tuple[int, int]:
    """The code_text ids of one file: [first, end)."""
    return file_id * ROWS_PER_FILE, (file_id + 1) * ROWS_PER_FILE


class _Graph(NamedTuple):
    """One file's part of the reference graph, and where its symbol ids start."""

    first_id: int | None  # None: the file had no symbols, or their ids were not one block
    symbols: int  # how many it had
    digest: str


def _graph_digest(
    language: str | None, symbols: Iterable[tuple], uses: Iterable[tuple], tests: tuple = ()
) -> str:
    """A digest of what ranking reads of one file: its symbols' (name, qualified name, kind,
    documented, top level, definition), in id order, (name, lines using it), by name, and
    which symbols are test code (`_test_marks`; nothing for a file without test chunks)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{language}\n".encode())
    for row in symbols:
        digest.update(repr(row).encode())
    digest.update(b"\0")
    for row in uses:
        digest.update(repr(row).encode())
    if tests:
        digest.update(b"\0" + repr(tests).encode())
    return digest.hexdigest()


def _test_marks(starts: Sequence[int], chunks: Iterable[tuple[str, int, int, bool]]) -> tuple:
    """Which of a file's symbols (by first line, in id order) its chunks (kind, start, end,
    is_test) make test code, as the ranking reads it (store/test_code.py): () when none is,
    ('all',) when the whole file is."""
    lines = test_lines(chunks)
    if lines is None:
        return ()
    if lines is True:
        return ("all",)
    return tuple(in_test_lines(lines, line) for line in starts)


def _graph_rows(symbol_rows: Iterable[tuple]) -> Iterator[tuple]:
    """What ranking reads of inserted symbol rows (INSERT_SYMBOL_SQL's columns), as
    GRAPH_SYMBOLS_SQL reads it back: a doc stored as '' (its text row named) is still a doc."""
    for row in symbol_rows:
        yield (row[2], row[3], row[4], int(row[13] is not None), int(row[12] is None), row[14])


def _uses(references: Iterable[tuple]) -> list[tuple[str, int]]:
    """(name, lines using it) by name, as GRAPH_USES_SQL reads them (refs keeps one row per
    file, line and name)."""
    return sorted(Counter(name for name, _line in {(r[0], r[1]) for r in references}).items())


class Observer(Protocol):
    """Told what the writer writes (index/ranking.py's Written keeps what ranking reads)."""

    def symbols_written(self, file_id: int, rows: Sequence[tuple]) -> None: ...
    def references_written(self, file_id: int, references: Iterable[tuple]) -> None: ...
    def chunks_written(self, file_id: int, chunks: Sequence[ChunkFields]) -> None: ...
    def file_deleted(self, file_id: int) -> None: ...


class Writer:
    """The single writer of an index run: ids handed out in memory, batches per transaction."""

    def __init__(self, db: Store) -> None:
        self.db = db
        self.conn = db.conn
        self.next_file_id = self._max("files") + 1
        self.next_symbol_id = self._max("symbols") + 1
        self.next_doc_id = self._max("doc_files") + 1
        # Files whose text rows are written but not yet in the two text indexes: they are added
        # at the end of the batch, in one statement per run of consecutive ids. FTS5 writes a
        # new segment for every statement that inserts into it (and merges them as they pile
        # up), so indexing file by file cost twice the CPU of indexing a batch at once.
        self._unindexed: set[int] = set()
        # Docs' chunk rows, written at the end of the batch in ascending id order. Their ids
        # are negative (-(doc id * ROWS_PER_FILE + ordinal)), so written as made, each row went
        # in front of the ones before it: B-tree pages split half full, and a cold index of
        # Django's docs left 9.7 MB of 17.8 MB of chunk pages empty (1.3 MB written in order).
        self._doc_chunks: dict[int, list[tuple]] = {}
        # The chunk id ranges of files and docs whose rows this writer deleted (rewritten or
        # gone): their vectors may hold a text they no longer have (embedding.drop_stale).
        # Those of a killed run that were never checked come first.
        self.rewritten_chunks: list[tuple[int, int]] = pending_vector_checks(db)
        self._checks_kept = len(self.rewritten_chunks)
        self._keeps_checks = has_vectors(db)  # no vectors, no check to remember
        self._depth = 0  # batches open: the outermost indexes the text
        # What link_declarations must revisit: C++ files written, and the (name, qualified
        # name) of in-class declarations removed or added.
        self._linked_files: set[int] = set()
        self._declared_names: set[tuple[str, str]] = set()
        # That tracking lives in memory: a run killed before its final link leaves 'links_pending'
        # at 1 in meta (written with its first change), and the next run relinks everything.
        # No mark at all: an index from before the mark existed, whose last run may have died
        # unlinked too; relinking it once costs what every run cost then.
        self._relink_all = get_meta(db, "links_pending") != "0"
        self._links_marked = False
        self._graph_marked = False  # GRAPH_META set to GRAPH_CHANGED in this run
        # Whether a file written again is compared with its old rows (and keeps its symbol
        # ids): not in a run that reads every file again and ranks from scratch, where reading
        # the old rows back would cost seconds on a large tree for nothing.
        self.compare_graphs = True
        self.observer: Observer | None = None
        # Rows per table as the run started (None: not known, counted again at the end), and
        # what this run's writes and deletions added to them: counting symbols, refs and
        # code_text again took ~20 ms of a one-file run on LLVM, seconds on the Linux kernel.
        self._counts_base = stored_counts(db)
        self._count_changes: Counter[str] = Counter()
        # Files whose rows clear_files deleted and that are not written again yet.
        self._cleared: set[int] = set()
        # FTS5's merging deferred and indexes dropped (begin_bulk), by this run or by one killed
        # before its end.
        self.merges_deferred = self.db.scalar(AUTOMERGE_SQL.format(table=TEXT_INDEXES[0])) == 0
        self.indexes_deferred = bool(get_meta(db, DEFERRED_INDEXES_META))
        # Whether code_text_literal is kept (store/literal.py): written and forgotten with the
        # text rows only then.
        self.literal_kept = literal_indexed(db)

    def _max(self, table: str) -> int:
        return self.db.scalar(f"SELECT coalesce(max(id), 0) FROM {table}")

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction: every file written inside it lands whole or not at all. A batch
        inside a batch is a savepoint; the outermost one adds the text rows to FTS5."""
        if self._depth:
            saved = (
                set(self._unindexed), dict(self._doc_chunks), self._links_marked,
                self._graph_marked,
            )  # fmt: skip
            self._depth += 1
            try:
                with self.db.atomic():
                    yield
            except BaseException:  # rolled back to the savepoint: so is what it wrote
                self._unindexed, self._doc_chunks, self._links_marked, self._graph_marked = saved
                self._counts_base = None  # what was counted may be undone: count again
                raise
            finally:
                self._depth -= 1
            return
        self._depth = 1
        try:
            with self.db.atomic():
                yield
                self._keep_vector_checks()
                self._index_text()
        except BaseException:
            self._links_marked = False  # the marks were rolled back with the batch
            self._graph_marked = False
            self._counts_base = None
            raise
        finally:
            self._depth = 0
            self._unindexed.clear()  # rolled back with the rows, or indexed
            self._doc_chunks.clear()

    def _keep_vector_checks(self) -> None:
        if self._keeps_checks and len(self.rewritten_chunks) > self._checks_kept:
            ranges = json.dumps(merged_ranges(self.rewritten_chunks), separators=(",", ":"))
            set_meta(self.db, {VECTOR_CHECKS_META: ranges})
            self._checks_kept = len(self.rewritten_chunks)

    def vector_checks_done(self) -> None:
        """The rewritten chunks' vectors were checked (or there are none to check): forget
        them, here and in meta, in the caller's batch."""
        self.rewritten_chunks.clear()
        self._checks_kept = 0
        clear_vector_checks(self.db)

    def _mark_links_pending(self) -> None:
        if not self._links_marked:
            # The stored row counts go with the first change: a run killed after it leaves
            # none, and the next one counts the tables again.
            set_meta(self.db, {"links_pending": "1", ROW_COUNTS_META: ""})
            self._links_marked = True

    def graph_changed(self) -> None:
        """Mark the reference graph as changed since the stored ranking (call inside batch()):
        the run's ranking is then computed, not kept."""
        if not self._graph_marked:
            set_meta(self.db, {GRAPH_META: GRAPH_CHANGED})
            self._graph_marked = True

    def _stored_graph(self, file_id: int) -> _Graph:
        """The file's part of the graph as the index holds it, before it is rewritten."""
        conn = self.conn
        row = conn.execute(GRAPH_FILE_SQL, (file_id,)).fetchone()
        symbols = conn.execute(GRAPH_SYMBOLS_SQL, (file_id,)).fetchall()
        ids = [symbol[0] for symbol in symbols]
        one_block = bool(ids) and ids[-1] - ids[0] + 1 == len(ids)
        chunks = conn.execute(GRAPH_CHUNKS_SQL, (file_id, file_id)).fetchall()
        tests = ()
        if any(chunk[3] for chunk in chunks):  # most files have no test chunk: no more reads
            starts = [line for (line,) in conn.execute(GRAPH_STARTS_SQL, (file_id,))]
            tests = _test_marks(starts, chunks)
        return _Graph(
            ids[0] if one_block else None,
            len(ids),
            _graph_digest(
                row[0] if row else None,
                (tuple(symbol[1:]) for symbol in symbols),
                conn.execute(GRAPH_USES_SQL, (file_id,)),
                tests,
            ),
        )

    def row_counts(self) -> dict[str, int] | None:
        """Rows per table now (as files.counts() gives them), when known without counting."""
        if self._counts_base is None:
            return None
        counts = Counter(self._counts_base)
        counts.update(self._count_changes)
        return dict(counts)

    def _index_text(self) -> None:
        for first, last in _id_runs(sorted(self._unindexed)):
            span = (first * ROWS_PER_FILE, (last + 1) * ROWS_PER_FILE)
            self.conn.execute(INDEX_TEXT_SQL, span)
            if self.literal_kept:
                self.conn.execute(INDEX_LITERAL_SQL, span)
        self.conn.executemany(
            INSERT_CHUNK_SQL,
            sorted(row for rows in self._doc_chunks.values() for row in rows),
        )
        self._doc_chunks.clear()
        chunk_texts.index_pending(self.db)

    def clear_files(self) -> None:
        """Every code file's rows out at once (call inside batch()), for a run that reads every
        file again (`index --force`, a new extractor version): it then writes as a cold run does
        (the name indexes built once at the end, no old rows read back to tell FTS5 what it
        forgets), where replacing file after file cost 1.5-1.7x a cold run (bench/README.md). The
        files keep their ids: replace_file writes each one under its old id, so a chunk whose
        text did not change keeps its id and its vector (embedding.drop_stale checks them all).
        Readers see the files come back batch by batch; a run killed midway leaves the files it
        wrote, and the next run reads the others."""
        conn = self.conn
        self._mark_links_pending()
        self.graph_changed()
        cleared = [file_id for (file_id,) in conn.execute("SELECT id FROM files ORDER BY id")]
        self._cleared.update(cleared)
        self.rewritten_chunks.extend(merged_ranges(map(_row_range, cleared)))
        for table in (
            ("code_text_fts", "code_text_literal") if self.literal_kept else ("code_text_fts",)
        ):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('delete-all')")
        for table in ("refs", "symbols", "code_text", "files"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM chunks WHERE id >= 0 AND id < ?", (chunk_texts.DATA_BASE,))
        chunk_texts.clear_code(self.db)
        self._counts_base = dict.fromkeys(COUNTED, 0)
        self._count_changes.clear()

    def delete_file(self, file_id: int, *, replaced: bool = False) -> None:
        """Remove a file's rows; `replaced`: replace_file writes it again (and tells whether the
        graph changed)."""
        if file_id in self._cleared:  # its rows went with clear_files
            self._cleared.discard(file_id)
            return
        conn = self.conn
        rows = _row_range(file_id)
        self._mark_links_pending()
        if not replaced:
            self.graph_changed()
        self._declared_names.update(conn.execute(DECLARATIONS_OF_FILE_SQL, (file_id,)))
        changes = self._count_changes
        changes["references"] -= conn.execute(
            "DELETE FROM refs WHERE file_id = ?", (file_id,)
        ).rowcount
        changes["symbols"] -= conn.execute(
            "DELETE FROM symbols WHERE file_id = ?", (file_id,)
        ).rowcount
        for element_type, count in conn.execute(TEXT_COUNTS_SQL, rows):
            changes[TEXT_ELEMENT_TYPES[element_type]] -= count
        if file_id in self._unindexed:  # written in this batch: not in the text indexes yet
            self._unindexed.discard(file_id)
        else:  # telling FTS5 to forget rows it never had would corrupt it
            conn.execute(UNINDEX_TEXT_SQL, rows)
            if self.literal_kept:
                conn.execute(UNINDEX_LITERAL_SQL, rows)
        chunk_texts.forget(self.db, *rows)
        self.rewritten_chunks.append(rows)  # a file's chunk ids are its row range
        conn.execute("DELETE FROM code_text WHERE id >= ? AND id < ?", rows)
        conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", rows)
        changes["files"] -= conn.execute("DELETE FROM files WHERE id = ?", (file_id,)).rowcount
        if self.observer is not None:
            self.observer.file_deleted(file_id)

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """The bytes are unchanged (same hash): only remember the new stat."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id)
        )

    def mark_unread(self, file_ids: Iterable[int]) -> None:
        """These files' rows must be made again though their bytes are unchanged (what they
        were extracted with changed): the next run reads them whole, even if this one stops."""
        self.conn.executemany(
            "UPDATE files SET text_indexed = 0 WHERE id = ?", ((i,) for i in file_ids)
        )

    def replace_file(self, rows: FileRows, old_id: int | None, indexed_at: str) -> int:
        """Write one file's rows in place of its old ones (call inside batch()).

        A file written again with no more symbols than it had takes its old block of symbol
        ids: rewritten with the same definitions and uses (a comment, a body edit using the
        same names), every row that names a symbol elsewhere, the ranking's among them, still
        holds."""
        self._mark_links_pending()
        before = None
        if old_id is not None:
            if self.compare_graphs and old_id not in self._cleared:
                before = self._stored_graph(old_id)
            self.delete_file(old_id, replaced=True)
        file_id = old_id if old_id is not None else self.next_file_id
        self.next_file_id = max(self.next_file_id, file_id + 1)
        self.conn.execute(
            INSERT_FILE_SQL,
            (
                file_id,
                rows.path,
                rows.language,
                rows.size,
                rows.mtime_ns,
                rows.hash,
                rows.line_count,
                rows.status,
                rows.note,
                indexed_at,
            ),
        )
        changes = self._count_changes
        changes["files"] += 1
        changes["symbols"] += len(rows.symbols)
        base = file_id * ROWS_PER_FILE
        texts = rows.texts[: ROWS_PER_FILE - 1]
        text_ids: dict[str, int] = {}  # a text's content -> the first row holding it
        for ordinal, (_kind, content, _line, _end, _symbol, _parts) in enumerate(texts):
            text_ids.setdefault(content, base + ordinal)
        first_id = (
            before.first_id
            if before is not None and before.first_id is not None
            and len(rows.symbols) <= before.symbols
            else None
        )  # fmt: skip
        named, declarations, symbol_rows = self._insert_symbols(
            file_id, rows.symbols, text_ids, first_id
        )
        # Most names have one symbol: a lookup; _symbol_at chooses among several (per row, a
        # call cost ~0.4 s of CPU on Django's 500k references and text rows). Keyed by the
        # owner a row names, None (top level) included, which no symbol has.
        first: dict[str | None, int] = {}
        for name, candidates in named.items():
            first_id, _, _ = candidates[0]
            first[name] = first_id
        shared: dict[str | None, list[Span]] = {
            name: candidates for name, candidates in named.items() if len(candidates) > 1
        }
        if rows.language in ("c", "cpp"):
            self._linked_files.add(file_id)
            self._declared_names.update(declarations)
        if self.observer is not None:
            self.observer.references_written(file_id, rows.references)
        inserted = self.conn.total_changes
        if rows.references:
            names, lines, owners = zip(*rows.references, strict=True)
            symbol_ids = _owner_ids(first, shared, owners, lines, lines)
            self.conn.executemany(
                INSERT_REF_SQL, zip(repeat(file_id), names, lines, symbol_ids, strict=False)
            )
        changes["references"] += self.conn.total_changes - inserted  # repeats are ignored
        if (
            before is None
            or first_id is None
            or before.digest
            != _graph_digest(
                rows.language,
                _graph_rows(symbol_rows),
                _uses(rows.references),
                _test_marks(
                    [row[5] for row in symbol_rows],
                    ((chunk[0], chunk[2], chunk[3], bool(chunk[4])) for chunk in rows.chunks),
                ),
            )
        ):
            self.graph_changed()
        if texts:
            kinds, contents, lines, end_lines, symbols, parts = zip(*texts, strict=True)
            # A name no symbol has is kept in symbol_name (schema v9): get()'s default.
            unknown = dict.fromkeys(first)
            self.conn.executemany(
                INSERT_TEXT_SQL,
                zip(
                    range(base, base + len(texts)),
                    repeat(file_id),
                    lines,
                    end_lines,
                    map(ELEMENT_TYPE_CODES.__getitem__, kinds),
                    _owner_ids(first, shared, symbols, lines, end_lines),
                    map(unknown.get, symbols, symbols),
                    contents,
                    parts,
                    strict=False,
                ),
            )
            changes.update(kinds)
        kept = rows.chunks[: ROWS_PER_FILE - 1]
        ids = range(base, base + len(kept))
        self.conn.executemany(
            INSERT_CHUNK_SQL,
            (
                (chunk_id, file_id, None, chunk[0], chunk[2], chunk[3], int(chunk[4]))
                for chunk_id, chunk in zip(ids, kept, strict=True)
            ),
        )
        chunk_texts.write(self.db, ids, [(*chunk[5:9], chunk[1]) for chunk in kept])
        if self.observer is not None:
            self.observer.chunks_written(file_id, kept)
        self._unindexed.add(file_id)
        return file_id

    def _insert_symbols(
        self,
        file_id: int,
        symbols: Iterable[SymbolFields],
        text_ids: dict[str, int],
        first_id: int | None,
    ) -> tuple[dict[str, list[Span]], list[tuple[str, str]], list[tuple]]:
        """Insert a file's symbols (a doc that is one of `text_ids`' texts as that row's id),
        numbered from `first_id` (None: new ids); return (id, start line, end line) of each, by
        qualified name, outer before inner, the (name, qualified name) of the declarations among
        them,
        and the rows inserted (INSERT_SYMBOL_SQL's columns)."""
        named: dict[str, list[Span]] = {}
        declarations: list[tuple[str, str]] = []
        # One qualified name can belong to several symbols (a Rust struct and its impl, a
        # Python name redefined): a parent is the one whose span holds the child.
        spans: dict[str, list[Span]] = {}
        values = []
        next_id = first_id if first_id is not None else self.next_symbol_id
        for (
            name, qualified_name, kind, start_line, end_line, start_col, end_col, start_byte,
            end_byte, signature, parent_name, doc, is_definition,
        ) in sorted(symbols, key=_outer_first):  # fmt: skip
            if not is_definition:
                declarations.append((name, qualified_name))
            symbol_id = next_id
            next_id += 1
            named.setdefault(qualified_name, []).append((symbol_id, start_line, end_line))
            spans.setdefault(qualified_name, []).append((symbol_id, start_byte, end_byte))
            parent = (
                _symbol_at(spans.get(parent_name), start_byte, end_byte) if parent_name else None
            )
            doc_text = text_ids.get(doc) if doc else None
            values.append((
                symbol_id, file_id, name, qualified_name, kind, start_line, end_line, start_col,
                end_col, start_byte, end_byte, "" if signature == name else signature, parent,
                doc if doc_text is None else "", int(is_definition), doc_text,
            ))  # fmt: skip
        if first_id is None:
            self.next_symbol_id = next_id
        self.conn.executemany(INSERT_SYMBOL_SQL, values)
        if self.observer is not None:
            self.observer.symbols_written(file_id, values)
        return named, declarations, values

    def keep_literal_index(self, code_bytes: int, threshold: int) -> None:
        """Build or empty the trigram index of literal search for an index of `code_bytes`
        bytes of code (store/literal.py), before this run writes any text row."""
        keep = wanted(code_bytes, threshold, self.literal_kept)
        if keep != self.literal_kept:
            with self.db.atomic():
                set_literal_index(self.db, keep)
            self.literal_kept = keep

    def begin_bulk(self) -> None:
        """Before a large run writes: FTS5 merges no segments of the text indexes until
        optimize_text (or end_bulk) merges them once (see DEFERRED_MERGES); into an index
        without symbols, the symbols' name indexes are built at the end (DEFERRED_INDEXES)."""
        with self.db.atomic():
            if not self.merges_deferred:
                self._configure_text(DEFERRED_MERGES)
            if (
                not self.indexes_deferred
                and self.db.scalar("SELECT 1 FROM symbols LIMIT 1") is None
            ):
                statements = dict(
                    self.conn.execute(
                        "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND name IN "
                        f"({', '.join('?' * len(DEFERRED_INDEXES))})",
                        DEFERRED_INDEXES,
                    )
                )
                set_meta(self.db, {DEFERRED_INDEXES_META: json.dumps(statements)})
                for index in statements:
                    self.conn.execute(f"DROP INDEX {index}")
                self.indexes_deferred = bool(statements)
        self.merges_deferred = True

    def end_bulk(self) -> None:
        """FTS5's own merging and the deferred indexes back, for a run that is not large (after
        a large run killed before its end: first thing) or that wrote few files after all; the
        next write to a text index merges what piled up."""
        if self.merges_deferred or self.indexes_deferred:
            with self.db.atomic():
                self._end_bulk()

    def _end_bulk(self) -> None:
        if self.merges_deferred:
            self._configure_text(FTS5_MERGES)
            self.merges_deferred = False
        if self.indexes_deferred:
            statements = json.loads(get_meta(self.db, DEFERRED_INDEXES_META) or "{}")
            for sql in statements.values():
                self.conn.execute(sql)
            self.conn.execute("DELETE FROM meta WHERE key = ?", (DEFERRED_INDEXES_META,))
            self.indexes_deferred = False

    def _configure_text(self, settings: Iterable[tuple[str, int]]) -> None:
        for table in TEXT_INDEXES:
            for key, value in settings:
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES (?, ?)", (key, value))

    def optimize_text(self) -> None:
        """Merge each text index into one segment (FTS5 'optimize'), then give the pages of the
        old segments back to the file system (an index made by this version is incremental
        auto-vacuum; an older one keeps them as free pages, reused by later runs).

        Batched indexing leaves a cold index of the three test corpora in ~11 segments, only 3%
        larger than merged, but every term lookup reads each segment: merged, median query
        latency is 20-30% lower. Costs ~0.3 s at the end of a large run. The symbols' name
        indexes are rebuilt too.
        """
        built = set(DEFERRED_INDEXES) if self.indexes_deferred else set()
        self._end_bulk()  # the deferred indexes built: full pages already
        for table in TEXT_INDEXES:
            self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        # Names arrive in no order, so these b-trees split as they grow and stay ~70% full;
        # built again from the sorted keys they are full: 0.8 MB (1.2%) off LLVM's headers for
        # ~0.13 s, beside the ranking on the other core.
        for index in PACKED_AFTER_BULK:
            if index not in built:
                self.conn.execute(f"REINDEX {index}")
        self._pack_refs()

    def _pack_refs(self) -> None:
        """Copy `refs` out and back: a WITHOUT ROWID b-tree splits its pages as it grows (even
        in key order: SQLite appends in place only to rowid tables) and stays ~88% full; copied
        whole from a table of the same definition (SQLite's transfer optimization) its pages
        are full: 0.54 MB off LLVM's headers for ~0.15 s, beside the ranking on the other core.
        The copy is a table of the main database, dropped in the same transaction (its pages go
        back with release_free_pages): with a TEMP table, the connection's next `PRAGMA
        wal_checkpoint` fails ("database table is locked").
        """
        held = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM refs LIMIT ?)", (PACK_REFS_MAX_ROWS + 1,)
        ).fetchone()[0]
        if held > PACK_REFS_MAX_ROWS:  # the kernel's 8.9M rows: ~80 s of a cold run for ~3%
            return
        (definition,) = self.conn.execute(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'refs'"
        ).fetchone()
        copy = definition.replace("CREATE TABLE refs", f"CREATE TABLE {REFS_COPY}", 1)
        if copy == definition:  # a definition written otherwise: left as it is
            return
        self.conn.execute(f"DROP TABLE IF EXISTS {REFS_COPY}")
        self.conn.execute(copy)
        self.conn.execute(f"INSERT INTO {REFS_COPY} SELECT * FROM refs")
        self.conn.execute("DELETE FROM refs")
        self.conn.execute(f"INSERT INTO refs SELECT * FROM {REFS_COPY}")
        self.conn.execute(f"DROP TABLE {REFS_COPY}")

    def release_free_pages(self) -> None:
        """Shrink the file by its free pages (a no-op unless the index was created with
        auto_vacuum = INCREMENTAL)."""
        free: int = self.db.scalar("PRAGMA freelist_count")
        if not free or self.db.scalar("PRAGMA auto_vacuum") != 2:
            return
        with self.db.atomic():
            # Python's sqlite3 steps this pragma once, and each step frees one page (~40 µs).
            for _ in range(free):
                self.conn.execute("PRAGMA incremental_vacuum")

    def link_declarations(self) -> None:
        """Point each C++ out-of-line definition at its in-class declaration: every one after a
        large run, else those the run's writes and deletions can have changed (re-linking all of
        LLVM's headers took ~100 ms of a one-file run)."""
        if self._relink_all or len(self._linked_files) > LINK_ALL_AFTER:
            self.conn.execute(LINK_DECLARATIONS_SQL)
        elif self._linked_files or self._declared_names:
            self.conn.execute(
                LINK_CHANGED_SQL,
                {
                    "files": json.dumps(sorted(self._linked_files)),
                    "names": json.dumps(sorted({name for name, _ in self._declared_names})),
                    "qualified_names": json.dumps(
                        sorted({qualified for _, qualified in self._declared_names})
                    ),
                },
            )
        self._linked_files.clear()
        self._declared_names.clear()
        if self._relink_all or self._links_marked:
            set_meta(self.db, {"links_pending": "0"})
        self._relink_all = self._links_marked = False

    def delete_doc(self, doc_id: int) -> None:
        rows = _row_range(doc_id)
        chunks = _doc_chunk_range(doc_id, doc_id)
        self._doc_chunks.pop(doc_id, None)  # written in this batch: not in `chunks` yet
        chunk_texts.forget(self.db, *chunks)
        self.rewritten_chunks.append(chunks)
        self.conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", chunks)
        self.conn.execute("DELETE FROM sections WHERE rowid >= ? AND rowid < ?", rows)
        self.conn.execute("DELETE FROM headings WHERE id >= ? AND id < ?", rows)
        self.conn.execute("DELETE FROM doc_files WHERE id = ?", (doc_id,))

    def touch_doc(self, doc_id: int, size: int, mtime_ns: int) -> None:
        self.conn.execute(
            "UPDATE doc_files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, doc_id)
        )

    def replace_doc(self, rows: DocRows, old_id: int | None, indexed_at: str) -> int:
        """Write one doc file's headings and sections in place of its old ones (inside batch())."""
        if old_id is not None:
            self.delete_doc(old_id)
        doc_id = old_id if old_id is not None else self.next_doc_id
        self.next_doc_id = max(self.next_doc_id, doc_id + 1)
        self.conn.execute(
            INSERT_DOC_SQL,
            (
                doc_id,
                rows.path,
                rows.format,
                rows.size,
                rows.mtime_ns,
                rows.hash,
                rows.line_count,
                indexed_at,
            ),
        )
        base = doc_id * ROWS_PER_FILE
        self.conn.executemany(
            INSERT_HEADING_SQL,
            (
                (base + ordinal, rows.path, name, level, start, end)
                for ordinal, name, level, start, end, _ in rows.sections
                if ordinal < ROWS_PER_FILE and level > 0
            ),
        )
        self.conn.executemany(
            INSERT_SECTION_SQL,
            (
                (base + ordinal, rows.path, name, content, start, end)
                for ordinal, name, _, start, end, content in rows.sections
                if ordinal < ROWS_PER_FILE
            ),
        )
        kept = rows.chunks[: ROWS_PER_FILE - 1]
        ids = [-(base + ordinal) for ordinal in range(len(kept))]
        self._doc_chunks[doc_id] = [
            (chunk_id, None, doc_id, chunk[0], chunk[2], chunk[3], int(chunk[4]))
            for chunk_id, chunk in zip(ids, kept, strict=True)
        ]
        chunk_texts.write(self.db, ids, [(*chunk[5:9], chunk[1]) for chunk in kept])
        return doc_id


def pending_vector_checks(db: Store) -> list[tuple[int, int]]:
    """The chunk id ranges a killed run rewrote and never checked the vectors of."""
    kept = get_meta(db, VECTOR_CHECKS_META)
    if not kept:
        return []
    return [(int(start), int(end)) for start, end in json.loads(kept)]


def clear_vector_checks(db: Store) -> None:
    """Nothing left to check: a run checked the ranges, or an embedding run compared every
    vector with its chunk's text."""
    if get_meta(db, VECTOR_CHECKS_META):
        with db.atomic():
            set_meta(db, {VECTOR_CHECKS_META: ""})


def merged_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """[start, end) ranges sorted, those that touch or overlap made one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
