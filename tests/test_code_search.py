"""`repomap search`: chunks made at index time, lexical ranking, filters, bad input.

Real files in a temp dir, the real CLI in a subprocess, the real SQLite index.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from repomap import store
from repomap.index.chunks import _pieces, compound_words, doc_chunks, title_of, words_of
from repomap.search.code import query_terms, search_terms
from repomap.search.morphology import related_forms

FILES = {
    "net/headers.py": '''
def parseHeaderLines(raw):
    fields = {}
    for line in raw.splitlines():
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields


class RetryPolicy:
    """How often to try again."""

    def backoff_delay(self, attempt):
        return min(self.cap, self.base * 2 ** attempt)
''',
    "net/cache.py": """
API_TOKEN = "sk_live_51HqLyjWDarjtT1zdp7dcXYZabcdEFGH"

def evict_least_recently_used(store, capacity):
    while len(store) > capacity:
        oldest = min(store, key=lambda k: store[k].last_access)
        del store[oldest]
""",
    "tests/test_headers.py": """
def test_parse_header_lines():
    assert parseHeaderLines("a: b") == {"a": "b"}
""",
    "src/lib.rs": """
/// Computes the checksum of a buffer with the Adler-32 algorithm.
pub fn adler32(buf: &[u8]) -> u32 {
    let mut a: u32 = 1;
    let mut b: u32 = 0;
    for byte in buf { a = (a + *byte as u32) % 65521; b = (b + a) % 65521; }
    (b << 16) | a
}
""",
    "include/ring.hpp": """
namespace io {
class RingBuffer {
 public:
  void pushBack(int value) { data_[head_++ % capacity_] = value; }
 private:
  int data_[64]; int head_ = 0; int capacity_ = 64;
};
}
""",
    "docs/guide.md": """# Guide

Intro text.

## Deployment

To deploy the service behind a reverse proxy, set the forwarded headers option.

```
## not a heading: inside a fence
```
""",
}


def repomap(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def indexed(root: Path, files: dict[str, str]) -> Path:
    """`files` written under `root`, indexed by the real CLI."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    done = repomap("index", str(root))
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    return indexed(tmp_path / "repo", FILES)


def search(root: Path, *args: str) -> tuple[int, dict, str]:
    done = repomap("search", *args, "--json", "--root", str(root))
    data = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, data, done.stderr


def names(data: dict) -> list[str]:
    return [hit["name"] for hit in data["results"]]


def test_a_question_in_words_meets_split_and_stemmed_identifiers(tree: Path) -> None:
    code, data, _ = search(tree, "how are the header lines parsed?", "--mode", "lexical")
    assert code == 0
    assert names(data)[0] == "parseHeaderLines"
    hit = data["results"][0]
    assert (hit["path"], hit["start_line"], hit["end_line"]) == ("net/headers.py", 1, 6)
    assert hit["kind"] == "function" and hit["language"] == "python"
    assert 0 < hit["score"] <= 1


SETTINGS = """
def load_settings(path):
    text = read(path)
    if not text:
        return {}
    # fall back to the environment when the file is empty
    values = parse(text)
    values.update(readEnvironmentOverrides())
    return values
"""


def test_each_result_shows_the_lines_holding_the_most_question_words(tmp_path: Path) -> None:
    """As rg prints the matching line: the lines of a result's range holding the most of the
    question's distinct words (stemmed, identifiers split), in file order, ties to the earlier
    line, the signature left to the snippet; none from a file changed since it was indexed."""
    root = indexed(tmp_path / "repo", {"conf.py": SETTINGS})
    question = "where are the environment overrides applied to the loaded setting values?"
    code, data, _ = search(root, question, "--mode", "lexical")
    assert code == 0
    hit = data["results"][0]
    assert (hit["name"], hit["start_line"]) == ("load_settings", 1)
    # line 5, the comment, holds "environment" too, but the snippet (the head) shows it
    assert "fall back to the environment when the file is empty" in hit["snippet"]
    assert hit["match_lines"] == [
        {"line": 6, "text": "values = parse(text)"},
        {"line": 7, "text": "values.update(readEnvironmentOverrides())"},
    ]
    text = repomap("search", question, "--mode", "lexical", "--root", str(root))
    assert "    7: values.update(readEnvironmentOverrides())" in text.stdout.splitlines()
    (root / "conf.py").write_text("import os\n" + SETTINGS.lstrip("\n"))
    code, data, _ = search(root, question, "--mode", "lexical", "--no-refresh")
    assert code == 0 and data["results"][0]["start_line"] == 1
    assert data["results"][0]["match_lines"] == []  # the lines indexed are no longer there
    assert data["meta"]["changed_files"] == ["conf.py"]  # and the answer says why
    said = repomap("search", question, "--mode", "lexical", "--no-refresh", "--root", str(root))
    assert "note: changed since indexed, so lines may be off" in said.stderr
    code, data, _ = search(root, question, "--mode", "lexical")  # refreshed first
    assert [line["line"] for line in data["results"][0]["match_lines"]] == [7, 8]


NESTED = """
\"\"\"Settings loading.\"\"\"
import os

DEFAULT_TIMEOUT = int(os.environ.get("APP_TIMEOUT", "30"))


class Loader:
    \"\"\"Reads settings files.\"\"\"

    def read_timeout(self):
        timeout = os.environ.get("APP_TIMEOUT")
        return timeout


def check_lengths(headers):
    if bad(headers):
        raise ValueError("conflicting lengths")
    if worse(headers):
        raise ValueError("conflicting lengths")
"""


def test_match_lines_are_a_results_own_text_each_once(tmp_path: Path) -> None:
    """A module's lines are its module-level code, not its definitions' (results of their own);
    a class's are not its methods' bodies; a line repeated in a result is shown once."""
    padding = "x" * 300
    long_line = (
        f'def long_line():\n    value = "{padding}" + compute_needle_position()\n    return value\n'
    )
    root = indexed(tmp_path / "repo", {"conf.py": NESTED, "long.py": long_line})
    _, data, _ = search(root, "timeout from the environment", "--mode", "lexical", "--kind",
                        "module,class")  # fmt: skip
    lines = {hit["kind"]: [m["line"] for m in hit["match_lines"]] for hit in data["results"]}
    assert lines == {"module": [4], "class": [10]}  # the member's signature, not its body
    _, data, _ = search(root, "conflicting lengths", "--mode", "lexical", "--kind", "function")
    assert data["results"][0]["match_lines"] == [
        {"line": 17, "text": 'raise ValueError("conflicting lengths")'}
    ]
    _, data, _ = search(root, "needle position", "--mode", "lexical", "--kind", "function")
    (shown,) = data["results"][0]["match_lines"]
    # a long line around its first question word, not its first 200 characters
    assert shown["line"] == 2 and shown["text"].startswith("…") and len(shown["text"]) <= 200
    assert "compute_needle_position()" in shown["text"]


def test_an_irregular_verb_in_a_question_meets_its_base_form_in_code(tmp_path: Path) -> None:
    """Porter folds `parsed` into `parse`, never `built` into `build` nor `kept` into `keep`.
    `left` is as often a direction (no base added); `use` is a stop word; `t` is too short."""
    assert related_forms("built") == ["build"]
    assert related_forms("indices") == ["index"]
    assert related_forms("growable") == ["grow", "growe"]
    assert related_forms("left") == related_forms("table") == []
    root = indexed(
        tmp_path / "repo",
        {
            "rows.py": """
def keep_matching(rows, wanted):
    return [row for row in rows if wanted(row)]


def count_rows(rows):
    total = 0
    for row in rows:
        total += len(row)
    return total
""",
        },
    )
    with store.reading(root / ".repomap" / "index.db") as db:
        terms = search_terms(db, query_terms("rows kept, growable, iterable or usable?"))
    # Through porter `growe` is `grow` again and `iterable` is `iter` already; `use` is a
    # stop word, `us` too short.
    assert terms == ["rows", "kept", "keep", "growable", "grow", "iterable", "usable"]
    code, data, _ = search(root, "which rows are kept?", "--mode", "lexical")
    assert code == 0
    assert names(data)[0] == "keep_matching"


def test_adding_meets_add_though_porter_undoubles_its_d(tmp_path: Path) -> None:
    # crossbeam: "adding" stems to `ad` and `add` to `add`; the question never met checked_add
    # (11th; 1st when typed "add").
    assert related_forms("adding") == related_forms("added") == ["add"]
    root = indexed(
        tmp_path / "repo",
        {
            "clock.rs": (
                "/// The instant a timeout ends.\n"
                "pub fn deadline(now: u64, timeout: u64) -> Option<u64> {\n"
                "    now.checked_add(timeout)\n}\n\n"
                "/// Pads a timeout that ends now.\n"
                "pub fn pad(timeout: u64, now: u64) -> u64 {\n    timeout.max(now)\n}\n"
            ),
        },
    )
    code, data, _ = search(root, "adding a timeout to now", "--mode", "lexical")
    assert code == 0 and names(data)[0] == "clock::deadline"
    assert data["results"][0]["match_lines"] == [{"line": 3, "text": "now.checked_add(timeout)"}]


def test_a_question_in_one_spelling_meets_code_in_the_other(tmp_path: Path) -> None:
    """tmux writes `colour`, most people type `color`; porter keeps them (and `-ise` / `-ize`)
    apart."""
    assert related_forms("color") == ["colour"]
    assert related_forms("initialise") == ["initialize"]
    assert related_forms("centre") == ["center"]
    assert related_forms("error") == related_forms("vendor") == related_forms("hour") == []
    root = indexed(
        tmp_path / "repo",
        {
            "names.py": """
def colour_from_name(text):
    return COLOURS[text]


def name_of(thing):
    return thing.name if thing.name else thing.display_name
""",
        },
    )
    code, data, _ = search(root, "how is a color looked up by its name?", "--mode", "lexical")
    assert code == 0
    assert names(data)[0] == "colour_from_name"


def test_a_macro_defined_in_each_branch_of_an_if_is_one_result(tmp_path: Path) -> None:
    # jansson's JSON_INTEGER_FORMAT, defined three times under #if, took three of a search's
    # first four places.
    root = indexed(
        tmp_path / "repo",
        {
            "fmt.h": (
                '#if defined(_WIN32)\n#define INTEGER_FORMAT "I64d"\n'
                '#elif defined(LONG_LONG)\n#define INTEGER_FORMAT "lld"\n'
                '#else\n#define INTEGER_FORMAT "ld"\n#endif\n'
                "#define OTHER_LIMIT 10\n"
            ),
            "fmt.c": "int parse(void) { return 0; }\n",
        },
    )
    code, data, _ = search(root, "integer format", "--mode", "lexical")
    assert code == 0
    assert names(data).count("INTEGER_FORMAT") == 1
    assert [
        (h["start_line"], h["end_line"]) for h in data["results"] if h["name"] == "INTEGER_FORMAT"
    ] == [(2, 2)]


def test_a_type_alias_is_a_result_unless_it_names_a_record_or_is_a_member(tmp_path: Path) -> None:
    # expat's XML_CharacterDataHandler (a callback's type under its doc comment) was listed by
    # `symbols` and found by no search, and `search --kind type` was refused.
    root = indexed(
        tmp_path / "repo",
        {
            "xml.h": (
                "/* s is not 0 terminated. */\n"
                "typedef void (*CharacterDataHandler)(void *userData, const char *s, int len);\n\n"
                "typedef struct tag {\n  int depth;\n} TAG;\n"
            ),
            "list.hpp": (
                "namespace util {\n"
                "template <class T> class List {\n public:\n  using value_type = T;\n};\n"
                "using Names = List<const char *>;\n}\n"
            ),
            "lib.rs": "/// A result whose error is the library's own.\npub type Result<T> = std::result::Result<T, Error>;\n",
        },
    )
    code, data, stderr = search(
        root, "character data handler", "--kind", "type", "--mode", "lexical"
    )
    assert code == 0, stderr
    assert [(h["name"], h["path"], h["start_line"]) for h in data["results"]] == [
        ("CharacterDataHandler", "xml.h", 2)
    ]
    code, data, _ = search(root, "tag depth", "--mode", "lexical")
    assert [(h["kind"], h["name"]) for h in data["results"]] == [("struct", "tag")]  # no TAG
    code, data, _ = search(root, "library error result", "--kind", "type", "--mode", "lexical")
    assert [h["name"] for h in data["results"]] == ["Result"]
    code, data, _ = search(
        root, "value type names list", "--kind", "type", "--lang", "cpp", "--mode", "lexical"
    )
    assert [h["name"] for h in data["results"]] == ["util::Names"]  # not the member alias


def test_code_without_comments_is_found_by_its_body(tree: Path) -> None:
    code, data, _ = search(tree, "evict the oldest entries when the store is over capacity")
    assert code == 0
    assert names(data)[0] == "evict_least_recently_used"


def test_every_language_and_docs_are_chunks(tree: Path) -> None:
    _, rust, _ = search(tree, "checksum of a buffer")
    assert names(rust)[0] == "adler32"
    _, cpp, _ = search(tree, "push a value at the back of the ring")
    assert names(cpp)[0] == "io::RingBuffer::pushBack"
    _, docs, _ = search(tree, "deploy behind a reverse proxy")
    first = docs["results"][0]
    assert (first["kind"], first["name"], first["path"]) == (
        "section",
        "Guide > Deployment",
        "docs/guide.md",
    )


def test_tests_rank_below_the_code_unless_asked_for(tree: Path) -> None:
    _, data, _ = search(tree, "parse header lines")
    ranked = names(data)
    assert ranked.index("parseHeaderLines") < ranked.index("test_parse_header_lines")
    _, asked, _ = search(tree, "test parse header lines")
    assert names(asked)[0] == "test_parse_header_lines"
    _, filtered, _ = search(tree, "parse header lines", "--path", "tests/")
    assert names(filtered) == ["test_parse_header_lines"]


