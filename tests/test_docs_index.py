"""The docs index: .md by section, .txt whole, porter tokenizer, incremental like code."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli
from docs_fixture import REPO

from repomap import store
from repomap.store.migrate import _migration_files, _statements, execute_migration_statement


def _db(root: Path) -> Path:
    return root / ".repomap" / "index.db"


def _rows(root: Path, sql: str, *args) -> list[tuple]:
    with closing(sqlite3.connect(_db(root))) as conn:
        return conn.execute(sql, args).fetchall()


def _match(root: Path, query: str) -> list[tuple[str, str]]:
    return _rows(
        root,
        "SELECT file, section FROM sections WHERE sections MATCH ? ORDER BY file, rowid",
        query,
    )


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


@pytest.fixture
def repo(make_repo, index) -> Path:
    root = make_repo(REPO)
    index(root)
    return root


def test_markdown_headings_are_stored_with_section_extents(repo):
    assert _rows(
        repo, "SELECT file, text, level, start_line, end_line FROM headings ORDER BY id"
    ) == [
        ("README.md", "Project", 1, 1, 22),
        ("README.md", "Install", 2, 5, 7),
        ("README.md", "Usage", 2, 9, 22),
        ("README.md", "Configure", 3, 11, 18),
        ("README.md", "Search — advanced", 3, 20, 22),
        ("docs/guide.md", "Guide", 1, 6, 16),
        ("docs/guide.md", "Install", 2, 9, 11),
        ("docs/guide.md", "Troubleshooting", 2, 13, 16),
    ]


def test_sections_cover_preambles_and_whole_text_files_and_nothing_else(repo):
    rows = _rows(repo, "SELECT file, section, start_line, end_line FROM sections ORDER BY rowid")
    assert [row for row in rows if row[1] == ""] == [
        ("docs/guide.md", "", 1, 4),  # front matter and the text before the first heading
        ("docs/notes.txt", "", 1, 2),
    ]
    assert {row[0] for row in rows} == {"README.md", "docs/guide.md", "docs/notes.txt"}
    assert _rows(repo, "SELECT path, format FROM doc_files ORDER BY path") == [
        ("README.md", "markdown"),
        ("docs/guide.md", "markdown"),
        ("docs/notes.txt", "text"),
    ]


def test_a_text_file_s_rest_titles_are_its_sections_in_every_tool(make_repo, index):
    # search's chunks were cut at a .txt's reST titles while outline, `show --section` and
    # the docs search saw one untitled section: a hit named "Notes > Multiplication" could
    # not be opened by that name (an MCP agent user's report, mpdecimal's bignum.txt).
    root = make_repo(
        {
            "notes.txt": (
                "Bignum notes\n============\n\nHow numbers are multiplied.\n\n\n"
                "Multiplication in pseudo-code:\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\n"
                "  result = convolute(u, v)  # a number theoretic transform\n\n\n"
                "Optimized transform functions:\n------------------------------\n\n"
                "There are three different transform functions.\n"
            ),
            "plain.txt": "no titles here\n-- just a signature line\n",
        }
    )
    index(root)
    rows = _rows(root, "SELECT file, section, start_line, end_line FROM sections ORDER BY rowid")
    assert rows == [
        ("notes.txt", "Bignum notes", 1, 16),
        ("notes.txt", "Multiplication in pseudo-code:", 7, 16),
        ("notes.txt", "Optimized transform functions:", 13, 16),
        ("plain.txt", "", 1, 2),
    ]
    shown = run_cli("show", "--section", "Multiplication in pseudo-code:", "--root", root)
    assert shown.returncode == 0 and "convolute(u, v)" in shown.stdout, shown.stderr
    found = run_cli("search", "number theoretic transform", "--json", "--root", root)
    first = json.loads(found.stdout)["results"][0]
    assert first["name"] == "Bignum notes > Multiplication in pseudo-code:"
    assert (first["start_line"], first["end_line"]) == (7, 10)


def test_a_heading_inside_a_code_fence_is_neither_heading_nor_section(repo):
    assert _rows(repo, "SELECT count(*) FROM headings WHERE text LIKE '%Not a heading%'") == [(0,)]
    # ... but its words are searchable in the section that holds the fence.
    assert _match(repo, "shell comment") == [
        ("README.md", "Project"),
        ("README.md", "Usage"),
        ("README.md", "Configure"),
    ]


def test_a_heading_id_is_its_section_rowid(repo):
    joined = _rows(
        repo,
        "SELECT h.text = s.section AND h.file = s.file AND h.start_line = s.start_line "
        "FROM headings h JOIN sections s ON s.rowid = h.id",
    )
    assert len(joined) == 8 and all(ok for (ok,) in joined)


def test_the_index_records_the_porter_tokenizer_and_stems_with_it(repo):
    assert _rows(repo, "SELECT value FROM meta WHERE key = 'docs_tokenizer'") == [
        ("porter unicode61",)
    ]
    assert ("README.md", "Configure") in _match(repo, "configuring")
    assert _match(repo, "stem") == [("docs/notes.txt", "")]  # "stemming"


def test_without_porter_the_migration_falls_back_to_unicode61_and_says_so(tmp_path):
    db = store.open_index(tmp_path / "index.db", migrate_to=7)
    sql = dict(_migration_files())["0008_docs"].replace("porter", "no_such_tokenizer")
    with db.atomic():
        for statement in _statements(sql):
            execute_migration_statement(db.conn, statement)
    assert store.get_meta(db, "docs_tokenizer") == "unicode61"
    db.conn.execute(
        "INSERT INTO sections (file, section, content) VALUES ('a.md', 'A', 'configure')"
    )
    assert db.conn.execute(
        "SELECT count(*) FROM sections WHERE sections MATCH 'configure'"
    ).fetchone() == (1,)
    assert db.conn.execute(
        "SELECT count(*) FROM sections WHERE sections MATCH 'configuring'"
    ).fetchone() == (0,)
    db.conn.close()


def test_a_statement_with_no_tokenizer_problem_still_raises(tmp_path):
    with (
        closing(sqlite3.connect(tmp_path / "x.db")) as conn,
        pytest.raises(sqlite3.OperationalError),
    ):
        execute_migration_statement(conn, "CREATE VIRTUAL TABLE t USING fts5(a, tokenize='nosuch')")


def test_an_older_index_migrates_and_its_next_run_indexes_the_docs(make_repo, index, tmp_path):
    root = make_repo(REPO)
    old = store.open_index(_db(root), migrate_to=5)
    old.conn.close()
    summary = index(root)
    assert _rows(root, "PRAGMA user_version") == [(store.SCHEMA_VERSION,)]
    assert summary.docs["added"] == 3 and summary.docs["headings"] == 8


def test_unchanged_docs_are_not_reread(repo, index):
    summary = index(repo)
    assert summary.docs == {
        "scanned": 3,
        "unchanged": 3,
        "added": 0,
        "modified": 0,
        "removed": 0,
        "files": 3,
        "headings": 8,
        "sections": 10,
    }


def test_a_touched_doc_with_the_same_bytes_keeps_its_rows(repo, index):
    before = _rows(repo, "SELECT rowid, file, section FROM sections ORDER BY rowid")
    _bump_mtime(repo / "README.md")
    summary = index(repo)
    assert (summary.docs["unchanged"], summary.docs["modified"]) == (3, 0)
    assert _rows(repo, "SELECT rowid, file, section FROM sections ORDER BY rowid") == before
    assert index(repo).docs["unchanged"] == 3  # the new mtime was remembered


def test_the_docs_index_follows_edits_renames_and_deletions(repo, index):
    readme = repo / "README.md"
    readme.write_text(
        readme.read_text().replace("## Install", "## Installation\n\nzebra crossing\n")
    )
    _bump_mtime(readme)
    (repo / "docs" / "notes.txt").unlink()
    (repo / "docs" / "guide.md").rename(repo / "docs" / "manual.md")
    (repo / "docs" / "new.txt").write_text("a brand new quokka\n")
    summary = index(repo)
    assert {k: summary.docs[k] for k in ("added", "modified", "removed", "unchanged")} == {
        "added": 2,
        "modified": 1,
        "removed": 2,
        "unchanged": 0,
    }
    assert _match(repo, "zebra") == [("README.md", "Project"), ("README.md", "Installation")]
    assert _match(repo, "quokka") == [("docs/new.txt", "")]
    assert _match(repo, "stemming") == []
    assert {f for f, _ in _match(repo, "tokenizer")} == {"docs/manual.md"}
    assert _rows(repo, "SELECT start_line, end_line FROM headings WHERE text = 'Installation'") == [
        (5, 10)
    ]
    assert _rows(repo, "SELECT count(*) FROM headings WHERE file = 'docs/guide.md'") == [(0,)]
    assert _rows(
        repo, "SELECT count(*) FROM sections WHERE file IN ('docs/guide.md', 'docs/notes.txt')"
    ) == [(0,)]


def test_force_and_a_new_parser_version_reread_every_doc(repo, index):
    assert index(repo, force=True).docs["modified"] == 3
    with closing(sqlite3.connect(_db(repo))) as conn, conn:
        conn.execute("UPDATE meta SET value = 'old' WHERE key = 'docs_parser_version'")
    assert index(repo).docs["modified"] == 3
    assert _rows(repo, "SELECT count(*) FROM headings") == [(8,)]


def test_unreadable_docs_are_skipped_and_their_old_rows_dropped(repo, index):
    (repo / "README.md").write_bytes(b"# Binary\n\0\0\0")
    (repo / "docs" / "guide.md").write_text("# Big\n" + "x" * 5000 + "\n")
    (repo / "docs" / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    summary = _index_with_limit(repo, 1000)
    reasons = dict(summary.skipped)
    assert reasons["README.md"].startswith("binary")
    assert reasons["docs/guide.md"].startswith("larger than the limit")
    assert reasons["docs/latin.txt"].startswith("not UTF-8")
    assert _rows(repo, "SELECT path FROM doc_files ORDER BY path") == [("docs/notes.txt",)]
    assert _rows(repo, "SELECT count(*) FROM headings") == [(0,)]


def _index_with_limit(root: Path, max_file_size: int):
    from repomap import config
    from repomap.index import pipeline as indexer

    return indexer.run(config.resolve(root, max_file_size=max_file_size, workers=1))


def test_markdown_suffixes_are_case_insensitive_and_other_formats_skipped(make_repo, index):
    root = make_repo(
        {
            "NOTES.MD": "# Upper\n",
            "b.markdown": "# Long suffix\n",
            "c.RST": "Title\n=====\n",
            "d.json": "{}\n",
            "e.mdx": "# jsx\n",
        }
    )
    summary = index(root)
    assert _rows(root, "SELECT path FROM doc_files ORDER BY path") == [
        ("NOTES.MD",),
        ("b.markdown",),
        ("c.RST",),  # reStructuredText: split by its own titles
    ]
    assert _rows(root, "SELECT text FROM headings WHERE file = 'c.RST'") == [("Title",)]
    assert summary.skipped == []


def test_an_empty_doc_is_indexed_without_sections(make_repo, index):
    root = make_repo({"empty.md": b"", "blank.txt": b"\n \n"})
    index(root)
    assert _rows(root, "SELECT path, line_count FROM doc_files ORDER BY path") == [
        ("blank.txt", 2),
        ("empty.md", 0),
    ]
    assert _rows(root, "SELECT count(*) FROM sections") == [(0,)]


def test_doc_files_stay_out_of_the_code_tables(repo):
    assert _rows(repo, "SELECT path FROM files ORDER BY path") == [
        ("src/app.py",),
        ("src/pkg/__init__.py",),
    ]


KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key id, split so scanners stay calm


def test_credentials_in_docs_are_redacted_in_the_index_unless_turned_off(make_repo):
    from repomap import config
    from repomap.index import pipeline as indexer

    root = make_repo({"ops.md": f"# Deploy\n\nUse key {KEY} to deploy.\n"})
    indexer.run(config.resolve(root, workers=1))
    assert _rows(root, "SELECT content FROM sections") == [("Use key [REDACTED] to deploy.",)]
    assert _match(root, KEY) == []
    indexer.run(config.resolve(root, workers=1, redact=False))
    assert _rows(root, "SELECT content FROM sections") == [(f"Use key {KEY} to deploy.",)]


def _long_doc(number: int) -> bytes:
    sections = [
        f"## Part {number}.{part}\n\n" + f"Words of part {part} about topic{number} here. " * 30
        for part in range(12)
    ]
    return (f"# Document {number}\n\n" + "\n\n".join(sections) + "\n").encode()


def test_docs_chunks_are_written_in_id_order_whole_per_batch(tmp_path):
    """Docs' chunk ids are negative, so the writer holds a batch's rows and writes them in
    ascending id order at its end: pages fill instead of splitting half empty. A doc deleted in
    its own batch, or written by a nested batch that fails, leaves no chunk behind."""
    from index_dump import check_integrity

    from repomap.index.docs import doc_rows

    db_path = tmp_path / "index.db"
    docs = {f"doc{number}.md": doc_rows(f"doc{number}.md", "markdown", _long_doc(number), 1)
            for number in range(60)}  # fmt: skip
    db = store.open_index(db_path)
    try:
        writer = store.Writer(db)
        with writer.batch():
            ids = {path: writer.replace_doc(rows, None, "now") for path, rows in docs.items()}
            writer.delete_doc(ids.pop("doc7.md"))
            with pytest.raises(RuntimeError), writer.batch():
                writer.replace_doc(docs["doc7.md"]._replace(path="failed.md"), None, "now")
                raise RuntimeError("one file fails")
            # one doc written again in the batch that wrote it: its new rows only
            writer.replace_doc(docs["doc8.md"], ids["doc8.md"], "now")
    finally:
        db.conn.close()
    check_integrity(db_path)
    expected = sum(len(rows.chunks) for path, rows in docs.items() if path != "doc7.md")
    assert expected > 60 * 12
    assert _count(db_path, "SELECT count(*) FROM chunks") == expected
    assert _count(db_path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'topic7'") == 0
    again = sum("topic8" in " ".join(chunk[6:]) for chunk in docs["doc8.md"].chunks)
    assert again > 0
    assert (
        _count(db_path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'topic8'") == again
    )
    with closing(sqlite3.connect(db_path)) as conn:
        used, size = conn.execute(
            "SELECT sum(pgsize - unused), sum(pgsize) FROM dbstat WHERE name = 'chunks'"
        ).fetchone()
    assert used / size > 0.8  # written as made (descending ids): about half


def _count(db_path: Path, sql: str) -> int:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql).fetchone()[0]


def test_rst_files_are_docs_split_by_their_titles(make_repo, index) -> None:
    # Sphinx projects write their docs in .rst (marshmallow: 29 files): none was indexed, and
    # the index summary did not say so.
    from conftest import run_cli

    root = make_repo(
        {
            "docs/custom_fields.rst": (
                "Custom Fields\n=============\n\nThere are three ways to create a custom field.\n\n"
                "Method Fields\n-------------\n\nA method field serializes the return value.\n"
            ),
            "README.rst": "Project\n=======\n\nA small project.\n",
        }
    )
    index(root)
    assert _rows(root, "SELECT path, format FROM doc_files ORDER BY path") == [
        ("README.rst", "text"),
        ("docs/custom_fields.rst", "text"),
    ]
    assert _match(root, "method") == [  # a section holds its subsections, as in Markdown
        ("docs/custom_fields.rst", "Custom Fields"),
        ("docs/custom_fields.rst", "Method Fields"),
    ]
    done = run_cli("search-docs", "custom field", "--root", root)
    assert done.returncode == 0 and "docs/custom_fields.rst" in done.stdout
    outline = run_cli("outline", "docs/custom_fields.rst", "--root", root)
    assert "Custom Fields" in outline.stdout and "Method Fields" in outline.stdout


def test_a_cmake_build_script_is_no_doc(make_repo, index) -> None:
    # muparser: four pieces of CMakeLists.txt, read as prose, came before its Install.txt in
    # `repomap search "how do I build and install it"`.
    root = make_repo(
        {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(parser)\n",
            "src/CMakeLists.txt": "add_library(parser parser.c)\n",
            "Install.txt": "Run cmake to build and install the parser library.\n",
            "notes/CMakeLists.txt.md": "# Notes on the build script\n",
        }
    )
    index(root)
    assert _rows(root, "SELECT path FROM doc_files ORDER BY path") == [
        ("Install.txt",), ("notes/CMakeLists.txt.md",)
    ]  # fmt: skip
