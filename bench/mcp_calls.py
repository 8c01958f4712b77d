"""MCP tool-call latency: warm calls through the SDK's client over stdio, beside in-process and rg.

    python bench/mcp_calls.py                       # all three corpora, 100 queries per tool
    python bench/mcp_calls.py --corpus rust --queries 50
    python bench/mcp_calls.py --fresh               # rebuild the indexes first

(Named mcp_calls.py, not mcp.py: bench/ is first on sys.path when a script in it runs, and a
bench/mcp.py would hide the `mcp` SDK package.)

Per corpus, an index of the corpus tree lives in ~/.cache/repomap-bench/mcp/<corpus>.db (or
$REPOMAP_BENCH_DIR); `repomap index` brings it up to date first (a no-op when nothing changed).
Then `repomap mcp --root CORPUS --db THAT.db` is started as a subprocess and driven by the SDK's
client (`mcp.client.Client` over stdio), with the server's refresh on, as an agent runs it; its
first call (watcher set-up and the catch-up index run) is left out, as are two warm-up calls per
tool. Each figure below is the wall time of one `call_tool`, measured in the client: JSON-RPC over
the pipes, argument validation, the refresh check, the query on a read-only connection opened
for the call, serialization, and the client's check of the result against the output schema.

- search_text: queries sampled with a fixed seed from the indexed text (random elements, then
  one word, two words ANDed, a quoted two-word phrase, a 3+ character prefix*, or a 4-30
  character literal), plus the index's most frequent words; limit 20.
- search_symbols: names of random symbols, half of them cut to a prefix; limit 20.
- get_repo_map: 1024 tokens, alternately unpersonalized and with one mention.

Each query is run three ways back to back, so the machine's load hits them alike: "in-process"
is the library function the tool wraps (`query.search_text`, `symbols.search_symbols`,
`maps.repo_map`) in this process, on a snapshot of one kept read-only connection as the
server's tools read (`store.KeptReader`, so search_symbols uses its table prepared per index
state, made by the warm-up calls); "MCP" is
the tool call; "rg" is ripgrep over the same corpus tree for the same search_text query
(`rg -n -i -w WORD`, `-F` for literals, a regex for two words or a prefix), its output read
through a pipe (ripgrep stops at the first match when stdout is /dev/null). Every MCP answer
is checked against the library's. "CPU per call" is CPU time (user + system), averaged over
the calls: of the library call in this process, and of the client and the server processes for
the MCP call (the kernel counts process CPU in 10 ms ticks, so only averages are meaningful).
CPU is what a call costs; other processes' load disturbs it much less than wall time.
"rg ÷ MCP" is rg's median over the MCP median. Targets: search_text p95 <= 25 ms through the
client, and at least 4x faster than rg on every corpus (issue 6); search_symbols p95 <= 15 ms
through the client (issue 16).
The machine is shared: the header gives its load; read medians first.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import common
import psutil
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from repomap import config, store
from repomap.index import pipeline as indexer
from repomap.maps import repo_map as maps
from repomap.search import symbols
from repomap.search import text as query

SEED = 20261121
FREQUENT = 10
TEXT_TARGET_P95_MS = 25.0
SYMBOLS_TARGET_P95_MS = 15.0
RG_RATIO_TARGET = 4.0
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
DISAGREEMENTS: list[str] = []  # calls whose answer differed from the library's


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(common.CORPORA))
    parser.add_argument("--queries", type=int, default=100, help="calls per tool and corpus")
    parser.add_argument("--fresh", action="store_true", help="rebuild the indexes")
    args = parser.parse_args(argv)
    roots = common.materialize(args.corpus or list(common.CORPORA))
    rows = []
    for name, root in roots.items():
        db_path = prepare(name, root, args.fresh)
        rows.extend(bench_corpus(name, root, db_path, args.queries))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"## MCP tool calls over stdio, warm ({args.queries} calls per tool and corpus; "
          f"{os.cpu_count()} cores, load average {load} at the end)\n")  # fmt: skip
    print(
        common.markdown_table(
            [
                "corpus",
                "tool",
                "in-process p50 / p95",
                "MCP stdio p50 / p95",
                "CPU per call: in-process; MCP client + server",
                "rg p50 / p95",
                "rg ÷ MCP (medians)",
                "target (MCP)",
            ],  # fmt: skip
            rows,
            "llrrrrrl",
        )
    )
    if DISAGREEMENTS:
        print(f"\nwarning: {len(DISAGREEMENTS)} answers differed from the library's "
              f"(was the code edited during the run?): {', '.join(DISAGREEMENTS[:5])}")  # fmt: skip
    else:
        print("\nEvery MCP answer matched the library's.")
    return 0


def prepare(name: str, root: Path, fresh: bool) -> Path:
    base = Path(os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench"))
    db_path = base / "mcp" / f"{name}.db"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    if fresh:
        common.remove_database(db_path)
    started = time.perf_counter()
    summary = indexer.run(config.resolve(root, db_path))
    print(
        f"{name}: index {summary.files} files, {summary.added + summary.modified} (re)indexed "
        f"in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return db_path


# --- queries ---------------------------------------------------------------------------------


def sample(db_path: Path, count: int) -> dict[str, list]:
    """{"text": [(query, mode)], "symbols": [name], "maps": [mentions]}, fixed by the seed."""
    rng = random.Random(SEED)
    with store.reading(db_path) as db:
        conn = db.conn
        text_ids = [row[0] for row in conn.execute("SELECT id FROM code_text ORDER BY id")]
        names = [row[0] for row in conn.execute("SELECT name FROM symbols ORDER BY id")]
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, code_text_fts, row)"
        )
        frequent = [
            row[0]
            for row in conn.execute(
                "SELECT term FROM temp.vocab WHERE length(term) >= 3 ORDER BY doc DESC, term "
                "LIMIT ?",
                (FREQUENT,),
            )
        ]

        def content() -> str:
            while True:
                row = conn.execute(
                    "SELECT content FROM code_text WHERE id = ?", (rng.choice(text_ids),)
                ).fetchone()
                if len(WORD.findall(row[0])) >= 2:
                    return row[0]

        text: list[tuple[str, str]] = [(word, "fts") for word in frequent]
        makers = [_single, _two_words, _phrase, _prefix, _literal]
        while len(text) < count:
            text.append(makers[len(text) % len(makers)](rng, content()))
        chosen = [rng.choice(names) for _ in range(count)]
        symbol_queries = [n if i % 2 else n[: max(3, len(n) // 2)] for i, n in enumerate(chosen)]
        mentions = [[] if i % 2 else [rng.choice(names)] for i in range(count)]
    return {"text": text[:count], "symbols": symbol_queries, "maps": mentions}


def _single(rng: random.Random, content: str) -> tuple[str, str]:
    return rng.choice(WORD.findall(content)), "fts"


def _two_words(rng: random.Random, content: str) -> tuple[str, str]:
    return " ".join(rng.sample(WORD.findall(content), 2)), "fts"


def _phrase(rng: random.Random, content: str) -> tuple[str, str]:
    words = content.split()
    start = rng.randrange(max(1, len(words) - 1))
    pair = [
        w for w in (WORD.fullmatch(w.strip(".,:;()'\"")) for w in words[start : start + 2]) if w
    ]
    if len(pair) < 2:
        return _single(rng, content)
    return f'"{pair[0].group()} {pair[1].group()}"', "fts"


def _prefix(rng: random.Random, content: str) -> tuple[str, str]:
    word = rng.choice(WORD.findall(content))
    cut = word[: rng.randint(3, len(word) - 1)]
    # The query language splits identifiers at `_`: `shrink_t*` ends in a 1-letter prefix,
    # which it refuses (it would match nearly everything); cut before such a part instead.
    head, _, tail = cut.rpartition("_")
    if head and len(tail) < 2:
        cut = head
    return cut + "*", "fts"


def _literal(rng: random.Random, content: str) -> tuple[str, str]:
    line = max(content.split("\n"), key=len)
    size = min(len(line), rng.randint(4, 30))
    start = rng.randrange(len(line) - size + 1)
    text = line[start : start + size]
    return (text, "literal") if text.strip() else _single(rng, content)


def rg_arguments(text: str, mode: str) -> list[str]:
    """ripgrep's closest equivalent of a search_text query."""
    if mode == "literal":
        return ["-n", "-F", "--", text]
    if text.startswith('"'):
        return ["-n", "-i", "-F", "--", text.strip('"')]
    if text.endswith("*"):
        return ["-n", "-i", "--", rf"\b{re.escape(text[:-1])}\w*"]
    words = text.split()
    if len(words) == 2:
        a, b = (re.escape(w) for w in words)
        return ["-n", "-i", "--", rf"\b{a}\b.*\b{b}\b|\b{b}\b.*\b{a}\b"]
    return ["-n", "-i", "-w", "--", text]


