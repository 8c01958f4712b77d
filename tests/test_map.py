"""The repo map: PageRank ranking stored at index time, personalization, the hard token budget."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from conftest import run_cli

import repomap
from repomap import config, paths
from repomap.index import pagerank as rank
from repomap.index import ranking
from repomap.maps import render
from repomap.maps import repo_map as maps
from repomap.maps import rows as map_rows
from repomap.store import open_index, reading, writing
from repomap.store import ranks as store_ranks


def _library(modules: int = 12, functions: int = 8) -> dict[str, str]:
    """A package whose `core` module is used by every other; each module also defines helpers."""
    files = {
        "lib/core.py": (
            "class ConnectionPool:\n"
            "    def acquire_connection(self):\n        pass\n\n"
            "    def release_connection(self):\n        pass\n\n\n"
            "def configure_logging():\n    pass\n"
        )
    }
    for m in range(modules):
        body = ["from lib.core import ConnectionPool, configure_logging", ""]
        for f in range(functions):
            body += [
                f"def handler_{m}_{f}(request_{f}):",
                "    pool = ConnectionPool()",
                "    configure_logging()",
                f"    return pool.acquire_connection() or helper_{(m + 1) % modules}_rare()",
                "",
            ]
        body += [f"def helper_{m}_rare():", "    return None", ""]
        files[f"lib/module_{m}.py"] = "\n".join(body)
    return files


@pytest.fixture
def library(make_repo, index) -> Path:
    root = make_repo(_library())
    index(root)
    return root


def _map(root: Path, **kwargs) -> maps.RepoMap:
    return repomap.map(root, **kwargs)


def test_the_most_used_file_and_definitions_come_first(library: Path) -> None:
    result = _map(library, tokens=256)
    assert result.files[0].file_path == "lib/core.py"
    shown = [s.qualified_name for s in result.files[0].symbols]
    assert "ConnectionPool" in shown and "ConnectionPool.acquire_connection" in shown


def test_the_map_is_byte_identical_for_the_same_index_and_arguments(library: Path) -> None:
    for kwargs in (
        {"tokens": 300},
        {"tokens": 500, "mentions": ["helper_3_rare"]},
        {"tokens": 400, "focus": ["lib/module_1.py"]},
    ):
        first = _map(library, **kwargs).text
        assert _map(library, **kwargs).text == first
        cli = run_cli(
            "map",
            "--root",
            library,
            "--tokens",
            str(kwargs["tokens"]),
            *(arg for m in kwargs.get("mentions", []) for arg in ("--mention", m)),
            *(arg for f in kwargs.get("focus", []) for arg in ("--focus", f)),
        )
        assert cli.returncode == 0, cli.stderr
        assert cli.stdout == first


@pytest.mark.parametrize("tokens", [32, 64, 100, 257, 512, 1000, 2048])
def test_the_budget_is_a_hard_maximum_filled_tightly(library: Path, tokens: int) -> None:
    result = _map(library, tokens=tokens)
    assert render.count_tokens(result.text.removesuffix("\n")) == result.tokens <= tokens
    if result.omitted_symbols:  # what is left is less than a new file's path line and one row
        assert result.tokens >= tokens - 24


def test_the_map_ends_with_what_was_left_out(library: Path) -> None:
    result = _map(library, tokens=200)
    last = result.text.splitlines()[-1]
    assert (
        last
        == f"({result.omitted_files} more files and {result.omitted_symbols} more symbols left out)"
    )
    shown = sum(1 for f in result.files for s in f.symbols if not s.header)
    with reading(config.resolve(library).db_path) as db:
        assert result.omitted_symbols == map_rows.ranked_symbol_count(db) - shown
    assert result.omitted_files == 13 - len(result.files)


def test_a_mention_changes_the_ranking(library: Path) -> None:
    plain = _map(library, tokens=200)
    mentioned = _map(library, tokens=200, mentions=["helper_7_rare"])
    assert "helper_7_rare" not in plain.text
    assert mentioned.files[0].file_path == "lib/module_7.py"
    assert "helper_7_rare" in [s.qualified_name for s in mentioned.files[0].symbols]
    assert mentioned.text != plain.text


def test_a_mentioned_file_name_is_ranked_up(library: Path) -> None:
    result = _map(library, tokens=200, mentions=["module_9.py"])
    assert result.files[0].file_path == "lib/module_9.py"


def test_focus_files_steer_the_ranking_and_are_left_out(library: Path) -> None:
    result = _map(library, tokens=300, focus=["lib/module_4.py"])
    paths = [f.file_path for f in result.files]
    assert "lib/module_4.py" not in paths
    # module_4 calls helper_5_rare: its neighbour outranks the other modules.
    assert paths.index("lib/module_5.py") < min(
        paths.index(p) for p in paths if p.startswith("lib/module_") and p != "lib/module_5.py"
    )


def test_an_unknown_focus_file_is_an_error(library: Path) -> None:
    with pytest.raises(repomap.errors.BadArgument, match="no indexed file matches"):
        _map(library, focus=["nope.py"])


def test_methods_come_under_their_class_header_with_elisions(make_repo, index) -> None:
    root = make_repo(
        {
            "a.py": "class Store:\n"
            + "".join(f"    def m{i}(self):\n        pass\n\n" for i in range(6))
            + "    def remember_everything(self):\n        pass\n",
            "b.py": "from a import Store\nStore().remember_everything()\n",
        }
    )
    index(root)
    text = _map(root, tokens=64).text
    assert text.startswith("a.py:\n 1│class Store\n")
    assert "  ⋮\n20│    def remember_everything(self)\n" in text
    assert " 1│class Store\n  ⋮" in text or " 1│class Store\n 2│    def m0(self)\n  ⋮" in text


def test_json_gives_ranked_files_and_symbols_with_scores(library: Path) -> None:
    cli = run_cli("map", "--json", "--tokens", "200", "--root", library)
    assert cli.returncode == 0, cli.stderr
    data = json.loads(cli.stdout)
    assert data["budget"] == 200 and data["tokens"] <= 200
    ranks = [f["rank"] for f in data["results"]]
    assert ranks == sorted(ranks, reverse=True) and ranks[0] > 0  # no mentions: by file rank
    assert {"qualified_name", "line_number", "score", "signature"} <= set(
        data["results"][0]["symbols"][0]
    )


def test_pagerank_is_networkx_pagerank_on_the_file_graph(library: Path) -> None:
    with reading(config.resolve(library).db_path) as db:
        graph = ranking.load_graph(db)
    n = graph.file_count
    weights = np.zeros((n, n))
    for f, name, w in zip(graph.c_file, graph.c_name, graph.c_weight, strict=True):
        for k in np.flatnonzero(graph.def_name == name):
            weights[f, graph.def_file[k]] += w * graph.def_share[k]
    np.fill_diagonal(weights, 0.0)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(
        (i, j, weights[i, j]) for i, j in zip(*np.nonzero(weights), strict=True)
    )
    personalization = {i: 1.0 + (i == 3) * 5.0 for i in range(n)}
    ours = rank.pagerank(graph, np.array([personalization[i] for i in range(n)]))
    assert np.allclose(
        ours, _networkx_pagerank(g, personalization), atol=2e-5
    )  # tolerance: N * 1e-6
    assert np.allclose(graph.rank, _networkx_pagerank(g, None), atol=2e-5)


def _networkx_pagerank(g: nx.DiGraph, personalization: dict | None) -> np.ndarray:
    """networkx's Google matrix (nx.pagerank itself needs scipy); its leading left eigenvector."""
    google = np.asarray(
        nx.google_matrix(g, personalization=personalization, nodelist=range(len(g)))
    )
    values, vectors = np.linalg.eig(google.T)
    leading = np.real(vectors[:, np.argmax(np.real(values))])
    return leading / leading.sum()


