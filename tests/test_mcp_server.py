"""The MCP server: every tool through the SDK's client (in memory, and `repomap mcp` over stdio
as a real subprocess), budgets, tool errors that leave the server serving, the allowlist of
roots, freshness, the read-only guarantee and the log of tool calls."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import GETTER_AND_SETTER, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from repomap.extractors.model import KINDS

import repomap
from repomap import config, store
from repomap.errors import BadArgument
from repomap.serve.mcp_models import self_contained
from repomap.serve.mcp_server import build_server

TOOLS = {
    "search_text", "search_code", "search_symbols", "get_symbol_content", "get_repo_map", "search_docs",
    "search_data", "search_commits", "get_section", "outline", "read_file", "list_sources",
    "find_files", "index_status", "mcp_help", "find_references",
}  # fmt: skip

FILES = {
    "pkg/__init__.py": "",
    "pkg/pool.py": '''
        """Connection pooling for the demo."""
        import os


        class ConnectionPool:
            """A pool of database connections."""

            def acquire(self, timeout=None):
                # wait for a free connection slot
                if timeout is not None and timeout < 0:
                    raise ValueError("Failed to acquire connection: negative timeout")
                return os.getpid()

            def release(self, connection):
                """Give a connection back."""
                return None


        def make_pool():
            return ConnectionPool()
        ''',
    "pkg/use.py": """
        from pkg.pool import ConnectionPool, make_pool


        def main():
            pool = make_pool()
            return pool.acquire()
        """,
    "README.md": """
        # Demo

        Intro text.

        ## Install

        Run pip install demo.

        ## Usage

        Configure the connection pool.
        """,
    "docs/guide.md": """
        # Guide

        ## Install

        From source: clone, then build.
        """,
    "notes.txt": "plain notes about configuring\n",
    "config.yaml": "a: 1\nb: 2\nc: 3\nd: 4\n",
    "data.bin": b"\x00\x01\x02binary",
}


@pytest.fixture
def repo(make_repo, tmp_path: Path) -> Path:
    root = make_repo(FILES)
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP SECRET outside the root\n")
    (root / "link_out.txt").symlink_to(secret)
    return root


def _settings(root: Path, **kwargs: Any) -> config.Settings:
    return config.resolve(root, workers=1, **kwargs)


async def _calls(server: Any, calls: list[tuple[str, dict]]) -> list[Any]:
    async with Client(server) as client:
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def call(server: Any, name: str, arguments: dict | None = None) -> Any:
    """One tool call through the SDK's in-memory client; the CallToolResult."""
    return anyio.run(_calls, server, [(name, arguments or {})])[0]


