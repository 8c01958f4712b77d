"""search/bm25.py: a server's in-memory BM25 gives FTS5's bm25() scores and order exactly,
applies the filters before its cut, and never answers from an index state that is gone.

A real tree (this project's own search and store sources and docs, copied, one file twice so
that scores tie), indexed for real; the same query asked through a KeptReader (the in-memory
path, as the MCP server asks) and through a plain connection on the same snapshot (SQLite).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from conftest import run_cli
from mcp.client import Client

from repomap import config, store
from repomap.index import pipeline as indexer
from repomap.search import bm25
from repomap.search.code import (
    COLUMN_WEIGHTS,
    lexical_scores,
    make_filters,
    query_terms,
    search_code,
    word_coverage,
)
from repomap.search.filters import Filters
from repomap.serve.mcp_server import build_server
from repomap.store import Store
from repomap.store.postings import fingerprint, read_postings, tokenizer, tokenizer_of

PROJECT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "where is the index opened read-only?",
    "how are vectors decoded from float16 blobs",
    "which migrations run when the schema is old",
    "parse the query language into a match expression",
    "snippets of a symbol's source",
    "how is a test file demoted in the ranking",
    "what happens when the path filter names a folder",
    "rank symbols by pagerank",
    "café naïve résumé",  # diacritics folded by the tokenizer
    "the of and",  # nothing but stop words: kept
    "connection connections connected",  # one stem three times: three phrases
]
FILTERS = [
    {},
    {"kind": "function"},
    {"kind": "class,method"},
    {"language": "python"},
    {"language": "markdown"},
    {"path": "store/"},
    {"path": "*.md"},
    {"path": "config/"},  # a data file's records pass a path filter too
    {"language": "toml"},
    {"kind": "data", "path": "store/"},
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bm25") / "tree"
    for folder in ("search", "store"):
        shutil.copytree(PROJECT / "repomap" / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copytree(PROJECT / "docs", root / "docs")
    (root / "copy").mkdir()
    shutil.copy(PROJECT / "repomap" / "store" / "files.py", root / "copy" / "files.py")  # ties
    (root / "tests").mkdir()
    shutil.copy(PROJECT / "tests" / "test_freshness.py", root / "tests" / "test_freshness.py")
    (root / "config").mkdir()
    shutil.copy(PROJECT / "pyproject.toml", root / "config" / "pyproject.toml")  # records
    indexer.run(config.resolve(root, workers=1))
    return root


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    bm25.forget()
    monkeypatch.setattr(bm25, "SETTLE_SECONDS", 1.0)


def both(db: Store, question: str, candidates: int = 300, **filters: str) -> tuple[dict, dict]:
    """(SQLite's candidates, the in-memory ones) for `question` in `db`'s snapshot."""
    plain = Store(db.conn, db.path)  # the same snapshot, no state: the SQL path
    made = make_filters(db, **filters)
    terms = query_terms(question)
    return lexical_scores(plain, terms, made, candidates), lexical_scores(
        db, terms, made, candidates
    )


def test_the_in_memory_scores_are_fts5s_to_the_bit_in_the_same_order(tree: Path) -> None:
    kept = store.KeptReader(config.resolve(tree).db_path)
    compared = 0
    with kept.snapshot() as db:
        prepared = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert prepared is not None  # the in-memory path answers below, not SQLite twice
        assert len(prepared.postings.rowids) == db.scalar("SELECT count(*) FROM chunks")
        for question in QUESTIONS:
            for filters in FILTERS:
                for candidates in (300, 7, 1):
                    expected, found = both(db, question, candidates, **filters)
                    assert list(found.items()) == list(expected.items()), (question, filters)
                    compared += len(expected)
        assert bm25.prepared(db, COLUMN_WEIGHTS) is prepared
    kept.close()
    assert compared > 2000


def test_the_traits_of_semantic_candidates_from_memory_are_sqlites(tree: Path) -> None:
    """What fuse() reads of a chunk the vectors found (test or not, kind, file) from the
    postings, as SQLite gives it; ids that are no chunk are left out by both."""
    from repomap.search.code import _traits

    kept = store.KeptReader(config.resolve(tree).db_path)
    with kept.snapshot() as db:
        prepared = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert prepared is not None
        ids = [chunk_id for (chunk_id,) in db.conn.execute("SELECT id FROM chunks")]
        ids += [-1, max(ids) + 1, 2**40]  # no chunks
        plain = Store(db.conn, db.path)
        expected = _traits(plain, ids)
        assert len(expected) == len(ids) - 3
        assert {kind for _, kind, _ in expected.values()} >= {"function", "section", "class"}
        assert {test for test, _, _ in expected.values()} == {True, False}
        assert {file_id is None for _, _, file_id in expected.values()} == {True, False}  # docs
        assert bm25.traits(prepared, ids) == expected
        assert _traits(db, ids) == expected
        assert _traits(db, []) == {}
    kept.close()


def test_tied_scores_are_cut_and_ordered_as_fts5_does(tree: Path) -> None:
    """copy/files.py is store/files.py again: its chunks tie with the original's; the cut keeps
    the lower rowid of a tie, as SQLite's sorter does."""
    kept = store.KeptReader(config.resolve(tree).db_path)
    with kept.snapshot() as db:
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is not None
        expected, found = both(db, "ids matching a path filter", 3)
        scores = list(expected.values())
        assert len({score for score, *_ in scores}) < len(scores)  # there is a tie
        assert list(found.items()) == list(expected.items())
        plain = Store(db.conn, db.path)
        for question in QUESTIONS:
            want = search_code(plain, question, mode="lexical", limit=20)
            got = search_code(db, question, mode="lexical", limit=20)
            assert got.hits == want.hits, question
    kept.close()


def test_filters_apply_before_the_cut(tree: Path) -> None:
    """With a pool of 5, a filter still fills it from the chunks it lets through (a filter after
    the cut would leave it empty or short), and only with those."""
    kept = store.KeptReader(config.resolve(tree).db_path)
    with kept.snapshot() as db:
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is not None
        for filters, check in (
            ({"kind": "class"}, "SELECT kind = 'class' FROM chunks WHERE id = ?"),
            ({"language": "markdown"}, "SELECT doc_id IS NOT NULL FROM chunks WHERE id = ?"),
            (
                {"path": "copy/"},
                "SELECT f.path LIKE 'copy/%' FROM chunks c JOIN files f ON f.id = c.file_id "
                "WHERE c.id = ?",
            ),
        ):
            unfiltered, _ = both(db, "where is the index opened read-only?", 5)
            expected, found = both(db, "where is the index opened read-only?", 5, **filters)
            assert set(found) != set(unfiltered)
            assert len(found) == 5, filters
            assert all(db.scalar(check, (chunk_id,)) == 1 for chunk_id in found), filters
            assert list(found.items()) == list(expected.items())
    kept.close()


def test_a_reindex_never_leaves_the_scorer_answering_from_the_old_index(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    shutil.copytree(tree, root)  # its own copy: this test changes files
    settings = config.resolve(root, workers=1)
    kept = store.KeptReader(settings.db_path)
    question = "quokka marsupial census"
    with kept.snapshot() as db:
        old = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert old is not None
        assert lexical_scores(db, query_terms(question), make_filters(db)) == {}
        first = db.state
    (root / "store" / "zoo.py").write_text(
        'def count_quokkas(park):\n    """The quokka marsupial census of a park."""\n'
        "    return len(park.quokkas)\n"
    )
    (root / "copy" / "files.py").unlink()
    indexer.run(settings)

    def answer() -> tuple[list[str], dict, dict]:
        with kept.snapshot() as db:
            assert db.state != first
            expected, found = both(db, question)
            words = store.chunk_words(db, found)
            names = [words[chunk_id][4] for chunk_id in found]  # (title, place, head, body, name)
            return names, expected, found

    with kept.snapshot() as db:  # changed just now: not settled, so nothing is being read yet
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is None
    names, expected, found = answer()  # SQLite answers, fresh
    assert names[0] == "count_quokkas"
    assert found == expected
    monkeypatch.setattr(bm25, "SETTLE_SECONDS", 0.0)
    with kept.snapshot() as db:
        now = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert now is not None and now is not old
        assert tokenizer(now.postings.tokenize).tokens("quokka")[0] in now.postings.terms
        gone = [
            chunk_id for chunk_id in now.postings.rowids.tolist()
            if db.scalar("SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)) is None
        ]  # fmt: skip
        assert gone == []  # copy/files.py's chunks are not in the new postings
    names, expected, found = answer()  # the new content's postings, fresh
    assert names[0] == "count_quokkas"
    assert list(found.items()) == list(expected.items())
    assert len(bm25._PREPARED) == 1  # the old content's postings dropped
    kept.close()


def test_postings_read_while_the_index_changes_are_not_used_for_the_new_content(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background read describes the content it read: a snapshot showing other content
    (a write committed meanwhile) is answered by SQLite, never from those postings."""
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    settings = config.resolve(root, workers=1)
    monkeypatch.setattr(bm25, "SETTLE_SECONDS", 0.0)
    kept = store.KeptReader(settings.db_path)
    with kept.snapshot() as db:
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is not None
        print_then = fingerprint(db, bm25.TABLE)
    (root / "store" / "zoo.py").write_text("def wombat_burrow():\n    return 1\n")
    indexer.run(settings)
    with kept.snapshot() as db:
        assert fingerprint(db, bm25.TABLE) != print_then
        held = bm25._PREPARED[(db.path, COLUMN_WEIGHTS)]
        assert held[0] == print_then  # still the old content's, until the new read is done
        expected, found = both(db, "wombat burrow")  # asked before the read is done
        assert found == expected and found
    kept.close()


def test_a_word_fts5_reads_as_a_phrase_is_left_to_sqlite(tree: Path) -> None:
    """U+19B0 is a word character to Python and a separator to unicode61: FTS5 matches the
    typed word as a two-token phrase, which the in-memory scorer does not do; SQLite answers."""
    word = "index\u19b0opened"
    kept = store.KeptReader(config.resolve(tree).db_path)
    with kept.snapshot() as db:
        prepared = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert prepared is not None
        assert len(tokenizer(prepared.postings.tokenize).tokens(word)) == 2
        assert bm25.scores(db, prepared, [word], Filters(), 10) is None
        expected, found = both(db, word)
        assert found == expected
    kept.close()


def test_word_coverage_from_memory_is_sqlites_to_the_bit(tree: Path) -> None:
    """The hybrid mode's reward for holding the question's words: the same shares, to the bit,
    whether a server reads them from its postings or a CLI call asks SQLite; a phrase to FTS5
    is left to SQLite there too."""
    kept = store.KeptReader(config.resolve(tree).db_path)
    compared = 0
    with kept.snapshot() as db:
        plain = Store(db.conn, db.path)
        prepared = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)
        assert prepared is not None
        for question in [*QUESTIONS, "index\u19b0opened read only"]:
            terms = query_terms(question)
            ids = [*lexical_scores(plain, terms, make_filters(db)), 10**9]  # one unknown id
            expected = word_coverage(plain, terms, ids)
            assert word_coverage(db, terms, ids) == expected, question
            assert all(0.0 <= share <= 1.0 for share in expected) and expected[-1] == 0.0
            compared += sum(share > 0 for share in expected)
        assert bm25.coverage(prepared, ["index\u19b0opened"], [1]) is None
    kept.close()
    assert compared > 500


def test_the_tokenizer_stems_as_fts5_porter_does() -> None:
    split = tokenizer("porter unicode61 remove_diacritics 2")
    assert split.tokens("parsing") == ("pars",)
    assert split.tokens("Headers") == ("header",)
    assert split.tokens("Café") == ("cafe",)
    assert split.tokens("a-b") == ("a", "b")
    assert tokenizer("unicode61").tokens("parsing") == ("parsing",)


def test_a_one_query_connection_asks_sqlite(tree: Path) -> None:
    with store.reading(config.resolve(tree).db_path) as db:
        assert db.state is None
        assert bm25.prepared(db, COLUMN_WEIGHTS) is None
        assert lexical_scores(db, query_terms("open the index"), make_filters(db))
    assert bm25._PREPARED == {}


def _wait_for_builds() -> None:
    for thread in list(bm25._BUILDING.values()):
        thread.join()


def test_the_mcp_server_answers_from_memory_as_the_cli_does_and_follows_changes(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real server (the SDK's in-memory client) against the real CLI in a subprocess
    (SQLite): the same hits once the postings are read, and after an edit the server's refresh
    is seen at once (SQLite) and then from the new postings."""
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    server = build_server(config.resolve(root, workers=1))
    questions = ["where is the index opened read-only?", "rank symbols by pagerank"]

    def mcp(question: str) -> list[dict]:
        result = anyio.run(_call, server, question)
        assert not result.is_error, result.content[0].text
        return [
            {key: hit[key] for key in ("file_path", "line_number", "name")}
            | {"score": round(hit["score"], 4)}  # as the CLI's JSON rounds it
            for hit in result.structured_content["results"]
        ]

    def cli(question: str) -> list[dict]:
        done = run_cli("search", question, "--mode", "lexical", "--json", "--no-refresh",
                       cwd=root)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return [
            {"file_path": hit["path"], "line_number": hit["start_line"], "name": hit["name"],
             "score": hit["score"]}
            for hit in json.loads(done.stdout)["results"]
        ]  # fmt: skip

    for _ in range(5):  # the first calls may wait for the start-up check, in a worker thread
        mcp(questions[0])  # a call on the event loop starts reading the postings
        _wait_for_builds()
    assert len(bm25._PREPARED) == 1
    for question in questions:
        assert mcp(question) == cli(question)
    (root / "store" / "zoo.py").write_text(
        'def count_quokkas(park):\n    """The quokka marsupial census of a park."""\n'
        "    return len(park.quokkas)\n"
    )
    assert mcp("quokka census")[0]["name"] == "count_quokkas"  # re-indexed, SQLite answers
    monkeypatch.setattr(bm25, "SETTLE_SECONDS", 0.0)
    for _ in range(5):
        mcp("quokka census")
        _wait_for_builds()
    (held,) = bm25._PREPARED.values()
    with store.reading(config.resolve(root).db_path) as db:
        assert held[0] == fingerprint(db, bm25.TABLE)  # the postings of the index as it is now
    assert mcp("quokka census") == cli("quokka census")
    assert mcp("quokka census")[0]["name"] == "count_quokkas"


async def _call(server: Any, question: str) -> Any:
    async with Client(server) as client:
        return await client.call_tool("search_code", {"query": question, "mode": "lexical"})


def test_a_build_that_fails_leaves_sqlite_answering_and_is_not_retried_for_that_content(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that fails (here: a build interpreter that exits 1 at once) keeps nothing usable,
    raises nothing, and is not started again at every search, only once the content changes."""
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    settings = config.resolve(root, workers=1)
    monkeypatch.setattr(bm25, "BUILD_PYTHON", shutil.which("false"))
    monkeypatch.setattr(bm25, "SETTLE_SECONDS", 0.0)
    started: list[object] = []
    build = bm25._build
    monkeypatch.setattr(bm25, "_build", lambda *args: (started.append(args), build(*args)))
    kept = store.KeptReader(settings.db_path)
    for _ in range(3):
        with kept.snapshot() as db:
            assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is None
            expected, found = both(db, "where is the index opened read-only?")
            assert found == expected and found  # SQLite answers
    assert len(started) == 1
    (root / "store" / "zoo.py").write_text("def wombat_burrow():\n    return 1\n")
    indexer.run(settings)
    with kept.snapshot() as db:
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is None
    assert len(started) == 2  # new content: tried again
    kept.close()


def test_the_build_process_reports_a_file_that_is_no_index(tmp_path: Path) -> None:
    (tmp_path / "broken.db").write_bytes(b"not a database at all" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "repomap.search.bm25", tmp_path / "broken.db", tmp_path / "out.npz"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "not a SQLite database" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.npz").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("tokenize='porter unicode61 remove_diacritics 2'", "porter unicode61 remove_diacritics 2"),
        ("", "unicode61"),
        ("detail=full, tokenize = 'trigram'", "trigram"),
        ("detail=column", None),
        ("detail='none', tokenize='porter'", None),
    ],
)
def test_only_a_table_with_every_instance_is_read(
    tmp_path: Path, options: str, expected: str | None
) -> None:
    """detail=column or none lists a term once per row: the counts bm25() uses are not there,
    so such a table is left to SQLite."""
    path = tmp_path / "fts.db"
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, b{', ' + options if options else ''})")
    conn.execute("INSERT INTO t (a, b) VALUES ('parsing headers', 'header lines')")
    conn.commit()
    db = Store(conn, path)
    assert tokenizer_of(db, "t") == expected
    postings = read_postings(db, "t")
    if expected is None:
        assert postings is None
    else:
        assert postings is not None and postings.total_rows == 1
        assert sum(end - start for start, end in postings.terms.values()) == len(postings.rows)
    conn.close()


def test_postings_handed_over_by_file_keep_every_token(tmp_path: Path) -> None:
    """The .npz a build process writes keeps tokens of any characters (a trigram tokenizer
    keeps spaces and newlines in its tokens), the arrays and the fingerprint."""
    path = tmp_path / "fts.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='trigram')")
    conn.execute("INSERT INTO t (a) VALUES ('a\nb c\u00e9\u4e2d\u6587')")
    conn.commit()
    db = Store(conn, path)
    postings = read_postings(db, "t")
    assert postings is not None and any("\n" in term for term in postings.terms)
    rows = len(postings.rowids)
    made = bm25.Prepared(
        postings=postings, norms=np.ones(rows), known=np.ones(rows, dtype=bool),
        file_ids=np.full(rows, 7), doc_ids=np.full(rows, -1), kinds=np.zeros(rows, np.int32),
        kind_names=["function"], is_test=np.zeros(rows, dtype=bool), weights=(3.0,), seconds=0.5,
    )  # fmt: skip
    made.save(tmp_path / "p.npz", b"92:ABC")
    found, loaded = bm25.Prepared.load(tmp_path / "p.npz")
    assert found == b"92:ABC"
    assert loaded.postings.terms == postings.terms
    assert loaded.postings.tokenize == "trigram"
    assert (loaded.postings.counts == postings.counts).all()
    assert loaded.kind_names == ["function"] and loaded.weights == (3.0,)
    conn.close()


def test_a_semantic_search_does_not_start_reading_the_postings(tree: Path) -> None:
    """`start=False` (what a semantic search's traits ask with) uses postings already read and
    starts no read of its own; the default starts one."""
    kept = store.KeptReader(config.resolve(tree).db_path)
    with kept.snapshot() as db:
        assert bm25.prepared(db, COLUMN_WEIGHTS, start=False) is None
        assert not bm25._BUILDING
        assert bm25.prepared(db, COLUMN_WEIGHTS, wait=True) is not None
        assert bm25.prepared(db, COLUMN_WEIGHTS, start=False) is not None
    kept.close()
