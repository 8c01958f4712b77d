"""`repomap serve`: the real server in a subprocess on a free port, real HTTP, a real index."""

from __future__ import annotations

import http.client
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from conftest import GETTER_AND_SETTER, indexed_tree, run_cli, write_tree
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

FILES = {
    "pkg/calc.py": '''
        """Calculator helpers."""
        from pkg import util


        def add(a, b):
            """Add two numbers.

            The connection pool is not involved here.
            """
            # TODO: retry when the pool times out
            return util.twice(a) + b


        class Pool:
            """A connection pool."""

            def acquire(self):
                return util.twice(1)
        ''',
    "pkg/util.py": '''
        def twice(x):
            """Double x: héllo 😀 connection pool."""
            return 2 * x
        ''',
    "README.md": "# Calc\n\n## Usage\n\nCall add.\n",
    ".env": "SECRET=hunter2\n",
    "data.bin": b"\x00\x01binary",
}
ALLOWED_ORIGIN = "http://allowed.example:3000"


@dataclass
class Server:
    port: int
    process: subprocess.Popen
    host: str = "127.0.0.1"

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | dict | None = None,
        headers: dict[str, str] | None = None,
        chunked: bool = False,
    ) -> tuple[int, dict[str, str], dict | bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        if isinstance(body, dict):
            body = json.dumps(body)
        try:
            if chunked:
                connection.putrequest(method, path)
                for name, value in (headers or {}).items():
                    connection.putheader(name, value)
                connection.putheader("Transfer-Encoding", "chunked")
                connection.endheaders()
                data = body.encode() if isinstance(body, str) else body or b""
                for start in range(0, len(data), 1000):
                    piece = data[start : start + 1000]
                    connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                connection.send(b"0\r\n\r\n")
            else:
                connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            raw = response.read()
            found = {k.lower(): v for k, v in response.getheaders()}
            if found.get("content-type", "").startswith("application/json"):
                return response.status, found, json.loads(raw)
            return response.status, found, raw
        finally:
            connection.close()

    def get(self, path: str, **options) -> tuple[int, dict[str, str], dict | bytes]:
        return self.request("GET", path, **options)

    def post(self, path: str, body, **options) -> tuple[int, dict[str, str], dict | bytes]:
        return self.request("POST", path, body, **options)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(*args: str | Path, env: dict[str, str] | None = None) -> Server:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "repomap.cli", "serve", *map(str, args), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "REPOMAP_WORKERS": "1", **(env or {})},
    )
    server = Server(port, process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"repomap serve exited: {process.stderr.read().decode()}")
        try:
            status, _, _ = server.get("/healthz")
            if status == 200:
                return server
        except OSError:
            time.sleep(0.1)
    _stop(server)
    raise AssertionError("repomap serve did not answer /healthz")


def _stop(server: Server) -> str:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    err = server.process.stderr.read().decode()
    server.process.stdout.close()
    server.process.stderr.close()
    return err


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(*args: str | Path, env: dict[str, str] | None = None) -> Server:
        server = _start(*args, env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        err = _stop(server)
        assert "Traceback" not in err, err


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("serve") / "repo", FILES)


@pytest.fixture(scope="module")
def server(tree: Path) -> Iterator[Server]:
    """One server for the read-only tests: no rate limit, a CORS origin, a small body limit."""
    running = _start(
        tree, "--rate-limit", "0", "--cors-origin", ALLOWED_ORIGIN, "--max-body-bytes", "2048"
    )
    yield running
    err = _stop(running)
    assert "Traceback" not in err, err


def _error(answer: tuple[int, dict, dict | bytes]) -> tuple[int, str]:
    status, _, body = answer
    assert isinstance(body, dict) and set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"]
    return status, body["error"]["code"]


# --- the endpoints ----------------------------------------------------------------------------


def test_healthz(server: Server) -> None:
    assert server.get("/healthz")[::2] == (200, {"status": "ok"})


