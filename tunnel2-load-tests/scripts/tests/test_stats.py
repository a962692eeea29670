"""The one percentile convention every engine and report uses: nearest rank, p in 0..100."""

import math

import pytest

from loadkit.stats import mean, percentile

HUNDRED = list(range(1, 101))


def test_an_empty_list_has_no_percentile():
    assert percentile([], 50) is None
    assert percentile([], 0) is None


def test_one_value_is_every_percentile():
    for p in (0, 1, 50, 99, 100):
        assert percentile([7], p) == 7


def test_nearest_rank_on_one_to_a_hundred_is_the_rank_itself():
    assert percentile(HUNDRED, 1) == 1
    assert percentile(HUNDRED, 50) == 50
    assert percentile(HUNDRED, 99) == 99
    assert percentile(HUNDRED, 99.5) == 100


def test_zero_gives_the_minimum_and_a_hundred_the_maximum():
    assert percentile([3, 5, 9], 0) == 3
    assert percentile([3, 5, 9], 100) == 9


def test_a_rank_between_two_values_takes_the_higher_one():
    # 50 % of 4 values is rank 2; 51 % is rank 2.04, rounded up to 3.
    assert percentile([10, 20, 30, 40], 50) == 20
    assert percentile([10, 20, 30, 40], 51) == 30


def test_whole_products_are_not_pushed_up_a_rank_by_float_rounding():
    # 0.05 * 60 is 3.0000000000000004 in floating point: a careless ceil gives rank 4.
    assert percentile(list(range(1, 61)), 5) == 3
    assert percentile(HUNDRED, 7) == 7
    assert percentile(list(range(1, 1001)), 99.9) == 999


def test_unanswered_requests_counted_as_infinite_lift_the_high_percentiles():
    values = sorted([1.0, 2.0, 3.0] + [math.inf])
    assert percentile(values, 50) == 2.0
    assert percentile(values, 99) == math.inf


def test_p_outside_zero_to_a_hundred_is_refused():
    with pytest.raises(ValueError):
        percentile(HUNDRED, 101)
    with pytest.raises(ValueError):
        percentile(HUNDRED, -1)


def test_mean():
    assert mean([]) is None
    assert mean([1, 2, 3, 4]) == 2.5
