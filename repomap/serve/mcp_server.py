"""The MCP server: repomap's query tools for AI agents, read-only, inside an allowlist of roots.

    repomap mcp [--root ROOT ...] [--db PATH] [--transport stdio|http] [--host H] [--port P]
                [--no-refresh]

`build_server(settings, refresh=True) -> MCPServer` registers the tools (search_text,
search_code, search_symbols, find_references, get_symbol_content, get_repo_map, search_docs,
search_data,
search_commits, get_section, outline, read_file, list_sources, find_files, index_status,
mcp_help); `run(server, transport, host, port)` serves
them over stdio or streamable HTTP (on 127.0.0.1 unless told otherwise).

- Each tool's docstring is its description for the model: when to use it, and when another
  tool fits better. Parameters are typed and bounded (queries 1-4096 code points, limits
  1-1000, enums as literals), so a bad argument is rejected before the tool runs.
- Every failure reaches the model as a tool error (an `isError` result with a message that
  says what to do), never as a crash or a protocol error; the server keeps serving.
- Tools only read, through read-only connections: calls that need not wait run on the event
  loop, which keeps one connection per index and takes a new snapshot per call; calls that
  wait for a refresh or walk the tree run in a worker thread with a connection of their own.
  The only writer is the incremental refresh before a call (`repomap.freshness`), the
  pipeline of `repomap index`.
- The allowlist and how paths name several roots: `repomap.roots`.
- Every call is logged like searches (tool, arguments, result count, ms, error), for
  `repomap stats`; the logic behind each tool is in `repomap.mcp_service`.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import Field, ValidationError

from repomap.config import Settings
from repomap.errors import RepomapError
from repomap.index.vocabulary import KINDS
from repomap.search import log as searchlog
from repomap.serve.agent_wording import for_agents, reword_answer
from repomap.serve.mcp_models import (
    CodeSearchAnswer,
    CommitSearchAnswer,
    DataSearchAnswer,
    DocSearchAnswer,
    FileContent,
    FilesAnswer,
    HelpAnswer,
    OutlineAnswer,
    ReferenceSearch,
    RepoMapAnswer,
    Section,
    SourcesAnswer,
    StatusAnswer,
    SymbolSearch,
    SymbolSource,
    TextSearchAnswer,
    self_contained,
)
from repomap.serve.mcp_service import RetryInThread, Service, inline, touched
from repomap.serve.roots import Root, Roots

log = logging.getLogger(__name__)

HELP = """\
repomap answers from an index of this repository: every definition (functions, classes,
methods, structs, enums, traits...), every comment, docstring and string literal, and the
Markdown/.txt/.rst docs by section. It is read-only and kept up to date as files change.

