"""bench/failures.py: what it prints for a question whose answer is not first (a real index and
the real model over a small tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import failures  # noqa: E402  (bench/ is a folder of scripts, not a package)
import relevance  # noqa: E402

from repomap import store  # noqa: E402
from repomap.search import bm25, code  # noqa: E402
from repomap.store.postings import tokenizer  # noqa: E402

SOURCE = '''def session_expiry_text(session):
    """Say when the session expires, as text."""
    return str(session.expiry_seconds())
'''
AGES = "def age_in_seconds(record):\n    return record.age\n"


def test_a_question_not_answered_first_shows_the_lists_and_the_answers_chunk(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "sessions.py").write_text(SOURCE)
    (root / "ages.py").write_text(AGES)
    db_path = tmp_path / "index.db"
    done = subprocess.run(
        [sys.executable, "-m", "repomap.cli", "index", str(root), "--db", str(db_path), "--embed"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = relevance.Span("ages.py", 1, 2)  # no word of the question
    question = relevance.Question(
        "q", "tiny", "python", "when does the session expire?", "what", (answer,), "tune"
    )
    db = store.open_index(db_path, readonly=True)
    try:
        prepared = bm25.prepare(db, code.COLUMN_WEIGHTS)
        assert prepared is not None
        text = failures.report(db, question, tokenizer(prepared.postings.tokenize), False)
    finally:
        db.close()
    assert text is not None  # not first: a docstring that says it all is
    lines = text.splitlines()
    assert lines[0].startswith("## q [tiny, what, tune]")
    assert "stems: expir session" in lines[1]
    assert any(" 1 " in line and "session_expiry_text" in line for line in lines)
    chunk = next(line for line in lines if "answer chunk function age_in_seconds" in line)
    assert "hit-rule=yes" in chunk and "ages.py:1-2" in chunk and "title: head: body:" in chunk