# --- measuring -------------------------------------------------------------------------------


def library_calls(queries: dict[str, list]) -> dict[str, list]:
    """Per tool, the library call the tool wraps, for each query: db -> first results."""
    return {
        "search_text": [
            lambda db, q=q, m=m: [
                (h.file_path, h.line_number)
                for h in query.search_text(db, q, mode=m, log=False).hits
            ]
            for q, m in queries["text"]
        ],
        "search_symbols": [
            lambda db, q=q: [  # the tool asks for one more than its limit, to tell if more exist
                (h.file_path, h.line_number) for h in symbols.search_symbols(db, q, limit=21)[:20]
            ]
            for q in queries["symbols"]
        ],
        "get_repo_map": [
            lambda db, m=m: [f.file_path for f in maps.repo_map(db, 1024, (), tuple(m)).files]
            for m in queries["maps"]
        ],
    }


def tool_arguments(queries: dict[str, list]) -> dict[str, list[dict]]:
    return {
        "search_text": [{"query": q, "mode": m} for q, m in queries["text"]],
        "search_symbols": [{"query": q} for q in queries["symbols"]],
        "get_repo_map": [{"max_tokens": 1024, "mentions": m or None} for m in queries["maps"]],
    }


@dataclass
class Timings:
    library: list[float] = field(default_factory=list)  # ms per call, in this process
    mcp: list[float] = field(default_factory=list)  # ms per call, through the client
    library_cpu: list[float] = field(default_factory=list)  # ms of CPU, in this process
    client_cpu: list[float] = field(default_factory=list)  # ms of CPU of the client, per call
    server_cpu: list[float] = field(default_factory=list)  # ms of CPU of the server, per call
    rg: list[float] = field(default_factory=list)  # ms per rg run (search_text only)


