"""Python extraction: symbols, references, comments, docstrings and strings, and the fallback."""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize
from pathlib import Path

import pytest
from repomap.extractors import pylex
from repomap.extractors import python as py

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    import os

    LIMIT = 10  # upper bound
    greeting = ("hello "
                "world")


    class ConnectionPool(Base):
        """Pools connections.

            Indented detail.
        """

        # first line of a block
        # second line of a block
        def __init__(self, size: int = 3) -> None:  # trailing comment
            \'\'\'Make a pool.\'\'\'
            self.size = size
            self.label = f"size {size!r}: {'big' if size else 'small'}"
            self.pattern = rb'\\d+'
            self.url = u"http://x#not-a-comment"

        @property
        async def get(self):
            "Get one."
            return os.path.join("a", "b")

        class Inner:
            def method(self):
                pass


    def outer():
        def inner():
            return 'Failed to open %s: %d'
        return inner
    ''')


@pytest.fixture(scope="module")
def extraction():
    return py.extract(SOURCE.encode(), "pkg/pool.py")


@pytest.mark.parametrize(
    "qualified_name, kind, start_line, end_line, parent",
    [
        ("LIMIT", "constant", 4, 4, None),
        ("greeting", "variable", 5, 6, None),
        ("ConnectionPool", "class", 9, 31, None),
        ("ConnectionPool.__init__", "method", 17, 22, "ConnectionPool"),
        ("ConnectionPool.get", "method", 25, 27, "ConnectionPool"),
        ("ConnectionPool.Inner", "class", 29, 31, "ConnectionPool"),
        ("ConnectionPool.Inner.method", "method", 30, 31, "ConnectionPool.Inner"),
        ("outer", "function", 34, 37, None),
        ("outer.inner", "function", 35, 36, "outer"),
    ],
)
def test_symbols_have_qualified_names_kinds_lines_and_parents(
    extraction, qualified_name, kind, start_line, end_line, parent
):
    symbol = next(s for s in extraction.symbols if s.qualified_name == qualified_name)
    assert (symbol.kind, symbol.start_line, symbol.end_line, symbol.parent) == (
        kind,
        start_line,
        end_line,
        parent,
    )


@pytest.mark.parametrize(
    "qualified_name, signature",
    [
        ("ConnectionPool", "class ConnectionPool(Base)"),
        ("ConnectionPool.__init__", "def __init__(self, size: int = 3) -> None"),
        ("ConnectionPool.get", "async def get(self)"),
        ("LIMIT", "LIMIT = 10"),
    ],
)
def test_signatures_are_headers_without_body_or_comments(extraction, qualified_name, signature):
    assert (
        next(s for s in extraction.symbols if s.qualified_name == qualified_name).signature
        == signature
    )


def test_byte_offsets_slice_the_symbol_out_of_the_source(extraction):
    data = SOURCE.encode()
    symbol = next(s for s in extraction.symbols if s.qualified_name == "outer.inner")
    assert data[symbol.start_byte : symbol.end_byte].decode().startswith("def inner():")
    assert data[symbol.start_byte : symbol.end_byte].decode().endswith("'Failed to open %s: %d'")


def test_symbols_carry_their_docstrings(extraction):
    docs = {s.qualified_name: s.doc for s in extraction.symbols}
    assert docs["ConnectionPool"] == "Pools connections.\n\nIndented detail."
    assert docs["ConnectionPool.get"] == "Get one."
    assert docs["outer"] is None


@pytest.mark.parametrize(
    "element_type, content, line, symbol_name",
    [
        ("docstring", "Module docstring.", 1, "pkg.pool"),
        ("comment", "upper bound", 4, None),
        ("string_literal", "hello world", 5, None),
        ("docstring", "Pools connections.\n\nIndented detail.", 10, "ConnectionPool"),
        ("comment", "first line of a block\nsecond line of a block", 15, "ConnectionPool"),
        ("comment", "trailing comment", 17, "ConnectionPool.__init__"),
        ("docstring", "Make a pool.", 18, "ConnectionPool.__init__"),
        (
            "string_literal",
            "size {size!r}: {'big' if size else 'small'}",
            20,
            "ConnectionPool.__init__",
        ),
        ("string_literal", "\\d+", 21, "ConnectionPool.__init__"),
        ("string_literal", "http://x#not-a-comment", 22, "ConnectionPool.__init__"),
        ("docstring", "Get one.", 26, "ConnectionPool.get"),
        ("string_literal", "a", 27, "ConnectionPool.get"),
        ("string_literal", "b", 27, "ConnectionPool.get"),
        ("string_literal", "Failed to open %s: %d", 36, "outer.inner"),
    ],
)
def test_text_elements_lose_their_delimiters_and_keep_their_place(
    extraction, element_type, content, line, symbol_name
):
    found = [(t.element_type, t.content, t.line, t.symbol_name) for t in extraction.texts]
    assert (element_type, content, line, symbol_name) in found


def test_every_element_is_listed_once(extraction):
    assert len(extraction.texts) == 14


def test_references_name_used_identifiers_but_not_keywords_or_own_definitions(extraction):
    names = {(r.name, r.symbol) for r in extraction.references}
    assert ("os", "ConnectionPool.get") in names
    assert ("join", "ConnectionPool.get") in names
    assert ("Base", "ConnectionPool") in names
    assert not any(name in ("def", "return", "class", "if") for name, _ in names)
    assert ("inner", "outer.inner") not in names  # the definition itself
    assert ("inner", "outer") in names  # `return inner`


@pytest.mark.parametrize(
    "source, reason",
    [
        (
            b'print "hello"  # python 2\nclass Old:\n    "Doc."\n    def f(self):\n        exec "x"\n',
            "SyntaxError",
        ),
        (b"x = (" * 300 + b"1" + b")" * 300 + b"\ndef after():\n    'Still found.'\n", "nested"),
    ],
)
def test_files_ast_rejects_are_read_by_tree_sitter(source, reason):
    result = py.extract(source, "legacy.py")
    assert result.status == "fallback"
    assert result.note
    assert {s.qualified_name for s in result.symbols} >= (
        {"Old", "Old.f"} if reason == "SyntaxError" else {"after"}
    )
    contents = {t.content for t in result.texts}
    assert ("Doc." in contents) if reason == "SyntaxError" else ("Still found." in contents)


def test_nothing_raises_on_garbage():
    for source in (
        b"",
        b"\xff\xfe\x00garbage",
        b"'''unterminated",
        b"def f(:\n  pass",
        b"#" * 10000,
    ):
        py.extract(source, "bad.py")


