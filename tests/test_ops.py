"""`repomap status`, `doctor`, `clean`, `init` and the config file, through the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

FILES = {
    "pkg/pool.py": '"""Connection pooling."""\n\n\ndef get():\n    # pick the oldest idle one\n    return 1\n',
    "pkg/util.py": "def helper():\n    return 2\n",
    "README.md": "# Guide\n\nHow to pool.\n",
}
DROP_WRITE_OVERRIDE = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


@pytest.fixture
def repo(make_repo) -> Path:
    root = make_repo(FILES)
    done = run_cli("index", root)
    assert done.returncode == 0, done.stderr
    return root


def _json(*args: str | Path) -> dict:
    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_status_reports_counts_scope_last_run_and_sizes(repo: Path) -> None:
    (repo / "pkg" / "util.py").write_text("def helper():\n    return 3\n")
    found = _json("status", "--root", repo)["results"][0]
    assert found["root"] == str(repo)
    assert found["db_path"] == str(repo / ".repomap" / "index.db")
    assert found["scope"] == "main" and found["scope_mode"] == "fixed"
    assert (found["files"], found["docs"], found["symbols"]) == (2, 1, 2)
    assert found["text_rows"] >= 2 and found["chunks"] >= 2
    assert found["embedded"] == 0 and found["embedded_share"] == 0.0
    assert found["indexed_at"] and found["index_seconds"] > 0
    assert found["changed_since"] == 1 and found["changed_files"] == ["pkg/util.py"]
    assert found["table_bytes"]["symbols"] > 0
    assert sum(found["table_bytes"].values()) <= found["db_bytes"] + 4096
    # the lines indexed (code and docs, as when they were indexed), the database's budget unit
    assert found["indexed_lines"] == sum(text.count("\n") for text in FILES.values())
    assert found["settings"]["scope.mode"] == {"value": "fixed", "origin": "default"}
    # a small tree keeps no trigram index for literal search, and status says how it searches
    assert found["literal_index"] is False
    shown = run_cli("status", "--root", repo)
    assert "literal:     the text read whole (no trigram index" in shown.stdout


def test_status_says_when_the_index_was_made_by_another_repomap(repo: Path) -> None:
    """After an upgrade `status` said "changed: 0 indexed files since" and the next index (or
    the MCP server's first call) re-read every file as "modified" (a search user's report)."""
    assert _json("status", "--root", repo)["results"][0]["outdated"] == {}
    db = sqlite3.connect(repo / ".repomap" / "index.db")
    with db:  # as an older repomap left it
        db.execute("UPDATE meta SET value = '1' WHERE key = 'extractor_version'")
    db.close()
    found = _json("status", "--root", repo)["results"][0]
    assert found["changed_since"] == 0
    (key, (old, new)), *others = found["outdated"].items()
    assert (key, old, others) == ("extractor_version", "1", []) and new != "1"
    shown = run_cli("status", "--root", repo).stdout.splitlines()
    assert (
        f"outdated:    made with extractor version 1 (now {new}): the next `repomap index` "
        "re-reads every file" in shown
    )
    reindexed = _json("index", repo)["results"][0]  # the run says why it read every file
    assert reindexed["reread"] == f"extractor version 1 (now {new})"
    assert reindexed["modified"] == 2 and _json("index", repo)["results"][0]["reread"] is None
    assert _json("status", "--root", repo)["results"][0]["outdated"] == {}


def test_status_without_an_index_says_so(make_repo) -> None:
    root = make_repo({"a.py": "X = 1\n"})
    done = run_cli("status", "--root", root)
    assert done.returncode == 0, done.stderr
    assert "no index yet" in done.stdout
    assert not (root / ".repomap").exists()


def _outcomes(done: subprocess.CompletedProcess) -> dict[str, str]:
    return {check["name"]: check["outcome"] for check in json.loads(done.stdout)["results"]}


def test_doctor_passes_a_healthy_index(repo: Path) -> None:
    done = run_cli("doctor", "--root", repo, "--json")
    assert done.returncode == 0, done.stdout
    outcomes = _outcomes(done)
    assert set(outcomes) >= {"database", "schema version", "FTS consistency", "embedding model",
                             "index folder writable", "git", "ignore files", "free disk",
                             "config file"}  # fmt: skip
    assert "FAIL" not in outcomes.values()


def test_doctor_fails_an_index_whose_text_index_disagrees_with_its_rows(repo: Path) -> None:
    db = sqlite3.connect(repo / ".repomap" / "index.db")
    with db:  # rows gone behind FTS5's back: its index still lists them
        db.execute("DELETE FROM chunks")
    db.close()
    done = run_cli("doctor", "--root", repo)
    assert done.returncode == 2
    assert "FAIL  FTS consistency: chunks_fts" in done.stdout
    assert "fix: repomap clean && repomap index" in done.stdout


def test_doctor_fails_a_damaged_database_file(repo: Path) -> None:
    path = repo / ".repomap" / "index.db"
    run_cli("migrate", "--root", repo)  # checkpointed: the pages are in the main file
    data = bytearray(path.read_bytes())
    for offset in range(4096 * 3, len(data) - 4096, 4096):  # every page after the first few
        data[offset + 8 : offset + 64] = b"\xff" * 56
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    done = run_cli("doctor", "--root", repo)
    assert done.returncode == 2, done.stdout
    assert "FAIL  database:" in done.stdout


def test_doctor_warns_on_a_read_only_index_and_names_the_fix(repo: Path) -> None:
    if os.geteuid() == 0 and subprocess.run([*DROP_WRITE_OVERRIDE, "true"]).returncode != 0:
        pytest.skip("running as root and setpriv cannot drop CAP_DAC_OVERRIDE here")
    folder = repo / ".repomap"
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    try:
        prefix = DROP_WRITE_OVERRIDE if os.geteuid() == 0 else []
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "repomap.cli", "doctor", "--root", str(repo)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
        for path in folder.iterdir():
            path.chmod(0o644)
    assert done.returncode == 0, done.stdout + done.stderr  # readable: answers still work
    assert "WARN  index folder writable" in done.stdout
    assert f"fix: chmod u+w {folder}" in done.stdout


def test_doctor_names_an_ignore_pattern_git_cannot_read_and_indexing_survives_it(
    repo: Path,
) -> None:
    (repo / ".gitignore").write_text("build/\n!\n")
    (repo / "build").mkdir()
    (repo / "build" / "gen.py").write_text("def generated():\n    pass\n")
    indexed = run_cli("index", repo, "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["results"][0]["files"] == 2  # build/ still ignored
    done = run_cli("doctor", "--root", repo)
    assert done.returncode == 2
    assert "FAIL  ignore files: .gitignore:2: Invalid git pattern: '!'" in done.stdout


def test_clean_removes_the_index_and_never_a_source_file(repo: Path) -> None:
    before = sorted(p for p in repo.rglob("*") if ".repomap" not in p.parts)
    dry = _json("clean", "--root", repo, "--dry-run")
    assert ".repomap/index.db" in [r["path"] for r in dry["results"]]
    assert (repo / ".repomap" / "index.db").exists()
    done = run_cli("clean", "--root", repo)
    assert done.returncode == 0, done.stderr
    assert not (repo / ".repomap" / "index.db").exists()
    assert sorted(p for p in repo.rglob("*") if ".repomap" not in p.parts) == before
    everything = run_cli("clean", "--root", repo, "--all")
    assert everything.returncode == 0 and not any((repo / ".repomap").iterdir())
    assert sorted(p for p in repo.rglob("*") if ".repomap" not in p.parts) == before


def test_clean_refuses_a_db_that_is_not_an_index(repo: Path) -> None:
    done = run_cli("clean", "--db", repo / "pkg" / "pool.py", "--root", repo)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "leaves it alone" in done.stderr
    assert (repo / "pkg" / "pool.py").read_text().startswith('"""Connection')


