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
    moved = Path(json.loads(result.stdout)["recovered_from"])
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
    assert json.loads(result.stdout)["recovered_from"]
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
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_a_clear_error_and_the_previous_index_stays_usable(make_repo, small_disk):
    root = make_repo(REPO)
    db = small_disk / "index.db"
    assert run_cli("index", root, "--db", db).returncode == 0
    for i in range(60):  # far more text than 400 KiB can hold
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
    assert [hit["name"] for hit in json.loads(found.stdout)] == ["alpha"]
