"""How many results a command or tool may be asked for: one bound, one check, one message."""

from __future__ import annotations

from repomap.errors import BadArgument

# Past SQLite's integers a limit overflowed; past this no agent or person reads the list.
MAX_LIMIT = 1000


def check_limit(limit: object, maximum: int | None = MAX_LIMIT) -> int:
    """`limit` when it is a whole number from 1 to `maximum` (None: no upper bound)."""
    if (
        isinstance(limit, bool)
        or not isinstance(limit, int)
        or limit < 1
        or (maximum is not None and limit > maximum)
    ):
        bound = f"from 1 to {maximum}" if maximum is not None else "of at least 1"
        raise BadArgument(f"limit must be a whole number {bound}, not {limit!r}")
    return limit
