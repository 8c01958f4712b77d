"""Settings resolved once: flag > environment variable > config file > default.

The config file is ROOT/repomap.toml (keys at its top level) or, without one, the
`[tool.repomap]` table of ROOT/pyproject.toml. Every setting has a dotted snake_case name
(`serve.rate_limit`, `scope.mode`), an environment variable and a default (SETTINGS);
`options(root)` says each one's value and where it came from (`repomap status --json`).

Branch scopes: `scope.mode` picks which index a command uses. `fixed` (the default) is one
index, ROOT/.repomap/index.db, as always; `git` gives each branch its own index under
ROOT/.repomap/scopes/<name>/, named after the branch checked out; `env` names the scope by
REPOMAP_SCOPE. `scope_db_path` is the one place a scope becomes a database path.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from repomap.errors import BadArgument

INDEX_DIR = ".repomap"
SCOPES_DIR = "scopes"
DEFAULT_SCOPE = "main"
SCOPE_MODES = ("fixed", "git", "env")
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024  # bytes; larger files are skipped as "too large"
# Chunks in a vector scope from which it is searched through an HNSW sidecar (store/ann.py)
# rather than exactly; REPOMAP_ANN_THRESHOLD sets it (tests set it low to exercise the sidecar).
DEFAULT_ANN_THRESHOLD = 1_000_000

# Bytes of code (the indexed code files' sizes) from which an index keeps a trigram index for
# literal search; below it a literal search reads the text whole (store/literal.py explains).
# REPOMAP_LITERAL_INDEX_BYTES sets it (0: always; tests use it to exercise the index).
DEFAULT_LITERAL_INDEX_BYTES = 24 << 20

CONFIG_FILE = "repomap.toml"
PYPROJECT = "pyproject.toml"
OFF_VALUES = ("0", "false", "off", "no")


class ConfigError(BadArgument):
    """The config file cannot be read, or holds a key or value repomap does not know."""


class Setting:
    """One setting's value and where it came from: "flag", "env REPOMAP_…", the config
    file's path, or "default". (Plain classes here, not NamedTuples: each NamedTuple costs
    the CLI's start-up about a millisecond.)"""

    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: str) -> None:
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Setting({self.value!r}, {self.origin!r})"


class Spec:
    """One setting: its type and default, the environment variable that sets it, and the
    values it may take (none: any of its type)."""

    __slots__ = ("choices", "default", "env", "kind")

    def __init__(
        self, kind: type, default: Any, env: str | None, choices: tuple[str, ...] = ()
    ) -> None:
        self.kind = kind
        self.default = default
        self.env = env
        self.choices = choices


SETTINGS: dict[str, Spec] = {
    "index.max_file_size": Spec(int, DEFAULT_MAX_FILE_SIZE, "REPOMAP_MAX_FILE_SIZE"),
    "index.workers": Spec(int, 2, "REPOMAP_WORKERS"),
    "index.redact": Spec(bool, True, "REPOMAP_REDACT"),
    "index.extra_ignore": Spec(list, [], None),  # gitignore patterns, as in a .repomapignore
    "index.search_log": Spec(bool, True, "REPOMAP_SEARCH_LOG"),
    "index.history": Spec(bool, True, "REPOMAP_HISTORY"),
    "embed.model": Spec(str, "all-MiniLM-L6-v2-onnx-int8", None, ("all-MiniLM-L6-v2-onnx-int8",)),
    "embed.vector_store": Spec(str, "sqlite", "REPOMAP_VECTOR_STORE"),
    "scope.mode": Spec(str, "fixed", "REPOMAP_SCOPE_MODE", SCOPE_MODES),
    "scope.name": Spec(str, DEFAULT_SCOPE, "REPOMAP_SCOPE"),
    "scope.ttl_days": Spec(int, 30, None),
    "watch.debounce_ms": Spec(int, 50, "REPOMAP_WATCH_DEBOUNCE_MS"),
    "serve.host": Spec(str, "127.0.0.1", "REPOMAP_SERVE_HOST"),
    "serve.port": Spec(int, 8766, "REPOMAP_SERVE_PORT"),
    "serve.rate_limit": Spec(int, 600, "REPOMAP_SERVE_RATE_LIMIT"),
    "serve.rate_limit_window": Spec(float, 60.0, "REPOMAP_SERVE_RATE_LIMIT_WINDOW"),
    "serve.cors_origins": Spec(list, [], None),
    "serve.max_body_bytes": Spec(int, 65536, "REPOMAP_SERVE_MAX_BODY_BYTES"),
}

