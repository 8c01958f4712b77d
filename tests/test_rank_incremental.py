"""Incremental ranking: a run that changed no edge of the reference graph keeps the stored
PageRank and rewrites only what moved; a run that changed an edge re-ranks, and either way the
stored ranking is what a cold index of the same tree holds, bit for bit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repomap import config
from repomap.index import pagerank as rank
from repomap.index import ranking
from repomap.store import ranks as store_ranks
from repomap.store import reading, writing


def _tree() -> dict[str, str]:
    files = {
        "lib/core.py": (
            "class ConnectionPool:\n"
            "    def acquire_connection(self):\n        pass\n\n\n"
            "def configure_logging():\n    pass\n"
        ),
        "lib/rare.py": "def rarely_used_helper():\n    return 2\n",
        "tests/test_core.py": "from lib.core import ConnectionPool\n\nConnectionPool()\n",
    }
    for m in range(6):
        files[f"lib/module_{m}.py"] = (
            "from lib.core import ConnectionPool, configure_logging\n\n"
            f"def handler_{m}(request):\n"
            "    ConnectionPool().acquire_connection()\n"
            "    configure_logging()\n"
            f"    return module_helper_{m}()\n\n\n"
            f"def module_helper_{m}():\n    return {m}\n"
        )
    return files


# The stored ranking by what it is about, not by row ids (a cold index numbers rows anew).
FILE_RANKS_SQL = "SELECT f.path, r.rank FROM file_ranks r JOIN files f ON f.id = r.file_id"
SYMBOL_RANKS_SQL = """SELECT f.path, s.qualified_name, s.start_line, r.rank FROM symbol_ranks r
    JOIN symbols s ON s.id = r.symbol_id JOIN files f ON f.id = s.file_id"""


def _stored(db_path: Path) -> dict:
    with reading(db_path) as db:
        arrays = store_ranks.load_arrays(
            db,
            ("rank", "c_weight", "def_share", "def_prior", "map_demoted", "map_order_levels"),
        )
        return {
            "files": sorted(db.conn.execute(FILE_RANKS_SQL).fetchall()),
            "symbols": sorted(db.conn.execute(SYMBOL_RANKS_SQL).fetchall()),
            "rows": db.scalar("SELECT count(*) FROM symbol_ranks"),
            "arrays": {name: value.tolist() for name, value in arrays.items()},
            "order": _map_order(db),
        }


def _map_order(db) -> list[tuple]:
    """The map's stored order as (path, qualified name, line)."""
    order = store_ranks.load_arrays(db, ("map_order",))["map_order"].tolist()
    where = {
        symbol_id: (path, name, line)
        for symbol_id, path, name, line in db.conn.execute(
            "SELECT s.id, f.path, s.qualified_name, s.start_line FROM symbols s "
            "JOIN files f ON f.id = s.file_id"
        )
    }
    return [where[symbol_id] for symbol_id in order]


def _cold(root: Path, tmp_path: Path, index) -> dict:
    """The ranking of a fresh index of a copy of `root` as it is now."""
    copy = tmp_path / f"cold-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".repomap"))
    index(copy)
    return _stored(config.resolve(copy).db_path)


def _full(db_path: Path) -> dict:
    """The ranking recomputed from scratch on the same index: no caches, no stored ranks."""
    with writing(db_path) as db:
        db.conn.execute("DELETE FROM rank_arrays")
        ranking.refresh_ranks(db, force=True)
    return _stored(db_path)


@pytest.fixture
def pageranks(monkeypatch) -> list[int]:
    """How many times PageRank ran (each call appends the number of files it ranked)."""
    calls: list[int] = []
    real = rank.pagerank

    def counted(graph, *args, **kwargs):
        calls.append(graph.file_count)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(rank, "pagerank", counted)
    return calls