# --- agreement with the standard library's tokenizer on real files -----------------------------


def _tokenize_tokens(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    comments, strings = [], []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.string))
        elif token.type == tokenize.STRING:
            strings.append((token.start[0], token.string))
    return comments, strings


def _lexer_tokens(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    comments, strings = [], []
    for token in pylex.lex(text):
        line = text.count("\n", 0, token.start) + 1
        (comments if token.is_comment else strings).append((line, text[token.start : token.end]))
    return comments, strings


def _python_files(root: Path, limit: int) -> list[Path]:
    return sorted(root.rglob("*.py"))[:limit]


def _assert_lexer_agrees_with_tokenize(paths: list[Path]) -> int:
    compared = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            expected = _tokenize_tokens(text)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        assert _lexer_tokens(text) == expected, path
        compared += 1
    return compared


def test_lexer_finds_exactly_the_comments_and_strings_tokenize_finds_in_our_own_code():
    root = Path(__file__).resolve().parents[1]
    paths = (
        _python_files(root / "repomap", 100)
        + _python_files(root / "extractors", 100)
        + _python_files(root / "tests", 100)
    )
    assert _assert_lexer_agrees_with_tokenize(paths) >= 10


def test_docstrings_match_ast_get_docstring_on_our_own_code():
    root = Path(__file__).resolve().parents[1]
    for path in _python_files(root / "repomap", 100):
        source = path.read_bytes()
        tree = ast.parse(source)
        expected = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                if doc and "\\" not in doc:
                    expected[(node.name, node.lineno)] = doc
        symbols = py.extract(source, str(path)).symbols
        found = {
            (s.name, s.start_line): s.doc for s in symbols if (s.name, s.start_line) in expected
        }
        assert found == expected, path


CORPUS = Path.home() / ".cache" / "repomap-corpora" / "python"


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.exists(), reason="Django corpus not fetched")
def test_lexer_agrees_with_tokenize_on_django():
    paths = sorted(CORPUS.rglob("*.py"))
    compared = _assert_lexer_agrees_with_tokenize(paths)
    assert compared > 2500


