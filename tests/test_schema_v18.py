"""Schema v18 (issue 20): qualified names found through the name index, symbol_ranks without the
file id, a signature that is the name alone kept as '', refs packed after a large run, integer
rank arrays stored byte by byte. Every lookup answers as before."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from repomap import store
from repomap.index import pipeline as indexer
from repomap.maps import rows as map_rows
from repomap.search import symbols
from repomap.store import ranks as store_ranks
from repomap.store import writer as writer_module

FILES = {
    "pkg/pool.py": (
        "class ConnectionPool:\n"
        "    size: int = 3\n"
        "    def get(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "        return inner()\n"
    ),
    "pkg/util.py": "from pkg.pool import ConnectionPool\n\ndef helper():\n    return ConnectionPool()\n",
    "src/sync/mutex.rs": (
        "use std::fmt;\n"
        "pub struct Mutex<T> { inner: T }\n"
        "impl<T> Mutex<T> {\n    pub fn lock(&self) -> &T { &self.inner }\n}\n"
        "impl<T> fmt::Display for Mutex<T> {\n"
        "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { Ok(()) }\n}\n"
        "impl Default for Mutex<u8> {\n    fn default() -> Self { Mutex { inner: 0 } }\n}\n"
    ),
    "include/color.h": (
        "#include <string>\n"
        "namespace gfx {\n"
        "enum class Color { Red, Green = 2 };\n"
        "enum Plain { Alpha, Beta = 4 };\n"
        "class Pool {\n public:\n  int add(int x);\n  operator std::string() const;\n};\n"
        "}\n"
    ),
    "src/color.cc": (
        '#include "color.h"\n'
        "int gfx::Pool::add(int x) { return x + gfx::Beta; }\n"
        'gfx::Pool::operator std::string() const { return "pool"; }\n'
    ),
}


@pytest.fixture
def indexed(make_repo, index) -> Path:
    root = make_repo(FILES)
    index(root)
    return root / ".repomap" / "index.db"


def _rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, params).fetchall()


def test_every_symbol_is_found_by_its_qualified_name(indexed: Path) -> None:
    """find_symbol, search_symbols and the map's --mention names find each symbol by its
    qualified name, in either spelling (`a::b` / `a.b`): C++ conversion operators (a name with
    `::` in it) and Rust trait impls (a qualified name that does not end with the name) too."""
    every = _rows(indexed, "SELECT id, name, qualified_name FROM symbols")
    qualified = {q for _, _, q in every}
    assert {"gfx::Pool::operator std::string", "gfx::Color::Red", "gfx::Alpha"} <= qualified
    assert any(" for Mutex" in q for q in qualified), qualified  # a trait impl
    with store.reading(indexed) as db:
        for symbol_id, _name, qualified_name in every:
            for query in {qualified_name, symbols.match_params(qualified_name)["q_alt"]}:
                match = symbols.find_symbol(db, query)
                assert symbol_id in {row.id for row in [match.best, *match.others]}, query
                assert symbol_id in map_rows.symbol_ids_named(db, [query])[query], query
                hits = symbols.search_symbols(db, query, limit=1000)
                found = {(h.qualified_name, h.file_path, h.line_number, h.match) for h in hits}
                assert any(q == qualified_name and m == "exact" for q, _, _, m in found), query


def test_qualified_lookups_read_the_name_index_and_the_partial_index(indexed: Path) -> None:
    """No exact lookup scans the symbols table: the parts of the name go to symbols_name, and
    the rows whose qualified name does not end with their name to symbols_unsuffixed, which
    SQLite uses only while UNSUFFIXED_SQL repeats the migration's condition word for word."""
    params = symbols.match_params("sync::mutex::Display for Mutex<T>")
    statements = {
        "search": (
            symbols.SEARCH_SQL.format(match=symbols.MATCH_SQL["exact"], filters=""),
            {**params, "cap": 20},
        ),
        "find": (symbols.FIND_SQL.format(filters=""), params),
        "mention": (map_rows.SYMBOLS_NAMED_SQL, params),
    }
    with store.reading(indexed) as db:
        for label, (sql, values) in statements.items():
            connection = symbols.with_demoted(db)  # SEARCH_SQL orders by repomap_demoted(path)
            plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, values)]
            assert any("INDEX symbols_name (name=?)" in line for line in plan), (label, plan)
            assert any("symbols_unsuffixed (qualified_name=?)" in line for line in plan), plan
            assert not any(line.startswith("SCAN s") for line in plan), (label, plan)
        names = json.loads(params["names"])
        assert {"Display for Mutex<T>", "mutex::Display for Mutex<T>"} <= set(names)