def test_words_that_ask_for_no_test_keep_tests_below_the_code(tmp_path: Path) -> None:
    """Search users' cases: "for example", an RFC 2606 host (`*.example.net`) or "a sample
    list" lifted the tests' demotion whole, and cpp-httplib's wildcard test came first;
    `tests` in googletest's "split tests across machines" is the framework's subject, and nine
    tests took its first ten places; a test fixture named as the question writes a name
    (`no_proxy`) was raised level with the function that answers."""
    root = indexed(
        tmp_path / "repo",
        {
            "pkg/hostmatch.py": '''
def match_hostname(cert_host, host):
    """Match a certificate host name, with a wildcard in its first label."""
    if cert_host.startswith("*."):
        return host.split(".", 1)[-1] == cert_host[2:]
    return cert_host == host
''',
            "pkg/proxies.py": '''
import os


def should_bypass_proxies(url, hostname):
    """Whether a request to this host should go around the proxy."""
    skip = os.environ.get("no_proxy", "")
    return hostname in skip.split(",")
''',
            "pkg/shard.py": '''
def should_shard(total_env, index_env):
    """Whether the tests are split across machines: validates the shard variables."""
    return total_env is not None and index_env is not None
''',
            "tests/test_hostmatch.py": """
def test_wildcard_certificate_host_name_match():
    assert match_hostname("*.example.net", "a.example.net")
    assert not match_hostname("*.example.net", "example.net")
""",
            "tests/test_proxies.py": """
import pytest


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    monkeypatch.setenv("no_proxy", "localhost,example.org")
""",
            "tests/test_shard.py": '''
def test_tests_split_across_machines_when_shard_variables_are_valid():
    """The tests are split across machines when both shard variables are valid."""
    assert should_shard("4", "1")
''',
        },
    )
    for question in (
        "match a certificate host name with a wildcard like *.example.net",
        "match a certificate host name with a wildcard, for example *.foo.net",
        "match a certificate host name with a wildcard from a sample list",
    ):
        _, data, _ = search(root, question, "--mode", "lexical")
        assert names(data)[0] == "match_hostname", (question, names(data))
    _, data, _ = search(root, "show an example of matching a wildcard host", "--mode", "lexical")
    assert names(data)[0] == "test_wildcard_certificate_host_name_match"  # asked for one
    _, data, _ = search(root, "skip the proxy when the host is in the no_proxy list")
    scores = {hit["name"]: hit["score"] for hit in data["results"]}
    assert names(data)[0] == "should_bypass_proxies"
    assert scores["no_proxy"] < scores["should_bypass_proxies"]  # not level with it (1.00)
    _, data, _ = search(root, "validate the variables that split tests across machines")
    ranked = names(data)
    assert ranked[0] == "should_shard", ranked
    assert "test_tests_split_across_machines_when_shard_variables_are_valid" in ranked[:3]


def test_a_type_named_in_a_question_raises_the_type_and_not_its_impls(tmp_path: Path) -> None:
    # toml_edit: "convert a Table into an InlineTable" raised `struct InlineTable` and its
    # impls of Clone, Default and Debug (each named by the type) over the method that converts.
    impls = "".join(
        f"impl {trait} for InlineTable {{\n    fn {method}(&self) -> Self {{ todo!() }}\n}}\n\n"
        for trait, method in (("Clone", "clone"), ("Default", "default"), ("Debug", "fmt"))
    )
    root = indexed(
        tmp_path / "crate",
        {
            "src/inline_table.rs": "/// A table written on one line.\npub struct InlineTable {\n"
            "    items: Vec<u8>,\n}\n\n" + impls,
            "src/table.rs": "pub struct Table {\n    items: Vec<u8>,\n}\n\nimpl Table {\n"
            "    /// Into a table written on one line.\n"
            "    pub fn into_inline_table(self) -> InlineTable {\n"
            "        InlineTable { items: self.items }\n    }\n}\n",
        },
    )
    _, data, _ = search(root, "convert a Table into an InlineTable", "--mode", "lexical")
    kinds = [hit["kind"] for hit in data["results"]]
    assert kinds[0] == "struct" and "impl" not in kinds[:4], names(data)


def test_a_one_line_macro_ranks_below_the_function_that_does_the_work(tmp_path: Path) -> None:
    # libsodium's VARIANT constants above its base64 decoder, xz's one-line constants above
    # lzma_vli_decode: a one-line `#define` meets a question's words and meaning cheaply.
    root = tmp_path / "repo"
    for rel, text in {
        "codec.h": "#define b64_VARIANT_ORIGINAL            1\n"
        "#define b64_VARIANT_ORIGINAL_NO_PADDING 3\n#define b64_VARIANT_URLSAFE             5\n"
        "#define b64_VARIANT_URLSAFE_NO_PADDING  7\n",
        "codec.c": '#include "codec.h"\n\nstatic int char_to_byte(int c, int urlsafe) {\n'
        "    if (c >= 'A' && c <= 'Z') return c - 'A';\n"
        "    if (c >= 'a' && c <= 'z') return c - 'a' + 26;\n"
        "    if (c >= '0' && c <= '9') return c - '0' + 52;\n"
        "    if (c == (urlsafe ? '-' : '+')) return 62;\n"
        "    if (c == (urlsafe ? '_' : '/')) return 63;\n    return -1;\n}\n\n"
        "int b64_decode(unsigned char *bin, const char *b64, int len, int variant) {\n"
        "    int acc = 0, bits = 0, n = 0, i, d;\n"
        "    for (i = 0; i < len && b64[i] != '='; i++) {\n"
        "        d = char_to_byte(b64[i], variant & 4);\n        if (d < 0) return -1;\n"
        "        acc = (acc << 6) | d; bits += 6;\n"
        "        if (bits >= 8) { bits -= 8; bin[n++] = (unsigned char) (acc >> bits); }\n"
        "    }\n    return n;\n}\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert repomap("index", str(root), "--embed").returncode == 0
    _, data, _ = search(root, "base64 decoding with the URL-safe alphabet and optional padding")
    scores = {hit["name"]: hit["score"] for hit in data["results"]}
    assert data["mode"] == "hybrid" and names(data)[0] == "b64_decode", names(data)
    assert scores["b64_VARIANT_URLSAFE_NO_PADDING"] < 0.8, scores  # was 0.96, a close second


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "semantic"])
def test_a_family_of_one_line_macros_leaves_room_for_the_function_using_them(
    tmp_path: Path, mode: str
) -> None:
    # utf8proc: eleven HANGUL_* constants took all ten places in every mode, and the function
    # that decomposes Hangul syllables with them came 12th. Past a file's best two, each counts
    # less; the two best keep their places.
    root = tmp_path / "repo"
    root.mkdir()
    (root / "uni.c").write_text(UNI_C)
    assert repomap("index", str(root), "--embed").returncode == 0
    _, data, _ = search(
        root, "algorithmic decomposition of Hangul syllables into jamo", "--mode", mode
    )
    found = names(data)
    assert "decompose_char" in found[:4], found
    assert all(name.startswith("HANGUL_") for name in found[: found.index("decompose_char")])
    assert sum(name.startswith("HANGUL_") for name in found[:3]) >= 2, found


UNI_C = """#define HANGUL_SBASE 0xAC00
#define HANGUL_LBASE 0x1100
#define HANGUL_VBASE 0x1161
#define HANGUL_TBASE 0x11A7
#define HANGUL_LCOUNT 19
#define HANGUL_VCOUNT 21
#define HANGUL_TCOUNT 28
#define HANGUL_NCOUNT 588
#define HANGUL_SCOUNT 11172
#define HANGUL_L_END 0x115A
#define HANGUL_V_END 0x11A3

int decompose_char(int uc, int *dst, int bufsize, int options) {
  int sindex = uc - HANGUL_SBASE;
  if (sindex >= 0 && sindex < HANGUL_SCOUNT) {
    int tindex = sindex % HANGUL_TCOUNT;
    dst[0] = HANGUL_LBASE + sindex / HANGUL_NCOUNT;
    dst[1] = HANGUL_VBASE + (sindex % HANGUL_NCOUNT) / HANGUL_TCOUNT;
    if (!tindex) return 2;
    dst[2] = HANGUL_TBASE + tindex;
    return 3;
  }
  if (options & 4) {
    if (uc == 0x2018 || uc == 0x2019) { dst[0] = 0x27; return 1; }
  }
  dst[0] = uc;
  return 1;
}

int compose(int *buffer, int length) {
  return length;
}
"""


def test_in_hybrid_a_function_of_three_lines_or_fewer_counts_less(
    tmp_path: Path, monkeypatch
) -> None:
    # csv's three-line try_* helpers and `is_empty` above `infer_deserialize`, the answer:
    # short chunks meet a question's words and meaning cheaply.
    from repomap import store
    from repomap.search import code

    body = "".join(f"    step_{n} = kind.check({n})\n" for n in range(8))
    root = indexed(
        tmp_path / "repo",
        {
            "infer.py": 'def infer_field(kind):\n    """Guess the type of a raw field."""\n'
            + body
            + "    return kind\n",
            "tries.py": "def try_float(raw):\n    return float(raw)\n",
        },
    )
    assert repomap("index", str(root), "--embed").returncode == 0
    question = "guess whether a raw field is a float"

    def scores() -> dict[str, float]:
        with store.reading(root / ".repomap" / "index.db") as db:
            found = code.search_code(db, question, mode="hybrid", limit=10, log=False)
        return {hit.name: hit.score for hit in found.hits}

    demoted = scores()
    monkeypatch.setattr(code, "SHORT_FACTOR", 1.0)
    plain = scores()
    ratio = demoted["try_float"] / demoted["infer_field"]
    assert ratio < plain["try_float"] / plain["infer_field"], (demoted, plain)


def test_rust_test_modules_rank_below_the_code(tmp_path: Path) -> None:
    # rayon keeps its tests in `src/*/test.rs` and `mod test { }`, not only `tests`: both
    # ranked as code, above the function that handles a job's panic.
    root = indexed(tmp_path / "crate", {
        "src/registry.rs": """
/// A job's panic goes to the pool's handler, or aborts.
pub fn handle_panic(err: Box<dyn Any>) { abort(err) }
""",
        "src/pool/test.rs": """
#[test]
fn job_panic_goes_to_handler() { handle_panic(job_panic()) }
""",
        "src/lib.rs": """
#[cfg(test)]
mod test {
    #[test]
    fn job_panic_goes_to_handler_or_aborts() { handle_panic(job_panic()) }
}
""",
    })  # fmt: skip
    _, data, _ = search(root, "what happens when a job panics?", "--mode", "lexical")
    assert names(data)[0] == "registry::handle_panic"
    assert set(names(data)[1:3]) == {
        "pool::test::job_panic_goes_to_handler",
        "test::job_panic_goes_to_handler_or_aborts",
    }


def test_a_macro_ranks_below_the_function_it_stands_for(tmp_path: Path) -> None:
    # libconfuse's `#define CFG_STR_CB(..)` one-liners came above the function that prints a
    # value escaping its quotes: BM25 favours the short chunk that holds the same words.
    root = indexed(tmp_path / "lib", {
        "src/print.c": """
/* Print a value, escaping the quotes of a string. */
static void print_value(FILE *out, const char *value)
{
    fputc('"', out);
    for (; *value; value++) {
        if (*value == '"' || *value == '\\\\')
            fputc('\\\\', out);
        fputc(*value, out);
    }
    fputc('"', out);
}
""",
        "src/print.h": """
/* Print a string value, escaping quotes. */
#define PRINT_STRING(out, value) print_value(out, value)
""",
    })  # fmt: skip
    _, data, _ = search(root, "print a value escaping quotes in strings", "--mode", "lexical")
    assert names(data)[:2] == ["print_value", "PRINT_STRING"]


def test_filters_apply_before_ranking(tree: Path) -> None:
    _, by_lang, _ = search(tree, "buffer", "--lang", "rust")
    assert {hit["language"] for hit in by_lang["results"]} == {"rust"}
    _, by_kind, _ = search(tree, "retry backoff delay attempt", "--kind", "class")
    assert names(by_kind) == ["RetryPolicy"]
    _, by_path, _ = search(tree, "buffer", "--path", "include/")
    assert {hit["path"] for hit in by_path["results"]} == {"include/ring.hpp"}
    _, docs_only, _ = search(tree, "deploy", "--lang", "markdown")
    assert {hit["kind"] for hit in docs_only["results"]} == {"section"}


def test_results_are_deterministic_and_bounded(tree: Path) -> None:
    # three chunks hold the word; RingBuffer and its one method are one answer (two hits)
    first = search(tree, "value", "--limit", "1")[1]
    second = search(tree, "value", "--limit", "1")[1]
    assert first["results"] == second["results"]
    assert first["count"] == len(first["results"]) == 1
    assert first["truncated"] is True
    assert set(first["meta"]) >= {"timings_ms", "model_id", "coverage"}
    # every stage named whatever the mode runs (lexical here: no embedding, no vectors)
    assert set(first["meta"]["timings_ms"]) >= {"embed", "vector", "lexical", "total"}
    assert first["meta"]["timings_ms"]["embed"] == 0


def test_truncated_says_when_more_match_than_the_limit_even_past_the_candidates(
    tmp_path: Path,
) -> None:
    # 330 functions hold the word. With --limit 320 the candidates read were exactly the limit
    # (300 or the limit), none was left over, and `truncated` said false with 10 more.
    source = "".join(
        f'def widget_{n}():\n    """Return widget number {n}."""\n    return {n}\n\n'
        for n in range(330)
    )
    root = indexed(tmp_path / "repo", {"widgets.py": source})
    _, under, _ = search(root, "widget", "--mode", "lexical", "--limit", "320")
    assert (under["count"], under["truncated"]) == (320, True)
    _, over, _ = search(root, "widget", "--mode", "lexical", "--limit", "1000")
    assert (over["count"], over["truncated"]) == (330, False)
    scores = [hit["score"] for hit in over["results"]]
    assert min(scores) > 0  # shown with four decimals, never 0
    shown = [(-hit["score"], hit["path"], hit["start_line"]) for hit in over["results"]]
    assert shown == sorted(shown)  # equal scores as shown: path, then line order


def test_asking_for_more_results_only_adds_to_the_list(tmp_path: Path) -> None:
    """The first results (and their scores) of --limit 1000 are those of --limit 10: past the
    default candidates the ranking did not change what came first (57 of a user's 76
    questions differed, a docs section went from 1st to 19th)."""
    files = {
        f"pkg/mod{m}.py": "".join(
            f'def widget_{m}_{n}(size):\n    """Resize widget {n} of group {m} to size."""\n'
            f"    return size * {n}\n\n"
            for n in range(40)
        )
        for m in range(9)
    }
    files["docs/guide.md"] = "# Guide\n\n## Sizes\n\nMake a widget bigger or smaller.\n"
    root = indexed(tmp_path / "repo", files)
    index_json(root, "--embed")
    for question, mode in (("resize a widget", "hybrid"), ("make it bigger", "semantic"),
                           ("widget group size", "lexical")):  # fmt: skip
        _, few, _ = search(root, question, "--mode", mode, "--limit", "10")
        _, many, _ = search(root, question, "--mode", mode, "--limit", "1000")
        assert many["count"] > 300 and few["results"] == many["results"][:10], mode
    for mode in ("hybrid", "semantic"):  # the nearest-by-meaning pool is full, nothing shown
        code, none, _ = search(root, "xkcd qwpz", "--mode", mode)
        assert (code, none["count"], none["truncated"]) == (1, 0, False), mode


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["   "], "the query is empty"),
        (["x" * 4097], "at most 4096"),
        (["value", "--limit", "0"], "'--limit': 0 is not in the range 1<=x<=1000"),  # click's
        (["value", "--limit", "1001"], "'--limit': 1001 is not in the range 1<=x<=1000"),
        (["value", "--kind", "bogus"], "unknown kind 'bogus'"),
        (["value", "--kind", "function,xyz"], "unknown kind 'xyz'; use one or more of"),
        # a symbol's kind that no search result has says where it is found
        (["value", "--kind", "field"], "(field: symbols, found by name with `symbols --kind"),
        (["value", "--lang", "cobol"], "cobol"),
        (["value", "--lang", "cobol"], "python, rust, c, cpp, markdown, text"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tree: Path, args: list[str], message: str) -> None:
    done = repomap("search", *args, "--root", str(tree))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_nothing_found_exits_1(tree: Path) -> None:
    done = repomap("search", "zyxwvut", "--root", str(tree))
    assert done.returncode == 1
    assert done.stdout == ""
    assert "holds no word" not in done.stderr
    # Only symbols (semver's `^`): no word is searched, and the user is told so.
    done = repomap("search", "^ ~", "--root", str(tree))
    assert done.returncode == 1 and done.stdout == ""
    assert "note: the query holds no word" in done.stderr
    index_json(tree, "--embed")
    for mode in ("hybrid", "semantic", "lexical"):  # nothing shown: nothing was cut either
        code, data, _ = search(tree, "xkcd qwpz", "--mode", mode)
        assert (code, data["count"], data["truncated"]) == (1, 0, False), mode


