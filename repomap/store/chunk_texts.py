"""The words of the retrieval chunks (title, place, head, body), kept compressed (schema v16).

`chunks_fts` is contentless: BM25 needs only its own index, and the words it was given are kept
here with the chunk's name, one zlib blob per GROUP chunks of a file (a JSON list of [title,
place, head, body, name], in ordinal order), for what reads them back: FTS5's 'delete' (a contentless table forgets a row
only when told the values it indexed), `repomap search`'s names and snippets, and the embedding text and its hash (`hashes`: the
embedding cache's key, computed when embedding rather than stored: 32 bytes a chunk).
Sixteen chunks of a file compress 3.5x (the path's words, a class's member names and common
words repeat; a whole file 4x, one chunk alone under 2x), and a search decodes at most 16 chunks
for one snippet (a whole file cost a Django search 1 ms more). A blob's key is its first chunk's
id (`group_of`), so one file's rows stay one id range.

Written by the writer (store/writer.py) and store/records.py through `write` / `forget` /
`index_pending`; read with `texts`. The words of a batch wait in a temporary table
(`temp.chunk_pending`: it rolls back with the batch's savepoints) and enter `chunks_fts` in one
statement at the batch's end: FTS5 writes a segment per statement.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence

from repomap.store.connection import Store

ROWS_PER_FILE = 1 << 20  # = writer.ROWS_PER_FILE: ordinals of one file's chunks
GROUP = 16  # chunks per blob (64: LLVM 0.4 MB smaller, a search's snippets 0.2 ms slower)
DATA_BASE = 1 << 56  # index/chunks.py DATA_CHUNK_BASE
COMMIT_BASE = 1 << 60  # index/chunks.py COMMIT_CHUNK_BASE: a commit's chunk is a group alone
LEVEL = 6  # zlib: level 1 is 30% faster and 15-20% larger

Texts = tuple[str, str, str, str, str]  # title, place, head, body (chunks_fts' columns), name
# About 256 word pieces: the widest window the model can be run with (embed/model.py); by
# default it reads the first 128 (DEFAULT_MAX_TOKENS), so a long chunk's body words past the
# title, head and first words are not embedded (the lexical signal still holds them all).
EMBED_CHARS = 1500

_PENDING_SQL = """CREATE TEMP TABLE IF NOT EXISTS chunk_pending (
    id INTEGER PRIMARY KEY, title TEXT, place TEXT, head TEXT, body TEXT)"""
_GONE_SQL = """CREATE TEMP TABLE IF NOT EXISTS chunk_gone (
    id INTEGER PRIMARY KEY, title TEXT, place TEXT, head TEXT, body TEXT)"""
INDEX_PENDING_SQL = """INSERT INTO chunks_fts (rowid, title, place, head, body)
    SELECT id, title, place, head, body FROM temp.chunk_pending ORDER BY id"""
UNINDEX_GONE_SQL = """INSERT INTO chunks_fts (chunks_fts, rowid, title, place, head, body)
    SELECT 'delete', id, title, place, head, body FROM temp.chunk_gone ORDER BY id"""


def embedding_text(title: str, head: str, body: str) -> str:
    """What the embedding model reads of a chunk: most telling first, cut to its window. The
    path is left out, so a renamed or moved file's chunks keep their hash (and cached vector)."""
    return f"{title}\n{head}\n{body}"[:EMBED_CHARS]


def content_hash(title: str, head: str, body: str) -> str:
    """sha256 hex of the embedding text: the embedding cache's key (not stored, schema v16)."""
    return hashlib.sha256(embedding_text(title, head, body).encode("utf-8")).hexdigest()


def group_of(chunk_id: int) -> tuple[int, int]:
    """(key of the blob holding a chunk's words, the chunk's place in it)."""
    if chunk_id >= COMMIT_BASE:
        return chunk_id, 0
    if chunk_id >= DATA_BASE:
        place = (chunk_id - DATA_BASE) % ROWS_PER_FILE % GROUP
        return chunk_id - place, place
    if chunk_id >= 0:
        place = chunk_id % ROWS_PER_FILE % GROUP
        return chunk_id - place, place
    place = -chunk_id % ROWS_PER_FILE % GROUP  # docs: -(doc_files.id * ROWS_PER_FILE + ordinal)
    return chunk_id + place, place


