"""The memory budget: a fractional token estimate is rounded up, so a memory never costs less than its text.
Each was seen failing with a one-line bug planted in the code it guards."""

import json

import pytest

from memory_cookbook.from_notebooks.stores import BudgetedStore


class Listed:
    def __init__(self, *memories):
        self.memories = list(memories)

    def recall(self, customer):
        return list(self.memories)


MEMORY = {"request": {"ticket": {"id": "T-1"}}}  # 38 characters of JSON


@pytest.mark.parametrize("tokens_per_char, estimate", [(0.08, 4), (0.25, 10), (0.5, 19), (1, 38)])
def test_a_fractional_estimate_is_rounded_up_and_a_whole_one_kept(tokens_per_char, estimate):
    assert len(json.dumps(MEMORY)) == 38  # times 0.08: 3.04 tokens; times 0.25: 9.5
    assert BudgetedStore(Listed(), 100, tokens_per_char).estimated_tokens(MEMORY) == estimate


def test_a_memory_of_3_point_04_tokens_does_not_fit_in_3():
    assert BudgetedStore(Listed(MEMORY), 3, tokens_per_char=0.08).recall("C-1") == []
    assert BudgetedStore(Listed(MEMORY), 4, tokens_per_char=0.08).recall("C-1") == [MEMORY]
