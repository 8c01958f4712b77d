"""The HTTP API's vocabulary: each endpoint's parameters, read and checked, and the error codes.

Parameters come as a query string (GET) or a JSON object (POST) with the same names, into a
pydantic model per endpoint that refuses unknown names; `read_params` turns every problem into
one INVALID_REQUEST line. `error_code` maps the library's errors to the API's codes, `STATUS`
each code to its HTTP status (docs/http-api.md, "Errors").
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from repomap import errors
from repomap.index.vocabulary import KINDS
from repomap.store.vectors import EmbeddingModelMismatch

MAX_FILE_LINES = 20_000  # /api/file: most lines in one answer
MAX_MAP_FILES = 100_000

# Each error code and its HTTP status (docs/http-api.md).
STATUS = {
    "INVALID_REQUEST": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "EMBEDDING_MODEL_MISMATCH": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "RATE_LIMITED": 429,
    "INTERNAL": 500,
    "INDEX_UNAVAILABLE": 503,
}


class ApiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = STATUS[code]


def error_code(error: errors.RepomapError) -> str:
    """The API's code for a library error."""
    if isinstance(error, EmbeddingModelMismatch):
        return "EMBEDDING_MODEL_MISMATCH"
    if isinstance(error, errors.NotFound | errors.PathNotFound):
        return "NOT_FOUND"
    if isinstance(error, errors.BadArgument | errors.BadQuery):
        return "INVALID_REQUEST"
    # No index, an old or damaged one, another writer, a build still running, no ranking yet.
    return "INDEX_UNAVAILABLE"


# --- requests ------------------------------------------------------------------------------


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=4096)

    scope: Annotated[str | None, Field(max_length=200)] = None


Q = Annotated[str, Field(min_length=1, max_length=4096)]
TopK = Annotated[int, Field(ge=1, le=1000)]
PathArg = Annotated[str | None, Field(max_length=4096)]


class SearchParams(Params):
    q: Q
    topK: TopK = 10  # noqa: N815 - the design's field names
    mode: Literal["hybrid", "lexical", "semantic"] | None = None
    pathPrefix: PathArg = None  # noqa: N815
    lang: Literal["python", "rust", "c", "cpp", "markdown", "text"] | None = None
    kind: Annotated[str | None, Field(max_length=200)] = None
    modelId: Annotated[str | None, Field(max_length=200)] = None  # noqa: N815


class TextParams(Params):
    q: Q
    topK: TopK = 20  # noqa: N815
    mode: Literal["fts", "literal"] = "fts"
    type: Literal["all", "comment", "docstring", "string_literal"] = "all"
    pathPrefix: PathArg = None  # noqa: N815
    lang: Literal["python", "rust", "c", "cpp"] | None = None
    ignoreCase: bool = False  # noqa: N815


class SymbolsParams(Params):
    q: Q
    topK: TopK = 20  # noqa: N815
    kind: Literal[KINDS] | None = None  # type: ignore[valid-type]
    pathPrefix: PathArg = None  # noqa: N815
    lang: Literal["python", "rust", "c", "cpp"] | None = None


class DataParams(Params):
    q: Q
    topK: TopK = 20  # noqa: N815
    pathPrefix: PathArg = None  # noqa: N815
    key: Annotated[str | None, Field(max_length=1000)] = None
    field: Annotated[str | None, Field(max_length=1000)] = None
    ranked: bool = False


class CommitsParams(Params):
    q: Q
    topK: TopK = 20  # noqa: N815
    author: Annotated[str | None, Field(max_length=1000)] = None
    since: Annotated[str | None, Field(max_length=100)] = None
    until: Annotated[str | None, Field(max_length=100)] = None
    pathPrefix: PathArg = None  # noqa: N815
    field: Literal["author", "subject", "body", "paths"] | None = None
    oldestFirst: bool = False  # noqa: N815
    ranked: bool = False


class SymbolParams(Params):
    name: Q
    file: PathArg = None
    maxLines: Annotated[int | None, Field(ge=1, le=MAX_FILE_LINES)] = None  # noqa: N815
    context: bool = False
    nth: Annotated[int | None, Field(ge=1, le=1000)] = None


class MapParams(Params):
    pathPrefix: PathArg = None  # noqa: N815
    topK: Annotated[int | None, Field(ge=1, le=MAX_MAP_FILES)] = None  # noqa: N815
    edgeFiles: Annotated[int, Field(ge=0, le=500)] = 50  # noqa: N815
    maxEdges: Annotated[int, Field(ge=0, le=5000)] = 500  # noqa: N815


class FileParams(Params):
    path: Q
    start: Annotated[int | None, Field(ge=1)] = None
    end: Annotated[int | None, Field(ge=1)] = None
    maxLines: Annotated[int, Field(ge=1, le=MAX_FILE_LINES)] = 5000  # noqa: N815


class OutlineParams(Params):
    path: PathArg = None
    level: Annotated[int | None, Field(ge=1, le=20)] = None
    topK: TopK = 1000  # noqa: N815


class SourcesParams(Params):
    dir: PathArg = None
    depth: Annotated[int | None, Field(ge=1, le=50)] = None
    pattern: Annotated[str | None, Field(max_length=1024)] = None
    topK: TopK = 100  # noqa: N815


class FilesParams(Params):
    q: Q
    topK: TopK = 50  # noqa: N815
    ignoreCase: bool = False  # noqa: N815
    pathPrefix: PathArg = None  # noqa: N815


class StatusParams(Params):
    pass


P = TypeVar("P", bound=Params)


async def read_params(request: Request, model: type[P]) -> P:
    """The request's parameters (query string for GET, a JSON object for POST), validated."""
    if request.method == "POST":
        body = await request.body()
        try:
            data = json.loads(body) if body.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ApiError("INVALID_REQUEST", f"the body is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise ApiError("INVALID_REQUEST", "the body must be a JSON object")
    else:
        data = {}
        for key, value in request.query_params.multi_items():
            if key in data:
                raise ApiError("INVALID_REQUEST", f"parameter {key!r} is given more than once")
            if value != "":  # `?pathPrefix=` is no filter, as a form leaves it
                data[key] = value
    request.state.arguments = data  # for the call's log entry
    unknown = sorted(set(data) - set(model.model_fields))
    if unknown:
        raise ApiError(
            "INVALID_REQUEST",
            f"unknown parameter {', '.join(map(repr, unknown))}; {request.url.path} takes: "
            + ", ".join(model.model_fields),
        )
    if bad := _not_unicode(data):
        raise ApiError("INVALID_REQUEST", f"{bad} holds a lone surrogate (not valid Unicode)")
    try:
        return model.model_validate(data)
    except ValidationError as failure:
        problems = []
        for item in failure.errors():
            where = ".".join(str(part) for part in item["loc"]) or "body"
            shown = repr(item.get("input"))
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            problems.append(f"{where}: {item['msg']} (got {shown})")
        raise ApiError("INVALID_REQUEST", "; ".join(problems)) from None


def _not_unicode(data: dict[str, Any]) -> str | None:
    for key, value in data.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return key
    return None