def test_a_comment_edit_keeps_the_ranks_and_a_new_reference_re_ranks(
    make_repo, index, tmp_path, pageranks
) -> None:
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    assert pageranks == [9]
    before = _stored(db_path)

    # A comment changes no edge: no PageRank, the same ranks; the file's rows have new ids.
    module = root / "lib" / "module_2.py"
    module.write_text(module.read_text() + "# a note about the handler\n")
    summary = index(root)
    assert summary.modified == 1 and pageranks == [9]
    after_comment = _stored(db_path)
    assert after_comment == before
    assert after_comment == _cold(root, tmp_path, index)

    # A new reference is a new edge: PageRank runs, and the ranks are a full ranking's.
    rare = root / "lib" / "module_4.py"
    rare.write_text(
        "from lib.rare import rarely_used_helper\n" + rare.read_text() + "rarely_used_helper()\n"
    )
    index(root)
    assert pageranks == [9, 9, 9]  # the cold copy's, then this run's
    after_reference = _stored(db_path)
    assert after_reference["files"] != before["files"]
    assert after_reference == _cold(root, tmp_path, index)
    assert after_reference == _full(db_path)


def test_a_docstring_edit_keeps_the_file_ranks_and_rewrites_the_scores(
    make_repo, index, tmp_path, pageranks
) -> None:
    """A docstring changes a definition's prior, not the graph's flow: no PageRank, but the
    definitions' scores are those of a full ranking."""
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    before = _stored(db_path)
    core = root / "lib" / "core.py"
    core.write_text(core.read_text().replace("pass\n", '"""Once, at start-up."""\n'))
    index(root)
    assert pageranks == [9]
    after = _stored(db_path)
    assert after["files"] == before["files"] and after["symbols"] != before["symbols"]
    assert after == _cold(root, tmp_path, index) == _full(db_path)


def test_a_deleted_file_and_a_renamed_one_re_rank_like_a_cold_index(
    make_repo, index, tmp_path
) -> None:
    root = make_repo(_tree())
    index(root)
    (root / "lib" / "module_5.py").unlink()
    (root / "lib" / "module_1.py").rename(root / "lib" / "renamed.py")
    index(root)
    # The arrays list files in id order, and renamed.py's id is new here: compare the rest.
    incremental, cold = _stored(config.resolve(root).db_path), _cold(root, tmp_path, index)
    del incremental["arrays"], cold["arrays"]
    assert incremental == cold


def test_a_ranking_interrupted_while_stored_leaves_the_previous_one_whole(
    make_repo, index, tmp_path, monkeypatch
) -> None:
    """store_ranks writes in one transaction: killed midway, the index keeps its previous
    ranking (rows, arrays and digests agreeing), and the next run's is a cold index's."""
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    before = _stored(db_path)
    module = root / "lib" / "module_3.py"
    module.write_text(module.read_text() + "# edited\n")
    real_set_meta = store_ranks.set_meta

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(store_ranks, "set_meta", killed)
    with pytest.raises(KeyboardInterrupt):
        index(root)
    monkeypatch.setattr(store_ranks, "set_meta", real_set_meta)
    with reading(db_path) as db:  # the old ranking, whole: its rows still name the old ids
        assert db.scalar("SELECT count(*) FROM symbol_ranks") == before["rows"]
    index(root)
    assert _stored(db_path) == before == _cold(root, tmp_path, index)