def test_only_the_rows_that_break_the_suffix_rule_are_in_the_partial_index(indexed: Path) -> None:
    unsuffixed = _rows(
        indexed,
        f"SELECT s.name, s.qualified_name, s.kind FROM symbols s WHERE {symbols.UNSUFFIXED_SQL}",
    )
    assert unsuffixed and {kind for _, _, kind in unsuffixed} == {"impl"}, unsuffixed
    for name, qualified_name, _ in unsuffixed:
        assert not qualified_name.endswith(("::" + name, "." + name)) and name != qualified_name
    (indexed_rows,) = _rows(indexed, "SELECT count(*) FROM symbols INDEXED BY symbols_unsuffixed "
                            f"WHERE {symbols.UNSUFFIXED_SQL.replace('s.', '')}")  # fmt: skip
    assert indexed_rows == (len(unsuffixed),)


def test_an_enumerator_named_alone_is_stored_without_a_signature_and_read_with_its_name(
    indexed: Path,
) -> None:
    stored = dict(
        _rows(indexed, "SELECT qualified_name, signature FROM symbols WHERE kind = 'constant'")
    )
    assert stored["gfx::Color::Red"] == "" and stored["gfx::Alpha"] == ""
    assert stored["gfx::Color::Green"] == "Green = 2" and stored["gfx::Beta"] == "Beta = 4"
    root = indexed.parent.parent
    listed = run_cli("symbols", "gfx::Color::Red", "--json", "--no-refresh", cwd=root)
    assert listed.returncode == 0, listed.stderr
    assert [hit["signature"] for hit in json.loads(listed.stdout)["results"]] == ["Red"]
    shown = run_cli("show", "gfx::Alpha", "--no-refresh", cwd=root)
    assert shown.returncode == 0 and "Alpha" in shown.stdout, shown.stderr
    with store.reading(indexed) as db:
        (red,) = map_rows.symbol_ids_named(db, ["gfx::Color::Red"])["gfx::Color::Red"]
        rows = map_rows.map_symbols(db, [red])  # with its enum and namespace
        assert rows[red].signature == "Red" and rows[rows[red].parent_id].name == "Color"


@pytest.mark.parametrize("packed", [True, False])
def test_a_large_run_leaves_the_refs_pages_full(
    make_repo, index, monkeypatch, tmp_path, packed: bool
) -> None:
    """refs is a WITHOUT ROWID table: rows appended in key order still split its pages; after
    a large run they are as full as VACUUM leaves them, and every row is still there. A table
    above PACK_REFS_MAX_ROWS is left as it is (the copy cost the kernel's cold run ~80 s)."""
    if not packed:
        monkeypatch.setattr(writer_module, "PACK_REFS_MAX_ROWS", 1000)
    files = {
        f"pkg/m{i:03}.py": "".join(
            f"def use_{i}_{j}(x):\n    return helper_{j}(x) + other_name_{i}_{j}(x)\n"
            for j in range(20)
        )
        for i in range(60)
    }
    repo = make_repo(files)
    monkeypatch.setattr(indexer, "OPTIMIZE_AFTER_FILES", 10)
    index(repo)
    db = repo / ".repomap" / "index.db"
    refs_sql = "SELECT * FROM refs ORDER BY file_id, line, name"
    assert len(_rows(db, refs_sql)) == 60 * 20 * 3  # x, helper_j, other_name_i_j

    def refs_bytes(path: Path) -> int:
        return _rows(path, "SELECT sum(pgsize) FROM dbstat WHERE name = 'refs'")[0][0]

    vacuumed = tmp_path / "vacuumed.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("VACUUM INTO ?", (str(vacuumed),))
    if packed:
        assert refs_bytes(db) <= refs_bytes(vacuumed) * 1.02
    else:
        assert refs_bytes(db) > refs_bytes(vacuumed) * 1.02
    assert _rows(db, refs_sql) == _rows(vacuumed, refs_sql)


