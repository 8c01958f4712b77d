"""Which side files (docs, data files) a run must read: the plan shared by index/docs.py and
index/records.py, each with its own table of what was indexed before."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from repomap.index.discover import FoundFile


class Indexed(Protocol):
    """What a run compares a file with: its size and mtime when it was last read."""

    @property
    def size(self) -> int: ...

    @property
    def mtime_ns(self) -> int: ...


@dataclass
class Plan:
    scanned: int = 0
    unchanged: int = 0
    present: set[str] = field(default_factory=set)  # every file of the kind in the walk
    pending: list[tuple[FoundFile, str]] = field(default_factory=list)  # (file, its format)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    def dropped(self, existing: Mapping[str, Indexed]) -> list[str]:
        """Indexed paths whose rows go: gone from the tree, or now over the size limit."""
        too_large = {path for path, _ in self.skipped}
        return [path for path in existing if path not in self.present or path in too_large]


def plan(
    files: Iterable[FoundFile],
    format_of: Callable[[str], str | None],
    existing: Mapping[str, Indexed],
    max_file_size: int,
    force: bool,
) -> Plan:
    """The files of one kind (those `format_of` names) to read again: new, changed (size or
    mtime), or all of them with `force`; larger ones are skipped and named."""
    found_plan = Plan()
    for found in files:
        fmt = format_of(found.rel_path)
        if fmt is None:
            continue
        found_plan.scanned += 1
        found_plan.present.add(found.rel_path)
        old = existing.get(found.rel_path)
        if found.size > max_file_size:
            found_plan.skipped.append(
                (found.rel_path, f"larger than the limit ({max_file_size} bytes)")
            )
        elif old and not force and (old.size, old.mtime_ns) == (found.size, found.mtime_ns):
            found_plan.unchanged += 1
        else:
            found_plan.pending.append((found, fmt))
    return found_plan