def test_a_cold_run_ranks_from_the_rows_it_wrote_as_from_the_tables(make_repo, index) -> None:
    """A cold run ranks from what the writer handed it (no read of symbols and refs); the
    same index ranked from its tables gives the same ranking, bit for bit: C++ declarations
    linked to out-of-line definitions, #defines, C prototypes in a header and `static`
    forward declarations in the defining file, a name used twice on one line (refs holds
    one row per line), containers that are not ranked, Rust and Python (an `@overload`
    declaration) beside them."""
    root = make_repo(
        {
            "include/grid.h": "#define GRID_LIMIT 64\nnamespace geo {\nclass GridIndex {\n"
            " public:\n  int cell_count(int a);\n};\n}\n",
            "src/grid.cpp": '#include "grid.h"\nnamespace geo {\n'
            "int GridIndex::cell_count(int a) { return a + GRID_LIMIT + GRID_LIMIT; }\n}\n",
            "src/main.cpp": '#include "grid.h"\nint main() { geo::GridIndex g;\n'
            "  return g.cell_count(1) + g.cell_count(2); }\n",
            "src/pool.rs": "pub struct ConnectionPool {}\nimpl ConnectionPool {\n"
            "    pub fn acquire_slot(&self) -> u32 { 0 }\n}\n",
            "src/user.rs": "use crate::pool::ConnectionPool;\n"
            "fn run(p: &ConnectionPool) -> u32 { p.acquire_slot() + p.acquire_slot() }\n",
            "include/net.h": "int net_send(int fd);\n",
            "src/net.c": '#include "net.h"\nstatic int net_retry(int fd);\n\n'
            "int net_send(int fd) { return net_retry(fd); }\n\n"
            "static int net_retry(int fd) { return fd; }\n",
            "src/caller.c": '#include "net.h"\nint go(void) { return net_send(1); }\n',
            "lib/typed.py": "from typing import overload\n\n@overload\ndef pick(x: int) -> int: ...\n"
            "@overload\ndef pick(x: str) -> str: ...\ndef pick(x):\n    return x\n",
            **_tree(),
        }
    )
    index(root)
    db_path = config.resolve(root).db_path
    cold = _stored(db_path)
    assert any(path == "src/grid.cpp" for path, _ in cold["files"]) and cold["rows"] > 20
    # The forward declaration is not ranked, the header's prototype is, after the definitions.
    assert [where for where in cold["order"] if where[1] == "net_retry"] == [
        ("src/net.c", "net_retry", 6)
    ]
    net_send = [where for where in cold["order"] if where[1] == "net_send"]
    assert net_send == [("src/net.c", "net_send", 4), ("include/net.h", "net_send", 1)]
    assert sorted(where[2] for where in cold["order"] if where[1] == "pick") == [4, 6, 7]
    assert cold == _full(db_path)


@pytest.fixture
def rankings_computed(monkeypatch) -> list[int]:
    """How many times a ranking was computed from the index's rows (not kept whole)."""
    calls: list[int] = []
    real = ranking._file_definitions

    def counted(db, files, *args, **kwargs):
        calls.append(len(files))
        return real(db, files, *args, **kwargs)

    monkeypatch.setattr(ranking, "_file_definitions", counted)
    return calls


def _symbol_ids(db_path: Path, path: str) -> list[tuple[int, str]]:
    with reading(db_path) as db:
        return db.conn.execute(
            "SELECT s.id, s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id "
            "WHERE f.path = ? ORDER BY s.id",
            (path,),
        ).fetchall()


def test_a_rewrite_with_the_same_graph_keeps_the_symbol_ids_and_the_whole_ranking(
    make_repo, index, tmp_path, rankings_computed
) -> None:
    """A comment and a body edit that uses no other name: the file's symbols
    keep their ids, and the ranking is kept without being computed; it is still a cold
    index's."""
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    assert rankings_computed == [9]
    ids_before = _symbol_ids(db_path, "lib/module_2.py")
    before = _stored(db_path)

    module = root / "lib" / "module_2.py"
    module.write_text(
        "# handlers of the second module\n"
        + module.read_text().replace("    return 2\n", "    return 2 * 1  # kept\n")
    )
    summary = index(root)
    assert summary.modified == 1
    assert rankings_computed == [9]  # kept whole
    assert _symbol_ids(db_path, "lib/module_2.py") == ids_before
    after = _stored(db_path)
    # The same ranks (the file's symbols start a line lower now, under the new comment)
    assert (after["files"], after["arrays"]) == (before["files"], before["arrays"])
    assert after == _cold(root, tmp_path, index)
    with reading(db_path) as db:  # and the next run finds it current
        assert ranking.compute_ranks(db) is None