HELP = {  # what `repomap init` writes above each key
    "index.max_file_size": "skip files larger than this many bytes",
    "index.workers": "extraction processes",
    "index.redact": "replace credentials found in strings and comments with [REDACTED]",
    "index.extra_ignore": "more gitignore-style patterns to leave out, beside .gitignore",
    "index.search_log": "log searches and commands for `repomap stats`",
    "index.history": "read the git history as records (`search-commits`); false on huge histories",
    "embed.model": "the embedding model (the one bundled)",
    "embed.vector_store": "where vectors live: sqlite (the index) or milvus:PATH.db|URI",
    "scope.mode": "fixed: one index; git: one per branch; env: one per $REPOMAP_SCOPE",
    "scope.name": "the scope of the fixed mode (and of env without $REPOMAP_SCOPE)",
    "scope.ttl_days": "`repomap prune` lists branch scopes not indexed for this many days",
    "watch.debounce_ms": "`repomap watch`: wait for this many quiet milliseconds",
    "serve.host": "`repomap serve`: the address to bind (loopback by default)",
    "serve.port": "`repomap serve`: the port",
    "serve.rate_limit": "`repomap serve`: requests per client per window",
    "serve.rate_limit_window": "`repomap serve`: the rate limit's window, in seconds",
    "serve.cors_origins": "`repomap serve`: origins allowed by CORS (none by default)",
    "serve.max_body_bytes": "`repomap serve`: the largest request body accepted",
}


class Settings(NamedTuple):
    root: Path
    db_path: Path
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    workers: int = 2
    search_log: bool = True
    redact: bool = True  # credentials in text elements become [REDACTED]
    scope: str = DEFAULT_SCOPE  # the branch scope this index is for ("main" in fixed mode)
    scope_mode: str = "fixed"
    history: bool = True  # read HEAD's commits into the index (index.history)
    # max_file_size was given (a flag, the environment, the config file), not the default: the
    # index keeps it, and a later run given none (a query's refresh, `repomap watch`) uses it
    max_file_size_set: bool = False
    # Files to read again though their size and mtime are as indexed: their bytes were found
    # to differ (an edit of the same length whose mtime was put back, as `cp -p` or `rsync -t`
    # leave it; `show` refused the file until `--force`).
    reread: frozenset[str] = frozenset()

    @property
    def index_skipped(self) -> frozenset[Path]:
        """What no walk or watch looks at: the index's folder when it lies inside ROOT (`--db
        ROOT/build/x.db`). Not when it is ROOT itself or a folder above it (`--db ROOT/x.db`,
        `--db ../x.db`): the watcher then dropped every event of the tree. In ROOT itself, the
        index's search logs (`x-search-log.jsonl`, search/log.py), which a walk took as data:
        every search wrote one, and every next question re-indexed it first."""
        folder, root = self.db_path.parent.resolve(), self.root.resolve()
        if folder != root and folder.is_relative_to(root):
            return frozenset({folder})
        if folder == root:  # the search log beside the index is JSON lines: no data file
            stem = self.db_path.stem
            return frozenset(folder / f"{stem}-search-log{n}.jsonl" for n in ("", ".1"))
        return frozenset()

    @property
    def uses_default_db(self) -> bool:
        """The index is repomap's own (under ROOT/.repomap/), not a file named by --db."""
        return self.db_path == current_db_path(self.root) or self.db_path.is_relative_to(
            self.root / INDEX_DIR
        )


def default_db_path(root: Path) -> Path:
    return root / INDEX_DIR / "index.db"