def pack(texts: Sequence[Sequence[str]]) -> bytes:
    """One file's chunk words as stored."""
    data = json.dumps(texts, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return zlib.compress(data, LEVEL)


def unpack(blob: bytes) -> list[Texts]:
    words = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    return [tuple(item) for item in words]


def write(store: Store, ids: Sequence[int], texts: Sequence[Texts]) -> None:
    """Keep the words of one file's chunks (`ids` in ordinal order from ordinal 0, or a
    commit's one chunk) and queue them for `chunks_fts` (added by `index_pending`, inside the
    same transaction)."""
    if not ids:
        return
    conn = store.conn
    conn.execute(_PENDING_SQL)
    conn.executemany(
        "INSERT INTO chunk_texts (id, texts) VALUES (?, ?)",
        ((ids[start], pack(texts[start : start + GROUP])) for start in range(0, len(ids), GROUP)),
    )
    conn.executemany(
        "INSERT INTO temp.chunk_pending (id, title, place, head, body) VALUES (?, ?, ?, ?, ?)",
        ((chunk_id, *words[:4]) for chunk_id, words in zip(ids, texts, strict=True)),
    )


def index_pending(store: Store) -> None:
    """Add the queued words to `chunks_fts`, in one statement."""
    conn = store.conn
    conn.execute(_PENDING_SQL)
    conn.execute(INDEX_PENDING_SQL)
    conn.execute("DELETE FROM temp.chunk_pending")


def forget(store: Store, first: int, end: int) -> None:
    """Drop the words of the chunks with ids in [first, end) (whole groups): out of the queue if
    they wait there, else out of `chunks_fts` with the values it indexed. The caller deletes
    the `chunks` rows."""
    conn = store.conn
    conn.execute(_PENDING_SQL)
    conn.execute(_GONE_SQL)
    queued = {
        chunk_id
        for (chunk_id,) in conn.execute(
            "SELECT id FROM temp.chunk_pending WHERE id >= ? AND id < ?", (first, end)
        )
    }
    if queued:
        conn.execute("DELETE FROM temp.chunk_pending WHERE id >= ? AND id < ?", (first, end))
    indexed = [
        (chunk_id, *words[:4])
        for key, blob in conn.execute(
            "SELECT id, texts FROM chunk_texts WHERE id >= ? AND id < ?", (first, end)
        ).fetchall()
        for chunk_id, words in _numbered(key, unpack(blob))
        if chunk_id not in queued
    ]
    if indexed:
        conn.executemany(
            "INSERT INTO temp.chunk_gone (id, title, place, head, body) VALUES (?, ?, ?, ?, ?)",
            indexed,
        )
        conn.execute(UNINDEX_GONE_SQL)
        conn.execute("DELETE FROM temp.chunk_gone")
    conn.execute("DELETE FROM chunk_texts WHERE id >= ? AND id < ?", (first, end))


def clear_code(store: Store) -> None:
    """Drop the words of every code file's chunks (ids from 0 up to DATA_BASE) at once: a run
    that reads every file again (Writer.clear_files). `chunks_fts` is emptied whole and given the
    words of the chunks that stay (docs, data files, commits) again from this table, a fraction
    of the cost of telling it each code chunk's words (the kernel's ~1M). The caller deletes the
    `chunks` rows."""
    conn = store.conn
    conn.execute("DELETE FROM chunk_texts WHERE id >= 0 AND id < ?", (DATA_BASE,))
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")
    kept = conn.execute("SELECT id, texts FROM chunk_texts ORDER BY id").fetchall()
    conn.executemany(
        "INSERT INTO chunks_fts (rowid, title, place, head, body) VALUES (?, ?, ?, ?, ?)",
        (
            (chunk_id, *words[:4])
            for key, blob in kept
            for chunk_id, words in _numbered(key, unpack(blob))
        ),
    )


def _numbered(key: int, words: list[Texts]) -> Iterable[tuple[int, Texts]]:
    """Each chunk's id beside its words: docs' ids count down from their key."""
    step = -1 if key < 0 else 1
    return ((key + step * ordinal, item) for ordinal, item in enumerate(words))


def hashes(store: Store) -> dict[int, str]:
    """chunk id -> content_hash of every chunk (the embedding cache's keys): each blob read."""
    return {
        chunk_id: content_hash(title, head, body)
        for key, blob in store.conn.execute("SELECT id, texts FROM chunk_texts")
        for chunk_id, (title, _place, head, body, _name) in _numbered(key, unpack(blob))
    }


def texts(store: Store, ids: Iterable[int]) -> dict[int, Texts]:
    """chunk id -> its (title, place, head, body, name), for the ids whose words are kept."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for chunk_id in ids:
        key, ordinal = group_of(chunk_id)
        groups.setdefault(key, []).append((chunk_id, ordinal))
    found: dict[int, Texts] = {}
    if not groups:
        return found
    rows = store.conn.execute(
        "SELECT id, texts FROM chunk_texts WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(groups)),),
    )
    for key, blob in rows:
        words = unpack(blob)
        for chunk_id, ordinal in groups[key]:
            if ordinal < len(words):
                found[chunk_id] = words[ordinal]
    return found