def test_a_rewrite_that_changes_a_use_count_or_drops_a_definition_ranks_again(
    make_repo, index, tmp_path, rankings_computed
) -> None:
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    # The same definitions and names, one used in one more function: an edge's weight changes.
    module = root / "lib" / "module_3.py"
    module.write_text(
        module.read_text().replace("    return 3\n", "    configure_logging()\n    return 3\n")
    )
    index(root)
    assert rankings_computed == [9, 9]
    assert _stored(db_path) == _cold(root, tmp_path, index)
    # A definition removed: fewer symbols, the first ones keep their ids, the ranking is new.
    core = root / "lib" / "core.py"
    ids_before = _symbol_ids(db_path, "lib/core.py")
    core.write_text(core.read_text().split("def configure_logging")[0])
    index(root)
    assert len(rankings_computed) == 4  # this run's, after the cold copy's
    ids_after = _symbol_ids(db_path, "lib/core.py")
    assert ids_after == ids_before[: len(ids_after)] and len(ids_after) < len(ids_before)
    assert _stored(db_path) == _cold(root, tmp_path, index) == _full(db_path)


def test_a_graph_change_whose_ranking_was_killed_is_ranked_by_the_next_run(
    make_repo, index, tmp_path, monkeypatch
) -> None:
    """The writer's mark is committed with the rows that changed the graph: a run killed
    before its ranking leaves it, and the next run (with nothing new to read) ranks."""
    root = make_repo(_tree())
    db_path = config.resolve(root).db_path
    index(root)
    module = root / "lib" / "module_4.py"
    module.write_text(
        "from lib.rare import rarely_used_helper\n" + module.read_text() + "rarely_used_helper()\n"
    )

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    real = ranking.compute_ranks
    monkeypatch.setattr(ranking, "compute_ranks", killed)
    with pytest.raises(KeyboardInterrupt):
        index(root)
    monkeypatch.setattr(ranking, "compute_ranks", real)
    summary = index(root)
    assert summary.modified == 0
    with reading(db_path) as db:
        assert db.scalar("SELECT value FROM meta WHERE key = 'rank_graph'") == "ranked"
    assert _stored(db_path) == _cold(root, tmp_path, index)


def test_a_forced_run_ranks_again(make_repo, index, rankings_computed) -> None:
    root = make_repo(_tree())
    index(root)
    index(root, force=True)
    assert rankings_computed == [9, 9]


def test_a_header_rewritten_with_the_same_declarations_keeps_the_links_and_the_ranking(
    make_repo, index, tmp_path, rankings_computed
) -> None:
    """C++: a definition out of line stays linked to its in-class declaration when the header
    is written again (the declaration keeps its id), and the kept ranking is a cold index's."""
    root = make_repo(
        {
            "include/grid.h": "namespace geo {\nclass GridIndex {\n public:\n"
            "  int cell_count(int a);\n};\n}\n",
            "src/grid.cpp": '#include "grid.h"\nnamespace geo {\n'
            "int GridIndex::cell_count(int a) { return a * 2; }\n}\n",
            "src/use.cpp": '#include "grid.h"\nint run(geo::GridIndex g) { return g.cell_count(1); }\n',
        }
    )
    db_path = config.resolve(root).db_path
    index(root)
    linked = "SELECT count(*) FROM symbols WHERE declaration_id IS NOT NULL"
    with reading(db_path) as db:
        assert db.scalar(linked) == 1
    header = root / "include" / "grid.h"
    # A blank line after it: a comment right above `namespace geo` would be its doc.
    header.write_text("// the grid's cells\n\n" + header.read_text())
    assert index(root).modified == 1
    assert rankings_computed == [3]
    with reading(db_path) as db:
        assert db.scalar(linked) == 1
        assert (
            db.scalar("SELECT count(*) FROM symbols d JOIN symbols s ON s.declaration_id = d.id")
            == 1
        )
    assert _stored(db_path) == _cold(root, tmp_path, index)


