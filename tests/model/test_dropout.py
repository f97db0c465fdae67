"""The speed path's dropout (mlmcourse.model.dropout): dropout's distribution from fewer draws."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.model.dropout import (
    FastDropout,
    drop_threshold,
    fast_dropout,
    keep_mask,
    keep_probability,
)

SAMPLES = 1 << 20  # about a million elements: a share's standard error is below 3e-4


@pytest.mark.parametrize("p", [0.1, 0.5, 0.01, 0.9])
def test_the_share_dropped_is_p_within_five_standard_errors(p):
    torch.manual_seed(0)
    keep = keep_mask(torch.Size([SAMPLES]), p, torch.device("cpu"))
    share = 1 - keep.float().mean().item()
    assert abs(share - p) < 5 * math.sqrt(p * (1 - p) / SAMPLES)


def test_each_of_the_four_elements_sharing_a_draw_is_dropped_alike():
    """One 64-bit draw serves four elements; each must use bits that are really random (a
    draw without bounds leaves the sign bit 0, which would never drop every fourth element)."""
    torch.manual_seed(0)
    keep = keep_mask(torch.Size([SAMPLES]), 0.5, torch.device("cpu")).view(-1, 4)
    shares = 1 - keep.float().mean(dim=0)
    assert torch.allclose(shares, torch.full((4,), 0.5), atol=5 * math.sqrt(0.25 / (SAMPLES / 4)))


def test_p_is_rounded_to_a_multiple_of_one_in_65536_and_the_scale_is_exact():
    assert keep_probability(0.1) == 1 - 6554 / 65536
    assert keep_probability(0.0) == 1.0
    assert drop_threshold(0.0) == -32768  # nothing lies below the smallest 16-bit value
    assert drop_threshold(0.5) == 0
    x = torch.ones(8, 8)
    torch.manual_seed(1)
    out = fast_dropout(x, 0.1)
    kept = out[out != 0]
    assert kept.numel() > 0 and torch.allclose(kept, torch.tensor(1 / keep_probability(0.1)))


def test_the_expected_output_is_the_input():
    torch.manual_seed(0)
    x = torch.full((SAMPLES,), 3.0)
    assert fast_dropout(x, 0.1).mean().item() == pytest.approx(3.0, rel=2e-3)


def test_gradients_flow_through_kept_elements_scaled_like_the_values():
    torch.manual_seed(0)
    x = torch.randn(64, 32, requires_grad=True)
    out = fast_dropout(x, 0.2)
    out.backward(torch.ones_like(out))
    kept = out != 0
    assert torch.allclose(x.grad, kept.float() / keep_probability(0.2))
    assert torch.allclose(out[kept], x[kept] / keep_probability(0.2))


def test_seeded_runs_draw_the_same_masks_and_a_generator_is_honoured():
    x = torch.randn(16, 16)
    torch.manual_seed(3)
    a = fast_dropout(x, 0.3)
    torch.manual_seed(3)
    assert torch.equal(a, fast_dropout(x, 0.3))
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(fast_dropout(x, 0.3, generator=g1), fast_dropout(x, 0.3, generator=g2))


def test_off_in_eval_at_p_zero_and_torchs_own_at_p_one():
    x = torch.randn(5, 7)
    assert torch.equal(fast_dropout(x, 0.5, training=False), x)
    assert torch.equal(fast_dropout(x, 0.0), x)
    assert torch.equal(fast_dropout(x, 1.0), torch.zeros_like(x))
    module = FastDropout(0.5).eval()
    assert torch.equal(module(x), x)


def test_odd_sizes_and_shapes_get_a_mask_of_their_shape():
    torch.manual_seed(0)
    for shape in [(1,), (3,), (5, 7), (2, 3, 5, 7)]:
        out = fast_dropout(torch.ones(shape), 0.5)
        assert out.shape == shape


def test_the_module_is_an_nn_dropout_with_the_same_p_and_no_state():
    module = FastDropout(0.25)
    assert isinstance(module, nn.Dropout) and module.p == 0.25
    assert module.state_dict() == {}
    x = torch.randn(4, 4)
    torch.manual_seed(0)
    dropped = module.train()(x)
    assert ((dropped == 0) | torch.isclose(dropped, x / keep_probability(0.25))).all()


def test_it_matches_torchs_dropout_in_distribution():
    """Same mean and variance of the output as F.dropout on the same input."""
    torch.manual_seed(0)
    x = torch.randn(SAMPLES)
    ours, theirs = fast_dropout(x, 0.1), F.dropout(x, 0.1)
    assert ours.mean().item() == pytest.approx(theirs.mean().item(), abs=5e-3)
    assert ours.var().item() == pytest.approx(theirs.var().item(), rel=1e-2)
