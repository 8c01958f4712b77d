"""A running `repomap serve` answers the CLI's `repomap search` for the index it serves.

A search by meaning from a fresh process pays the model's load and the vectors' first decode
(~0.5 s on Django) before a ~20 ms search; a server has both in memory. So `repomap serve`,
when it serves one root on loopback without a token, leaves a note beside each index it reads
(`index.db.serve.json`: its pid and URL) and removes it when it stops; `repomap search` finds
the note, checks that the process is alive, and asks the server over HTTP. Anything wrong on
that path (no note, a dead pid, a refused connection, a timeout, any status but 200) and the
CLI answers in process, as if there were no server: same results, same errors.

Only the standard library here: the CLI imports this module on its fast path.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DISABLE_ENV = "REPOMAP_NO_SERVER"  # set (to anything but "") to never ask a server
TIMEOUT_SECONDS = 5.0


def note_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".serve.json")


@contextlib.contextmanager
def announced(db_paths: Sequence[Path], url: str) -> Iterator[None]:
    """Leave the notes while the server runs; remove those still ours when it stops."""
    body = json.dumps({"pid": os.getpid(), "url": url})
    written: list[Path] = []
    for db_path in db_paths:
        note = note_path(db_path)
        temporary = note.with_name(f"{note.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(body, encoding="utf-8")
            os.replace(temporary, note)
            written.append(note)
        except OSError:  # a read-only folder: the CLI just answers in process
            temporary.unlink(missing_ok=True)
    try:
        yield
    finally:
        for note in written:
            if _read(note).get("pid") == os.getpid():  # not a later server's
                note.unlink(missing_ok=True)


def server_for(db_path: Path) -> str | None:
    """The URL of a live server announced for this index, or None."""
    if os.environ.get(DISABLE_ENV):
        return None
    found = _read(note_path(db_path))
    pid, url = found.get("pid"), found.get("url")
    if not isinstance(pid, int) or not isinstance(url, str) or not _alive(pid):
        return None
    return url


def ask(url: str, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """POST `body` as JSON to the server's `path`; its JSON answer on 200, else None."""
    import http.client  # only when a server is there to ask: ~20 ms of every CLI call else

    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or not parts.port:
        return None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT_SECONDS)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            return None
        answer = json.loads(data)
    except (OSError, http.client.HTTPException, ValueError):
        return None  # refused, reset, timed out, or not our server: answer in process
    finally:
        connection.close()
    return answer if isinstance(answer, dict) else None


def _read(note: Path) -> dict[str, Any]:
    try:
        found = json.loads(note.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's: not a server we may ask
        return False
    return True
