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
    assert len(names) == 13
    missing = [name for name in names if f"{name}(" not in SKILL]
    assert missing == []
