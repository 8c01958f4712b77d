"""A C++ definition is found by its declaration's doc: the doc of an out of line method is on its
declaration (in its class, or in a header beside a .cc), and search found the class, or nothing.
A documented member declaration is a chunk; search gives its score to the linked definition."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from operator import attrgetter
from pathlib import Path

import pytest
from repomap.extractors import extract

from repomap import store
from repomap.index.chunks import code_chunks

WIDGET_H = """class Widget {
public:
    /**
     * Reconciles the frobnication ledger against quarantined tallies.
     */
    void tidy();
    void plain();
};

inline void Widget::tidy()
{
    int x = 0;
    x++;
}

inline void Widget::plain()
{
}
"""

LEDGER_H = """namespace books {
class Ledger {
public:
    /// Appraises every dormant voucher and stamps the expired ones.
    void appraise();
    /// Garnishes the pending escrow with the clerk's surcharge.
    int garnish(int clerk);
};

/// Harmonises two registries into a consolidated manifest.
void harmonise(int left, int right);
}
"""

LEDGER_CC = """#include "ledger.h"
namespace books {

void Ledger::appraise() {
    int vouchers = 0;
    vouchers++;
}

void harmonise(int left, int right) {
    int both = left + right;
}
}
"""


def repomap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *args], capture_output=True, text=True, timeout=120
    )


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def index(root: Path, *args: str) -> None:
    done = repomap("index", str(root), *args)
    assert done.returncode == 0, done.stderr


def places(root: Path, question: str, mode: str) -> list[tuple[str, str, int, int]]:
    done = repomap("search", question, "--json", "--root", str(root), "--mode", mode)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["results"]
    return [(hit["name"], hit["path"], hit["start_line"], hit["end_line"]) for hit in hits]


def test_a_documented_member_declaration_is_a_chunk_its_doc_out_of_its_class() -> None:
    source = WIDGET_H.encode()
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extract("cpp", source, "w.h").symbols]
    chunks = code_chunks("w.h", source, rows, [])
    by_place = {(c.name, c.start_line): c for c in chunks}
    declaration = by_place[("Widget::tidy", 6)]
    assert declaration.kind == "method"
    assert "frobnication ledger" in declaration.head
    assert "frobnication" not in by_place[("Widget", 1)].head + by_place[("Widget", 1)].body
    assert ("Widget::plain", 7) not in by_place  # undocumented: found through its definition
    assert ("Widget::tidy", 10) in by_place


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_an_out_of_line_definition_is_found_by_its_declaration_s_doc(
    tmp_path: Path, mode: str
) -> None:
    root = write(tmp_path / "repo", {"widget.h": WIDGET_H, "ledger.h": LEDGER_H,
                                     "ledger.cc": LEDGER_CC})  # fmt: skip
    index(root, *(["--embed"] if mode == "hybrid" else []))
    # In the class's own file: the definition, and the declaration is no second answer.
    found = places(root, "reconciles the frobnication ledger against quarantined tallies", mode)
    assert found[0] == ("Widget::tidy", "widget.h", 10, 14)
    assert ("Widget::tidy", "widget.h", 6, 6) not in found
    # In a header, the definition in a .cc: a method and a namespaced function alike.
    found = places(root, "appraises every dormant voucher and stamps the expired ones", mode)
    assert found[0] == ("books::Ledger::appraise", "ledger.cc", 4, 7)
    found = places(root, "harmonises two registries into a consolidated manifest", mode)
    assert found[0] == ("books::harmonise", "ledger.cc", 9, 11)
    # No definition indexed (a library's headers alone): the declaration is the answer.
    found = places(root, "garnishes the pending escrow with the clerk's surcharge", mode)
    assert found[0] == ("books::Ledger::garnish", "ledger.h", 7, 7)


def answers(root: Path, questions: list[str]) -> list[list[tuple[str, str, int, int]]]:
    return [places(root, question, "hybrid") for question in questions]


def test_an_incremental_run_leaves_search_as_a_cold_index_would(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"ledger.h": LEDGER_H, "ledger.cc": LEDGER_CC})
    index(root, "--embed")
    questions = [
        "appraises every dormant voucher and stamps the expired ones",
        "tallies each forgotten coupon and seals the lapsed ones",
        "harmonises two registries into a consolidated manifest",
        "garnishes the pending escrow with the clerk's surcharge",
    ]
    # The header's doc edited; a definition moved to another file; a declaration removed.
    header = LEDGER_H.replace(
        "Appraises every dormant voucher and stamps the expired ones",
        "Tallies each forgotten coupon and seals the lapsed ones",
    ).replace("/// Harmonises two registries into a consolidated manifest.\n", "")
    header = header.replace("void harmonise(int left, int right);\n", "")
    write(root, {
        "ledger.h": header,
        "ledger.cc": LEDGER_CC.replace("void Ledger::appraise() {\n    int vouchers = 0;\n"
                                       "    vouchers++;\n}\n", ""),
        "appraise.cc": '#include "ledger.h"\nnamespace books {\n\nvoid Ledger::appraise() {\n'
                       "    int vouchers = 0;\n    vouchers++;\n}\n}\n",
        "garnish.cc": '#include "ledger.h"\nnamespace books {\n\nint Ledger::garnish(int clerk)'
                      " {\n    return clerk * 2;\n}\n}\n",
    })  # fmt: skip
    index(root, "--embed")
    warm = answers(root, questions)
    assert warm[1][0] == ("books::Ledger::appraise", "appraise.cc", 4, 7)
    assert warm[3][0] == ("books::Ledger::garnish", "garnish.cc", 4, 6)
    assert ("books::Ledger::appraise", "ledger.h", 5, 5) not in warm[1]
    cold_root = tmp_path / "cold"
    shutil.copytree(root, cold_root, ignore=shutil.ignore_patterns(".repomap"))
    index(cold_root, "--embed")
    assert answers(cold_root, questions) == warm


OVERLOADS_H = """class Parser {
public:
    /// Enrols a borrowed quokka into the menagerie.
    void enrol(Animal& quokka);
    /// Adopts an owned wombat, freeing it at the end.
    void enrol(Animal* wombat, bool owned = true) const;
};

