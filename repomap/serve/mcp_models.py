"""The MCP tools' results: pydantic models whose fields are the tools' output schemas.

Every answer carries `notices` (what the server did first, or what to know about the answer),
and every list that a limit can cut says so (`truncated`, and how many more). Paths are as the
tools return them (relative to the root; with several roots, prefixed by the root's label).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from repomap.gateway.files import OutlineEntry, SourceEntry

# Nullable fields as `"type": [T, "null"]` rather than pydantic's anyOf: the same contract, and
# a client that checks each result against the output schema (the Python SDK's does, with
# jsonschema) spends a third less time on it.
OptionalStr = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
OptionalInt = Annotated[int | None, WithJsonSchema({"type": ["integer", "null"]})]


class Answer(BaseModel):
    notices: list[str] = Field(
        default_factory=list,
        description="What the server did first or what to know about this answer: the index "
        "was built or re-indexed, a refresh is still running, files changed since indexing.",
    )


class TextMatch(BaseModel):
    file_path: str
    line_number: int
    end_line: OptionalInt = None
    element_type: str = Field(description="comment | docstring | string_literal")
    symbol_name: OptionalStr = Field(description="The documented or enclosing symbol.")
    content: str = Field(description="The whole element (long ones cut, with a marker).")
    rank: float = Field(description="Relevance in (0, 1], higher is better.")
    snippet: str = Field(description="Around the best match, terms marked [MATCH]…[/MATCH].")
    language: OptionalStr = None


class TextSearchAnswer(Answer):
    query: str
    mode: str
    results: list[TextMatch]
    total: int = Field(description="Matches in all (a lower bound when total_exact is false).")
    total_exact: bool
    truncated: bool
    more: int = Field(description="Matches left out by limit (at least this many).")


class Symbol(BaseModel):
    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    line_number: int
    end_line: int
    signature: str
    doc: OptionalStr = Field(description="First line of the docstring or doc comment.")
    match: str = Field(description="exact | prefix | substring | fuzzy")
    ref_files: int = Field(description="Files that use this name.")
    is_definition: bool = Field(
        default=True, description="False for a declaration (a prototype, a forward declaration)."
    )


class MatchedLine(BaseModel):
    line: int
    text: str = Field(description="The line, without its indentation, cut at 200 characters.")


class CodeMatch(BaseModel):
    file_path: str
    line_number: int
    end_line: int
    kind: str = Field(description="function | method | class | ... | module | section (docs)")
    name: str = Field(description="Qualified name; for docs the heading path.")
    language: str
    score: float = Field(description="Relevance in (0, 1], higher is better.")
    snippet: str = Field(description="Signature and the start of the docstring or section.")
    match_lines: list[MatchedLine] = Field(
        description="Up to 2 lines of the range holding the most of the question's words "
        "(stemmed; identifiers split), in file order; empty when none does or the file changed "
        "since it was indexed."
    )


class CodeSearchAnswer(Answer):
    query: str
    mode: str
    results: list[CodeMatch]
    truncated: bool = Field(description="More matches exist than `limit`.")
    model_id: OptionalStr = Field(default=None, description="Embedding model (semantic, hybrid).")
    coverage: Annotated[float | None, WithJsonSchema({"type": ["number", "null"]})] = Field(
        default=None, description="Share of chunks with an embedding (semantic, hybrid)."
    )
    word_matches: OptionalInt = Field(
        default=None,
        description="Chunks holding any of the question's words (lexical, hybrid), counted up "
        "to the candidates read (300, or 2 x limit + 20); 0: the results are the nearest by "
        "meaning alone.",
    )
    changed_files: list[str] = Field(
        default_factory=list,
        description="Results' files changed since they were indexed: lines may be off, no "
        "match_lines.",
    )


class Reference(BaseModel):
    file_path: str
    line_number: int
    in_symbol: OptionalStr = Field(description="The enclosing definition; null at file level.")
    in_kind: OptionalStr
    language: str
    text: str = Field(description="The line as on disk now, stripped, cut at 200 characters.")


class ReferenceSearch(Answer):
    name: str = Field(description="The name looked up: the last part of what was asked.")
    results: list[Reference]
    truncated: bool = Field(description="More uses exist than `limit`: raise it or narrow.")


class SymbolSearch(Answer):
    query: str
    results: list[Symbol]
    truncated: bool = Field(description="More matches exist than `limit`: raise it or narrow.")
    more: int = Field(description="Matches left out: at least this many when more_exact is false.")
    more_exact: bool


class SymbolSource(Answer):
    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    line_number: int
    end_line: int
    signature: str
    content: str = Field(description="The source lines line_number.. as they are on disk now.")
    truncated: bool
    more_lines: int = Field(description="Lines of the symbol left out by max_lines.")
    leading: OptionalStr = Field(
        default=None, description="Comments and decorators just above (context)."
    )
    leading_line: OptionalInt = None
    more_leading_lines: int = Field(
        default=0, description="Leading lines left out by max_lines (those farthest up)."
    )
    parents: list[str] = Field(default_factory=list, description="Enclosing headers (context).")
    imports: list[str] = Field(default_factory=list, description="Imports the body uses.")
    other_imports: int = 0
    declaration: OptionalStr = Field(
        default=None,
        description="C and C++ (context): the declaration it defines (a header's prototype, an"
        " in-class declaration), as path:line: signature.",
    )
    declaration_doc: OptionalStr = Field(
        default=None,
        description="Its doc comment, when the definition has none of its own (a C library's"
        " API documented in its header).",
    )
    warning: OptionalStr = Field(default=None, description="Set when several symbols matched.")
    others: list[str] = Field(
        default_factory=list, description="Other matches: pass file= or a qualified name."
    )


class RepoMapAnswer(Answer):
    text: str = Field(description="The map: files best first, `line│signature` rows.")
    tokens: int = Field(description="Estimated tokens of `text`; never more than budget.")
    budget: int
    files: list[str] = Field(description="The files shown, in map order.")
    truncated: bool = Field(description="Files or symbols were left out (always, past tiny repos).")
    omitted_files: int
    omitted_symbols: int
    unmatched_mentions: list[str]


class DocMatch(BaseModel):
    file: str
    section: str = Field(description="The heading; empty for text before the first heading.")
    snippet: str = Field(description="Matched terms marked [MATCH]…[/MATCH].")
    score: float = Field(description="BM25, higher is better.")
    start_line: OptionalInt = Field(description="None when the file changed since indexing.")
    end_line: OptionalInt
    stale: bool


class DocSearchAnswer(Answer):
    query: str
    results: list[DocMatch]
    truncated: bool
    more: int
    more_exact: bool
    ignored: list[str] = Field(
        default_factory=list, description="Query words without letters or digits, left out."
    )


class DataRecord(BaseModel):
    id: str = Field(description="path#key: unique among the data records.")
    file_path: str
    format: str = Field(description="csv | tsv | json | jsonl | toml | yaml")
    key: str = Field(description="Key path of a leaf (tool.ruff.lint.select[0]), or row/line.")
    line: OptionalInt = Field(description="Where the record starts (CSV, JSON Lines, YAML).")
    fields: dict[str, str] = Field(description="The record's fields: `value`, or its columns.")
    match_field: str = Field(description="The first field that matched (`key` for the key).")
    match_snippet: str = Field(description="Up to 100 characters each side of the first match.")
    score: float | None = Field(default=None, description="BM25 when ranked (higher is better).")


class DataSearchAnswer(Answer):
    query: str
    mode: str = Field(description="literal (exact, case-sensitive) | ranked (BM25 over words)")
    results: list[DataRecord]
    count: int
    truncated: bool


class CommitRecord(BaseModel):
    id: str = Field(description="The commit's full hash.")
    parents: list[str] = Field(description="Two or more for a merge.")
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    author_time: str = Field(description="ISO 8601 UTC with milliseconds.")
    commit_time: str
    subject: str
    body: str
    paths: list[str] = Field(description="Changed paths (a rename: both); none for a merge.")
    paths_total: int
    match_field: str = Field(description="subject | body | author | paths (lines: history)")
    match_snippet: str
    score: float | None = None


class CommitSearchAnswer(Answer):
    query: str
    mode: str
    results: list[CommitRecord]
    count: int
    truncated: bool


class HeadingRef(BaseModel):
    file: str
    heading: str
    level: int
    start_line: int
    end_line: int


class Section(Answer):
    file: str
    heading: str
    level: int
    start_line: int
    end_line: int
    content: str = Field(description="The section's lines; ends with `... (N more lines)` if cut.")
    truncated: bool
    more_lines: int
    matches: list[HeadingRef] = Field(
        description="Every heading that matched, in path then line order; the nth is shown."
    )
    more_matches: int = 0
    nth: int = Field(default=1, description="Which of the matches is shown (1-based).")


class OutlineFile(BaseModel):
    path: str
    language: str
    entries: list[OutlineEntry]


class OutlineAnswer(Answer):
    files: list[OutlineFile]
    truncated: bool
    more_entries: int = Field(description="Headings and symbols left out by limit.")
    more_files: int = Field(description="Files left out entirely by limit.")
    changed_files: list[str] = Field(
        description="Files whose outline may be out of date (changed since indexing)."
    )


class FileContent(Answer):
    path: str
    start_line: int = Field(description="Line number of the first line of content (1-based).")
    end_line: int = Field(description="Line number of the last line of content.")
    total_lines: int
    content: str = Field(description="The lines as in the file (invalid UTF-8 replaced).")
    truncated: bool = Field(
        description="Fewer lines came back than were asked for (max_lines or the default cap)."
    )
    more_lines: int = Field(description="Lines of the file after end_line.")
    next_start_line: OptionalInt = Field(description="Pass as start_line to read on.")


class SourcesAnswer(Answer):
    directory: str
    depth: int
    entries: list[SourceEntry]
    total_files: int
    truncated: bool
    more: int = Field(description="Entries left out by limit.")


class FilesAnswer(Answer):
    query: str
    files: list[str]
    total: int
    truncated: bool
    more: int


class RootStatus(BaseModel):
    root: str
    label: str = Field(description="The prefix of this root's paths when there are several.")
    db_path: str
    exists: bool
    schema_version: OptionalInt
    current_schema_version: int
    files: int = Field(default=0, description="Code files indexed.")
    docs: int = Field(default=0, description="Markdown, .txt and .rst files indexed.")
    symbols: int = 0
    references: int = 0
    elements: dict[str, int] = Field(default_factory=dict, description="Text elements by type.")
    indexed_at: OptionalStr = None
    stale_files: list[str] = Field(
        default_factory=list,
        description="Indexed files changed or removed on disk since (at most 20 listed).",
    )
    stale_count: int = 0
    embedding: dict[str, Any] = Field(
        default_factory=dict,
        description="The background embedding: running, phase (starting: the model loading and the chunks to "
        "embed being listed; embedding; idle; failed), embedded / to_embed of this run, error.",
    )
    unindexed_files: int = Field(
        default=0,
        description="Files with an indexed suffix that are not in the index: added since, or "
        "skipped by the indexer (binary, undecodable, too large).",
    )
    unindexed_paths: list[str] = Field(
        default_factory=list, description="The first 20 of those files (by path)."
    )
    unindexed_reasons: dict[str, str] = Field(
        default_factory=dict,
        description="Of those, the ones `repomap index` skips, and why (`not UTF-8 ...`); the "
        "others were added since it ran.",
    )
    refresh: dict[str, Any] = Field(default_factory=dict)
    error: OptionalStr = None


class StatusAnswer(Answer):
    roots: list[RootStatus]


class HelpAnswer(BaseModel):
    text: str


class _NotInPlace(Exception):
    """A definition that refers to itself, or a reference outside `$defs`: not written out."""


def self_contained(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$ref` to its `$defs` replaced by the definition: a client that checks
    every result against the output schema (the Python SDK's jsonschema) looks no reference up
    per item (search_code's check 0.72 -> 0.56 ms), and one that cannot resolve references
    reads it whole. A schema with a recursive definition is returned as it is."""
    definitions = schema.get("$defs", {})

    def inlined(node: Any, expanding: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inlined(item, expanding) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" not in node:
            return {key: inlined(value, expanding) for key, value in node.items() if key != "$defs"}
        name = node["$ref"].removeprefix("#/$defs/")
        if name in expanding or name not in definitions:
            raise _NotInPlace(name)
        beside = {key: value for key, value in node.items() if key != "$ref"}  # a description
        return {**inlined(definitions[name], (*expanding, name)), **inlined(beside, expanding)}

    try:
        whole: dict[str, Any] = inlined(schema, ())
    except _NotInPlace:
        return schema
    return whole