def test_generic_and_private_names_weigh_less_than_specific_ones() -> None:
    assert (
        rank.shape("get_queryset")
        == rank.shape("QuerySet")
        > rank.shape("Query")
        > rank.shape("message")
    )
    assert rank.shape("message") > rank.shape("get") > rank.shape("e")
    assert rank.shape("_private_helper") < rank.shape("private_helper")
    assert rank.shape("__init__") < rank.shape("init_value")
    rare = np.array([rank.shape("Rare")] * 2)
    used_by_few, used_by_most = rank.quality(rare, np.array([2, 900]), 1000)
    assert used_by_few > used_by_most


def test_ranks_are_recomputed_only_when_the_index_changed(library: Path, index) -> None:
    db_path = config.resolve(library).db_path
    with writing(db_path) as db:
        assert ranking.refresh_ranks(db) is False
    before = _map(library, tokens=200).text
    (library / "lib" / "module_2.py").write_text("def helper_2_rare():\n    return 1\n")
    index(library)
    with writing(db_path) as db:
        assert ranking.refresh_ranks(db) is False  # the index run already re-ranked
    assert _map(library, tokens=200).text != before


def test_an_index_without_ranks_asks_for_repomap_index(tmp_path: Path) -> None:
    db = open_index(tmp_path / "empty.db")
    with pytest.raises(ranking.NoRanking, match="run `repomap index`"):
        maps.repo_map(db)
    db.conn.close()


def test_rust_and_cpp_definitions_reach_the_map(make_repo, index) -> None:
    root = make_repo(
        {
            "src/pool.rs": "pub struct ConnectionPool {}\nimpl ConnectionPool {\n"
            "    pub fn acquire_slot(&self) -> u32 { 0 }\n}\n",
            "src/user.rs": "use crate::pool::ConnectionPool;\n"
            "fn run(p: &ConnectionPool) -> u32 { p.acquire_slot() }\n",
            "include/grid.h": "namespace geo {\nclass GridIndex {\n public:\n  int cell_count(int a);\n"
            "};\n}\n",
            "src/grid.cpp": '#include "grid.h"\nnamespace geo {\nint GridIndex::cell_count(int a) { return a; }\n}\n',
            "src/main.cpp": '#include "grid.h"\nint main() { geo::GridIndex g; return g.cell_count(1); }\n',
        }
    )
    index(root)
    result = _map(root, tokens=400)
    by_path = {f.file_path: [s.qualified_name for s in f.symbols] for f in result.files}
    assert "pool::ConnectionPool::acquire_slot" in by_path["src/pool.rs"]
    # The out-of-line definition shows the method where its body is; the in-class declaration
    # comes after every definition (the budget reaches it here).
    assert "geo::GridIndex::cell_count" in by_path["src/grid.cpp"]
    assert "geo::GridIndex::cell_count" in by_path["include/grid.h"]


