"""Walk ROOT: ignore files (pathspec), symlinks that stay inside, size limits."""

from __future__ import annotations

import errno
import functools
import operator
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from repomap import config
from repomap.index.secrets import is_secret_file
from repomap.languages import header_languages, is_read, language_of

if TYPE_CHECKING:  # imported by the functions that read rules: a tree with none needs none
    import pathspec  # (~7 ms of a ~170 ms no-change run on Django, which has no ignore file)

IGNORE_FILES = (".gitignore", ".repomapignore")
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".repomap", ".hg", ".svn"})
MAX_IGNORED_SHOWN = 3  # examples kept per ignore rule


class FoundFile:
    """A walked file. Its size and mtime come from one stat when first asked for: most files of
    a tree are neither code, docs nor data (Django's 3,262 of 6,725: `locale/` catalogues), and
    a stat for each was ~8 ms of a ~75 ms walk. A file gone before its stat has size and mtime
    0, so it is read again, and reading it says it is gone."""

    __slots__ = ("rel_path", "abs_path", "_size", "_mtime_ns")

    def __init__(self, rel_path: str, abs_path: str, size: int = -1, mtime_ns: int = -1) -> None:
        self.rel_path = rel_path  # relative to ROOT, '/' separators
        self.abs_path = abs_path  # kept as a string: a Path per file was a third of the walk
        self._size = size  # -1: not read yet
        self._mtime_ns = mtime_ns

    @property
    def size(self) -> int:
        if self._size < 0:
            self._read_stat()
        return self._size

    @property
    def mtime_ns(self) -> int:
        if self._size < 0:
            self._read_stat()
        return self._mtime_ns

    def _read_stat(self) -> None:
        try:
            found = os.stat(self.abs_path)
        except OSError:
            self._size, self._mtime_ns = 0, 0
            return
        self._size, self._mtime_ns = found.st_size, found.st_mtime_ns

    @property
    def path(self) -> Path:
        return Path(self.abs_path)

    def __repr__(self) -> str:
        return f"FoundFile({self.rel_path!r})"


@dataclass(slots=True)
class Walk:
    """Files found under ROOT, and what was passed over and why."""

    files: list[FoundFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)
    # Directories descended into (ignore rules kept them), relative to ROOT, "" for ROOT itself:
    # what the MCP server watches for changes (repomap/freshness.py).
    dirs: list[str] = field(default_factory=list)
    # Entries (a folder counts once) that ignore rules excluded, by rule (`.gitignore: /*`), with
    # a few examples each: what a user needs to see when the rules leave nothing to index.
    ignored: Counter[str] = field(default_factory=Counter)
    ignored_examples: dict[str, list[str]] = field(default_factory=dict)

    def note_ignored(self, rule: str, shown_path: str) -> None:
        self.ignored[rule] += 1
        examples = self.ignored_examples.setdefault(rule, [])
        # Hidden entries (`.clang-format`) say little about what a rule took away.
        hidden = shown_path.rstrip("/").rsplit("/", 1)[-1].startswith(".")
        if len(examples) < MAX_IGNORED_SHOWN and not hidden:
            examples.append(shown_path)


@dataclass(frozen=True, slots=True)
class _Rules:
    base: str  # directory the patterns are relative to ("" for ROOT), with a trailing "/"
    spec: pathspec.PathSpec | None  # None: DEFAULT_IGNORE's folder names, matched by name
    source: str  # the ignore file, relative to ROOT (`.git/info/exclude` for that one)
    # Every pattern is a hidden folder's name (DEFAULT_IGNORE): a path none of whose parts
    # starts with `.` matches none, and walk does not check it (pathspec tries each pattern
    # in turn: ~35 ms of a no-change run on Django, nearly every file checked against these).
    hidden_only: bool = False