def test_match_statements_are_read_by_ast_with_their_cases() -> None:
    # `case` blocks have no position of their own in ast; the whole file was once lost to them.
    source = (
        textwrap.dedent(
            """
        def handle(command):
            match command:
                case ["go", direction]:
                    # move the player
                    def step():
                        return "moved"
                    return step()
                case _:
                    return "unknown command"
        """
        )
        .lstrip()
        .encode()
    )
    extraction = py.extract(source, "game.py")
    assert extraction.status == "ok", extraction.note
    assert [s.qualified_name for s in extraction.symbols] == ["handle", "handle.step"]
    texts = {t.content for t in extraction.texts}
    assert {"move the player", "moved", "unknown command"} <= texts


# Every statement and expression kind, with a comment and a string near each; the parts only
# newer grammars have are added when the running Python reads them.
GRAMMAR = '''
"""Module docstring."""
import os
from os import path as p
GLOBAL: int = 1  # AnnAssign
counter = 0  # Assign
counter += 1  # AugAssign
del p  # Delete
assert counter, "assert message"


class Shape:
    """A class."""

    sides = 3

    def area(self, *args, scale=1.0, **kwargs):
        """A method."""
        found = {x for x in args} or {1, 2}
        return [x * scale for x in args] or {k: v for k, v in kwargs.items()} or found


async def fetch(items):
    """An async function."""
    async with items as stream:  # AsyncWith
        async for item in stream:  # AsyncFor
            await item
    return (lambda x: x if x else -x)(len(items))


def generator(n):
    global GLOBAL
    total = 0

    def inner():
        nonlocal total
        total += 1

    for i in range(n):
        if i % 2 and not i or i > 3:
            continue
        elif (j := i) >= 2:
            yield j
        else:
            break
    while n > 0:
        n -= 1
        pass
    yield from (i for i in range(n))
    with open(os.devnull) as handle:
        handle.write(f"{n!r:>10} done")
    try:
        raise ValueError("bad value")
    except ValueError:
        pass
    finally:
        print(*[1, 2], sep="")
    items = [1, 2, 3][1:2], (4, 5), {"k": "v"}
    match items:
        case [first, *rest] if first:
            return "first"
        case {"k": value}:
            return value
        case Shape(sides=3) | None:
            return "shape"
        case _:
            return "other"
'''
GRAMMAR_311 = """

def groups():
    try:
        pass
    except* ValueError:  # TryStar
        pass
"""
GRAMMAR_312 = """

type Pair = tuple[int, int]  # TypeAlias


def first[T](items: list[T]) -> T:  # type parameters
    return items[0]
"""


def test_every_statement_and_expression_kind_of_this_python_is_read_by_ast() -> None:
    import sys

    source = GRAMMAR
    if sys.version_info >= (3, 11):
        source += GRAMMAR_311
    if sys.version_info >= (3, 12):
        source += GRAMMAR_312
    tree = ast.parse(source)
    seen = {type(node) for node in ast.walk(tree)}
    for base in (ast.stmt, ast.expr):
        missing = {kind.__name__ for kind in base.__subclasses__()} - {k.__name__ for k in seen}
        assert not missing, f"add {sorted(missing)} to GRAMMAR: this Python has them"
    extraction = py.extract(source.encode(), "grammar.py")
    assert extraction.status == "ok", extraction.note
    names = {s.qualified_name for s in extraction.symbols}
    assert {"Shape", "Shape.area", "fetch", "generator", "generator.inner"} <= names
    assert {"GLOBAL", "counter", "Shape.sides"} <= names  # assignments at module and class level
    assert "generator.total" not in names  # a function's locals are not symbols
    texts = {t.content for t in extraction.texts}
    assert {"assert message", "bad value", "A method.", "AsyncWith", "first"} <= texts


def test_a_file_ast_reads_but_the_reader_cannot_falls_back_to_tree_sitter(monkeypatch) -> None:
    def unknown_shape(tree: ast.Module, text: object) -> None:
        raise AttributeError("'NewNode' object has no attribute 'lineno'")

    monkeypatch.setattr(py, "_structure_from_ast", unknown_shape)
    extraction = py.extract(b"def kept():\n    '''Still here.'''\n", "new.py")
    assert extraction.status == "fallback"
    assert (
        extraction.note
        == "reading ast failed: AttributeError: 'NewNode' object has no attribute 'lineno'"
    )
    assert [s.qualified_name for s in extraction.symbols] == ["kept"]
    assert [t.content for t in extraction.texts] == ["Still here."]


