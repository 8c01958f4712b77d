"""When an index keeps the trigram index of literal search (repomap/store/literal.py): from
REPOMAP_LITERAL_INDEX_BYTES bytes of code it is built, under half of it emptied; either way a
literal search gives the same answer, the index stays whole, and `repomap doctor` passes. The
real CLI on real files."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from conftest import run_cli
from index_dump import check_integrity

from repomap import store

FILES = {
    f"pkg/m{i}.py": f'# connection pool number {i}\nX{i} = "Failed to open %s: {i}"\n'
    for i in range(8)
} | {"src/lib.rs": '// a pool of "workers"\nfn f() { let _ = "Failed to open {}"; }\n'}
QUERIES = ["Failed to open", "pool", "%s", "Fa", "o", "number 3", "absent"]


def _code_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.suffix in {".py", ".rs"})


def _index(root: Path, db: Path, threshold: int | None = None) -> None:
    env = {} if threshold is None else {"REPOMAP_LITERAL_INDEX_BYTES": str(threshold)}
    done = run_cli("index", root, "--db", db, env=env)
    assert done.returncode == 0, done.stderr


def _state(db: Path) -> tuple[str | None, int]:
    """meta's literal_index and the trigrams the index holds."""
    with closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'literal_index'").fetchone()
        (terms,) = conn.execute("SELECT count(*) FROM code_text_literal_terms").fetchone()
    return (row[0] if row else None), terms


def _answers(root: Path, db: Path) -> dict[str, list]:
    found = {}
    for text in QUERIES:
        for flags in ([], ["--ignore-case"]):
            done = run_cli("search-text", "--literal", *flags, text, "--db", db, "--json", cwd=root)
            assert done.returncode in (0, 1), done.stderr
            answer = json.loads(done.stdout)
            found[f"{text} {flags}"] = [
                (hit["file_path"], hit["line_number"], hit["content"]) for hit in answer["results"]
            ] + [answer["total"], answer["total_exact"]]
    return found


def test_a_small_tree_keeps_no_trigram_index_and_finds_every_literal(make_repo, tmp_path):
    root = make_repo(FILES)
    db = tmp_path / "small.db"
    _index(root, db)
    assert _state(db) == ("0", 0)
    check_integrity(db)
    answers = _answers(root, db)
    assert answers["Failed to open []"][:2] == [
        ("pkg/m0.py", 2, "Failed to open %s: 0"),
        ("pkg/m1.py", 2, "Failed to open %s: 1"),
    ]
    assert answers["Failed to open []"][-2:] == [9, True]
    assert answers["absent []"] == [0, True]
    doctor = run_cli("doctor", "--db", db, cwd=root)
    assert "FAIL" not in doctor.stdout and "code_text_literal" not in doctor.stdout, doctor.stdout


def test_the_trigram_index_is_built_from_the_threshold_and_emptied_under_half_of_it(
    make_repo, tmp_path
):
    root = make_repo(FILES)
    size = _code_bytes(root)
    db = tmp_path / "index.db"
    _index(root, db, threshold=size + 1)  # just under the threshold: none
    assert _state(db) == ("0", 0)
    read = _answers(root, db)
    _index(root, db, threshold=size)  # at the threshold: built from the rows already there
    state, terms = _state(db)
    assert state == "1" and terms > 50
    check_integrity(db)
    assert _answers(root, db) == read
    # Kept while the code is at least half the threshold, and by every write since.
    (root / "pkg" / "m0.py").write_text('# the pool moved\nX0 = "Failed to close %s"\n')
    (root / "pkg" / "m1.py").unlink()
    _index(root, db, threshold=2 * _code_bytes(root))
    assert _state(db)[0] == "1"
    check_integrity(db)
    kept = _answers(root, db)
    assert kept["Failed to open []"][-2:] == [7, True]
    # Under half of it: emptied, the same answers.
    _index(root, db, threshold=2 * _code_bytes(root) + 2)
    assert _state(db) == ("0", 0)
    check_integrity(db)
    assert _answers(root, db) == kept
    # Between half and the threshold: stays empty.
    _index(root, db, threshold=_code_bytes(root) + 1)
    assert _state(db) == ("0", 0)


def test_a_forced_run_keeps_the_trigram_index_whole(make_repo, tmp_path):
    root = make_repo(FILES)
    db = tmp_path / "index.db"
    _index(root, db, threshold=0)
    before = _answers(root, db)
    done = run_cli("index", root, "--db", db, "--force", env={"REPOMAP_LITERAL_INDEX_BYTES": "0"})
    assert done.returncode == 0, done.stderr
    assert _state(db)[0] == "1"
    check_integrity(db)
    assert _answers(root, db) == before


def test_a_bad_threshold_is_one_clear_error_and_the_index_is_untouched(make_repo, tmp_path):
    root = make_repo(FILES)
    db = tmp_path / "index.db"
    _index(root, db)
    before = db.read_bytes()
    for value, forced in (("-1", []), ("lots", ["--force"]), ("1.5", ["--force"])):
        # a forced run cleared every file before the value was read: an empty index (a review)
        done = run_cli(
            "index", root, "--db", db, *forced, env={"REPOMAP_LITERAL_INDEX_BYTES": value}
        )
        assert done.returncode == 2, (value, done.stdout, done.stderr)
        assert "REPOMAP_LITERAL_INDEX_BYTES" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert _state(db) == ("0", 0)
    assert db.read_bytes() == before


def test_an_index_from_before_v19_says_it_keeps_its_trigram_index(make_repo, tmp_path):
    """Migrated, an index with text keeps its (full) trigram index until its next run decides;
    one without text says it keeps none (it holds none)."""
    root = make_repo(FILES)
    full, empty = tmp_path / "full.db", tmp_path / "empty.db"
    for path in (full, empty):
        store.open_index(path, migrate_to=18).conn.close()
    with closing(sqlite3.connect(full)) as conn:
        conn.execute(
            "INSERT INTO files (id, path, language, size, mtime_ns, hash, line_count, status, "
            "indexed_at, text_indexed) VALUES (1, 'a.py', 'python', 1, 1, 'x', 1, 'ok', 'now', 1)"
        )
        conn.execute("INSERT INTO code_text VALUES (1048576, 1, 1, 1, 1, NULL, 'pool', '', NULL)")
        for table in ("code_text_fts", "code_text_literal"):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
        conn.commit()
    for path in (full, empty):
        store.open_index(path).conn.close()
    assert _state(full) == ("1", _state(full)[1]) and _state(full)[1] > 0
    assert _state(empty) == ("0", 0)
    check_integrity(full)
    check_integrity(empty)
    _index(root, full)  # a small tree: its next run empties it
    assert _state(full) == ("0", 0)
    check_integrity(full)
