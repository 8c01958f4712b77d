"""How an answer shows paths: relative to ROOT, or absolute when asked (`--absolute`).

One rule for every command, text and JSON alike: a file or folder inside ROOT is shown relative
to it (`src/db/pool.py`), as the index stores it; with `--absolute`, as ROOT joined with it. A
path outside ROOT (an index chosen with `--db`, its log) is shown absolute either way, since
no relative form of it would say more. ROOT itself (`index`'s `root`) is the one path always
shown absolute: it is what the others are relative to. Warnings on stderr name files relative
to ROOT. No click here: search-text's fast path uses it too.
"""

from __future__ import annotations

from pathlib import Path


class Shown:
    """Paths as the answer shows them, for one ROOT."""

    def __init__(self, root: Path, absolute: bool = False) -> None:
        self.root = root
        self.absolute = absolute

    def __call__(self, rel_path: str) -> str:
        """A path relative to ROOT (the index's form; a folder may end with `/`)."""
        if not self.absolute:
            return rel_path
        joined = (self.root / rel_path).as_posix() if rel_path else self.root.as_posix()
        return joined + "/" if rel_path.endswith("/") else joined

    def anywhere(self, path: Path | str) -> str:
        """An absolute path (the index file, its log): relative to ROOT when inside it."""
        path = Path(path)
        if self.absolute:
            return str(path)
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def located(self, text: str) -> str:
        """`path:line…` (a C++ declaration's place) with its path shown."""
        if not self.absolute:
            return text
        path, colon, rest = text.partition(":")
        return self(path) + colon + rest