def test_ranks_after_an_incremental_run_equal_a_full_recomputation(library: Path, index) -> None:
    (library / "lib" / "module_3.py").write_text("from lib.module_5 import helper_5_rare\n")
    index(library)  # reads only module_3's refs; the other files' uses come from the cache
    db_path = config.resolve(library).db_path
    ranks_sql = "SELECT symbol_id, rank FROM symbol_ranks ORDER BY symbol_id"
    with writing(db_path) as db:
        incremental = db.conn.execute(ranks_sql).fetchall()
        db.conn.execute("DELETE FROM rank_arrays")  # no cached uses or definitions
        ranking.refresh_ranks(db, force=True)
        assert db.conn.execute(ranks_sql).fetchall() == incremental


def test_the_stored_map_order_is_the_order_of_symbol_ranks(library: Path, index) -> None:
    """The map pages through rank_arrays' map_order; it must be symbol_ranks sorted by rank
    (ties by file, then symbol), after a cold run and after one file changed."""
    db_path = config.resolve(library).db_path

    def check() -> list:
        with reading(db_path) as db:
            paged = [
                row for offset in range(0, 400, 7) for row in map_rows.ranked_symbols(db, 7, offset)
            ]
            sorted_rows = db.conn.execute(
                map_rows.RANKED_SYMBOLS_SQL, {"limit": 400, "offset": 0}
            ).fetchall()
            assert paged == sorted_rows and len(paged) > 20
            return paged

    before = check()
    (library / "lib" / "module_4.py").write_text(
        "def helper_4_rare():\n    return helper_5_rare()\n"
    )
    index(library)
    assert check() != before
    with writing(db_path) as db:  # an index ranked before schema v12
        db.conn.execute("DELETE FROM rank_arrays WHERE name = 'map_order'")
        db.conn.execute("UPDATE meta SET value = 'older' WHERE key = 'rank_fingerprint'")
    check()


def _ranks_match_a_full_recomputation(db_path: Path) -> list[tuple]:
    """The stored symbol ranks, after checking a recomputation without caches gives the same."""
    ranks_sql = (
        "SELECT r.symbol_id, s.file_id, r.rank FROM symbol_ranks r "
        "JOIN symbols s ON s.id = r.symbol_id ORDER BY r.symbol_id"
    )
    with writing(db_path) as db:
        incremental = db.conn.execute(ranks_sql).fetchall()
        db.conn.execute("DELETE FROM rank_arrays")
        ranking.refresh_ranks(db, force=True)
        assert db.conn.execute(ranks_sql).fetchall() == incremental
    return incremental


def test_the_same_bytes_back_under_a_test_path_are_a_new_ranking_state(make_repo, index) -> None:
    """A file deleted, then its bytes added under tests/ (same file id, hash and symbol ids):
    its definitions weigh less, and a process that kept the old map order must not reuse it."""
    body = "def helper():\n    return 3\n\ndef thing():\n    return helper()\n"
    files = {
        "lib/a.py": "def helper():\n    return 1\n",
        "lib/caller.py": "def go():\n    return mid_0() + mid_1()\n",
        **{f"lib/m{i}.py": f"def mid_{i}():\n    return helper()\n" for i in range(2)},
        "lib/zz.py": body,
    }
    root = make_repo(files)
    index(root)
    db_path = root / ".repomap" / "index.db"

    def pages() -> tuple[list, list]:
        with reading(db_path) as db:
            paged = map_rows.ranked_symbols(db, 100, 0)
            rows = db.conn.execute(
                "SELECT r.symbol_id, r.rank, s.file_id, f.path FROM symbol_ranks r "
                "JOIN symbols s ON s.id = r.symbol_id JOIN files f ON f.id = s.file_id"
            ).fetchall()
        # Test files' definitions after the others, then by rank, file and symbol.
        rows.sort(key=lambda r: (paths.is_demoted_path(r[3]), -r[1], r[2], r[0]))
        return paged, [(symbol_id, score) for symbol_id, score, _, _ in rows]

    paged, sorted_rows = pages()  # this process keeps the map order it read
    assert paged == sorted_rows
    (root / "lib" / "zz.py").unlink()
    index(root)
    (root / "tests").mkdir()
    (root / "tests" / "zz.py").write_text(body)
    index(root)
    paged, sorted_rows = pages()
    assert paged == sorted_rows


def test_cached_definitions_follow_links_made_and_broken_in_other_files(make_repo, index) -> None:
    """A header's declaration is demoted when a definition is linked to it, and the definition's
    file need not be read again for it: when the header gains the declaration, the out-of-line
    definition stays ranked first and the declaration comes after it; when the header loses it,
    nothing of the link is left. Each state's ranking is a cold one's (the per-file definitions
    cache does not keep a link's old state)."""
    header = "namespace geo {\nclass GridIndex {\n public:\n  int cell_count(int a);\n};\n}\n"
    root = make_repo(
        {
            "include/grid.h": "namespace geo {\nclass GridIndex {};\n}\n",
            "src/grid.cpp": '#include "grid.h"\nnamespace geo {\n'
            "int GridIndex::cell_count(int a) { return a; }\n}\n",
            "src/main.cpp": "int main() { geo::GridIndex g; return g.cell_count(1); }\n",
        }
    )
    index(root)
    db_path = root / ".repomap" / "index.db"

    def levels_of_cell_count() -> dict[str, int]:
        """The file of each ranked `cell_count` -> how far back the map puts it."""
        with reading(db_path) as db:
            graph = ranking.load_graph(db)
            demoted = map_rows.demoted(db)
            assert demoted is not None
            files_of = dict(
                db.conn.execute(
                    """SELECT s.id, f.path FROM symbols s JOIN files f ON f.id = s.file_id
                    WHERE s.name = 'cell_count'"""
                ).fetchall()
            )
        return {
            files_of[symbol_id]: level
            for symbol_id, level in zip(graph.def_symbol.tolist(), demoted.tolist(), strict=True)
            if symbol_id in files_of
        }

    _ranks_match_a_full_recomputation(db_path)
    assert levels_of_cell_count() == {"src/grid.cpp": 0}
    (root / "include" / "grid.h").write_text(header)
    index(root)  # src/grid.cpp is not re-read: its definition's link changed all the same
    assert levels_of_cell_count() == {"src/grid.cpp": 0, "include/grid.h": 1}
    _ranks_match_a_full_recomputation(db_path)
    (root / "include" / "grid.h").write_text("namespace geo {\nclass GridIndex {};\n}\n")
    index(root)
    assert levels_of_cell_count() == {"src/grid.cpp": 0}
    _ranks_match_a_full_recomputation(db_path)


