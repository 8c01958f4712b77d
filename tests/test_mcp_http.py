"""`repomap mcp --transport http`: streamable HTTP on 127.0.0.1, through the SDK's HTTP client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client import Client


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port: int, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"repomap mcp exited: {process.stderr.read().decode()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("repomap mcp did not start listening")


@pytest.fixture
def http_server(make_repo):
    root = make_repo(
        {
            "calc.py": 'def add(a, b):\n    """Add two numbers."""\n    return a + b\n',
            "README.md": "# Calc\n\n## Usage\n\nCall add.\n",
        }
    )
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "repomap.cli",
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--root",
            str(root),
        ],  # fmt: skip
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "REPOMAP_WORKERS": "1"},
    )
    try:
        _wait_for(port, process)
        yield root, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def test_streamable_http_on_localhost_serves_the_tools(http_server: tuple[Path, int]) -> None:
    root, port = http_server

    async def session():
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search_symbols", {"query": "add"})
            bad = await client.call_tool("read_file", {"path": "../../etc/passwd"})
            section = await client.call_tool("get_section", {"heading": "usage"})
            return tools, found, bad, section

    tools, found, bad, section = anyio.run(session)
    assert "search_text" in {tool.name for tool in tools}
    hit = found.structured_content["results"][0]
    assert (hit["qualified_name"], hit["file_path"], hit["doc"]) == (
        "add",
        "calc.py",
        "Add two numbers.",
    )
    assert any("first use" in notice for notice in found.structured_content["notices"])
    assert bad.is_error and "outside" in bad.content[0].text
    assert section.structured_content["content"] == "## Usage\n\nCall add.\n"
    assert (root / ".repomap" / "index.db").exists()


def _outward_address() -> str | None:
    """This machine's address on the route out (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # TEST-NET-3 (documentation only); nothing is sent
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_http_binds_to_localhost_only_by_default(http_server: tuple[Path, int]) -> None:
    _, port = http_server
    address = _outward_address()
    if address is None:
        pytest.skip("this machine has no address other than loopback")
    with pytest.raises(OSError), socket.create_connection((address, port), timeout=0.5):
        pass
