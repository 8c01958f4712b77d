"""Arbitrary input to every query entry point: the Python API, the CLI and the MCP tools. Each
answers or refuses with a clean error (a RepomapError; `error: …` on one line and a non-zero
exit; an MCP tool error that says what is wrong), never leaves the repository root, and never
changes the index (its file hashes the same before and after)."""

from __future__ import annotations

import hashlib
import os
import string
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from repomap.extractors.model import KINDS

from repomap import config, store
from repomap.cli.main import main
from repomap.errors import ExitCode, RepomapError
from repomap.gateway import files as gateway
from repomap.gateway import section
from repomap.gateway.show import get_symbol_content
from repomap.index import pipeline as indexer
from repomap.maps import repo_map as maps
from repomap.search import docs
from repomap.search import text as query
from repomap.search.symbols import find_symbol, search_symbols
from repomap.serve.mcp_server import build_server

EXAMPLES = int(os.environ.get("REPOMAP_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
MARKER = "OUTSIDE-THE-ROOT-MARKER"

FILES = {
    "pkg/pool.py": 'class ConnectionPool:\n    """A pool."""\n\n    def acquire(self):\n'
    '        # wait for a slot\n        raise ValueError("Failed to acquire")\n',
    "src/lib.rs": "/// A queue.\npub struct Queue;\nimpl Queue {\n    pub fn push(&self) {}\n}\n",
    "include/graph.h": "// A graph.\nclass Graph {\n public:\n  int Size() const;\n};\n",
    "README.md": "# Demo\n\nIntro.\n\n## Install\n\nRun pip install demo.\n",
    "notes.txt": "plain notes\n",
}

# Paths that try to leave the root, each a way seen in the wild.
ESCAPES = [
    "..", "../", "../..", "/", "/etc/passwd", "../outside.txt", "pkg/../../outside.txt",
    "./../outside.txt", "link_out.txt", "link_dir/outside.txt", "pkg/../../../../etc/passwd",
    "~", "~/.ssh/id_rsa", "\\..\\..\\outside.txt", "pkg/%2e%2e/%2e%2e/outside.txt",
    "file:///etc/passwd", "pkg//..//..//outside.txt", "\0", "pkg/\0/pool.py", ".env",
    "loop", "loop/x", "",
]  # fmt: skip
NUMBERS = st.one_of(
    st.integers(-5, 50),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**31, 2**63 - 1, 2**63, 10**20, 1000, 1001, 32768, 32769]),
)
TEXT = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.sampled_from([*"aZ_:./*?[]()\"'-^$~ \t\n", "\udcff", "é", "\u202e"])),
    st.sampled_from(["*", '"', "a AND", "NOT", "()", "NEAR(a b)", "a:b", "^x", "' OR 1=1 --"]),
)
PATHS = st.one_of(st.sampled_from(ESCAPES), TEXT)
ENUMS = st.one_of(st.text(max_size=12), st.sampled_from(["CLASS", "fn", "py", "c++", "ALL"]))


def _optional(strategy):
    return st.one_of(st.none(), strategy)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("inputs")
    (base / "outside.txt").write_text(f"{MARKER}\n")
    (base / "outside_dir").mkdir()
    (base / "outside_dir" / "outside.txt").write_text(f"{MARKER}\n")
    root = base / "repo"
    for rel_path, text in FILES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text)
    (root / ".env").write_text(f"TOKEN={MARKER}\n")
    (root / "link_out.txt").symlink_to(base / "outside.txt")
    (root / "link_dir").symlink_to(base / "outside_dir")
    (root / "loop").symlink_to("loop")
    indexer.run(config.resolve(root, workers=1))
    return root


def _db(root: Path) -> Path:
    return root / ".repomap" / "index.db"


def _index_hash(root: Path) -> str:
    """The index's bytes; a WAL beside it may exist (readers' bookkeeping) but must be empty."""
    db = _db(root)
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    return hashlib.sha256(db.read_bytes()).hexdigest()


@pytest.fixture
def unchanged_index(repo):
    before = _index_hash(repo)
    yield
    assert _index_hash(repo) == before, "a query changed the index"


def _never_outside(value) -> None:
    assert MARKER not in repr(value)


# --- the Python API --------------------------------------------------------------------------