def test_cached_definitions_follow_files_added_rewritten_and_deleted(make_repo, index) -> None:
    root = make_repo(
        {
            "a.py": "class Alpha:\n    def run_alpha(self):\n        pass\n",
            "b.py": "from a import Alpha\nAlpha().run_alpha()\n",
            "tests/test_a.py": "from a import Alpha\n\ndef test_alpha():\n    Alpha()\n",
        }
    )
    index(root)
    db_path = root / ".repomap" / "index.db"
    first = _ranks_match_a_full_recomputation(db_path)
    (root / "c.py").write_text("class Gamma:\n    pass\n\ndef make_alpha():\n    return 1\n")
    (root / "a.py").write_text("class Alpha:\n    def run_alpha_fast(self):\n        pass\n")
    index(root)
    second = _ranks_match_a_full_recomputation(db_path)
    assert second != first
    (root / "c.py").unlink()
    index(root, force=True)  # every file's rows rewritten with new symbol ids, same bytes
    _ranks_match_a_full_recomputation(db_path)
    with reading(db_path) as db:
        names = db.conn.execute(
            "SELECT s.name FROM symbol_ranks r JOIN symbols s ON s.id = r.symbol_id"
        ).fetchall()
    assert sorted(name for (name,) in names) == ["Alpha", "run_alpha_fast", "test_alpha"]


def test_a_signature_row_is_one_line_without_a_body() -> None:
    assert render.signature_text("def setup( self,\n    names, )") == "def setup(self, names)"
    assert render.signature_text("class Ref {public: int size; using T = int;") == "class Ref"
    assert render.signature_text("def f(x={})") == "def f(x={})"
    assert (
        render.signature_text("x" * 300).endswith("…")
        and len(render.signature_text("x" * 300)) == 200
    )


def test_a_brief_row_elides_the_parameters_after_the_name() -> None:
    assert render.brief_text("void ares_send(ares_channel c, int n)", "ares_send") == (
        "void ares_send(…)"
    )
    assert render.brief_text("int Slice::size(int a) const", "size") == "int Slice::size(…)"
    assert render.brief_text("def close(self)", "close") == "def close(…)"
    # Nothing shorter to give: no parameters, or the name not followed by them.
    assert render.brief_text("int size()", "size") == ""
    assert render.brief_text("typedef void (*ares_callback)(void *arg)", "ares_callback") == ""
    assert render.brief_text("class QuerySet", "QuerySet") == ""


def test_focus_shows_its_neighbours_before_hubs_used_everywhere(make_repo, index) -> None:
    files = {"hub.py": "def shared_helper():\n    pass\n"}
    for i in range(80):
        files[f"user_{i}.py"] = "from hub import shared_helper\nshared_helper()\n"
    files["big.py"] = "class BigThing:\n" + "".join(
        f"    def operation_{i}(self):\n        pass\n\n" for i in range(30)
    )
    files["focus.py"] = "from big import BigThing\nthing = BigThing()\n" + "".join(
        f"thing.operation_{i}()\n" for i in range(30)
    )
    root = make_repo(files)
    index(root)
    result = _map(root, tokens=120, focus=["focus.py"])
    assert [f.file_path for f in result.files] == ["big.py"]
    assert len(result.files[0].symbols) >= 3


def test_the_loaded_graph_is_kept_per_index_state_and_replaced_when_ranks_change(make_repo, index):
    """load_graph keeps the graph it unpacked for the same ranks, and reads the new one after a
    run that re-ranked: a long-running server never serves a stale graph."""
    repo = make_repo(
        {"a.py": "def helper():\n    return 1\n", "b.py": "from a import helper\nhelper()\n"}
    )
    index(repo)
    db_path = repo / ".repomap" / "index.db"
    with reading(db_path) as db:
        first = ranking.load_graph(db)
        assert ranking.load_graph(db) is first
    (repo / "c.py").write_text("def other():\n    return helper()\n")
    index(repo)
    with reading(db_path) as db:
        second = ranking.load_graph(db)
        assert second is not first
        assert len(second.file_ids) == 3 and len(first.file_ids) == 2
        expected = rank.Graph.from_arrays(store_ranks.load_arrays(db, rank.ARRAY_NAMES))
        assert all(
            np.array_equal(getattr(second, name), getattr(expected, name))
            for name in rank.ARRAY_NAMES
        )


