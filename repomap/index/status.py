"""`repomap status` and `repomap doctor`: what an index holds, and whether it is healthy.

status() reads one index read-only (counts, the model and its coverage, the last run, the files
changed since, the size of each table) beside the settings and where they came from. doctor()
runs each check of the issue's list and says PASS, WARN or FAIL with the fix for each: the
database opens and passes SQLite's quick check, its schema version is known, the FTS indexes
agree with their content, the embedding model is installed with its pinned hash, the index
folder is writable, git is available, the ignore files and the config file parse, and the disk
has room.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from repomap import config, store
from repomap.config import Settings
from repomap.errors import RepomapError
from repomap.store.health import fts_problems, quick_check, table_sizes

EMBEDDED_SQL = """SELECT count(*) FROM vectors WHERE scope = (SELECT id FROM vector_scopes
WHERE name = 'main')"""
INDEXED_LINES_SQL = """SELECT (SELECT coalesce(sum(line_count), 0) FROM files)
    + (SELECT coalesce(sum(line_count), 0) FROM doc_files)"""
LOW_DISK_BYTES = 200 * 1024 * 1024  # FAIL below this; WARN below twice the index's size


@dataclass(frozen=True, slots=True)
class Status:
    root: str
    db_path: str
    exists: bool
    schema_version: int | None
    scope: str
    scope_mode: str
    files: int = 0
    docs: int = 0
    symbols: int = 0
    text_rows: int = 0
    chunks: int = 0
    embedded: int = 0
    embedded_share: float = 0.0
    model_id: str | None = None
    vector_store: str = "sqlite"
    vector_store_problem: str | None = None  # another store (Milvus) that could not be asked
    indexed_at: str | None = None
    index_seconds: float | None = None
    changed_since: int = 0
    changed_files: list[str] = field(default_factory=list)
    # made by another repomap (or redaction setting): name -> [the index's, this one's]; the
    # next index re-reads every file
    outdated: dict[str, list[str | None]] = field(default_factory=dict)
    db_bytes: int = 0
    table_bytes: dict[str, int] = field(default_factory=dict)
    indexed_lines: int = 0  # code and docs together: the database's budget is per 10k of them
    literal_index: bool = True  # a trigram index for literal search kept (store/literal.py)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def embedded_vectors(db: store.Store, model_id: str | None) -> tuple[int, str | None]:
    """How many chunks have a vector, and why that is unknown when it is: counted in the
    database, or asked of the store the index names (Milvus keeps its vectors apart: the
    database's count was 0 for a fully embedded index), which may refuse (milvus-lite open in
    another process)."""
    named = store.get_meta(db, store.VECTOR_STORE_META) or "sqlite"
    if named == "sqlite" or model_id is None:
        return db.scalar(EMBEDDED_SQL) or 0, None
    from repomap.index import embedding

    try:
        vectors = embedding.vector_store(db, model_id)
        return embedding.coverage_count(db, vectors), None
    except RepomapError as refused:
        return 0, str(refused)


def status(settings: Settings) -> Status:
    """What the index at settings.db_path holds (IndexNotFound-free: a missing index is a
    status too, `exists` false)."""
    shown_settings = {
        name: {"value": found.value, "origin": found.origin}
        for name, found in config.options(settings.root).items()
    }
    base: dict[str, Any] = {
        "root": str(settings.root),
        "db_path": str(settings.db_path),
        "scope": settings.scope,
        "scope_mode": settings.scope_mode,
        "settings": shown_settings,
    }
    if not settings.db_path.exists():
        return Status(exists=False, schema_version=None, **base)
    with store.reading(settings.db_path) as db:
        root = store.indexed_root(db, settings.root)  # --db alone: the root it was built for
        base["root"] = str(root)
        kept = store.get_meta(db, store.MAX_FILE_SIZE_META)  # given to `repomap index`
        limit = base["settings"].get("index.max_file_size")
        if kept and kept.isdigit() and limit is not None and limit["origin"] == "default":
            limit.update(value=int(kept), origin="the index (given to `repomap index`)")
        version = db.scalar("PRAGMA user_version")
        chunks = db.scalar("SELECT count(*) FROM chunks") or 0
        model_id = store.embedding_model(db)
        embedded, store_problem = embedded_vectors(db, model_id)
        changed, _total = store.changed_since_indexing(db, root)
        seconds = store.get_meta(db, "index_seconds")
        from repomap.index.pipeline import outdated  # the extractors: only when an index exists

        made_otherwise = {key: list(pair) for key, pair in outdated(db, settings).items()}
        return Status(
            exists=True,
            schema_version=version,
            files=db.scalar("SELECT count(*) FROM files") or 0,
            docs=db.scalar("SELECT count(*) FROM doc_files") or 0,
            symbols=db.scalar("SELECT count(*) FROM symbols") or 0,
            text_rows=db.scalar("SELECT count(*) FROM code_text") or 0,
            chunks=chunks,
            embedded=embedded,
            embedded_share=round(embedded / chunks, 4) if chunks else 0.0,
            model_id=model_id,
            vector_store=store.get_meta(db, store.VECTOR_STORE_META) or "sqlite",
            vector_store_problem=store_problem,
            indexed_at=store.get_meta(db, "indexed_at"),
            index_seconds=float(seconds) if seconds else None,
            changed_since=len(changed),
            changed_files=sorted(changed)[:20],
            outdated=made_otherwise,
            literal_index=store.literal_indexed(db),
            db_bytes=sum(
                path.stat().st_size
                for path in (
                    settings.db_path,
                    settings.db_path.with_name(settings.db_path.name + "-wal"),
                )
                if path.exists()
            ),
            table_bytes=table_sizes(db),
            indexed_lines=db.scalar(INDEXED_LINES_SQL) or 0,
            **base,
        )


# --- doctor ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    outcome: str  # PASS | WARN | FAIL
    detail: str
    fix: str = ""


def doctor(settings: Settings) -> list[Check]:
    """Every check, in order; each says PASS, WARN or FAIL and, unless PASS, how to fix it."""
    checks = [_config_check(settings.root)]
    opened = _database_check(settings)
    checks.append(opened)
    if opened.outcome != "FAIL":
        checks.append(_schema_check(settings.db_path))
        checks.append(_fts_check(settings.db_path))
    has_vectors = opened.outcome == "PASS" and _has_vectors(settings.db_path)
    checks.append(_model_check(has_vectors))
    checks.append(_graph_cache_check())
    if has_vectors:
        checks.append(_vector_file_check(settings.db_path))
    checks.append(_writable_check(settings.db_path))
    checks.append(_git_check(settings))
    checks.append(_ignore_check(settings.root))
    checks.append(_disk_check(settings.db_path))
    return checks


def _config_check(root: Path) -> Check:
    try:
        path, values = config.file_values(root)
        config.options(root)
    except config.ConfigError as error:
        return Check("config file", "FAIL", str(error), "correct the setting (see `repomap init`)")
    if path is None:
        return Check("config file", "PASS", "no repomap.toml or [tool.repomap]: defaults")
    return Check("config file", "PASS", f"{path}: {len(values)} settings")


def _database_check(settings: Settings) -> Check:
    path = settings.db_path
    if not path.exists():
        return Check("database", "FAIL", f"no index at {path}", f"repomap index {settings.root}")
    # One finding can hold many lines (`*** in database main ***` then one per bad page):
    # the first three, and how many more, keep the check on one line.
    problems = [line for found in quick_check(path) for line in found.splitlines() if line]
    if problems:
        shown = "; ".join(problems[:3])
        if len(problems) > 3:
            shown += f"; ... ({len(problems) - 3} more)"
        return Check(
            "database", "FAIL", f"{path} fails SQLite's quick check: {shown}",
            f"repomap clean && repomap index {settings.root}",
        )  # fmt: skip
    return Check("database", "PASS", f"{path} opens and passes SQLite's quick check")


def _schema_check(path: Path) -> Check:
    try:
        with store.reading(path) as db:
            version = db.scalar("PRAGMA user_version")
    except RepomapError as error:
        outdated = "upgrade it" in str(error)
        return Check(
            "schema version", "WARN" if outdated else "FAIL", str(error),
            "repomap index" if outdated else "pip install --upgrade repomap",
        )  # fmt: skip
    return Check("schema version", "PASS", f"v{version}, the version this repomap writes")


def _fts_check(path: Path) -> Check:
    problems = fts_problems(path)
    if problems is None:
        return Check(
            "FTS consistency", "WARN", "not checked: the index cannot be opened for writing",
            "make the index folder writable to run this check",
        )  # fmt: skip
    if problems:
        return Check(
            "FTS consistency", "FAIL", "; ".join(problems[:3]),
            "repomap clean && repomap index",
        )  # fmt: skip
    return Check("FTS consistency", "PASS", "every text index agrees with its rows")


def _has_vectors(path: Path) -> bool:
    try:
        with store.reading(path) as db:
            return store.has_vectors(db)
    except RepomapError:
        return False


def _model_check(has_vectors: bool) -> Check:
    from repomap.embed import model

    try:
        path = model.installed_model_path()
        model.verify(path, model.MODEL_SHA256, "model", model.REINSTALL)
        model.verify(model.TOKENIZER_PATH, model.TOKENIZER_SHA256, "tokenizer",
                     model.REINSTALL_REPOMAP)  # fmt: skip
    except model.ModelUnavailable as error:
        fix = str(error).rsplit("run `", 1)[-1].rstrip("`")
        return Check("embedding model", "FAIL" if has_vectors else "WARN", str(error), fix)
    return Check("embedding model", "PASS", f"{path} has the pinned sha256")


def _graph_cache_check() -> Check:
    """The model's folded graph in the user's cache (embed/graph_cache.py): derived, so a
    damaged one is a warning; a search never uses one that fails its load-time checks."""
    import onnxruntime  # type: ignore[import-untyped]

    from repomap.embed import graph_cache
    from repomap.embed.model import MODEL_SHA256

    folder = graph_cache.folder_for(MODEL_SHA256, onnxruntime.__version__)
    if folder is None:
        return Check("model cache", "PASS", "off (REPOMAP_CACHE_DIR is empty)")
    if not folder.exists():
        return Check(
            "model cache", "PASS", f"{folder} not made yet (the next embedding run makes it)"
        )
    if graph_cache.is_whole(folder, MODEL_SHA256, onnxruntime.__version__):
        return Check("model cache", "PASS", f"{folder} holds the folded graph, whole")
    return Check(
        "model cache", "WARN",
        f"{folder} is damaged; searches load the model from its package instead (slower)",
        f"rm -r {folder} (the next embedding run makes it again)",
    )  # fmt: skip


def _vector_file_check(db_path: Path) -> Check:
    """The vector file beside the index (store/vector_file.py): a derived copy a CLI search
    reads instead of decoding every vector; one that is stale or damaged is never used."""
    from repomap.index.embedding import SCOPE
    from repomap.store import vector_file
    from repomap.store.vectors import LocalVectorStore

    with store.reading(db_path) as db:
        model_id = store.embedding_model(db) or ""
        state = LocalVectorStore(db, model_id).file_state(SCOPE)
    path = vector_file.path_for(db_path, SCOPE)
    if state in ("current", "none"):
        detail = f"{path} matches the vectors" if state == "current" else "not needed"
        return Check("vector file", "PASS", detail)
    detail = {
        "missing": f"{path} is missing: a search decodes the vectors from the index (slower) "
        "and writes it",
        "stale": f"{path} is stale or damaged: it is not used; a search decodes the vectors "
        "from the index (slower) and writes it again",
        "unused": f"{path} is no longer needed",
    }[state]
    return Check("vector file", "WARN", detail, "repomap index")


def _writable_check(db_path: Path) -> Check:
    folder = db_path.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if os.access(existing, os.W_OK | os.X_OK) and (
        not db_path.exists() or os.access(db_path, os.W_OK)
    ):
        return Check("index folder writable", "PASS", f"{folder} is writable")
    return Check(
        "index folder writable", "WARN" if db_path.exists() else "FAIL",
        f"{existing if not folder.exists() else folder} is read-only: answers come from the "
        "index as it is, but it cannot be updated",
        f"chmod u+w {folder}, or pass --db with a writable location",
    )  # fmt: skip


def _git_check(settings: Settings) -> Check:
    git = shutil.which("git")
    needed = settings.scope_mode == "git"
    if git is None:
        return Check(
            "git", "FAIL" if needed else "WARN",
            "git is not on PATH" + (" (scope.mode = git needs it)" if needed else ""),
            "install git",
        )  # fmt: skip
    try:
        version = subprocess.run(
            [git, "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return Check(
            "git", "FAIL" if needed else "WARN", f"git does not run ({error})", "reinstall git"
        )
    where = config.git_branch(settings.root)
    detail = version + (f"; branch {where}" if where else "; ROOT is not in a git repository")
    return Check("git", "PASS", detail)


def _ignore_check(root: Path) -> Check:
    """Every .gitignore and .repomapignore under ROOT (and the config's extra patterns) parse;
    a line that does not is left out of the rules, as git leaves it out."""
    from repomap.index.discover import IGNORE_FILES, invalid_pattern, walk

    problems, count = [], 0
    extra = config.options(root)["index.extra_ignore"]
    sources: list[tuple[str, list[str]]] = [(f"index.extra_ignore ({extra.origin})", extra.value)]
    for folder in walk(root).dirs:
        for name in IGNORE_FILES:
            path = root / folder / name
            if not path.is_file():
                continue
            count += 1
            try:
                lines = path.read_bytes().decode("utf-8").splitlines()
            except UnicodeDecodeError:
                problems.append(f"{path.relative_to(root)}: not UTF-8 text")
                continue
            except OSError as error:
                problems.append(f"{path.relative_to(root)}: {error.strerror}")
                continue
            sources.append((str(path.relative_to(root)), lines))
    for source, lines in sources:
        for number, line in enumerate(lines, 1):
            if (why := invalid_pattern(line)) is not None:
                problems.append(f"{source}:{number}: {why}")
    if problems:
        return Check(
            "ignore files", "FAIL", "; ".join(problems[:3]) + " (left out of the rules)",
            "correct or delete the patterns named",
        )  # fmt: skip
    return Check("ignore files", "PASS", f"{count} ignore files parse")


def _disk_check(db_path: Path) -> Check:
    folder = db_path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    size = db_path.stat().st_size if db_path.exists() else 0
    shown = f"{free / 2**30:.1f} GiB free on the disk of {folder}"
    if free < LOW_DISK_BYTES:
        return Check("free disk", "FAIL", shown, "free disk space")
    if free < 2 * size:
        return Check("free disk", "WARN", shown + " (less than twice the index)", "free disk space")
    return Check("free disk", "PASS", shown)