def _read_rules(folder: Path, base: str, names: tuple[str, ...]) -> list[_Rules]:
    rules = []
    for name in names:
        try:
            lines = (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        rules.append(_Rules(base, compile_rules(lines), base + name))
    return rules


def compile_rules(lines: list[str]) -> pathspec.PathSpec:
    """gitignore patterns as one spec; a line git cannot read (`!`, `[z-a]`) is left out, as
    git leaves it out, instead of stopping the walk (`repomap doctor` names it)."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        return pathspec.GitIgnoreSpec.from_lines(
            [line for line in lines if not invalid_pattern(line)]
        )


def invalid_pattern(line: str) -> str | None:
    """Why git cannot read this gitignore line, or None when it can."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error) as error:
        return str(error)
    return None


# Hidden folders that hold tools' state or copies of the sources, not the project's code:
# quilt's `.pc/` (in every Debian source tree; its pre-patch copies won ties in `show` and
# filled half a map), virtual environments, test and type-checker caches. Other hidden folders
# are read (`.github/workflows/*.yml` are data records). Below every ignore file, so a
# `!.venv/` in a .repomapignore (or the config's index.extra_ignore) takes one back.
DEFAULT_IGNORE = (
    ".pc/", ".venv/", ".tox/", ".nox/", ".eggs/", ".direnv/", ".mypy_cache/",
    ".pytest_cache/", ".ruff_cache/", ".hypothesis/", ".ipynb_checkpoints/",
)  # fmt: skip


def _default_rules() -> _Rules:
    return _Rules("", None, "default (tools' folders)", hidden_only=True)


# DEFAULT_IGNORE's patterns are folder names (a test holds them to it): a folder is matched by
# its name, as git matches `.venv/`, and pathspec is not imported for them. A tree with no
# ignore file (Django's sources, whose hidden entries are a `.hidden` folder and `.keep` files)
# never imports it: ~15 ms of a ~170 ms no-change run went to importing it and compiling these.
_DEFAULT_INDEX = {pattern: index for index, pattern in enumerate(DEFAULT_IGNORE)}


def _extra_rules(root: Path) -> list[_Rules]:
    """The config file's `index.extra_ignore` patterns, as a .repomapignore at ROOT (below the
    ignore files in the tree, which may re-include with `!`). A config file that cannot be read
    adds none here: every command reports it (config.resolve) and `repomap doctor` names it."""
    try:
        found = config.options(root)["index.extra_ignore"]
    except config.ConfigError:
        return []
    if not found.value:
        return []
    return [_Rules("", compile_rules(found.value), f"index.extra_ignore ({found.origin})")]


def _ignoring(rules: list[_Rules], rel_path: str, is_dir: bool) -> tuple[_Rules, int] | None:
    """The rules and pattern index that exclude `rel_path`, or None when it is kept.

    Git's precedence: the deepest file wins, and within a file the last matching pattern.
    """
    for rule in reversed(rules):
        if rule.spec is None:  # DEFAULT_IGNORE: a folder by its name
            index = _DEFAULT_INDEX.get(rel_path.rsplit("/", 1)[-1] + "/") if is_dir else None
            if index is not None:
                return rule, index
            continue
        relative = rel_path[len(rule.base) :] + ("/" if is_dir else "")
        result = rule.spec.check_file(relative)
        if result.include is not None:
            return (rule, result.index) if result.include else None  # type: ignore[return-value]
    return None


def _describe(rules: _Rules, index: int) -> str:
    """`.gitignore: /*`: the file and the pattern that excluded an entry."""
    pattern = DEFAULT_IGNORE[index] if rules.spec is None else rules.spec.patterns[index].pattern
    return f"{rules.source}: {pattern}"


def walk(root: Path, skip_dirs: frozenset[Path] = frozenset()) -> Walk:
    """Every file under `root` that ignore rules keep, each real file once, links kept inside."""
    root = root.resolve()
    skip_paths = frozenset(str(path) for path in skip_dirs)  # compared as strings: no Path per dir
    result = Walk()
    base_rules = [
        _default_rules(),
        *(
            replace(rule, source=".git/info/exclude")
            for rule in _read_rules(root / ".git" / "info", "", ("exclude",))
        ),
        *_extra_rules(root),
    ]
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()
    root_stat = root.stat()
    seen_dirs.add((root_stat.st_dev, root_stat.st_ino))
    # Folders as strings, not Paths: a Path per folder was ~7 ms of a no-change run on Django.
    # With each its device: a folder's entries are keyed (device, inode) from the listing.
    stack: list[tuple[str, str, list[_Rules], int]] = [
        (str(root), "", base_rules, root_stat.st_dev)
    ]
    while stack:
        folder, rel_folder, inherited, device = stack.pop()
        result.dirs.append(rel_folder.rstrip("/"))
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=_entry_name)
        except OSError as error:
            result.skipped.append(
                (rel_folder.rstrip("/") or ".", f"unreadable directory ({error.strerror})")
            )
            continue
        present = [e.name for e in entries if e.name in IGNORE_FILES]
        rules = (
            inherited + _read_rules(Path(folder), rel_folder, tuple(present))
            if present
            else inherited
        )
        # The rules an entry whose name starts with no `.` is checked against: none of them,
        # mostly (walk's cost per entry was ~2x that of listing and stat-ing it on Django).
        plain_rules = (
            [rule for rule in rules if not rule.hidden_only]
            if not rel_folder.startswith(".") and "/." not in rel_folder
            else rules
        )
        # A file is checked against no folder's pattern (every DEFAULT_IGNORE one is a folder's
        # name): Django's `.coveragerc` and `.keep` files made a no-change run compile them.
        file_rules = (
            plain_rules
            if plain_rules is not rules
            else [rule for rule in rules if not rule.hidden_only]
        )
        subfolders = []
        for entry in entries:
            name = entry.name
            rel_path = rel_folder + name
            if not name.isascii() and not _is_text_name(rel_path):
                result.skipped.append((repr(rel_path)[1:-1], "file name is not valid UTF-8"))
                continue
            found = _classify(entry, root, skip_paths)
            if found is None:
                continue
            kind, entry_stat, reason = found
            if kind == "outside":
                result.skipped.append((rel_path, "symlink leads outside the root"))
                continue
            if kind != "dir":
                checked = file_rules
            else:
                checked = rules if name.startswith(".") else plain_rules
            if checked and (excluded := _ignoring(checked, rel_path, kind == "dir")):
                result.note_ignored(_describe(*excluded), rel_path + ("/" if kind == "dir" else ""))
                continue
            if reason is not None:
                result.skipped.append((rel_path, reason))
                continue
            if kind == "file" and entry.path in skip_paths:
                continue  # the index's own search log (config.Settings.index_skipped)
            if kind == "file" and is_secret_file(rel_path):
                result.skipped.append((rel_path, "secret file (never indexed)"))
                continue
            if kind == "dir":
                # A folder that is no link is keyed by its listing (a stat each was ~10 ms of
                # Django's walk); the folder a link leads to, by its stat. They agree on
                # Linux's file systems but at a mount point (or an overlay file system that
                # numbers a folder differently in its listing), where a link to a folder seen
                # already is walked once more, and then stops: its own key is seen.
                if entry_stat is None:
                    key, sub_device = (device, entry.inode()), device
                else:
                    key, sub_device = (entry_stat.st_dev, entry_stat.st_ino), entry_stat.st_dev
                if key not in seen_dirs:  # a link back up would loop forever
                    seen_dirs.add(key)
                    subfolders.append((entry.path, rel_path + "/", rules, sub_device))
                continue
            if entry_stat is None:  # a file the index never reads: no stat, nor a twin check
                result.files.append(FoundFile(rel_path, entry.path))
                continue
            key = (entry_stat.st_dev, entry_stat.st_ino)
            if key in seen_files:
                continue
            seen_files.add(key)
            result.files.append(
                FoundFile(rel_path, entry.path, entry_stat.st_size, entry_stat.st_mtime_ns)
            )
        stack.extend(reversed(subfolders))
    return result