def test_search_answers_in_the_designs_shape(server: Server) -> None:
    status, headers, body = server.post(
        "/api/search", {"q": "double a number", "topK": 2, "mode": "lexical"}
    )
    assert status == 200 and headers["content-type"] == "application/json"
    assert set(body) >= {"q", "scope", "results", "meta"}
    assert (body["q"], body["scope"], body["mode"]) == ("double a number", "main", "lexical")
    first = body["results"][0]
    assert (first["file_path"], first["name"], first["kind"]) == (
        "pkg/util.py",
        "twice",
        "function",
    )
    assert (first["line_number"], first["end_line"]) == (1, 3)
    assert len(body["results"]) <= 2
    assert body["meta"]["timingsMs"]["total"] > 0 and "lexical" in body["meta"]["timingsMs"]
    assert body["meta"]["modelId"] is None  # lexical: no model involved
    # The same request as a query string, and filters.
    status, _, same = server.get("/api/search?q=double+a+number&topK=2&mode=lexical")
    assert status == 200 and same["results"] == body["results"]
    status, _, none = server.post(
        "/api/search", {"q": "connection pool", "pathPrefix": "pkg/calc.py", "kind": "class"}
    )
    assert status == 200 and [r["name"] for r in none["results"]] == ["Pool"]


def test_text_search_hits_have_lines_and_highlight_offsets(server: Server) -> None:
    status, _, body = server.get("/api/text?q=connection+pool&topK=10")
    assert status == 200 and body["scope"] == "main" and body["total"] == len(body["results"])
    by_symbol = {hit["symbol_name"]: hit for hit in body["results"]}
    assert set(by_symbol) == {"add", "Pool", "twice"}
    for hit in body["results"]:
        assert "[MATCH]" not in hit["snippet"]
        # offsets are JavaScript string indices: UTF-16 code units
        units = hit["snippet"].encode("utf-16-le")
        marked = [units[a * 2 : b * 2].decode("utf-16-le").lower() for a, b in hit["highlights"]]
        assert set(marked) == {"connection", "pool"}, (hit["snippet"], hit["highlights"])
    # the docstring of add starts on line 6; the words are on its third line
    assert (by_symbol["add"]["line_number"], by_symbol["add"]["match_line"]) == (6, 8)
    assert by_symbol["twice"]["file_path"] == "pkg/util.py"
    assert by_symbol["twice"]["highlights"][0][0] == len("Double x: héllo 😀 ") + 1  # 😀: 2 units
    status, _, literal = server.get("/api/text?q=TODO:+retry&mode=literal&type=comment")
    assert status == 200 and [h["line_number"] for h in literal["results"]] == [10]


def test_symbols_and_a_symbols_source(server: Server) -> None:
    status, _, body = server.get("/api/symbols?q=acq")
    assert status == 200
    assert [(h["qualified_name"], h["line_number"]) for h in body["results"]] == [
        ("Pool.acquire", 17)
    ]
    status, _, source = server.get("/api/symbol?name=Pool.acquire")
    assert status == 200 and source["content"].startswith("    def acquire(self):")
    assert (source["file_path"], source["line_number"], source["end_line"]) == (
        "pkg/calc.py", 17, 18,
    )  # fmt: skip
    assert _error(server.get("/api/symbol?name=Nonexistent")) == (404, "NOT_FOUND")


def test_map_lists_files_with_rank_lines_and_edges(server: Server) -> None:
    status, _, body = server.get("/api/map")
    assert status == 200 and body["totalFiles"] == 2 and not body["truncated"]
    files = {f["path"]: f for f in body["files"]}
    assert files["pkg/calc.py"]["lines"] == 18 and files["pkg/util.py"]["lines"] == 3
    assert body["files"][0]["path"] == "pkg/util.py"  # used by calc: ranked higher
    assert abs(sum(f["rank"] for f in body["files"]) - 1) < 1e-6
    assert [(e["source"], e["target"], e["names"]) for e in body["edges"]] == [
        ("pkg/calc.py", "pkg/util.py", 1)
    ]
    assert 0 < body["edges"][0]["weight"] <= 1
    status, _, top = server.get("/api/map?topK=1&edgeFiles=0")
    assert status == 200 and len(top["files"]) == 1 and top["truncated"] and top["edges"] == []


