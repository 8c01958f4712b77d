"""What a new user hit running repomap on projects it had never seen (ujson's C, memchr's Rust,
attrs' Python): each defect reproduced on a small real tree through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import indexed_tree, run_cli


def cli(root: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return run_cli(*args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})


# --- C: a calling-convention macro between `*` and the name (ujson's decode.c) -------------

UJSON_STYLE = """\
#define FASTCALL_MSVC
#define FASTCALL_ATTR

static FASTCALL_ATTR PyObject *FASTCALL_MSVC decode_true ( struct DecoderState *ds)
{
  ds->lastType = 1;
  Py_RETURN_TRUE;
}

static PyObject *FASTCALL_MSVC decode_false ( struct DecoderState *ds);

static PyObject *FASTCALL_MSVC decode_null ( struct DecoderState *ds)
{
  return NULL;
}
"""


def test_a_function_whose_pointer_return_type_is_followed_by_a_macro_keeps_its_name(tmp_path):
    """tree-sitter reads `PyObject *FASTCALL_MSVC decode_true (` as a function named
    FASTCALL_MSVC with `decode_true` in an ERROR: ujson's decode_true, decode_false and
    decode_null were all indexed as `FASTCALL_MSVC`."""
    root = indexed_tree(tmp_path / "repo", {"decode.c": UJSON_STYLE})
    done = cli(root, "outline", "decode.c", "--json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)["results"][0]["entries"]
    functions = [(e["name"], e["start_line"], e["end_line"]) for e in entries
                 if e["kind"] == "function"]  # fmt: skip
    assert functions == [
        ("decode_true", 4, 8),
        ("decode_false", 10, 10),
        ("decode_null", 12, 15),
    ]
    shown = cli(root, "show", "decode_null")
    assert shown.returncode == 0, shown.stderr
    assert "return NULL;" in shown.stdout