_entry_name = operator.attrgetter("name")


def _is_text_name(rel_path: str) -> bool:
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:  # os.scandir hands undecodable bytes over as surrogates
        return False
    return True


def _classify(
    entry: os.DirEntry[str], root: Path, skip_paths: frozenset[str]
) -> tuple[str, os.stat_result | None, str | None] | None:
    """(kind, stat, why it is skipped) for an entry worth a look, None for the rest.

    kind is "dir", "file" or "outside" (a link out of ROOT); a reason is given for what the
    summary should name: a broken link, a link to a secret file, a FIFO, socket or device.
    A regular file the index does not read (by its name) gets no stat (see FoundFile): the
    directory listing's file type says enough.
    """
    if entry.is_file(follow_symlinks=False) and not is_read(entry.name):
        return ("file", None, None)
    if entry.is_dir(follow_symlinks=False):  # no link (see walk)
        if entry.name in ALWAYS_SKIPPED_DIRS or entry.path in skip_paths:
            return None
        return ("dir", None, None)
    is_link = entry.is_symlink()
    try:
        if is_link:
            target = Path(entry.path).resolve()
            if target != root and root not in target.parents:
                return ("outside", entry.stat(follow_symlinks=False), None)
            entry_stat = target.stat()
        else:
            entry_stat = entry.stat(follow_symlinks=False)
    except RuntimeError:  # Path.resolve() before Python 3.13
        return ("file", None, "symlink loop")
    except OSError as error:
        if not is_link:
            return None  # gone since the directory was listed
        if error.errno == errno.ELOOP:
            return ("file", None, "symlink loop")
        return ("file", None, f"broken symlink ({error.strerror})")
    if stat.S_ISDIR(entry_stat.st_mode):
        if entry.name in ALWAYS_SKIPPED_DIRS or entry.path in skip_paths:
            return None
        return ("dir", entry_stat, None)
    if not stat.S_ISREG(entry_stat.st_mode):
        # Reading a FIFO blocks forever; a device or socket is not source either.
        return ("file", entry_stat, "not a regular file")
    if is_link and is_secret_file(target.relative_to(root).as_posix()):
        # `notes.txt -> .env` must not smuggle the credentials in under another name.
        return ("file", entry_stat, "secret file (never indexed)")
    return ("file", entry_stat, None)


