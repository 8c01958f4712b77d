"""Schema versions: v4 -> v5 in place with nothing lost, failures roll back, newer is refused."""

from __future__ import annotations

import importlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli

from repomap import store
from repomap.errors import NotAnIndex, SchemaTooNew

FILES = {
    "pkg/pool.py": '''
        """Connection pools."""

        class ConnectionPool:
            """Keeps connections."""

            def get(self):
                # pick the oldest idle connection
                return "no connection available"
        ''',
    "pkg/util.py": "def helper():\n    return ConnectionPool()\n",
}


def _version(path: Path) -> int:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


# The symbols columns of every schema before v16, a doc read back from its code_text row as the
# current index keeps it (doc_text, v16).
OLD_SYMBOL_COLUMNS = """id, file_id, name, qualified_name, kind, start_line, end_line, start_col,
    end_col, start_byte, end_byte, signature, parent_id,
    coalesce((SELECT t.content FROM full.code_text t WHERE t.id = s.doc_text), s.doc),
    is_definition, declaration_id"""
V4_SYMBOLS_SQL = """SELECT id, file_id, name, qualified_name, kind, start_line, end_line, start_col,
    end_col, start_byte, end_byte, signature, parent_id, doc, is_definition, declaration_id
    FROM symbols ORDER BY id"""


def _make_v4_index_with_symbols(repo: Path, index, tmp_path: Path) -> Path:
    """A v4 database holding the symbols and references of `repo`, as an old repomap left it."""
    full = tmp_path / "full.db"
    index(repo, db=full)
    v4 = tmp_path / "v4.db"
    assert run_cli("migrate", "--db", v4, "--to", "4").returncode == 0
    with closing(sqlite3.connect(v4, isolation_level=None)) as conn:
        conn.execute("ATTACH ? AS full", (str(full),))
        conn.execute(
            "INSERT INTO files SELECT id, path, language, size, mtime_ns, hash, line_count, status,"
            " note, indexed_at FROM full.files"
        )
        conn.execute(f"INSERT INTO symbols SELECT {OLD_SYMBOL_COLUMNS} FROM full.symbols s")
        conn.execute("INSERT INTO refs SELECT * FROM full.refs")
    assert _version(v4) == 4
    return v4


def _as_v8_index(full: Path, v8: Path) -> Path:
    """A v8 database holding the rows of the current index `full`, its text rows as v8 stored
    them (every symbol name spelled out), as the last release left it."""
    assert run_cli("migrate", "--db", v8, "--to", "8").returncode == 0
    with closing(sqlite3.connect(v8, isolation_level=None)) as conn:
        conn.execute("ATTACH ? AS full", (str(full),))
        conn.execute(
            "INSERT INTO files SELECT id, path, language, size, mtime_ns, hash, line_count, status,"
            " note, indexed_at, text_indexed FROM full.files"
        )
        conn.execute(f"INSERT INTO symbols SELECT {OLD_SYMBOL_COLUMNS} FROM full.symbols s")
        conn.execute(
            "INSERT INTO code_text SELECT t.id, t.file_id, t.line_number, t.end_line,"
            " t.element_type, v.symbol_name, t.content, t.subwords"
            " FROM full.code_text t JOIN full.code_text_view v ON v.id = t.id"
        )
        conn.execute("INSERT INTO code_text_fts(code_text_fts) VALUES ('rebuild')")
    return v8


def _dump(path: Path) -> list[str]:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return list(conn.iterdump())


