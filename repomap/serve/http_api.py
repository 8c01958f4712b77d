"""`repomap serve`: the search API over HTTP (starlette + uvicorn), with MCP at /mcp.

    repomap serve [ROOT ...] [--host 127.0.0.1] [--port 8766] [--watch] [--token T] ...

Every endpoint reads, through the same `Service` the MCP tools use (the same allowlisted roots,
path checks and answers), and answers JSON; the contract is docs/http-api.md:

    POST /api/search     code by what it does (hybrid / lexical / semantic)  {q, topK, mode, ...}
    GET  /api/text       comments, docstrings, strings: hits with lines and highlight offsets
    GET  /api/symbols    definitions by name
    GET  /api/symbol     one definition's source
    GET  /api/map        files with rank and lines, and the dependency edges between the top ones
    GET  /api/file       a file's lines
    GET  /api/outline    a file's (or folder's) symbols and headings
    GET  /api/sources    the file tree
    GET  /api/files      files by name
    GET  /api/status     what is indexed and how fresh (index_status)
    GET  /healthz        the server is up
         /mcp            the MCP tools over streamable HTTP (mcp_server.py's server)

Every /api endpoint takes its parameters as a query string (GET) or a JSON object (POST), the
same names either way; an unknown parameter is an error (`http_params.py`: the parameters and
the error codes). Failures are `{"error": {"code", "message"}}` with the HTTP status of their
code. Before any of this, `http_guard.Guard`
checks the host, origin, rate, token and body size.

Handlers run on the event loop when the index needs no wait (as MCP's `answer` does: a thread
hop costs more than most answers), so one process serves a few hundred searches a second.
With --watch, a thread keeps the indexes up to date (`index/freshness.Refresher`, the watcher
of `repomap mcp`), each re-index (and the embedding of what changed) a niced `repomap index`
child (`serve/reindex.py`); without it nothing is written, and a missing index is
INDEX_UNAVAILABLE.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from repomap import config, errors, languages, store
from repomap.config import Settings
from repomap.errors import BadArgument
from repomap.index.freshness import Refresher
from repomap.search import log as searchlog
from repomap.serve import handoff, page
from repomap.serve.http_guard import Guard, GuardOptions, error_body
from repomap.serve.http_params import (
    STATUS,
    ApiError,
    CommitsParams,
    DataParams,
    FileParams,
    FilesParams,
    MapParams,
    OutlineParams,
    SearchParams,
    SourcesParams,
    StatusParams,
    SymbolParams,
    SymbolsParams,
    TextParams,
    error_code,
    read_params,
)
from repomap.serve.mcp_server import answer, build_server
from repomap.serve.mcp_service import Service
from repomap.serve.reindex import ChildIndexer
from repomap.serve.roots import Root
from repomap.serve.scopes import Scopes

log = logging.getLogger(__name__)

DEFAULT_PORT = 8766
WATCH_SECONDS = 0.25  # --watch: how often each root's watcher is asked for changes
MATCH_OPEN, MATCH_CLOSE = "[MATCH]", "[/MATCH]"

# --- responses ------------------------------------------------------------------------------


def json_response(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, media_type="application/json")


def error_response(code: str, message: str) -> Response:
    return Response(error_body(code, message), STATUS[code], media_type="application/json")


def highlighted(marked: str) -> tuple[str, list[list[int]], str | None]:
    """A snippet without its [MATCH] markers, the [start, end) of each marked part in
    JavaScript string indices (UTF-16 code units), and the first marked text."""
    pieces: list[str] = []
    spans: list[list[int]] = []
    position = 0  # in UTF-16 code units
    first: str | None = None
    rest = marked
    while (start := rest.find(MATCH_OPEN)) >= 0:
        end = rest.find(MATCH_CLOSE, start)
        if end < 0:
            break
        before, inside = rest[:start], rest[start + len(MATCH_OPEN) : end]
        pieces.append(before)
        position += _utf16(before)
        spans.append([position, position + _utf16(inside)])
        pieces.append(inside)
        position += _utf16(inside)
        first = inside if first is None else first
        rest = rest[end + len(MATCH_CLOSE) :]
    pieces.append(rest)
    return "".join(pieces), spans, first


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def match_line(line_number: int, content: str, term: str | None) -> int:
    """The line of the element's first occurrence of `term` (the first highlighted text)."""
    if not term:
        return line_number
    at = content.find(term)
    if at < 0:
        at = content.lower().find(term.lower())
    return line_number + content.count("\n", 0, at) if at > 0 else line_number


# --- the app --------------------------------------------------------------------------------