def read_file(
    path: Path, root: Path | None = None, max_size: int | None = None
) -> tuple[bytes | None, str | None]:
    """A walked file's bytes, or None and why: it may have changed since the walk saw it.

    Never blocks on a FIFO put in its place, never reads more than `max_size` bytes of a file
    that grew, and (with `root`, where /proc tells what was opened) never follows a link
    swapped in that leads outside `root`.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # a folder now: fdopen would raise
        os.close(descriptor)
        return None, "not a regular file"
    with os.fdopen(descriptor, "rb") as file:
        try:
            if root is not None and not _opened_inside(descriptor, root):
                return None, "symlink leads outside the root"
            raw = file.read(-1 if max_size is None else max_size + 1)
        except OSError as error:
            return None, f"unreadable ({error.strerror or error})"
    if max_size is not None and len(raw) > max_size:
        return None, f"larger than the limit ({max_size} bytes)"
    return raw, None


def read_file_if(
    path: str | Path, root: Path, max_size: int, wanted: Callable[[bytes], bool]
) -> bytes | None:
    """The file's bytes if `wanted(bytes)` says so, else None (and when read_file would give
    none, for whatever reason): read as read_file reads (no FIFO blocks, no more than
    `max_size` bytes), for a look at each of many files, of which few are wanted. Cheaper:
    no buffered file around the descriptor, and the check that the file opened inside
    `root` (a readlink) made only for the wanted ones."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        chunks = [os.read(descriptor, min(status.st_size, max_size) + 1)]  # all, at once
        size = len(chunks[0])
        while chunks[-1] and size <= max_size:  # a short read, or a file that grew
            chunks.append(os.read(descriptor, max_size + 1 - size))
            size += len(chunks[-1])
        raw = chunks[0] if size == len(chunks[0]) else b"".join(chunks)
        if size > max_size or not wanted(raw) or not _opened_inside(descriptor, root):
            return None
        return raw
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _opened_inside(descriptor: int, root: Path) -> bool:
    try:
        opened = os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:  # no /proc: the walk's own check stands
        return True
    top = _resolved(root)
    return opened == top or opened.startswith(top.rstrip("/") + "/")


@functools.lru_cache(maxsize=16)
def _resolved(root: Path) -> str:
    """The root as the kernel names it, once per process: resolving it stats every folder on
    its path (~0.15 ms), which reading a file costs no more than."""
    return str(root.resolve())


def code_files(walked: Walk) -> Iterator[tuple[FoundFile, str]]:
    """The walked files repomap indexes as code, with their language (a `.h`: the one it is
    first read as; languages.header_languages)."""
    code = [
        (found, language) for found in walked.files if (language := language_of(found.rel_path))
    ]
    headers = header_languages([found.rel_path for found, _ in code])
    for found, language in code:
        yield found, headers.get(found.rel_path, language)