def test_file_outline_sources_files_status(server: Server, tree: Path) -> None:
    status, _, body = server.get("/api/file?path=pkg/calc.py&start=5&end=6")
    assert status == 200
    assert body["lines"] == ["def add(a, b):", '    """Add two numbers.']
    assert (body["startLine"], body["endLine"], body["totalLines"]) == (5, 6, 18)
    assert body["language"] == "python" and body["nextStartLine"] == 7
    status, _, outline = server.get("/api/outline?path=pkg/calc.py")
    assert status == 200
    assert [(e["name"], e["start_line"]) for e in outline["files"][0]["entries"]] == [
        ("add", 5), ("Pool", 14), ("acquire", 17),
    ]  # fmt: skip
    status, _, sources = server.get("/api/sources")
    assert status == 200 and "pkg/" in [e["path"] for e in sources["entries"]]
    status, _, files = server.get("/api/files?q=util")
    assert status == 200 and files["files"] == ["pkg/util.py"]
    status, _, state = server.get("/api/status")
    assert status == 200 and state["roots"][0]["root"] == str(tree)
    assert (state["roots"][0]["files"], state["roots"][0]["symbols"]) == (2, 4)
    assert state["roots"][0]["refresh"]["enabled"] is False  # no --watch: read-only


def test_path_safety_is_the_mcp_servers(server: Server) -> None:
    assert _error(server.get("/api/file?path=../../etc/passwd")) == (400, "INVALID_REQUEST")
    assert _error(server.get("/api/file?path=/etc/passwd")) == (400, "INVALID_REQUEST")
    assert _error(server.get("/api/file?path=.env")) == (400, "INVALID_REQUEST")
    assert _error(server.get("/api/file?path=data.bin")) == (400, "INVALID_REQUEST")
    assert _error(server.get("/api/file?path=pkg/missing.py")) == (404, "NOT_FOUND")
    assert _error(server.get("/api/text?q=pool&pathPrefix=../")) == (400, "INVALID_REQUEST")


def test_bad_requests_are_structured_errors(server: Server) -> None:
    invalid = (400, "INVALID_REQUEST")
    assert _error(server.post("/api/search", '{"q": "x"')) == invalid  # bad JSON
    assert _error(server.post("/api/search", "[1, 2]")) == invalid  # not an object
    assert _error(server.post("/api/search", b"\xff\xfe")) == invalid  # not UTF-8
    status, code = _error(answer := server.post("/api/search", {"q": "x", "limt": 3}))
    assert (status, code) == invalid and "limt" in answer[2]["error"]["message"]
    assert _error(server.post("/api/search", {"topK": 3})) == invalid  # q missing
    assert _error(server.post("/api/search", {"q": ""})) == invalid
    assert _error(server.post("/api/search", {"q": "x", "topK": 0})) == invalid
    assert _error(server.post("/api/search", {"q": "x", "topK": "many"})) == invalid
    assert _error(server.post("/api/search", {"q": "x", "mode": "psychic"})) == invalid
    assert _error(server.post("/api/search", {"q": "x", "kind": "widget"})) == invalid
    assert _error(server.post("/api/search", {"q": "\ud800"})) == invalid
    assert _error(server.get("/api/text?q=a&q=b")) == invalid  # repeated
    assert _error(server.get('/api/text?q="unbalanced')) == invalid
    assert _error(server.get("/api/text?q=x&scope=..%2Fetc")) == invalid
    assert _error(server.get("/api/text?q=x&scope=feature-1")) == (404, "NOT_FOUND")
    assert server.get("/api/text?q=pool&scope=main")[0] == 200
    assert _error(server.get("/api/nothing")) == (404, "NOT_FOUND")
    assert _error(server.request("DELETE", "/api/text")) == (405, "METHOD_NOT_ALLOWED")
    mismatch = server.post("/api/search", {"q": "x", "modelId": "some-other-model"})
    assert _error(mismatch) == (409, "EMBEDDING_MODEL_MISMATCH")
    # semantic search needs embeddings, which this index has none of
    assert _error(server.post("/api/search", {"q": "x", "mode": "semantic"})) == invalid