def _many_definitions() -> dict[str, str]:
    """A tree whose ranks take several 50-row statements and a remainder to write, with names
    outside ASCII (sorted by code point on every path) and names only used, never defined."""
    helpers = "".join(f"def helper_{n:03d}(value):\n    return value + {n}\n\n" for n in range(137))
    calls = "".join(f"    total += helper_{n:03d}(total)\n" for n in range(0, 137, 3))
    return {
        **_tree(),
        "lib/helpers.py": helpers,
        "lib/größe.py": "def größe_berechnen(maß):\n    return maß\n\n\nclass Ärger:\n    pass\n",
        "lib/user.py": "from lib.helpers import *\nfrom lib.größe import größe_berechnen, Ärger\n\n"
        "def run(total):\n" + calls + "    Ärger()\n    undefined_elsewhere()\n"
        "    return größe_berechnen(total)\n",
    }


@pytest.mark.parametrize("threads", [False, True])
def test_a_cold_run_of_many_definitions_ranks_as_from_the_tables(
    make_repo, index, monkeypatch, threads
) -> None:
    """The cold run's own paths (one numbering of the names from the hand-over, caches packed
    on threads when large, ranks written 300 rows to a statement) store what a ranking from
    the tables stores, bit for bit."""
    if threads:  # as for an index past PARALLEL_BYTES of arrays (the Linux kernel's)
        monkeypatch.setattr(ranking, "PARALLEL_BYTES", 0)
    root = make_repo(_many_definitions())
    index(root)
    db_path = config.resolve(root).db_path
    cold = _stored(db_path)
    with reading(db_path) as db:
        ranked = db.scalar(
            "SELECT count(*) FROM symbols WHERE kind NOT IN ('impl', 'namespace', 'module')"
        )
        stats = dict(db.conn.execute("SELECT name, ref_files FROM name_stats").fetchall())
    assert cold["rows"] == ranked > 150
    assert stats["größe_berechnen"] == stats["Ärger"] == stats["helper_003"] == 1
    assert "helper_001" not in stats and "undefined_elsewhere" not in stats
    assert cold == _full(db_path)


@pytest.mark.parametrize("first_file", [1, 1 << 50])
def test_the_sort_of_definitions_is_lexsorts_whatever_the_order_of_ids(first_file) -> None:
    """One sort of (file, name, id) or (file, name, position) as one number; past 64 bits (file
    ids from 2^50) one stable sort of (file, name), or lexsort when the ids of equal pairs do
    not come in ascending order (rows mixed from the cache and the tables)."""
    import numpy as np

    generator = np.random.default_rng(20)
    files = np.sort(generator.integers(first_file, first_file + 40, 3000))
    names = generator.integers(0, 25, 3000)
    for ids in (np.arange(3000) + 7, generator.permutation(3000), generator.permutation(3000) * 5):
        expected = np.lexsort((ids, names, files))
        assert ranking._sort_order(files, names, ids).tolist() == expected.tolist()
    for files_in in (files[::-1], files):  # no ids: equal pairs keep their order
        assert (
            ranking._sort_order(files_in, names).tolist() == np.lexsort((names, files_in)).tolist()
        )


