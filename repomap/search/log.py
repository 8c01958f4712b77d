"""A local log of searches and MCP tool calls beside the index, and its summary.

`log_event(kind, index=DB_PATH, **fields)` appends one JSON line
`{"time": ..., "kind": kind, **fields}` to `<index folder>/<index stem>-search-log.jsonl`
(`.repomap/index-search-log.jsonl` for the default index; named after the index so two
indexes in one folder keep separate logs). It never raises and never waits: a log that cannot
be written is skipped. It is off when REPOMAP_SEARCH_LOG is 0, false, off or no (and when a
caller passes log=False to search_text, as the CLI does for Settings.search_log). A log past
MAX_BYTES is renamed to `…-search-log.1.jsonl` (replacing the older one) and a new one started.

Four kinds of event are logged: `search_text` (every text search, CLI or MCP: query, mode,
filters, results, ms, error), `search_code` (every `repomap search` / `search_code` answered
in process: query, mode, filters, results, word_matches, ms, error), `tool` (every MCP tool call: tool, arguments, result_count, ms,
error; the MCP server) and `command` (every CLI command that runs: command, args, results,
exit, ms, error; repomap/cli/outcome.py). One line, one write() each.

`summarize(index) -> LogSummary` reads both files for `repomap stats`: searches, errors, the
most frequent queries, the queries that found nothing, the average result count and latency
percentiles. `summarize_usage(index) -> list[Usage]` counts the CLI commands and MCP tools:
calls, errors, answers that found nothing, average result count, latency.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

MAX_BYTES = 16 * 1024 * 1024
MAX_FIELD = 1000  # characters kept of any string field (queries can be 4096 long)
OFF_VALUES = ("0", "false", "off", "no")

log = logging.getLogger(__name__)


def enabled() -> bool:
    return os.environ.get("REPOMAP_SEARCH_LOG", "1").strip().lower() not in OFF_VALUES


def log_path(index: Path) -> Path:
    """Where the log of the index at `index` lives."""
    return index.with_name(f"{index.stem}-search-log.jsonl")


def log_event(kind: str, *, index: Path | str | None, **fields: object) -> None:
    """Append one event to the log beside `index`; never raises, never blocks a search."""
    if index is None or not enabled() or not Path(index).exists():
        return  # beside no index (a mistyped --db), a log would be a stray file
    record: dict[str, object] = {
        "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "kind": kind,
    }
    record.update({k: v[:MAX_FIELD] if isinstance(v, str) else v for k, v in fields.items()})
    try:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        path = log_path(Path(index))
        # O_APPEND: concurrent writers each add whole lines (one write() per line).
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line.encode("utf-8", "replace"))
            size = os.fstat(descriptor).st_size
        finally:
            os.close(descriptor)
        if size > MAX_BYTES:
            os.replace(path, path.with_name(path.stem + ".1.jsonl"))
    except OSError:
        return  # a log must never fail a search: a read-only folder or a full disk skips it
    except (ValueError, TypeError):  # a field json cannot write (a caller's bug): said, not fatal
        log.warning("the search log could not record a %r event", kind, exc_info=True)


# --- summary -----------------------------------------------------------------------------------


class LogSummary(NamedTuple):
    log_files: list[str]
    searches: int = 0
    errors: int = 0
    by_mode: dict[str, int] = {}
    top_queries: list[tuple[str, int]] = []
    zero_result_queries: list[tuple[str, int]] = []
    average_results: float = 0.0
    latency_ms: dict[str, float] = {}  # p50, p95, p99, max
    first: str | None = None
    last: str | None = None

    def as_dict(self) -> dict:
        data = self._asdict()
        data["top_queries"] = [{"query": q, "count": n} for q, n in self.top_queries]
        data["zero_result_queries"] = [
            {"query": q, "count": n} for q, n in self.zero_result_queries
        ]
        return data


def read_events(
    index: Path, kind: str | tuple[str, ...] = "search_text"
) -> tuple[list[dict], list[str]]:
    """Every well-formed event of `kind` (or kinds), oldest first, and the files read; bad
    lines skipped."""
    kinds = (kind,) if isinstance(kind, str) else kind
    current = log_path(index)
    files = [
        path for path in (current.with_name(current.stem + ".1.jsonl"), current) if path.exists()
    ]
    events = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash or a full disk
                if isinstance(event, dict) and event.get("kind") in kinds:
                    events.append(event)
    return events, [str(path) for path in files]


SEARCH_KINDS = ("search_text", "search_code")  # the events `repomap stats` counts as searches


def summarize(index: Path, top: int = 10) -> LogSummary:
    """What `repomap stats` prints: text searches and code searches together (their modes
    tell them apart: fts and literal, lexical, semantic and hybrid)."""
    events, files = read_events(index, SEARCH_KINDS)
    if not events:
        return LogSummary(files)
    failed = [event for event in events if event.get("error")]
    ok = [event for event in events if not event.get("error")]
    queries = Counter(_key(event) for event in ok)
    empty = Counter(_key(event) for event in ok if not event.get("results"))
    latencies = sorted(float(event.get("ms") or 0.0) for event in events)
    results = [int(event.get("results") or 0) for event in ok]
    return LogSummary(
        log_files=files,
        searches=len(events),
        errors=len(failed),
        # a search refused before its mode was chosen (a bad --kind) is an error, not a mode
        by_mode=dict(Counter(str(event["mode"]) for event in events if event.get("mode"))),
        top_queries=queries.most_common(top),
        zero_result_queries=empty.most_common(top),
        average_results=round(sum(results) / len(results), 2) if results else 0.0,
        latency_ms={
            name: _percentile(latencies, q)
            for name, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))
        },  # fmt: skip
        first=events[0].get("time"),
        last=events[-1].get("time"),
    )


class Usage(NamedTuple):
    """The logged calls of one CLI command (`kind` command) or one MCP tool (`kind` tool)."""

    kind: str  # command | tool
    name: str
    calls: int
    errors: int
    empty: int  # answers that found nothing (a command's exit 1; a tool's empty list)
    average_results: float  # over the calls that succeeded and counted their results
    latency_ms: dict[str, float]  # p50, p95, max


def summarize_usage(index: Path) -> list[Usage]:
    """Per CLI command, then per MCP tool: calls, errors, empty answers, average result count
    and latency; most called first within each kind."""
    events, _ = read_events(index, kind=("command", "tool"))
    by_name: dict[tuple[str, str], list[dict]] = {}
    for event in events:
        kind = str(event["kind"])
        name = str(event.get("command" if kind == "command" else "tool"))
        by_name.setdefault((kind, name), []).append(event)
    usage = [_usage(kind, name, calls) for (kind, name), calls in by_name.items()]
    return sorted(usage, key=lambda u: (u.kind != "command", -u.calls, u.name))


def _usage(kind: str, name: str, calls: list[dict]) -> Usage:
    key = "results" if kind == "command" else "result_count"
    counts = [e[key] for e in calls if isinstance(e.get(key), int) and not e.get("error")]
    if kind == "command":
        empty = sum(1 for e in calls if e.get("exit") == 1)
    else:
        empty = sum(1 for e in calls if e.get(key) == 0 and not e.get("error"))
    latencies = sorted(float(e.get("ms") or 0.0) for e in calls)
    return Usage(
        kind,
        name,
        len(calls),
        sum(1 for e in calls if e.get("error")),
        empty,
        round(sum(counts) / len(counts), 2) if counts else 0.0,
        {
            label: _percentile(latencies, q)
            for label, q in (("p50", 0.5), ("p95", 0.95), ("max", 1.0))
        },
    )


def _key(event: dict) -> str:
    query = str(event.get("query", ""))
    if event.get("kind") == "search_code":
        return f"{query}  (search)"
    return f"{query}  (literal)" if event.get("mode") == "literal" else query


def _percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-int(q * 1000) * len(sorted_values) // 1000))
    return round(sorted_values[min(rank, len(sorted_values)) - 1], 3)
