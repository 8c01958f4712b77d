"""The row counts an index run reports (files, symbols, references, text elements) are kept up
to date from what the run wrote and deleted, not counted again: they must always equal a count
of the tables, also after a run killed midway."""

from __future__ import annotations

from pathlib import Path

import pytest

from repomap import config, store
from repomap.index import pipeline
from repomap.store import reading


def _counted(db_path: Path) -> dict[str, int]:
    with reading(db_path) as db:
        names = {code: name for name, code in store.ELEMENT_TYPE_CODES.items()}
        counted = {
            "files": db.scalar("SELECT count(*) FROM files"),
            "symbols": db.scalar("SELECT count(*) FROM symbols"),
            "references": db.scalar("SELECT count(*) FROM refs"),
            **dict.fromkeys(names.values(), 0),
        }
        for code, count in db.conn.execute(
            "SELECT element_type, count(*) FROM code_text GROUP BY element_type"
        ):
            counted[names[code]] = count
        return counted


def _reported(summary: pipeline.Summary) -> dict[str, int]:
    return {
        "files": summary.files,
        "symbols": summary.symbols,
        "references": summary.references,
        **summary.elements,
    }


def _stored(db_path: Path) -> dict[str, int] | None:
    with reading(db_path) as db:
        stored = store.writer.stored_counts(db)
    return None if stored is None else {**dict.fromkeys(store.ELEMENT_TYPE_CODES, 0), **stored}


def test_the_counts_follow_every_change_and_survive_a_killed_run(
    make_repo, index, monkeypatch
) -> None:
    root = make_repo(
        {
            "a.py": '"""Module a."""\n# a comment\ndef helper():\n    return "text"\n',
            "b.py": "from a import helper\nhelper(); helper()\nhelper()\n",
            "c.rs": '// one\nfn main() { let s = "x"; }\n',
        }
    )
    db_path = config.resolve(root).db_path
    summary = index(root)
    assert _reported(summary) == _counted(db_path) == _stored(db_path)
    assert summary.symbols > 0 and summary.references > 0

    # A modified file (a repeated use on one line: refs keeps one row), a deleted one, a new one.
    (root / "b.py").write_text("from a import helper\nhelper(); helper()\n# more\n")
    (root / "c.rs").unlink()
    (root / "d.py").write_text('def other():\n    """Doc."""\n    return helper()\n')
    summary = index(root)
    assert _reported(summary) == _counted(db_path) == _stored(db_path)

    # Killed after its first batch: the stored counts are gone, the next run counts again.
    (root / "a.py").write_text("def helper():\n    return 1\n\n\ndef more():\n    pass\n")
    (root / "e.py").write_text("# e\n")
    real_link = store.Writer.link_declarations

    def killed(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(store.Writer, "link_declarations", killed)
    with pytest.raises(KeyboardInterrupt):
        index(root)
    assert _stored(db_path) is None
    monkeypatch.setattr(store.Writer, "link_declarations", real_link)
    (root / "e.py").unlink()
    summary = index(root)
    assert _reported(summary) == _counted(db_path) == _stored(db_path)

    # Nothing changed: the stored counts are the answer, and still right.
    summary = index(root)
    assert summary.unchanged == 3 and _reported(summary) == _counted(db_path)
