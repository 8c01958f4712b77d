"""The docs index: Markdown and `.rst` files by section, `.txt` files whole, beside the code.

`update_docs(writer, files, max_file_size, force, indexed_at, redact=True)` brings the
`doc_files`, `headings` and `sections` tables up to date with the walked files, incrementally
(a file whose size and mtime are unchanged is not read; one whose bytes hash the same is not
parsed); credentials are redacted as in code text. `repomap index` calls it inside its run.
Searching them is search/docs.py; one section's text is gateway/section.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from repomap import store, textfile
from repomap.index import changes, markers, secrets
from repomap.index.chunks import doc_chunks
from repomap.index.readable import indexed_source
from repomap.languages import doc_format

if TYPE_CHECKING:
    from repomap.index.discover import FoundFile
    from repomap.store import Store

# Bump when parsing changes what is stored: every doc file is then re-read once.
DOCS_PARSER_VERSION = "4"  # 3: inline HTML tags out of headings; 4: escapes read in them
BATCH_FILES = 400


@dataclass(slots=True)
class DocsSummary:
    scanned: int = 0
    unchanged: int = 0
    added: int = 0
    modified: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)
    files: int = 0  # doc files in the index after the run
    headings: int = 0
    sections: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts, for `repomap index --json` (the skipped files are in its own list)."""
        keys = ("scanned", "unchanged", "added", "modified", "removed", "files", "headings")
        return {key: getattr(self, key) for key in (*keys, "sections")}


def doc_rows(
    rel_path: str, fmt: str, raw: bytes, mtime_ns: int, redact: bool = True
) -> store.DocRows | str:
    """The rows of one doc file, or why it cannot be indexed; credentials redacted."""
    source, _, skipped = indexed_source(raw, None)
    if source is None:
        return skipped or "not text"
    text = markers.blanked(source, markers.ignored_lines(source)).decode("utf-8")
    from repomap.index import markdown  # its patterns compile on import: only when a doc changed

    # A .txt by reST's titles too: search_code's chunks were cut at them while outline,
    # get_section and search_docs saw one untitled section (an MCP agent user's report).
    document = markdown.parse(text) if fmt == "markdown" else markdown.rst_sections(text)
    clean = secrets.redact if redact else str  # as for code text: keys and PEM blocks go
    sections = []
    ordinal = 0
    for section in document.sections:
        ordinal = ordinal + 1 if section.level else 0
        sections.append(
            (
                ordinal,
                section.name,
                section.level,
                section.start_line,
                section.end_line,
                clean(section.content),
            )
        )
    chunks = doc_chunks(rel_path, sections)
    return store.DocRows(
        rel_path,
        fmt,
        len(raw),
        mtime_ns,
        textfile.content_hash(raw),
        document.line_count,
        sections,
        chunks,
    )


def update_docs(
    writer: store.Writer,
    files: Iterable[FoundFile],
    max_file_size: int,
    force: bool,
    indexed_at: str,
    redact: bool = True,
) -> DocsSummary:
    """Index new and changed doc files, drop removed ones; one transaction per batch."""
    db = writer.db
    force = force or store.get_meta(db, "docs_parser_version") != DOCS_PARSER_VERSION
    existing = store.indexed_docs(db)
    summary = DocsSummary()
    todo = changes.plan(files, doc_format, existing, max_file_size, force)
    summary.scanned, summary.unchanged = todo.scanned, todo.unchanged
    summary.skipped.extend(todo.skipped)
    pending = todo.pending
    with writer.batch():
        for path in todo.dropped(existing):
            writer.delete_doc(existing[path].id)
            summary.removed += path not in todo.present
    for start in range(0, len(pending), BATCH_FILES):
        with writer.batch():
            for found, fmt in pending[start : start + BATCH_FILES]:
                old = existing.get(found.rel_path)
                _update_one(writer, found, fmt, old, force, indexed_at, redact, summary)
    with writer.batch():
        store.set_meta(db, {"docs_parser_version": DOCS_PARSER_VERSION})
    summary.files, summary.headings, summary.sections = _totals(db)
    return summary


def _update_one(
    writer: store.Writer,
    found: FoundFile,
    fmt: str,
    old: store.IndexedFile | None,
    force: bool,
    indexed_at: str,
    redact: bool,
    summary: DocsSummary,
) -> None:
    from repomap.index.discover import (
        read_file,  # here: queries import this module, and skip pathspec
    )

    raw, problem = read_file(found.path)  # never blocks on a FIFO swapped in since the walk
    if raw is None:
        summary.skipped.append((found.rel_path, problem or "unreadable"))
        if old is not None:
            writer.delete_doc(old.id)
        return
    if old is not None and not force and textfile.content_hash(raw) == old.hash:
        summary.unchanged += 1
        writer.touch_doc(old.id, len(raw), found.mtime_ns)
        return
    rows = doc_rows(found.rel_path, fmt, raw, found.mtime_ns, redact)
    if isinstance(rows, str):
        summary.skipped.append((found.rel_path, rows))
        if old is not None:
            writer.delete_doc(old.id)
        return
    writer.replace_doc(rows, old.id if old else None, indexed_at)
    if old is None:
        summary.added += 1
    else:
        summary.modified += 1


def _totals(db: Store) -> tuple[int, int, int]:
    return (
        db.scalar("SELECT count(*) FROM doc_files"),
        db.scalar("SELECT count(*) FROM headings"),
        db.scalar("SELECT count(*) FROM sections"),
    )
