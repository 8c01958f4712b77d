"""The vocabulary bridge (repomap/vocabulary.py): a question in whole English words finds code
named in the abbreviations code uses (`directory` -> dir, `temporary` -> tmp, `length` -> len).

Real files in a temp dir, the real CLI in a subprocess, the real SQLite index.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repomap.search import code
from repomap.search.code import STOP_WORDS, bridged_terms, query_terms
from repomap.vocabulary import BRIDGE, base_forms, bridge

FILES = {
    "net/wire.py": """
HDR_SIZE = 16


def recv_pkt_hdr(sock):
    raw = sock.recv(HDR_SIZE)
    return raw[:HDR_SIZE]
""",
    "net/body.py": '''
def buf_len(buf):
    return len(buf)


def buffer_length_plus(buffer, extra):
    """The buffer length plus the extra bytes."""
    return len(buffer) + extra
''',
    # Unrelated functions, so BM25's IDF tells a rare word from a common one as in a real tree.
    "app/names.py": "".join(
        f"def greeting_{n}(person):\n    return {word!r} + person\n\n\n"
        for n, word in enumerate(
            [
                "hello",
                "welcome",
                "good day",
                "farewell",
                "see you",
                "bye",
                "cheers",
                "howdy",
                "greetings",
                "salut",
                "hola",
                "ciao",
                "hey",
                "yo",
                "hi there",
                "good night",
            ]
        )
    ),
}
QUESTION = "where is the header of an incoming packet taken off the socket?"


def repomap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    done = repomap("index", str(root))
    assert done.returncode == 0, done.stderr
    return root


def search(root: Path, question: str) -> tuple[int, list[dict]]:
    done = repomap("search", question, "--mode", "lexical", "--json", "--root", str(root))
    assert not done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)["results"] if done.stdout.strip() else []


def test_a_question_in_whole_words_finds_a_function_named_in_abbreviations(tree: Path) -> None:
    # None of the question's search words is a word of recv_pkt_hdr's chunk, nor one the index
    # writes beside its abbreviations (index/chunks.py): only the bridge (header -> hdr,
    # packet -> pkt, socket -> sock) can find it.
    asked = set(query_terms(QUESTION))
    assert asked == {"header", "incoming", "packet", "taken", "socket"}
    assert not asked & {"recv", "pkt", "hdr", "sock", "raw", "size", "net", "wire"}
    status, results = search(tree, QUESTION)
    assert status == 0
    assert [hit["name"] for hit in results][:1] == ["recv_pkt_hdr"]
    assert (results[0]["path"], results[0]["start_line"]) == ("net/wire.py", 4)


def test_the_words_asked_outrank_their_abbreviations(tree: Path) -> None:
    """`buffer length` finds both functions; the one that holds the words asked comes first,
    the bridge only adds a quarter of the abbreviations' weight."""
    status, results = search(tree, "how is the buffer length worked out?")
    assert status == 0
    found = [hit["name"] for hit in results]
    assert found[:2] == ["buffer_length_plus", "buf_len"]
    assert not [name for name in found if name.startswith("greeting_")]


def test_without_the_bridge_the_abbreviated_function_is_not_found(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same search in process with the bridge's weight at 0 does not find it: what the CLI
    test above found came from the bridge."""
    from repomap import store

    monkeypatch.setattr(code, "BRIDGE_WEIGHT", 0.0)
    db = store.open_index(tree / ".repomap" / "index.db", readonly=True)
    try:
        found = code.search_code(db, QUESTION, mode="lexical", log=False).hits
        assert "recv_pkt_hdr" not in [hit.name for hit in found]
        monkeypatch.setattr(code, "BRIDGE_WEIGHT", 0.25)
        hits = code.search_code(db, QUESTION, mode="lexical", log=False).hits
        assert [hit.name for hit in hits][:1] == ["recv_pkt_hdr"]
    finally:
        db.close()


def test_words_are_met_in_their_base_forms() -> None:
    assert "dir" in bridge("directories") and "dir" in bridge("directory")
    assert "directory" in bridge("dirs")
    assert "len" in bridge("lengths") and "init" in bridge("initializing")
    assert "tmp" in bridge("temporary") and "buf" in bridge("buffers")
    assert bridge("the") == () and bridge("zxqv") == ()
    assert "directories" not in bridge("directories")
    assert base_forms("running")[:1] == ["running"] and "run" in base_forms("running")


def test_bridged_terms_leave_out_the_question_words_and_stop_words() -> None:
    terms = query_terms("send the string over the socket connection")
    forms = bridged_terms(terms)
    assert {"sock", "conn", "snd"} <= set(forms)
    assert not set(forms) & set(terms)
    assert not set(forms) & STOP_WORDS
    assert len(forms) == len(set(forms))
    assert bridged_terms([]) == []


def test_a_form_the_index_already_writes_beside_the_word_is_not_asked_again() -> None:
    """A chunk that says `buf` or `dirs` holds `buffer` or `directory` too (index/chunks.py
    expands them): bridging to them would count such chunks twice."""
    assert "buf" in bridge("buffer") and "str" in bridge("string") and "dirs" in bridge("dir")
    forms = bridged_terms(["buffer", "string", "directories"])
    assert not {"buf", "str", "dir", "dirs"} & set(forms)
    assert "folder" in forms


def test_every_word_of_the_table_is_one_lower_case_ascii_token() -> None:
    """FTS5 and search/bm25.py read each as one term: a word its tokenizer made two of would
    send every search that bridges to it to SQLite (the in-memory path answers single terms)."""
    token = re.compile(r"[a-z0-9]+")
    for word, others in BRIDGE.items():
        assert token.fullmatch(word), word
        assert word not in others
        for other in others:
            assert token.fullmatch(other), other
            assert word in BRIDGE[other], (word, other)  # a group goes both ways