def test_no_embed_with_a_vector_store_is_refused_not_overridden(tree: Path) -> None:
    done = repomap("index", str(tree), "--no-embed", "--vector-store", "sqlite")
    assert done.returncode == 2 and "leave out --no-embed" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_redacted_secret_is_not_in_any_chunk(tree: Path) -> None:
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    text = " ".join(" ".join(words) for _, words in _chunk_words(db))
    db.close()
    assert "checksum" in text  # the words are there, in the compressed blobs
    assert "HqLyjWDarjtT1zdp7dcXYZabcdEFGH".lower() not in text.lower()
    assert "sk_live" not in text


def _chunk_words(db: sqlite3.Connection) -> list[tuple[int, tuple[str, ...]]]:
    """(chunk id, its title, place, head, body and name) of every chunk, read as
    store/chunk_texts.py keeps them (schema v16): zlib-compressed JSON lists of 16 chunks of a
    file, docs' ids counting down."""
    found = []
    for key, blob in db.execute("SELECT id, texts FROM chunk_texts ORDER BY id"):
        step = -1 if key < 0 else 1
        for ordinal, words in enumerate(json.loads(zlib.decompress(blob))):
            found.append((key + step * ordinal, tuple(words)))
    return sorted(found)


def fts_consistent(db_path: Path) -> None:
    db = sqlite3.connect(db_path)
    db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    db.close()


def test_changed_and_deleted_files_replace_their_chunks(tree: Path) -> None:
    (tree / "net/cache.py").write_text(
        "def warm_the_cache_from_disk(path):\n    return open(path).read()\n"
    )
    (tree / "src/lib.rs").unlink()
    (tree / "docs/guide.md").write_text("# Guide\n\n## Upgrading\n\nRun the migrations first.\n")
    assert repomap("index", str(tree)).returncode == 0
    fts_consistent(tree / ".repomap" / "index.db")
    assert "evict_least_recently_used" not in names(search(tree, "evict oldest capacity")[1])
    assert names(search(tree, "warm the cache from disk")[1])[0] == "warm_the_cache_from_disk"
    assert search(tree, "checksum adler")[0] == 1
    assert search(tree, "reverse proxy")[0] == 1
    assert names(search(tree, "upgrading migrations")[1]) == ["Guide > Upgrading"]


def test_an_index_from_before_chunks_gets_them_on_the_next_run(tree: Path) -> None:
    db_path = tree / ".repomap" / "index.db"
    db = sqlite3.connect(db_path)
    with db:
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
        db.execute("DELETE FROM chunks")
        db.execute("DELETE FROM chunk_texts")
        db.execute("UPDATE files SET text_indexed = 0")
        db.execute("UPDATE doc_files SET size = -1, hash = ''")
    db.close()
    assert search(tree, "checksum adler", "--no-refresh")[0] == 1  # else it re-indexes first
    assert repomap("index", str(tree)).returncode == 0
    fts_consistent(db_path)
    assert names(search(tree, "checksum adler")[1])[0] == "adler32"
    assert names(search(tree, "reverse proxy")[1])[0] == "Guide > Deployment"


def test_words_split_identifiers_expand_abbreviations_and_drop_noise() -> None:
    assert words_of("def parseHeaderLines(self, raw_buf): return None", 50) == (
        "parse header lines raw buf buffer"
    )
    assert words_of("a b c d e f", 3) == ""  # one-letter words say nothing
    assert words_of("alpha beta gamma delta", 2) == "alpha beta"
    # a type's name in a name says what it works on (`int_to_bytes`: "convert an integer to
    # bytes"); in a body it is noise
    assert title_of("int_to_bytes") == "int_to_bytes int integer to bytes"
    assert title_of("parse_bool") == "parse_bool parse bool boolean"
    assert words_of("int x = parse(bool y)", 50) == "parse"


def test_words_of_an_identifier_seen_before_depend_only_on_the_noise_set() -> None:
    # Each identifier's split is kept per noise set: the second call and the empty set must
    # not get the first call's answer.
    text = "self.num_items = impl_count(self.num_items, ref)"
    assert words_of(text, 50) == "num number items count"
    assert words_of(text, 50) == "num number items count"
    assert words_of(text, 50, frozenset()) == (
        "self num number items impl implementation count ref reference"
    )
    assert words_of(text, 2) == "num number"  # the limit is met after a word's expansion
    assert words_of("num_x", 1) == "num number"


def test_words_of_digits_and_underscores_cut_identifiers_and_lone_underscores_are_a_word() -> None:
    # Words come from runs of letters: a digit or `_` ends a part, and an identifier of
    # underscores only (after digits) is the one word `__` (split_identifier finds no part).
    # Letters with digits after them are a word whole as well (`search u128` found nothing
    # where a body parsed `::<u128>`), but not in a number (`0x1fff`).
    text = "x = 12__ + a1__ + HTTP2Server(__init__, foo__) 0x1fff"
    assert words_of(text, 50) == "__ a1 http server http2 init initialize foo fff"
    assert words_of("cfg_2num 9__", 3) == "cfg config num number"
    text = "text.parse::<u128>(); int64_t n = utf8Decode(parseI64, IPv4, sha256sum); 1e10"
    assert words_of(text, 50) == (  # `i64` is noise, as `u32` is (a type on every line)
        "text parse u128 int64 utf unicode decode utf8 pv ipv4 sha sum sha256"
    )


def test_words_of_dunder_names_non_ascii_text_and_a_lone_underscore_after_them() -> None:
    # Dunder names end like a lone `__` (the cheap hint), yet hold none; a lone one later in
    # the text still counts; a letter outside ASCII ends a run as any other character does.
    assert words_of("def __init__(self): return obj.__dict__, __name__", 50) == (
        "init initialize obj dict name"
    )
    assert words_of("def __init__(self):\n    x = __\n", 50) == "init initialize __"
    assert words_of("café_count = naïve", 50) == "caf count na ve"


def test_a_c_name_written_of_two_words_in_lower_case_is_found_by_them(tmp_path: Path) -> None:
    """Lua's `addquoted` and `computesizes` were no answer to "quote a string" or "compute the
    sizes": the index kept each name whole. A C name of two English words has them in its
    title and body; a word the vocabulary lacks is not cut into pieces (`parser`, `append`), nor are
    Python's or C++'s names (`username`)."""
    assert compound_words("addquoted") == ("add", "quoted")
    assert compound_words("computesizes") == ("compute", "sizes")
    assert compound_words("namespace") == ("name", "space")  # the commoner cut
    for whole in ("parser", "append", "printable", "dentry", "quoted", "ephemerons"):
        assert compound_words(whole) is None
    assert title_of("luaL_addquoted", compounds=True) == "luaL_addquoted lua addquoted add quoted"
    assert title_of("luaL_addquoted") == "luaL_addquoted lua addquoted"
    root = indexed(
        tmp_path / "repo",
        {
            "lstrlib.c": (
                "static void addquoted (luaL_Buffer *b, const char *s, size_t len) {\n"
                "  luaL_addchar(b, '\"');\n"
                "}\n"
                "static int str_len (lua_State *L) { return 1; }\n"
                "int uv_available_parallelism (void) { return sched_getaffinity(0); }\n"
            ),
            "names.py": "def username(user):\n    return user.name\n",
        },
    )
    _, data, _ = search(root, "quoted output", "--mode", "lexical")
    assert names(data)[0] == "addquoted"
    # and in its body: libuv's `sched_getaffinity` call said nothing of "affinity"
    _, data, _ = search(root, "cpu affinity", "--mode", "lexical")
    assert names(data)[0] == "uv_available_parallelism"
    _, data, _ = search(root, "user name", "--mode", "lexical", "--path", "names.py")
    assert data["results"][0]["name"] == "username"  # by its body's words, not its title's


def test_a_long_section_is_cut_at_paragraphs_never_in_a_fence() -> None:
    paragraphs = [f"paragraph {n} " + "word " * 80 for n in range(12)]
    fence = ["```", *(["code line " + "x" * 60] * 40), "```"]
    lines = "\n\n".join(paragraphs[:6]).split("\n") + [""] + fence + [""]
    lines += "\n\n".join(paragraphs[6:]).split("\n")
    pieces = _pieces(lines)
    assert len(pieces) > 2
    fence_start, fence_end = lines.index("```"), len(lines) - 1 - lines[::-1].index("```")
    for _start, end in pieces:
        assert not fence_start < end <= fence_end, "a piece ends inside the fence"
    overlaps = [end - start for (_, end), (start, _) in zip(pieces, pieces[1:], strict=False)]
    assert all(gap >= 0 for gap in overlaps), "no line is left out between pieces"
    assert any(gap > 0 for gap in overlaps), "a short last paragraph starts the next piece too"
    fence_at = lines.index("```")
    holding_fence = [piece for piece in pieces if piece[0] <= fence_at < piece[1]]
    assert len(holding_fence) == 1, "a long paragraph (the fence) is not repeated"
    assert pieces[0][0] == 0 and pieces[-1][1] == len(lines)
    content = "\n".join(lines)
    chunks = doc_chunks("a.md", [(1, "Long", 1, 1, 1 + len(lines), content)])
    assert [c.name for c in chunks] == ["Long"] * len(pieces)
    assert chunks[-1].end_line == 1 + len(lines)


# --- by meaning: the real model, the embedding cache, the vector stores ---------------------


def test_a_class_and_its_one_member_are_one_answer(tmp_path: Path) -> None:
    # A class whose only method is __init__ came back twice, as the class and as __init__,
    # and took two of the first places (PyYAML's tokens, a search user's report).
    token = (
        "class {name}Token:\n    id = '<{tag}>'\n\n"
        "    def __init__(self, value, start_mark, end_mark):\n"
        "        '''A token that refers to an {tag} by its value.'''\n"
        "        self.value = value\n        self.start_mark = start_mark\n"
    )
    parser = (
        "class Parser:\n"
        "    def parse_alias(self):\n        '''Read an alias token.'''\n        return 1\n\n"
        "    def parse_anchor(self):\n        '''Read an anchor token.'''\n        return 2\n"
    )
    root = indexed(
        tmp_path / "repo",
        {
            "tokens.py": token.format(name="Alias", tag="alias") + "\n\n"
            + token.format(name="Anchor", tag="anchor"),
            "parser.py": parser,
        },
    )  # fmt: skip
    _, data, _ = search(root, "token that refers to an alias", "--mode", "lexical")
    places = [(hit["name"], hit["start_line"], hit["end_line"]) for hit in data["results"]]
    alias = [place for place in places if place[0].startswith("AliasToken")]
    assert len(alias) == 1, places
    assert places[0] == alias[0]
    # A class of two methods is no twin of either: each is its own answer.
    _, data, _ = search(root, "read an alias token", "--mode", "lexical")
    names = [hit["name"] for hit in data["results"]]
    assert "Parser.parse_alias" in names and "Parser" in names, names


def test_a_docs_file_s_further_sections_count_half(tmp_path: Path) -> None:
    # A man page's NAME, DESCRIPTION, EXAMPLE and SEE ALSO all share its function's words:
    # libmodbus's pages took 46 of a search user's 200 top-ten places, the code below them.
    # Past a docs file's best section, each of its sections counts half.
    page = (
        "serial_rts(3)\n=============\n\nNAME\n----\n"
        "serial_rts - the RTS line mode around a transmission\n\n"
        "DESCRIPTION\n-----------\nThe RTS line mode is set around each transmission: the RTS"
        " line goes up before a transmission.\n\n"
        "EXAMPLE\n-------\nSet the RTS line mode, then start a transmission and watch the RTS"
        " line.\n\n"
        "SEE ALSO\n--------\nserial_rts_delay, the RTS line around a transmission\n"
    )
    code = (
        "/* Raise the RTS pin, write the request, then lower it. */\n"
        "static int serial_send(int fd, const char *req, int len)\n{\n"
        "    int size;\n    rts_up(fd);\n    size = write(fd, req, len);\n"
        "    rts_down(fd);\n    return size;\n}\n\n"
        "/* Close the port once the last transmission is out. */\n"
        "static void serial_close(int fd)\n{\n    close(fd);\n}\n"
    )
    root = indexed(tmp_path / "repo", {"doc/serial_rts.txt": page, "src/serial.c": code})
    _, data, _ = search(root, "raise the RTS line around a transmission", "--mode", "lexical")
    sections = [hit["score"] for hit in data["results"] if hit["path"] == "doc/serial_rts.txt"]
    assert len(sections) >= 3, data["results"]
    assert all(score <= sections[0] / 2 + 0.0001 for score in sections[1:]), sections


def index_json(root: Path, *args: str) -> dict:
    done = repomap("index", str(root), "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"][0]  # the summary, the envelope's one item


def test_a_text_many_chunks_share_is_embedded_once_across_batches(tmp_path: Path) -> None:
    # 300 files hold the same helper (its embedding text leaves the path out: one hash) and a
    # function of their own: the helper's chunks fall in every batch of 256. Cut by chunks, each
    # batch embedded the helper again, and the run's count exceeded its dry run's.
    root = tmp_path / "repo"
    root.mkdir()
    for n in range(300):
        (root / f"m{n:03}.py").write_text(
            f"def shared_helper():\n    return 42\n\n\ndef own_{n}(x):\n    return x + {n}\n"
        )
    plan = index_json(root, "--dry-run")["embeddings"]
    done = index_json(root, "--embed")["embeddings"]
    assert done["embedded"] == plan["embedded"] < plan["chunks"]
    assert done["changed"] == done["chunks"] and done["coverage"] == 1
    with sqlite3.connect(root / ".repomap" / "index.db") as db:
        texts = db.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    assert done["embedded"] == texts  # each text once, and every chunk has its vector
    # Every changed chunk is accounted for: embedded, one more of a text, or from the cache.
    assert done["embedded"] + done["shared"] + done["reused"] == done["changed"]
    assert plan["shared"] == done["shared"] == 299  # the helper's other 299 chunks


def test_the_index_summary_says_how_fast_the_model_embedded(tmp_path: Path) -> None:
    # A search user worked the rate out from "N embedded" and the embed time: the wait of a
    # large tree depends on it.
    root = indexed(tmp_path / "repo", {"a.py": "def one():\n    return 1\n"})
    done = repomap("index", str(root), "--force", "--embed")
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("embed ")]
    rate = re.search(r"embed ([0-9.]+) s.*; ([0-9.]+) chunks/s;", line)
    embedded = re.search(r"(\d+) embedded", line)
    assert rate and embedded and int(embedded.group(1)) > 0, line
    seconds, count = float(rate.group(1)), int(embedded.group(1))  # seconds shown to 0.01
    assert count / (seconds + 0.006) <= float(rate.group(2)) <= count / max(seconds - 0.006, 1e-3)
    again = repomap("index", str(root), "--embed")  # nothing to embed: no rate to give
    assert "chunks/s" not in again.stdout