def test_a_digest_of_names_is_that_of_their_lines_however_they_are_held() -> None:
    """name_stats_digest: a list of names, the names of a sorted list at some positions and
    their joined lines digest alike, past the slices of JOINED_AT_ONCE names too."""
    import numpy as np

    from repomap.store import ranks

    every = sorted(f"name_{i:06d}" for i in range(3 * ranks.JOINED_AT_ONCE + 5)) + ["", "ü"]
    at = np.flatnonzero(np.arange(len(every)) % 3 != 1)  # some names of the list
    some = [every[i] for i in at.tolist()]
    subset = ranking._NameSubset(every, at)
    assert len(subset) == len(some) and list(subset) == some
    assert subset.take(np.array([0, 2, len(some) - 1])) == [some[0], some[2], some[-1]]
    counts = np.arange(len(some))
    digest = ranking._digest(ranks.JoinedNames.of(some), counts)
    assert ranking._digest(some, counts) == ranking._digest(subset, counts) == digest
    assert ranking._digest(some[:-1], counts) != digest
    whole = ranking._NameSubset(every, np.arange(len(every)))
    assert (
        ranking._digest(whole)
        == ranking._digest(every)
        == ranking._digest(ranks.JoinedNames.of(every))
    )


@pytest.mark.parametrize("count", [0, 1, 299, 300, 301, 1001])
def test_rows_written_many_to_a_statement_land_each_once(tmp_path, count) -> None:
    """symbol_ranks and name_stats rows go ROWS_PER_INSERT to a statement, given as tuples or
    as parts of columns whose lengths are not multiples of it: every row lands, once."""
    rows = [(7 + 3 * i, 1.0 / (i + 3)) for i in range(count)]
    cut = [0, 1, 250, 777, count]
    parts = store_ranks.ColumnParts(
        tuple(list(column) for column in zip(*rows[a:b], strict=True)) or ([], [])
        for a, b in zip(cut, cut[1:], strict=False)
        if a < b
    )
    head = "INSERT INTO symbol_ranks (symbol_id, rank) VALUES "
    for given in (rows, parts):
        with writing(tmp_path / "index.db") as db, db.atomic():
            db.conn.execute("DELETE FROM symbol_ranks")
            store_ranks._insert_many(db, head, 2, given)
            stored = db.conn.execute(
                "SELECT symbol_id, rank FROM symbol_ranks ORDER BY rowid"
            ).fetchall()
        assert stored == rows