def test_the_kept_graph_is_never_another_index_of_the_same_bytes(make_repo, index, tmp_path):
    """Two indexes of identical files under other paths have equal rank fingerprints but
    different graphs (a test file's definitions get a smaller share): each gets its own."""
    body = {"a.py": "from b import util\nutil()\n"}
    first = make_repo({**body, "b.py": "def util():\n    return 1\n"}, root=tmp_path / "one")
    second = make_repo({**body, "test_b.py": "def util():\n    return 1\n"}, root=tmp_path / "two")
    graphs = []
    for repo in (first, second, first):
        index(repo)
        with reading(repo / ".repomap" / "index.db") as db:
            graphs.append(ranking.load_graph(db))
            fresh = rank.Graph.from_arrays(store_ranks.load_arrays(db, rank.ARRAY_NAMES))
            assert np.array_equal(graphs[-1].def_share, fresh.def_share)
    assert graphs[0] is graphs[2] and graphs[1] is not graphs[0]


# --- tests, examples and #defines rank last; --path / --exclude ------------------------------


def _with_tests_and_defines() -> dict[str, str]:
    """lib/ with a rarely used function; tests/ and examples/ whose helpers every test uses
    (so PageRank alone ranks them high); a C++ header whose #define everything uses; and a Rust
    macro_rules! (a real definition) used as often."""
    files = {
        "lib/core.py": "def core_function():\n    return 1\n",
        "lib/rare.py": "def rarely_used_function():\n    return 2\n",
        "lib/user.py": "from lib.rare import rarely_used_function\n\nrarely_used_function()\n",
        "tests/helpers.py": "def make_test_fixture():\n    return 3\n",
        "examples/demo_helpers.py": "def example_helper_function():\n    return 4\n",
        "include/config.h": "#define LIBRARY_EXPORT_MACRO __attribute__((visibility))\n",
        "src/macros.rs": "macro_rules! shared_rust_macro { () => {} }\n",
    }
    for i in range(8):
        files[f"tests/test_case_{i}.py"] = (
            "from tests.helpers import make_test_fixture\n"
            "from examples.demo_helpers import example_helper_function\n"
            "from lib.core import core_function\n\n"
            f"def test_{i}():\n"
            "    make_test_fixture(); make_test_fixture(); example_helper_function()\n"
            "    core_function()\n"
        )
        files[f"include/unit_{i}.h"] = f"LIBRARY_EXPORT_MACRO int unit_function_{i}(int value);\n"
        files[f"src/user_{i}.rs"] = f"fn rust_user_{i}() {{ shared_rust_macro!(); }}\n"
    return files


def test_tests_examples_and_defines_rank_after_every_other_definition(make_repo, index) -> None:
    root = make_repo(_with_tests_and_defines())
    index(root)
    db_path = config.resolve(root).db_path
    with reading(db_path) as db:
        order = [symbol_id for symbol_id, _ in map_rows.ranked_symbols(db, 1000)]
        where = dict(
            db.conn.execute(
                "SELECT s.id, f.path || ':' || s.name FROM symbols s JOIN files f ON f.id = s.file_id"
            ).fetchall()
        )
        scores = dict(db.conn.execute("SELECT symbol_id, rank FROM symbol_ranks").fetchall())
    names = [where[i] for i in order]
    demoted = [
        n for n in names if n.startswith(("tests/", "examples/")) or "LIBRARY_EXPORT_MACRO" in n
    ]
    assert len(demoted) == 8 + 1 + 1 + 1  # test_0..7, the two helpers, the #define
    assert names[-len(demoted) :] == demoted  # all of them after every other definition
    # ... though PageRank alone puts them first: the order moved, not the scores.
    score = {where[i]: scores[i] for i in order}
    rare = score["lib/rare.py:rarely_used_function"]
    assert score["tests/helpers.py:make_test_fixture"] > rare
    assert score["include/config.h:LIBRARY_EXPORT_MACRO"] > rare
    assert "src/macros.rs:shared_rust_macro" in names[: -len(demoted)]  # Rust macros are code
    small = _map(root, tokens=120)
    shown = {f.file_path for f in small.files}
    assert "tests/helpers.py" not in shown and "include/config.h" not in shown
    assert "rarely_used_function" in small.text
    everything = _map(root, tokens=4000)  # room for all: they still show, last
    assert {"tests/helpers.py", "include/config.h"} <= {f.file_path for f in everything.files}
    # Mentioned, a demoted definition comes first; personalized, the others still come last.
    mentioned = _map(root, tokens=120, mentions=["LIBRARY_EXPORT_MACRO"])
    assert mentioned.files[0].file_path == "include/config.h"
    focused = _map(root, tokens=120, focus=["lib/user.py"])
    assert "make_test_fixture" not in focused.text and "rarely_used_function" in focused.text