@dataclass
class Api:
    """The endpoints over `scopes`; `watchers` (with --watch) keep the indexes fresh."""

    scopes: Scopes
    watchers: dict[str, Refresher]

    async def search(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, SearchParams)
        scope, service = self.scopes.resolve(params.scope)
        timings: dict[str, float] = {}
        found = await answer(
            service, service.search_code, params.q, params.mode, params.pathPrefix, params.lang,
            params.kind, params.topK, timings,
        )  # fmt: skip
        if params.modelId is not None:
            from repomap.embed.model import DEFAULT_MAX_TOKENS, model_id_for

            # The model the answer's vectors came from; for an answer in words alone, the one
            # the index's vectors were made with, else the one it would embed with.
            served = (
                found.model_id
                or await answer(service, service.embedding_model)
                or model_id_for(DEFAULT_MAX_TOKENS)
            )
            if params.modelId != served:
                raise ApiError(
                    "EMBEDDING_MODEL_MISMATCH",
                    f"this index's vectors are made by {served}, not {params.modelId}",
                )
        return {
            "q": params.q,
            "scope": scope,
            "mode": found.mode,
            "results": [hit.model_dump() for hit in found.results],
            "truncated": found.truncated,
            "notices": found.notices,
            "meta": {
                "timingsMs": {stage: round(ms, 2) for stage, ms in timings.items()},
                "modelId": found.model_id,
                "coverage": found.coverage,
                "wordMatches": found.word_matches,
                "changedFiles": found.changed_files,
            },
        }

    async def text(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, TextParams)
        scope, service = self.scopes.resolve(params.scope)
        started = time.perf_counter()
        found = await answer(
            service, service.search_text, params.q, params.type, params.topK, params.pathPrefix,
            params.mode, params.lang, params.ignoreCase,
        )  # fmt: skip
        results = []
        for hit in found.results:
            snippet, spans, term = highlighted(hit.snippet)
            record = hit.model_dump()
            record.update(
                snippet=snippet,
                highlights=spans,
                match_line=match_line(hit.line_number, hit.content, term),
            )
            results.append(record)
        return {
            "q": params.q,
            "scope": scope,
            "mode": found.mode,
            "results": results,
            "total": found.total,
            "totalExact": found.total_exact,
            "truncated": found.truncated,
            "notices": found.notices,
            "meta": {"timingsMs": {"total": _ms(started)}},
        }

    async def data(self, request: Request) -> dict[str, Any]:
        """Records of data files (CSV, JSON, TOML, YAML): `repomap search-data`."""
        params = await read_params(request, DataParams)
        scope, service = self.scopes.resolve(params.scope)
        started = time.perf_counter()
        found = await answer(
            service, service.search_data, params.q, params.pathPrefix, params.key, params.field,
            params.ranked, params.topK,
        )  # fmt: skip
        return _records_answer(params.q, scope, found, started)

    async def commits(self, request: Request) -> dict[str, Any]:
        """Commits of HEAD's history: `repomap search-commits`."""
        params = await read_params(request, CommitsParams)
        scope, service = self.scopes.resolve(params.scope)
        started = time.perf_counter()
        found = await answer(
            service, service.search_commits, params.q, params.author, params.since,
            params.until, params.pathPrefix, params.field, params.oldestFirst, params.ranked,
            params.topK,
        )  # fmt: skip
        return _records_answer(params.q, scope, found, started)

    async def symbols(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, SymbolsParams)
        scope, service = self.scopes.resolve(params.scope)
        started = time.perf_counter()
        found = await answer(
            service, service.search_symbols, params.q, params.kind, params.pathPrefix,
            params.topK, params.lang,
        )  # fmt: skip
        return {
            "q": params.q,
            "scope": scope,
            "results": [hit.model_dump() for hit in found.results],
            "truncated": found.truncated,
            "more": found.more,
            "notices": found.notices,
            "meta": {"timingsMs": {"total": _ms(started)}},
        }

    async def symbol(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, SymbolParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(
            service, service.get_symbol_content, params.name, params.file, params.maxLines,
            params.context, params.nth,
        )  # fmt: skip
        return {"scope": scope, **found.model_dump()}

    async def map(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, MapParams)
        scope, service = self.scopes.resolve(params.scope)
        started = time.perf_counter()
        data = await answer(service, self._map, service, params)
        data["scope"] = scope
        data["meta"] = {"timingsMs": {"total": _ms(started)}}
        return data

    def _map(self, service: Any, params: MapParams) -> dict[str, Any]:
        scopes = service.roots.scope(params.pathPrefix)
        notices = service.ready([root for root, _ in scopes])
        files: list[dict[str, Any]] = []
        edges: list[dict[str, Any]] = []
        total = 0
        for root, path_filter in scopes:
            with service.reading(root) as db:
                ids = store.filtered_ids(db, path_filter) if path_filter else None
                out = functools.partial(service.roots.out, root)
                found, linked = page.map_records(db, ids, params.edgeFiles, params.maxEdges, out)
            total += len(found)
            files.extend(found)
            edges.extend(linked)
        if service.roots.multi:
            files.sort(key=lambda file: (-file["rank"], file["path"]))
            edges.sort(key=lambda edge: -edge["weight"])
        shown = files if params.topK is None else files[: params.topK]
        return {
            "files": shown,
            "totalFiles": total,
            "truncated": len(shown) < total,
            "edges": edges[: params.maxEdges],
            "notices": notices,
        }

    async def file(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, FileParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(
            service, service.read_file, params.path, params.start, params.end, params.maxLines
        )
        lines = found.content.splitlines()
        return {
            "scope": scope,
            "path": found.path,
            "language": languages.language_of(found.path) or languages.doc_format(found.path),
            "startLine": found.start_line,
            "endLine": found.end_line,
            "totalLines": found.total_lines,
            "lines": lines,
            "truncated": found.truncated,
            "nextStartLine": found.next_start_line,
            "notices": found.notices,
        }

    async def outline(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, OutlineParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(
            service, service.outline, params.path, params.level, params.topK,
            walks=params.path is None,
        )  # fmt: skip
        return {"scope": scope, **found.model_dump()}

    async def sources(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, SourcesParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(
            service, service.list_sources, params.dir, params.depth, params.pattern, params.topK,
            walks=True,
        )  # fmt: skip
        return {"scope": scope, **found.model_dump()}

    async def files(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, FilesParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(
            service, service.find_files, params.q, params.topK, params.ignoreCase,
            params.pathPrefix, walks=True,
        )  # fmt: skip
        return {"scope": scope, **found.model_dump()}

    async def status(self, request: Request) -> dict[str, Any]:
        params = await read_params(request, StatusParams)
        scope, service = self.scopes.resolve(params.scope)
        found = await answer(service, service.index_status, walks=True)
        data = found.model_dump()
        for root in data["roots"]:  # with --watch, the refresh is the watch loop's
            if (watcher := self.watchers.get(root["label"])) is not None:
                root["refresh"] = _state(watcher)
        return {"scope": scope, **data}

    async def healthz(self, request: Request) -> Response:
        return json_response({"status": "ok"})


def _state(refresher: Refresher) -> dict[str, Any]:
    import dataclasses

    return dataclasses.asdict(refresher.state())


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


Endpoint = Callable[[Request], Awaitable[dict[str, Any]]]

RESULT_KEYS = {"results", "files", "entries", "roots"}


def _logged(
    name: str, endpoint: Endpoint, roots: list[Root]
) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint with its errors as JSON, and each call logged for `repomap stats`."""

    async def handle(request: Request) -> Response:
        started = time.perf_counter()
        error: str | None = None
        count: int | None = None
        try:
            data = await endpoint(request)
            count = next((len(data[k]) for k in RESULT_KEYS if isinstance(data.get(k), list)), 1)
            response = json_response(data)
        except ApiError as failure:
            error = failure.code
            response = error_response(failure.code, str(failure))
        except errors.RepomapError as failure:
            error = error_code(failure)
            response = error_response(error, str(failure))
        _log_call(roots, name, request, count, error, started)
        return response

    return handle


def _log_call(
    roots: list[Root],
    name: str,
    request: Request,
    count: int | None,
    error: str | None,
    started: float,
) -> None:
    ms = round((time.perf_counter() - started) * 1000, 3)
    given = getattr(request.state, "arguments", None) or dict(request.query_params)
    arguments = {
        key: value[: searchlog.MAX_FIELD] if isinstance(value, str) else value
        for key, value in given.items()
    }
    for root in roots:
        if root.settings.search_log:
            searchlog.log_event(
                "tool",
                index=root.settings.db_path,
                tool=f"http {name}",
                arguments=arguments,
                result_count=count,
                ms=ms,
                error=error,
            )


async def _not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        return error_response(
            "METHOD_NOT_ALLOWED", f"{request.method} is not allowed on {request.url.path}"
        )
    return error_response("NOT_FOUND", f"no endpoint {request.url.path}; see docs/http-api.md")


async def _internal(request: Request, exc: Exception) -> Response:
    # starlette raises the exception on after this answer, and uvicorn logs its traceback
    return error_response("INTERNAL", f"internal error: {type(exc).__name__} (see the server log)")


# --- building and running ---------------------------------------------------------------------


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    watch: bool = False
    guard: GuardOptions = GuardOptions()


def _records_answer(q: str, scope: str, found: Any, started: float) -> dict[str, Any]:
    return {
        "q": q,
        "scope": scope,
        "mode": found.mode,
        "results": [record.model_dump() for record in found.results],
        "count": found.count,
        "truncated": found.truncated,
        "notices": found.notices,
        "meta": {"timingsMs": {"total": _ms(started)}},
    }


def _branch_scope(settings: Sequence[Settings], name: str) -> Service | None:
    """A single root's branch scope (repomap.toml's `scope.mode`), when it has an index."""
    if len(settings) != 1:
        return None
    only = settings[0]
    try:
        path = config.db_path_for_scope(only.root, name)
    except BadArgument:  # the fixed mode has no other scope
        return None
    if not path.is_file() or path == only.db_path:
        return None
    scoped = build_server([only._replace(db_path=path)], refresh=False).service
    scoped.background_embedding = False
    return scoped


def build_app(settings: Sequence[Settings], options: ServeOptions) -> Guard:
    """The whole server as one ASGI app: the guard around the API and MCP routes."""
    from mcp.server.transport_security import TransportSecuritySettings

    mcp = build_server(list(settings), refresh=False)
    service = mcp.service
    service.background_embedding = False
    scopes = Scopes({"main": service}, find=functools.partial(_branch_scope, settings))
    indexer = ChildIndexer()
    watchers = (
        {root.label: Refresher(root.settings, enabled=True) for root in service.roots.all}
        if options.watch
        else {}
    )
    for watcher in watchers.values():
        watcher.run_index = indexer
    api = Api(scopes, watchers)
    # The guard checks hosts and origins for every route; the SDK's own check would refuse an
    # origin the allow-list admits.
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=options.guard.max_body_bytes,
    )
    roots = service.roots.all
    endpoints: list[tuple[str, Endpoint, list[str]]] = [
        ("/api/search", api.search, ["POST", "GET"]),
        ("/api/text", api.text, ["GET", "POST"]),
        ("/api/symbols", api.symbols, ["GET", "POST"]),
        ("/api/data", api.data, ["GET", "POST"]),
        ("/api/commits", api.commits, ["GET", "POST"]),
        ("/api/symbol", api.symbol, ["GET", "POST"]),
        ("/api/map", api.map, ["GET", "POST"]),
        ("/api/file", api.file, ["GET", "POST"]),
        ("/api/outline", api.outline, ["GET", "POST"]),
        ("/api/sources", api.sources, ["GET", "POST"]),
        ("/api/files", api.files, ["GET", "POST"]),
        ("/api/status", api.status, ["GET", "POST"]),
    ]
    routes: list[BaseRoute] = [
        Route(path, _logged(path, endpoint, roots), methods=methods)
        for path, endpoint, methods in endpoints
    ]
    routes.append(Route("/healthz", api.healthz, methods=["GET"]))
    routes.append(Route("/", page.index, methods=["GET"]))  # the page for people (page.py)
    routes.append(Route("/page/{name}", page.static, methods=["GET"]))
    routes.extend(mcp_app.routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stop = threading.Event()
        loop = None
        if watchers:
            loop = threading.Thread(
                target=_watch, args=(service, watchers, stop), name="repomap-watch", daemon=True
            )
            loop.start()
        try:
            async with mcp_app.router.lifespan_context(app):
                yield
        finally:
            stop.set()
            indexer.stop()
            if loop is not None:
                loop.join(10)
            for watcher in watchers.values():
                watcher.close()
            scopes.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={404: _not_found, 405: _not_found, Exception: _internal},
    )
    return Guard(app, options.guard)


def _watch(service: Any, watchers: dict[str, Refresher], stop: threading.Event) -> None:
    """--watch: bring each root's index up to date whenever its watcher sees a change (the
    first round builds a missing index); the child `repomap index` embeds what changed."""
    while not stop.is_set():
        for root in service.roots.all:
            try:
                said = watchers[root.label].ensure_fresh(wait=True)
            except errors.RepomapError as error:  # still building, or the build failed
                log.warning("%s", error)
                continue
            for notice in said:
                print(f"repomap serve: {notice}", flush=True)  # noqa: T201 - one line per update
        stop.wait(WATCH_SECONDS)


def run(settings: Sequence[Settings], options: ServeOptions) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    app = build_app(settings, options)
    # One root on loopback without a token: `repomap search` in a shell may ask this server
    # instead of loading the model itself (repomap/serve/handoff.py).
    shareable = len(settings) == 1 and options.guard.loopback and options.guard.token is None
    host = f"[{options.host}]" if ":" in options.host else options.host
    note = handoff.announced(
        [settings[0].db_path] if shareable else [], f"http://{host}:{options.port}"
    )
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    with note:
        uvicorn.Server(config).run()