def ok(server: Any, name: str, arguments: dict | None = None) -> dict:
    result = call(server, name, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error(server: Any, name: str, arguments: dict | None = None) -> str:
    result = call(server, name, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


def _tree_hash(root: Path) -> str:
    """Every file under root but the search log (which records the calls, by design) and
    SQLite's reader bookkeeping beside a WAL index (an empty -wal and the -shm index)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.name.endswith("-wal"):
            assert path.stat().st_size == 0
            continue
        skipped = "search-log" in path.name or path.name.endswith("-shm")
        if path.is_file() and not path.is_symlink() and not skipped:
            digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


# --- the tools -----------------------------------------------------------------------------------


def test_lists_every_tool_with_bounded_input_schemas_and_read_only_annotations(repo: Path) -> None:
    async def listing() -> Any:
        async with Client(build_server(_settings(repo))) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(listing)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema is not None
        assert len(tool.description) > 60
    query = tools["search_text"].input_schema["properties"]["query"]
    assert (query["minLength"], query["maxLength"]) == (1, 4096)
    limit = tools["search_text"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 1000, 20)
    element = tools["search_text"].input_schema["properties"]["element_type"]
    assert set(element["enum"]) == {"all", "comment", "docstring", "string_literal"}
    kind = tools["search_symbols"].input_schema["properties"]["kind"]["anyOf"][0]
    assert tuple(kind["enum"]) == KINDS
    assert tools["search_text"].input_schema["required"] == ["query"]
    # Each description says when another tool fits better.
    assert "search_symbols" in tools["search_text"].description
    assert "search_text" in tools["search_symbols"].description
    # `more: 1` read as one more when 31 were (an agent user): a lower bound unless more_exact
    assert "at least" in tools["search_symbols"].description


def test_output_schemas_are_written_out_and_answers_are_compact_json(repo: Path) -> None:
    """No output schema leaves a `$ref` for the client to resolve (the SDK's client checks
    every answer against its schema, item by item), and an answer's text is its structured
    content without indentation: the same data in a quarter fewer bytes and tokens."""

    async def listing_and_search() -> Any:
        async with Client(build_server(_settings(repo))) as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search_code", {"query": "pool", "mode": "lexical"})
            return tools, found

    tools, found = anyio.run(listing_and_search)
    for tool in tools:
        assert "$ref" not in json.dumps(tool.output_schema), tool.name
    code = next(tool for tool in tools if tool.name == "search_code").output_schema
    line = code["properties"]["results"]["items"]["properties"]["match_lines"]["items"]
    assert line["required"] == ["line", "text"]
    assert not found.is_error and found.structured_content["results"]
    text = found.content[0].text
    assert json.loads(text) == found.structured_content
    assert not text.startswith("{\n") and len(text) < len(json.dumps(found.structured_content))


def test_a_schema_whose_definition_refers_to_itself_is_kept_as_it_is() -> None:
    tree = {
        "$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The top."}},
    }  # fmt: skip
    assert self_contained(tree) is tree
    flat = {
        "$defs": {"Leaf": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "properties": {"leaf": {"$ref": "#/$defs/Leaf", "description": "One leaf."}},
    }
    assert self_contained(flat) == {"properties": {"leaf": {
        "type": "object", "properties": {"name": {"type": "string"}}, "description": "One leaf."}}}  # fmt: skip


def test_search_text_finds_comments_docstrings_and_exact_messages(repo: Path) -> None:
    server = build_server(_settings(repo))
    found = ok(server, "search_text", {"query": "database pool", "limit": 5})
    assert found["mode"] == "fts"
    first = found["results"][0]
    assert (first["file_path"], first["line_number"], first["element_type"]) == (
        "pkg/pool.py", 6, "docstring",
    )  # fmt: skip
    assert 0 < first["rank"] <= 1 and "[MATCH]" in first["snippet"]
    assert {"file_path", "line_number", "element_type", "symbol_name", "content", "rank",
            "snippet"} <= set(first)  # fmt: skip
    literal = ok(
        server,
        "search_text",
        {"query": "Failed to acquire", "element_type": "string_literal", "mode": "literal"},
    )
    assert [(r["file_path"], r["line_number"], r["symbol_name"]) for r in literal["results"]] == [
        ("pkg/pool.py", 11, "ConnectionPool.acquire")
    ]
    comments = ok(server, "search_text", {"query": "slot", "element_type": "comment"})
    assert [r["line_number"] for r in comments["results"]] == [9]


def test_get_symbol_content_nth_reaches_a_setter_behind_its_getter(make_repo) -> None:
    root = make_repo({"box.py": GETTER_AND_SETTER})
    server = build_server(_settings(root))
    getter = ok(server, "get_symbol_content", {"name": "Box.size"})
    setter = ok(server, "get_symbol_content", {"name": "Box.size", "nth": 2})
    assert (getter["line_number"], setter["line_number"]) == (3, 7)
    assert "nth" in getter["warning"] and setter["others"] == ["method Box.size box.py:3"]
    assert "out of range: 2 symbols match" in error(
        server, "get_symbol_content", {"name": "Box.size", "nth": 3}
    )


def test_search_symbols_and_get_symbol_content_give_definitions_and_current_source(
    repo: Path,
) -> None:
    server = build_server(_settings(repo))
    found = ok(server, "search_symbols", {"query": "ConnectionPool"})
    best = found["results"][0]
    assert (best["qualified_name"], best["kind"], best["file_path"], best["line_number"]) == (
        "ConnectionPool", "class", "pkg/pool.py", 5,
    )  # fmt: skip
    assert best["doc"] == "A pool of database connections."
    methods = ok(server, "search_symbols", {"query": "acquire", "kind": "method"})
    assert [r["qualified_name"] for r in methods["results"]] == ["ConnectionPool.acquire"]
    globbed = ok(server, "search_symbols", {"query": "ConnectionPool.acq*"})
    assert globbed["results"] == [] and any(
        "no wildcards here" in notice and "'ConnectionPool.acq'" in notice
        for notice in globbed["notices"]
    ), globbed
    source = ok(server, "get_symbol_content", {"name": "ConnectionPool.acquire", "context": True})
    assert source["content"].startswith("    def acquire(self, timeout=None):")
    assert (source["line_number"], source["end_line"]) == (8, 12)
    assert source["parents"] == ["5: class ConnectionPool:"] or source["parents"][0].startswith(
        "5: class ConnectionPool"
    )
    assert source["imports"] == ["import os"]
    assert "did you mean: ConnectionPool" in error(
        server, "get_symbol_content", {"name": "Conectionpool"}
    )


def test_search_code_answers_a_question_in_words_with_filters_and_bounds(repo: Path) -> None:
    server = build_server(_settings(repo))
    found = ok(server, "search_code", {"query": "how do I get a free connection from the pool?"})
    best = found["results"][0]
    assert (best["name"], best["kind"], best["file_path"], best["line_number"]) == (
        "ConnectionPool.acquire", "method", "pkg/pool.py", 8,
    )  # fmt: skip
    assert best["end_line"] == 12 and 0 < best["score"] <= 1
    # the lines holding the question's words that the snippet (signature, comment) lacks
    assert best["match_lines"] == [
        {"line": 11, "text": 'raise ValueError("Failed to acquire connection: negative timeout")'}
    ]
    assert found["mode"] == "lexical" and found["truncated"] in (True, False)
    docs = ok(server, "search_code", {"query": "install from source", "language": "markdown"})
    assert [(r["file_path"], r["name"]) for r in docs["results"]][0] == (
        "docs/guide.md", "Guide > Install",
    )  # fmt: skip
    only = ok(server, "search_code", {"query": "connection", "path": "pkg/use.py"})
    assert {r["file_path"] for r in only["results"]} == {"pkg/use.py"}
    nothing = ok(server, "search_code", {"query": "zyxwvut"})
    assert nothing["results"] == [] and nothing["word_matches"] == 0
    assert "unknown kind" in error(server, "search_code", {"query": "pool", "kind": "bogus"})
    assert "limit" in error(server, "search_code", {"query": "pool", "limit": 0})
    assert "query" in error(server, "search_code", {"query": ""})


def test_get_repo_map_stays_within_its_token_budget(repo: Path) -> None:
    server = build_server(_settings(repo))
    small = ok(server, "get_repo_map", {"max_tokens": 40})
    assert small["tokens"] <= 40 == small["budget"]
    full = ok(server, "get_repo_map", {"max_tokens": 1024, "mentions": ["ConnectionPool"]})
    library = repomap.map(repo, tokens=1024, mentions=["ConnectionPool"])
    assert (full["text"], full["tokens"]) == (library.text, library.tokens)  # as `repomap map`
    assert full["files"][0] == "pkg/pool.py"
    assert "pkg/pool.py:" in full["text"] and "class ConnectionPool" in full["text"]
    assert full["unmatched_mentions"] == []
    assert ok(server, "get_repo_map", {"mentions": ["NoSuchName"]})["unmatched_mentions"] == [
        "NoSuchName"
    ]


def test_get_repo_map_takes_path_and_exclude_filters(repo: Path) -> None:
    server = build_server(_settings(repo))
    everything = ok(server, "get_repo_map", {"max_tokens": 1024})
    assert {"pkg/pool.py", "pkg/use.py"} <= set(everything["files"])
    only_use = ok(server, "get_repo_map", {"max_tokens": 1024, "path": "use.py"})
    assert only_use["files"] == ["pkg/use.py"]
    excluded = ok(server, "get_repo_map", {"max_tokens": 1024, "exclude": ["pool.py"]})
    assert "pkg/pool.py" not in excluded["files"] and "pkg/use.py" in excluded["files"]
    library = repomap.map(repo, tokens=1024, exclude=["pool.py"])
    assert excluded["text"] == library.text  # as `repomap map --exclude pool.py`
    assert "no indexed file matches" in error(server, "get_repo_map", {"path": "nowhere/"})
    assert "outside" in error(server, "get_repo_map", {"exclude": ["../x"]})


def test_docs_tools_find_sections_and_report_several_matches(repo: Path) -> None:
    server = build_server(_settings(repo))
    found = ok(server, "search_docs", {"query": "install"})
    assert {(r["file"], r["section"]) for r in found["results"]} >= {("README.md", "Install")}
    # the largest limit the schema allows (it was checked doubled: "not 2000")
    assert ok(server, "search_docs", {"query": "install", "limit": 1000})["results"]
    assert "got 1001" in error(server, "search_docs", {"query": "install", "limit": 1001})
    section = ok(server, "get_section", {"heading": "install"})
    assert (section["file"], section["start_line"]) == ("README.md", 5)
    assert section["content"].startswith("## Install")
    assert [m["file"] for m in section["matches"]] == ["README.md", "docs/guide.md"]
    assert any("2 headings match" in notice for notice in section["notices"])
    chosen = ok(server, "get_section", {"heading": "Install", "file": "docs/guide.md"})
    assert "From source" in chosen["content"]
    assert "similar" in error(server, "get_section", {"heading": "Instal"})


def test_gateway_tools_outline_read_list_and_find(repo: Path) -> None:
    server = build_server(_settings(repo))
    outline = ok(server, "outline", {"path": "pkg/pool.py"})
    assert [(e["kind"], e["name"]) for e in outline["files"][0]["entries"]] == [
        ("class", "ConnectionPool"), ("method", "acquire"), ("method", "release"),
        ("function", "make_pool"),
    ]  # fmt: skip
    lines = ok(server, "read_file", {"path": "config.yaml", "start_line": 2, "end_line": 3})
    assert (lines["content"], lines["start_line"], lines["end_line"]) == ("b: 2\nc: 3\n", 2, 3)
    assert (lines["total_lines"], lines["next_start_line"], lines["truncated"]) == (4, 4, False)
    assert lines["more_lines"] == 1  # the file goes on; the range asked for came back whole
    cut = ok(server, "read_file", {"path": "config.yaml", "start_line": 2, "max_lines": 1})
    assert (cut["content"], cut["truncated"], cut["next_start_line"]) == ("b: 2\n", True, 3)
    tree = ok(server, "list_sources", {})
    paths = [entry["path"] for entry in tree["entries"]]
    assert paths[:2] == ["docs/", "docs/guide.md"] and "config.yaml" in paths
    assert ok(server, "find_files", {"query": "pool"})["files"] == ["pkg/pool.py"]
    assert "binary" in error(server, "read_file", {"path": "data.bin"})
    # the advice names the tool that does it, not a command line (`repomap sources --dir pkg`)
    assert 'list_sources(dir="pkg")' in error(server, "read_file", {"path": "pkg"})
    assert "does not exist" in error(server, "read_file", {"path": "missing.py"})
    # a name over the system's 255 bytes: a clear error, not an internal one (a fuzz seed)
    assert "cannot be read: File name too long" in error(server, "read_file", {"path": "ı" * 200})


def test_index_status_and_help(repo: Path) -> None:
    (repo / "pkg" / "blob.py").write_bytes(b"\0\0binary")  # skipped: named, not only counted
    (repo / "pkg" / "latin.py").write_bytes(b"NAME = 'caf\xe9'\n")  # and why (not UTF-8)
    # never read as content, so never "unindexed" (an agent saw them listed as left out)
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "CMakeLists.txt").write_text("project(x)\n")
    server = build_server(_settings(repo))
    status = ok(server, "index_status")["roots"][0]
    assert (status["files"], status["docs"], status["symbols"]) == (3, 3, 5)
    assert status["unindexed_files"] == 2
    assert status["unindexed_paths"] == ["pkg/blob.py", "pkg/latin.py"]
    assert status["unindexed_reasons"] == {
        "pkg/blob.py": "binary (NUL bytes)",
        "pkg/latin.py": "not UTF-8 (invalid byte at offset 11)",
    }
    # and an outline of it says why, not "run `repomap index` to add it" (which skips it again)
    skipped = error(server, "outline", {"path": "pkg/latin.py"})
    assert "skips it (not UTF-8" in skipped and "to add it" not in skipped
    # by the index's own rules: its configured size limit and the noindex marker
    (repo / "repomap.toml").write_text("[index]\nmax_file_size = 1000\n")
    (repo / "pkg" / "big.py").write_text("X = 1\n" * 400)
    (repo / "pkg" / "quiet.py").write_text("# repomap: noindex\ndef hidden():\n    pass\n")
    reasons = ok(build_server(_settings(repo)), "index_status")["roots"][0]["unindexed_reasons"]
    assert reasons["pkg/big.py"] == "larger than the limit (1000 bytes)"
    assert reasons["pkg/quiet.py"].startswith("noindex marker")
    # the workers' own rule: a C file's invalid byte is read as U+FFFD, not skipped
    from repomap.gateway.files import skipped_because

    (repo / "latin.c").write_bytes(b"/* caf\xe9 */\nint f(void) { return 0; }\n")
    assert skipped_because(repo / "latin.c", repo, 1000) is None
    assert skipped_because(repo / "pkg" / "latin.py", repo, 1000).startswith("not UTF-8")
    assert status["schema_version"] == status["current_schema_version"] == store.SCHEMA_VERSION
    assert status["stale_count"] == 0 and status["indexed_at"]
    assert status["refresh"]["enabled"] is True
    help_text = ok(server, "mcp_help")["text"]
    for name in TOOLS - {"mcp_help"}:
        assert name in help_text
    assert "grep" in help_text and 'element_type="string_literal"' in help_text


# --- budgets -------------------------------------------------------------------------------------


def test_every_list_says_when_its_limit_cut_it_and_by_how_much(repo: Path) -> None:
    server = build_server(_settings(repo))
    symbols = ok(server, "search_symbols", {"query": "a", "limit": 1})
    assert symbols["truncated"] and symbols["more"] >= 1 and len(symbols["results"]) == 1
    text = ok(server, "search_text", {"query": "connection", "limit": 1})
    assert text["truncated"] and text["more"] == text["total"] - 1 >= 1
    outline = ok(server, "outline", {"limit": 3})
    assert outline["truncated"] and outline["more_entries"] >= 1
    assert sum(len(f["entries"]) for f in outline["files"]) == 3
    source = ok(server, "get_symbol_content", {"name": "ConnectionPool", "max_lines": 2})
    assert source["truncated"] and source["more_lines"] == 12 - 2
    assert len(source["content"].split("\n")) == 2
    lines = ok(server, "read_file", {"path": "pkg/pool.py", "max_lines": 2})
    assert (lines["end_line"], lines["next_start_line"], lines["more_lines"]) == (2, 3, 18)
    files = ok(server, "find_files", {"query": ".py", "limit": 1})
    assert (files["truncated"], files["more"], files["total"]) == (True, 2, 3)
    sources = ok(server, "list_sources", {"limit": 2})
    assert sources["truncated"] and sources["more"] >= 1 and len(sources["entries"]) == 2


# --- errors --------------------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("search_text", {"query": ""}, "at least 1 character"),
    ("search_text", {"query": "x" * 4097}, "at most 4096 characters"),
    ("search_text", {"query": "pool", "limit": 0}, "greater than or equal to 1"),
    ("search_text", {"query": "pool", "limit": 1001}, "less than or equal to 1000"),
    ("search_text", {"query": "pool", "limit": "many"}, "limit"),
    ("search_text", {"query": "pool", "element_type": "code"}, "element_type"),
    ("search_text", {"query": "pool", "mode": "regex"}, "mode"),
    ("search_text", {"query": "pool AND"}, "position"),
    ("search_text", {"query": '"unbalanced'}, "quote"),
    ("search_text", {"query": "   "}, "empty"),
    ("search_symbols", {"query": "pool", "kind": "banana"}, "kind"),
    ("search_symbols", {}, "query: Field required"),
    ("get_repo_map", {"max_tokens": 5}, "greater than or equal to 32"),
    ("read_file", {"path": "config.yaml", "start_line": 0}, "start_line"),
    ("read_file", {"path": "config.yaml", "start_line": 3, "end_line": 2}, "before start_line"),
    ("read_file", {"path": "config.yaml", "start_line": 99}, "past the end"),
    ("outline", {"level": 0}, "level"),
]


@pytest.mark.parametrize("tool, arguments, message", BAD_ARGUMENTS)
def test_invalid_arguments_are_tool_errors_with_a_clear_message(
    repo: Path, tool: str, arguments: dict, message: str
) -> None:
    server = build_server(_settings(repo))
    assert message in error(server, tool, arguments)
    assert ok(server, "search_symbols", {"query": "make_pool"})["results"]  # still serving


PATH_ESCAPES = [
    ("read_file", {"path": "../outside.txt"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("read_file", {"path": "link_out.txt"}),
    ("read_file", {"path": "pkg/../../outside.txt"}),
    ("outline", {"path": "../"}),
    ("list_sources", {"dir": "../.."}),
    ("get_section", {"heading": "Install", "file": "../outside.md"}),
    ("search_text", {"query": "secret", "path": "../"}),
    ("search_symbols", {"query": "x", "path": "/etc"}),
    ("search_symbols", {"query": "x", "path": "../**/*.py"}),
    ("get_symbol_content", {"name": "x", "file": "../../x.py"}),
    ("get_repo_map", {"focus_files": ["../outside.py"]}),
]


@pytest.mark.parametrize("tool, arguments", PATH_ESCAPES)
def test_paths_outside_the_root_are_refused(repo: Path, tool: str, arguments: dict) -> None:
    server = build_server(_settings(repo))
    result = call(server, tool, arguments)
    assert result.is_error
    text = result.content[0].text
    assert "outside" in text and "TOP SECRET" not in text


def test_advice_in_errors_and_notices_names_the_tools_not_command_lines() -> None:
    from repomap.serve.agent_wording import for_agents

    assert for_agents("`repomap files pool.py` searches file names") == (
        '`find_files(query="pool.py")` searches file names'
    )
    warning = "Pass --nth N (nth=N over MCP and HTTP) as numbered here, --file or a qualified name"
    assert for_agents(warning) == "Pass nth=N as numbered here, file or a qualified name"
    assert for_agents("run `repomap index --embed` (or use --mode lexical)") == (
        'run `repomap index --embed` (or use mode="lexical")'  # a command with no tool stays
    )
    assert for_agents("note: no indexed file matches --path srcc/") == (
        'note: no indexed file matches path="srcc/"'
    )
    assert for_agents("a `--file-name` stays") == "a `--file-name` stays"
    assert for_agents("`repomap open a.md` shows it, `repomap outline a.md` lists") == (
        '`read_file(path="a.md")` shows it, `outline(path="a.md")` lists'
    )


def test_the_literal_mode_is_advised_as_the_answering_tool_takes_it(repo: Path) -> None:
    # search_text advised `literal=true`, an argument it refuses; its mode says literal.
    server = build_server(_settings(repo))
    message = error(server, "search_text", {"query": "make_.*_v2\\("})
    assert '(mode="literal")' in message and "--literal" not in message
    assert ok(server, "search_text", {"query": "make_.*_v2\\(", "mode": "literal"})["results"] == []
    from repomap.search.querylang import LITERAL_HINT
    from repomap.serve.agent_wording import for_agents

    for path in (".", "./"):  # the root: no empty name, no command line
        message = error(server, "read_file", {"path": path})
        assert "the root is a directory; `list_sources()` lists what is in it" in message, path
    assert for_agents(LITERAL_HINT, "search_docs") == (
        'use a "quoted phrase" to search for exact text'  # search_docs has no literal mode
    )
    for tool in ("search_data", "search_commits"):  # exact unless ranked=true
        assert for_agents(LITERAL_HINT, tool) == (
            "use literal mode (ranked=false) to search for exact text"
        )


def test_a_symbols_long_lines_are_cut_as_read_file_cuts_them(repo: Path) -> None:
    # sqlite's 1.29 MB one-line constant came back whole from get_symbol_content (2.58 MB).
    (repo / "pkg" / "table.py").write_text("TABLE = [" + "1, " * 3000 + "]\n")
    server = build_server(_settings(repo))
    shown = ok(server, "get_symbol_content", {"name": "TABLE"})
    assert len(shown["content"]) < 2100 and shown["content"].endswith("(7010 more characters)")
    assert "1 line longer than 2000 characters cut" in shown["notices"]
    read = ok(server, "read_file", {"path": "pkg/table.py"})
    assert shown["content"] in read["content"]
    (repo / "pkg" / "edge.txt").write_text("x" * 2000 + "\n")  # at the bound: not cut
    edge = ok(server, "read_file", {"path": "pkg/edge.txt"})
    assert edge["content"] == "x" * 2000 + "\n" and not any("cut" in n for n in edge["notices"])


def test_secret_files_are_never_served(repo: Path) -> None:
    (repo / ".env").write_text("API_KEY=sk-live-1234567890abcdef\n")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (repo / "innocent.txt").symlink_to(repo / ".env")
    server = build_server(_settings(repo))
    for path in (".env", "deploy/id_rsa", "innocent.txt"):
        message = error(server, "read_file", {"path": path})
        assert "never indexes or serves" in message and "sk-live" not in message
    assert ok(server, "find_files", {"query": "env"})["files"] == []


def test_a_damaged_index_is_rebuilt_or_reported(repo: Path) -> None:
    settings = _settings(repo)
    settings.db_path.parent.mkdir(parents=True)
    settings.db_path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    message = error(build_server(settings, refresh=False), "search_symbols", {"query": "x"})
    assert "repomap index" in message
    found = ok(build_server(settings), "search_symbols", {"query": "make_pool"})
    assert found["results"][0]["qualified_name"] == "make_pool"
    assert any("damaged" in notice for notice in found["notices"])


def test_an_index_listing_a_path_outside_the_root_is_refused(repo: Path, index) -> None:
    index(repo)
    settings = _settings(repo)
    conn = sqlite3.connect(settings.db_path)
    conn.execute("UPDATE files SET path = '../outside.py' WHERE path = 'pkg/pool.py'")
    conn.commit()
    conn.close()
    server = build_server(settings, refresh=False)
    assert "outside the root" in error(server, "search_symbols", {"query": "ConnectionPool"})
    assert "outside" in error(server, "get_symbol_content", {"name": "ConnectionPool"})


def test_unknown_tools_are_tool_errors(repo: Path) -> None:
    assert "Unknown tool" in error(build_server(_settings(repo)), "drop_index", {})


# --- freshness and the read-only guarantee -------------------------------------------------------


def test_a_missing_index_is_built_on_first_use_and_the_answer_says_so(repo: Path) -> None:
    settings = _settings(repo)
    assert not settings.db_path.exists()
    found = ok(build_server(settings), "search_symbols", {"query": "make_pool"})
    assert settings.db_path.exists()
    assert any("built the index" in n and "first use" in n for n in found["notices"])
    assert found["results"][0]["qualified_name"] == "make_pool"


def test_changes_on_disk_are_reflected_in_the_next_call(repo: Path) -> None:
    server = build_server(_settings(repo))
    assert ok(server, "search_symbols", {"query": "make_pool"})["results"]
    (repo / "pkg" / "pool.py").write_text(
        (repo / "pkg" / "pool.py").read_text().replace("make_pool", "build_pool")
    )
    (repo / "pkg" / "sub").mkdir()
    (repo / "pkg" / "sub" / "extra.py").write_text("def brand_new():\n    return 1\n")
    (repo / "pkg" / "use.py").unlink()
    renamed = ok(server, "search_symbols", {"query": "build_pool"})
    assert [r["file_path"] for r in renamed["results"]] == ["pkg/pool.py"]
    assert any("re-indexed" in notice for notice in renamed["notices"])
    assert ok(server, "search_symbols", {"query": "make_pool"})["results"] == []
    assert ok(server, "search_symbols", {"query": "brand_new"})["results"][0]["file_path"] == (
        "pkg/sub/extra.py"
    )
    assert ok(server, "search_symbols", {"query": "main"})["results"] == []
    source = ok(server, "get_symbol_content", {"name": "build_pool"})
    assert source["content"].startswith("def build_pool():")


def test_no_refresh_never_writes_and_serves_the_index_as_it_is(repo: Path, index) -> None:
    index(repo)
    settings = _settings(repo)
    server = build_server(settings, refresh=False)
    before_db = hashlib.sha256(settings.db_path.read_bytes()).hexdigest()
    (repo / "pkg" / "pool.py").write_text("def only_on_disk():\n    pass\n")
    before_tree = _tree_hash(repo)
    calls = [
        ("search_text", {"query": "pool"}), ("search_symbols", {"query": "ConnectionPool"}),
        ("get_symbol_content", {"name": "make_pool"}), ("get_repo_map", {}),
        ("search_docs", {"query": "install"}), ("get_section", {"heading": "Usage"}),
        ("outline", {}), ("read_file", {"path": "README.md"}), ("list_sources", {}),
        ("find_files", {"query": "a"}), ("index_status", {}), ("mcp_help", {}),
        ("read_file", {"path": "../outside.txt"}), ("search_text", {"query": "AND"}),
    ]  # fmt: skip
    results = anyio.run(_calls, server, calls)
    assert [r.is_error for r in results].count(True) == 3  # changed file, escape, bad query
    assert "changed since it was indexed" in results[2].content[0].text
    assert results[1].structured_content["results"][0]["name"] == "ConnectionPool"
    status = results[10].structured_content["roots"][0]
    assert status["stale_files"] == ["pkg/pool.py"] and status["refresh"]["method"] == "off"
    assert hashlib.sha256(settings.db_path.read_bytes()).hexdigest() == before_db
    assert _tree_hash(repo) == before_tree
    # What a changed file holds now is not searched: an empty answer says so, naming it (an
    # agent's function appended to a file was "not found", unsaid)
    unread = (
        "nothing found in the index as it was made; these files changed since and were not"
        " read again (refresh is off), so what they hold now was not searched: pkg/pool.py"
    )
    for tool, arguments in [
        ("search_symbols", {"query": "only_on_disk"}), ("search_text", {"query": "only_on_disk"}),
        ("find_references", {"name": "ConnectionPool", "path": "pkg/pool.py"}),
    ]:  # fmt: skip
        assert unread in ok(server, tool, arguments)["notices"], tool
    assert unread not in ok(server, "search_symbols", {"query": "ConnectionPool"})["notices"]
    elsewhere = ok(server, "search_symbols", {"query": "only_on_disk", "path": "docs/"})
    assert not any("were not read again" in notice for notice in elsewhere["notices"])


def test_no_refresh_without_an_index_says_how_to_build_one(repo: Path) -> None:
    message = error(build_server(_settings(repo), refresh=False), "search_symbols", {"query": "x"})
    assert "repomap index" in message
    assert not (repo / ".repomap").exists()


# --- several roots -------------------------------------------------------------------------------


@pytest.fixture
def two_roots(make_repo, tmp_path: Path) -> tuple[Path, Path]:
    alpha = make_repo({"app.py": "def alpha_main():\n    pass\n"}, tmp_path / "alpha")
    beta = make_repo(
        {"lib.py": "def beta_util():\n    pass\n", "README.md": "# Beta\n"}, tmp_path / "beta"
    )
    return alpha, beta


def test_several_roots_name_paths_by_root_and_route_arguments(two_roots) -> None:
    alpha, beta = two_roots
    server = build_server([_settings(alpha), _settings(beta)])
    found = ok(server, "search_symbols", {"query": "main"})
    assert [r["file_path"] for r in found["results"]] == ["alpha/app.py"]
    assert ok(server, "search_symbols", {"query": "util", "path": "alpha/"})["results"] == []
    assert ok(server, "read_file", {"path": "beta/lib.py"})["content"].startswith("def beta_util")
    assert ok(server, "read_file", {"path": str(beta / "lib.py")})["path"] == "beta/lib.py"
    assert "alpha/" in error(server, "read_file", {"path": "lib.py"})
    assert ok(server, "find_files", {"query": ".py"})["files"] == ["alpha/app.py", "beta/lib.py"]
    listing = ok(server, "list_sources", {})
    assert [e["path"] for e in listing["entries"]] == [
        "alpha/", "alpha/app.py", "beta/", "beta/README.md", "beta/lib.py",
    ]  # fmt: skip
    repo_map = ok(server, "get_repo_map", {"max_tokens": 256})
    assert set(repo_map["files"]) == {"alpha/app.py", "beta/lib.py"}
    assert "alpha/app.py:" in repo_map["text"] and repo_map["tokens"] <= 256
    assert [r["label"] for r in ok(server, "index_status")["roots"]] == ["alpha", "beta"]
    # A path filter names one root by its label, or applies in each root it matches.
    assert ok(server, "get_repo_map", {"path": "beta/"})["files"] == ["beta/lib.py"]
    assert ok(server, "get_repo_map", {"path": "app.py"})["files"] == ["alpha/app.py"]
    assert ok(server, "get_repo_map", {"exclude": ["alpha/"]})["files"] == ["beta/lib.py"]
    assert "no indexed file matches" in error(server, "get_repo_map", {"path": "nope.py"})
    source = ok(server, "get_symbol_content", {"name": "beta_util"})
    assert source["file_path"] == "beta/lib.py"


def test_nth_counts_one_roots_matches_after_anothers(make_repo, tmp_path: Path) -> None:
    alpha = make_repo({"a.py": "def run():\n    pass\n"}, tmp_path / "alpha")
    beta = make_repo(
        {"b.py": "def run():\n    pass\n\n\ndef run():\n    pass\n"}, tmp_path / "beta"
    )
    server = build_server([_settings(alpha), _settings(beta)])
    found = [ok(server, "get_symbol_content", {"name": "run", "nth": n}) for n in (1, 2, 3)]
    assert [(s["file_path"], s["line_number"]) for s in found] == [
        ("alpha/a.py", 1), ("beta/b.py", 1), ("beta/b.py", 5),
    ]  # fmt: skip
    assert "3 symbols match 'run' in 2 roots" in error(
        server, "get_symbol_content", {"name": "run", "nth": 4}
    )
    # the warning lists every root's matches, each path with its root, numbered as nth counts
    # (it listed the first root's alone, without `alpha/`)
    assert found[0]["warning"] == (
        "3 symbols match 'run' in 2 roots; showing [1] function run alpha/a.py:1. Others: "
        "[2] function run beta/b.py:1; [3] function run beta/b.py:5. Pass nth=N as numbered "
        "here, file or a qualified name to choose."
    )
    assert found[2]["warning"].startswith("3 symbols match 'run' in 2 roots; showing [3]")
    # and `others` names them as the warning does (it gave `b.py:1`, without `beta/`)
    assert found[0]["others"] == ["function run beta/b.py:1", "function run beta/b.py:5"]
    assert found[2]["others"] == ["function run alpha/a.py:1", "function run beta/b.py:1"]
    # `!label/...` leaves that root's files out, the other roots whole
    beta_only = ok(server, "search_symbols", {"query": "run", "path": "!alpha/a.py"})
    assert {r["file_path"] for r in beta_only["results"]} == {"beta/b.py"}
    lone = make_repo({"c.py": "def solo():\n    pass\n"}, tmp_path / "gamma")
    single = build_server([_settings(lone), _settings(alpha)])
    assert ok(single, "get_symbol_content", {"name": "solo"}).get("warning") is None


def test_two_roots_merge_symbols_as_one_orders_them_and_suggest_from_both(
    make_repo, tmp_path: Path
) -> None:
    # An MCP agent user (redis + rich): the merge put rich's variable `style` above its class
    # `Style` (sorted by fewer keys than one root's order), and a name no root had got the
    # first root's suggestions alone (redis's widths for rich's `Console.widht`).
    alpha = make_repo(
        {"geo.c": "struct GeoShape { int width; };\nint shape_width(void) { return 1; }\n"},
        tmp_path / "alpha",
    )
    beta = make_repo(
        {
            "console.py": "class Console:\n    def width(self):\n        return 80\n",
            "style.py": "class Style:\n    pass\n",
            "win.py": "style = None\n",
        },
        tmp_path / "beta",
    )
    for order in ([alpha, beta], [beta, alpha]):
        server = build_server([_settings(root) for root in order])
        for query in ("Style", "Style "):  # as typed, and as each root's search reads it
            top = ok(server, "search_symbols", {"query": query, "limit": 1})["results"]
            assert [(r["name"], r["kind"]) for r in top] == [("Style", "class")], order
        message = error(server, "get_symbol_content", {"name": "Console.widht"})
        assert "in 2 roots" in message and "Console.width" in message, message
    missing = error(server, "get_symbol_content", {"name": "Console", "file": "nomatch/**"})
    assert "(no indexed file matches it)" in missing


def test_symbols_from_files_changed_since_indexing_say_so(repo: Path, index) -> None:
    index(repo)
    server = build_server(_settings(repo), refresh=False)
    (repo / "pkg" / "use.py").unlink()
    found = ok(server, "search_symbols", {"query": "main"})
    assert [r["file_path"] for r in found["results"]] == ["pkg/use.py"]
    assert (
        "changed since indexing, so their line numbers may be off: pkg/use.py" in (found["notices"])
    )
    (repo / "pkg" / "use.py").write_text("def main():\n    return 1\n")
    (repo / "pkg" / "pool.py").write_text("# edited\n" + (repo / "pkg" / "pool.py").read_text())
    one = ok(server, "search_symbols", {"query": "main", "limit": 1})  # not the probe's more
    assert one["notices"] == [
        "changed since indexing, so their line numbers may be off: pkg/use.py"
    ]


def test_roots_inside_one_another_are_refused(two_roots) -> None:
    alpha, _ = two_roots
    (alpha / "inner").mkdir()
    with pytest.raises(BadArgument, match="inside"):
        build_server([_settings(alpha), _settings(alpha / "inner")])


# --- the log -------------------------------------------------------------------------------------


def test_tool_calls_are_logged_and_summarized_by_repomap_stats(repo: Path) -> None:
    server = build_server(_settings(repo))
    calls = [
        ("search_symbols", {"query": "ConnectionPool"}),
        ("search_symbols", {"query": "pool", "limit": 0}),
        ("read_file", {"path": "../outside.txt"}),
    ]
    anyio.run(_calls, server, calls)
    log_file = repo / ".repomap" / "index-search-log.jsonl"
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    tools = [e for e in events if e["kind"] == "tool"]
    assert [(e["tool"], e["arguments"], e["result_count"]) for e in tools] == [
        ("search_symbols", {"query": "ConnectionPool"}, 1),
        ("search_symbols", {"query": "pool", "limit": 0}, None),
        ("read_file", {"path": "../outside.txt"}, None),
    ]
    assert tools[0]["error"] is None and "greater than or equal to 1" in tools[1]["error"]
    assert all(e["ms"] > 0 for e in tools)
    stats = run_cli("stats", "--root", repo, "--json")
    assert stats.returncode == 0, stats.stderr
    usage = {t["name"]: t for t in json.loads(stats.stdout)["results"] if t["kind"] == "tool"}
    assert (usage["search_symbols"]["calls"], usage["search_symbols"]["errors"]) == (2, 1)
    assert usage["read_file"]["errors"] == 1


# --- the real server over stdio ------------------------------------------------------------------


def _stdio(root: Path, *options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "repomap.cli", "mcp", "--root", str(root), *options],
        env={**os.environ, "REPOMAP_WORKERS": "1"},
    )


def test_repomap_mcp_over_stdio_builds_answers_every_tool_and_survives_bad_calls(
    repo: Path,
) -> None:
    calls = [
        ("search_symbols", {"query": "ConnectionPool"}),
        ("search_text", {"query": "negative timeout", "element_type": "string_literal"}),
        ("get_symbol_content", {"name": "make_pool"}),
        ("get_repo_map", {"max_tokens": 128}),
        ("search_docs", {"query": "configure"}),
        ("get_section", {"heading": "Usage"}),
        ("outline", {"path": "README.md"}),
        ("read_file", {"path": "notes.txt"}),
        ("list_sources", {"dir": "pkg"}),
        ("find_files", {"query": "guide"}),
        ("index_status", {}),
        ("mcp_help", {}),
        ("search_text", {"query": ""}),
        ("read_file", {"path": "../outside.txt"}),
        ("search_symbols", {"query": "x", "limit": 5000}),
        ("no_such_tool", {}),
        ("search_symbols", {"query": "release"}),
    ]

    async def session() -> tuple[list, list]:
        async with Client(_stdio(repo)) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, args) for name, args in calls]

    tools, results = anyio.run(session)
    assert {tool.name for tool in tools} == TOOLS
    assert all(tool.input_schema["type"] == "object" for tool in tools)
    data = [r.structured_content for r in results]
    assert any("first use" in n for n in data[0]["notices"])
    assert data[0]["results"][0]["line_number"] == 5
    assert data[1]["results"][0]["line_number"] == 11
    assert data[2]["content"].startswith("def make_pool():")
    assert data[3]["tokens"] <= 128 and data[3]["files"]
    assert data[4]["results"][0]["file"] in ("README.md", "notes.txt")
    assert data[5]["content"].startswith("## Usage")
    assert [e["name"] for e in data[6]["files"][0]["entries"]] == ["Demo", "Install", "Usage"]
    assert data[7]["content"] == "plain notes about configuring\n"
    assert [e["path"] for e in data[8]["entries"]] == [
        "pkg/__init__.py",
        "pkg/pool.py",
        "pkg/use.py",
    ]
    assert data[9]["files"] == ["docs/guide.md"]
    assert data[10]["roots"][0]["symbols"] == 5
    assert "search_symbols" in data[11]["text"]
    assert [r.is_error for r in results[12:16]] == [True] * 4
    assert "TOP SECRET" not in results[13].content[0].text
    assert data[16]["results"][0]["qualified_name"] == "ConnectionPool.release"  # still serving


def test_repomap_mcp_over_stdio_reflects_a_changed_file_in_the_next_call(repo: Path) -> None:
    async def session() -> tuple[dict, dict, dict]:
        async with Client(_stdio(repo)) as client:
            before = await client.call_tool("search_symbols", {"query": "release"})
            path = repo / "pkg" / "pool.py"
            path.write_text(path.read_text().replace("def release", "def give_back"))
            after = await client.call_tool("search_symbols", {"query": "give_back"})
            gone = await client.call_tool("search_symbols", {"query": "release"})
            return before.structured_content, after.structured_content, gone.structured_content

    before, after, gone = anyio.run(session)
    assert before["results"][0]["qualified_name"] == "ConnectionPool.release"
    assert after["results"][0]["qualified_name"] == "ConnectionPool.give_back"
    assert gone["results"] == []


# --- arbitrary input -----------------------------------------------------------------------------

TEXT_TOOLS = [
    ("search_text", "query"), ("search_symbols", "query"), ("get_symbol_content", "name"),
    ("search_docs", "query"), ("get_section", "heading"), ("read_file", "path"),
    ("outline", "path"), ("list_sources", "dir"), ("find_files", "query"),
]  # fmt: skip


@pytest.fixture(scope="module")
def warm_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("fuzz") / "repo"
    for rel_path, body in FILES.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body if isinstance(body, bytes) else body.encode())
    server = build_server(_settings(root))
    anyio.run(_calls, server, [("index_status", {})])
    return server


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(TEXT_TOOLS),
    text=st.text(min_size=1, max_size=300),
    number=st.integers(min_value=-(2**40), max_value=2**40),
)
def test_any_argument_gets_an_answer_or_a_clean_tool_error(
    warm_server: Any, tool: tuple[str, str], text: str, number: int
) -> None:
    name, parameter = tool
    arguments: dict[str, Any] = {parameter: text}
    if name in ("search_text", "search_symbols", "search_docs", "find_files"):
        arguments["limit"] = number
    result = anyio.run(_calls, warm_server, [(name, arguments)])[0]
    if result.is_error:
        message = result.content[0].text
        assert message and not message.startswith("Error executing tool")  # never a crash
    else:
        assert result.structured_content is not None


def test_repomap_mcp_refuses_bad_root_options_before_serving(two_roots, tmp_path: Path) -> None:
    alpha, beta = two_roots
    both_with_db = run_cli("mcp", "--root", alpha, "--root", beta, "--db", tmp_path / "x.db")
    assert both_with_db.returncode == 2
    assert "--db takes a single --root" in both_with_db.stderr
    (alpha / "inner").mkdir()
    nested = run_cli("mcp", "--root", alpha, "--root", alpha / "inner")
    assert nested.returncode != 0 and "inside" in nested.stderr
    assert nested.stderr.startswith("error: ") and "Traceback" not in nested.stderr


def test_the_server_says_its_version(repo: Path) -> None:
    from importlib.metadata import version

    result = call(build_server(_settings(repo)), "mcp_help")
    assert result.meta["io.modelcontextprotocol/serverInfo"] == {
        "name": "repomap",
        "version": version("repomap"),
    }


def test_an_unknown_argument_is_an_error_naming_it_and_the_valid_ones(repo: Path) -> None:
    server = build_server(_settings(repo))
    message = error(server, "search_text", {"query": "pool", "limt": 5})
    assert message == (
        "search_text does not take limt; it takes: element_type, ignore_case, language, limit, "
        "mode, path, query"
    )
    assert error(server, "index_status", {"verbose": True}) == (
        "index_status does not take verbose; it takes: no arguments"
    )
    assert ok(server, "search_text", {"query": "pool", "limit": 5})["results"] is not None


def test_find_references_says_who_uses_a_name(repo: Path) -> None:
    """An agent asked "what calls make_pool" and no tool could say (a user's report): each
    definition that uses the name, with its line as on disk; a qualified name's last part."""
    server = build_server(_settings(repo))
    found = ok(server, "find_references", {"name": "make_pool"})
    assert found["name"] == "make_pool" and found["truncated"] is False
    assert [
        (r["file_path"], r["line_number"], r["in_symbol"], r["text"]) for r in found["results"]
    ] == [
        ("pkg/use.py", 1, None, "from pkg.pool import ConnectionPool, make_pool"),
        ("pkg/use.py", 5, "main", "pool = make_pool()"),
    ]
    acquire = ok(server, "find_references", {"name": "ConnectionPool.acquire"})
    assert [(r["file_path"], r["in_symbol"]) for r in acquire["results"]] == [
        ("pkg/use.py", "main")
    ]
    assert any("'ConnectionPool.' is not checked" in notice for notice in acquire["notices"])
    assert ok(server, "find_references", {"name": "make_pool", "path": "docs/"})["results"] == []
    # a path that names no indexed file says so, here and in search_symbols (a silent [] read
    # as "no such name")
    for tool, arguments in (("find_references", {"name": "make_pool"}),
                            ("search_symbols", {"query": "make_pool"}),
                            ("search_text", {"query": "connection"}),
                            ("search_code", {"query": "connection pool"})):  # fmt: skip
        empty = ok(server, tool, {**arguments, "path": "pkgg/"})
        assert empty["results"] == [] and "no indexed file matches path 'pkgg/'" in empty["notices"]
    assert "not a name" in error(server, "find_references", {"name": "a b("})


def test_answers_from_files_changed_since_indexing_say_their_lines_may_be_off(
    repo: Path, index
) -> None:
    # A server told not to refresh gave search_text's and find_references' old line numbers
    # for a file edited since, and said nothing (get_symbol_content refuses, search_code warns).
    index(repo)
    server = build_server(_settings(repo), refresh=False)
    note = "changed since indexing, so their line numbers may be off: pkg/pool.py"
    for tool, arguments in (("search_text", {"query": "connection slot"}),
                            ("find_references", {"name": "ConnectionPool"})):  # fmt: skip
        assert not any(note in n for n in ok(server, tool, arguments)["notices"]), tool
    pool = repo / "pkg" / "pool.py"
    pool.write_text("# a new first line\n" + pool.read_text())
    for tool, arguments in (("search_text", {"query": "connection slot"}),
                            ("find_references", {"name": "ConnectionPool"})):  # fmt: skip
        answer = ok(server, tool, arguments)
        assert answer["results"] and note in answer["notices"], (tool, answer["notices"])


def test_a_same_size_edit_with_its_mtime_put_back_is_read_again(repo: Path, index) -> None:
    """The size and mtime said unchanged, the bytes differed (`cp -p`, `rsync -t`): every
    get_symbol_content of the file failed ("run `repomap index`", which no MCP tool does and
    which read nothing), until the mtime moved. Now the file is read again and answered."""
    index(repo)
    server = build_server(_settings(repo))
    pool = repo / "pkg" / "pool.py"
    stat = pool.stat()
    pool.write_text(pool.read_text().replace("ConnectionPool()", "ConnectionPoo1()"))
    os.utime(pool, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert pool.stat().st_size == stat.st_size
    source = ok(server, "get_symbol_content", {"name": "make_pool"})
    assert "return ConnectionPoo1()" in source["content"]
    found = ok(server, "find_references", {"name": "ConnectionPoo1"})
    assert [r["file_path"] for r in found["results"]] == ["pkg/pool.py"]
    assert found["notices"] == []  # a reference the index holds: the file was indexed anew


def test_search_commits_says_when_the_index_holds_no_commits(repo: Path) -> None:
    # An empty answer on a tree that is no git repository read as "no such commit".
    server = build_server(_settings(repo))
    found = ok(server, "search_commits", {"query": "fix"})
    assert found["results"] == []
    assert any("holds no commits: " in notice and "git" in notice for notice in found["notices"])


def test_words_that_match_nothing_together_are_counted_alone_over_mcp(two_roots) -> None:
    # An agent's "emit a map in flow style" found no docs section and no word of why; the
    # counts come with an empty answer, and go when another root's answer is not empty.
    alpha, beta = two_roots
    (alpha / "NOTES.md").write_text("# Flow\n\nA map of the flow.\n")
    (alpha / "app.py").write_text("def alpha_main():\n    # emit the flow map\n    pass\n")
    (beta / "lib.py").write_text("def beta_util():\n    # emit a style sheet\n    pass\n")
    server = build_server([_settings(alpha), _settings(beta)])
    docs = ok(server, "search_docs", {"query": "flow style"})
    assert docs["results"] == []
    assert [n for n in docs["notices"] if "holding each alone: flow 1, style 0" in n]
    text = ok(server, "search_text", {"query": "emit style"})
    assert [r["file_path"] for r in text["results"]] == ["beta/lib.py"]
    assert not [n for n in text["notices"] if "holding each alone" in n]  # alpha's, dropped
    none = ok(server, "search_text", {"query": "emit zebra"})
    assert none["results"] == [] and [n for n in none["notices"] if "emit 1, zebra 0" in n]
