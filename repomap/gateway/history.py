"""`repomap history NAME`: the commits that changed a definition's lines, newest first.

The definition is looked up by name as `show` does (search/symbols.py: exact names first; a
qualified name or `--path` narrows it down); its file and line range go to `git log -L`, which
follows those lines back through every edit and rename (index/history.py). Who changed this
function, when, and the message that says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repomap.errors import NotFound, RepomapError
from repomap.index.history import GitUnavailable, log_lines
from repomap.limits import check_limit
from repomap.search import symbols
from repomap.search.records import CommitHit, commit_hit
from repomap.store import Store


@dataclass(frozen=True, slots=True)
class History:
    name: str  # the qualified name of the definition followed
    kind: str
    file_path: str
    start_line: int
    end_line: int
    commits: list[CommitHit]
    truncated: bool
    others: list[str]  # other definitions of the same name (`path:line qualified_name`)


def history(
    db: Store,
    root: Path,
    name: str,
    path: str | None = None,
    kind: str | None = None,
    limit: int = 20,
) -> History:
    """The commits that touched `name`'s lines (the best-matching definition), newest first."""
    check_limit(limit)
    hits = [hit for hit in symbols.search_symbols(db, name, kind, None, path, 20)
            if hit.match == "exact"]  # fmt: skip
    if not hits:
        raise NotFound(f"no definition named {name!r}; try `repomap symbols {name}`")
    hit = hits[0]
    try:
        rows = log_lines(root, hit.file_path, hit.line_number, hit.end_line)
    except GitUnavailable as reason:
        raise RepomapError(f"{reason} (history reads it from git)") from None
    commits = [
        commit_hit(tuple(row[:10]) + ("",), list(row.paths), "lines", "") for row in rows[:limit]
    ]
    others = [f"{other.file_path}:{other.line_number} {other.qualified_name}" for other in hits[1:]]
    return History(
        hit.qualified_name,
        hit.kind,
        hit.file_path,
        hit.line_number,
        hit.end_line,
        commits,
        len(rows) > limit,
        others,
    )