inline void Parser::enrol(Animal* w, bool o) const
{
    keep(w);
}

inline void Parser::enrol(Animal& q)
{
    keep(&q);
}
"""


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_each_overload_s_doc_finds_its_own_definition(tmp_path: Path, mode: str) -> None:
    # The writer links both definitions to the first declaration: their parameters tell them.
    root = write(tmp_path / "repo", {"parser.h": OVERLOADS_H})
    index(root, *(["--embed"] if mode == "hybrid" else []))
    found = places(root, "enrols a borrowed quokka into the menagerie", mode)
    assert found[0] == ("Parser::enrol", "parser.h", 14, 17)
    assert ("Parser::enrol", "parser.h", 4, 4) not in found
    found = places(root, "adopts an owned wombat, freeing it at the end", mode)
    assert found[0] == ("Parser::enrol", "parser.h", 9, 12)
    assert ("Parser::enrol", "parser.h", 6, 6) not in found


def test_a_definition_holds_the_doc_of_its_declaration_in_the_same_file() -> None:
    # Its body's words and its doc's together (the fold gives it only the higher of the two).
    source = OVERLOADS_H.encode()
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extract("cpp", source, "p.h").symbols]
    heads = {c.start_line: c.head for c in code_chunks("p.h", source, rows, [])}
    assert "owned wombat" in heads[9] and "quokka" not in heads[9]
    assert "borrowed quokka" in heads[14] and "wombat" not in heads[14]


def test_a_question_naming_a_declared_method_is_answered(tmp_path: Path) -> None:
    # The fold's query once took the name of lift_named's: a question naming one failed.
    root = write(tmp_path / "repo", {"widget.h": WIDGET_H})
    index(root)
    assert places(root, "what does Widget::tidy do", "lexical")[0][0] == "Widget::tidy"
