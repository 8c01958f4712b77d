"""The page for people: `repomap serve` answers `/` with it, `repomap map --html` writes its map.

    GET /                 page/index.html: search as you type, a file with its outline, the map
    GET /page/app.js      the page's script (plain JavaScript, no library, no build step)
    GET /page/app.css     its styles

The files ship in the wheel as package data (repomap/serve/page/). The page reads the JSON API
(docs/http-api.md) from the same origin, and its Content-Security-Policy allows nothing else.

`map_records` is the data of `GET /api/map` for one index, and `map_html` that data as one
self-contained HTML file: the page's CSS and script inlined, the data in a JSON script element,
which the script finds and then shows the map alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from repomap import store
from repomap.maps import overview
from repomap.serve.http_guard import error_body
from repomap.store import Store

ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
# Only the server's own scripts, styles and API; no inline script, no frames, no other origin.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'none'"
)


@cache
def asset(name: str) -> str:
    """A file of the page, from the installed package."""
    return (resources.files("repomap.serve") / "page" / name).read_text(encoding="utf-8")


def _response(name: str) -> Response:
    return Response(
        asset(name),
        media_type=ASSETS[name],
        headers={
            "Cache-Control": "no-cache",
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        },
    )


async def index(request: Request) -> Response:
    return _response("index.html")


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS or name == "index.html":
        body = error_body("NOT_FOUND", f"no page file {name}")
        return Response(body, 404, media_type="application/json")
    return _response(name)


def map_records(
    db: Store,
    ids: Sequence[int] | None,
    edge_files: int,
    max_edges: int,
    shown: Callable[[str], str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The files (best rank first, with their lines) and the dependency edges among the
    `edge_files` top ones (strongest first), as `GET /api/map` answers them; `shown` turns an
    indexed path into the path the reader sees."""
    rows = overview.ranked_files(db, ids)
    paths = {row.id: shown(row.path) for row in rows}
    files = [
        {
            "path": paths[row.id],
            "language": row.language,
            "lines": row.line_count,
            "rank": round(row.rank, 8),
        }
        for row in rows
    ]
    edges: list[dict[str, Any]] = []
    if edge_files and max_edges:
        top = [row.id for row in rows[:edge_files]]
        edges = [
            {
                "source": paths[edge.source],
                "target": paths[edge.target],
                "weight": round(edge.weight, 4),
                "names": edge.names,
            }
            for edge in overview.file_edges(db, top, max_edges)
        ]
    return files, edges


def index_map(db: Store, path: str | None, edge_files: int, max_edges: int) -> dict[str, Any]:
    """One index's map data (paths relative to its root), for `repomap map --html`."""
    ids = store.filtered_ids(db, path) if path else None
    files, edges = map_records(db, ids, edge_files, max_edges, lambda rel_path: rel_path)
    return {"files": files, "totalFiles": len(files), "edges": edges}


def map_html(data: dict[str, Any], title: str) -> str:
    """The map view as one HTML file that needs nothing else: no server, no network."""
    page = asset("index.html")
    # `</` inside the JSON cannot close the script element: escape the slash.
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    css = asset("app.css")
    script = asset("app.js").replace("</script", "<\\/script")
    page = page.replace(
        '<link rel="stylesheet" href="/page/app.css">', f"<style>\n{css}</style>"
    ).replace(
        '<script src="/page/app.js" defer></script>',
        f'<script type="application/json" id="repomap-map-data">{payload}</script>\n'
        f"<script>\n{script}</script>",
    )
    return page.replace("<title>repomap</title>", f"<title>{_escape(title)}</title>")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
