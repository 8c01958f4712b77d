"""The one path-filter dialect (repomap/paths.py): folders, files, tails and globs."""

from __future__ import annotations

import pytest

from repomap import paths
from repomap.errors import OutsideRoot

TREE = [
    "README.md",
    "setup.py",
    "django/db/__init__.py",
    "django/db/models/query.py",
    "django/db/backends/default.py",
    "django/core/cache/backends/default.py",
    "httpx/_transports/default.py",
    "httpx/_transports/asgi.py",
    "tests/test_query.py",
    "tests/db/test_models.py",
    "docs/ref/models.md",
    "src/lib.rs",
    "crates/net/src/socket.rs",
    "app/[slug]/page.py",
    "app/s/page.py",
]


@pytest.mark.parametrize(
    "raw, expected",
    [
        # a folder or a file named from the root
        ("django/db/", {"django/db/__init__.py", "django/db/models/query.py",
                        "django/db/backends/default.py"}),
        ("django/db", {"django/db/__init__.py", "django/db/models/query.py",
                       "django/db/backends/default.py"}),
        ("./django/db/models/query.py", {"django/db/models/query.py"}),
        ("django//db/./models//query.py", {"django/db/models/query.py"}),  # empty segments
        ("django\\db\\models\\query.py", {"django/db/models/query.py"}),
        ("src/", {"src/lib.rs"}),  # the root's src, not crates/net/src
        ("setup.py", {"setup.py"}),
        # nothing there from the root: a tail at a segment boundary
        ("default.py", {"django/db/backends/default.py", "django/core/cache/backends/default.py",
                        "httpx/_transports/default.py"}),
        ("_transports/", {"httpx/_transports/default.py", "httpx/_transports/asgi.py"}),
        ("db/models/query.py", {"django/db/models/query.py"}),
        ("backends/default.py", {"django/db/backends/default.py",
                                 "django/core/cache/backends/default.py"}),
        ("query.py", {"django/db/models/query.py"}),  # whole segments: not test_query.py
        ("efault.py", set()),
        ("/default.py", set()),  # anchored: no tails
        ("models", {"django/db/models/query.py"}),  # a folder tail; models.md is no folder
        # gitignore-style globs
        ("*.rs", {"src/lib.rs", "crates/net/src/socket.rs"}),
        ("**/tests/**", {"tests/test_query.py", "tests/db/test_models.py"}),
        ("tests/**/test_*.py", {"tests/test_query.py", "tests/db/test_models.py"}),
        ("tests/*.py", {"tests/test_query.py"}),  # * stays inside a folder
        ("django/*/default.py", set()),
        ("django/**/default.py", {"django/db/backends/default.py",
                                  "django/core/cache/backends/default.py"}),
        ("[dh]*/**/default.py", {"django/db/backends/default.py",
                                 "django/core/cache/backends/default.py",
                                 "httpx/_transports/default.py"}),
        ("docs/", {"docs/ref/models.md"}),
        # a path whose name holds `[` is that path; a glob only when no path is
        ("app/[slug]/page.py", {"app/[slug]/page.py"}),
        ("[slug]/", {"app/[slug]/page.py"}),
        ("app/[st]/page.py", {"app/s/page.py"}),
        # `!` keeps every path but those the rest names
        ("!tests/", set(TREE) - {"tests/test_query.py", "tests/db/test_models.py"}),
        ("!*.py", {"README.md", "docs/ref/models.md", "src/lib.rs", "crates/net/src/socket.rs"}),
        ("!default.py", set(TREE) - {"django/db/backends/default.py",
                                     "django/core/cache/backends/default.py",
                                     "httpx/_transports/default.py"}),
    ],
)  # fmt: skip
def test_the_dialect(raw: str, expected: set[str]) -> None:
    path_filter = paths.parse(raw)
    assert path_filter is not None
    assert set(path_filter.select(TREE)) == expected


@pytest.mark.parametrize("raw", [None, "", "  ", ".", "./", "/"])
def test_an_empty_filter_keeps_everything(raw: str | None) -> None:
    assert paths.parse(raw) is None
    assert paths.select(paths.parse(raw), TREE) == TREE


def test_an_absolute_path_inside_the_root_is_relative() -> None:
    path_filter = paths.parse("/work/repo/django/db/", root="/work/repo")
    assert path_filter is not None and set(path_filter.select(TREE)) == set(
        paths.parse("django/db/").select(TREE)  # type: ignore[union-attr]
    )
    assert paths.parse("/work/repo", root="/work/repo") is None


@pytest.mark.parametrize("raw", ["../etc/passwd", "django/../../x", ".."])
def test_a_filter_that_climbs_out_of_the_root_is_refused(raw: str) -> None:
    with pytest.raises(OutsideRoot):
        paths.parse(raw)


def test_the_prefix_narrows_without_losing_a_match() -> None:
    for raw in ("django/db/", "django/**/default.py", "tests/*.py", "*.rs", "src/"):
        path_filter = paths.parse(raw)
        assert path_filter is not None
        kept = path_filter.select(TREE)
        assert all(rel_path.startswith(path_filter.prefix) for rel_path in kept), raw
