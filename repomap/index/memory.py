"""How a large run's memory is given back: glibc's malloc raises its mmap threshold each time a
mapped block is freed (up to 32 MB), and from then on serves blocks that large from the heap,
which it returns to the system only from its top. A run that makes and frees many numpy arrays
of 1-32 MB (the ranking of the Linux kernel: dozens of 16-40 MB columns) so keeps what it freed:
on the kernel's ranking 0.5 GB more resident at its end, 0.18 GB more at its peak."""

from __future__ import annotations

import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt() parameter (malloc.h)
MAPPED_FROM = 1 << 20  # blocks from 1 MB are mapped apart, and unmapped when freed


def map_large_blocks() -> None:
    """Serve blocks of MAPPED_FROM bytes or more with mmap from now on, whatever was freed
    before (glibc; elsewhere nothing). Costs a page fault per page of each such block."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    mallopt(M_MMAP_THRESHOLD, MAPPED_FROM)
