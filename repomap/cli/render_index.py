"""Rich output for people; only the CLI imports this."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from repomap.cli.console import console as _console
from repomap.shares import percent


def _count(number: int, noun: str) -> str:
    """`1 file`, `2 files`."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


def print_index_summary(summary: Any) -> None:
    console = _console()
    rows = [
        ("index", summary.db_path),
        (
            "files",
            # No total: skips include what the walk never hands to a reader (a FIFO, a secret
            # file, a link out of ROOT) and docs and data files, which the lines below count.
            f"{summary.added} added, {summary.modified} changed, {summary.unchanged} unchanged, "
            f"{summary.removed} removed; {len(summary.skipped)} skipped"
            # an upgrade: every file read again, though none changed
            + (
                f" (all read again: the index was made with {summary.reread})"
                if summary.reread
                else ""
            ),  # fmt: skip
        ),
        (
            "indexed",
            f"{_count(summary.files, 'file')}, {_count(summary.symbols, 'symbol')}, "
            f"{_count(summary.references, 'reference')}",
        ),
        ("text", ", ".join(f"{count} {kind}s" for kind, count in summary.elements.items())),
    ]
    if docs := summary.docs:
        rows.append((
            "docs",
            f"{_count(docs['files'], 'file')} ({docs['added']} added, {docs['modified']} changed, "
            f"{docs['removed']} removed), {_count(docs['sections'], 'section')}",
        ))  # fmt: skip
    if data := summary.data:
        rows.append((
            "data",
            f"{_count(data['files'], 'file')} ({data['added']} added, {data['modified']} changed, "
            f"{data['removed']} removed), {_count(data['records'], 'record')}",
        ))  # fmt: skip
    if history := summary.history:
        if history["status"] == "skipped":
            line = f"not read: {history['note']}"
        else:
            line = (
                f"{history['commits']} commits ({history['added']} added, "
                f"{history['removed']} removed{', history rewritten' if history['rewritten'] else ''})"
            )
        rows.append(("commits", line))
    rows.append(("time", f"{summary.seconds:.2f} s"))
    # Lines, not a rich Table: a table pads every row to its widest with trailing spaces.
    for label, value in rows:
        console.print(f"[bold]{label:<8}[/bold] {escape(str(value))}")
    for warning in summary.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    for reason, count in sorted(summary.skipped_by_reason.items()):
        console.print(f"  skipped {count}: {reason}")
    for path, reason in summary.skipped[:20]:
        console.print(f"    {path}: {reason}", markup=False)
    if len(summary.skipped) > 20:
        console.print(f"    ... ({len(summary.skipped) - 20} more; --json lists them all)")
    partial_files = (summary.data or {}).get("partial_files", [])
    if partial_files:
        console.print(f"  data files read in part: {len(partial_files)}")
    for partial in partial_files[:20]:
        console.print(f"    {partial['path']}: {partial['note']}", markup=False)
    if summary.fallback:  # which, and why (a search user had to ask --json for the names)
        console.print(f"  read with a fallback parser: {len(summary.fallback)} files")
        for path, reason in summary.fallback[:20]:
            console.print(f"    {path}: {reason}", markup=False)
        if len(summary.fallback) > 20:
            console.print(f"    ... ({len(summary.fallback) - 20} more; --json lists them all)")


def _shared(summary: Any) -> str:
    """Chunks counted as new or changed but not embedded, nor from the cache: their text is
    another chunk's, embedded once for all of them."""
    return f" (+{summary.shared} chunks of the same texts)" if summary.shared else ""


def _rate(summary: Any) -> str:
    """The model's speed, when it embedded anything (what a long run's wait depends on)."""
    embedding = summary.seconds.get("embed", 0.0)
    if not summary.embedded or embedding <= 0:
        return ""
    return f"; {summary.embedded / embedding:.1f} chunks/s"


def print_embed_summary(summary: Any, dry_run: bool) -> None:
    """The embedding stage's counts and times (what it would do, on a dry run)."""
    seconds = summary.seconds
    times = ", ".join(f"{stage} {value:.2f} s" for stage, value in seconds.items())
    if dry_run:
        line = (
            f"chunks {summary.total}: {summary.changed} new or changed, {summary.reused} in the "
            f"embedding cache, {summary.embedded} to embed{_shared(summary)}, {summary.deleted} "
            "to delete "
            f"(dry run: nothing embedded; model {summary.model_id})"
        )
    else:
        line = (
            f"chunks {summary.total}: {summary.changed} new or changed, {summary.embedded} "
            f"embedded{_shared(summary)}, {summary.reused} from the cache, {summary.deleted} "
            "deleted; coverage "
            f"{percent(summary.coverage)} ({times}{_rate(summary)}; model {summary.model_id})"
        )
        if summary.ann not in ("", "exact"):
            line += f"; HNSW sidecar {summary.ann}"
    _console().print(f"[bold]embed[/bold]    {escape(line)}")
