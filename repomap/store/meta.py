"""The `meta` table: key-value facts about an index (its root, versions, pending work)."""

from __future__ import annotations

from pathlib import Path

from repomap.store.connection import Store


def indexed_root(db: Store, fallback: Path) -> Path:
    """The root the index was built from (meta 'root'), or `fallback` if that folder is gone."""
    stored = get_meta(db, "root")
    return Path(stored) if stored and Path(stored).is_dir() else fallback


def get_meta(db: Store, key: str) -> str | None:
    return db.scalar("SELECT value FROM meta WHERE key = ?", (key,))


def set_meta(db: Store, values: dict[str, str]) -> None:
    db.conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        values.items(),
    )