@pytest.mark.parametrize(
    "values",
    [[1, 70_000, -5, 2**31 - 1, -(2**31)], [2**40, -1], [], list(range(1000))],
)
@pytest.mark.parametrize("dtype", ["<i8", "<i4", "<u2"])
def test_integer_rank_arrays_come_back_equal(tmp_path, values, dtype) -> None:
    array = np.array(values, dtype=np.int64)
    if dtype != "<i8":
        info = np.iinfo(np.dtype(dtype))
        array = array[(array >= info.min) & (array <= info.max)].astype(dtype)
    stored_dtype, data = store_ranks.pack(array)
    assert stored_dtype.startswith(store_ranks.SHUFFLED)
    with store.writing(tmp_path / "index.db") as db, db.atomic():
        db.conn.execute("INSERT INTO rank_arrays VALUES ('x', ?, ?)", (stored_dtype, data))
        back = store_ranks.load_arrays(db, ("x",))["x"]
    assert back.tolist() == array.tolist() and back.dtype.kind == array.dtype.kind


# --- the migration, on a real index turned back into v17 --------------------------------------


def _schema(conn: sqlite3.Connection) -> set[tuple]:
    return set(
        conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
    )


def _as_v17(v18: Path, v17: Path) -> None:
    """`v18` (a real index) as repomap v17 left it: 0018 undone with v17's own definitions."""
    with closing(sqlite3.connect(":memory:")) as fresh:
        store.migrate(fresh, to=17)
        definition = dict(fresh.execute("SELECT name, sql FROM sqlite_schema").fetchall())
    with closing(sqlite3.connect(v18)) as source, closing(sqlite3.connect(v17)) as target:
        source.backup(target)
    with closing(sqlite3.connect(v17, isolation_level=None)) as conn:
        conn.execute("BEGIN")
        conn.execute("DROP INDEX symbols_unsuffixed")
        conn.execute(definition["symbols_qualified_name"])
        conn.execute("ALTER TABLE symbol_ranks RENAME TO symbol_ranks_v18")
        conn.execute(definition["symbol_ranks"])
        conn.execute(
            "INSERT INTO symbol_ranks SELECT r.symbol_id, s.file_id, r.rank "
            "FROM symbol_ranks_v18 r JOIN symbols s ON s.id = r.symbol_id"
        )
        conn.execute("DROP TABLE symbol_ranks_v18")
        conn.execute("UPDATE symbols SET signature = name WHERE signature = ''")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name >= '0018'")
        # v19 and later: v17 kept the trigram index whatever the tree's size, and no meta row
        conn.execute("INSERT INTO code_text_literal (code_text_literal) VALUES ('rebuild')")
        conn.execute("DELETE FROM meta WHERE key = 'literal_index'")
        conn.execute("PRAGMA user_version = 17")
        conn.execute("COMMIT")
        with closing(sqlite3.connect(":memory:")) as fresh:
            store.migrate(fresh, to=17)
            assert _schema(conn) == _schema(fresh)  # exactly a v17 index


