"""`repomap search` speed: MCP search_code over stdio, in process, and the CLI end to end.

The queries are the questions of bench/relevance/questions.jsonl for the corpus (typed as people
type them), each asked in every mode. The index must hold embeddings for semantic and hybrid
(`repomap index ROOT --db DB --embed`; bench/relevance.py's databases under
$REPOMAP_BENCH_DIR/relevance/ are used when they have them). Through MCP the server is a real
`repomap mcp` over stdio, warm (the model loaded and the vectors decoded by two warm-up calls),
refresh off so that every call is the search alone; the query's embedding is included; measured
after the server has read the chunks' postings (search/bm25.py), and separately while it reads
them (the first seconds after start-up, or after the index changed). The
CLI figure is a whole `repomap search` process: start-up, model load and the vectors' decoding.

    python bench/code_search.py [--corpus python] [--db DB] [--cli-runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import common
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from repomap import store
from repomap.search.code import MODES, search_code

QUESTIONS = Path(__file__).parent / "relevance" / "questions.jsonl"


def questions(corpus: str) -> list[str]:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    return [row["question"] for row in rows if row["corpus"] == corpus]


def in_process(db_path: Path, asked: list[str], mode: str) -> list[float]:
    times = []
    with store.reading(db_path) as db:
        search_code(db, asked[0], mode=mode)  # the model and the vectors, loaded once
        for question in asked:
            started = time.perf_counter()
            search_code(db, question, mode=mode)
            times.append((time.perf_counter() - started) * 1000)
    return times


# A server reads the chunks' postings in a background thread after its first search (Django:
# ~1.5 s, search/bm25.py); SQLite answers meanwhile. The steady state is measured after this.
POSTINGS_SECONDS = 10.0  # ~1.5-2 s on a quiet host; several at load 8 on 2 cores


async def through_mcp(
    root: Path, db_path: Path, asked: list[str]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(steady state, the first calls while the postings are read): ms per call per mode."""
    from mcp.client.stdio import get_default_environment

    env = get_default_environment()
    if "PYTHONPATH" in os.environ:  # a before tree on PYTHONPATH serves too (the client's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]  # default environment drops it)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "repomap.cli", "mcp", "--root", str(root), "--db", str(db_path),
              "--no-refresh"],
        env=env,
    )  # fmt: skip
    out: dict[str, list[float]] = {mode: [] for mode in MODES}
    first: dict[str, list[float]] = {"hybrid": [], "lexical": []}

    async def ask(question: str, mode: str) -> float:
        started = time.perf_counter()
        result = await client.call_tool("search_code", {"query": question, "mode": mode})
        assert not result.is_error, result.content
        return (time.perf_counter() - started) * 1000

    async with Client(params) as client:
        for mode in ("semantic", "hybrid"):  # the model and the vectors, loaded
            for question in asked[:2]:
                await ask(question, mode)
        started = time.perf_counter()
        await ask(asked[0], "lexical")  # starts reading the postings
        for question in asked:  # while they are read
            for mode in first:
                first[mode].append(await ask(question, mode))
        await anyio.sleep(max(0.0, POSTINGS_SECONDS - (time.perf_counter() - started)))
        for mode in MODES:
            for question in asked[:2]:  # warm-up
                await ask(question, mode)
            for question in asked:
                out[mode].append(await ask(question, mode))
    return out, first


def cli(db_path: Path, asked: list[str], mode: str, runs: int) -> list[float]:
    times = []
    for question in asked[:runs]:
        started = time.perf_counter()
        done = subprocess.run(
            [*common.repomap_command(), "search", question, "--mode", mode, "--db", str(db_path),
             "--json"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
        assert done.returncode in (0, 1), done.stderr
    return times


def p50_p95(values: list[float]) -> str:
    return f"{common.median(values):.1f} / {common.percentile(values, 95):.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="python")
    parser.add_argument("--db", type=Path, help="an index with embeddings of the corpus")
    parser.add_argument("--cli-runs", type=int, default=10)
    args = parser.parse_args(argv)
    if args.corpus in common.CORPORA:
        root = common.materialize([args.corpus])[args.corpus]
    else:  # one of bench/relevance's own corpora (bench/relevance/fetch.sh)
        root = common.CORPORA_DIR / "relevance" / args.corpus
    base = Path(os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench"))
    db_path = args.db or base / "relevance" / f"{args.corpus}.db"
    asked = questions(args.corpus)
    # As an install does: with PYTHONDONTWRITEBYTECODE set (the shared host) and a stale
    # __pycache__, every CLI run compiled ~16 changed modules again (~50-100 ms of a ~600 ms
    # hybrid call that no installed copy pays).
    common.compile_bytecode()
    print(f"## repomap search on {args.corpus} ({len(asked)} questions, {db_path})\n")
    mcp, first = anyio.run(through_mcp, root, db_path, asked)
    rows = []
    for mode in MODES:
        local = in_process(db_path, asked, mode)
        whole = cli(db_path, asked, mode, args.cli_runs)
        rows.append([mode, p50_p95(mcp[mode]), p50_p95(local), p50_p95(whole)])
    print(
        common.markdown_table(
            ["mode", "MCP stdio p50 / p95 ms", "in process p50 / p95 ms", "CLI p50 / p95 ms"],
            rows,
            "lrrr",
        )
    )
    print(
        "\nMCP, the first calls after start-up, while the server reads the postings: "
        + ", ".join(f"{mode} {p50_p95(times)} ms" for mode, times in first.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