def test_embedding_progress_knows_its_total_first_and_moves_within_a_batch(tree: Path) -> None:
    """The bar shows 0/N before the first texts are embedded, and moves as the model's small
    batches finish (a bar that moved once per written batch had no ETA on a small tree)."""
    from repomap import config
    from repomap.index import pipeline

    seen: list[tuple[int, int]] = []
    summary = pipeline.embed(config.resolve(tree), progress=lambda *done: seen.append(done))
    total = seen[0][1]
    assert seen[0] == (0, total) and seen[-1] == (total, total) and total == summary.embedded
    assert len(seen) > 3  # one written batch (under 256 chunks), several model batches
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_semantic_search_needs_embeddings_then_finds_by_meaning(tree: Path) -> None:
    plain = repomap("search", "retry backoff", "--root", str(tree))
    assert plain.returncode == 0 and "no embeddings" in plain.stderr  # the default: words only
    assert search(tree, "retry backoff")[1]["mode"] == "lexical"
    done = repomap("search", "retry", "--mode", "semantic", "--root", str(tree))
    assert done.returncode == 2
    assert "no embeddings yet" in done.stderr and "Traceback" not in done.stderr
    plan = index_json(tree, "--dry-run")["embeddings"]
    assert plan["embedded"] == plan["chunks"] > 0 and plan["pending"] == plan["chunks"]
    assert repomap("search", "retry", "--mode", "semantic", "--root", str(tree)).returncode == 2
    first = index_json(tree, "--embed")["embeddings"]
    assert first["embedded"] == first["changed"] == first["chunks"] and first["coverage"] == 1
    code, data, _ = search(tree, "wait longer between attempts each time", "--mode", "semantic")
    assert code == 0 and names(data)[0] == "RetryPolicy.backoff_delay"
    assert search(tree, "retry backoff")[1]["mode"] == "hybrid"  # the default, with vectors
    assert data["meta"]["model_id"].startswith("all-MiniLM-L6-v2") and data["meta"]["coverage"] == 1
    _, hybrid, _ = search(tree, "how long to wait before trying again", "--mode", "hybrid")
    assert names(hybrid)[0] in {"RetryPolicy.backoff_delay", "RetryPolicy"}
    timings = hybrid["meta"]["timings_ms"]  # the embedding started early counts in the total
    assert timings["total"] >= max(timings["embed"], timings["lexical"] + timings["vector"])
    _, only_rust, _ = search(tree, "checksum", "--mode", "semantic", "--lang", "rust")
    assert {hit["language"] for hit in only_rust["results"]} == {"rust"}
    _, only_docs, _ = search(tree, "deploy", "--mode", "semantic", "--path", "docs/")
    assert {hit["path"] for hit in only_docs["results"]} == {"docs/guide.md"}
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    (docs_chunks,) = db.execute("SELECT count(*) FROM chunks WHERE doc_id IS NOT NULL").fetchone()
    assert only_docs["count"] == docs_chunks  # every candidate ranked, the last one too
    # An empty answer says why: no word held, nothing near in meaning (it said only
    # "nothing matches" to a question in French and to `purple elephant dancing`)
    for mode in ("semantic", "hybrid"):
        empty = repomap("search", "purple elephant dancing", "--mode", mode, "--root", str(tree))
        assert empty.returncode == 1 and "nothing matches" in empty.stderr
        assert "none is near it in meaning (best similarity 0." in empty.stderr, empty.stderr
    _, words, _ = search(tree, "purple elephant dancing", "--mode", "lexical")
    assert words["notes"] == [
        "no chunk holds any of the question's words; say what the code does in other words, or"
        " look a name up"
    ]
    # a function holds "partition": the note speaks of the chunks a filter keeps (it said none did)
    _, kept, _ = search(tree, "partition", "--mode", "lexical", "--kind", "class")
    assert kept["notes"][0].startswith("no chunk the filters keep holds any of the question's")


def _brew(tree: Path) -> None:
    source = tree / "net" / "cache.py"
    source.write_text(
        source.read_text().replace(
            "def evict_least_recently_used(store, capacity):",
            'def evict_least_recently_used(store, capacity):\n    """Brew espresso with oat milk."""',
        )
    )


def test_an_edit_indexed_without_embedding_drops_the_old_vector(tree: Path) -> None:
    # A query's refresh (or `index` without --embed) rewrote an edited function's chunk but
    # kept its old vector: the old meaning answered while coverage said 100%.
    index_json(tree, "--embed")
    _brew(tree)
    index_json(tree, "--no-embed")
    code, data, _ = search(tree, "brew espresso with oat milk", "--mode", "semantic")
    assert code == 0
    chunks = sqlite3.connect(tree / ".repomap" / "index.db").execute("SELECT count(*) FROM chunks")
    (total,) = chunks.fetchone()
    assert data["meta"]["coverage"] == pytest.approx((total - 1) / total)
    assert "evict_least_recently_used" not in names(data)  # no vector of its new text yet
    again = index_json(tree, "--embed")["embeddings"]
    assert again["changed"] == 1 and again["deleted"] == 0 and again["coverage"] == 1
    code, data, _ = search(tree, "brew espresso with oat milk", "--mode", "semantic")
    assert names(data)[0] == "evict_least_recently_used" and data["meta"]["coverage"] == 1


def test_a_search_by_meaning_embeds_the_chunks_its_refresh_made(tree: Path) -> None:
    # A function edited since indexing was re-indexed by the search's refresh and found by
    # words, not by meaning: the answer said only that 95% of the chunks had embeddings.
    index_json(tree, "--embed")
    _brew(tree)
    code, data, err = search(tree, "brew espresso with oat milk", "--mode", "semantic")
    assert code == 0
    assert "note: re-indexed 1 changed file first" in err
    assert re.search(r"note: embedded [12] new chunks? first \(\d+ ms\)", err), err
    assert names(data)[0] == "evict_least_recently_used" and data["meta"]["coverage"] == 1
    _brew_words = "steam the milk for the espresso"
    with open(tree / "net" / "cache.py", "a", encoding="utf-8") as file:
        file.write(f'\n\ndef froth():\n    """{_brew_words}"""\n')
    code, data, err = search(tree, _brew_words, "--mode", "lexical")  # words: no model run
    assert code == 0 and "embedded" not in err
    assert data["meta"]["coverage"] is None or data["meta"]["coverage"] < 1


def test_a_search_leaves_many_new_chunks_to_repomap_index(tree: Path) -> None:
    # more than 64 new texts are `repomap index`'s work: the search answers, says how far the
    # embeddings are, and embeds nothing
    from repomap.cli.refresh import EMBED_MAX_TEXTS

    index_json(tree, "--embed")
    many = "".join(
        f'\n\ndef pour_{n}():\n    """Pour cup number {n} of tea."""\n'
        for n in range(EMBED_MAX_TEXTS + 6)
    )
    with open(tree / "net" / "cache.py", "a", encoding="utf-8") as file:
        file.write(many)
    code, data, err = search(tree, "pour a cup of tea", "--mode", "semantic")
    assert code == 0 and "re-indexed 1 changed file" in err and "embedded" not in err
    assert data["meta"]["coverage"] < 1
    again = index_json(tree, "--embed")["embeddings"]
    assert again["embedded"] >= EMBED_MAX_TEXTS + 6 and again["coverage"] == 1


@pytest.mark.parametrize("flag", ["--no-embed", "--dry-run"])
def test_an_index_run_that_does_not_embed_counts_the_vectors_it_drops(
    tree: Path, flag: str
) -> None:
    index_json(tree, "--embed")
    source = tree / "net" / "cache.py"
    source.write_text(source.read_text().replace("oldest", "eldest"))
    summary = index_json(tree, flag)
    assert summary["modified"] == 1 and summary["vectors_dropped"] == 1
    if flag == "--dry-run":  # the plan: the dropped chunk is to be embedded again
        assert summary["embeddings"]["changed"] == 1 and summary["embeddings"]["deleted"] == 0
    again = index_json(tree, "--embed")["embeddings"]
    assert again["changed"] == 1 and again["coverage"] == 1


def test_a_run_killed_between_its_batches_and_the_check_leaves_the_check_to_the_next(
    tree: Path,
) -> None:
    """A refresh wrote an edited file's chunks again and died before checking their vectors
    (the ranges lived in its writer's memory): the old vector answered with the old meaning
    and coverage said 100% until the next embedding run. The ranges are kept with each batch
    now, and the next run, which finds nothing changed, checks them."""
    from repomap.index import pipeline as indexer

    index_json(tree, "--embed")
    source = tree / "net" / "cache.py"
    source.write_text(
        source.read_text().replace(
            "def evict_least_recently_used(store, capacity):",
            'def evict_least_recently_used(store, capacity):\n    """Brew espresso with oat milk."""',
        )
    )
    stat = source.stat()
    job = indexer.Job("net/cache.py", str(source), "python", stat.st_size, stat.st_mtime_ns, None)
    db_path = tree / ".repomap" / "index.db"
    db = store.open_index(db_path)
    try:
        writer = store.Writer(db)
        with writer.batch():  # the file's rows again; then the run "dies" before its check
            writer.replace_file(
                indexer.read_and_extract(job), store.indexed_files(db)["net/cache.py"].id, "now"
            )
    finally:
        db.conn.close()
    pending = "SELECT value FROM meta WHERE key = 'vector_checks_pending'"
    (kept,) = sqlite3.connect(db_path).execute(pending).fetchone()
    assert json.loads(kept)  # the rewritten file's chunk ids
    summary = index_json(tree, "--no-embed")
    assert summary["modified"] == 0 and summary["vectors_dropped"] == 1
    assert sqlite3.connect(db_path).execute(pending).fetchone() == ("",)
    code, data, _ = search(tree, "brew espresso with oat milk", "--mode", "semantic")
    assert code == 0 and data["meta"]["coverage"] < 1
    assert "evict_least_recently_used" not in names(data)  # not found by its old vector
    again = index_json(tree, "--embed")["embeddings"]
    assert again["changed"] == 1 and again["coverage"] == 1


def test_the_default_mode_falls_back_to_words_when_the_store_holds_no_vector(tree: Path) -> None:
    # A store named but empty (every vector deleted since): the MCP tool fell back to lexical,
    # the CLI failed with "no embeddings yet".
    index_json(tree, "--embed")
    with sqlite3.connect(tree / ".repomap" / "index.db") as db:
        db.execute("DELETE FROM vectors")
    code, data, _ = search(tree, "retry backoff")
    assert code == 0 and data["mode"] == "lexical" and names(data)
    done = repomap("search", "retry", "--mode", "semantic", "--root", str(tree))
    assert done.returncode == 2 and "no embeddings yet" in done.stderr


def test_the_cache_embeds_only_new_texts_across_changes_renames_and_force(tree: Path) -> None:
    first = index_json(tree, "--embed")["embeddings"]
    again = index_json(tree, "--embed")["embeddings"]
    assert (again["changed"], again["embedded"], again["deleted"]) == (0, 0, 0)
    (tree / "net").rename(tree / "network")  # every chunk of net/ moves: same texts?
    text = (tree / "src/lib.rs").read_text().replace("Adler-32", "Adler 32")
    (tree / "src/lib.rs").write_text(text)
    moved = index_json(tree, "--embed")["embeddings"]
    assert moved["changed"] > 0 and moved["deleted"] > 0
    assert moved["embedded"] < moved["changed"]  # the renamed files' bodies came from the cache
    forced = index_json(tree, "--force", "--embed")["embeddings"]
    assert forced["embedded"] == 0 and forced["chunks"] == first["chunks"]
    code, data, _ = search(tree, "checksum of bytes", "--mode", "semantic", "--limit", "1")
    assert code == 0 and data["results"][0]["path"] == "src/lib.rs"


def test_a_question_no_chunk_has_a_word_of_says_its_answers_are_by_meaning_only(
    tree: Path,
) -> None:
    """A question close in meaning to code that holds none of its words is answered, and the
    answer says no chunk holds a word of it (JSON meta, a note on stderr). Gibberish, whose
    nearest chunk is far (cosine 0.22 here, below MIN_COSINE), matches nothing: its nearest
    neighbours came back at score 1.00 with exit 0."""
    index_json(tree, "--embed")
    meaning_only = "throw away stale entries when over size"  # cosine 0.38, no word in the tree
    code, data, _ = search(tree, meaning_only, "--mode", "hybrid")
    assert code == 0 and data["meta"]["word_matches"] == 0
    assert data["results"][0]["name"] == "evict_least_recently_used"
    done = repomap("search", meaning_only, "--root", str(tree))
    assert "no chunk holds any of the question's words" in done.stderr
    for mode in ("hybrid", "semantic"):
        code, data, _ = search(tree, "zzqxv blorptang", "--mode", mode)
        assert code == 1 and data["results"] == [], mode
        # Words the docs hold, outside the filter: semantic mode looked at the whole index and
        # answered with the far code inside it, hybrid did not (the review's case).
        code, data, _ = search(
            tree, "deploy behind a reverse proxy", "--path", "src/", "--mode", mode
        )
        assert code == 1 and data["results"] == [], mode
    done = repomap("search", "zzqxv blorptang", "--root", str(tree))
    assert done.returncode == 1 and "nothing matches" in done.stdout + done.stderr
    code, data, _ = search(tree, "how are the header lines parsed?", "--mode", "hybrid")
    assert data["meta"]["word_matches"] > 0
    done = repomap("search", "how are the header lines parsed?", "--root", str(tree))
    assert "question's words" not in done.stderr
    code, data, _ = search(tree, "zzqxv blorptang", "--mode", "lexical")
    assert code == 1 and data["meta"]["word_matches"] == 0


def test_partial_coverage_is_said(tree: Path) -> None:
    index_json(tree, "--embed")
    (tree / "net/more.py").write_text("def brand_new_helper():\n    return 42\n")
    index_json(tree, "--no-embed")  # lexical only: the new chunks have no vector yet
    code, data, _ = search(tree, "helper", "--mode", "hybrid")
    assert code == 0 and 0 < data["meta"]["coverage"] < 1
    assert "brand_new_helper" in names(data)  # found by its words meanwhile
    done = repomap("search", "helper", "--mode", "hybrid", "--root", str(tree))
    assert "have embeddings" in done.stderr
    caught_up = index_json(tree)["embeddings"]  # an index with vectors keeps them up to date
    assert (caught_up["embedded"], caught_up["coverage"]) == (1, 1)


def test_a_model_mismatch_is_refused_with_the_fix(tree: Path) -> None:
    index_json(tree, "--embed")
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    with db:
        db.execute("UPDATE embedding_models SET name = 'some-other-model'")
    db.close()
    done = repomap("search", "retry", "--mode", "semantic", "--root", str(tree))
    assert done.returncode == 2, done.stderr
    assert "EMBEDDING_MODEL_MISMATCH" in done.stderr and "repomap index --force" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    fixed = index_json(tree, "--force", "--embed")["embeddings"]  # the fix the message gives
    assert fixed["coverage"] == 1 and fixed["embedded"] == fixed["chunks"]
    assert search(tree, "retry", "--mode", "semantic")[0] == 0


