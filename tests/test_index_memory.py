"""A run writing thousands of files maps large blocks apart (index/memory.py), so the arrays
its ranking frees go back to the system; a small run leaves malloc as it is."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from repomap.index import memory, pipeline


def test_a_large_run_maps_large_blocks_and_a_small_one_does_not(
    make_repo, index, monkeypatch
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(memory, "map_large_blocks", lambda: calls.append(1))
    root = make_repo({f"pkg/module_{n}.py": f"def handler_{n}():\n    pass\n" for n in range(3)})
    index(root)
    assert calls == []
    monkeypatch.setattr(pipeline, "LARGE_RUN_FILES", 2)
    (root / "pkg" / "module_3.py").write_text("def handler_3():\n    pass\n")
    index(root, force=True)
    assert calls == [1]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_mapping_large_blocks_gives_freed_arrays_back() -> None:
    """After a 30 MB block was freed, glibc serves 16 MB blocks from the heap and keeps them when
    freed; mapped apart, they are unmapped when freed (Linux with glibc: the resident size)."""
    script = """
import sys
import numpy as np
from repomap.index import memory
def resident():
    return int(open('/proc/self/statm').read().split()[1]) * 4096
if sys.argv[1] == 'map':
    memory.map_large_blocks()
big = np.ones(30 << 20, np.uint8); del big  # raises glibc's threshold past 16 MB
kept = np.ones(1 << 20, np.uint8)  # above the blocks below: the heap cannot shrink past it
before = resident()
blocks = [np.ones(16 << 20, np.uint8) for _ in range(4)]
middle = np.ones(1 << 20, np.uint8)
del blocks
print(resident() - before)
"""
    grown = {
        mode: int(
            subprocess.run(
                [sys.executable, "-c", script, mode], capture_output=True, text=True, check=True
            ).stdout
        )
        for mode in ("heap", "map")
    }
    assert grown["map"] < 8 << 20 < 48 << 20 < grown["heap"]
