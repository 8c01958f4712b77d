"""Credentials are redacted in the index by default, and secret files are never indexed."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from conftest import run_cli

from repomap import config
from repomap.index import pipeline as indexer
from repomap.index.secrets import REDACTED, is_secret_file, redact

# Realistic fakes: right shapes, not real credentials.
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SLACK = "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq9\nq8Xz0a\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize("secret", [AWS, GITHUB, STRIPE, SLACK, GOOGLE, JWT])
def test_well_known_key_formats_are_redacted_inside_any_text(secret):
    assert redact(f"use {secret} here") == f"use {REDACTED} here"


def test_a_private_key_block_is_redacted_whole():
    assert redact(f"key:\n{PEM}\nend") == f"key:\n{REDACTED}\nend"


@pytest.mark.parametrize(
    "line, value, redacted",
    [
        ('DB_PASSWORD = "hX9!kq2Lr0pZ"', "hX9!kq2Lr0pZ", True),
        ("api_key: str = 'Zq8vN3pL0wX7yR2t'", "Zq8vN3pL0wX7yR2t", True),
        ('let auth_token = "c2VjcmV0LXZhbHVlLTEyMw==";', "c2VjcmV0LXZhbHVlLTEyMw==", True),
        ('{"secret": "9fK2mQ7vB1xZ4wL8"}', "9fK2mQ7vB1xZ4wL8", True),
        ('password = "password"', "password", False),  # not random
        ('password_help = "Enter your password"', "Enter your password", False),  # prose
        ('label = "hX9!kq2Lr0pZ"', "hX9!kq2Lr0pZ", False),  # not assigned to a secret name
        ('token_type = "bearer"', "bearer", False),
        # Names in any case, and (the pattern is case-insensitive over Unicode) with a
        # character that folds to one of their letters: the ASCII pre-check must not skip it.
        ('Db_PassWord = "hX9!kq2Lr0pZ"', "hX9!kq2Lr0pZ", True),
        ('DB_PA\u017fSWORD = "hX9!kq2Lr0pZ"', "hX9!kq2Lr0pZ", True),
        ('CREDENTIAL = "hX9!kq2Lr0pZ"', "hX9!kq2Lr0pZ", True),
    ],
)
def test_random_values_assigned_to_secret_names_are_redacted(line, value, redacted):
    assert (redact(value, line) == REDACTED) is redacted


@pytest.mark.parametrize(
    "path, secret",
    [
        (".env", True),
        ("config/.env.production", True),
        ("deploy/id_rsa", True),
        ("certs/server.pem", True),
        ("tls/server.key", True),
        (".netrc", True),
        ("secrets.yaml", True),
        ("credentials.json", True),
        ("src/env.py", False),
        ("src/keys.rs", False),
        ("docs/secrets.md", False),
    ],
)
def test_secret_files_are_recognised_by_name(path, secret):
    assert is_secret_file(path) is secret


FILES = {
    "settings.py": f'''
        AWS_KEY = "{AWS}"
        DB_PASSWORD = "hX9!kq2Lr0pZ"
        GREETING = "hello world"
        # rotate {GITHUB} before release
        PRIVATE = """{PEM}"""
        ''',
    "lib.rs": f'fn main() {{ let k = "{STRIPE}"; }}\n',
    ".env": f"AWS_KEY={AWS}\n",
    "id_rsa": PEM,
}


def _texts(db) -> dict[tuple[str, int], str]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT file_path, line_number, content FROM code_text_fts")
        return {(path, line): content for path, line, content in rows}


def test_indexing_redacts_credentials_and_keeps_their_location(make_repo):
    root = make_repo(FILES)
    summary = indexer.run(config.resolve(root, workers=1))
    texts = _texts(root / ".repomap" / "index.db")
    assert texts[("settings.py", 1)] == REDACTED
    assert texts[("settings.py", 2)] == REDACTED
    assert texts[("settings.py", 3)] == "hello world"
    assert texts[("settings.py", 4)] == f"rotate {REDACTED} before release"
    assert texts[("settings.py", 5)] == REDACTED
    assert texts[("lib.rs", 1)] == REDACTED
    assert not any(AWS in t or GITHUB in t or "PRIVATE KEY" in t for t in texts.values())
    assert {(p, r) for p, r in summary.skipped} >= {
        (".env", "secret file (never indexed)"),
        ("id_rsa", "secret file (never indexed)"),
    }


def test_redaction_can_be_turned_off_and_on_again(make_repo):
    root = make_repo(FILES)
    db = root / ".repomap" / "index.db"
    assert run_cli("index", root, "--no-redact").returncode == 0
    assert _texts(db)[("settings.py", 1)] == AWS
    assert run_cli("index", root).returncode == 0  # the switch alone re-reads every file
    assert _texts(db)[("settings.py", 1)] == REDACTED


def _symbols(db) -> dict[str, tuple[str, str | None]]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(  # a doc kept as its code_text row (schema v16) read back from it
            "SELECT name, signature, coalesce((SELECT content FROM code_text WHERE id = "
            "symbols.doc_text), doc) FROM symbols"
        )
        return {name: (signature, doc) for name, signature, doc in rows}


SYMBOL_FILES = {
    "conf.py": f'''
        STRIPE_KEY = "{STRIPE}"
        DB_PASSWORD = "hX9!kq2Lr0pZ"
        API_TOKEN = "{"Zq8vN3pL0wX7yR2t" * 20}"
        GREETING = "hello world"

        def connect():
            """Connect with {AWS} as the access key."""
        ''',
    "conf.rs": f'/// Pushes with {GITHUB}.\npub fn push() {{}}\nconst T: &str = "{GITHUB}";\n',
    "conf.cpp": f"/// Signs with {AWS}.\nint sign();\n",
}


def test_signatures_and_docs_of_symbols_are_redacted_like_text(make_repo):
    root = make_repo(SYMBOL_FILES)
    indexer.run(config.resolve(root, workers=1))
    symbols = _symbols(root / ".repomap" / "index.db")
    assert symbols["STRIPE_KEY"] == (f'STRIPE_KEY = "{REDACTED}"', None)
    assert symbols["DB_PASSWORD"] == (f'DB_PASSWORD = "{REDACTED}"', None)
    # the header is cut at 200 characters, inside the value: the cut part is hidden too
    assert symbols["API_TOKEN"] == (f'API_TOKEN = "{REDACTED}', None)
    assert symbols["GREETING"] == ('GREETING = "hello world"', None)
    assert symbols["connect"] == ("def connect()", f"Connect with {REDACTED} as the access key.")
    assert symbols["push"] == ("pub fn push()", f"Pushes with {REDACTED}.")
    assert symbols["sign"] == ("int sign()", f"Signs with {REDACTED}.")
    found = run_cli("symbols", "STRIPE_KEY", "--root", root)
    assert found.returncode == 0 and STRIPE not in found.stdout and REDACTED in found.stdout
    mapped = run_cli("map", "--root", root, "--tokens", "2000")
    assert mapped.returncode == 0 and STRIPE not in mapped.stdout and "hX9!" not in mapped.stdout


def test_no_redact_keeps_signatures_and_docs_as_written(make_repo):
    root = make_repo(SYMBOL_FILES)
    indexer.run(config.resolve(root, workers=1, redact=False))
    symbols = _symbols(root / ".repomap" / "index.db")
    assert symbols["STRIPE_KEY"] == (f'STRIPE_KEY = "{STRIPE}"', None)
    assert symbols["connect"][1] == f"Connect with {AWS} as the access key."


@pytest.mark.parametrize("name", ["notes.txt", "settings.py", "docs/readme.md", "key.rs"])
def test_a_link_with_an_innocent_name_to_a_secret_file_is_neither_indexed_nor_served(
    make_repo, name
):
    root = make_repo({".env": f"AWS_KEY={AWS}\nPASSWORD=hX9!kq2Lr0pZ\n", "ok.py": "X = 1\n"})
    link = root / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(root / ".env")
    summary = indexer.run(config.resolve(root, workers=1))
    assert dict(summary.skipped) == {
        ".env": "secret file (never indexed)",
        name: "secret file (never indexed)",
    }
    with closing(sqlite3.connect(root / ".repomap" / "index.db")) as conn:
        dump = "\n".join(conn.iterdump())
    assert AWS not in dump and "hX9!kq2Lr0pZ" not in dump
    opened = run_cli("open", name, "--root", root)
    assert opened.returncode != 0 and AWS not in opened.stdout
    assert opened.stderr.startswith("error: ") and "credentials file" in opened.stderr
    listed = run_cli("sources", "--root", root, "--format", "json")
    assert name.rsplit("/", 1)[-1] not in listed.stdout and ".env" not in listed.stdout


def test_the_mcp_server_never_reads_a_secret_file_whatever_path_reaches_it(make_repo):
    import anyio
    from mcp.client import Client

    from repomap.serve.mcp_server import build_server

    root = make_repo({".env": f"AWS_KEY={AWS}\n", "id_rsa": PEM, "ok.py": "X = 1\n"})
    (root / "innocent.txt").symlink_to(root / ".env")
    (root / "sub").mkdir()
    settings = config.resolve(root, workers=1)
    indexer.run(settings)
    paths = [".env", "id_rsa", "innocent.txt", "sub/../.env", str(root / ".env"), "./id_rsa"]

    async def calls() -> list:
        async with Client(build_server(settings, refresh=False)) as client:
            results = [await client.call_tool("read_file", {"path": p}) for p in paths]
            results.append(await client.call_tool("find_files", {"query": "env"}))
            results.append(await client.call_tool("list_sources", {}))
            return results

    *reads, found, listed = anyio.run(calls)
    for path, result in zip(paths, reads, strict=True):
        assert result.is_error, path
        assert AWS not in result.content[0].text and "PRIVATE KEY" not in result.content[0].text
    assert found.structured_content["files"] == []
    assert ".env" not in json.dumps(listed.structured_content)
    assert "id_rsa" not in json.dumps(listed.structured_content)


def test_a_signature_is_redacted_the_same_whatever_order_the_secrets_come_in() -> None:
    from repomap.index.secrets import REDACTED, redact_header

    # Two values that share their first 8 characters, as hidden (a set) can hand them over in
    # either order; each must go, whole, and the rest of the header stay.
    header = 'TOKENS = ("Xq7vPz9LmWn4", "Xq7vPz9LmWn4Rt8sKd2Y")'
    hidden = ["Xq7vPz9LmWn4", "Xq7vPz9LmWn4Rt8sKd2Y"]
    forward, backward = redact_header(header, hidden), redact_header(header, hidden[::-1])
    assert forward == backward == f'TOKENS = ("{REDACTED}", "{REDACTED}")'
    cut = 'TOKEN = "Xq7vPz9LmWn4Rt8'  # a header cut short at its length limit
    assert redact_header(cut, ["Xq7vPz9LmWn4Rt8sKd2Y"]) == f'TOKEN = "{REDACTED}'


def test_a_key_only_a_signature_holds_is_redacted_though_no_literal_was(make_repo):
    # No string or comment of the file is redacted (nothing hidden): the symbols are checked
    # by one search over all their signatures and docs, which must still find this one.
    root = make_repo({"sign.c": f"int sign(int {AWS});\nint verify(int key);\n"})
    indexer.run(config.resolve(root, workers=1))
    symbols = _symbols(root / ".repomap" / "index.db")
    assert symbols["sign"] == (f"int sign(int {REDACTED})", None)
    assert symbols["verify"] == ("int verify(int key)", None)