def test_init_writes_every_setting_and_refuses_to_overwrite(make_repo) -> None:
    root = make_repo({"a.py": "X = 1\n"})
    assert run_cli("init", "--root", root).returncode == 0
    text = (root / "repomap.toml").read_text()
    for key in ("rate_limit = 600", "rate_limit_window = 60.0", "cors_origins = []",
                "max_body_bytes = 65536", 'mode = "fixed"'):  # fmt: skip
        assert key in text
    again = run_cli("init", "--root", root)
    assert again.returncode == 2 and "--force" in again.stderr
    settings = _json("status", "--root", root)["results"][0]["settings"]
    assert settings["serve.rate_limit"] == {"value": 600, "origin": str(root / "repomap.toml")}


def test_settings_come_from_flag_then_env_then_file_then_default(make_repo) -> None:
    root = make_repo({
        "a.py": "X = 1\n", "big.py": "Y = '" + "y" * 300 + "'\n",
        "pyproject.toml": "[tool.repomap]\nindex.max_file_size = 100\n"
                          "serve.cors_origins = ['https://a.example']\n",
    })  # fmt: skip
    settings = _json("status", "--root", root)["results"][0]["settings"]
    assert settings["index.max_file_size"] == {"value": 100, "origin": str(root / "pyproject.toml")}
    assert settings["serve.cors_origins"]["value"] == ["https://a.example"]
    skipped = _json("index", root)["results"][0]["skipped_files"]
    assert [s["path"] for s in skipped] == ["big.py"]
    env = {"REPOMAP_MAX_FILE_SIZE": "1000"}
    by_env = run_cli("status", "--root", root, "--json", env=env)
    found = json.loads(by_env.stdout)["results"][0]["settings"]["index.max_file_size"]
    assert found == {"value": 1000, "origin": "env REPOMAP_MAX_FILE_SIZE"}
    by_flag = run_cli("index", root, "--json", "--max-file-size", "50", env=env)
    skipped = json.loads(by_flag.stdout)["results"][0]["skipped_files"]
    # the flag's 50 bytes win over the env's 1000: every file read that is larger is skipped
    # (pyproject.toml is read too, as a data file)
    assert sorted(s["path"] for s in skipped) == ["big.py", "pyproject.toml"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[serve]\nrate_limit = 'many'\n", "serve.rate_limit must be a whole number"),
        ("[scope]\nmode = 'svn'\n", "scope.mode must be one of fixed, git, env"),
        ("colour = 1\n", "unknown setting 'colour'"),
        ("[serve\n", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_is_one_line_error(make_repo, text: str, message: str) -> None:
    root = make_repo({"a.py": "X = 1\n", "repomap.toml": text})
    done = run_cli("index", root)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and message in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (root / ".repomap" / "index.db").exists()


def test_extra_ignore_patterns_from_the_config_file_leave_files_out(make_repo) -> None:
    root = make_repo({
        "src/a.py": "def kept():\n    pass\n", "gen/b.py": "def generated():\n    pass\n",
        "repomap.toml": "[index]\nextra_ignore = ['gen/']\n",
    })  # fmt: skip
    summary = _json("index", root)["results"][0]
    assert summary["files"] == 1
    assert run_cli("symbols", "generated", "--root", root).returncode == 1