Which tool:
- What code DOES, asked in words ("where is the retry delay computed?", "how are sessions
  signed?") -> search_code(question): definitions, module code and docs ranked by the
  question's words and meaning; then get_symbol_content(name) for the source.
- A definition by name (function/class/method/enum/struct/trait) -> search_symbols("QuerySet"),
  then get_symbol_content("QuerySet.filter") for its current source (context=true adds
  decorators, the enclosing class header and the imports it uses). A path as code writes it
  works too: "django.db.models.QuerySet" (through re-exports), "crate::db::Pool",
  "regex::Regex" (through `pub use`).
- Who calls a function, where a type, field or macro is used -> find_references("parse")
  (by name: same-named things elsewhere are listed too; path= narrows).
- A concept, design decision, TODO or explanation -> search_text("connection pool",
  element_type="comment" or "docstring").
- An error or log message -> search_text("Failed to open", element_type="string_literal",
  mode="literal") for the exact text; mode="fts" matches words in any order.
- Prose documentation (README, docs/) -> search_docs("install"), then get_section("Install").
- Orientation: what matters here -> get_repo_map(mentions=[names from your task],
  focus_files=[files you work on]); the parts of a file or folder -> outline(path); the
  file tree -> list_sources(dir); a file by name -> find_files("settings").
- Exact lines of any file -> read_file(path, start_line, end_line).
- A setting or fixture in data files (CSV/TSV, JSON/JSONL, TOML, YAML) -> search_data(
  "DEFAULT_AUTO_FIELD") or search_data("42", path="fixtures/", field="id"): exact text in keys
  (tool.ruff.lint.select) and values.
- When and why something changed, or who changed it -> search_commits("timeout",
  field="subject") (author=, since=, path= narrow it down).
- Files repomap does not index (JS, HTML, config...) -> find_files("*.js") or list_sources to
  find them, read_file to read them; grep/rg if you also have a shell.
- What is indexed and how fresh -> index_status().

Query syntax (search_text mode="fts", search_docs): words are ANDed in any order;
"exact phrase"; AND, OR, NOT in upper case, with parentheses; prefix* ; code such as
std::vector, self.pool or error: is matched as the phrase of its words; ConnectionPool also
finds connection_pool. mode="literal": exact, case-sensitive substring (ignore_case=true to
fold case), for text with punctuation that matters.

Budgets: limit, max_lines and max_tokens cap every answer; truncated=true and more=N say what
was left out. Paths are relative to the repository root (with several roots, they start with
the root's name); nothing outside the roots can be read. `notices` in an answer say when the
index was just built or updated.
"""

INSTRUCTIONS = (
    "repomap: a read-only index of this repository's definitions, comments, docstrings, "
    "string literals and Markdown docs. Prefer it to reading whole files: search_symbols / "
    "get_symbol_content for definitions, search_text for comments, docstrings and messages, "
    "get_repo_map / outline to orient yourself. Call mcp_help() for the full decision tree."
)

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

# Parameter types: the bounds are the schema, enforced before a tool runs.
Query = Annotated[
    str, Field(min_length=1, max_length=4096, description="The search text (1-4096 characters).")
]
PATH_DIALECT = (
    "a folder (django/db/), a file, a path tail (default.py, _transports/) or a glob "
    "(**/tests/**, *.rs); after a `!`, every file but those (!tests/); the same in every tool."
)
PathFilterArg = Annotated[
    str | None, Field(max_length=4096, description="Only these files: " + PATH_DIALECT)
]
Limit = Annotated[int, Field(ge=1, le=1000, description="Most results to return (1-1000).")]
MaxLines = Annotated[
    int | None,
    Field(ge=1, le=2000, description="Most lines to return (1-2000; default 400), then a marker."),
]
Language = Annotated[
    Literal["python", "rust", "c", "cpp"] | None, Field(description="Only files of this language.")
]
ElementType = Annotated[
    Literal["all", "comment", "docstring", "string_literal"],
    Field(description="Which text elements to search."),
]
Mode = Annotated[
    Literal["fts", "literal"],
    Field(description="fts: words, ranked (query syntax in mcp_help); literal: exact text."),
]
Kind = Annotated[
    Literal[KINDS] | None,  # type: ignore[valid-type]
    Field(description="Only definitions of this kind."),
]

# The list in each tool's result that counts as its result count in the log.
RESULT_KEYS = {
    "search_text": "results",
    "search_code": "results",
    "search_symbols": "results",
    "find_references": "results",
    "search_docs": "results",
    "search_data": "results",
    "search_commits": "results",
    "outline": "files",
    "list_sources": "entries",
    "find_files": "files",
    "get_repo_map": "files",
    "index_status": "roots",
}


class RepomapServer(MCPServer):
    """MCPServer whose tool calls are logged and whose failures all read as tool errors."""

    def __init__(self, service: Service, **options: Any) -> None:
        super().__init__(**options)
        self.service = service
        self._parameters: dict[str, set[str]] | None = None  # tool -> its argument names

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        started = time.perf_counter()
        result: Any = None
        error: str | None = None
        roots: list[Root] = []
        token = touched.set(roots)
        try:
            if bad := _not_unicode(arguments):  # JSON may carry "\ud800"; SQLite cannot bind it
                raise ToolError(f"{bad} holds a lone surrogate (it is not valid Unicode)")
            if unknown := await self._unknown_arguments(name, arguments):
                raise ToolError(unknown)
            result = compact(await super().call_tool(name, arguments, context), name)
            return result
        except UnexpectedToolError as failure:
            cause = failure.__cause__
            if isinstance(cause, RepomapError):  # anticipated: the message says what to do
                error = for_agents(str(cause), name)
                raise ToolError(error) from cause
            error = f"internal error: {type(cause).__name__}"
            raise
        except ToolError as failure:
            error = _argument_error(name, failure)
            raise ToolError(error) from failure
        finally:
            touched.reset(token)
            _log_call(roots or self.service.roots.all, name, arguments, result, error, started)

    async def list_tools(self) -> list[MCPTool]:
        """The tools, each output schema written out whole (mcp_models.self_contained)."""
        tools = await super().list_tools()
        for tool in tools:
            if tool.output_schema is not None:
                tool.output_schema = self_contained(tool.output_schema)
        return tools

    async def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        """An argument the tool does not take is an error naming it and the valid ones (the
        SDK dropped it silently, so a misspelled `limt` or `paht` did nothing)."""
        if self._parameters is None:
            self._parameters = {
                tool.name: set(tool.input_schema.get("properties", {}))
                for tool in await self.list_tools()
            }
        valid = self._parameters.get(name)
        unknown = sorted(set(arguments) - valid) if valid is not None else []
        if not unknown:
            return None
        takes = ", ".join(sorted(valid or ())) or "no arguments"
        return f"{name} does not take {', '.join(unknown)}; it takes: {takes}"


def compact(result: Any, tool: str | None = None) -> Any:
    """A tool's answer with its text as compact JSON. The SDK writes a model's text indented,
    a third more bytes than the data (search_code: 6.5 against 5.0 kB) and as many more tokens
    for the model that reads it; the structured content is the same data."""
    if isinstance(result, CallToolResult) and not result.is_error and result.structured_content:
        reword_answer(result.structured_content, tool)
        text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
        result.content = [TextContent(type="text", text=text)]
    return result


def _package_version() -> str:
    """The installed repomap's version, as clients see it in serverInfo."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("repomap")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


def _not_unicode(arguments: dict[str, Any]) -> str | None:
    """The first argument whose text cannot be encoded as UTF-8, if any."""
    for key, value in arguments.items():
        for text in value if isinstance(value, list) else [value]:
            try:
                if isinstance(text, str):
                    text.encode("utf-8")
            except UnicodeEncodeError:
                return key
    return None


def _argument_error(tool: str, failure: ToolError) -> str:
    """pydantic's validation report as one readable line per problem."""
    cause = failure.__cause__
    if not isinstance(cause, ValidationError):
        return str(failure).removeprefix(f"Error executing tool {tool}: ")
    problems = []
    for item in cause.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        shown = repr(item.get("input"))
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        problems.append(f"{where}: {item['msg']} (got {shown})")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def _log_call(
    roots: list[Root],
    tool: str,
    arguments: dict[str, Any],
    result: Any,
    error: str | None,
    started: float,
) -> None:
    """Append the call to the log beside the index of each root it read (never fails)."""
    ms = round((time.perf_counter() - started) * 1000, 3)
    shown = {
        key: value[: searchlog.MAX_FIELD] if isinstance(value, str) else value
        for key, value in arguments.items()
    }
    for root in roots:
        if root.settings.search_log:
            searchlog.log_event(
                "tool",
                index=root.settings.db_path,
                tool=tool,
                arguments=shown,
                result_count=_result_count(tool, result),
                ms=ms,
                error=error,
            )


def _result_count(tool: str, result: Any) -> int | None:
    if not isinstance(result, CallToolResult) or result.is_error:
        return None
    data = result.structured_content or {}
    key = RESULT_KEYS.get(tool)
    if key is None:
        return 1
    value = data.get(key)
    return len(value) if isinstance(value, list) else None


T = TypeVar("T")


async def answer(service: Service, method: Callable[..., T], *args: Any, walks: bool = False) -> T:
    """Run a tool's work on the event loop when it need not wait, else in a worker thread.

    A thread hop costs about a millisecond of CPU per call (measured: 2.3 against 1.2 ms of
    server CPU for an empty tool over stdio), and most calls are a few milliseconds of SQLite
    with nothing to wait for. A call that waits for the indexer, or walks the whole tree
    (`walks`), runs in a thread so the server stays responsive meanwhile.
    """
    if not walks and service.is_fresh():
        token = inline.set(True)
        try:
            return method(*args)
        except RetryInThread:
            pass
        finally:
            inline.reset(token)
    return await anyio.to_thread.run_sync(functools.partial(method, *args))


def build_server(
    settings: Settings | Sequence[Settings], *, refresh: bool = True, **refresh_options: float
) -> RepomapServer:
    """The MCP server over the indexes of `settings` (one per root); the roots are the allowlist."""
    items = [settings] if isinstance(settings, Settings) else list(settings)
    service = Service(Roots(items), refresh=refresh, **refresh_options)
    mcp = RepomapServer(
        service,
        name="repomap",
        version=_package_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    tool = mcp.tool(annotations=READ_ONLY)

    @tool
    async def search_text(
        query: Query,
        element_type: ElementType = "all",
        limit: Limit = 20,
        path: PathFilterArg = None,
        mode: Mode = "fts",
        language: Language = None,
        ignore_case: Annotated[
            bool, Field(description="literal mode: match regardless of case.")
        ] = False,
    ) -> TextSearchAnswer:
        """Search comments, docstrings and string literals of the code, best match first.

        Use it for concepts and explanations (element_type="comment" or "docstring"), TODOs,
        and error or log messages (element_type="string_literal"; mode="literal" finds exact
        text such as "Failed to open %s", case-sensitive). mode="fts" query syntax: words
        ANDed, "a phrase", AND/OR/NOT (upper case), parentheses, prefix*.
        Not for definitions by name: use search_symbols. Not for Markdown docs: search_docs.
        Each result: file_path, line_number, element_type, symbol_name (the enclosing or
        documented symbol), content, snippet with [MATCH]...[/MATCH], rank in (0, 1].
        Example: search_text("connection pool timeout", element_type="comment").
        """
        return await answer(
            service, service.search_text, query, element_type, limit, path, mode, language,
            ignore_case,
        )  # fmt: skip

    @tool
    async def search_code(
        query: Query,
        mode: Annotated[
            Literal["hybrid", "lexical", "semantic"] | None,
            Field(
                description="hybrid: words and meaning fused; lexical: BM25 over the "
                "definitions' words; semantic: the embedding model alone. Default: hybrid when "
                "the index has embeddings, else lexical (the answer's `mode` says which)."
            ),
        ] = None,
        path: PathFilterArg = None,
        language: Annotated[
            Literal[
                "python",
                "rust",
                "c",
                "cpp",
                "markdown",
                "text",
                "csv",
                "tsv",
                "json",
                "jsonl",
                "toml",
                "yaml",
            ]
            | None,
            Field(description="Only code of this language, or docs or data of this format."),
        ] = None,
        kind: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Only these kinds, comma-separated: function, method, macro, class, "
                "struct, enum, union, trait, impl, type (an alias outside a record), module (a "
                "file's top-level code), section (docs), data (a data file's records), commit.",
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Most results (1-1000).")] = 10,
    ) -> CodeSearchAnswer:
        """Find code by what it does, from a question in plain words.

        Ranks definitions (functions, methods, classes, structs, impls...), each file's
        module-level code and docs sections by the question's words (identifiers split,
        words stemmed: "parsing headers" meets parse_header_lines) and, in hybrid and semantic
        mode, by meaning. Tests and examples rank lower unless asked for or filtered to.
        Use it when you know what the code does but not its name; search_symbols when you
        know the name; search_text for exact comments, strings and error messages.
        Each result: file_path, line_number, end_line, kind, name, score in (0, 1], snippet
        (signature, docstring) and match_lines (up to 2 {line, text} holding the most of the
        question's words). Example: search_code("where is the password hashed?").
        """
        return await answer(
            service, service.search_code, query, mode, path, language, kind,
            limit,
        )  # fmt: skip

    @tool
    async def search_symbols(
        query: Query,
        kind: Kind = None,
        path: PathFilterArg = None,
        limit: Limit = 20,
        language: Language = None,
    ) -> SymbolSearch:
        """Find definitions (functions, classes, methods, structs, enums, traits, ...) by name.

        Matches the name or qualified name, case-insensitive: exact, then prefix, substring,
        fuzzy; among equals, names used from more files first. `Class.method` and `Type::fn`
        match qualified names. Each result: qualified_name, kind, file_path, line_number,
        end_line, signature, doc (the docstring's first line). `more` counts what the limit
        left out, exactly when more_exact, else at least that many: raise limit to see them.
        Then use get_symbol_content for the source. For words inside comments or strings use
        search_text; for a file by name use find_files.
        Example: search_symbols("QuerySet.filter") or search_symbols("lock", kind="method").
        """
        return await answer(service, service.search_symbols, query, kind, path, limit, language)

    @tool
    async def find_references(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="A name (`parse`, `m_errorCode`); of `Set::Match` or `self.run`, "
                "the last part.",
            ),
        ],
        path: PathFilterArg = None,
        limit: Limit = 50,
        language: Language = None,
    ) -> ReferenceSearch:
        """Where a name is used: calls, types named, field reads and writes, macro uses.

        Each result: file_path, line_number, in_symbol (the enclosing definition: who calls
        it), and the line's text; every line of a using definition that names it. Uses are
        matched by name, not resolved: other things of the same name are listed too (narrow
        with path; a qualifier such as `Set::` is not checked). A name whose uses are not
        indexed (a constant, a global variable, a C++ member, a local variable) is looked for
        in the code's text, and a notice says so. Comments and strings are not uses: for those use search_text. Example:
        find_references("parse_header", path="src/").
        """
        return await answer(service, service.find_references, name, path, limit, language)

    @tool
    async def get_symbol_content(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="A name or qualified name: filter, QuerySet.filter, Mutex::lock.",
            ),
        ],
        file: Annotated[
            str | None,
            Field(max_length=4096, description="Only this file, folder, path tail or glob."),
        ] = None,
        max_lines: MaxLines = None,
        context: Annotated[
            bool,
            Field(
                description="Add leading comments/decorators, enclosing class/impl headers and "
                "the imports the body uses."
            ),
        ] = False,
        nth: Annotated[
            int | None,
            Field(
                ge=1,
                le=1000,
                description="Which of several matches, as numbered in `warning` (1 = the best; "
                "with several roots, one root's matches after another's): a property's setter "
                "after its getter, an overload, a cfg variant in one file.",
            ),
        ] = None,
    ) -> SymbolSource:
        """The source of one definition, read from the file now, located through the index.

        Use it instead of reading a whole file once you know the symbol's name (from
        search_symbols, get_repo_map or outline). Several matches: the best one, with
        `warning` and `others` listing the rest (pass nth=, file= or a qualified name to
        choose).
        No match: an error with "did you mean" suggestions. A file changed since indexing is
        re-indexed first, so line numbers are never stale. For arbitrary line ranges use
        read_file. Example: get_symbol_content("QuerySet.filter", context=true).
        """
        return await answer(
            service, service.get_symbol_content, name, file, max_lines, context, nth
        )

    @tool
    async def get_repo_map(
        max_tokens: Annotated[
            int,
            Field(
                ge=32,
                le=32768,
                description="Hard maximum size of the map in estimated tokens (32-32768).",
            ),
        ] = 1024,
        focus_files: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=4096)]] | None,
            Field(
                max_length=100,
                description="Files you are working on: the map ranks toward them and leaves "
                "them out.",
            ),
        ] = None,
        mentions: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=256)]] | None,
            Field(
                max_length=100,
                description="Identifiers or file names from your task: the map ranks toward them.",
            ),
        ] = None,
        path: PathFilterArg = None,
        exclude: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=4096)]] | None,
            Field(
                max_length=100,
                description="Files to leave out of the map (path filters, e.g. tests/): "
                + PATH_DIALECT,
            ),
        ] = None,
    ) -> RepoMapAnswer:
        """The shape of the repository: its most important files and their key signatures.

        Files ranked by PageRank over who-uses-what, each with its top definitions as
        `line│signature` rows under their class/impl headers, never more than max_tokens.
        Use it first in an unfamiliar repository, and again with mentions (names from your
        task) and focus_files (what you are editing) to see what relates to them. For one
        file's or folder's full structure use outline; for a definition's body
        get_symbol_content. C/C++ functions show where they are defined; header prototypes of
        functions defined elsewhere and C/C++ #define macros rank after all other definitions,
        and definitions in test, benchmark, example, vendored and generated files and inline
        tests after those (unless mentioned); path and exclude choose the files shown (path="tests/" maps the tests,
        path="include/" a C library's prototypes). Example: get_repo_map(max_tokens=2048,
        mentions=["QuerySet"], exclude=["tests/"]).
        """
        return await answer(
            service, service.get_repo_map, max_tokens, focus_files, mentions, path, exclude
        )

    @tool
    async def search_docs(
        query: Query, limit: Limit = 10, path: PathFilterArg = None
    ) -> DocSearchAnswer:
        """Search the Markdown (.md), .txt and .rst documentation by section, best match first.

        Use it for prose: installation, usage, design notes, changelogs, READMEs. Words are
        ANDed and stemmed (configuring finds configure); same syntax as search_text. Each
        result: file, section (heading), snippet, line range. Then get_section(heading, file)
        for the whole section. For comments and docstrings in code use search_text.
        Example: search_docs("database migrations").
        """
        return await answer(service, service.search_docs, query, limit, path)

    @tool
    async def search_data(
        query: Query,
        path: PathFilterArg = None,
        key: Annotated[
            str | None,
            Field(max_length=4096, description="Only keys matching this glob: tool.ruff.*"),
        ] = None,
        field: Annotated[
            str | None,
            Field(max_length=4096, description="Only this field: key, value or a column name."),
        ] = None,
        ranked: Annotated[
            bool, Field(description="BM25 over words (search_text's syntax) instead of exact text.")
        ] = False,
        limit: Limit = 20,
    ) -> DataSearchAnswer:
        """Search data files: CSV/TSV rows, JSON Lines lines, and every JSON, TOML and YAML leaf
        by its key path (pyproject.toml, package.json, CI workflows, compose files, fixtures).

        Exact, case-sensitive text by default, in keys and values; results by file, then place
        in the file. Each result: id, file_path, key, line, fields, match_field, match_snippet.
        For code text use search_text. Example: search_data("DEFAULT_AUTO_FIELD").
        """
        return await answer(service, service.search_data, query, path, key, field, ranked, limit)

    @tool
    async def search_commits(
        query: Query,
        author: Annotated[
            str | None, Field(max_length=4096, description="Part of the author's `name <email>`.")
        ] = None,
        since: Annotated[
            str | None, Field(max_length=64, description="From this date (YYYY-MM-DD, UTC).")
        ] = None,
        until: Annotated[
            str | None, Field(max_length=64, description="Up to this date (YYYY-MM-DD, UTC).")
        ] = None,
        path: PathFilterArg = None,
        field: Annotated[
            Literal["author", "subject", "body", "paths"] | None,
            Field(description="Only this field of each commit."),
        ] = None,
        oldest_first: bool = False,
        ranked: Annotated[
            bool, Field(description="BM25 over words (search_text's syntax) instead of exact text.")
        ] = False,
        limit: Limit = 20,
    ) -> CommitSearchAnswer:
        """Search the commit history of HEAD: subject, body, author and changed paths.

        Exact, case-sensitive text by default; newest first. Use it for when and why something
        changed and who changed it; path= keeps commits that changed those files. Each result:
        id (hash), author, times (ISO 8601 UTC), subject, body, paths, match_field,
        match_snippet. Example: search_commits("timeout", since="2024-01-01").
        """
        return await answer(
            service, service.search_commits, query, author, since, until, path, field,
            oldest_first, ranked, limit, walks=True,
        )  # fmt: skip

    @tool
    async def get_section(
        heading: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="The heading text, case-insensitive, without the # marks.",
            ),
        ],
        file: Annotated[
            str | None,
            Field(max_length=4096, description="The Markdown files to look in: " + PATH_DIALECT),
        ] = None,
        max_lines: MaxLines = None,
        nth: Annotated[
            int | None,
            Field(
                ge=1,
                le=1000,
                description="Which of several matching headings (1 = the first, in path then "
                "line order): a heading repeated in one file too.",
            ),
        ] = None,
    ) -> Section:
        """One Markdown section (a heading and its text up to the next heading of its level).

        Use it after search_docs or outline to read just the part of a document you need.
        Several headings match: the first (path, then line order), with the others listed;
        pass nth= or file= to choose. None: an error listing similar headings.
        Example: get_section("Installation", file="README.md"), get_section("Example", nth=2).
        """
        return await answer(service, service.get_section, heading, file, max_lines, nth)

    @tool
    async def outline(
        path: Annotated[
            str | None,
            Field(
                max_length=4096,
                description="What to outline (default: the whole root): " + PATH_DIALECT,
            ),
        ] = None,
        level: Annotated[
            int | None,
            Field(ge=1, le=20, description="Heading levels / symbol nesting depth to show."),
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=1000, description="Most entries (headings and symbols).")
        ] = 200,
    ) -> OutlineAnswer:
        """The structure of files: symbols of code files and headings of Markdown, with lines.

        One tree per file (files in path order), entries as (depth, kind, name, start_line,
        end_line), from the index. One data file (JSON, TOML, YAML, CSV) named by its path:
        its key paths as a tree (object, array `steps[]`, key; line 0 where the format gives
        none). Use it to see what a file or folder contains before
        reading it; then get_symbol_content or read_file for the part you need. For the
        whole repository's important parts use get_repo_map instead.
        Example: outline("django/db/models/query.py", level=2).
        """
        return await answer(service, service.outline, path, level, limit, walks=path is None)

    @tool
    async def read_file(
        path: Annotated[
            str, Field(min_length=1, max_length=4096, description="A file inside the root.")
        ],
        start_line: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Last line (inclusive).")] = None,
        max_lines: MaxLines = None,
    ) -> FileContent:
        """Lines of any text file inside the root, as they are on disk (not only indexed files).

        Use it for an exact line range (from a search result's line_number, an outline, or a
        map row). At most max_lines lines (default 400); next_start_line says where to go on.
        For one definition prefer get_symbol_content; to find text prefer search_text.
        Example: read_file("setup.cfg", start_line=1, end_line=40).
        """
        return await answer(service, service.read_file, path, start_line, end_line, max_lines)

    @tool
    async def list_sources(
        dir: Annotated[
            str | None,
            Field(max_length=4096, description="A folder inside the root; default: the root."),
        ] = None,
        depth: Annotated[
            int | None,
            Field(ge=1, le=50, description="Levels to expand; default: as many as fit limit."),
        ] = None,
        pattern: Annotated[
            str | None,
            Field(
                max_length=1024,
                description="Only these files: " + PATH_DIALECT,
            ),
        ] = None,
        limit: Limit = 100,
    ) -> SourcesAnswer:
        """The tree of files under a folder (ignore rules applied), directories first.

        Folders deeper than depth are collapsed to a count of their files. Use it to see how
        a repository or folder is laid out; for a file by name use find_files, for what is
        inside files use outline. Example: list_sources(dir="src", depth=2).
        """
        return await answer(service, service.list_sources, dir, depth, pattern, limit, walks=True)

    @tool
    async def find_files(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description=(
                    "Part of a file name (literal); with / it matches the path; with *, ? or"
                    " [ also a glob (*.rs, src/**/test_*.py)."
                ),
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=1000, description="Most paths (1-1000).")] = 50,
        ignore_case: bool = False,
        path: PathFilterArg = None,
    ) -> FilesAnswer:
        """Files whose name contains the query (a literal substring) or match it as a glob, in
        path order.

        Covers every file under the root (ignore rules applied), indexed or not. Use it to
        find a file by (part of) its name; for definitions use search_symbols, for text in
        files search_text. Example: find_files("settings", ignore_case=true).
        """
        return await answer(
            service, service.find_files, query, limit, ignore_case, path, walks=True
        )

    @tool
    async def index_status() -> StatusAnswer:
        """What is indexed and how fresh it is, per root.

        Files, docs, symbols, references and text elements by type, when it was indexed, the
        schema version, files changed on disk since indexing, and how the server keeps it up
        to date. Use it when results look incomplete or out of date.
        """
        return await answer(service, service.index_status, walks=True)

    @tool
    async def mcp_help() -> HelpAnswer:
        """How to choose among repomap's tools (a decision tree), the query syntax and budgets.

        Call it once when you start using repomap.
        """
        return HelpAnswer(text=HELP)

    return mcp


def run(
    server: RepomapServer, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765
) -> None:
    """Serve over stdio (the default) or streamable HTTP at http://HOST:PORT/mcp; then stop the
    background embedders before the interpreter ends. A thread left inside onnxruntime when
    Python tears down aborts the process (SIGABRT, "terminate called without an active
    exception": a client that closed stdin while vectors were being made)."""
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        server.service.close()