def test_the_mcp_server_refuses_another_models_vectors_or_says_it_is_replacing_them(
    tree: Path,
) -> None:
    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    index_json(tree, "--embed")
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    with db:
        db.execute("UPDATE embedding_models SET name = 'some-other-model'")
        db.execute("UPDATE meta SET value = 'some-other-model' WHERE key = 'embedding_model'")
    db.close()
    settings = config.resolve(tree, workers=1)

    def ask(refresh: bool) -> list[tuple[bool, str, dict | None]]:
        server = build_server(settings, refresh=refresh)
        # The background embedder held until both calls are answered: on a small tree it
        # could finish between them, and the second call then found the vectors made (a CI run)
        gate = threading.Event()
        for embedder in server.service.embedders.values():
            made = embedder._run
            embedder._run = lambda stop, progress, made=made: gate.wait(60) and made(stop, progress)

        async def session() -> list[tuple[bool, str, dict | None]]:
            async with Client(server) as client:
                answers = []
                for arguments in ({"query": "retry"}, {"query": "retry", "mode": "semantic"}):
                    found = await client.call_tool("search_code", arguments)
                    text = found.content[0].text if found.content else ""
                    answers.append((found.is_error, text, found.structured_content))
                return answers

        try:
            return anyio.run(session)
        finally:
            gate.set()
            server.service.close()  # its embedder's thread done before the interpreter is

    # Read-only: the code and the fix, as the CLI says them (the default mode too)
    for is_error, text, _ in ask(False):
        assert is_error and "EMBEDDING_MODEL_MISMATCH" in text and "repomap index --force" in text
    # A server that keeps the index fresh embeds them again itself: it says so, and the default
    # answers by words meanwhile instead of failing.
    (default_error, _, answer), (semantic_error, said, _) = ask(True)
    assert not default_error and answer is not None and answer["mode"] == "lexical"
    assert any("being made in the background" in notice for notice in answer["notices"])
    assert semantic_error and "being made in the background" in said and "lexical" in said


def test_prune_cache_drops_only_the_vectors_of_texts_gone(tree: Path) -> None:
    """The cache keeps an edited function's old vector (a revert costs nothing); `repomap
    prune --cache` lists those, and drops them only with --apply."""
    index_json(tree, "--embed")
    path = tree / "net/cache.py"
    original = path.read_text()
    path.write_text(original.replace("oldest", "stalest"))
    assert index_json(tree)["embeddings"]["embedded"] == 1  # the edited function's new text
    listed = repomap("prune", "--cache", "--json", "--root", str(tree))
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)["results"]
    assert row["entries"] == 1 and json.loads(listed.stdout)["applied"] is False
    path.write_text(original)  # a revert: its vector is still cached, nothing is embedded
    assert index_json(tree)["embeddings"]["embedded"] == 0
    path.write_text(original.replace("oldest", "stalest"))
    assert index_json(tree)["embeddings"]["embedded"] == 0
    applied = repomap("prune", "--cache", "--apply", "--json", "--root", str(tree))
    assert applied.returncode == 0 and json.loads(applied.stdout)["results"][0]["entries"] == 1
    nothing = repomap("prune", "--cache", "--root", str(tree))
    assert nothing.returncode == 0 and "no unused cached vector" in nothing.stderr  # as prune
    path.write_text(original)  # the original text's vector was dropped: embedded again
    assert index_json(tree)["embeddings"]["embedded"] == 1
    code, data, _ = search(tree, "evict the least recently used entries", "--mode", "semantic")
    assert code == 0 and data["meta"]["coverage"] == 1


def test_an_index_keeps_its_model_window_until_force(tree: Path) -> None:
    """A new default window must not re-embed an index behind its user's back, nor make its
    searches embed the question with another window than its vectors'."""
    from repomap.embed.model import DEFAULT_MAX_TOKENS, model_id_for

    older = model_id_for(48)  # as if embedded by a release whose default window was 48
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    with db:
        db.execute("INSERT INTO meta (key, value) VALUES ('embedding_model', ?)", (older,))
    db.close()
    first = index_json(tree, "--embed")["embeddings"]
    assert first["model_id"] == older and first["embedded"] == first["chunks"]
    again = index_json(tree)["embeddings"]  # kept up to date with the same model
    assert (again["model_id"], again["embedded"]) == (older, 0)
    code, data, _ = search(tree, "checksum of bytes", "--mode", "semantic", "--limit", "1")
    assert code == 0 and data["meta"]["model_id"] == older
    assert data["results"][0]["path"] == "src/lib.rs"
    renewed = index_json(tree, "--force", "--embed")["embeddings"]
    assert renewed["model_id"] == model_id_for(DEFAULT_MAX_TOKENS) != older
    assert renewed["embedded"] == renewed["chunks"] and renewed["coverage"] == 1
    code, data, _ = search(tree, "checksum of bytes", "--mode", "semantic", "--limit", "1")
    assert code == 0 and data["meta"]["model_id"] == renewed["model_id"]


def test_vectors_can_live_in_milvus(tree: Path, tmp_path: Path) -> None:
    pytest.importorskip("pymilvus")
    uri = f"milvus:{tmp_path / 'vectors.db'}"
    summary = index_json(tree, "--vector-store", uri)["embeddings"]
    assert summary["coverage"] == 1
    code, data, _ = search(tree, "wait longer between attempts each time", "--mode", "semantic")
    assert code == 0 and names(data)[0] == "RetryPolicy.backoff_delay"
    db = sqlite3.connect(tree / ".repomap" / "index.db")
    assert db.execute("SELECT count(*) FROM vectors").fetchone() == (0,)  # all in Milvus
    # `repomap status` asks the store the index names, not the database (it said 0%)
    shown = json.loads(repomap("status", "--json", "--root", str(tree)).stdout)["results"][0]
    assert shown["embedded"] == shown["chunks"] > 0 and shown["embedded_share"] == 1.0
    # and so does MCP's index_status (it said 0 vectors, coverage 0.0, while searches answered)
    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    async def status() -> dict:
        async with Client(build_server(config.resolve(tree), refresh=False)) as client:
            return (await client.call_tool("index_status", {})).structured_content

    embedding = anyio.run(status)["roots"][0]["embedding"]
    assert embedding["vectors"] == embedding["chunks"] > 0 and embedding["coverage"] == 1
    assert "store_error" not in embedding


def test_the_mcp_server_embeds_changed_files_in_the_background(tree: Path) -> None:
    import time

    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    index_json(tree, "--embed")
    server = build_server(config.resolve(tree, workers=1))

    async def session() -> tuple[dict, dict, dict]:
        async with Client(server) as client:
            first = (await client.call_tool("index_status", {})).structured_content
            (tree / "net/quota.py").write_text(
                "def throttle_requests_per_minute(client):\n    return client.window\n"
            )
            deadline = time.monotonic() + 60
            while True:  # the refresh indexes the file, then the embedder catches up
                found = (
                    await client.call_tool(
                        "search_code",
                        {"query": "limit how often a client may call", "mode": "semantic"},
                    )
                ).structured_content
                status = (await client.call_tool("index_status", {})).structured_content
                embedding = status["roots"][0]["embedding"]
                if embedding["coverage"] == 1 and not embedding["running"]:
                    break
                assert time.monotonic() < deadline, embedding
                await anyio.sleep(0.2)
            final = (
                await client.call_tool(
                    "search_code",
                    {"query": "limit how often a client may call", "mode": "semantic"},
                )
            ).structured_content
            return first, found, final

    first, _, final = anyio.run(session)
    assert first["roots"][0]["embedding"]["coverage"] == 1
    assert final["coverage"] == 1 and final["model_id"].startswith("all-MiniLM")
    assert "throttle_requests_per_minute" in [r["name"] for r in final["results"][:3]]