def _api(call) -> object:
    """The call's answer, or None when it refused with a RepomapError (nothing else may escape)."""
    try:
        answer = call()
    except RepomapError as error:
        assert str(error)
        return None
    _never_outside(answer)
    return answer


def _query(root: Path, ask) -> object:
    """_api() over a read connection, as the CLI and the MCP server open it per call."""

    def call() -> object:
        with store.reading(_db(root)) as db:
            return ask(db)

    return _api(call)


@FUZZ
@given(
    text=TEXT,
    element_type=st.one_of(st.sampled_from(["all", "comment", "docstring"]), ENUMS),
    limit=NUMBERS,
    path=_optional(PATHS),
    language=_optional(st.one_of(st.sampled_from(["python", "rust", "cpp"]), ENUMS)),
    mode=st.one_of(st.sampled_from(["fts", "literal"]), ENUMS),
    ignore_case=st.booleans(),
)
def test_search_text_answers_or_refuses_cleanly(
    repo, unchanged_index, text, element_type, limit, path, language, mode, ignore_case
):
    _query(
        repo,
        lambda db: query.search_text(
            db, text, element_type, limit, path, language, mode, ignore_case, log=False
        ),
    )


@FUZZ
@given(
    text=TEXT,
    kind=_optional(st.one_of(st.sampled_from(KINDS), ENUMS)),
    language=_optional(ENUMS),
    path=_optional(PATHS),
    limit=NUMBERS,
)
def test_symbol_lookups_answer_or_refuse_cleanly(
    repo, unchanged_index, text, kind, language, path, limit
):
    _query(repo, lambda db: search_symbols(db, text, kind, language, path, limit))
    _query(repo, lambda db: find_symbol(db, text, path))


@FUZZ
@given(
    tokens=NUMBERS,
    focus=st.lists(PATHS, max_size=3),
    mentions=st.lists(TEXT, max_size=3),
)
def test_the_map_answers_or_refuses_cleanly(repo, unchanged_index, tokens, focus, mentions):
    _query(repo, lambda db: maps.repo_map(db, tokens, focus, mentions))


@FUZZ
@given(text=TEXT, limit=NUMBERS, heading=TEXT, file=_optional(PATHS), max_lines=_optional(NUMBERS))
def test_docs_answer_or_refuse_cleanly(
    repo, unchanged_index, text, limit, heading, file, max_lines
):
    _query(repo, lambda db: docs.search_docs(db, repo, text, limit))
    _query(repo, lambda db: section.show_section(db, repo, heading, file, max_lines))


@FUZZ
@given(
    path=PATHS,
    max_lines=_optional(NUMBERS),
    depth=_optional(NUMBERS),
    pattern=_optional(TEXT),
    limit=NUMBERS,
    level=_optional(NUMBERS),
)
def test_the_gateway_never_leaves_the_root(
    repo, unchanged_index, path, max_lines, depth, pattern, limit, level
):
    _api(lambda: gateway.open_file(repo, path, max_lines))
    _api(lambda: gateway.sources(repo, path or None, depth, pattern, limit))
    _api(lambda: gateway.find_files(repo, path, limit))
    _query(repo, lambda db: gateway.outline(db, repo, path, level))


@FUZZ
@given(name=TEXT, file=_optional(PATHS), max_lines=_optional(NUMBERS), context=st.booleans())
def test_symbol_source_answers_or_refuses_cleanly(
    repo, unchanged_index, name, file, max_lines, context
):
    _api(lambda: get_symbol_content(config.resolve(repo), name, file, max_lines, context))


@pytest.mark.parametrize("path", ESCAPES)
def test_every_escape_attempt_is_refused_or_stays_inside(repo, unchanged_index, path):
    _api(lambda: gateway.open_file(repo, path))
    _api(lambda: gateway.sources(repo, path or None))


# --- the CLI -----------------------------------------------------------------------------------

ARGUMENT_TEXT = TEXT.filter(lambda value: "\0" not in value)  # argv cannot hold NUL
ARGUMENT_PATHS = PATHS.filter(lambda value: "\0" not in value)


def _number(value: int) -> str:
    return str(value)


