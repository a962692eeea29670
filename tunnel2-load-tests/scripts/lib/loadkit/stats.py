"""The statistics every load-test engine and report uses: one percentile convention for all of them."""

import math


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list: the smallest value with at least p % of the values at or below
    it, p in 0..100 (p = 0 gives the minimum, p = 100 the maximum). None when the list is empty. The values may hold
    math.inf (an unanswered request counted as slower than any answer)."""
    if not 0 <= p <= 100:
        raise ValueError(f"percentile takes p in 0..100, got {p!r}")
    n = len(sorted_values)
    if n == 0:
        return None
    # p * n / 100 keeps whole products whole (p / 100 * n does not: 0.05 * 60 is 3.0000000000000004, one rank too high).
    rank = max(1, math.ceil(round(p * n / 100.0, 9)))
    return sorted_values[min(rank, n) - 1]


def mean(values):
    """Arithmetic mean; None when there are no values."""
    return sum(values) / len(values) if values else None