def _answers(db_path: Path) -> dict:
    with store.reading(db_path) as db:
        found = {
            query: [
                (row.qualified_name, row.file_path, row.start_line, row.signature, row.rank)
                for row in (lambda m: [m.best, *m.others])(symbols.find_symbol(db, query))
            ]
            for query in (
                "gfx::Color::Red",
                "Mutex.lock",
                "gfx::Pool::operator std::string",
                "ConnectionPool.get",
                "add",
            )  # fmt: skip
        }
        ranks = db.conn.execute(
            "SELECT f.path, s.qualified_name, r.rank FROM symbol_ranks r "
            "JOIN symbols s ON s.id = r.symbol_id JOIN files f ON f.id = s.file_id ORDER BY 1, 2"
        ).fetchall()
        links = db.conn.execute(
            "SELECT s.qualified_name, d.qualified_name FROM symbols s "
            "JOIN symbols d ON d.id = s.declaration_id ORDER BY 1"
        ).fetchall()
    return {"found": found, "ranks": ranks, "links": links}


def test_a_v17_index_migrates_to_v18_with_every_answer_kept(indexed: Path, tmp_path) -> None:
    before = _answers(indexed)
    assert before["links"] == [("gfx::Pool::add", "gfx::Pool::add"),
                               ("gfx::Pool::operator std::string",
                                "gfx::Pool::operator std::string")]  # fmt: skip
    old = tmp_path / "v17.db"
    _as_v17(indexed, old)
    assert _rows(old, "SELECT count(*) FROM symbols WHERE signature = ''") == [(0,)]
    root = indexed.parent.parent
    migrated = run_cli("index", root, "--db", old)
    assert migrated.returncode == 0, migrated.stderr
    assert _rows(old, "PRAGMA user_version") == [(store.SCHEMA_VERSION,)]
    assert _rows(old, "PRAGMA integrity_check") == [("ok",)]
    with closing(sqlite3.connect(old)) as conn, closing(sqlite3.connect(indexed)) as fresh:
        assert _schema(conn) == _schema(fresh)
    assert _rows(old, "SELECT qualified_name FROM symbols WHERE signature = '' ORDER BY 1") == [
        ("gfx::Alpha",),
        ("gfx::Color::Red",),
    ]
    assert _answers(old) == before


def test_a_long_qualified_query_asks_for_a_bounded_number_of_names(indexed: Path) -> None:
    """Only the parts after the last NAME_SEPARATORS + 1 separators can be a name: a query of
    thousands of `::` asks for that many names, not one per separator."""
    assert symbols.tails("a::b.c") == ["b.c", "c"] and symbols.tails("Pool") == []
    parts = symbols.tails("x::" * 20_000 + "Pool")
    assert len(parts) == symbols.NAME_SEPARATORS + 1 and parts[-1] == "Pool"
    assert (
        len(json.loads(symbols.match_params("x::" * 20_000 + "Pool")["names"]))
        <= 2 * len(parts) + 2
    )
    found = run_cli("symbols", "x::" * 3_000 + "Red", "--no-refresh", cwd=indexed.parent.parent)
    assert found.returncode == 1 and found.stderr.startswith("no symbol matches"), found.stderr
    assert found.stderr.count("\n") == 1  # one line, no traceback


def test_the_connection_that_packed_refs_or_migrated_can_still_checkpoint(
    indexed: Path, tmp_path
) -> None:
    """Neither the v18 migration nor the refs packing leaves a TEMP table or a renamed table
    behind on its connection: either made its next `PRAGMA wal_checkpoint` fail."""
    with store.writing(indexed) as db:
        writer = store.Writer(db)
        with writer.batch():
            writer.optimize_text()
        assert db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall() == [(0, 0, 0)]
        assert "refs_packing" not in {
            name for (name,) in db.conn.execute("SELECT name FROM sqlite_schema")
        }
    with store.writing(tmp_path / "new.db") as db:  # every migration, v18's included
        assert db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall() == [(0, 0, 0)]
