"""Searching records: data files' records (`search_data`) and commits (`search_commits`).

The Search Executor's semantics, by default: a literal, case-sensitive substring on Unicode
code points (UTF-8 text compared by SQLite's instr(), which is the same thing); the query
trimmed, 1 to 4096 code points; `limit` 1 to 1000. Each result has `id` (unique within its
source: `path#key` for a record, the commit's hash), `match_field` (the first field that
matches, in the record's order) and `match_snippet` (that field's first match with up to 100
code points each side, line breaks kept, at most SNIPPET_CHARS in all). Data records come
sorted by key: file path, then their order in the file (a row's number, a leaf's place);
commits by commit time, newest first (oldest first on request), ties by hash. The answer
holds nothing that changes between two identical calls (no timings), so the same call over
the same index gives the same bytes.

`ranked=True` ranks by BM25 instead (data_fts, commits_fts: words in the same query language
as search_text, querylang.py), ties by the same keys.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone
from typing import Any, NamedTuple

from repomap import paths
from repomap.errors import BadArgument
from repomap.limits import check_limit
from repomap.search import querylang
from repomap.store import Store, get_meta

SNIPPET_CHARS = 200
SNIPPET_CONTEXT = 100
MAX_PATHS_SHOWN = 100  # a commit's changed paths listed in a result
KEYED_FORMATS = ("json", "toml", "yaml")  # their keys are paths, searched like values
COMMIT_FIELDS = ("subject", "body", "author", "paths")  # match_field order


class DataHit(NamedTuple):
    id: str
    file_path: str
    format: str
    key: str
    line: int | None
    fields: dict[str, str]
    match_field: str
    match_snippet: str
    score: float | None  # BM25 (higher is better) in ranked mode, else None


class CommitHit(NamedTuple):
    id: str  # the commit's hash
    parents: list[str]
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    author_time: str
    commit_time: str
    subject: str
    body: str
    paths: list[str]
    paths_total: int
    match_field: str
    match_snippet: str
    score: float | None


class RecordSearch(NamedTuple):
    query: str
    mode: str  # literal | ranked
    results: list[Any]  # DataHit or CommitHit
    truncated: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "results": [hit._asdict() for hit in self.results],
            "count": len(self.results),
            "truncated": self.truncated,
            "query": self.query,
            "mode": self.mode,
        }


def clean_query(query: str) -> str:
    """The query trimmed and checked: 1 to 4096 code points, no NUL, no lone surrogate."""
    if not isinstance(query, str):
        raise BadArgument("the query must be text")
    trimmed = query.strip()
    querylang.check_literal(trimmed if trimmed else query)
    return trimmed


def snippet(text: str, start: int, end: int) -> str:
    """The match text[start:end] with up to SNIPPET_CONTEXT code points each side, line breaks
    kept, at most SNIPPET_CHARS in all (a long match is cut first, then the context shrinks)."""
    end = min(end, start + SNIPPET_CHARS)
    room = SNIPPET_CHARS - (end - start)
    before = min(SNIPPET_CONTEXT, start, room // 2)
    after = min(SNIPPET_CONTEXT, room - before)
    return text[start - before : end + after]


class _Matcher:
    """Where a query first matches a text: literally, or (ranked) the first of its words."""

    def __init__(self, query: str, ranked: bool) -> None:
        self.query = query
        self.pattern: re.Pattern[str] | None = None
        if ranked:
            terms = querylang.query_terms(querylang.parse(query))
            words = sorted({word for word, _ in terms}, key=lambda w: (-len(w), w))
            if words:
                alternatives = "|".join(re.escape(word) for word in words)
                self.pattern = re.compile(rf"(?<![^\W_])(?:{alternatives})", re.IGNORECASE)

    def find(self, text: str) -> tuple[int, int] | None:
        if self.pattern is None:
            at = text.find(self.query)
            return None if at < 0 else (at, at + len(self.query))
        found = self.pattern.search(text)
        return None if found is None else found.span()


def _first_match(matcher: _Matcher, fields: list[tuple[str, str]]) -> tuple[str, str]:
    for name, text in fields:
        span = matcher.find(text)
        if span is not None:
            return name, snippet(text, *span)
    name, text = fields[0]  # ranked: the words matched after folding the matcher does not do
    return name, text[:SNIPPET_CHARS]


def _match(ranked: bool, query: str) -> str | None:
    """The FTS5 MATCH expression of a ranked query (None: it has no words to look up)."""
    return querylang.to_match(querylang.parse(query)) if ranked else None


# --- data --------------------------------------------------------------------------------------

DATA_LITERAL_SQL = """SELECT v.file_id, v.record, NULL FROM data_values v
    JOIN data_files f ON f.id = v.file_id
    WHERE {match} {filters}
    GROUP BY v.file_id, v.record ORDER BY f.path, v.record LIMIT :probe"""
DATA_RANKED_SQL = """SELECT v.file_id, v.record, min(d.rank) AS score FROM data_fts d
    JOIN data_values v ON v.id = d.rowid JOIN data_files f ON f.id = v.file_id
    WHERE data_fts MATCH :match {filters}
    GROUP BY v.file_id, v.record ORDER BY score, f.path, v.record LIMIT :probe"""
RECORD_SQL = """SELECT f.path, f.format, v.key, v.field, v.value, v.line FROM data_values v
    JOIN data_files f ON f.id = v.file_id WHERE v.file_id = ? AND v.record = ? ORDER BY v.id"""
KEYED = "f.format IN ('json', 'toml', 'yaml')"


def search_data(
    db: Store,
    query: str,
    *,
    path: str | None = None,
    key: str | None = None,
    field: str | None = None,
    limit: int = 20,
    ranked: bool = False,
) -> RecordSearch:
    """Data records matching `query`; `path` a path filter (paths.py), `key` a glob over the
    record's key (`tool.ruff.*`, `jobs.*.steps[2].run`: `*` any text, `?` one character,
    brackets literal), `field` one field (`key`, `value`, or a column's name)."""
    query = clean_query(query)
    check_limit(limit)
    mode = "ranked" if ranked else "literal"
    params: dict[str, Any] = {"q": query, "probe": limit + 1}
    filters = []
    if path is not None:
        path_filter = paths.parse(path, root=get_meta(db, "root"))
        if path_filter is not None:
            rows = db.conn.execute("SELECT id, path FROM data_files").fetchall()
            ids = {rel: file_id for file_id, rel in rows}
            params["ids"] = json.dumps(sorted(ids[p] for p in path_filter.select(ids)))
            filters.append("v.file_id IN (SELECT value FROM json_each(:ids))")
    if key is not None:  # `*` and `?` are wildcards; `[` is literal: keys hold `[0]`
        params["key"] = key.replace("[", "[[]")
        filters.append("v.key GLOB :key")
    if field is not None and field != "key":
        params["field"] = field
        filters.append("v.field = :field")
    where = "".join(f" AND {item}" for item in filters)
    if ranked:
        match = _match(ranked, query)
        if match is None:
            return RecordSearch(query, mode, [], False)
        params["match"] = "{key} : " + match if field == "key" else match
        if field == "key":
            where += f" AND {KEYED}"
        sql = DATA_RANKED_SQL.format(filters=where)
    else:
        if field == "key":
            condition = f"{KEYED} AND instr(v.key, :q) > 0"
        elif field is not None:
            condition = "instr(v.value, :q) > 0"
        else:
            condition = f"(instr(v.value, :q) > 0 OR ({KEYED} AND instr(v.key, :q) > 0))"
        sql = DATA_LITERAL_SQL.format(match=condition, filters=where)
    found = db.conn.execute(sql, params).fetchall()
    matcher = _Matcher(query, ranked)
    hits = [_data_hit(db, matcher, file_id, record, score, field)
            for file_id, record, score in found[:limit]]  # fmt: skip
    return RecordSearch(query, mode, hits, len(found) > limit)


def _data_hit(
    db: Store, matcher: _Matcher, file_id: int, record: int, score: float | None, field: str | None
) -> DataHit:
    rows = db.conn.execute(RECORD_SQL, (file_id, record)).fetchall()
    file_path, fmt, key, _, _, line = rows[0]
    fields = {name: value for _, _, _, name, value, _ in rows}
    searched: list[tuple[str, str]] = []
    if fmt in KEYED_FORMATS and field in (None, "key"):
        searched.append(("key", key))
    if field != "key":
        searched.extend((name, value) for name, value in fields.items() if field in (None, name))
    match_field, match_snippet = _first_match(matcher, searched)
    return DataHit(
        f"{file_path}#{key}",
        file_path,
        fmt,
        key,
        line,
        fields,
        match_field,
        match_snippet,
        None if score is None else round(-score, 6),
    )


# --- commits -----------------------------------------------------------------------------------

AUTHOR_SQL = "(c.author_name || ' <' || c.author_email || '>')"
COMMIT_COLUMNS = """c.hash, c.parents, c.author_name, c.author_email, c.committer_name,
    c.committer_email, c.author_time, c.commit_time, c.subject, c.body, c.paths"""
COMMITS_LITERAL_SQL = """SELECT {columns}, NULL FROM commits c WHERE {match} {filters}
    ORDER BY c.commit_time {order}, c.hash LIMIT :probe"""
COMMITS_RANKED_SQL = """SELECT {columns}, f.rank FROM commits_fts f JOIN commits c ON c.id = f.rowid
    WHERE commits_fts MATCH :match {filters}
    ORDER BY f.rank, c.commit_time {order}, c.hash LIMIT :probe"""
LITERAL_CANDIDATES_SQL = "SELECT rowid FROM commits_literal WHERE commits_literal MATCH ? LIMIT ?"
CANDIDATE_CAP = 2000  # more candidates: the text is common, and a scan in time order stops early
MAX_TRIGRAMS = 16
COMMIT_FIELD_SQL = {
    "subject": "c.subject",
    "body": "c.body",
    "author": AUTHOR_SQL,
    "paths": "c.paths",
}


def parse_time(text: str, *, end_of_day: bool = False) -> str:
    """A --since/--until value (a date, or a date and time; UTC unless it says otherwise) as
    the ISO 8601 text commit times are stored in; a date alone for --until means its end."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            if end_of_day:
                moment += timedelta(days=1) - timedelta(milliseconds=1)
        else:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
    except ValueError:
        raise BadArgument(
            f"{text!r} is not a date: give YYYY-MM-DD or an ISO 8601 time (2024-05-01T12:00Z)"
        ) from None
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def search_commits(
    db: Store,
    query: str,
    *,
    author: str | None = None,
    since: str | None = None,
    until: str | None = None,
    path: str | None = None,
    field: str | None = None,
    limit: int = 20,
    oldest_first: bool = False,
    ranked: bool = False,
) -> RecordSearch:
    """Commits of HEAD's history matching `query` in their subject, body, author or changed
    paths (`field`: only that one); `author` a substring of `name <email>` (ASCII case folded),
    `since`/`until` bounds on the commit time, `path` the path filter over changed paths."""
    query = clean_query(query)
    check_limit(limit)
    if field is not None and field not in COMMIT_FIELDS:
        raise BadArgument(f"field must be one of {', '.join(COMMIT_FIELDS)}, not {field!r}")
    mode = "ranked" if ranked else "literal"
    params: dict[str, Any] = {"q": query, "probe": limit + 1}
    filters = []
    if author is not None:
        params["author"] = author.strip().lower()
        filters.append(f"instr(lower({AUTHOR_SQL}), :author) > 0")
    if since is not None:
        params["since"] = parse_time(since)
        filters.append("c.commit_time >= :since")
    if until is not None:
        params["until"] = parse_time(until, end_of_day=True)
        filters.append("c.commit_time <= :until")
    if path is not None:
        path_filter = paths.parse(path, root=get_meta(db, "root"))
        if path_filter is not None:
            known = [row[0] for row in db.conn.execute("SELECT DISTINCT path FROM commit_paths")]
            params["paths"] = json.dumps(path_filter.select(known))
            filters.append(
                "c.id IN (SELECT commit_id FROM commit_paths WHERE path IN "
                "(SELECT value FROM json_each(:paths)))"
            )
    where = "".join(f" AND {item}" for item in filters)
    order = "ASC" if oldest_first else "DESC"
    if ranked:
        match = _match(ranked, query)
        if match is None:
            return RecordSearch(query, mode, [], False)
        params["match"] = f"{{{field}}} : {match}" if field else match
        sql = COMMITS_RANKED_SQL.format(columns=COMMIT_COLUMNS, filters=where, order=order)
    else:
        fields = [field] if field else list(COMMIT_FIELDS)
        condition = " OR ".join(f"instr({COMMIT_FIELD_SQL[name]}, :q) > 0" for name in fields)
        candidates = _literal_candidates(db, query)
        if candidates is not None:
            params["candidates"] = json.dumps(candidates)
            where += " AND c.id IN (SELECT value FROM json_each(:candidates))"
        sql = COMMITS_LITERAL_SQL.format(
            columns=COMMIT_COLUMNS, match=f"({condition})", filters=where, order=order
        )
    found = db.conn.execute(sql, params).fetchall()
    matcher = _Matcher(query, ranked)
    hits = [_commit_hit(row, matcher, field) for row in found[:limit]]
    return RecordSearch(query, mode, hits, len(found) > limit)


def _literal_candidates(db: Store, query: str) -> list[int] | None:
    """The commits whose text holds every trigram of `query` (a superset of the matches), or
    None when a scan is better: a query under 3 code points, or one too common to list."""
    if len(query) < 3:
        return None
    grams = list(dict.fromkeys(query[i : i + 3] for i in range(len(query) - 2)))
    if len(grams) > MAX_TRIGRAMS:  # evenly spread: the first and last always among them
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    match = " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)
    rows = db.conn.execute(LITERAL_CANDIDATES_SQL, (match, CANDIDATE_CAP + 1)).fetchall()
    return None if len(rows) > CANDIDATE_CAP else [row[0] for row in rows]


def _commit_hit(row: tuple[Any, ...], matcher: _Matcher, field: str | None) -> CommitHit:
    (hash_, parents, author_name, author_email, committer_name, committer_email, author_time,
     commit_time, subject, body, changed, score) = row  # fmt: skip
    texts = {
        "subject": subject,
        "body": body,
        "author": f"{author_name} <{author_email}>",
        "paths": changed,
    }
    searched = [(name, texts[name]) for name in ([field] if field else COMMIT_FIELDS)]
    match_field, match_snippet = _first_match(matcher, searched)
    path_list = changed.split("\n") if changed else []
    return commit_hit(
        row[:11], path_list, match_field, match_snippet, None if score is None else -score
    )


def commit_hit(
    row: tuple[Any, ...],
    path_list: list[str],
    match_field: str,
    match_snippet: str,
    score: float | None = None,
) -> CommitHit:
    """A CommitHit from COMMIT_COLUMNS' values (hash first, paths last)."""
    (hash_, parents, author_name, author_email, committer_name, committer_email, author_time,
     commit_time, subject, body, _) = row  # fmt: skip
    return CommitHit(
        hash_,
        parents.split(),
        author_name,
        author_email,
        committer_name,
        committer_email,
        author_time,
        commit_time,
        subject,
        body,
        path_list[:MAX_PATHS_SHOWN],
        len(path_list),
        match_field,
        match_snippet,
        None if score is None else round(score, 6),
    )