# --- the config file -------------------------------------------------------------------------


def config_file(root: Path) -> Path | None:
    """ROOT/repomap.toml, else ROOT/pyproject.toml when it has a [tool.repomap] table."""
    own = root / CONFIG_FILE
    if own.is_file():
        return own
    pyproject = root / PYPROJECT
    try:
        text = pyproject.read_bytes()
    except OSError:
        return None
    return pyproject if b"[tool.repomap" in text else None  # parsed only when it may be set


_FILE_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}


def file_values(root: Path) -> tuple[Path | None, dict[str, Any]]:
    """The settings the config file sets, by dotted name, checked; ConfigError when it cannot
    be read or sets what repomap does not know."""
    path = config_file(root)
    if path is None:
        return None, {}
    try:
        info = path.stat()
        key = (str(path), info.st_size, info.st_mtime_ns)
        if key in _FILE_CACHE:
            return path, _FILE_CACHE[key]
        with open(path, "rb") as file:
            data = toml_module().load(file)
    except OSError as error:
        raise ConfigError(f"cannot read {path} ({error.strerror or error})") from None
    except ValueError as error:  # tomllib.TOMLDecodeError
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    if path.name == PYPROJECT:
        data = data.get("tool", {}).get("repomap", {})
    values = {name: _checked(path, name, value) for name, value in _flatten(data).items()}
    _FILE_CACHE[key] = values
    return path, values


def toml_module() -> Any:
    """tomllib (3.11+), or tomli, its backport, on 3.10; imported when a TOML file is read (a
    run that reads none does not pay its ~1.3 ms)."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # type: ignore[import-not-found, unused-ignore]

    return tomli


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name not in SETTINGS:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _checked(path: Path, name: str, value: Any) -> Any:
    spec = SETTINGS.get(name)
    if spec is None:
        known = ", ".join(sorted(SETTINGS))
        raise ConfigError(f"{path}: unknown setting {name!r} (known: {known})")
    ok = (isinstance(value, spec.kind) and not (spec.kind is int and isinstance(value, bool))) or (
        spec.kind is float and isinstance(value, int) and not isinstance(value, bool)
    )
    if spec.kind is list:
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    if not ok:
        raise ConfigError(f"{path}: {name} must be {_kind_name(spec.kind)}, not {value!r}")
    if spec.choices and value not in spec.choices:
        raise ConfigError(f"{path}: {name} must be one of {', '.join(spec.choices)}, not {value!r}")
    if spec.kind in (int, float) and value <= 0 and name != "serve.rate_limit":
        raise ConfigError(f"{path}: {name} must be positive, not {value!r}")
    return float(value) if spec.kind is float else value


def _kind_name(kind: type) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false",
            str: "a string", list: "a list of strings"}[kind]  # fmt: skip


def _from_env(name: str, spec: Spec, text: str) -> Any:
    origin = f"environment variable {spec.env}"
    parsers: dict[type, Callable[[str], Any]] = {
        bool: lambda t: t.strip().lower() not in OFF_VALUES,
        int: int,
        float: float,
        str: str,
    }
    parse = parsers[spec.kind]
    try:
        value = parse(text)
    except ValueError:
        raise ConfigError(f"{origin} must be {_kind_name(spec.kind)}, not {text!r}") from None
    if spec.choices and value not in spec.choices:
        raise ConfigError(f"{origin} must be one of {', '.join(spec.choices)}, not {text!r}")
    return value


def options(root: Path, flags: Mapping[str, Any] | None = None) -> dict[str, Setting]:
    """Every setting's value and where it came from: flag > environment > file > default."""
    path, values = file_values(root)
    result = {}
    for name, spec in SETTINGS.items():
        flag = (flags or {}).get(name)
        env = os.environ.get(spec.env) if spec.env else None
        if flag is not None:
            result[name] = Setting(flag, "flag")
        elif env:
            result[name] = Setting(_from_env(name, spec, env), f"env {spec.env}")
        elif name in values:
            result[name] = Setting(values[name], str(path))
        else:
            result[name] = Setting(spec.default, "default")
    return result