async def measure(root: Path, db_path: Path, queries: dict[str, list]) -> dict[str, Timings]:
    """Each query three ways, back to back, so the machine's load hits them alike."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "repomap.cli", "mcp", "--root", str(root), "--db", str(db_path)],
    )
    calls, arguments = library_calls(queries), tool_arguments(queries)
    rg = shutil.which("rg")
    me = psutil.Process()
    kept = store.KeptReader(db_path)
    out = {tool: Timings() for tool in calls}
    async with Client(params) as client:
        server = me.children()[0]
        await _settled(client)
        for tool, makers in calls.items():
            for make, args in list(zip(makers, arguments[tool], strict=True))[:2]:  # warm-up
                _library(kept, make)
                await client.call_tool(tool, args)
            for index, (make, args) in enumerate(zip(makers, arguments[tool], strict=True)):
                cpu = time.process_time()
                ms, expected = _library(kept, make)
                out[tool].library_cpu.append((time.process_time() - cpu) * 1000)
                out[tool].library.append(ms)
                client_cpu, server_cpu = _cpu(me), _cpu(server)
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                out[tool].mcp.append((time.perf_counter() - started) * 1000)
                out[tool].client_cpu.append((_cpu(me) - client_cpu) * 1000)
                out[tool].server_cpu.append((_cpu(server) - server_cpu) * 1000)
                _check(tool, args, result, expected)
                if tool == "search_text" and rg:
                    out[tool].rg.append(_ripgrep(rg, root, *queries["text"][index]))
    kept.close()
    return out


async def _settled(client: Client) -> None:
    """The first call starts the watcher and a catch-up index run: wait for both."""
    while True:
        status = (await client.call_tool("index_status", {})).structured_content
        if not status["roots"][0]["refresh"]["running"]:
            return
        await anyio.sleep(0.2)


def _library(kept: store.KeptReader, make) -> tuple[float, list]:
    started = time.perf_counter()
    with kept.snapshot() as db:  # a snapshot of a kept connection, as the tools read
        result = make(db)
    return (time.perf_counter() - started) * 1000, result


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _ripgrep(rg: str, root: Path, text: str, mode: str) -> float:
    started = time.perf_counter()
    subprocess.run([rg, "--no-config", *rg_arguments(text, mode), str(root)],
                   capture_output=True, check=False)  # fmt: skip
    return (time.perf_counter() - started) * 1000


def _check(tool: str, args: dict, result, expected: list) -> None:
    """The server answers what the library answers; a difference is reported, not fatal: the
    server imports the working tree when it starts, so code edited since this script started
    (a shared checkout) can differ."""
    if result.is_error:
        raise SystemExit(f"{tool}({args}) failed: {result.content[0].text}")
    data = result.structured_content
    if tool == "get_repo_map":
        served = data["files"]
    else:
        served = [(r["file_path"], r["line_number"]) for r in data["results"]]
    if served != expected:
        DISAGREEMENTS.append(f"{tool}({args})")


def bench_corpus(name: str, root: Path, db_path: Path, count: int) -> list[list[str]]:
    timings = anyio.run(measure, root, db_path, sample(db_path, count))
    rows = []
    for tool, t in timings.items():
        row = [common.CORPORA[name], tool, _p50_p95(t.library), _p50_p95(t.mcp),
               f"{_mean(t.library_cpu):.1f}; {_mean(t.client_cpu):.1f} + "
               f"{_mean(t.server_cpu):.1f} ms"]  # fmt: skip
        p95 = common.percentile(t.mcp, 95)
        if t.rg:
            ratio = common.median(t.rg) / common.median(t.mcp)
            met = p95 <= TEXT_TARGET_P95_MS and ratio >= RG_RATIO_TARGET
            row += [_p50_p95(t.rg), f"{ratio:.1f}×",
                    f"p95 ≤ {TEXT_TARGET_P95_MS:g} ms and ≥ {RG_RATIO_TARGET:g}× rg: "
                    + ("met" if met else "MISSED")]  # fmt: skip
        elif tool == "search_symbols":
            met = p95 <= SYMBOLS_TARGET_P95_MS
            row += ["", "", f"p95 ≤ {SYMBOLS_TARGET_P95_MS:g} ms: " + ("met" if met else "MISSED")]
        else:
            row += ["", "", ""]
        rows.append(row)
    return rows


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _p50_p95(values: list[float]) -> str:
    return f"{common.median(values):.1f} / {common.percentile(values, 95):.1f} ms"


if __name__ == "__main__":
    sys.exit(main())
