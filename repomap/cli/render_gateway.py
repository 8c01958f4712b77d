"""Plain-text forms of the gateway's results (outline, sources, files); pure.

The CLI prints these and the MCP server can return them as they are: compact, one entry per
line, indented two spaces per level, line ranges as `L<start>-<end>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repomap.gateway.files import truncate
from repomap.languages import DATA_FORMATS

if TYPE_CHECKING:
    from repomap.gateway.files import FileMatches, Outline, SourceTree

INDENT = "  "


def outline_text(result: Outline, max_lines: int | None = None) -> str:
    """One line per file, then its headings (`## Install  L5-7`) and symbols, indented."""
    lines = []
    for file in result.files:
        lines.append(file.path)
        if not file.entries:
            what = {"markdown": "headings", "text": "headings"}.get(file.language, "symbols")
            what = "records" if file.language in DATA_FORMATS.values() else what
            lines.append(f"{INDENT}(no {what})")
        for entry in file.entries:
            label = "#" * entry.level if entry.kind == "heading" else entry.kind
            name = f"{label} {entry.name}".rstrip()
            where = f"  L{entry.start_line}-{entry.end_line}" if entry.start_line else ""
            lines.append(f"{INDENT * entry.depth}{name}{where}")
    return truncate("".join(line + "\n" for line in lines), max_lines).text


def sources_text(tree: SourceTree) -> str:
    """Directories first (`name/`, or `name/ (N files)` when not expanded), then files."""
    lines = []
    for entry in tree.entries:
        indent = INDENT * (entry.depth - 1)
        if entry.kind == "file":
            lines.append(f"{indent}{entry.name}")
        elif entry.expanded:
            lines.append(f"{indent}{entry.name}/")
        else:
            lines.append(f"{indent}{entry.name}/ ({entry.files} files)")
    if tree.more:
        lines.append(f"... ({tree.more} more)")
    return "".join(line + "\n" for line in lines)


def files_text(matches: FileMatches) -> str:
    lines = list(matches.paths)
    if matches.truncated:
        lines.append(f"... ({matches.total - len(matches.paths)} more)")
    return "".join(line + "\n" for line in lines)
