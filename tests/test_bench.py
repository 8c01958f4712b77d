"""bench/: the shared helpers compute what they say, and run.py leaves the measured tree as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("psutil")  # the harness samples process memory with it

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402  (bench/ is a folder of scripts, not a package)

from repomap.store import reading  # noqa: E402


@pytest.mark.parametrize(
    "values, p, expected",
    [
        ([3.0], 50, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
        ([4.0, 1.0, 3.0, 2.0], 50, 2.5),
        ([10.0, 20.0, 30.0, 40.0, 50.0], 90, 46.0),
    ],
)
def test_percentile_interpolates_between_ranks_like_numpy(values, p, expected):
    assert common.percentile(values, p) == pytest.approx(expected)


def test_percentile_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        common.percentile([], 50)


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    assert common.median([5.0, 1.0, 2.0, 9.0]) == 3.5


def test_markdown_table_pads_columns_aligns_right_and_escapes_pipes():
    table = common.markdown_table(["name", "n"], [["a|b", 7], ["long name", 12]], "lr")
    assert table.splitlines() == [
        "| name      |   n |",
        "| --------- | --: |",
        "| a\\|b      |   7 |",
        "| long name |  12 |",
    ]


def test_timed_counts_the_memory_of_a_child_process():
    child = "b = bytearray(150_000_000); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(0.4)"
    parent = (
        f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], check=True)"
    )
    run = common.timed([sys.executable, "-c", parent]).check()
    assert run.max_process_rss >= 150_000_000
    assert run.tree_peak_rss >= 150_000_000
    assert run.seconds >= 0.4


def test_timed_does_not_charge_the_harness_memory_to_a_small_command():
    # A forked child's ru_maxrss starts at its parent's RSS; the harness may hold a corpus.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import common; "
        "held = bytearray(300_000_000); held[::4096] = b'x' * len(held[::4096]); "
        "run = common.timed([sys.executable, '-c', 'import time; time.sleep(0.3)']); "
        "print(run.max_process_rss, run.tree_peak_rss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(BENCH)], capture_output=True, text=True, check=True
    )
    process_peak, tree_peak = map(int, out.stdout.split())
    assert 0 < process_peak < 100_000_000
    assert 0 < tree_peak < 100_000_000


def test_timed_reports_a_failing_command():
    run = common.timed([sys.executable, "-c", "import sys; sys.exit('boom')"])
    assert run.returncode == 1
    with pytest.raises(SystemExit, match="boom"):
        run.check()


def test_indexed_files_follow_repomaps_discovery_and_size_limit(make_repo):
    root = make_repo(
        {
            "a.py": "x = 1\n",
            "b.rs": "fn main() {}\n",
            "notes.txt": "not code\n",
            "ignored/c.py": "y = 2\n",
            ".gitignore": "ignored/\n",
            "big.py": "z = 1\n" * 100,
        }
    )
    found = common.indexed_files(root, max_file_size=100)
    assert sorted((path.name, language) for path, language, _ in found) == [
        ("a.py", "python"),
        ("b.rs", "rust"),
    ]


def _snapshot(root: Path) -> dict[Path, tuple[bytes, int]]:
    """Every file's bytes and mtime: a bench must leave the tree it measures as it was."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def test_run_measures_a_tree_and_leaves_it_untouched(make_repo, tmp_path):
    root = make_repo(
        {
            f"pkg/m{i}.py": f'"""Module {i}."""\n\n# note\ndef f{i}():\n    return "s"\n'
            for i in range(5)
        }
    )
    before = _snapshot(root)
    out = tmp_path / "raw.json"
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--root",
            str(root),
            "--runs",
            "2",
            "--json",
            str(out),
            "--peers",
            "none",  # tests/test_bench_peer.py covers peers; never a pip install here
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert _snapshot(root) == before
    for row in ("cold", "no change", "one file changed", "peak RSS", "database", "ctags -R"):
        assert row in result.stdout
    assert result.stdout.count("PASS") + result.stdout.count("FAIL") == 5
    assert "warning" not in result.stdout  # no-change changed nothing, one-file changed one
    raw = json.loads(out.read_text())[root.name]
    assert len(raw["cold"]) == len(raw["no_change"]) == len(raw["one_file"]) == 2
    assert raw["lines"] == 25
    assert raw["summary"]["files"] == 5


def _budget_rows(stdout: str) -> dict[str, float]:
    """CPU seconds of each row of budget.py's table, by the row's first words."""
    rows = {}
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[1].endswith((" s", " ms")):
            number, unit = cells[1].split()
            rows[cells[0]] = float(number) / (1000 if unit == "ms" else 1)
    return rows


