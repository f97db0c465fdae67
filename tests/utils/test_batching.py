"""LengthOrder: the order inference batches inputs in, and the way back."""

import pytest
import torch

from mlmcourse.utils.batching import LengthOrder

ITEMS = ["ccc", "a", "bb", "ddd", "e", "ff", ""]


@pytest.mark.parametrize("longest_first", [False, True])
def test_sorts_by_length_and_ties_keep_their_order(longest_first):
    order = LengthOrder(ITEMS, longest_first=longest_first).order
    sign = -1 if longest_first else 1
    # the form each caller wrote before: ties in input order in both directions
    assert order == sorted(range(len(ITEMS)), key=lambda i: sign * len(ITEMS[i]))
    expected = [0, 3, 2, 5, 1, 4, 6] if longest_first else [6, 1, 4, 2, 5, 0, 3]
    assert order == expected


@pytest.mark.parametrize("longest_first", [False, True])
def test_restore_undoes_the_order_for_tensors_and_lists(longest_first):
    by_length = LengthOrder(ITEMS, longest_first=longest_first)
    batches = list(by_length.batches(3))
    assert [len(b) for b in batches] == [3, 3, 1]
    assert sum(batches, []) == by_length.order
    computed = [ITEMS[i] for b in batches for i in b]
    assert by_length.restore(computed) == ITEMS
    rows = torch.tensor([[len(ITEMS[i]), i] for i in by_length.order])  # (N, 2)
    assert by_length.restore(rows)[:, 1].tolist() == list(range(len(ITEMS)))


def test_restore_wants_one_result_per_item():
    with pytest.raises(ValueError, match="expected 7 results, one per item, got 6"):
        LengthOrder(ITEMS, longest_first=False).restore(ITEMS[:-1])
