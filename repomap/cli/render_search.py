"""Terminal output of `repomap search-text`, `search-docs` and `stats` (rich); only the CLI
imports this.

Matched words are highlighted on a terminal; to a pipe or a file the text is plain, with no
markers and no line wrapped (as rg); `--markers` keeps the `[MATCH]…[/MATCH]` markers instead,
as `--json` always does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from repomap.cli.console import console

if TYPE_CHECKING:
    from repomap.search.docs import DocSearch
    from repomap.search.log import LogSummary, Usage
    from repomap.search.text import SearchResult, TextHit

MATCH_STYLE = "bold black on yellow"


def print_search(result: SearchResult, markers: bool = False) -> None:
    """Hits grouped by file (files in order of their best hit): `path:line`, symbol, snippet."""
    out = _console()
    err = _console(stderr=True)
    groups: dict[str, list[TextHit]] = {}
    for hit in result.hits:
        groups.setdefault(hit.file_path, []).append(hit)
    for number, (path, hits) in enumerate(groups.items()):
        if number:
            out.print()
        out.print(Text(path, style="bold magenta"))
        for hit in hits:
            out.print(_heading(hit, result.mode))
            out.print(_snippet(hit.snippet, markers))
    for note in result.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    err.print(_footer(result), style="dim")


def _console(stderr: bool = False) -> Console:
    """A console that never wraps lines when its stream is not a terminal (as rg does): a
    pipe or a file gets each hit on one line, however long, for grep and editors to read."""
    return console(stderr)


def _heading(hit: TextHit, mode: str) -> Text:
    line = Text("  ")
    line.append(f"{hit.file_path}:{hit.line_number}", style="bold")
    line.append(f"  {hit.element_type}", style="cyan")
    if hit.symbol_name:
        line.append(f"  in {hit.symbol_name}", style="green")
    if mode == "fts":
        line.append(f"  {hit.rank:.2f}", style="dim")
    return line


def print_docs(result: DocSearch, markers: bool = False) -> None:
    """`file:start-end  section`, then the snippet indented, per hit."""
    out = _console()
    for hit in result.hits:
        title = Text(hit.file, style="bold magenta")
        if hit.start_line is not None:
            title.append(f":{hit.start_line}-{hit.end_line}", style="bold")
        if hit.section:
            title.append(f"  {hit.section}", style="green")
        out.print(title)
        out.print(_snippet(hit.snippet, markers, indent="  "))


def _snippet(snippet: str, markers: bool = False, indent: str = "      ") -> Text:
    """The snippet with [MATCH]…[/MATCH] turned into highlighting (kept as they are with
    `markers`)."""
    text = Text(indent)
    if markers:
        return text.append(snippet)
    rest = snippet
    while (start := rest.find("[MATCH]")) >= 0:
        end = rest.find("[/MATCH]", start)
        if end < 0:
            break
        text.append(rest[:start])
        text.append(rest[start + 7 : end], style=MATCH_STYLE)
        rest = rest[end + 8 :]
    text.append(rest)
    return text


def _footer(result: SearchResult) -> str:
    took = f"({result.took_ms:.1f} ms)"
    if not result.hits:
        return f"no matches for {result.query!r} {took}"
    total = f"{result.total}" if result.total_exact else f"{result.total}+"
    noun = "match" if total == "1" else "matches"
    if len(result.hits) == result.total and result.total_exact:
        return f"{total} {noun} {took}"
    return f"{len(result.hits)} of {total} {noun} {took}"


def print_stats(summary: LogSummary) -> None:
    out = _console()
    if not summary.searches:
        out.print("no searches logged yet")
        return
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row(
        "searches",
        f"{summary.searches} ({summary.errors} failed), {summary.first} .. {summary.last}",
    )
    table.add_row("modes", ", ".join(f"{mode} {count}" for mode, count in summary.by_mode.items()))
    table.add_row("results", f"{summary.average_results} on average")
    table.add_row(
        "latency", ", ".join(f"{name} {ms:.1f} ms" for name, ms in summary.latency_ms.items())
    )
    out.print(table)
    for title, rows in (("most frequent", summary.top_queries),
                        ("no results", summary.zero_result_queries)):  # fmt: skip
        if rows:
            out.print(f"\n[bold]{title}[/]")
            for query, count in rows:
                out.print(f"  {count:>5}  {escape(query)}")


def print_usage(usage: list[Usage]) -> None:
    """CLI commands, then MCP tool calls, one table each, beside the search statistics."""
    out = _console()
    for kind, title in (("command", "CLI commands"), ("tool", "MCP tool calls")):
        rows = [row for row in usage if row.kind == kind]
        if not rows:
            out.print(f"\nno {title} logged yet")
            continue
        table = Table(box=None, pad_edge=False, title=title, title_justify="left")
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            (kind, "left"), ("calls", "right"), ("errors", "right"), ("empty", "right"),
            ("avg results", "right"), ("p50 ms", "right"), ("p95 ms", "right"),
        )  # fmt: skip
        for name, justify in columns:
            table.add_column(name, justify=justify)
        for row in rows:
            table.add_row(
                row.name,
                str(row.calls),
                str(row.errors),
                str(row.empty),
                f"{row.average_results:g}",
                f"{row.latency_ms['p50']:.1f}",
                f"{row.latency_ms['p95']:.1f}",
            )
        out.print()
        out.print(table)
