"""A share (0-1) as a percentage a reader can trust: 1,488 of 1,489 is not "100%"."""

from __future__ import annotations


def percent(share: float) -> str:
    """`share` as a whole percentage, with the decimals it takes not to read as 0% or 100%
    when it is neither (0.99933 -> '99.9%', 0.0004 -> '0.04%'); at most three."""
    if not 0 < share < 1:  # NaN too: never a decimal guess
        return "100%" if share >= 1 else "0%"
    for digits in range(4):
        shown = round(share * 100, digits)
        if 0 < shown < 100:
            return f"{shown:.{digits}f}%"
    return "99.999%" if share > 0.5 else "0.001%"
