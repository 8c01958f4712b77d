"""The one connection type (`Store`), opened read-only or as the writer, with its PRAGMAs.

Every reader and writer in repomap holds a `Store`: `reading(path)` for one query,
`KeptReader` for a long-running server, `open_index(path)` for `repomap index`. None of them
imports sqlite-utils (see migrate.py).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

from repomap.errors import (
    BadArgument,
    CorruptIndex,
    IndexNotFound,
    IndexOutdated,
    NotAnIndex,
    RepomapError,
    SchemaTooNew,
)
from repomap.store.migrate import SCHEMA_VERSION, migrate, pending

BUSY_TIMEOUT_MS = 30_000
T = TypeVar("T")
Parameters = Sequence[Any] | Mapping[str, Any]  # what sqlite3 binds: by position or by name
NOT_UNICODE = "the text holds a lone surrogate (it is not valid Unicode); pass UTF-8 text"


class Store:
    """An open index: its SQLite connection (autocommit; transactions are explicit) and path.

    A plain class, not a dataclass: `dataclasses` imports `inspect`, ~4 ms of every CLI search.
    """

    __slots__ = ("conn", "path", "state", "_kept")

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        state: object = None,
        kept: dict[str, Any] | None = None,
    ) -> None:
        self.conn = conn
        self.path = path
        # Equal for two snapshots of the same index content through the same KeptReader; None
        # for a connection opened for one query. Lets a server keep data prepared from a state.
        self.state = state
        self._kept = kept  # a KeptReader's values for this content (per_content)

    def per_content(self, what: str, load: Callable[[], T]) -> T:
        """`load()`, kept by a long-running reader (KeptReader) for its next snapshots of the
        same index content, under the name `what`; loaded each time on a one-query connection.
        Only for what the database alone decides: the content changes with each commit."""
        if self._kept is None:
            return load()
        if what not in self._kept:
            self._kept[what] = load()
        return cast(T, self._kept[what])

    @contextmanager
    def atomic(self) -> Iterator[Store]:
        """One transaction (a savepoint when nested): all of it lands, or none of it."""
        if self.conn.in_transaction:
            self.conn.execute("SAVEPOINT repomap_atomic")
            try:
                yield self
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK TO SAVEPOINT repomap_atomic")
                    self.conn.execute("RELEASE SAVEPOINT repomap_atomic")
                raise
            self.conn.execute("RELEASE SAVEPOINT repomap_atomic")
            return
        self.conn.execute("BEGIN")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def scalar(self, sql: str, params: Parameters = ()) -> Any:
        """The first column of the first row `sql` returns, or None when it returns no row."""
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self.conn.close()


def _connect(path: Path, readonly: bool, immutable: bool = False) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + ("?mode=ro" if readonly else "")
    if immutable:
        uri += "&immutable=1"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def schema_version(conn: sqlite3.Connection, path: Path) -> int:
    """user_version of an index, after checking the file is a SQLite database repomap made."""
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        tables = {
            name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    except sqlite3.DatabaseError as error:
        if not has_sqlite_header(path):  # `repomap index` leaves a file it cannot know alone
            raise CorruptIndex(
                f"{path} is not a SQLite database ({error}); if it was a repomap index, delete "
                "it and run `repomap index`; otherwise pass another --db"
            ) from None
        raise CorruptIndex(
            f"{path} is not a readable SQLite database ({error}); run `repomap index --force` to rebuild it"
        ) from None
    ours = "_sqlite_migrations" in tables and "files" in tables
    if (tables and not ours) or (0 < version < 4):
        raise NotAnIndex(
            f"{path} is a SQLite database that repomap did not create; pass another --db"
        )
    return version


def open_index(path: Path, *, readonly: bool = False, migrate_to: int | None = None) -> Store:
    """Open (and, unless read-only, create or migrate) the index at `path`."""
    if readonly:
        return Store(_open_readonly(path), path)
    prepare_folder(path)
    try:
        conn = _connect(path, readonly)
    except sqlite3.Error as error:
        raise CorruptIndex(f"cannot open {path}: {error}") from None
    try:
        version = schema_version(conn, path)
        _refuse_newer(version, path)
        if version == 0:
            # Settable only before the first table: lets a run hand back the pages an FTS5
            # 'optimize' frees (Writer.release_free_pages) instead of keeping them in the file.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            # A new index gets its schema before WAL mode: in WAL every schema step would stay
            # in the log (~270 KB of frames for v8) until a checkpoint copies it over again.
            migrate(conn, migrate_to)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version != 0 and (version != SCHEMA_VERSION or migrate_to is not None or pending(conn)):
            migrate(conn, migrate_to)  # a current index skips this, and sqlite-utils' import
        return Store(conn, path)
    except sqlite3.DatabaseError as error:  # a malformed page past the schema (the ledger...)
        conn.close()
        raise CorruptIndex(
            f"the index at {path} is damaged ({error}); run `repomap index` to rebuild it"
        ) from None
    except BaseException:
        conn.close()
        raise


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"{path} has schema v{version}, newer than this repomap (v{SCHEMA_VERSION}); upgrade repomap"
        )


def _open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to a current index, checked like open_index."""
    if not path.exists():
        raise IndexNotFound(f"no index at {path}; run `repomap index` first")
    try:
        conn = _connect(path, True, immutable=_on_read_only_media(path))
    except sqlite3.Error as error:
        raise CorruptIndex(f"cannot open {path}: {error}") from None
    try:
        version = schema_version(conn, path)
        _refuse_newer(version, path)
        if version < SCHEMA_VERSION:
            raise IndexOutdated(
                f"{path} has schema v{version} (current v{SCHEMA_VERSION}); run `repomap index` to upgrade it"
            )
        # One read transaction for the connection's life: every query through it sees the same
        # snapshot. In autocommit, `repomap index` could commit a batch between two statements
        # of one search, whose ids then named rows that were gone or replaced (KeyError).
        conn.execute("BEGIN")
        return conn
    except BaseException:
        conn.close()
        raise


