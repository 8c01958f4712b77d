"""Shares shown as percentages never read as 0% or 100% when they are neither."""

from __future__ import annotations

import pytest

from repomap.shares import percent


@pytest.mark.parametrize(
    ("share", "shown"),
    [
        (0.0, "0%"),
        (1.0, "100%"),
        (0.5, "50%"),
        (0.123, "12%"),
        (1488 / 1489, "99.9%"),  # 1,488 of 1,489 chunks embedded: not "100%"
        (0.996, "99.6%"),
        (0.0004, "0.04%"),
        (0.99999999, "99.999%"),
        (1e-9, "0.001%"),
        (float("nan"), "0%"),  # never a guessed decimal
        (1.2, "100%"),
    ],
)
def test_a_share_is_shown_with_the_decimals_it_needs(share: float, shown: str) -> None:
    assert percent(share) == shown
