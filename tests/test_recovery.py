"""Corrupt, foreign and unwritable index files: clear errors, nothing of the user's lost."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli

REPO = {"a.py": "def alpha():\n    'the alpha docstring'\n", "b.py": "BETA = 'beta value'\n"}


def _symbols(db: Path | str) -> list[str]:
    with closing(sqlite3.connect(db, uri=isinstance(db, str))) as conn:
        return sorted(row[0] for row in conn.execute("SELECT name FROM symbols"))


def test_a_corrupt_default_index_is_moved_aside_and_rebuilt(make_repo):
    root = make_repo(REPO)
    db = root / ".repomap" / "index.db"
    db.parent.mkdir()
    db.write_bytes(os.urandom(8192))
    junk = db.read_bytes()
    result = run_cli("index", root, "--json")
    assert result.returncode == 0, result.stderr
    moved = root / json.loads(result.stdout)["results"][0]["recovered_from"]  # relative to ROOT
    assert moved.parent == db.parent and moved.name.startswith("index.db.corrupt-")
    assert moved.read_bytes() == junk  # kept, never deleted
    assert _symbols(db) == ["BETA", "alpha"]


def test_a_truncated_index_at_a_chosen_path_is_moved_aside_and_rebuilt(make_repo, tmp_path):
    root = make_repo(REPO)
    db = tmp_path / "custom.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    result = run_cli("index", root, "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["recovered_from"]
    assert _symbols(db) == ["BETA", "alpha"]


def test_a_non_sqlite_file_at_a_chosen_path_is_refused_untouched(make_repo, tmp_path):
    root = make_repo(REPO)
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\n" * 100)
    result = run_cli("index", root, "--db", notes)
    assert result.returncode != 0
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert notes.read_text() == "my precious notes\n" * 100
    assert list(tmp_path.glob("notes.txt.corrupt-*")) == []


def test_another_applications_sqlite_file_is_refused_untouched(make_repo, tmp_path):
    root = make_repo(REPO)
    app = tmp_path / "app.db"
    with closing(sqlite3.connect(app)) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.execute("INSERT INTO users VALUES ('ada')")
        conn.commit()
    before = app.read_bytes()
    result = run_cli("index", root, "--db", app)
    assert result.returncode != 0
    assert "did not create" in result.stderr
    assert app.read_bytes() == before


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    # Room for a first index (schema v15's record tables take ~80 KiB of empty pages), not more.
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_a_clear_error_and_the_previous_index_stays_usable(make_repo, small_disk):
    root = make_repo(REPO)
    db = small_disk / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    for i in range(60):  # far more text than 640 KiB can hold
        (root / f"big{i}.py").write_text(
            "".join(f"X{j} = '{os.urandom(24).hex()}'\n" for j in range(400))
        )
    result = run_cli("index", root, "--db", db)
    assert result.returncode != 0
    assert "full" in result.stderr and "Traceback" not in result.stderr
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert {"BETA", "alpha"} <= {row[0] for row in conn.execute("SELECT name FROM symbols")}


def test_a_read_only_location_is_a_clear_error_and_the_index_stays_intact(make_repo, small_disk):
    root = make_repo(REPO)
    db = small_disk / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    (root / "c.py").write_text("GAMMA = 1\n")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    result = run_cli("index", root, "--db", db)
    assert result.returncode != 0
    assert "read-only" in result.stderr.lower() and "Traceback" not in result.stderr
    # A WAL database whose -shm is gone cannot be opened normally on read-only media; as
    # immutable it can, and repomap's own reads fall back to that.
    assert _symbols(f"file:{db}?mode=ro&immutable=1") == ["BETA", "alpha"]
    found = run_cli("symbols", "alpha", "--db", db, "--root", root, "--json")
    assert found.returncode == 0, found.stderr
    assert [hit["name"] for hit in json.loads(found.stdout)["results"]] == ["alpha"]


def _damage_table(db: Path, table: str) -> None:
    """Overwrite the root pages of a table and its indexes; the header and schema stay readable."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE tbl_name = ? AND rootpage > 0", (table,)
        ).fetchall()
    data = bytearray(db.read_bytes())
    for (root,) in roots:
        data[(root - 1) * page : root * page] = os.urandom(page)
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("table", ["_sqlite_migrations", "files", "symbols", "code_text", "meta"])
def test_damage_met_past_the_schema_is_moved_aside_and_rebuilt(make_repo, tmp_path, table):
    """Opening reads the schema; a malformed page met later (the migrations ledger, a table
    written mid-run) raised a traceback, or made every run stop there saying to run
    `repomap index`."""
    files = {f"m{i}.py": f"def f{i}():\n    'doc {i} ' * {i}\n" for i in range(200)}
    root = make_repo({**REPO, **files})
    db = tmp_path / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    _damage_table(db, table)
    (root / "a.py").write_text("def alpha_two():\n    pass\n")
    result = run_cli("index", root, "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    moved = Path(json.loads(result.stdout)["results"][0]["recovered_from"])
    assert moved.name.startswith("index.db.corrupt-") and moved.exists()
    assert _symbols(db) == sorted(["BETA", "alpha_two", *(f"f{i}" for i in range(200))])
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_non_sqlite_file_at_a_chosen_path_is_refused_with_what_to_do(make_repo, tmp_path):
    root = make_repo(REPO)
    notes = tmp_path / "notes.db"
    notes.write_bytes(os.urandom(4096))
    before = notes.read_bytes()
    indexed = run_cli("index", root, "--db", notes, "--force")
    assert indexed.returncode == 2
    assert indexed.stderr == (
        f"error: {notes} is not a SQLite database, so not an index repomap made; it was left "
        "untouched: delete it or pass another --db\n"
    )
    searched = run_cli("search-text", "alpha", "--db", notes, "--root", root)
    assert searched.returncode == 2
    assert searched.stderr.startswith(f"error: {notes} is not a SQLite database (")
    assert searched.stderr.endswith(
        "if it was a repomap index, delete it and run `repomap index`; otherwise pass another --db\n"
    )
    assert notes.read_bytes() == before


BROKEN = {
    "random bytes": (lambda db: db.write_bytes(os.urandom(8192)), "is not a SQLite database"),
    "truncated": (
        lambda db: db.write_bytes(db.read_bytes()[: len(db.read_bytes()) // 3]),
        "run `repomap index --force` to rebuild it",
    ),
    "another application's": (
        lambda db: (db.unlink(), _foreign(db)),
        "is a SQLite database that repomap did not create; pass another --db",
    ),
    "newer schema": (lambda db: _set_version(db, 99), "newer than this repomap (v"),
}
QUERIES = [
    ["search-text", "alpha"],
    ["search-text", "alpha", "--literal"],
    ["symbols", "alpha"],
    ["map"],
    ["outline"],
    ["show", "alpha"],
    ["search-docs", "beta"],
]


def _foreign(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.commit()


def _set_version(db: Path, version: int) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()


@pytest.mark.parametrize("kind", BROKEN)
def test_every_query_on_a_broken_or_foreign_index_says_what_to_do(make_repo, tmp_path, kind):
    from click.testing import CliRunner

    from repomap.cli.main import main

    root = make_repo(REPO)
    db = tmp_path / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage, advice = BROKEN[kind]
    damage(db)
    before = db.read_bytes()
    for query in QUERIES:
        result = CliRunner().invoke(main, [*query, "--db", str(db), "--root", str(root)])
        assert result.exception is None or isinstance(result.exception, SystemExit), query
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, query
        assert advice in result.stderr, (query, result.stderr)
    assert db.read_bytes() == before  # queries never write, repair or move the file


@pytest.mark.parametrize("kind", BROKEN)
def test_the_mcp_server_reports_a_broken_or_foreign_index_as_a_tool_error(
    make_repo, tmp_path, kind
):
    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    root = make_repo(REPO)
    db = tmp_path / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage, advice = BROKEN[kind]
    damage(db)
    before = db.read_bytes()
    server = build_server(config.resolve(root, db), refresh=False)
    calls = [("search_text", {"query": "alpha"}), ("search_symbols", {"query": "alpha"}),
             ("get_repo_map", {}), ("outline", {})]  # fmt: skip

    async def session() -> list:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    for (name, _), result in zip(calls, anyio.run(session), strict=True):
        assert result.is_error, name
        assert advice in result.content[0].text, (name, result.content[0].text)
    assert db.read_bytes() == before
