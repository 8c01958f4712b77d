"""The schema: migrations/NNNN_*.sql applied in order, each in one transaction with its ledger
row (sqlite-utils' migrations table, `_sqlite_migrations`) and PRAGMA user_version.

sqlite-utils is imported here and nowhere else, and only when an existing index is migrated:
its import (pandas and numpy when installed, as pymilvus installs them; dateutil, pluggy,
click) is ~250 ms. A brand-new index is given every migration here instead, in one
transaction, with the ledger table and rows sqlite-utils writes (tests/test_migrations.py
holds the two to the same schema and ledger): that import was ~5% of a cold index of Rust's
std, before the walk, with no worker running yet.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

from repomap.errors import BadArgument, MigrationFailed

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations


def _migrations_folder() -> str:
    """The installed package's migrations folder (never the cwd).

    Through the package's __path__ rather than importlib.resources, whose import (tempfile,
    zipfile) cost a CLI query ~20 ms of its start-up.
    """
    from repomap import migrations

    return next(iter(migrations.__path__))


def _migration_names() -> list[str]:
    """Names of the migrations (`0004_symbols`, ...), in order; read without their SQL, which
    only a run that migrates needs (every search checks the names)."""
    return sorted(
        name.removesuffix(".sql")
        for name in os.listdir(_migrations_folder())
        if name.endswith(".sql") and name[:4].isdigit()
    )


def _migration_files() -> list[tuple[str, str]]:
    """(name, SQL) of each migration."""
    folder = _migrations_folder()
    result = []
    for name in _migration_names():
        with open(os.path.join(folder, name + ".sql"), encoding="utf-8") as file:
            result.append((name, file.read()))
    return result


def _statements(sql: str) -> Iterator[str]:
    """Split a migration into statements; executescript() would COMMIT mid-migration."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip() and not pending.strip().startswith("--"):
        yield pending


def execute_migration_statement(conn: sqlite3.Connection, statement: str) -> None:
    """Run one statement; an FTS5 tokenizer this SQLite lacks (porter) is dropped from the chain.

    `tokenize='porter unicode61'` becomes `tokenize='unicode61'`, and the migration records the
    tokenizer it ended up with (0008 reads it back from sqlite_master into meta).
    """
    try:
        conn.execute(statement)
    except sqlite3.OperationalError as error:
        missing = str(error).removeprefix("no such tokenizer: ")
        fallback = statement.replace(f"tokenize='{missing} ", "tokenize='")
        if missing == str(error) or fallback == statement:
            raise
        conn.execute(fallback)


def _lowers_version(conn: sqlite3.Connection, statement: str) -> bool:
    """A migration numbered below one already applied (0007 landing after 0008) keeps the version."""
    code = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
    setting = re.fullmatch(r"\s*PRAGMA\s+user_version\s*=\s*(\d+)\s*;?\s*", code, re.IGNORECASE)
    if setting is None:
        return False
    (current,) = conn.execute("PRAGMA user_version").fetchone()
    return int(setting.group(1)) < current


MIGRATION_NAMES: list[str] = _migration_names()
_MIGRATIONS: list[Migrations] = []  # sqlite_utils' registry, built on first use


def _migrations() -> Migrations:
    if not _MIGRATIONS:
        from sqlite_utils.migrations import Migrations

        registry = Migrations(LEDGER_SET)
        for name, sql in _migration_files():

            def _run(db: Database, sql: str = sql) -> None:
                for statement in _statements(sql):
                    if not _lowers_version(db.conn, statement):
                        execute_migration_statement(db.conn, statement)

            registry(name=name)(_run)
        _MIGRATIONS.append(registry)
    return _MIGRATIONS[0]


SCHEMA_VERSION = int(MIGRATION_NAMES[-1][:4])


def first_migration_after(version: int) -> str | None:
    """Name of the first migration that takes the schema past `version`."""
    return next((name for name in MIGRATION_NAMES if int(name[:4]) > version), None)


