"""The skill document an agent loads names every CLI command and every MCP tool."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from repomap import config
from repomap.cli.main import main
from repomap.serve.mcp_server import build_server

SKILL = (Path(__file__).resolve().parent.parent / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_cli_command_appears_in_skill_md(command: str) -> None:
    assert f"repomap {command}" in SKILL


def _tool_names(root: Path) -> list[str]:
    async def listing() -> list[str]:
        return [tool.name for tool in await build_server(config.resolve(root)).list_tools()]

    return anyio.run(listing)


def test_every_mcp_tool_appears_in_skill_md_with_an_example_call(tmp_path: Path) -> None:
    names = _tool_names(tmp_path)
    assert len(names) == 16
    missing = [name for name in names if f"{name}(" not in SKILL]
    assert missing == []


README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _readme_rows() -> dict[str, str]:
    """The command table's first cells, by command (`repomap NAME [--flag X] ...`; a command
    with two rows, as show NAME and show --section, gets both)."""
    rows: dict[str, str] = {}
    for line in README.splitlines():
        if line.startswith("| `repomap "):
            cell = line.split("` |", 1)[0].removeprefix("| `repomap ")
            name = cell.split()[0]
            rows[name] = f"{rows.get(name, '')} {cell}"
    return rows


@pytest.mark.parametrize("command", sorted(main.commands))
def test_the_readme_table_lists_exactly_the_flags_each_command_takes(command: str) -> None:
    import re

    import click

    row = _readme_rows().get(command)
    assert row is not None, f"README's command table has no row for {command}"
    options = [p for p in main.commands[command].params if isinstance(p, click.Option)]
    spellings = {opt for p in options for opt in (*p.opts, *p.secondary_opts)}
    primary = {next(o for o in p.opts if o.startswith("--")) for p in options}
    listed = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", row))
    assert listed - spellings == set(), f"README lists flags {command} does not take"
    assert primary - {"--help"} - listed == set(), f"README leaves out flags of {command}"