def _rows(path: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute(sql).fetchall()


def test_migrate_to_4_makes_a_v4_database_without_text_tables(tmp_path):
    path = tmp_path / "old.db"
    result = run_cli("migrate", "--db", path, "--to", "4")
    assert result.returncode == 0, result.stderr
    assert _version(path) == 4
    tables = {row[0] for row in _rows(path, "SELECT name FROM sqlite_master")}
    assert {"files", "symbols", "refs"} <= tables
    assert "code_text_fts" not in tables


def test_migrating_a_v4_index_keeps_its_symbols_and_the_next_index_fills_text(
    make_repo, index, tmp_path
):
    repo = make_repo(FILES)
    v4 = _make_v4_index_with_symbols(repo, index, tmp_path)
    symbols_before = _rows(v4, V4_SYMBOLS_SQL)
    refs_before = _rows(v4, "SELECT * FROM refs ORDER BY file_id, line, name")
    assert len(symbols_before) == 3

    result = run_cli("migrate", "--db", v4)
    assert result.returncode == 0, result.stderr
    assert _version(v4) == store.SCHEMA_VERSION
    assert _rows(v4, V4_SYMBOLS_SQL) == symbols_before
    assert _rows(v4, "SELECT * FROM refs ORDER BY file_id, line, name") == refs_before
    assert _rows(v4, "SELECT count(*) FROM code_text") == [(0,)]

    # The files are unchanged on disk, yet the next run reads them all for their text.
    summary = index(repo, db=v4)
    assert summary.modified == 2 and summary.unchanged == 0
    hits = _rows(
        v4, "SELECT file_path, line_number FROM code_text_fts WHERE code_text_fts MATCH 'oldest'"
    )
    assert hits == [("pkg/pool.py", 7)]
    assert index(repo, db=v4).unchanged == 2


def test_a_failed_migration_leaves_the_v4_database_untouched(make_repo, index, tmp_path):
    repo = make_repo(FILES)
    v4 = _make_v4_index_with_symbols(repo, index, tmp_path)
    with closing(
        sqlite3.connect(v4, isolation_level=None)
    ) as conn:  # something in the way of migration 0005
        conn.execute("CREATE TABLE code_text (x)")
    before = _dump(v4)
    result = run_cli("migrate", "--db", v4)
    assert result.returncode != 0
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert _version(v4) == 4
    assert len(_rows(v4, "SELECT * FROM symbols")) == 3
    assert _rows(v4, "SELECT name FROM sqlite_master WHERE name = 'code_text_fts'") == []
    assert _dump(v4) == before


def test_a_newer_schema_is_refused_and_never_written(tmp_path):
    path = tmp_path / "future.db"
    assert run_cli("migrate", "--db", path).returncode == 0
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew):
        store.open_index(path)
    result = run_cli("index", tmp_path, "--db", path)
    assert result.returncode == 2
    assert "newer than this repomap" in result.stderr
    assert path.read_bytes() == before


def test_a_database_of_another_application_is_refused(tmp_path):
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    before = path.read_bytes()
    with pytest.raises(NotAnIndex):
        store.open_index(path)
    assert path.read_bytes() == before


def test_migrating_v8_text_rows_to_symbol_ids_keeps_every_symbol_name(make_repo, index, tmp_path):
    """v9 names a text row's symbol by id: the names read through the view and FTS are unchanged,
    a name no symbol has (a module docstring's module) stays as text, and search still works."""
    repo = make_repo(FILES)
    full = tmp_path / "full.db"
    index(repo, db=full)
    view_sql = "SELECT id, file_path, line_number, symbol_name FROM code_text_view ORDER BY id"
    expected = _rows(full, view_sql)
    assert ("pkg.pool" in {row[3] for row in expected}) and "ConnectionPool.get" in {
        row[3] for row in expected
    }
    v8 = _as_v8_index(full, tmp_path / "v8.db")
    assert _version(v8) == 8

    result = run_cli("migrate", "--db", v8)
    assert result.returncode == 0, result.stderr
    assert _version(v8) == store.SCHEMA_VERSION
    assert _rows(v8, view_sql) == expected
    # Only the module docstring keeps its name as text; the rest point at symbols.
    assert _rows(v8, "SELECT symbol_name FROM code_text WHERE symbol_name IS NOT NULL") == [
        ("pkg.pool",)
    ]
    assert _rows(
        v8, "SELECT symbol_name FROM code_text_fts WHERE code_text_fts MATCH 'oldest'"
    ) == [("ConnectionPool.get",)]
    assert _rows(v8, "SELECT count(*) FROM code_text WHERE symbol_id IS NOT NULL")[0][0] >= 3
    # The migration picks the same symbol the writer does, duplicate names included.
    ids_sql = "SELECT id, symbol_id FROM code_text ORDER BY id"
    assert _rows(v8, ids_sql) == _rows(full, ids_sql)