def setting(root: Path, name: str, flag: Any = None) -> Any:
    """One setting's value for ROOT (flag > environment > config file > default)."""
    return options(root, {name: flag})[name].value


def init_text() -> str:
    """A commented repomap.toml with every setting at its default (`repomap init`)."""
    import json

    lines = ["# repomap's settings (flag > environment variable > this file > default).", ""]
    section = None
    for name, spec in SETTINGS.items():
        table, key = name.split(".", 1)
        if table != section:
            lines += ([""] if section else []) + [f"[{table}]"]
            section = table
        env = f" (env {spec.env})" if spec.env else ""
        lines.append(f"# {HELP[name]}{env}")
        lines.append(f"{key} = {json.dumps(spec.default)}")
    return "\n".join(lines) + "\n"


# --- scopes ----------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize_scope(name: str) -> str:
    """A folder name for a scope: a branch's name as it is when it is made of letters, digits,
    `.`, `_` and `-` (not starting with `.`), else those kept, the rest as `-`, and a short hash
    of the whole name so that `feature/x` and `feature-x` stay two folders."""
    if not name:
        raise BadArgument("a scope name cannot be empty")
    safe = _UNSAFE.sub("-", name).strip("-.")[:64] or "scope"
    if safe == name:
        return name
    import hashlib  # here: the CLI's start-up never needs it

    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{safe}-{digest}"


def scopes_dir(root: Path) -> Path:
    return root / INDEX_DIR / SCOPES_DIR


def scope_db_path(root: Path, scope: str, mode: str = "fixed") -> Path:
    """The index of `scope` under ROOT: ROOT/.repomap/index.db in the fixed mode (one index),
    else ROOT/.repomap/scopes/<sanitized scope>/index.db."""
    if mode == "fixed":
        return default_db_path(root)
    return scopes_dir(root) / sanitize_scope(scope) / "index.db"


def tree_of_index(db_path: Path) -> Path | None:
    """The tree whose own index `db_path` is (ROOT/.repomap/index.db, or a branch scope's
    ROOT/.repomap/scopes/NAME/index.db), else None (an index kept elsewhere with --db)."""
    folder = db_path.parent
    if folder.parent.name == SCOPES_DIR and folder.parent.parent.name == INDEX_DIR:
        return folder.parent.parent.parent
    return folder.parent if folder.name == INDEX_DIR else None


def git_dir(root: Path) -> Path | None:
    """The repository's git folder for ROOT (ROOT or a folder above; a worktree's `.git` file
    followed), or None outside a repository."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else (folder / target).resolve()
            return None
    return None


def git_branch(root: Path) -> str | None:
    """The branch checked out at ROOT (read from .git/HEAD, no subprocess), `detached-<sha>`
    for a detached HEAD, None outside a repository."""
    folder = git_dir(root)
    if folder is None:
        return None
    try:
        head = (folder / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if head.startswith("ref: "):
        return head.removeprefix("ref: ").removeprefix("refs/heads/")
    return f"detached-{head[:12]}"


def current_scope(root: Path, mode: str, name: str) -> str:
    """The scope a command at ROOT works in: `name` in the fixed mode; the branch checked out in
    the git mode (`name` outside a repository); REPOMAP_SCOPE, else `name`, in the env mode."""
    if mode == "git":
        return git_branch(root) or name
    if mode == "env":
        return os.environ.get("REPOMAP_SCOPE") or name
    return name


def current_db_path(root: Path) -> Path:
    """The index a command at ROOT uses when no --db names one: its scope's."""
    found = options(root)
    mode = found["scope.mode"].value
    if mode == "fixed":
        return default_db_path(root)
    return scope_db_path(root, current_scope(root, mode, found["scope.name"].value), mode)