def test_model_id_is_checked_against_the_indexs_own_model(
    tmp_path: Path, serve: Callable[..., Server]
) -> None:
    """An index embedded with an older window keeps it (test_code_search): a client naming that
    model is served, in words alone too; naming today's default is refused."""
    import sqlite3

    from repomap.embed.model import DEFAULT_MAX_TOKENS, model_id_for

    root = indexed_tree(tmp_path / "repo", FILES)
    older = model_id_for(48)
    with sqlite3.connect(root / ".repomap" / "index.db") as db:
        db.execute("INSERT INTO meta (key, value) VALUES ('embedding_model', ?)", (older,))
    server = serve(root, "--rate-limit", "0")
    asked = {"q": "double a number", "mode": "lexical"}
    status, _, body = server.post("/api/search", {**asked, "modelId": older})
    assert status == 200 and body["results"], body
    refused = server.post("/api/search", {**asked, "modelId": model_id_for(DEFAULT_MAX_TOKENS)})
    assert _error(refused) == (409, "EMBEDDING_MODEL_MISMATCH")
    assert older in refused[2]["error"]["message"]


def test_symbol_nth_chooses_a_setter_behind_its_getter(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    root = indexed_tree(tmp_path / "repo", {"box.py": GETTER_AND_SETTER})
    server = serve(root, "--rate-limit", "0")
    status, _, setter = server.get("/api/symbol?name=Box.size&nth=2")
    assert status == 200 and setter["content"].startswith("    def size(self, value):")
    assert _error(server.get("/api/symbol?name=Box.size&nth=3"))[0] == 400
    assert _error(server.get("/api/symbol?name=Box.size&nth=0"))[0] == 400


def test_body_limit(server: Server) -> None:
    big = {"q": "pool " * 1000}  # over --max-body-bytes 2048
    assert _error(server.post("/api/search", big)) == (413, "PAYLOAD_TOO_LARGE")
    assert _error(server.post("/api/search", big, chunked=True)) == (413, "PAYLOAD_TOO_LARGE")
    small = server.post("/api/search", {"q": "double"}, chunked=True)
    assert small[0] == 200 and small[2]["results"]


def test_cors_allow_list_and_hosts(server: Server) -> None:
    preflight = {"Access-Control-Request-Method": "POST"}
    status, headers, _ = server.request(
        "OPTIONS", "/api/search",
        headers={**preflight, "Origin": ALLOWED_ORIGIN,
                 "Access-Control-Request-Headers": "content-type, authorization"},
    )  # fmt: skip
    assert status == 204 and headers["access-control-allow-origin"] == ALLOWED_ORIGIN
    assert "POST" in headers["access-control-allow-methods"]
    assert "content-type" in headers["access-control-allow-headers"]
    refused = server.request(
        "OPTIONS", "/api/search", headers={**preflight, "Origin": "http://evil.example"}
    )
    assert _error(refused) == (403, "FORBIDDEN")
    assert "access-control-allow-origin" not in refused[1]
    status, headers, _ = server.get("/api/text?q=pool", headers={"Origin": ALLOWED_ORIGIN})
    assert status == 200 and headers["access-control-allow-origin"] == ALLOWED_ORIGIN
    evil = server.get("/api/text?q=pool", headers={"Origin": "http://evil.example"})
    assert _error(evil) == (403, "FORBIDDEN")
    # the server's own origin (the page it serves) is always allowed
    own = server.get("/api/text?q=pool", headers={"Origin": f"http://127.0.0.1:{server.port}"})
    assert own[0] == 200 and "access-control-allow-origin" not in own[1]
    # a name rebound to 127.0.0.1 is not served
    rebound = server.get("/api/text?q=pool", headers={"Host": f"evil.example:{server.port}"})
    assert _error(rebound) == (403, "FORBIDDEN")
    assert server.get("/api/text?q=pool", headers={"Host": f"localhost:{server.port}"})[0] == 200


def test_mcp_client_at_mcp(server: Server) -> None:
    async def session():
        async with Client(f"http://127.0.0.1:{server.port}/mcp") as client:
            found = await client.call_tool("search_symbols", {"query": "twice"})
            bad = await client.call_tool("read_file", {"path": "../../etc/passwd"})
            return found, bad

    found, bad = anyio.run(session)
    assert found.structured_content["results"][0]["file_path"] == "pkg/util.py"
    assert bad.is_error and "outside" in bad.content[0].text


def test_calls_are_logged_for_stats(server: Server, tree: Path) -> None:
    assert server.get("/api/symbols?q=twice")[0] == 200
    result = run_cli("stats", "--json", "--root", tree)
    names = {row["name"] for row in json.loads(result.stdout)["results"]}
    assert "http /api/symbols" in names


# --- the rate limit, the token, the index -----------------------------------------------------


def test_rate_limit_answers_429_with_retry_after(serve, tree: Path) -> None:
    server = serve(tree, "--rate-limit", "3", "--rate-limit-window", "30")
    assert [server.get("/api/symbols?q=add")[0] for _ in range(3)] == [200, 200, 200]
    limited = server.get("/api/symbols?q=add")
    assert _error(limited) == (429, "RATE_LIMITED")
    assert int(limited[1]["retry-after"]) in range(1, 11)  # one request per 10 s refills
    assert server.get("/healthz")[0] == 200  # not limited


def test_a_non_loopback_address_needs_a_token(tree: Path) -> None:
    refused = run_cli("serve", tree, "--host", "0.0.0.0", "--port", str(_free_port()), timeout=30)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("error: ") and "--token" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_token_is_required_on_every_route_but_healthz(serve, tree: Path) -> None:
    server = serve(tree, "--host", "0.0.0.0", env={"REPOMAP_SERVE_TOKEN": "s3cret"})
    missing = server.get("/api/symbols?q=add")
    assert (
        _error(missing) == (401, "UNAUTHORIZED")
        and "bearer" in missing[1]["www-authenticate"].lower()
    )
    wrong = server.get("/api/symbols?q=add", headers={"Authorization": "Bearer guess"})
    assert _error(wrong) == (401, "UNAUTHORIZED")
    good = server.get("/api/symbols?q=add", headers={"Authorization": "Bearer s3cret"})
    assert good[0] == 200 and good[2]["results"]
    # bound to all addresses: any Host is served, given the token
    other = server.get(
        "/api/symbols?q=add", headers={"Authorization": "Bearer s3cret", "Host": "example.org"}
    )
    assert other[0] == 200
    mcp_refused = server.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert _error(mcp_refused) == (401, "UNAUTHORIZED")

    async def session():
        http_client = create_mcp_http_client(headers={"Authorization": "Bearer s3cret"})
        async with (
            http_client,
            Client(
                streamable_http_client(
                    f"http://127.0.0.1:{server.port}/mcp", http_client=http_client
                )
            ) as client,
        ):
            return await client.call_tool("search_symbols", {"query": "add"})

    assert anyio.run(session).structured_content["results"][0]["name"] == "add"


def test_no_index_is_index_unavailable(serve, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bare", {"a.py": "def f():\n    pass\n"})
    server = serve(root)
    assert _error(server.get("/api/symbols?q=f")) == (503, "INDEX_UNAVAILABLE")
    assert _error(server.post("/api/search", {"q": "f"})) == (503, "INDEX_UNAVAILABLE")
    assert not (root / ".repomap" / "index.db").exists()  # read-only: nothing built


def test_vectors_of_another_model_are_a_mismatch(serve, tmp_path: Path) -> None:
    root = indexed_tree(tmp_path / "repo", {"a.py": 'def f():\n    """Fetch."""\n'})
    db = sqlite3.connect(root / ".repomap" / "index.db")
    with db:  # vectors as an index built by some other model would hold them
        db.execute("INSERT INTO embedding_models (id, name) VALUES (1, 'other-model-w128')")
        db.execute("INSERT INTO vector_scopes (id, name, model, version) VALUES (1, 'main', 1, 7)")
        db.execute("INSERT INTO embedding_cache (id, model, hash, vector) VALUES (1, 1, ?, ?)",
                   (bytes(32), bytes(2 * 384)))  # fmt: skip
        db.execute("INSERT INTO vector_paths (id, path) VALUES (1, 'a.py')")
        chunk = db.execute("SELECT min(id) FROM chunks").fetchone()[0]
        db.execute("INSERT INTO vectors VALUES (1, ?, 1, 1, 'python', 'function')", (chunk,))
    db.close()
    server = serve(root)
    answer = server.post("/api/search", {"q": "fetch", "mode": "semantic"})
    assert _error(answer) == (409, "EMBEDDING_MODEL_MISMATCH")
    assert "other-model-w128" in answer[2]["error"]["message"]
    assert server.post("/api/search", {"q": "fetch", "mode": "lexical"})[0] == 200


def test_several_roots_prefix_paths_with_their_labels(serve, tmp_path: Path) -> None:
    front = indexed_tree(tmp_path / "front", {"app.py": "def render():\n    pass\n"})
    back = indexed_tree(tmp_path / "back", {"app.py": "def store():\n    pass\n"})
    server = serve(front, back)
    status, _, found = server.get("/api/symbols?q=store")
    assert status == 200 and [h["file_path"] for h in found["results"]] == ["back/app.py"]
    status, _, body = server.get("/api/file?path=front/app.py")
    assert status == 200 and body["lines"] == ["def render():", "    pass"]
    status, _, only = server.get("/api/symbols?q=r&pathPrefix=front/")
    assert status == 200 and {h["file_path"] for h in only["results"]} == {"front/app.py"}
    assert _error(server.get("/api/file?path=app.py")) == (400, "INVALID_REQUEST")
    status, _, mapped = server.get("/api/map")
    assert {f["path"] for f in mapped["files"]} == {"front/app.py", "back/app.py"}


def test_several_roots_rank_by_how_well_each_ones_best_fits(serve, tmp_path: Path) -> None:
    """Each root's scores end at its own best (1.0): an XML parser's `struct range` tied with
    semver's `matches_tilde` for "tilde range matching" (and came first by path)."""
    xml = indexed_tree(tmp_path / "xml", {"a_range.c": "struct range {\n  int lo, hi;\n};\n"})
    semver = indexed_tree(
        tmp_path / "semver",
        {
            "src/lib.rs": (
                "/// Whether the version matches the tilde range of the comparator.\n"
                "pub fn matches_tilde(cmp: &Comparator, ver: &Version) -> bool {\n"
                "    ver.major == cmp.major\n}\n"
            )
        },
    )
    server = serve(xml, semver)
    status, _, body = server.post("/api/search", {"q": "tilde range matching", "mode": "lexical"})
    assert status == 200
    hits = [(h["file_path"], h["name"], h["score"]) for h in body["results"]]
    assert hits[0][:2] == ("semver/src/lib.rs", "matches_tilde")
    (other,) = [score for path, _, score in hits if path == "xml/a_range.c"]
    assert other < hits[0][2] / 2


def test_watch_reindexes_changes_in_process(serve, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "live", {"a.py": "def first():\n    pass\n"})
    server = serve(root, "--watch")  # no index yet: the watch loop builds it

    def names(query: str) -> list[str]:
        status, _, body = server.get(f"/api/symbols?q={query}")
        return [hit["name"] for hit in body["results"]] if status == 200 else []

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and names("first") != ["first"]:
        time.sleep(0.2)
    assert names("first") == ["first"]
    (root / "b.py").write_text("def second_thing():\n    pass\n")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and names("second_thing") != ["second_thing"]:
        time.sleep(0.1)
    assert names("second_thing") == ["second_thing"]
    (root / "a.py").unlink()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and names("first") == ["first"]:
        time.sleep(0.1)
    assert names("first") == []
    status, _, state = server.get("/api/status")
    assert state["roots"][0]["refresh"]["enabled"] is True
    assert state["roots"][0]["refresh"]["method"] in ("watchfiles", "polling")


def test_the_child_indexer_reports_what_it_did_and_fails_with_one_line(tmp_path: Path) -> None:
    from repomap import config
    from repomap.errors import RepomapError
    from repomap.serve.reindex import ChildIndexer

    root = write_tree(tmp_path / "kid", {"a.py": "def one():\n    pass\n"})
    indexer = ChildIndexer()
    summary = indexer(config.resolve(root, workers=1))
    assert (summary.added, summary.files, summary.symbols) == (1, 1, 1)
    assert (root / ".repomap" / "index.db").exists()
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    with pytest.raises(RepomapError) as failure:  # the index's folder would be a file
        indexer(config.resolve(root, blocked / "index.db", workers=1))
    assert "\n" not in str(failure.value) and "Traceback" not in str(failure.value)
    indexer.stop()
    with pytest.raises(RepomapError, match="shutting down"):
        indexer(config.resolve(root, workers=1))


def test_settings_and_branch_scopes_come_from_the_config_file(tmp_path: Path, serve) -> None:
    """repomap.toml's serve.* settings apply unless a flag says otherwise, and a request's
    `scope` reads that branch scope's index (scope.mode = env: one index per $REPOMAP_SCOPE)."""
    root = write_tree(tmp_path / "repo", {"core.py": "def shared_helper():\n    return 1\n"})
    (root / "repomap.toml").write_text(
        '[scope]\nmode = "env"\n\n[serve]\nrate_limit = 3\nrate_limit_window = 60.0\n'
    )
    for scope in ("alpha", "beta"):
        if scope == "beta":
            (root / "feature.py").write_text("def only_on_beta():\n    return 2\n")
        done = run_cli("index", root, "--json", env={"REPOMAP_SCOPE": scope})
        assert done.returncode == 0, done.stderr
    server = serve(root, env={"REPOMAP_SCOPE": "alpha"})
    status, _, beta = server.get("/api/symbols?q=only_on_beta&scope=beta")
    assert status == 200 and [hit["name"] for hit in beta["results"]] == ["only_on_beta"]
    status, _, alpha = server.get("/api/symbols?q=only_on_beta")  # the server's own scope
    assert status == 200 and alpha["results"] == []
    assert _error(server.get("/api/symbols?q=x&scope=gamma")) == (404, "NOT_FOUND")
    status, headers, _ = server.get("/api/symbols?q=x")  # past the 3 a window the file allows
    assert status == 429 and "retry-after" in {key.lower() for key in headers}


def test_data_records_and_commits_over_http(tmp_path: Path, serve) -> None:
    """/api/data and /api/commits: `search-data` and `search-commits` with the same envelope,
    on a real git repository."""
    root = write_tree(tmp_path / "repo", {
        "app.py": "def run():\n    return 1\n",
        "deploy/settings.yaml": "service:\n  retry_budget: 7\n",
    })  # fmt: skip
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}  # fmt: skip
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "Raise the retry budget"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    assert run_cli("index", root, "--json").returncode == 0
    server = serve(root)
    status, _, data = server.get("/api/data?q=retry_budget")
    assert status == 200 and data["count"] == 1 and data["mode"] == "literal"
    record = data["results"][0]
    assert (record["file_path"], record["key"]) == ("deploy/settings.yaml", "service.retry_budget")
    assert record["fields"] == {"value": "7"}
    status, _, commits = server.post("/api/commits", {"q": "retry budget", "ranked": True})
    assert status == 200 and [c["subject"] for c in commits["results"]] == [
        "Raise the retry budget"
    ]
    status, _, none = server.get("/api/commits?q=nothing%20like%20this")
    assert status == 200 and (none["results"], none["count"], none["truncated"]) == ([], 0, False)
    assert _error(server.get("/api/commits?q=x&field=colour"))[0] == 400
    assert _error(server.get("/api/data?q=x&unknown=1"))[0] == 400