def test_migration_9_and_the_writer_pick_the_same_symbol_among_duplicate_names(
    make_repo, index, tmp_path
):
    repo = make_repo(
        {
            "d.py": "def f():\n    # in the first f\n    return 1\n\n\ndef f():\n"
            "    # in the second f\n    return 2\n",
            "p.cc": "namespace n {\nclass P {\n  /// declared\n  void f();\n};\n}\n"
            "void n::P::f() {\n  // in the definition\n}\n",
        }
    )
    full = tmp_path / "full.db"
    index(repo, db=full)
    holder = """SELECT t.content, s.start_line, s.is_definition FROM code_text t
        JOIN symbols s ON s.id = t.symbol_id ORDER BY t.id"""
    assert _rows(full, holder) == [
        ("in the first f", 1, 1),
        ("in the second f", 6, 1),
        ("declared", 4, 0),  # a doc comment: the symbol right after it
        ("in the definition", 7, 1),  # not the in-class declaration of the same name
    ]
    v8 = _as_v8_index(full, tmp_path / "v8.db")
    assert run_cli("migrate", "--db", v8).returncode == 0
    assert _rows(v8, holder) == _rows(full, holder)


def test_migrating_backwards_is_a_one_line_error_that_changes_nothing(tmp_path):
    db = tmp_path / "index.db"
    store.open_index(db).close()
    before = db.read_bytes()
    result = run_cli("migrate", "--db", db, "--to", "5")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"error: {db} is at schema v{store.SCHEMA_VERSION}; migrations only go forward, so --to "
        f"must be from {store.SCHEMA_VERSION} to {store.SCHEMA_VERSION}\n"
    )
    assert db.read_bytes() == before


def _schema_and_ledger(path: Path, apply) -> tuple:
    schema = importlib.import_module("repomap.store.migrate")  # store.migrate: the function

    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.create_function("repomap_int8_vector", 1, schema._int8_vector, deterministic=True)
        apply(conn)
        return (
            conn.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
            ).fetchall(),
            conn.execute("PRAGMA user_version").fetchone()[0],
            conn.execute(
                "SELECT id, migration_set, name FROM _sqlite_migrations ORDER BY id"
            ).fetchall(),
        )


@pytest.mark.parametrize("to", [None, 8])
def test_a_new_index_gets_the_schema_and_ledger_that_sqlite_utils_gives_it(tmp_path, to):
    """A new index is made without importing sqlite-utils (store/migrate.py `_create`): the
    same tables, indexes, triggers, version and ledger as sqlite-utils' Migrations make, and
    sqlite-utils then finds nothing left to apply."""
    from sqlite_utils import Database

    schema = importlib.import_module("repomap.store.migrate")  # store.migrate: the function

    stop_before = None if to is None else schema.first_migration_after(to)
    ours = _schema_and_ledger(tmp_path / "ours.db", lambda conn: schema.migrate(conn, to))
    theirs = _schema_and_ledger(
        tmp_path / "theirs.db",
        lambda conn: schema._migrations().apply(Database(conn), stop_before=stop_before),
    )
    assert ours == theirs
    assert ours[1] == (to or store.SCHEMA_VERSION)
    with closing(sqlite3.connect(tmp_path / "ours.db")) as conn:
        pending = [m.name for m in schema._migrations().pending(Database(conn))]
    assert pending == [name for name in schema.MIGRATION_NAMES if name >= (stop_before or "9")]


def test_a_new_index_whose_creation_fails_is_left_empty(tmp_path, monkeypatch):
    from repomap.errors import MigrationFailed

    schema = importlib.import_module("repomap.store.migrate")  # store.migrate: the function

    real = schema._migration_files()
    broken = [*real, ("9999_broken", "CREATE TABLE files (x);")]  # `files` exists by then
    monkeypatch.setattr(schema, "_migration_files", lambda: broken)
    path = tmp_path / "new.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        with pytest.raises(MigrationFailed):
            schema.migrate(conn)
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
        assert conn.execute("PRAGMA user_version").fetchone() == (0,)
    # The next run makes the whole schema.
    monkeypatch.setattr(schema, "_migration_files", lambda: real)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        schema.migrate(conn)
        assert conn.execute("PRAGMA user_version").fetchone() == (store.SCHEMA_VERSION,)
