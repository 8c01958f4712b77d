"""The `meta` table: key-value facts about an index (its root, versions, pending work)."""

from __future__ import annotations

from pathlib import Path

from repomap.config import tree_of_index
from repomap.store.connection import Store

VECTOR_STORE_META = "vector_store"  # where the vectors are, when not in this database
MAX_FILE_SIZE_META = "max_file_size"  # the file size limit last given to `repomap index`
EMBEDDING_MODEL_META = "embedding_model"  # the model id (model and window) the vectors are from


def has_vectors(db: Store) -> bool:
    """The index has embeddings, here or in the vector store it names: then searches default
    to hybrid and `repomap index` keeps them up to date."""
    if get_meta(db, VECTOR_STORE_META):
        return True
    return bool(db.scalar("SELECT 1 FROM vector_scopes LIMIT 1"))


def kept_size_limit(db: Store) -> int | None:
    """The file size limit a `repomap index` run was last given (kept for the runs after it,
    which are given none), or None."""
    kept = get_meta(db, MAX_FILE_SIZE_META)
    return int(kept) if kept is not None and kept.isdigit() else None


def embedding_model(db: Store) -> str | None:
    """The model id this index's vectors were made with: searches embed the question with the
    same model and window, and later runs keep it (a new default applies to new indexes and to
    `repomap index --force`). Indexes embedded before the meta key: the main scope's model."""
    stored = get_meta(db, EMBEDDING_MODEL_META)
    if stored:
        return stored
    row = db.conn.execute(
        "SELECT m.name FROM vector_scopes s JOIN embedding_models m ON m.id = s.model "
        "WHERE s.name = 'main'"
    ).fetchone()
    return None if row is None else str(row[0])


def indexed_root(db: Store, fallback: Path) -> Path:
    """The tree an index is of: the one whose `.repomap/` folder holds it, wherever it was
    built (a checkout copied with its index, `cp -r a b`, is b's: read as a's, `--root b`
    showed a's files and refreshed against a's); else the root it was built from (meta
    'root', so --db works from anywhere); else `fallback` if that folder is gone."""
    own = tree_of_index(db.path.resolve())
    if own is not None and own.is_dir():
        return own
    stored = get_meta(db, "root")
    return Path(stored) if stored and Path(stored).is_dir() else fallback


def get_meta(db: Store, key: str) -> str | None:
    return db.scalar("SELECT value FROM meta WHERE key = ?", (key,))


def set_meta(db: Store, values: dict[str, str]) -> None:
    db.conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        values.items(),
    )
