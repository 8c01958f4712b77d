"""The MCP server's allowlist: the roots it was started with, and how paths name them.

Each root has its own index (`ROOT/.repomap/index.db`, or `--db` when there is one root).

- One root: paths are relative to it, as everywhere else in repomap.
- Several roots: every path the server returns starts with the root's *label* (its folder's
  name, made unique with `-2`, `-3`, ...): `backend/app/models.py`. Every path argument must
  start with a label too, or be an absolute path inside one of the roots. A search filter
  (`path=` of search_text/search_symbols, `file=` of get_symbol_content) that starts with a
  label searches that root only; any other filter (`*.rs`, `tests/`) applies in every root.
  Roots may not contain each other, so every file has one name.

Every path argument goes through `gateway.resolve_path`: `..`, absolute paths and symbolic
links that lead outside the roots are refused (OutsideRoot).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from repomap.config import Settings
from repomap.errors import BadArgument, CorruptIndex, OutsideRoot
from repomap.gateway.files import InsidePath, resolve_path
from repomap.paths import is_glob


@dataclass(frozen=True, slots=True)
class Root:
    label: str
    settings: Settings

    @property
    def path(self) -> Path:
        return self.settings.root


def check_roots(settings: list[Settings]) -> None:
    """Refuse roots that are not directories or that contain one another."""
    if not settings:
        raise BadArgument("give at least one --root")
    for item in settings:
        if not item.root.is_dir():
            raise BadArgument(f"--root {item.root} is not a directory")
    for item in settings:
        for other in settings:
            if item is not other and item.root in other.root.parents:
                raise BadArgument(
                    f"--root {other.root} is inside --root {item.root}; give only the outer one"
                )


def _labels(paths: list[Path]) -> list[str]:
    labels: list[str] = []
    for path in paths:
        base = path.name or "root"
        label, count = base, 1
        while label in labels:
            count += 1
            label = f"{base}-{count}"
        labels.append(label)
    return labels


class Roots:
    """The allowlisted roots; maps path arguments to (root, path) and results back to names."""

    def __init__(self, settings: list[Settings]) -> None:
        unique: list[Settings] = []
        for item in settings:
            if all(item.root != seen.root for seen in unique):
                unique.append(item)
        check_roots(unique)
        self.all = [
            Root(label, item)
            for label, item in zip(_labels([s.root for s in unique]), unique, strict=True)
        ]
        self.by_label = {root.label: root for root in self.all}

    @property
    def multi(self) -> bool:
        return len(self.all) > 1

    def out(self, root: Root, rel_path: str) -> str:
        """A path as tools return it: relative to the root, prefixed by its label if several."""
        if rel_path.startswith("/") or ".." in rel_path.split("/") or "\0" in rel_path:
            raise CorruptIndex(  # the indexer never stores such a path: a foreign or edited index
                f"the index of {root.path} lists {rel_path!r}, a path outside the root; "
                "run `repomap index --force` to rebuild it"
            )
        if not self.multi:
            return rel_path
        return f"{root.label}/{rel_path}" if rel_path else root.label

    def locate(self, raw: str) -> tuple[Root, InsidePath]:
        """The root a path argument names and the path inside it (OutsideRoot otherwise)."""
        if not self.multi:
            root = self.all[0]
            return root, resolve_path(root.path, raw)
        if os.path.isabs(raw):
            for root in self.all:
                try:
                    return root, resolve_path(root.path, raw)
                except OutsideRoot:
                    continue
            raise OutsideRoot(f"{raw} is outside every root ({self.describe()})")
        named, rest = self._split(raw)
        if named is None:
            raise OutsideRoot(
                f"{raw} does not start with a root name; this server has several roots, so "
                f"paths start with one of: {self.describe()}"
            )
        return named, resolve_path(named.path, rest)

    def scope(self, raw: str | None) -> list[tuple[Root, str | None]]:
        """The roots a search filter applies to, each with the filter left for that root."""
        if raw is None or not raw.strip():
            return [(root, None) for root in self.all]
        raw = raw.strip()
        if self.multi and raw.startswith("!") and not os.path.isabs(raw[1:]):
            # `!alpha/tests/`: every file but alpha's tests, and every other root whole
            root, rest = self._split(raw[1:])
            if root is not None:
                excluded = _checked_filter(root, rest)
                if excluded is None:  # `!alpha`: the other roots
                    return [(each, None) for each in self.all if each is not root]
                return [(each, "!" + excluded if each is root else None) for each in self.all]
        if self.multi and not os.path.isabs(raw):
            root, rest = self._split(raw)
            if root is not None:
                return [(root, _checked_filter(root, rest))]
        if os.path.isabs(raw) and not is_glob(raw):
            root, inside = self.locate(raw)
            return [(root, inside.rel_path or None)]
        return [(root, _checked_filter(root, raw)) for root in self.all]

    def _split(self, raw: str) -> tuple[Root | None, str]:
        head, _, rest = raw.lstrip("/").partition("/")
        root = self.by_label.get(head)
        return root, rest

    def describe(self) -> str:
        return ", ".join(f"{root.label}/ ({root.path})" for root in self.all)


def _checked_filter(root: Root, text: str) -> str | None:
    """A filter that cannot name anything outside the root: `..` and escapes are refused."""
    if not text.strip("/"):
        return None
    if is_glob(text):
        if text.startswith("/") or ".." in text.split("/"):
            raise OutsideRoot(
                f"{text} could match paths outside the root: a path filter is relative to "
                "the root and cannot start with / or contain `..`"
            )
        return text
    rel_path = resolve_path(root.path, text).rel_path
    if not rel_path:
        return None
    return rel_path + "/" if text.endswith("/") else rel_path  # `src/db/`: the folder only