COMMANDS = {
    "search-text": lambda d: [
        d(ARGUMENT_TEXT),
        *d(st.sampled_from([[], ["--literal"]])),
        "--limit", _number(d(NUMBERS)),
        *d(st.sampled_from([[], ["--lang", d(ENUMS)], ["--path", d(ARGUMENT_PATHS)]])),
    ],
    "symbols": lambda d: [
        d(ARGUMENT_TEXT),
        "--limit", _number(d(NUMBERS)),
        *d(st.sampled_from([[], ["--kind", d(ENUMS)], ["--language", d(ENUMS)]])),
        *d(st.sampled_from([[], ["--path", d(ARGUMENT_PATHS)]])),
    ],
    "show": lambda d: d(st.sampled_from([
        [d(ARGUMENT_TEXT), "--max-lines", _number(d(NUMBERS))],
        [d(ARGUMENT_TEXT), "--file", d(ARGUMENT_PATHS)],
        ["--section", d(ARGUMENT_TEXT), "--file", d(ARGUMENT_PATHS)],
        ["--section", d(ARGUMENT_TEXT), "--max-lines", _number(d(NUMBERS))],
    ])),
    "map": lambda d: [
        "--tokens", _number(d(NUMBERS)),
        *d(st.sampled_from([[], ["--focus", d(ARGUMENT_PATHS)], ["--mention", d(ARGUMENT_TEXT)]])),
    ],
    "outline": lambda d: [d(ARGUMENT_PATHS), "--level", _number(d(NUMBERS))],
    "open": lambda d: [d(ARGUMENT_PATHS), "--max-lines", _number(d(NUMBERS))],
    "sources": lambda d: [
        "--dir", d(ARGUMENT_PATHS), "--depth", _number(d(NUMBERS)),
        "--limit", _number(d(NUMBERS)), "--format", d(st.one_of(st.just("json"), ENUMS)),
    ],
    "files": lambda d: [d(ARGUMENT_TEXT), "--limit", _number(d(NUMBERS))],
    "search-docs": lambda d: [d(ARGUMENT_TEXT), "--limit", _number(d(NUMBERS))],
}  # fmt: skip
WITH_DB = {"search-text", "symbols", "show", "map", "outline", "search-docs"}


@pytest.mark.parametrize("command", COMMANDS)
@FUZZ
@given(data=st.data())
def test_cli_commands_answer_or_fail_with_one_error_line(repo, unchanged_index, command, data):
    args = [command, *COMMANDS[command](data.draw), "--root", str(repo)]
    if command in WITH_DB:
        args += ["--db", str(_db(repo))]
    result = CliRunner().invoke(main, args, env={"REPOMAP_SEARCH_LOG": "0"})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
    )
    assert "Traceback" not in result.output
    _never_outside(result.output)
    code = _exit_code(result)
    if code == ExitCode.NO_MATCH:  # found nothing: no error, at most notes saying so
        assert "error: " not in result.stderr, (args, result.stderr)
    elif code != 0 or result.stderr.startswith("error: "):
        assert code in (ExitCode.ERROR, 130), (args, code)
        assert result.stderr.startswith("error: "), (args, result.stderr)
        assert result.stderr.count("\n") == 1, (args, result.stderr)


def _exit_code(result) -> int:
    """The process's exit code: Group.main returns it (Click's standalone_mode=False) and the
    `repomap` script passes it to sys.exit; CliRunner only sees sys.exit's."""
    if result.exit_code == 0 and isinstance(result.return_value, int):
        return result.return_value
    return result.exit_code


@pytest.mark.parametrize(
    "args, message",
    [
        (["symbols", "x", "--limit", str(10**23)], "error: Invalid value for '--limit'"),
        (["map", "--tokens", str(10**20)], "error: the token budget must be from 32 to 1000000"),
        (
            ["symbols", "x", "--kind", "bogus"],
            "error: unknown kind 'bogus'; use one of attribute, class",
        ),
    ],
)
def test_inputs_that_crashed_the_cli_get_one_error_line(repo, args, message):
    result = CliRunner().invoke(main, [*args, "--root", str(repo)])
    assert _exit_code(result) == ExitCode.USAGE
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_open_with_a_huge_max_lines_returns_the_file_at_once(repo):
    """It used to call readline() 10**20 times, growing a list of b"" until memory ran out."""
    result = CliRunner().invoke(main, ["open", "pkg/pool.py", "--max-lines", str(10**20),
                                       "--root", str(repo)])  # fmt: skip
    assert _exit_code(result) == 0
    assert result.stdout == FILES["pkg/pool.py"]