def _on_read_only_media(path: Path) -> bool:
    """A WAL index in a folder nothing can be written to (a read-only mount, an image): SQLite
    cannot create the -shm file a WAL reader needs there and refused to open it ("unable to open
    database file", reported as a damaged index). It is opened immutable instead, which is safe
    for the same reason: no writer can work where no file can be created."""
    return not os.access(path.parent, os.W_OK) and not path.with_name(path.name + "-shm").exists()


def prepare_folder(path: Path) -> None:
    """Create the index's folder; the default `.repomap/` gets a .gitignore of its own."""
    folder = path.parent
    if folder.name == ".repomap" and not folder.exists():
        folder.mkdir(parents=True)
        (folder / ".gitignore").write_text("# repomap's index; never commit it\n*\n")
    folder.mkdir(parents=True, exist_ok=True)


SQLITE_HEADER = b"SQLite format 3\x00"


def has_sqlite_header(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(16) == SQLITE_HEADER
    except OSError:
        return False


def move_aside(path: Path) -> Path:
    """Rename a broken index (and its -wal/-shm) out of the way; nothing is deleted."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(target.with_name(target.name + suffix))
    return target


@contextmanager
def write_errors(path: Path) -> Iterator[None]:
    """SQLite's write failures as errors a user can act on; the open transaction rolls back."""
    try:
        yield
    except sqlite3.OperationalError as error:
        message = str(error)
        if "readonly" in message or "read-only" in message:
            raise RepomapError(
                f"cannot write the index at {path}: the location is read-only; pass --db with a writable location"
            ) from None
        if "full" in message:
            raise RepomapError(
                f"the disk holding {path} is full; the index keeps what was written before; free space and run `repomap index` again"
            ) from None
        raise RepomapError(
            f"writing the index at {path} failed ({message}); the index keeps what was written before"
        ) from None
    except sqlite3.DatabaseError as error:
        raise CorruptIndex(
            f"the index at {path} is damaged ({error}); run `repomap index` to rebuild it"
        ) from None


@contextmanager
def reading(path: Path) -> Iterator[Store]:
    """A read-only index for one query, always closed; an SQLite error met while reading
    becomes CorruptIndex, text SQLite cannot bind a BadArgument."""
    store = Store(_open_readonly(path), path)
    try:
        yield store
    except sqlite3.DatabaseError as error:
        raise _read_failed(path, error) from None
    except UnicodeEncodeError:  # a lone surrogate cannot be bound as SQLite text
        raise BadArgument(NOT_UNICODE) from None
    finally:
        store.close()


@contextmanager
def writing(path: Path, *, migrate_to: int | None = None) -> Iterator[Store]:
    """open_index() as a context manager that always closes the connection."""
    store = open_index(path, migrate_to=migrate_to)
    try:
        yield store
    finally:
        store.close()


def _read_failed(path: Path, error: sqlite3.DatabaseError) -> CorruptIndex:
    return CorruptIndex(
        f"reading {path} failed ({error}); delete it and run `repomap index` to rebuild it"
    )


class KeptReader:
    """One read-only connection kept across queries, each `snapshot()` in its own read
    transaction: what a long-running reader (the MCP server's event loop) uses instead of
    opening the index per query, which costs ~2 ms (the schema check, an empty page cache).

    The file's identity is checked each time, so an index rebuilt in a new file (a corrupt one
    moved aside) is reopened; between snapshots no transaction is open, so the writer's WAL
    checkpoints are never held back. Use it from one thread only.
    """

    _serials = iter(range(1, 1 << 62))  # one per reader: ids of dead objects are reused

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._serial = next(KeptReader._serials)
        self._generation = 0  # bumped whenever the snapshot may show other content
        self._data_version: int | None = None
        self._kept: dict[str, Any] = {}  # Store.per_content's values for this generation

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        try:
            info = self.path.stat()
        except OSError:
            self.close()
            raise IndexNotFound(f"no index at {self.path}; run `repomap index` first") from None
        identity = (info.st_dev, info.st_ino)
        if self._conn is None or identity != self._identity:
            self.close()
            self._conn = _open_readonly(self.path)  # begins the first read transaction
            self._identity = identity
        else:
            self._conn.execute("BEGIN")
        try:
            # Changes whenever another connection committed since this one last asked (SQLite's
            # own counter; it opens the read transaction, so it describes this snapshot).
            data_version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            if data_version != self._data_version or self._generation == 0:
                self._generation += 1
                self._data_version = data_version
                self._kept = {}
            yield Store(self._conn, self.path, (self._serial, self._generation), self._kept)
        except sqlite3.DatabaseError as error:
            self.close()
            raise _read_failed(self.path, error) from None
        except UnicodeEncodeError:  # a lone surrogate cannot be bound as SQLite text
            raise BadArgument(NOT_UNICODE) from None
        finally:
            if self._conn is not None and self._conn.in_transaction:
                self._conn.execute("COMMIT")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._data_version = None  # a new connection's counter starts anew


SQLITE_MAX_PARAMETERS = 900  # per statement: under SQLite's old default limit of 999


def chunks(items: list[T], size: int = SQLITE_MAX_PARAMETERS) -> Iterator[list[T]]:
    """`items` in slices of at most `size`, for `IN (?, ?, ...)` lists SQLite can bind."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
