"""Hybrid search's share of the cosine: the base weight, raised when the question's words are
scarce in the code (search/code.py, semantic_share). The real model on a real index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from repomap import store
from repomap.search import code
from repomap.search.code import (
    SCARCE_COVERAGE,
    SCARCE_WEIGHT,
    SEMANTIC_WEIGHT,
    leaders_by_words,
    search_code,
    semantic_share,
)

FILES = {
    "logs.py": '''
import os


def rotate(directory, keep):
    """Rename app.log to app.log.1, app.log.1 to app.log.2 and so on, and delete the oldest
    copies beyond `keep`, so that the log folder never fills the disk."""
    names = sorted(os.listdir(directory), reverse=True)
    for name in names[keep:]:
        os.remove(os.path.join(directory, name))
''',
    "report.py": """
def summary_table(rows):
    # big tables: archived rows are skipped here (see the archive flag)
    return [row for row in rows if not row.get("archived")]


def column_widths(rows):
    return [max(len(str(cell)) for cell in column) for column in zip(*rows)]
""",
    "users.py": """
def grow_quota(user, amount):
    user.quota += amount
    return user.quota


def rename_user(user, name):
    user.name = name
""",
}
# One word of it ("archived") is in the code, in a comment of something else.
SCARCE = "discard surplus archived duplicates to conserve space"
PLENTIFUL = "rotate the log files and delete the oldest copies"


def test_the_share_rises_linearly_below_the_scarce_coverage_and_never_falls() -> None:
    assert semantic_share(SEMANTIC_WEIGHT, 1.0) == SEMANTIC_WEIGHT
    assert semantic_share(SEMANTIC_WEIGHT, SCARCE_COVERAGE) == SEMANTIC_WEIGHT
    assert semantic_share(SEMANTIC_WEIGHT, 0.0) == pytest.approx(SCARCE_WEIGHT)
    assert semantic_share(SEMANTIC_WEIGHT, SCARCE_COVERAGE / 2) == pytest.approx(
        (SEMANTIC_WEIGHT + SCARCE_WEIGHT) / 2
    )
    shares = [semantic_share(SEMANTIC_WEIGHT, c / 100) for c in range(101)]
    assert shares == sorted(shares, reverse=True)
    assert all(SEMANTIC_WEIGHT <= share <= SCARCE_WEIGHT for share in shares)
    assert semantic_share(0.8, 0.0) == 0.8  # a caller's higher weight is never lowered


def test_the_leaders_by_words_are_the_best_bm25_scores_ties_by_chunk_id() -> None:
    lexical = {9: (1.0, False, "function", 1), 3: (1.0, False, "function", 1)}
    lexical |= {n: (0.5 - n / 1000, False, "function", 2) for n in range(10, 30)}
    assert leaders_by_words(lexical)[:3] == [3, 9, 10]
    assert len(leaders_by_words(lexical)) == code.LEADERS


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("share") / "repo", FILES)
    done = subprocess.run(
        [sys.executable, "-m", "repomap.cli", "index", str(root), "--embed"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root / ".repomap" / "index.db"


def _scores(db: Path, question: str, mode: str = "hybrid") -> tuple[dict[str, float], float | None]:
    with store.reading(db) as conn:
        found = search_code(conn, question, mode=mode, limit=10, log=False)
    return {hit.name: hit.score for hit in found.hits}, found.semantic_share


def test_a_question_whose_words_the_code_holds_keeps_the_base_share(db: Path) -> None:
    scores, share = _scores(db, PLENTIFUL)
    assert share == SEMANTIC_WEIGHT
    assert max(scores, key=scores.__getitem__) == "rotate"


def test_scarce_words_raise_the_share_and_the_answer_by_meaning_gains_on_them(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raised, share = _scores(db, SCARCE)
    assert share is not None and SEMANTIC_WEIGHT + 0.1 < share <= SCARCE_WEIGHT
    monkeypatch.setattr(code, "SCARCE_WEIGHT", SEMANTIC_WEIGHT)  # as before the rule
    fixed, fixed_share = _scores(db, SCARCE)
    assert fixed_share == SEMANTIC_WEIGHT
    # The chunk holding the one incidental word leads on words; the answer leads on meaning.
    assert (
        raised["rotate"] / raised["summary_table"] > fixed["rotate"] / fixed["summary_table"] + 0.1
    )


def test_only_hybrid_mode_has_a_share(db: Path) -> None:
    assert _scores(db, SCARCE, "lexical")[1] is None
    assert _scores(db, SCARCE, "semantic")[1] is None