def test_map_path_and_exclude_choose_the_files_shown(make_repo, index) -> None:
    root = make_repo(_with_tests_and_defines())
    index(root)
    excluded = _map(root, tokens=4000, exclude=["tests/", "*.h"])
    paths = {f.file_path for f in excluded.files}
    assert not any(p.startswith("tests/") or p.endswith(".h") for p in paths)
    assert {"lib/core.py", "examples/demo_helpers.py", "src/macros.rs"} <= paths
    # The totals are of the files kept: only lib/user.py, which defines nothing, is left out.
    assert excluded.omitted_files == 1 and excluded.omitted_symbols == 0
    tests_only = _map(root, tokens=4000, path="tests/")
    assert {f.file_path for f in tests_only.files} == {
        "tests/helpers.py",
        *(f"tests/test_case_{i}.py" for i in range(8)),
    }
    both = _map(root, tokens=4000, path="tests/", exclude=["test_case_*.py"])
    assert [f.file_path for f in both.files] == ["tests/helpers.py"]
    mentioned = _map(root, tokens=4000, mentions=["core_function"], exclude=["lib/"])
    assert "lib/core.py" not in {f.file_path for f in mentioned.files}
    for tokens in (40, 100, 300):
        small = _map(root, tokens=tokens, exclude=["tests/"])
        assert small.tokens <= tokens
    # The CLI: the same bytes as the library, twice; a filter matching nothing is an error.
    args = ("map", "--root", root, "--tokens", "300", "--path", "lib/", "--exclude", "lib/rare.py")
    first, second = run_cli(*args), run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout
        == second.stdout
        == _map(root, tokens=300, path="lib/", exclude=["lib/rare.py"]).text
    )
    assert "lib/core.py:" in first.stdout and "lib/rare.py" not in first.stdout
    # A filter that keeps no file finds nothing, as a search with it would: exit 1, no error.
    missing = run_cli("map", "--root", root, "--path", "nowhere/")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.strip() == "path filter 'nowhere/': no indexed file matches it"
    missing = run_cli("map", "--root", root, "--path", "nowhere/", "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout) == {"results": [], "count": 0, "truncated": False}
    searched = run_cli("search", "anything", "--root", root, "--path", "nowhere/")
    assert searched.returncode == missing.returncode
    outside = run_cli("map", "--root", root, "--exclude", "../x")
    assert outside.returncode == 2 and "Traceback" not in outside.stderr
    assert len(outside.stderr.strip().splitlines()) == 1


def test_map_help_says_tests_and_defines_rank_last() -> None:
    result = run_cli("map", "--help")
    text = " ".join(result.stdout.split())
    assert "--exclude" in text and "--path" in text
    assert "test, benchmark, example, vendored and generated files" in text
    assert "#[cfg(test)] mod tests" in text  # inline tests, as search demotes them
    assert "#define macros" in text
    assert "prototype" in text


def test_a_c_typedef_and_the_struct_it_names_are_one_row(make_repo, index) -> None:
    # `typedef struct Node {..} Node;` is two symbols on one line: the struct and the type.
    # The map showed `struct Node` under `typedef struct Node {…} Node`, one line twice.
    files = {
        "src/node.h": (
            "typedef struct Node {\n  int value;\n  struct Node *next;\n} Node;\n"
            "int optind, opt;\n"
            "Node *node_new(int value);\n"
        ),
    }
    use = "Node *make_{n}(void) {{ Node *x = node_new({n}); opt = optind; return x; }}"
    rows = _rows_of(make_repo, index, files, "src/node.h", use, "c")
    assert [text for line, text in rows if line == 1] == ["typedef struct Node {…} Node"]
    # Names on one line that do not hold each other stay rows of their own.
    assert sum(1 for line, _ in rows if line == 5) == 2


def _rows_of(make_repo, index, files: dict[str, str], header: str, use: str, ext: str) -> list:
    """(line, text) of `header`'s rows in the map of `files` and six `.ext` files that include
    it, each holding `use` (a format of `n`)."""
    for n in range(6):
        files[f"src/use_{n}.{ext}"] = f'#include "{header.rsplit("/", 1)[-1]}"\n' + use.format(n=n)
    root = make_repo(files)
    index(root)
    text = _map(root, tokens=4000).text
    block = text[text.index(f"{header}:") :].split("\n\n")[0]
    rows = [line.split("│", 1) for line in block.splitlines()[1:] if "│" in line]
    return [(int(number.strip()), row.strip()) for number, row in rows]


def test_a_cpp_constructor_shows_its_class_not_itself(make_repo, index) -> None:
    # A constructor shares its class's name, so every use of the type ranked it with the class:
    # LevelDB's map was half `Slice()`, `Env()` and deleted copy constructors.
    files = {
        "include/slice.h": (
            "class Slice {\n public:\n  Slice();\n  Slice(const char* d, int n) : d_(d), n_(n) {}\n"
            "  Slice(const Slice&) = delete;\n  ~Slice() {}\n"
            "  int size() const { return n_; }\n private:\n  const char* d_; int n_;\n};\n"
        ),
    }
    use = 'int length_{n}(const Slice& s) {{ Slice t("x", {n}); return s.size() + t.size(); }}'
    shown = [text for _, text in _rows_of(make_repo, index, files, "include/slice.h", use, "cc")]
    assert "class Slice" in shown and "int size() const" in shown
    assert not [row for row in shown if row.startswith(("Slice(", "~Slice"))]


# --- C and C++: definitions stand for their declarations --------------------------------------


def _c_library() -> dict[str, str]:
    """A C library laid out as c-ares is: a public header declaring every function, each
    defined in a .c file of its own, one with `static` helpers declared at its top; tools that
    call the library; and a vendored test framework that every test file uses (PageRank alone
    ranks it first)."""
    files = {
        "include/net.h": (
            "#define NET_OK 0\n#define NET_ERROR 1\n"
            "typedef struct net_channel *net_channel_t;\n"
            "int net_send(net_channel_t channel, const unsigned char *query_buffer, int query_length);\n"
            "int net_process(net_channel_t channel, int timeout_milliseconds);\n"
        ),
        "src/net_send.c": (
            '#include "net.h"\n\n'
            "int net_send(net_channel_t channel, const unsigned char *query_buffer, int query_length)\n"
            "{\n  return net_process(channel, query_length) + query_buffer[0];\n}\n"
        ),
        "src/net_process.c": (
            '#include "net.h"\n\n'
            "static int process_timeouts(net_channel_t channel, int now);\n"
            "static int next_server(net_channel_t channel);\n\n"
            "int net_process(net_channel_t channel, int timeout_milliseconds)\n{\n"
            "  return process_timeouts(channel, timeout_milliseconds) + next_server(channel);\n}\n\n"
            "static int process_timeouts(net_channel_t channel, int now)\n{\n"
            "  return next_server(channel) + now;\n}\n\n"
            "static int next_server(net_channel_t channel)\n{\n"
            "  return channel != 0 ? NET_OK : NET_ERROR;\n}\n"
        ),
        "test/gtest-1.8.0/gtest.h": "".join(
            f"int gtest_expectation_{i}(int actual, int expected);\n"
            f"int gtest_expectation_{i}(int actual, int expected) {{ return actual == expected; }}\n"
            for i in range(4)
        ),
    }
    for n in range(3):
        files[f"tools/tool_{n}.c"] = (
            f'#include "net.h"\nint tool_{n}_main(net_channel_t c) {{ return net_send(c, 0, {n}); }}\n'
        )
    for n in range(8):
        files[f"test/net_test_{n}.cc"] = (
            '#include "gtest-1.8.0/gtest.h"\n'
            f"int net_test_{n}() {{ return "
            + " + ".join(f"gtest_expectation_{i}({n}, 1)" for i in range(4))
            + "; }\n"
        )
    return files


@pytest.fixture
def c_library(make_repo, index) -> Path:
    root = make_repo(_c_library())
    index(root)
    return root


def _rows(text: str, path: str) -> list[tuple[int, str]]:
    """(line, text) of `path`'s rows in a map's text."""
    block = text[text.index(f"{path}:\n") :].split("\n", 1)[1]
    rows = []
    for line in block.splitlines():
        if "│" not in line:
            if ELISION_ROW not in line:
                break
            continue
        number, row = line.split("│", 1)
        rows.append((int(number), row.strip()))
    return rows


ELISION_ROW = render.ELISION


def test_a_c_file_whose_functions_a_header_declares_maps_its_definitions(c_library) -> None:
    # c-ares' src/lib/ares_send.c, whose one function include/ares.h declares, mapped to
    # "(1 more files and 0 more symbols left out)": the prototype stood for the definition.
    result = run_cli("map", "--root", c_library, "--path", "src/net_send.c", "--tokens", "512")
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout, "src/net_send.c") == [
        (
            3,
            "int net_send(net_channel_t channel, const unsigned char *query_buffer, "
            "int query_length)",
        )
    ]
    assert result.stdout.endswith("(0 more files and 0 more symbols left out)\n")