def pending(conn: sqlite3.Connection) -> bool:
    """Whether a known migration is missing from the ledger (read without sqlite_utils)."""
    applied = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = 'repomap'"
        )
    }
    return not applied.issuperset(MIGRATION_NAMES)


def migrate(conn: sqlite3.Connection, to: int | None = None) -> None:
    """Apply pending migrations, each in one transaction with its ledger row and user_version."""
    stop_before = None
    if to is not None and to < SCHEMA_VERSION:
        (current,) = conn.execute("PRAGMA user_version").fetchone()
        if to < current:  # migrations only go forward: sqlite-utils raised a bare ValueError
            _seq, _name, path = conn.execute("PRAGMA database_list").fetchone()
            raise BadArgument(
                f"{path} is at schema v{current}; migrations only go forward, so --to must be "
                f"from {current} to {SCHEMA_VERSION}"
            )
        stop_before = first_migration_after(to)
    try:
        conn.create_function("repomap_int8_vector", 1, _int8_vector, deterministic=True)
        if _is_empty(conn):
            _create(conn, stop_before)
        else:
            from sqlite_utils import Database

            _migrations().apply(Database(conn), stop_before=stop_before)
        _release_free_pages(conn)
    except sqlite3.DatabaseError as error:
        _seq, _name, path = conn.execute("PRAGMA database_list").fetchone()
        raise MigrationFailed(
            f"migrating {path} failed ({error}); it was left at its previous schema version"
        ) from None


# The ledger as sqlite-utils' Migrations.ensure_migrations_table creates it (sqlite-utils 4):
# the same statements, so the schema of a new index does not depend on which path made it.
LEDGER_DDL = (
    'CREATE TABLE "_sqlite_migrations" (\n   "id" INTEGER PRIMARY KEY,\n   "migration_set" TEXT,\n'
    '   "name" TEXT,\n   "applied_at" TEXT\n)',
    'CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"\n'
    '    ON "_sqlite_migrations" ("migration_set", "name")',
)
LEDGER_SET = "repomap"  # the ledger's migration_set for this schema


def _is_empty(conn: sqlite3.Connection) -> bool:
    """A database with nothing in it yet (no table, no index, no view)."""
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None


def _create(conn: sqlite3.Connection, stop_before: str | None) -> None:
    """Every migration (those before `stop_before`) applied to an empty database in one
    transaction, each recorded in the ledger as sqlite-utils records it: killed midway, the
    database is left empty, and the next run starts again."""
    from datetime import datetime, timezone

    conn.execute("BEGIN")
    try:
        for statement in LEDGER_DDL:
            conn.execute(statement)
        for name, sql in _migration_files():
            if name == stop_before:
                break
            for statement in _statements(sql):
                if not _lowers_version(conn, statement):
                    execute_migration_statement(conn, statement)
            conn.execute(
                "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, ?)",
                (LEDGER_SET, name, str(datetime.now(timezone.utc))),
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _int8_vector(blob: bytes | None) -> bytes | None:
    """A float16 vector blob (schema v14-v16) as the int8 row v17 stores; None when it is not a
    vector (0017_int8_vectors.sql drops those rows)."""
    from repomap.store.int8 import int8_rows

    if not isinstance(blob, bytes) or not blob or len(blob) % 2:
        return None
    import numpy as np

    halves = np.frombuffer(blob, "<f2")
    try:
        return bytes(int8_rows(halves[None, :], len(halves)).tobytes())
    except ValueError:  # zero or not finite
        return None


def _release_free_pages(conn: sqlite3.Connection) -> None:
    """Hand the pages a migration freed (a table built again) back to the file system, when
    the index is incremental auto-vacuum; otherwise they stay free pages, reused later."""
    (mode,) = conn.execute("PRAGMA auto_vacuum").fetchone()
    (free,) = conn.execute("PRAGMA freelist_count").fetchone()
    if mode != 2 or not free:
        return
    # sqlite3_exec steps the pragma to its end (execute() would step it once: one page) and
    # leaves no statement open.
    conn.executescript("PRAGMA incremental_vacuum;")
