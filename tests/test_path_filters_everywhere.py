"""One path-filter dialect: the same filters through every CLI command and MCP tool that takes
a path give the same files (each command restricted to the files it can return)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import indexed_tree, run_cli
from mcp.client import Client

from repomap import config
from repomap.serve.mcp_server import build_server

CODE = [
    "pkg/db/models.py",
    "pkg/db/backends/default.py",
    "pkg/_transports/default.py",
    "pkg/_transports/asgi.py",
    "tests/test_models.py",
    "lib/src/io.py",
    "src/main.py",
]
DOCS = ["docs/db/guide.md", "pkg/_transports/README.md", "README.md"]


def _code(rel_path: str) -> str:
    name = rel_path.replace("/", "_").replace(".", "_")
    return (
        f"# marker comment in {rel_path}\n\n\n"
        f"def marker_{name}():\n"
        '    """The marker docstring."""\n'
        '    return "marker"\n\n\n'
        "def handler():\n"
        "    return marker_" + name + "()\n"
    )


FILES = {**{p: _code(p) for p in CODE}, **dict.fromkeys(DOCS, "# Marker\n\nThe marker text.\n")}

# filter -> the files it names (code and docs), per repomap/paths.py
TABLE = {
    "pkg/db/": {"pkg/db/models.py", "pkg/db/backends/default.py"},
    "pkg/db": {"pkg/db/models.py", "pkg/db/backends/default.py"},
    "./pkg/db/models.py": {"pkg/db/models.py"},
    "default.py": {"pkg/db/backends/default.py", "pkg/_transports/default.py"},
    "_transports/": {"pkg/_transports/default.py", "pkg/_transports/asgi.py",
                     "pkg/_transports/README.md"},
    "db/": {"pkg/db/models.py", "pkg/db/backends/default.py", "docs/db/guide.md"},
    "src": {"src/main.py"},  # the root's src/, not lib/src/
    "**/tests/**": {"tests/test_models.py"},
    "*.md": set(DOCS),
    "pkg/**/default.py": {"pkg/db/backends/default.py", "pkg/_transports/default.py"},
    "pkg/*.py": set(),
}  # fmt: skip
ALL = set(CODE) | set(DOCS)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("dialect") / "repo", FILES)


def _cli_json(root: Path, *args: str) -> Any:
    done = run_cli(*args, "--root", root)
    assert done.returncode in (0, 1), done.stderr  # 1: nothing found
    return json.loads(done.stdout)


def _cli_files(root: Path, command: str, path: str) -> set[str]:
    """The files one CLI command answers with under --path/--file/--pattern/PATH = `path`."""
    if command == "search-text":
        found = _cli_json(
            root, "search-text", "marker", "--path", path, "--json", "--limit", "1000"
        )
        return {hit["file_path"] for hit in found["results"]}
    if command == "symbols":
        found = _cli_json(root, "symbols", "handler", "--path", path, "--json", "--limit", "1000")
        return {hit["file_path"] for hit in found["results"]}
    if command == "search-docs":
        found = _cli_json(root, "search-docs", "marker", "--path", path, "--json", "--limit", "100")
        return {hit["file"] for hit in found["results"]}
    if command == "outline":
        return {item["path"] for item in _cli_json(root, "outline", path, "--json")["results"]}
    if command == "files":
        found = _cli_json(root, "files", ".", "--path", path, "--json")["results"]
        return {item["path"] for item in found}
    if command == "sources":
        tree = _cli_json(root, "sources", "--pattern", path, "--format", "json", "--depth", "9")
        return {entry["path"] for entry in tree["results"] if entry["kind"] == "file"}
    if command == "show":  # every definition of `handler` under --file
        done = run_cli("show", "handler", "--file", path, "--json", "--root", root)
        if done.returncode != 0:
            assert "no symbol named 'handler'" in done.stderr, done.stderr
            return set()
        [shown] = json.loads(done.stdout)["results"]
        return {shown["file_path"]} | {other.rsplit(" ", 1)[1].rsplit(":", 1)[0]
                                       for other in shown.get("others") or []}  # fmt: skip
    if command == "show --section":
        done = run_cli("show", "--section", "Marker", "--file", path, "--json", "--root", root)
        if done.returncode != 0:
            assert "no indexed Markdown or text file matches" in done.stderr or (
                "is not a Markdown or text file" in done.stderr
            ), done.stderr
            return set()
        [shown] = json.loads(done.stdout)["results"]
        return {match["file"] for match in shown["matches"]}
    if command == "map --focus":  # focus files are left out of the map: the rest is shown
        done = run_cli("map", "--focus", path, "--json", "--tokens", "100000", "--root", root)
        if done.returncode != 0:
            assert "matches no indexed file" in done.stderr or "no indexed file" in done.stderr, (
                done.stderr
            )
            return set()
        shown = {item["file_path"] for item in json.loads(done.stdout)["results"]}
        return set(CODE) - shown
    raise AssertionError(command)


CODE_ONLY = ("search-text", "symbols", "show", "map --focus")
DOCS_ONLY = ("search-docs", "show --section")
BOTH = ("outline", "files", "sources")


@pytest.mark.parametrize("command", CODE_ONLY + DOCS_ONLY + BOTH)
def test_every_cli_command_reads_a_path_filter_the_same_way(repo: Path, command: str) -> None:
    kind = set(CODE) if command in CODE_ONLY else set(DOCS) if command in DOCS_ONLY else ALL
    for path, expected in TABLE.items():
        if command == "outline" and not expected:
            continue  # `outline pkg/*.py` with nothing there: an empty outline, checked below
        assert _cli_files(repo, command, path) == expected & kind, (command, path)


async def _mcp(root: Path, calls: list[tuple[str, dict]]) -> list[Any]:
    server = build_server(config.resolve(root, workers=1), refresh=False)
    async with Client(server) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    for result in results:
        assert not result.is_error, result.content[0].text
    return [result.structured_content for result in results]


def _mcp_files(tool: str, answer: dict) -> set[str]:
    if tool in ("search_text", "search_symbols"):
        return {hit["file_path"] for hit in answer["results"]}
    if tool == "search_docs":
        return {hit["file"] for hit in answer["results"]}
    if tool == "outline":
        return {item["path"] for item in answer["files"]}
    if tool == "find_files":
        return set(answer["files"])
    if tool == "list_sources":
        return {entry["path"] for entry in answer["entries"] if entry["kind"] == "file"}
    raise AssertionError(tool)


MCP_CALLS = {
    "search_text": ({"query": "marker", "limit": 1000}, "path", set(CODE)),
    "search_symbols": ({"query": "handler", "limit": 1000}, "path", set(CODE)),
    "search_docs": ({"query": "marker", "limit": 100}, "path", set(DOCS)),
    "outline": ({"limit": 1000}, "path", ALL),
    "find_files": ({"query": "."}, "path", ALL),
    "list_sources": ({"depth": 9, "limit": 1000}, "pattern", ALL),
}


def test_every_mcp_tool_reads_a_path_filter_as_the_cli_does(repo: Path) -> None:
    calls = [
        (tool, {**arguments, key: path})
        for tool, (arguments, key, _) in MCP_CALLS.items()
        for path in TABLE
    ]
    answers = anyio.run(_mcp, repo, calls)
    for (tool, arguments), answer in zip(calls, answers, strict=True):
        _, key, kind = MCP_CALLS[tool]
        assert _mcp_files(tool, answer) == TABLE[arguments[key]] & kind, (tool, arguments)