def test_pageranks_flow_over_the_used_names_definitions_is_the_whole_flow_bit_for_bit() -> None:
    """Definitions of names no file uses receive 0.0: leaving them out of each step's sums
    changes no bit of what each file receives."""
    import numpy as np

    generator = np.random.default_rng(22)
    files, names, uses, defs = 40, 300, 900, 1200
    graph = rank.Graph(
        file_ids=np.arange(files, dtype=np.int64),
        c_file=generator.integers(0, files, uses).astype(np.int32),
        c_name=generator.integers(0, names // 3, uses).astype(np.int32),  # 2/3 never used
        c_weight=generator.random(uses),
        def_symbol=np.arange(defs, dtype=np.int64),
        def_file=np.sort(generator.integers(0, files, defs)).astype(np.int32),
        def_name=generator.integers(0, names, defs).astype(np.int32),
        def_self=np.zeros(defs),
        def_prior=np.ones(defs),
        def_share=generator.random(defs),
        name_quality=np.ones(names),
        rank=np.full(files, 1.0 / files),
    )
    z = generator.random(files)
    reached = rank._reached(graph)
    assert len(reached.name) < defs
    whole = rank._flow(graph, graph.c_weight, z)
    assert rank._flow(graph, graph.c_weight, z, reached).tobytes() == whole.tobytes()


def test_int64_ids_pack_as_their_int32_copy_did() -> None:
    """pack's int64 arrays that fit in 32 bits: their low bytes shuffled straight, the same
    row as the int32 copy shuffled, negatives included; wider ones stay int64."""
    import zlib

    import numpy as np

    generator = np.random.default_rng(23)
    fits = generator.integers(-(2**31), 2**31, 10_000)
    for value in (fits, fits[::3], fits[:0]):
        dtype, data = store_ranks.pack(value)
        planes = value.astype("<i4").view(np.uint8).reshape(-1, 4).T
        assert (dtype, data) == (
            store_ranks.SHUFFLED + "<i4",
            zlib.compress(np.ascontiguousarray(planes).data, 1),
        )
    wide = generator.integers(-(2**40), 2**40, 100)
    assert store_ranks.pack(wide)[0] == store_ranks.SHUFFLED + "<i8"


def test_a_file_that_uses_only_its_own_names_does_not_take_the_whole_ranking() -> None:
    """systemd's copy of nl80211.h uses only enumerators it alone defines: its total weight and
    the weight to itself differ by rounding alone (2.3e-13 of 976.64), its rank was divided by
    that, and after 200 steps it held the whole ranking (every other file 1e-96 or less; the
    map showed nothing else). Here the same: 600 uses of its own names whose sums differ in the
    last bit, and two files that use each other."""
    import numpy as np

    generator = np.random.default_rng(18)  # one of many seeds whose sums differ so
    own = 600
    weights = generator.random(own) * 3
    c_file = np.array([0] * own + [1, 2], dtype=np.int32)
    c_name = np.array([*range(own), own, own + 1], dtype=np.int32)
    def_file = np.array([0] * own + [2, 1], dtype=np.int32)
    def_name = np.array([*reversed(range(own)), own, own + 1], dtype=np.int32)  # summed apart
    graph = rank.Graph(
        file_ids=np.arange(3, dtype=np.int64),
        c_file=c_file,
        c_name=c_name,
        c_weight=np.concatenate([weights, [1.0, 1.0]]),
        def_symbol=np.arange(own + 2, dtype=np.int64),
        def_file=def_file,
        def_name=def_name,
        def_self=np.concatenate([weights[::-1], [0.0, 0.0]]),
        def_prior=np.ones(own + 2),
        def_share=np.ones(own + 2),
        name_quality=np.ones(own + 2),
        rank=np.full(3, 1.0 / 3),
    )
    total = np.bincount(graph.c_file, weights=graph.c_weight)[0]
    kept = np.bincount(graph.def_file, weights=graph.def_self * graph.def_share)[0]
    assert total != kept and abs(total - kept) < total * 1e-12  # the sums differ by rounding
    ranks = rank.pagerank(graph)  # before the fix: [1.25, -0.12, -0.12]
    assert ranks[0] > 0 and abs(ranks[1] - ranks[2]) < 1e-12 and ranks[1] > ranks[0]
    assert round(ranks[0], 4) == 0.0698  # file 0 dangling: what the others' cycle leaves it


# A Rust file of the project's own code with its tests inline, and a file flex wrote: the code
# search demotes (index/chunks.py is_test), which the map's order demotes too (map_demoted 2).
TEST_CODE_TREE = {
    "src/lib.rs": (
        "pub trait Shape {\n    fn area(&self) -> f64;\n}\n\n"
        "pub fn total_area(shapes: &[&dyn Shape]) -> f64 {\n"
        "    shapes.iter().map(|s| s.area()).sum()\n}\n\n"
        "#[cfg(test)]\nmod checks {\n    use super::*;\n\n    struct Square(f64);\n\n"
        "    impl Shape for Square {\n        fn area(&self) -> f64 {\n"
        "            self.0 * self.0\n        }\n    }\n\n"
        "    #[test]\n    fn sums() {\n        total_area(&[&Square(1.0)]);\n    }\n}\n"
    ),
    "src/scanner.h": "/* A lexical scanner generated by flex */\ntypedef void* yyscan_t;\n",
    "src/config.c": (
        '#include "scanner.h"\nint config_read(yyscan_t s) { return 0; }\n'
        "int config_lookup(yyscan_t s) { return config_read(s); }\n"
    ),
}


def _demoted_names(db_path: Path) -> dict[str, int]:
    """Each ranked definition's map_demoted, by file and qualified name."""
    with reading(db_path) as db:
        arrays = store_ranks.load_arrays(db, ("def_symbol", "map_demoted"))
        names = dict(
            db.conn.execute(
                "SELECT s.id, f.path || ' ' || s.qualified_name FROM symbols s "
                "JOIN files f ON f.id = s.file_id"
            ).fetchall()
        )
    return {
        names[symbol_id]: level
        for symbol_id, level in zip(
            arrays["def_symbol"].tolist(), arrays["map_demoted"].tolist(), strict=True
        )
    }


def test_inline_rust_tests_and_generated_files_are_demoted_as_search_demotes_them(
    make_repo, index
) -> None:
    root = make_repo({**TEST_CODE_TREE, **_tree()})
    index(root)
    db_path = config.resolve(root).db_path
    demoted = _demoted_names(db_path)
    assert demoted["src/lib.rs total_area"] == 0 and demoted["src/lib.rs Shape::area"] == 0
    assert demoted["src/lib.rs checks::Square"] == 2
    assert demoted["src/lib.rs checks::sums"] == 2
    assert demoted["src/lib.rs checks::Square::area"] == 2  # the test's impl of the trait
    assert demoted["src/scanner.h yyscan_t"] == 2
    assert demoted["src/config.c config_read"] == 0
    # The same from the tables (no rows handed over by the writer), and after a run that
    # re-read one file while the others' came from the cache.
    cold = _stored(db_path)
    assert cold == _full(db_path)
    source = root / "src" / "lib.rs"
    source.write_text(source.read_text().replace("mod checks {", "mod checks {\n    // note"))
    index(root)
    assert _demoted_names(db_path)["src/lib.rs checks::sums"] == 2
    (root / "lib" / "rare.py").write_text("def rarely_used_helper():\n    return 3\n")
    index(root)
    assert _demoted_names(db_path) == demoted


def test_a_definition_made_a_test_or_no_test_re_ranks_with_no_name_changed(
    make_repo, index
) -> None:
    # What ranking reads of a file (the writer's graph digest) held names and uses, not which
    # definitions are tests: `#[test]` added (or a generator's header) with no name changed
    # kept the old map order (the diff review's finding).
    root = make_repo({**TEST_CODE_TREE, **_tree()})
    index(root)
    db_path = config.resolve(root).db_path
    source = root / "src" / "lib.rs"
    source.write_text(source.read_text().replace("pub fn total_area", "#[test]\npub fn total_area"))
    index(root)
    assert _demoted_names(db_path)["src/lib.rs total_area"] == 2
    assert _stored(db_path) == _full(db_path)  # as the tables rank it from scratch
    source.write_text(source.read_text().replace("#[test]\npub fn total_area", "pub fn total_area"))
    header = root / "src" / "scanner.h"
    header.write_text(header.read_text().replace("generated by flex", "written by hand"))
    index(root)
    demoted = _demoted_names(db_path)
    assert demoted["src/lib.rs total_area"] == 0 and demoted["src/scanner.h yyscan_t"] == 0
    assert _stored(db_path) == _full(db_path)


def test_a_files_test_lines_are_its_test_chunks_spans_merged() -> None:
    # A test module's chunks nest (an impl holds its methods) and follow code chunks: each
    # definition's first line is looked up by bisection among disjoint spans.
    chunks = [
        ("function", 1, 5, False),
        ("impl", 10, 30, True),
        ("method", 12, 14, True),
        ("function", 28, 34, True),
        ("function", 40, 45, True),
        ("module", 1, 50, False),
    ]
    lines = ranking.test_lines(chunks)
    assert lines == [(10, 34), (40, 45)]
    tested = [line for line in range(1, 51) if ranking.in_test_lines(lines, line)]
    assert tested == [*range(10, 35), *range(40, 46)]
    assert ranking.test_lines([("function", 1, 5, False)]) is None
    assert ranking.test_lines([("module", 1, 9, True), ("function", 1, 5, True)]) is True
    assert ranking.test_lines([("function", 1, 5, True)]) is True  # every chunk: generated
    assert ranking.in_test_lines(None, 3) is False and ranking.in_test_lines(True, 3) is True