# --- assignments: module-level names and class attributes, the same from both parsers ----------

ASSIGNMENTS = [
    ("DEFAULT_TIMEOUT = 30\n", [("DEFAULT_TIMEOUT", "constant", 1, "DEFAULT_TIMEOUT = 30")]),
    ('__all__ = ["a", "b"]\n', [("__all__", "variable", 1, '__all__ = ["a", "b"]')]),
    (
        "a, (b, *c) = [d, e] = f = g()\n",
        [
            ("a", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
            ("b", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
            ("c", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
            ("d", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
            ("e", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
            ("f", "variable", 1, "a, (b, *c) = [d, e] = f = g()"),
        ],
    ),
    ("x.y = 1\nz[0] = 2\nw += 3\nv: int\n", [("v", "variable", 4, "v: int")]),
    (
        "import typing\nPath: TypeAlias = str\nIds: typing.TypeAlias = list[int]\n",
        [
            ("Path", "type", 2, "Path: TypeAlias = str"),
            ("Ids", "type", 3, "Ids: typing.TypeAlias = list[int]"),
        ],
    ),
    (
        "class Config:\n    DEFAULT_TIMEOUT = 30\n    name: str\n    retries: int = 3\n"
        "    Alias: TypeAlias = int\n\n    def run(self):\n        local = 1\n        self.seen = local\n",
        [
            ("Config", "class", 1, "class Config"),
            ("Config.DEFAULT_TIMEOUT", "attribute", 2, "DEFAULT_TIMEOUT = 30"),
            ("Config.name", "attribute", 3, "name: str"),
            ("Config.retries", "attribute", 4, "retries: int = 3"),
            ("Config.Alias", "type", 5, "Alias: TypeAlias = int"),
            ("Config.run", "method", 7, "def run(self)"),
        ],
    ),
    (
        "def f():\n    class Local:\n        kind = 'x'\n    value = 1\n",
        [
            ("f", "function", 1, "def f()"),
            ("f.Local", "class", 2, "class Local"),
            ("f.Local.kind", "attribute", 3, "kind = 'x'"),
        ],
    ),
    (
        "try:\n    import json\nexcept ImportError:\n    json = None\nelse:\n    HAVE_JSON = True\n"
        "finally:\n    done = 1\nif json:\n    MODE = 'a'\nelif 1:\n    MODE = 'b'\n"
        "class K:\n    if MODE:\n        flag = 1\n    else:\n        flag = 2\n",
        [
            ("json", "variable", 4, "json = None"),
            ("HAVE_JSON", "constant", 6, "HAVE_JSON = True"),
            ("done", "variable", 8, "done = 1"),
            ("MODE", "constant", 10, "MODE = 'a'"),
            ("MODE", "constant", 12, "MODE = 'b'"),
            ("K", "class", 13, "class K"),
            ("K.flag", "attribute", 15, "flag = 1"),
            ("K.flag", "attribute", 17, "flag = 2"),
        ],
    ),
    (
        "URLS = [\n    'a',\n]\nLONG = '" + "x" * 100 + "'\n",
        [
            ("URLS", "constant", 1, "URLS = [ …"),
            ("LONG", "constant", 4, "LONG = '" + "x" * 72 + " …"),
        ],
    ),
]


def _by_tree_sitter(monkeypatch, source: bytes):
    def unknown_shape(tree: ast.Module, text: object) -> None:
        raise AttributeError("forced")

    monkeypatch.setattr(py, "_structure_from_ast", unknown_shape)
    extraction = py.extract(source, "m.py")
    assert extraction.status == "fallback"
    return extraction


@pytest.mark.parametrize("source, expected", ASSIGNMENTS)
def test_assignments_at_module_level_and_in_class_bodies_are_symbols(source, expected, monkeypatch):
    """`symbols DEFAULT_TIMEOUT` found nothing for a class attribute; ast and tree-sitter
    agree on every name, kind, line and signature."""
    found = py.extract(source.encode(), "m.py")
    assert found.status == "ok", found.note
    rows = [(s.qualified_name, s.kind, s.start_line, s.signature) for s in found.symbols]
    assert rows == expected
    fallback = _by_tree_sitter(monkeypatch, source.encode())
    assert [
        (s.qualified_name, s.kind, s.start_line, s.end_line, s.signature, s.parent)
        for s in fallback.symbols
    ] == [
        (s.qualified_name, s.kind, s.start_line, s.end_line, s.signature, s.parent)
        for s in found.symbols
    ]


def test_a_pep695_type_statement_is_a_type_from_either_parser(monkeypatch):
    source = b"type Pair[T] = tuple[T, T]\nclass C:\n    type Id = int\n"
    expected = [
        ("Pair", "type", 1, "type Pair[T] = tuple[T, T]"),
        ("C", "class", 2, "class C"),
        ("C.Id", "type", 3, "type Id = int"),
    ]
    found = py.extract(source, "m.py")  # ast from Python 3.12, tree-sitter before
    assert [
        (s.qualified_name, s.kind, s.start_line, s.signature) for s in found.symbols
    ] == expected
    fallback = _by_tree_sitter(monkeypatch, source)
    assert [
        (s.qualified_name, s.kind, s.start_line, s.signature) for s in fallback.symbols
    ] == expected


def test_an_overload_stub_is_a_declaration_from_either_parser(monkeypatch):
    source = (
        b"import typing\nfrom typing import overload\n\n"
        b"@overload  # noqa: F811\ndef apply(x: int) -> int: ...\n"
        b"@typing.overload\ndef apply(x: str) -> str: ...\n"
        b"@cache\ndef apply(x):\n    return x\n\n"
        b"class Box:\n"
        b"    @t.overload\n    @staticmethod\n    def get(k: int) -> int: ...\n"
        b"    @staticmethod\n    def get(k):\n        return k\n"
        b"@plum.overload\ndef area(r: float) -> float:\n    return r * r\n"
    )
    expected = [
        ("apply", 5, False), ("apply", 7, False), ("apply", 9, True), ("Box", 12, True),
        ("Box.get", 15, False), ("Box.get", 17, True),
        ("area", 20, True),  # plum's overload registers an implementation: no stub
    ]  # fmt: skip
    found = py.extract(source, "m.py")
    assert found.status == "ok"
    assert [(s.qualified_name, s.start_line, s.is_definition) for s in found.symbols] == expected
    fallback = _by_tree_sitter(monkeypatch, source)
    assert [(s.qualified_name, s.start_line, s.is_definition) for s in fallback.symbols] == expected


def _definitions(source: bytes, reader) -> list[tuple]:
    from repomap.extractors.python_structure import SourceText

    text = SourceText(source.decode("utf-8", "replace"))
    return [(d.qualified_name, d.kind, d.start, d.parent, d.overload) for d in reader(text).defs]


def _assert_parsers_agree(paths: list[Path]) -> int:
    from repomap.extractors import python_fallback

    compared = 0
    for path in paths:
        source = path.read_bytes()
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        by_ast = _definitions(source, lambda text, tree=tree: py._structure_from_ast(tree, text))
        by_tree_sitter = _definitions(
            source, lambda text, source=source: python_fallback.structure(source, text)
        )
        assert by_tree_sitter == by_ast, path
        compared += 1
    return compared


def test_ast_and_tree_sitter_find_the_same_definitions_in_our_own_code():
    root = Path(__file__).resolve().parents[1]
    paths = _python_files(root / "repomap", 100) + _python_files(root / "extractors", 100)
    assert _assert_parsers_agree(paths + _python_files(root / "tests", 100)) >= 10


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.exists(), reason="Django corpus not fetched")
def test_ast_and_tree_sitter_find_the_same_definitions_in_django():
    assert _assert_parsers_agree(sorted(CORPUS.rglob("*.py"))) > 2500


def test_a_property_getter_and_setter_keep_their_own_docstrings() -> None:
    # rich's Console.width: the getter showed the setter's "Set width." (keyed by the name).
    source = (
        b"class Console:\n    @property\n    def width(self) -> int:\n"
        b'        """Get the width of the console."""\n        return self._width\n\n'
        b"    @width.setter\n    def width(self, width: int) -> None:\n"
        b'        """Set width."""\n        self._width = width\n'
    )
    symbols = py.extract(source, "console.py").symbols
    assert [(s.qualified_name, s.start_line, s.doc) for s in symbols] == [
        ("Console", 1, None),
        ("Console.width", 3, "Get the width of the console."),
        ("Console.width", 8, "Set width."),
    ]