def db_path_for_scope(root: Path, scope: str | None = None) -> Path:
    """The index of `scope` (None: the current one) under ROOT, for a request that names one
    (`repomap serve`'s `scope` field); BadArgument when the fixed mode has no such scope."""
    found = options(root)
    mode, fixed_name = found["scope.mode"].value, found["scope.name"].value
    if scope is None:
        return current_db_path(root)
    if mode == "fixed" and scope != fixed_name:
        raise BadArgument(
            f"no scope {scope!r}: scope.mode is fixed, with the one scope {fixed_name!r}"
        )
    return scope_db_path(root, scope, mode)


# --- resolving -------------------------------------------------------------------------------


def indexed_ancestor(start: Path) -> Path:
    """The nearest folder from `start` up that holds an index (`.repomap/index.db`, or branch
    scopes in `.repomap/scopes/`), else `start`. The search stops at a repository's top (a
    folder with `.git`), so an index in a folder above a repository is never updated from
    inside it."""
    for folder in (start, *start.parents):
        # os.path, not Path: a folder this user may not enter answers False, not PermissionError
        if os.path.isfile(os.path.join(folder, INDEX_DIR, "index.db")) or os.path.isdir(
            os.path.join(folder, INDEX_DIR, SCOPES_DIR)
        ):
            return folder
        if os.path.exists(os.path.join(folder, ".git")):
            break
    return start


def resolve(
    root: str | Path | None = None,
    db: str | Path | None = None,
    max_file_size: int | None = None,
    workers: int | None = None,
    redact: bool | None = None,
    find_index: bool = False,
) -> Settings:
    """Settings from explicit arguments, then REPOMAP_* environment variables, then the config
    file, then defaults.

    `find_index`: for the commands that only read an index, a missing ROOT is the nearest
    indexed folder upward (indexed_ancestor) rather than the current one. Commands that write
    (`index`, `migrate`), serve (`mcp`) or read files by path never look upward: run inside a
    new project below an indexed home folder, they must not take on the whole home folder.
    """
    root_value = root or os.environ.get("REPOMAP_ROOT")
    db_value = db or os.environ.get("REPOMAP_DB")
    if root_value:
        root_path = Path(root_value).resolve()
    elif db_value:
        root_path = Path.cwd().resolve()
    elif find_index:  # like git: a query run in a subfolder uses the index around it
        root_path = indexed_ancestor(Path.cwd().resolve())
    else:
        root_path = Path.cwd().resolve()
    found = options(
        root_path,
        {"index.max_file_size": max_file_size, "index.workers": workers, "index.redact": redact},
    )
    mode = found["scope.mode"].value
    scope = current_scope(root_path, mode, found["scope.name"].value)
    if db_value:
        db_path = Path(db_value).resolve()
    elif mode == "fixed":
        db_path = default_db_path(root_path)  # as before branch scopes: one index
    else:
        db_path = scope_db_path(root_path, scope, mode)
    size = found["index.max_file_size"].value
    count = found["index.workers"].value
    if found["index.workers"].origin == "default":
        count = min(2, os.cpu_count() or 1)
    return Settings(
        root_path,
        db_path,
        size,
        max(1, count),
        found["index.search_log"].value,
        found["index.redact"].value,
        scope,
        mode,
        found["index.history"].value,
        found["index.max_file_size"].origin != "default",
    )


def ann_threshold() -> int:
    """Chunks in a scope from which the local vector store builds and uses an HNSW sidecar."""
    return _whole_number("REPOMAP_ANN_THRESHOLD", DEFAULT_ANN_THRESHOLD, 1, "chunks, at least 1")


def literal_index_bytes() -> int:
    """Bytes of code from which an index keeps a trigram index for literal search."""
    return _whole_number(
        "REPOMAP_LITERAL_INDEX_BYTES", DEFAULT_LITERAL_INDEX_BYTES, 0, "bytes, 0 or more"
    )


def _whole_number(variable: str, default: int, least: int, what: str) -> int:
    """The environment variable's whole number (`_` allowed between digits), its default when
    unset or blank; BadArgument when it is no number or below `least`."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    try:
        number = int(value.replace("_", ""))
    except ValueError:
        number = least - 1
    if number < least:
        raise BadArgument(f"{variable} must be a whole number of {what}, not {value!r}")
    return number