def test_static_forward_declarations_never_show_in_place_of_their_definitions(c_library) -> None:
    # c-ares' src/lib/ares_process.c showed `process_timeouts` at line 67 and `next_server` at
    # 77, its prototypes at the top of the file, and not their definitions at 542 and 766.
    result = run_cli("map", "--root", c_library, "--path", "src/net_process.c", "--tokens", "2000")
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout, "src/net_process.c") == [
        (6, "int net_process(net_channel_t channel, int timeout_milliseconds)"),
        (11, "static int process_timeouts(net_channel_t channel, int now)"),
        (16, "static int next_server(net_channel_t channel)"),
    ]
    # Not ranked at all: nothing of the file is left out.
    assert result.stdout.endswith("(0 more files and 0 more symbols left out)\n")


def test_a_header_prototype_comes_after_the_definitions_and_maps_with_its_path(c_library) -> None:
    db_path = config.resolve(c_library).db_path
    with reading(db_path) as db:
        where = dict(
            db.conn.execute(
                "SELECT s.id, f.path || ':' || s.name FROM symbols s JOIN files f ON f.id = s.file_id"
            ).fetchall()
        )
        names = [where[i] for i, _ in map_rows.ranked_symbols(db, 1000)]
    declared = [
        f"include/net.h:{name}" for name in ("NET_OK", "NET_ERROR", "net_send", "net_process")
    ]
    tests = [n for n in names if n.startswith("test/")]
    code = [n for n in names if n not in declared and n not in tests]
    # The code's definitions (the header's type among them), then the header's #defines and
    # prototypes, then the tests'.
    assert names == code + [n for n in names if n in declared] + tests
    assert set(declared) < set(names) and "include/net.h:net_channel_t" in code
    assert "src/net_send.c:net_send" in code and len(tests) == 8 + 4
    # The header's API still maps, when asked for.
    api = _map(c_library, tokens=1000, path="include/")
    assert [s.name for f in api.files for s in f.symbols] == [
        "NET_OK",
        "NET_ERROR",
        "net_channel_t",
        "net_send",
        "net_process",
    ]


