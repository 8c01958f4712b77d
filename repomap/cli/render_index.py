"""Rich output for people; only the CLI imports this."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_index_summary(summary: Any) -> None:
    console = Console(stderr=False, highlight=False)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("index", summary.db_path)
    table.add_row(
        "files",
        f"{summary.scanned} scanned, {summary.added} added, {summary.modified} changed, "
        f"{summary.unchanged} unchanged, {summary.removed} removed, {len(summary.skipped)} skipped",
    )
    table.add_row(
        "indexed",
        f"{summary.files} files, {summary.symbols} symbols, {summary.references} references",
    )
    table.add_row("text", ", ".join(f"{count} {kind}s" for kind, count in summary.elements.items()))
    if docs := summary.docs:
        table.add_row(
            "docs",
            f"{docs['files']} files ({docs['added']} added, {docs['modified']} changed, "
            f"{docs['removed']} removed), {docs['sections']} sections",
        )
    if data := summary.data:
        table.add_row(
            "data",
            f"{data['files']} files ({data['added']} added, {data['modified']} changed, "
            f"{data['removed']} removed), {data['records']} records",
        )
    if history := summary.history:
        if history["status"] == "skipped":
            line = f"not read: {history['note']}"
        else:
            line = (
                f"{history['commits']} commits ({history['added']} added, "
                f"{history['removed']} removed{', history rewritten' if history['rewritten'] else ''})"
            )
        table.add_row("commits", escape(line))
    table.add_row("time", f"{summary.seconds:.2f} s")
    console.print(table)
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
    if summary.fallback:
        console.print(f"  read with a fallback parser: {len(summary.fallback)} files")


def print_embed_summary(summary: Any, dry_run: bool) -> None:
    """The embedding stage's counts and times (what it would do, on a dry run)."""
    seconds = summary.seconds
    times = ", ".join(f"{stage} {value:.2f} s" for stage, value in seconds.items())
    if dry_run:
        line = (
            f"chunks {summary.total}: {summary.changed} new or changed, {summary.reused} in the "
            f"embedding cache, {summary.embedded} to embed, {summary.deleted} to delete "
            f"(dry run: nothing embedded; model {summary.model_id})"
        )
    else:
        line = (
            f"chunks {summary.total}: {summary.changed} new or changed, {summary.embedded} "
            f"embedded, {summary.reused} from the cache, {summary.deleted} deleted; coverage "
            f"{summary.coverage:.0%} ({times}; model {summary.model_id})"
        )
        if summary.ann not in ("", "exact"):
            line += f"; HNSW sidecar {summary.ann}"
    Console(stderr=False, highlight=False, soft_wrap=True).print(f"[bold]embed[/bold]    {line}")