# --- the MCP tools -----------------------------------------------------------------------------

MCP_ARGUMENTS = {
    "search_text": lambda d: {
        "query": d(TEXT), "limit": d(NUMBERS),
        **d(st.sampled_from([{}, {"element_type": d(ENUMS)}, {"mode": d(ENUMS)},
                             {"path": d(PATHS)}, {"language": d(ENUMS)}])),
    },
    "search_symbols": lambda d: {
        "query": d(TEXT), "limit": d(NUMBERS),
        **d(st.sampled_from([{}, {"kind": d(ENUMS)}, {"language": d(ENUMS)}, {"path": d(PATHS)}])),
    },
    "get_symbol_content": lambda d: {"name": d(TEXT), "file": d(_optional(PATHS))},
    "get_repo_map": lambda d: {
        "max_tokens": d(NUMBERS), "mentions": d(st.lists(TEXT, max_size=2)),
        "focus_files": d(st.lists(PATHS, max_size=2)),
    },
    "search_docs": lambda d: {"query": d(TEXT), "limit": d(NUMBERS)},
    "get_section": lambda d: {"heading": d(TEXT), "file": d(_optional(PATHS))},
    "outline": lambda d: {"path": d(_optional(PATHS)), "level": d(NUMBERS)},
    "read_file": lambda d: {
        "path": d(PATHS), "start_line": d(NUMBERS), "end_line": d(_optional(NUMBERS)),
    },
    "list_sources": lambda d: {"directory": d(_optional(PATHS)), "depth": d(_optional(NUMBERS))},
    "find_files": lambda d: {"query": d(TEXT), "limit": d(NUMBERS)},
    "index_status": lambda d: {},
    "mcp_help": lambda d: {},
}  # fmt: skip


@FUZZ
@given(data=st.data())
def test_mcp_tools_answer_or_return_a_clean_tool_error(repo, unchanged_index, data):
    calls = [(name, MCP_ARGUMENTS[name](data.draw)) for name in MCP_ARGUMENTS]
    calls.append((data.draw(st.text(alphabet=string.ascii_lowercase + "_", max_size=12)), {}))
    calls.append(("search_text", {"query": "pool", "unexpected": data.draw(TEXT)}))
    server = build_server(config.resolve(repo), refresh=False)

    async def session() -> list:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    for (name, arguments), result in zip(calls, anyio.run(session), strict=True):
        text = result.content[0].text if result.content else ""
        _never_outside(result.structured_content)
        _never_outside(text)
        if result.is_error:
            assert text and "Traceback" not in text, (name, arguments, text)
            assert not text.startswith("Error executing tool"), (name, arguments, text)
            assert "internal error" not in text, (name, arguments, text)


def test_an_argument_that_is_not_utf8_is_refused_in_one_line(repo):
    """argv bytes that are not UTF-8 arrive as lone surrogates, which SQLite cannot bind."""
    result = CliRunner().invoke(main, ["symbols", "caf\udce9", "--root", str(repo)])
    assert _exit_code(result) == ExitCode.USAGE
    assert result.stderr == "error: argument 2 is not valid UTF-8 text\n"


def test_user_text_in_an_error_cannot_add_lines_or_terminal_escapes(repo):
    result = CliRunner().invoke(main, ["open", "a\nerror: forged\x1b[2J", "--root", str(repo)])
    assert _exit_code(result) == ExitCode.ERROR
    assert result.stderr.count("\n") == 1 and "\x1b" not in result.stderr
    assert result.stderr.startswith("error: a\\nerror: forged\\x1b[2J does not exist under")


def test_an_mcp_argument_with_a_lone_surrogate_is_a_tool_error(repo):
    server = build_server(config.resolve(repo), refresh=False)

    async def session():
        async with Client(server) as client:
            return await client.call_tool("search_symbols", {"query": "pool\ud800"})

    result = anyio.run(session)
    assert result.is_error
    assert result.content[0].text == "query holds a lone surrogate (it is not valid Unicode)"