def test_vendored_test_frameworks_come_after_the_code_and_its_defines(c_library) -> None:
    # On c-ares the vendored googletest (test/gmock-1.8.0/) is the top-ranked file, every test
    # file using it: once the budget reached demoted rows, 685 of its rows came first, before
    # the library's #defines and prototypes.
    text = _map(c_library, tokens=4000).text
    listed = [line[:-1] for line in text.splitlines() if line.endswith(":")]
    assert listed.index("include/net.h") < listed.index("test/gtest-1.8.0/gtest.h")
    assert not any(path.startswith("test/") for path in listed[:-9])
    with reading(config.resolve(c_library).db_path) as db:
        assert db.scalar(
            "SELECT rank FROM file_ranks r JOIN files f ON f.id = r.file_id "
            "WHERE f.path = 'test/gtest-1.8.0/gtest.h'"
        ) == max(rank for (rank,) in db.conn.execute("SELECT rank FROM file_ranks"))


def test_a_budget_too_small_for_a_whole_row_shows_the_top_definition_briefly(c_library) -> None:
    for tokens in (40, 44):
        result = run_cli(
            "map", "--root", c_library, "--path", "src/net_send.c", "--tokens", str(tokens)
        )
        assert result.returncode == 0, result.stderr
        assert _rows(result.stdout, "src/net_send.c") == [(3, "int net_send(…)")]
        assert render.count_tokens(result.stdout.removesuffix("\n")) <= tokens
    # With room for it, the whole signature.
    roomy = _map(c_library, tokens=48, path="src/net_send.c")
    assert "int net_send(net_channel_t channel" in roomy.text


def test_a_cpp_method_shows_where_it_is_defined_out_of_line(make_repo, index) -> None:
    root = make_repo(
        {
            "include/slice.h": (
                "namespace geo {\nclass Slice {\n public:\n  Slice(const char* d, int n);\n"
                "  ~Slice();\n  int size() const;\n private:\n  const char* d_; int n_;\n};\n}\n"
            ),
            "src/slice.cc": (
                '#include "slice.h"\nnamespace geo {\n'
                "Slice::Slice(const char* d, int n) : d_(d), n_(n) {}\nSlice::~Slice() {}\n"
                "int Slice::size() const { return n_; }\n}\n"
            ),
            **{
                f"src/use_{n}.cc": f'#include "slice.h"\n'
                f'int use_{n}() {{ geo::Slice s("x", {n}); return s.size(); }}\n'
                for n in range(3)
            },
        }
    )
    index(root)
    text = _map(root, tokens=1000).text
    # The method's body is in slice.cc; its out-of-line constructor and destructor are not
    # shown (the class is, from its header), as an in-class one shows its class.
    assert _rows(text, "src/slice.cc") == [(5, "int Slice::size() const")]
    assert (2, "class Slice") in _rows(text, "include/slice.h")


def test_inline_rust_tests_and_generated_files_come_after_the_code(make_repo) -> None:
    # textwrap's map listed its `mod tests` helpers and `#[test]` functions, not `fill` or
    # `wrap`; libconfig's listed the scanner flex wrote first. Search demotes both (index/
    # chunks.py is_test): so does the map.
    root = make_repo(
        {
            "src/lib.rs": (
                "pub trait Shape {\n    fn area(&self) -> f64;\n}\n\n"
                "/// Sum of the areas of all shapes.\n"
                "pub fn total_area(shapes: &[&dyn Shape]) -> f64 {\n"
                "    shapes.iter().map(|s| s.area()).sum()\n}\n\n"
                "/// The shape with the largest area.\n"
                "pub fn largest<'a>(shapes: &[&'a dyn Shape]) -> Option<&'a dyn Shape> {\n"
                "    shapes.iter().copied().next()\n}\n\n"
                "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    struct Square(f64);\n\n"
                "    impl Shape for Square {\n        fn area(&self) -> f64 {\n"
                "            self.0 * self.0\n        }\n    }\n\n"
                "    #[test]\n    fn sums() {\n"
                "        assert_eq!(total_area(&[&Square(1.0), &Square(2.0)]), 5.0);\n    }\n\n"
                "    #[test]\n    fn picks_largest() {\n"
                "        assert!(largest(&[&Square(1.0), &Square(3.0)]).is_some());\n    }\n}\n"
            ),
            "c/scanner.h": "/* A lexical scanner generated by flex */\ntypedef void* yyscan_t;\n",
            "c/scanner.c": (
                '/* generated by flex */\n#include "scanner.h"\n'
                "int yylex_init(yyscan_t *s) { return 0; }\n"
            ),
            "c/config.h": "struct config_t { int n; };\n",
            "c/config.c": (
                '#include "config.h"\n#include "scanner.h"\n'
                "int config_read(struct config_t *c) { yyscan_t s; yylex_init(&s); return 0; }\n"
            ),
            "c/main.c": (
                '#include "config.h"\n#include "scanner.h"\n'
                "int main(void) { struct config_t c; yyscan_t s; yyscan_t t;\n"
                "  return config_read(&c); }\n"
            ),
        }
    )
    assert run_cli("index", root).returncode == 0
    rust = run_cli("map", "--root", root, "--path", "src/", "--tokens", "100")
    assert rust.returncode == 0, rust.stderr
    assert "pub fn total_area" in rust.stdout and "pub fn largest" in rust.stdout
    assert "mod tests" not in rust.stdout and "fn sums" not in rust.stdout
    c = run_cli("map", "--root", root, "--path", "c/", "--json")
    listed = list(dict.fromkeys(row["file_path"] for row in json.loads(c.stdout)["results"]))
    assert listed[-2:] in (["c/scanner.h", "c/scanner.c"], ["c/scanner.c", "c/scanner.h"])