def test_budget_measures_every_part_of_a_cold_index_and_leaves_the_tree_alone(make_repo):
    root = make_repo(
        {
            "pkg/a.py": '"""Doc."""\n\n# note\ndef f():\n    return "s"\n',
            "src/lib.rs": '/// Doc.\npub fn g() -> &\'static str { "s" } // note\n',
            "inc/h.h": "// note\nnamespace n { /** Doc. */ int h() { return 1; } }\n",
        }
    )
    before = _snapshot(root)
    result = subprocess.run(
        [sys.executable, str(BENCH / "budget.py"), "--root", str(root), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert _snapshot(root) == before
    rows = _budget_rows(result.stdout)
    parts = [
        "parse the design requires (ast; parse + query traversal)",
        "SQL: rows inserted (files, symbols, refs, text)",
        "SQL: FTS5 and trigram text indexes, merged",
        "ranking, from scratch, stored",
    ]
    assert all(rows[part] > 0 for part in parts), rows
    # Rounded to what the table prints: the sum row is the sum of the four rows above it.
    assert rows["**sum of the fixed parts**"] == pytest.approx(
        sum(rows[p] for p in parts), abs=0.01
    )
    assert rows["cold index: CPU of all its processes"] > 0
    assert "the cold index took" in result.stdout


def test_rank_alone_times_each_stage_and_leaves_the_index_as_it_was(make_repo, index) -> None:
    root = make_repo(
        {
            "pkg/a.py": "def helper_function():\n    return 1\n",
            "pkg/b.py": "from pkg.a import helper_function\nhelper_function()\n",
            "inc/h.h": "#define LIMIT 3\nint h(void);\n",
            "src/h.c": '#include "h.h"\nint h(void) { return LIMIT; }\n',
        }
    )
    index(root)
    db_path = root / ".repomap" / "index.db"
    ranks_sql = (
        "SELECT r.symbol_id, s.file_id, r.rank FROM symbol_ranks r "
        "JOIN symbols s ON s.id = r.symbol_id ORDER BY r.symbol_id"
    )
    arrays_sql = "SELECT name, dtype, data FROM rank_arrays ORDER BY name"
    with reading(db_path) as db:
        before = db.conn.execute(ranks_sql).fetchall(), db.conn.execute(arrays_sql).fetchall()
    for mode in ([], ["--written"]):
        result = subprocess.run(
            [sys.executable, str(BENCH / "rank_alone.py"), str(root), "--runs", "1", *mode],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        stages = {
            cells[0]: float(cells[2])
            for line in result.stdout.splitlines()
            if len(cells := [cell.strip() for cell in line.strip("|").split("|")]) == 3
            and cells[0] not in ("stage", "---")
        }
        assert {"pagerank", "_file_definitions", "**compute_ranks**", "**store_ranks**"} <= set(
            stages
        )
        assert stages["**compute_ranks**"] >= stages["pagerank"] >= 0
        assert ("handing the rows over" in result.stdout) == bool(mode)
    with reading(db_path) as db:
        after = db.conn.execute(ranks_sql).fetchall(), db.conn.execute(arrays_sql).fetchall()
    assert after == before and before[0]


def test_symbol_lookups_times_each_kind_of_query_and_compares_saved_answers(
    make_repo, index, tmp_path
) -> None:
    root = make_repo(
        {
            "pkg/pool.py": "class Pool:\n    def get(self):\n        return 1\n",
            "src/lib.rs": "pub struct Pool;\nimpl Default for Pool {\n"
            "    fn default() -> Self { Pool }\n}\n",
        }
    )
    index(root)
    db_path = root / ".repomap" / "index.db"
    saved = []
    for run in ("a", "b"):
        saved.append(tmp_path / f"{run}.json")
        result = subprocess.run(
            [sys.executable, str(BENCH / "symbol_lookups.py"), str(db_path), "--save", saved[-1]],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
    measured = json.loads(saved[0].read_text())
    assert {"name/search", "qualified_alt/find", "impl_qualified/named"} <= set(
        measured["times_ms"]
    )
    impl = measured["answers"]["impl_qualified/find"]
    assert impl and all(answer and answer[0][2].endswith("Default for Pool") for answer in impl)
    compared = subprocess.run(
        [sys.executable, str(BENCH / "symbol_lookups.py"), "--compare", *saved],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "| qualified/search |" in compared.stdout


def _extract_cpu_run(kernel: Path) -> dict:
    """One `extract_cpu.py --one kernel` run on the tree at `kernel`, its JSON line."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "extract_cpu.py"), "--one", "kernel"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "REPOMAP_KERNEL": str(kernel)},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_extract_cpu_digests_the_rows_of_every_tenth_file_and_leaves_the_tree_alone(make_repo):
    files = {
        f"drivers/a{i:02}.c": f"/** f{i}() - doc */\nint f{i}(int x) {{ return g(x); }}\n"
        for i in range(11)
    }
    root = make_repo({**files, "include/a.h": "#define A(x) ((x) + 1)\n"})
    before = _snapshot(root)
    first, again = _extract_cpu_run(root), _extract_cpu_run(root)
    assert _snapshot(root) == before
    # Sorted: a00.c, a01.c, ... a10.c, then include/a.h: every 10th is a00.c and a10.c.
    assert first["files"] == 2 and first["skipped"] == 0
    assert first["bytes"] == len(files["drivers/a00.c"]) + len(files["drivers/a10.c"])
    assert first["worker"] >= first["extract"] > 0 and first["floor"] > 0
    assert again["digest"] == first["digest"]
    (root / "drivers/a05.c").write_text("int unsampled;\n")  # not in the sample
    assert _extract_cpu_run(root)["digest"] == first["digest"]
    (root / "drivers/a10.c").write_text("int f10(int y) { return g(y); }\n")  # a row changes
    assert _extract_cpu_run(root)["digest"] != first["digest"]