def test_the_mcp_server_exits_cleanly_when_its_client_leaves_while_it_embeds(
    tree: Path,
) -> None:
    # A client that closed stdin while the background embedder was inside onnxruntime got a
    # server killed by SIGABRT ("terminate called without an active exception"): the thread
    # was left running when Python tore down. The server now stops its embedders first.
    import time

    index_json(tree, "--embed")
    sections = "".join(
        f"# Part {n}\n\nThe quota ledger {n} keeps tokens for tenant{n} and region{n}.\n\n"
        for n in range(1500)
    )
    (tree / "ledger.md").write_text(sections)  # 1,500 new chunks: seconds of embedding
    server = subprocess.Popen(
        [sys.executable, "-m", "repomap.cli", "mcp", "--root", str(tree)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "REPOMAP_WORKERS": "1"},
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict) -> None:
        assert server.stdin is not None
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
          "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})  # fmt: skip
    assert json.loads(server.stdout.readline())["id"] == 1
    send({"method": "notifications/initialized"})
    send({"id": 2, "method": "tools/call",
          "params": {"name": "index_status", "arguments": {}}})  # fmt: skip
    json.loads(server.stdout.readline())  # the refresh indexed ledger.md; the embedder starts
    deadline = time.monotonic() + 30
    while True:  # until the embedder is at work on the new sections
        send({"id": 3, "method": "tools/call",
              "params": {"name": "index_status", "arguments": {}}})  # fmt: skip
        answer = json.loads(server.stdout.readline())["result"]["structuredContent"]
        embedding = answer["roots"][0]["embedding"]
        if embedding["running"] and embedding["embedded"] > 0:
            break
        assert time.monotonic() < deadline, embedding
        time.sleep(0.1)
    server.stdin.close()
    returncode = server.wait(timeout=60)
    stderr = server.stderr.read().decode() if server.stderr else ""
    assert returncode == 0, stderr
    assert "terminate called" not in stderr
    with sqlite3.connect(tree / ".repomap" / "index.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_read_only_mcp_server_embeds_nothing(tree: Path) -> None:
    # `repomap mcp --no-refresh` never writes, vectors included: its embedder started on the
    # first call and, on a milvus-lite store, fought the search for the store's folder.
    import hashlib

    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    index_json(tree, "--embed")
    (tree / "net/quota.py").write_text("def throttle_requests(client):\n    return client.window\n")
    index_json(tree, "--no-embed")  # the new function's chunk has no vector
    settings = config.resolve(tree, workers=1)
    before = hashlib.sha256(settings.db_path.read_bytes()).hexdigest()
    server = build_server(settings, refresh=False)

    async def session() -> dict:
        async with Client(server) as client:
            await client.call_tool("search_code", {"query": "limit a client", "mode": "semantic"})
            await anyio.sleep(1.0)  # an embedder would have started by now
            return (await client.call_tool("index_status", {})).structured_content

    embedding = anyio.run(session)["roots"][0]["embedding"]
    assert not embedding["running"] and embedding["coverage"] < 1, embedding
    assert (embedding["embedded"], embedding["error"]) == (0, None)
    assert hashlib.sha256(settings.db_path.read_bytes()).hexdigest() == before


def test_restructured_text_headings_name_the_pieces_of_a_text_file() -> None:
    text = "Intro.\n\n=====\nGuide\n=====\n\nAbout it.\n\nInstall\n=======\n\nRun pip.\n\n"
    text += "From source\n-----------\n\nClone it.\n"
    from repomap.index.markdown import rst_sections

    lines = text.split("\n")
    sections = [
        (0, s.name, s.level, s.start_line, s.end_line, s.content)
        for s in rst_sections(text).sections
    ]  # as the docs index reads a .txt (index/docs.py)
    chunks = doc_chunks("docs/guide.txt", sections)
    assert [(c.name, c.start_line, c.end_line) for c in chunks] == [
        ("docs/guide.txt", 1, 1),  # the docs index's extents: trailing blank lines left out
        ("Guide", 3, 7),
        ("Guide > Install", 9, 12),
        ("Guide > Install > From source", 14, len(lines) - 1),
    ]
    assert "pip" in chunks[2].body.split()


def test_a_free_function_prototype_is_a_chunk_an_in_class_declaration_is_not() -> None:
    from operator import attrgetter

    from repomap.extractors import extract

    from repomap import store
    from repomap.index.chunks import code_chunks

    source = (
        b"/** Create a new, empty module. */\n"
        b"LLVMModuleRef LLVMModuleCreateWithName(const char *ModuleID);\n"
        b"class Module {\n public:\n  void dump() const;\n};\n"
    )
    rows = [attrgetter(*store.SYMBOL_FIELDS)(s) for s in extract("cpp", source, "Core.h").symbols]
    names = {chunk.name: chunk for chunk in code_chunks("Core.h", source, rows, [])}
    assert "Create a new, empty module." in names["LLVMModuleCreateWithName"].head
    assert "Module::dump" not in names  # found through its definition, elsewhere


def test_a_running_server_answers_the_cli_with_the_same_results(tree: Path) -> None:
    """`repomap serve` leaves a note beside the index; `repomap search` asks it (the model and
    vectors already loaded) and answers exactly as in process; without a live server it
    answers in process."""
    import socket
    import time
    import urllib.request

    index_json(tree, "--embed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "repomap.cli", "serve", str(tree), "--port", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    note = tree / ".repomap" / "index.db.serve.json"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()  # type: ignore[union-attr]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                    break
            except OSError:
                time.sleep(0.1)
        assert json.loads(note.read_text())["url"] == f"http://127.0.0.1:{port}"
        question = ("how long to wait before trying again", "--limit", "3")
        code, served, _ = search(tree, *question)
        assert code == 0 and served["meta"]["server"] == f"http://127.0.0.1:{port}"
        alone = repomap("search", *question, "--json", "--root", str(tree))
        assert alone.returncode == 0
        done = subprocess.run(
            [sys.executable, "-m", "repomap.cli", "search", *question, "--json", "--root",
             str(tree)],
            capture_output=True, text=True, timeout=120,
            env={**__import__("os").environ, "REPOMAP_NO_SERVER": "1"},
        )  # fmt: skip
        local = json.loads(done.stdout)
        assert local["meta"]["server"] is None
        assert served["results"] == local["results"] and served["mode"] == local["mode"] == "hybrid"
        _, lexical, _ = search(tree, "retry backoff", "--mode", "lexical")
        assert lexical["meta"]["server"] is None  # words alone: no round trip
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not note.exists()  # removed when the server stops
    note.write_text(json.dumps({"pid": 2**22 + 12345, "url": f"http://127.0.0.1:{port}"}))
    code, data, _ = search(tree, "how long to wait before trying again")
    assert code == 0 and data["meta"]["server"] is None  # a dead server's note is ignored


def test_chunks_are_the_same_whatever_the_hash_seed(tmp_path: Path) -> None:
    """Two redacted secrets, one inside the other: cut from the text in one order, not in a
    set's order (which changes with PYTHONHASHSEED from one process to the next)."""
    import os
    import shutil

    short = "sk_live_51HqLyjWDarjtT1zdp7dcXYZ"
    root = tmp_path / "repo"
    root.mkdir()
    (root / "keys.py").write_text(
        f'PRIMARY = "{short}"\nBACKUP = "{short}Qm9vZ3xLmNpQrStUvWx"\n\n'
        "def rotate(keys):\n    return list(reversed(keys))\n"
    )
    seen = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        shutil.rmtree(root / ".repomap", ignore_errors=True)
        done = subprocess.run(
            [sys.executable, "-m", "repomap.cli", "index", str(root), "--json"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        db = sqlite3.connect(root / ".repomap" / "index.db")
        rows = db.execute(
            "SELECT id, kind, start_line, end_line FROM chunks ORDER BY id"
        ).fetchall()
        rows += _chunk_words(db)
        db.close()
        assert not any(short in " ".join(map(str, row)) for row in rows)
        seen.add(tuple(rows))
    assert len(seen) == 1


def test_a_questions_function_words_do_not_rank_code(tmp_path: Path) -> None:
    """English function words ("doesn't", "before", "same", "again") are dropped from the
    question: a comment made of them no longer outranks the code that does the thing."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "jobs.py").write_text(
        "def log_when_done(job):\n"
        "    # it doesn't matter if this job ran before: the same line is written again\n"
        "    # once they are all out, and after them nothing\n"
        "    print(job)\n"
    )
    (root / "dirs.py").write_text(
        "def create_nested_directories(path):\n"
        '    """Create a directory and its parents; one that exists is no failure."""\n'
        "    for parent in reversed(path.parents):\n"
        "        parent.mkdir(exist_ok=True)\n"
    )
    assert repomap("index", str(root)).returncode == 0
    question = "why doesn't creating nested directories fail when the same was made before again?"
    code, data, _ = search(root, question, "--mode", "lexical")
    assert code == 0
    assert names(data) == ["create_nested_directories"]


def test_a_chunk_among_related_code_ranks_above_its_twin_alone(tmp_path: Path) -> None:
    """Two chunks of the same words: the one whose file holds other chunks that answer the
    question ranks first (without that, the tie went to the first path)."""
    root = tmp_path / "repo"
    root.mkdir()
    twin = (
        "def get_expiry_age(modification):\n"
        '    """Seconds until the session expires."""\n'
        "    return modification.seconds\n"
    )
    (root / "aaa.py").write_text(twin + "\n\ndef unrelated_helper(value):\n    return value\n")
    (root / "zzz.py").write_text(
        twin + "\n\n"
        "def get_expiry_date(modification):\n"
        '    """The date the session expires on."""\n'
        "    return modification.date\n\n\n"
        "def set_expiry(session, value):\n"
        '    """Set the session to expire after value seconds."""\n'
        "    session.expiry = value\n"
    )
    assert repomap("index", str(root)).returncode == 0
    code, data, _ = search(root, "how many seconds until a session expires?", "--mode", "lexical")
    assert code == 0
    places = [(hit["path"], hit["name"]) for hit in data["results"]]
    assert places.index(("zzz.py", "get_expiry_age")) < places.index(("aaa.py", "get_expiry_age"))


def test_vendored_code_ranks_below_the_projects_own_unless_the_question_names_it(
    tmp_path: Path,
) -> None:
    """The same definition in the project and in a copy it carries (third_party/, a top
    vendor/ folder): the project's own comes first; asking for the vendored one lifts it."""
    root = tmp_path / "repo"
    body = (
        "def parse_retry_header(value):\n"
        '    """Seconds to wait before the next retry, from a Retry-After header."""\n'
        "    return int(value)\n"
    )
    for rel in ("third_party/http/retry.py", "vendor/retry.py", "zzz/retry.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    (root / "zzz" / "other.py").write_text(  # weak matches: the scale's low end
        "".join(
            f"def helper_{n}(items):\n"
            f'    """Walk the items once; the last step {n} may wait for a lock."""\n'
            "    return items\n\n\n"
            for n in range(6)
        )
    )
    assert repomap("index", str(root)).returncode == 0
    code, data, _ = search(root, "how long to wait before retrying", "--mode", "lexical")
    assert code == 0
    paths = [hit["path"] for hit in data["results"]]
    assert paths[0] == "zzz/retry.py" and set(paths[1:3]) == {
        "third_party/http/retry.py",
        "vendor/retry.py",
    }
    # "bundled" is in no chunk: only the lifted demotion moves third_party/'s copy up
    code, data, _ = search(root, "bundled: how long to wait before retrying", "--mode", "lexical")
    scores = {hit["path"]: hit["score"] for hit in data["results"]}
    assert scores["third_party/http/retry.py"] > 0.8 * scores["zzz/retry.py"]


def test_path_and_language_filters_keep_a_data_files_records(tmp_path: Path) -> None:
    # `--path config/` dropped the records of config/settings.toml (only code files and docs
    # passed a path filter) and `--lang toml` was refused though results say `toml`. Both the
    # CLI's SQL and a server's postings in memory apply the same filters.
    import anyio
    from mcp.client import Client

    from repomap import config
    from repomap.serve.mcp_server import build_server

    root = indexed(
        tmp_path / "repo",
        {
            "config/settings.toml": "[server]\nrequest_timeout_seconds = 30\nretries = 4\n",
            "app/server.py": "def request_timeout():\n    return 30\n",
            "docs/guide.md": "# Request timeout\n\nThe server waits 30 seconds.\n",
        },
    )
    wanted = [("config/settings.toml", "data")]
    for args in (["--path", "config/"], ["--path", "settings.toml"], ["--lang", "TOML"]):
        code, data, err = search(root, "request timeout", "--mode", "lexical", *args)
        assert code == 0, err
        assert [(hit["path"], hit["kind"]) for hit in data["results"]] == wanted, args
    _, code_only, _ = search(root, "request timeout", "--mode", "lexical", "--path", "app/")
    assert [hit["path"] for hit in code_only["results"]] == ["app/server.py"]
    server = build_server(config.resolve(root, workers=1), refresh=False)

    async def ask() -> list[list[str]]:
        async with Client(server) as client:
            found = []
            for extra in ({"path": "config/"}, {"language": "toml"}, {"path": "app/"}):
                arguments = {"query": "request timeout", "mode": "lexical", **extra}
                answer = (await client.call_tool("search_code", arguments)).structured_content
                found.append([hit["file_path"] for hit in answer["results"]])
            return found

    assert anyio.run(ask) == [["config/settings.toml"], ["config/settings.toml"], ["app/server.py"]]


def test_which_paths_count_as_vendored() -> None:
    from repomap.paths import is_demoted_path

    assert is_demoted_path("third_party/zlib/inflate.c")
    assert is_demoted_path("include/spdlog/fmt/bundled/format.h")
    assert is_demoted_path("deps/double-conversion/strtod.cc")
    assert is_demoted_path("vendor/github.com/x/y.go")
    # deeper, `vendor` is often the project's own module (Rust's core_simd/src/vendor)
    assert not is_demoted_path("crates/core_simd/src/vendor/x86.rs")
    # Python's `_vendor` at any depth (pip's, bleach's html5lib above bleach's own answers)
    assert is_demoted_path("bleach/_vendor/html5lib/serializer.py")
    assert is_demoted_path("src/pip/_vendor/rich/console.py")
    assert is_demoted_path("setuptools/_vendored/x.py")
    assert not is_demoted_path("src/vendor_api.py") and not is_demoted_path("src/_vendors/x.py")
    # `external` at any depth (cereal's rapidxml); `contrib/` and `sandbox/` at the top (libpng's
    # tools and demos held 34 of a search user's 200 first places), not deeper (Django's admin)
    assert is_demoted_path("include/cereal/external/rapidxml/rapidxml.hpp")
    assert is_demoted_path("contrib/gregbook/rpng-x.c") and is_demoted_path("sandbox/x.cpp")
    assert not is_demoted_path("django/contrib/admin/options.py")
    assert not is_demoted_path("toolz/sandbox/core.py")
    assert not is_demoted_path("src/deps.rs") and not is_demoted_path("vendor.py")
    assert is_demoted_path("pkg/validators.pyi")  # a type stub
    assert is_demoted_path("src/thread_pool/test.rs") and is_demoted_path("lib/tests.rs")
    assert not is_demoted_path("src/testing_utils.rs") and not is_demoted_path("src/attest.rs")
    # folders named as tests (libpng's contrib/libtests filled 30 of 140 top-ten places)
    assert is_demoted_path("contrib/libtests/pngvalid.c")
    assert is_demoted_path("tools/testing/selftests/bpf/progs/x.c")
    assert is_demoted_path("go/testdata/a.go") and is_demoted_path("pkg/test_utils/fake.py")
    assert is_demoted_path("src/testcases/one.c") and is_demoted_path("lib/test-helpers/x.js")
    assert not is_demoted_path("releases/latest/notes.py")
    assert not is_demoted_path("crypto/attest/quote.c") and not is_demoted_path("contest/x.py")
    assert not is_demoted_path("src/testament/x.py")
    # a test harness a project carries (libconfig's tinytest/, its map's 4th and 5th files)
    assert is_demoted_path("tinytest/tinytest.c") and is_demoted_path("ext/cmocka/cmocka.h")
    assert not is_demoted_path("src/tinytest.c")  # a file so named may be the project's own
    assert not is_demoted_path("googletest/src/gtest.cc")  # googletest's own tree
    # tests and benchmarks by their file name (snappy's filled 35 of 200 top-ten places), and
    # folders with such a word in their name (attrs' typing-examples/)
    for test in ("snappy_unittest.cc", "src/codec-test.cc", "snappy_test_tool.cc",
                 "lib/zippy_benchmark.cc", "llvm/unittests/ADT/StringRefTest.cpp",
                 "typing-examples/mypy.py", "docs_src/code_samples/a.py", "perf-benchmarks/a.c",
                 "lib/gtest_unittest.h"):  # fmt: skip
        assert is_demoted_path(test), test
    for code in ("src/Contest.cpp", "src/latest.c", "lib/attest.c", "src/sample_rate/x.c",
                 "src/runner/main.c", "src/ATTEST.c", "src/testing_utils.rs", "example.py",
                 "src/catch2/catch_test_spec.cpp", "lib/is_test_mode.c",
                 "src/TestRunner.c", "src/protest.py"):  # fmt: skip
        assert not is_demoted_path(code), code
    # fuzzing harnesses (lz4's ossfuzz/ and h11's fuzz/ ranked beside the code they call)
    for harness in ("ossfuzz/compress_fuzzer.c", "fuzz/afl-server.py", "contrib/oss-fuzz/a.cc",
                    "fuzzers/objects.c", "cjson/fuzzing/afl.c", "tests/fuzzer/x.c",
                    "src/png_read_fuzzer.cc"):  # fmt: skip
        assert is_demoted_path(harness), harness
    assert not is_demoted_path("llvm/FuzzMutate/IRMutator.h")  # a library
    assert not is_demoted_path("src/fuzzy/match.rs") and not is_demoted_path("src/fuzzy.rs")
    # a file named `...Test` is left alone: imath's ImathFrustumTest.h is a frustum's test
    assert not is_demoted_path("src/Imath/ImathFrustumTest.h")
    # code in documentation, sample and demo folders (libuv's docs/code/ examples took four
    # of "signal handler"'s first eight places); the documentation itself is no test
    assert is_demoted_path("docs/code/signal/main.c") and is_demoted_path("doc/_ext/roles.py")
    assert is_demoted_path("samples/bpf/sockex1_user.c") and is_demoted_path("demos/app.py")
    assert not is_demoted_path("docs/ref/csrf.txt") and not is_demoted_path("doc/guide.md")
    assert not is_demoted_path("src/docs.rs") and not is_demoted_path("src/demo.c")


def test_a_type_stub_ranks_below_the_code_it_describes_unless_asked_for(tmp_path: Path) -> None:
    """A `.pyi` repeats the signature and docstring of the function that does the work: the
    implementation comes first; a question about the stub lifts it."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    doc = '    """Raise a TypeError unless the value is an instance of the given type."""\n'
    (root / "pkg" / "validators.pyi").write_text(f"def instance_of(kind):\n{doc}    ...\n")
    (root / "pkg" / "validators.py").write_text(
        f"def instance_of(kind):\n{doc}    return _InstanceOfValidator(kind)\n"
    )
    assert repomap("index", str(root)).returncode == 0
    code, data, _ = search(root, "check that a value is an instance of a type", "--mode", "lexical")
    assert code == 0 and data["results"][0]["path"] == "pkg/validators.py"
    code, data, _ = search(root, "stub: check that a value is an instance", "--mode", "lexical")
    scores = {hit["path"]: hit["score"] for hit in data["results"]}
    assert scores["pkg/validators.pyi"] > 0.8 * scores["pkg/validators.py"]


def test_show_picks_the_code_over_its_type_stub(tmp_path: Path) -> None:
    """cachetools' `show expire` showed the one-line stub of `__init__.pyi` as [1] and the
    method that does the work as [3]: a stub's definition counts as a declaration."""
    root = indexed(
        tmp_path / "repo",
        {
            "cache/__init__.pyi": "class TTLCache:\n    def expire(self, time: float) -> list: ...\n",
            "cache/ttl.py": (
                "class TTLCache:\n    def expire(self, time=None):\n"
                '        """Remove expired items."""\n        return [k for k in self.data]\n'
            ),
        },
    )
    done = repomap("show", "expire", "--root", str(root))
    assert done.returncode == 0 and "cache/ttl.py:2-4" in done.stdout, done.stdout
    assert "[2] method TTLCache.expire cache/__init__.pyi:2" in done.stderr, done.stderr
    # There the stub's PageRank was the higher: it no longer decides.
    from repomap.search.symbols import order_key

    stub = order_key("expire", "expire", "TTLCache.expire", "method", 1, 3, 0.9, "c.pyi", 119)
    code = order_key("expire", "expire", "TTLCache.expire", "method", 1, 3, 0.1, "c.py", 645)
    assert code < stub


def test_word_coverage_counts_each_word_once_and_a_rare_word_more(tmp_path: Path) -> None:
    """The share of a question's words a chunk holds, each weighed by its IDF: every word 1.0;
    a word said ten times counts once; the rarer of two words counts more."""
    from repomap import store
    from repomap.search.code import query_terms, word_coverage

    root = tmp_path / "repo"
    root.mkdir()
    common = "".join(f"def common_{i}(value):\n    return value\n\n\n" for i in range(8))
    (root / "many.py").write_text(common)
    (root / "code.py").write_text(
        "def flush_common_journal(journal):\n    return journal\n\n\n"
        "def common_common_common(value):\n"
        '    """common common common common common common common common common"""\n'
        "    return value\n\n\n"
        "def journal_only(entry):\n    return entry\n"
    )
    assert repomap("index", str(root)).returncode == 0
    with store.reading(root / ".repomap" / "index.db") as db:
        functions = [
            chunk_id
            for (chunk_id,) in db.conn.execute(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id"
                " WHERE f.path = 'code.py' AND c.kind = 'function' ORDER BY c.start_line"
            )
        ]  # flush_common_journal, common_common_common, journal_only
        terms = query_terms("flush the common journal")
        assert terms == ["flush", "common", "journal"]
        every, repeated, rare = word_coverage(db, terms, functions)
    assert every == pytest.approx(1.0)
    assert 0.0 < repeated < rare < every  # `common` in 10 chunks, `journal` in 2


def test_a_chunk_that_itself_matches_ranks_above_a_sibling_lifted_by_its_file(
    tmp_path: Path,
) -> None:
    """A file of many small related chunks lifts them all by its neighbour share; only the
    file's leaders (its best by words, its best by meaning) take the whole share, so a
    sibling that holds fewer of the question's words no longer outranks a chunk elsewhere
    that answers it (with the share alike, is_last_page ranked above check_in_range)."""
    root = tmp_path / "repo"
    root.mkdir()
    pages = {
        "page_count(items, per_page)": "How many pages the items fill.",
        "has_next_page(page, count)": "Whether a page comes after this page.",
        "next_page_number(page)": "The number of the page after this page.",
        "previous_page_number(page)": "The number of the page before this page.",
        "first_page_number()": "The number of the first page.",
        "last_page_number(count)": "The number of the last page; none is past it.",
        "is_last_page(page, count)": "Whether this page number is the last page, or past it.",
    }
    (root / "paging.py").write_text(
        "\n\n".join(f'def {sig}:\n    """{doc}"""\n    return 1\n' for sig, doc in pages.items())
    )
    (root / "bounds.py").write_text(
        "def check_in_range(number, last):\n"
        '    """Refuse a number past the last."""\n'
        "    if number > last:\n"
        '        raise ValueError(f"{number} is past {last}")\n'
        "    return number\n"
    )
    for topic in ("colour", "weather", "recipe", "garden", "music", "planet", "bridge", "letter",
                  "engine", "forest", "harbour", "castle"):  # fmt: skip
        (root / f"{topic}.py").write_text(
            "\n\n".join(
                f'def {topic}_{verb}(value):\n    """{verb.title()} the {topic} value."""\n'
                "    return value\n"
                for verb in ("mix", "store", "load", "print")
            )
        )
    assert repomap("index", str(root)).returncode == 0
    question = "where is a page number past the last page refused?"
    code, data, _ = search(root, question, "--mode", "lexical")
    assert code == 0
    found = names(data)
    assert found[0] == "last_page_number"  # the file's leader keeps its whole share
    assert found.index("check_in_range") < found.index("is_last_page")


C_FILES = {
    "include/pane.h": """
/* Resize a pane to an absolute number of cells. */
int pane_resize_to(struct pane *pane, int cells);
/* Compute the checksum of a frame. */
unsigned frame_checksum(const char *frame);
/* Open the terminal device. */
int term_open(const char *device);
""",
    "src/pane.c": """
static int pane_clamp(int cells, int limit);

int pane_resize_to(struct pane *pane, int cells)
{
    pane->cells = pane_clamp(cells, pane->limit);
    return pane->cells;
}

/* Keep a pane's size between one cell and its limit. */
static int pane_clamp(int cells, int limit)
{
    return cells < 1 ? 1 : (cells > limit ? limit : cells);
}
""",
    "src/checksum.c": """
unsigned frame_checksum(const char *frame)
{
    unsigned sum = 0;
    while (*frame) sum = sum * 31 + (unsigned char)*frame++;
    return sum;
}
""",
    "src/term_linux.c": "int term_open(const char *device) { return linux_open(device); }\n",
    "src/term_bsd.c": "int term_open(const char *device) { return bsd_open(device); }\n",
}


@pytest.fixture()
def c_tree(tmp_path: Path) -> Path:
    return indexed(tmp_path / "c", C_FILES)


def places(data: dict) -> list[tuple[str, str, int]]:
    return [(hit["name"], hit["path"], hit["start_line"]) for hit in data["results"]]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_c_prototype_gives_its_place_to_its_one_definition(c_tree: Path, mode: str) -> None:
    # The header's prototype holds the words; the answer is the definition it declares.
    if mode == "hybrid":
        done = repomap("index", str(c_tree), "--embed")
        assert done.returncode == 0, done.stderr
    _, resize, _ = search(c_tree, "resize a pane to an absolute size", "--mode", mode)
    found = places(resize)
    assert found[0] == ("pane_resize_to", "src/pane.c", 3)
    assert ("pane_resize_to", "include/pane.h", 2) not in found
    # A static forward declaration held its definition's comment too: one answer, not two.
    _, clamp, _ = search(c_tree, "keep the size between one cell and the limit", "--mode", mode)
    assert [place for place in places(clamp) if place[0] == "pane_clamp"] == [
        ("pane_clamp", "src/pane.c", 10)  # its comment's line: the chunk begins there
    ]
    _, checksum, _ = search(c_tree, "checksum of a frame", "--mode", mode)
    assert places(checksum)[0] == ("frame_checksum", "src/checksum.c", 1)
    assert ("frame_checksum", "include/pane.h", 4) not in places(checksum)


def test_a_c_prototype_stays_without_one_definition_the_filters_keep(c_tree: Path) -> None:
    # Two definitions (one per platform): no single answer, the prototype stays.
    _, device, _ = search(c_tree, "open the terminal device", "--mode", "lexical")
    assert places(device)[0] == ("term_open", "include/pane.h", 6)
    # A path filter without the definition keeps the prototype it allows.
    _, headers, _ = search(c_tree, "checksum of a frame", "--mode", "lexical", "--path", "include/")
    assert places(headers)[0] == ("frame_checksum", "include/pane.h", 4)


def test_a_release_history_ranks_below_the_docs_that_explain(tmp_path: Path) -> None:
    """A changelog's section says the question's words more often than the guide that
    explains them (a higher BM25), and still ranks below it: the CLI's way (one query) and a
    server's (its reader keeps the record docs per index content) alike."""
    from repomap import config, store
    from repomap.search.code import lexical_scores, make_filters, query_terms, search_code

    pool = "connection pool size limits how many sockets stay open to each host"
    root = indexed(
        tmp_path / "repo",
        {
            "docs/tuning.md": f"# Tuning\n\n## Pools\n\nThe {pool}.\n",
            "CHANGELOG.md": f"# Changelog\n\n## 2.0\n\nThe {pool}: the {pool}, raised to 20.\n",
            "net/pool.py": "def open_socket(host):\n    return host.connect()\n",
        },
    )
    question = "connection pool size limit"
    code, data, _ = search(root, question, "--mode", "lexical")
    assert code == 0
    paths = [hit["path"] for hit in data["results"]]
    assert paths.index("docs/tuning.md") < paths.index("CHANGELOG.md")
    reader = store.KeptReader(config.resolve(root).db_path)
    for _ in range(2):  # the second asks with the record docs kept
        with reader.snapshot() as db:
            raw = lexical_scores(db, query_terms(question), make_filters(db))
            best = max(raw, key=lambda chunk_id: raw[chunk_id][0])
            first = db.scalar(
                "SELECT d.path FROM chunks c JOIN doc_files d ON d.id = c.doc_id WHERE c.id = ?",
                (best,),
            )
            assert first == "CHANGELOG.md"  # by its words alone, the changelog would be first
            served = search_code(db, question, mode="lexical", log=False)
            assert [(hit.path, hit.start_line) for hit in served.hits] == [
                (hit["path"], hit["start_line"]) for hit in data["results"]
            ]
    reader.close()


def test_a_long_crate_doc_is_cut_into_sections_at_its_headings(tmp_path: Path) -> None:
    # crossbeam-channel's 340-line `//!` crate doc was one module chunk (lines 1-371): its
    # `# Disconnection` section answered "what happens to the messages still in the channel
    # when all senders are dropped" at rank 134.
    filler = "".join(f"//! Point {n}: a channel sends values between threads.\n" for n in range(25))
    crate_doc = (
        "//! Multi-producer multi-consumer channels for message passing.\n//!\n"
        + filler
        + "//!\n//! # Disconnection\n//!\n"
        "//! When all senders are dropped, the channel becomes disconnected. Messages still\n"
        "//! in it can be received; after them, receiving fails.\n//!\n"
        "//! ```\n//! # use std::thread;\n//! let (s, r) = unbounded();\n//! ```\n//!\n"
        "//! # Selection\n//!\n//! The select macro waits on several operations.\n" + filler
    )
    root = indexed(
        tmp_path / "repo",
        {"src/lib.rs": crate_doc + "\n/// Sends a message.\npub fn send_message() {}\n"},
    )
    question = "what happens to the messages still in the channel when all senders are dropped"
    code, data, _ = search(root, question, "--mode", "lexical")
    top = data["results"][0]
    assert code == 0 and (top["kind"], top["name"]) == ("section", "Disconnection"), names(data)
    # its own lines: the heading to the last line before `# Selection` (the `# use` in the
    # fence is no heading)
    assert (top["path"], top["start_line"], top["end_line"]) == ("src/lib.rs", 29, 37)
    kinds = {(hit["kind"], hit["name"]) for hit in data["results"]}
    assert ("module", "src/lib.rs") in kinds or len(data["results"]) < 10
    # a short crate doc stays the module chunk's alone
    short = indexed(tmp_path / "short", {"src/lib.rs": "//! # Title\n//!\n//! Channels.\n"})
    _, data, _ = search(short, "channels", "--mode", "lexical")
    assert [hit["kind"] for hit in data["results"]] == ["module"]


def test_a_data_file_s_records_rank_below_the_code_that_answers(tmp_path: Path) -> None:
    # serde_json's CI workflow came first for "skip over a value without building anything":
    # a record holds many words; it ranks as module code does now.
    root = indexed(
        tmp_path / "repo",
        {
            "src/de.py": (
                "def ignore_value(reader):\n"
                '    """Skip over one value in the input without building it."""\n'
                "    depth = 0\n    return reader.skip(depth)\n"
            ),
            ".github/workflows/ci.yml": (
                "name: skip value\non: [push]\njobs:\n  value:\n    steps:\n"
                "      - run: skip the value without building anything\n"
                "      - run: cargo build --skip value\n"
            ),
        },
    )
    code, data, _ = search(root, "skip over a value without building anything", "--mode", "lexical")
    assert code == 0
    kinds = [hit["kind"] for hit in data["results"]]
    assert kinds[0] == "function" and "data" in kinds  # still found, below the code


def test_a_question_that_spells_a_name_finds_its_definition_first(tmp_path: Path) -> None:
    # libpng: `repomap search png_calculate_crc --mode lexical` ranked a short macro that says
    # the name's words (CRC_INIT) above the long definition. A name spelled as code asks for
    # that definition; plain words are no name.
    body = "".join(f"    table_{n} = ptr[{n}] ^ length\n" for n in range(60))
    root = indexed(
        tmp_path / "repo",
        {
            "png.py": f'def png_calculate_crc(ptr, length):\n    """Update a sum."""\n{body}',
            "fix.py": "".join(
                f'def png_crc_{n}():\n    """Calculate the png crc: png crc calculate {n}."""\n'
                f"    return png_calculate_crc({n}, {n})\n\n"
                for n in ("init", "table", "byte", "word")
            ),
        },
    )
    _, words, _ = search(root, "calculate png crc", "--mode", "lexical")
    assert names(words)[0] != "png_calculate_crc"  # on the words alone, shorter chunks win
    code, data, _ = search(root, "png_calculate_crc", "--mode", "lexical")
    assert code == 0 and names(data)[0] == "png_calculate_crc"


def test_a_bare_word_a_qualified_name_or_a_name_in_backticks_finds_its_definition_first(
    tmp_path: Path,
) -> None:
    # A search user on click, h11 and smallvec: `echo` ranked click's `echo` 15th (below the
    # test helpers that say "echo" more often), `Connection` h11's class 30th in lexical mode,
    # `SmallVec::grow` the method 39th (below four `impl SmallVec` blocks: `SmallVec` alone
    # was the name taken) and `Context.invoke` below `Command.invoke`.
    echoes = "".join(
        f'    def _echo_{n}(self):\n        """Echo, echo: echo the echo {n}."""\n'
        f"        return echo(self)\n\n"
        for n in range(4)
    )
    body = "".join(f"    line_{n} = message[{n}]\n" for n in range(40))
    root = indexed(
        tmp_path / "repo",
        {
            "utils.py": f'def echo(message):\n    """Print a message."""\n{body}',
            "echoing.py": f"class EchoingInput:\n{echoes}",
            "core.py": (
                "class Command:\n    def invoke(self, context):\n"
                '        """Invoke the command: invoke invoke, context invoke."""\n'
                "        return context\n\n\n"
                "class Context:\n    def invoke(self, callback):\n"
                '        """Call a callback."""\n'
                + "".join(f"        step_{n} = callback({n})\n" for n in range(30))
            ),
            "lib.rs": (
                "pub struct SmallVec { len: usize }\n\n"
                "impl SmallVec {\n    /// Grow the small vec: grow, grow.\n"
                "    pub fn try_grow(&mut self) -> bool { self.grow(); true }\n}\n\n"
                "impl SmallVec {\n    /// Grows the SmallVec, grow it.\n"
                "    pub fn reserve(&mut self) { self.grow() }\n}\n\n"
                "impl SmallVec {\n    pub fn grow(&mut self) {\n"
                + "".join(f"        let step_{n} = self.len + {n};\n" for n in range(30))
                + "    }\n}\n"
            ),
        },
    )
    for question, first in (
        ("echo", ("utils.py", 1)),
        ("where is `echo` defined?", ("utils.py", 1)),
        ("Context.invoke", ("core.py", 8)),
        ("SmallVec::grow", ("lib.rs", 14)),
    ):
        code, data, _ = search(root, question, "--mode", "lexical")
        top = data["results"][0]
        assert code == 0 and (top["path"], top["start_line"]) == first, (question, names(data))
    _, data, _ = search(root, "echo the echo", "--mode", "lexical")
    assert names(data)[0] != "echo"  # plain words in a sentence are no name


def test_the_names_a_question_asks_for_are_read_from_the_candidates_not_every_symbol(
    tmp_path: Path,
) -> None:
    # On the kernel (4M symbols) `repomap search kmalloc` took 10 s: the definitions of the
    # asked names were read by name through an index that ignores case, so every symbol was
    # scanned. They are read from the candidates' chunks, through the symbols' (file, line).
    from repomap.search import code

    root = indexed(tmp_path / "repo", {"a.py": "def kmalloc(size):\n    return size\n"})
    with store.reading(root / ".repomap" / "index.db") as db:
        plan = db.conn.execute(f"EXPLAIN QUERY PLAN {code._NAMED_SQL}", ("[1]", '["kmalloc"]'))
        steps = [row[-1] for row in plan]
    assert any("SEARCH s USING INDEX symbols_file" in step for step in steps), steps
    assert not any(step.startswith(("SCAN s", "SCAN symbols")) for step in steps), steps
    _, data, _ = search(root, "kmalloc", "--mode", "lexical")
    assert names(data)[0] == "kmalloc"


def test_of_several_definitions_of_an_asked_name_a_documented_one_comes_first(
    tmp_path: Path,
) -> None:
    # The kernel's kmalloc, with its kernel-doc, ranked fifth for `kmalloc`: four short,
    # undocumented stand-ins in tools/ hold the name's word more densely.
    body = "".join(f"\tsize_{n} = size + {n};\n" for n in range(40))
    root = indexed(
        tmp_path / "repo",
        {
            "include/slab.h": "/**\n * kmalloc - allocate memory\n * @size: how many bytes\n */\n"
            f"static inline void *kmalloc(unsigned long size)\n{{\n{body}\treturn 0;\n}}\n",
            "tools/ring.c": "static void *kmalloc(unsigned size)\n{\n\treturn kmalloc_fake;\n}\n",
            "tools/shim.c": "void *kmalloc(unsigned long s)\n{\n\treturn malloc(s);\n}\n",
        },
    )
    _, data, _ = search(root, "kmalloc", "--mode", "lexical")
    assert [(r["path"], r["name"]) for r in data["results"]][0] == ("include/slab.h", "kmalloc")
    assert {r["path"] for r in data["results"][1:3]} == {"tools/ring.c", "tools/shim.c"}


def test_a_name_with_digits_finds_its_own_definition_first(tmp_path: Path) -> None:
    """The index keeps digits with their letters (`rfc3339`, `utf8`); the question's `3339` and
    `8` alone matched nothing, and a longer name holding the same letters ranked first."""
    assert query_terms("parse_rfc3339") == ["parse", "rfc", "rfc3339"]
    assert query_terms("x86_64 utf8_encode") == ["x86", "64", "utf", "encode", "utf8"]
    assert query_terms("port 8080 in rfc 3339") == ["port", "8080", "rfc", "3339"]
    assert query_terms("like 2h 37m") == ["like", "2", "37"]  # quantities, as before
    weak = "\n".join(f"    # parse the rfc timestamp part {i} leniently" for i in range(8))
    root = indexed(
        tmp_path / "repo",
        {
            "date.py": f"""
def parse_rfc3339_weak(text):
{weak}
    return text


def parse_rfc3339(text):
    return parse_rfc3339_weak(text)
""",
            "utf.c": """
int utf8_check_first(char byte) { return byte & 0x80; }
int utf8_check_full(const char *buffer, int size) { return utf8_check_first(buffer[0]); }
int utf8_encode(int codepoint, char *buffer) { buffer[0] = codepoint; return 1; }
""",
        },
    )
    for question, name in (("parse_rfc3339", "parse_rfc3339"), ("utf8_encode", "utf8_encode")):
        code, data, _ = search(root, question, "--mode", "lexical")
        assert code == 0 and names(data)[0] == name, names(data)


def test_a_word_written_as_code_keeps_its_stop_words(tmp_path: Path) -> None:
    # sqlparse's `class Where` was fourth for "WHERE clause" (`where` is a question's word,
    # dropped), below the OVER and HAVING clauses; `group_where` lost its `where` too.
    assert query_terms("where is the WHERE clause grouped?") == ["where", "clause", "grouped"]
    assert query_terms("what does group_where do") == ["group", "where"]
    assert query_terms("where does getValue get it") == ["get", "value"]
    assert query_terms("where is the clause grouped") == ["clause", "grouped"]
    root = indexed(
        tmp_path / "repo",
        {
            "sql.py": (
                "class Over:\n    '''An OVER clause.'''\n\n\n"
                "class Having:\n    '''A HAVING clause.'''\n\n\n"
                "class Where:\n    '''A WHERE clause.'''\n"
            )
        },
    )
    code, data, _ = search(root, "the WHERE clause", "--mode", "lexical")
    assert code == 0 and names(data)[0] == "Where"


def test_a_python_special_method_is_found_by_what_it_does() -> None:
    """cachetools' `__setstate__` was no answer to "restore after unpickling": its words were
    `setstate` alone; special methods expand as abbreviations do."""
    assert words_of("def __setstate__(self, state): pass", 40) == "setstate unpickle state"
    assert words_of("def __getitem__(self, key): pass", 40) == "getitem subscript key"


def test_a_hyphenated_word_meets_the_name_that_writes_it_as_one(tmp_path: Path) -> None:
    """libevent's `evutil_make_socket_nonblocking` was no lexical answer to "put a socket
    into non-blocking mode": the question's `non` and `blocking` are no word of the name."""
    from repomap.search.code import hyphenated

    assert hyphenated("a non-blocking, thread-safe queue (not x-1 or -flag)") == [
        "nonblocking",
        "threadsafe",
    ]
    root = indexed(
        tmp_path / "repo",
        {
            "sock.c": (
                "int evutil_make_socket_nonblocking (int fd) { return fcntl(fd, 4, 2048); }\n"
                "int socket_close (int fd) { return close(fd); }\n"
            ),
        },
    )
    _, data, _ = search(root, "put a socket into non-blocking mode", "--mode", "lexical")
    assert names(data)[0] == "evutil_make_socket_nonblocking"


def test_a_long_section_is_one_result_its_best_piece(tmp_path: Path) -> None:
    # jinja2's "Whitespace Control" was cut into seven pieces, the first seven results; the
    # function that strips the whitespace came eighth.
    paragraphs = "\n\n".join(
        f"Paragraph {n}: a minus sign in a block tag strips the whitespace before it. " * 6
        for n in range(14)
    )
    root = indexed(
        tmp_path / "repo",
        {
            "docs/guide.md": f"# Guide\n\n## Whitespace Control\n\n{paragraphs}\n\n## Other\n\n"
            "A block tag with a minus sign is explained above.\n",
            "lex.py": 'def strip_block(tag):\n    """Strip the whitespace before a block tag."""\n'
            "    return tag.lstrip()\n",
        },
    )
    _, data, _ = search(
        root, "minus sign strips whitespace before a block tag", "--mode", "lexical"
    )
    sections = [hit["name"] for hit in data["results"] if hit["kind"] == "section"]
    assert sections.count("Guide > Whitespace Control") == 1
    assert "strip_block" in names(data)[:3]


def test_a_word_in_mixed_case_is_searched_as_text_holds_it(tmp_path: Path) -> None:
    # `NaN` was asked as `na` (and `n`, too short), `CPUs` as `cp` and `us`: text holds `nan`,
    # `cpus` (serde_json's NaN question ranked 24th, found second written `nan`).
    root = indexed(
        tmp_path / "repo",
        {
            "fmt.rs": "/// Writes the NaN or infinity symbol.\n"
            'fn write_special(f: f64) -> &\'static str {\n    if f.is_nan() { "null" } else { "inf" }\n}\n\n'
            "/// Names the target's operating system (macOS, Linux).\n"
            'fn os_name() -> &\'static str {\n    "unknown"\n}\n',
            "cpu.c": "/* How many CPUs the process may run on. */\n"
            "int usable_processors(void) { return sched_count(); }\n\n"
            "/* The usual case. */\nint common_path(void) { return 0; }\n",
        },
    )
    for question, answer in (
        ("NaN", "fmt::write_special"),
        ("macOS", "fmt::os_name"),
        ("CPUs", "usable_processors"),
    ):
        code, data, _ = search(root, question, "--mode", "lexical")
        assert code == 0 and names(data)[:1] == [answer], question
    from repomap.search.code import hyphenated, query_terms

    assert query_terms("NaN IPv4 CPUs") == ["nan", "ipv4", "cpus"]
    assert query_terms("parseHeaderLines") == ["parse", "header", "lines"]  # an identifier
    # an identifier with a longer part is split, and searched whole beside (a review: `xAxis`
    # stopped finding `set_x_axis`)
    assert (query_terms("xAxis"), hyphenated("xAxis")) == (["axis"], ["xaxis"])
    assert hyphenated("macOS non-blocking") == ["nonblocking", "macos"]


def test_a_static_forward_declaration_gives_its_place_to_the_definition_in_its_file(
    tmp_path: Path,
) -> None:
    # zstd's legacy decoders define the same names in several files: a one-line `static`
    # prototype stayed a result, though its own file defines it.
    helper = "static size_t table_decode(const char *src);\n"
    body = (
        "/* Rebuild the symbol table from the weights in the header. */\n"
        "static size_t table_decode(const char *src)\n{\n    return weights_to_table(src);\n}\n"
    )
    root = indexed(
        tmp_path / "repo",
        {"lib/v05.c": helper + "\n" + body, "lib/v06.c": helper + "\n" + body},
    )
    _, found, _ = search(root, "rebuild the symbol table from the weights", "--mode", "lexical")
    assert [(p, line) for _, p, line in places(found)] == [("lib/v05.c", 4), ("lib/v06.c", 4)]


def test_the_background_embedder_names_its_phase_not_a_count_of_nothing() -> None:
    # index_status showed `running, 0 of 0` while the model loaded and the chunks to embed were
    # being listed: a count that reads as "nothing to do". The state now names the phase.
    from repomap.errors import RepomapError
    from repomap.index.embedding import BackgroundEmbedder

    listed, counted, finish = threading.Event(), threading.Event(), threading.Event()
    fail = {"now": False}

    def run(stop: threading.Event, progress) -> None:  # type: ignore[no-untyped-def]
        listed.wait(10)
        if fail["now"]:
            raise RepomapError("the model file is missing")
        progress(3, 10)
        counted.set()
        finish.wait(10)

    embedder = BackgroundEmbedder(run)
    assert embedder.state()["phase"] == "idle"
    embedder.kick()
    starting = embedder.state()
    assert (starting["running"], starting["phase"], starting["to_embed"]) == (True, "starting", 0)
    listed.set()
    assert counted.wait(10)
    embedding = embedder.state()
    assert (embedding["phase"], embedding["embedded"], embedding["to_embed"]) == (
        "embedding",
        3,
        10,
    )
    finish.set()
    embedder.close()
    assert embedder.state()["phase"] == "idle" and not embedder.state()["running"]
    fail["now"] = True
    embedder = BackgroundEmbedder(run)
    embedder.kick()
    embedder.close()
    failed = embedder.state()
    assert (failed["phase"], failed["error"]) == ("failed", "the model file is missing")


def test_a_json_result_names_its_qualified_name_as_symbols_does(tmp_path: Path) -> None:
    # A search user's script read `qualified_name` from search's JSON, as symbols gives it
    # (and as issue 17 specifies a result), and got a KeyError: search named it only `name`.
    source = "class Loader:\n    def load_settings(self, path):\n        return open(path).read()\n"
    root = indexed(tmp_path / "repo", {"conf.py": source})
    code, data, _ = search(root, "where are settings loaded from a path", "--mode", "lexical")
    assert code == 0
    hit = data["results"][0]
    assert (hit["name"], hit["qualified_name"]) == ("Loader.load_settings",) * 2
    listed = json.loads(repomap("symbols", "load_settings", "--json", "--root", str(root)).stdout)
    assert listed["results"][0]["qualified_name"] == hit["qualified_name"]


def test_a_cpp_prototype_overload_folds_into_the_definition_of_its_parameters(
    tmp_path: Path,
) -> None:
    # ninja's util.h declares two CanonicalizePath overloads that util.cc defines (its
    # `string*` is the header's `std::string*` under `using namespace std`): with two
    # definitions of the name the prototypes stayed, and one ranked above the code.
    root = indexed(
        tmp_path / "cpp",
        {
            "src/util.h": """
#include <string>
/// Turn a path such as foo/./bar/../baz into its shortest spelling.
void CanonicalizePath(std::string* path, unsigned* slash_bits);
/// Shorten the characters of a path in place, dropping dot segments.
void CanonicalizePath(char* path, unsigned long* len, unsigned* slash_bits);
""",
            "src/util.cc": """
#include "util.h"
using namespace std;
void CanonicalizePath(string* path, unsigned* slash_bits) {
  unsigned long len = path->size();
  CanonicalizePath(&(*path)[0], &len, slash_bits);
}
void CanonicalizePath(char* path, unsigned long* len, unsigned* slash_bits) {
  char* dst = path;
  *len = dst - path;
}
""",
            "src/graph.cc": "int Rebuild(int edges) { return edges + 1; }\n",
        },
    )
    _, found, _ = search(root, "drop dot segments of a path in place", "--mode", "lexical")
    assert places(found)[0] == ("CanonicalizePath", "src/util.cc", 7)
    assert not [place for place in places(found) if place[1] == "src/util.h"]


def test_a_folded_declaration_and_its_definition_keep_each_signal_s_better_half() -> None:
    # ninja's Builder::Cleanup was first by words and first by meaning through its documented
    # declaration, and second in hybrid: the fold gave the definition the better of the two
    # fused scores, where each signal's better half belongs to the one answer.
    from repomap.search.code import _folded, fuse

    declaration, definition, other = 1, 2, 3
    traits = {declaration: (False, "method", 10), definition: (False, "method", 20),
              other: (False, "method", 30)}  # fmt: skip
    lexical = {declaration: (9.0, *traits[declaration]), definition: (4.0, *traits[definition]),
               other: (8.0, *traits[other])}  # fmt: skip
    semantic = {declaration: 0.35, definition: 0.62, other: 0.50}
    held = {declaration: 0.9, definition: 0.4, other: 0.8}
    before = fuse(lexical, semantic, traits, 0.4)
    assert max(before[declaration], before[definition]) < before[other]
    words, meaning = _folded({declaration: definition}, lexical, semantic, held, dict(traits))
    assert (words[definition][0], meaning[definition], held[definition]) == (9.0, 0.62, 0.9)
    assert declaration not in words and declaration not in meaning and declaration not in held
    after = fuse(words, meaning, {i: t for i, t in traits.items() if i != declaration}, 0.4)
    assert after[definition] > after[other]
    assert (lexical[declaration][0], semantic[declaration]) == (9.0, 0.35)  # the caller's, kept


def test_an_acronym_in_code_meets_the_words_a_question_spells_out(tmp_path: Path) -> None:
    # "which cache evicts the least recently used entry?" found boltons' LRI (least recently
    # inserted) first and its LRU fourth: the class's name said it only as an acronym.
    assert words_of("class LRUCache", 20) == "lru least recently used cache"
    assert "byte order mark" in words_of("return XML_TOK_BOM;", 20)
    source = '''
class LRI(dict):
    """A cache that evicts the oldest inserted item when it is full."""

    def __setitem__(self, key, value):
        self.pop_oldest_inserted()

class LRU(dict):
    """A cache of a fixed size that evicts an item when it is full."""

    def __getitem__(self, key):
        self.move_to_front(key)
'''
    root = indexed(tmp_path / "repo", {"cacheutils.py": source})
    _, found, _ = search(
        root, "which cache evicts the least recently used item?", "--mode", "lexical"
    )
    assert names(found)[0] == "LRU"


def test_a_larger_limit_keeps_the_first_answers_where_prototypes_fold(tmp_path: Path) -> None:
    # The fold takes a prototype's chunk out of the candidates; a --limit past the default pool
    # ranks them twice, and the second ranking must fold as the first did (half the functions
    # are documented on their prototype, half on their definition).
    header = "".join(f"/* Resize the pane to a size. */\nint pane_resize_{n}(int size);\n"
                     for n in range(150))  # fmt: skip
    source = "".join(
        ("" if n < 150 else "/* Resize the pane to a size. */\n")
        + f"int pane_resize_{n}(int size) {{ return size + {n}; }}\n"
        for n in range(300)
    )
    root = indexed(tmp_path / "c", {"include/pane.h": header, "src/pane.c": source})
    _, few, _ = search(root, "resize a pane", "--mode", "lexical", "--limit", "10")
    _, many, _ = search(root, "resize a pane", "--mode", "lexical", "--limit", "1000")
    assert few["results"] == many["results"][:10]
    assert not [hit for hit in many["results"] if hit["path"] == "include/pane.h"]
