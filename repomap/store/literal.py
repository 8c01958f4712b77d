"""Whether the index keeps `code_text_literal`, the trigram index of literal search (schema v19).

A trigram index takes more room than the text it indexes: on LLVM's headers (6.2 MB of
comments, docstrings and strings) it was 8.1 MB, 12% of the database, and what put the
database over 1.5 MB per 10,000 lines. Reading that text whole with instr() finds any literal
in ~12 ms there (Django's 4.1 MB in 152,000 elements: ~15 ms), so a small tree's index keeps
no trigram index and a literal search reads the text (search/text.py); the Linux kernel's
241 MB of text would take ~0.5 s a search, so a large tree keeps it.

The choice is by the bytes of code indexed (the code files' sizes, known after the walk), made
at the start of each run's writes (Writer.keep_literal_index): from `threshold` bytes on the
index is built from the rows there (a cold run: none yet) and kept by every write after; under
half of it, emptied. Between the two the index stays as it is, so a tree near the threshold
does not build and drop it run after run. The state lives in meta (LITERAL_INDEX_META), written
in the transaction that builds or empties the index: readers and a killed run see one or the
other, never an index that disagrees with it.
"""

from __future__ import annotations

from repomap.store.connection import Store
from repomap.store.meta import get_meta, set_meta

LITERAL_INDEX_META = "literal_index"  # "1": code_text_literal holds every code_text row; "0": none


def literal_indexed(db: Store) -> bool:
    """Whether code_text_literal is kept."""
    return kept(get_meta(db, LITERAL_INDEX_META))


def kept(value: str | None) -> bool:
    """Whether meta's literal_index `value` says the index is kept (no row: an index from
    before v19 that migration 0019 has not reached yet, which kept it)."""
    return value != "0"


def wanted(code_bytes: int, threshold: int, kept: bool) -> bool:
    """Whether an index of `code_bytes` bytes of code keeps the trigram index (see module doc)."""
    if code_bytes >= threshold:
        return True
    return kept and code_bytes >= threshold // 2


def set_literal_index(db: Store, keep: bool) -> None:
    """Build the trigram index from every code_text row, or empty it; call inside a transaction
    that writes no text row before it."""
    conn = db.conn
    if keep:
        conn.execute("INSERT INTO code_text_literal (code_text_literal) VALUES ('rebuild')")
    else:
        conn.execute("INSERT INTO code_text_literal (code_text_literal) VALUES ('delete-all')")
    set_meta(db, {LITERAL_INDEX_META: "1" if keep else "0"})
