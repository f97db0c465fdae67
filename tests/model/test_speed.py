"""The speed path (mlmcourse.model.speed): unpadded and packed, the real tokens get what the
padded path gives them."""

import pytest
import torch

from mlmcourse.heads import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from mlmcourse.heads.question_answering import span_loss
from mlmcourse.model import BertModel, ModernBertModel, ModernConfig
from mlmcourse.model.dropout import FastDropout, keep_mask, keep_probability
from mlmcourse.model.speed import (
    SpeedBertModel,
    SpeedSelfAttention,
    Unpadding,
    has_speed_path,
    speed_path,
)
from mlmcourse.training import TrainingConfig
from tests.tiny import tiny_encoder_config, transformers_twin

LENGTHS = [9, 4, 12, 1, 7]  # uneven rows, one of a single token, one with no padding


def padded_batch(vocab_size: int = 60, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random ids in rows of ``LENGTHS`` tokens, padded with id 0 to the longest."""
    generator = torch.Generator().manual_seed(seed)
    width = max(LENGTHS)
    mask = (torch.arange(width)[None, :] < torch.tensor(LENGTHS)[:, None]).long()
    ids = torch.randint(1, vocab_size, (len(LENGTHS), width), generator=generator) * mask
    return ids, mask


def test_unpad_gathers_the_real_tokens_in_order_and_pad_puts_them_back():
    ids, mask = padded_batch()
    unpadding = Unpadding.from_mask(mask)
    tokens = unpadding.unpad(ids)
    assert unpadding.num_tokens == sum(LENGTHS)
    assert torch.equal(tokens, torch.cat([row[:n] for row, n in zip(ids, LENGTHS, strict=True)]))
    assert torch.equal(unpadding.pad(tokens), ids)  # the padding comes back as zeros (id 0)
    hidden = torch.randn(*ids.shape, 3)
    back = unpadding.pad(unpadding.unpad(hidden))
    assert torch.equal(back[mask.bool()], hidden[mask.bool()])
    assert not back[~mask.bool()].any()


def test_pad_heads_gives_each_heads_padded_rows_first_and_unpad_heads_inverts_it():
    _, mask = padded_batch()
    unpadding = Unpadding.from_mask(mask)
    tokens = torch.randn(unpadding.num_tokens, 6 * 4)  # six heads of size four, side by side
    padded = unpadding.pad_heads(tokens, 6)  # (6, B, T, 4)
    batch, width = mask.shape
    expected = unpadding.pad(tokens).view(batch, width, 6, 4).permute(2, 0, 1, 3)
    assert torch.equal(padded, expected) and padded.is_contiguous()
    assert torch.equal(unpadding.unpad_heads(padded), tokens)


@pytest.mark.parametrize(
    "switches", [{}, {"is_causal": True}, {"hidden_act": "relu"}], ids=["bert", "causal", "relu"]
)
def test_unpadded_hidden_states_equal_the_padded_path_on_real_tokens(switches):
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config(**switches), add_pooling_layer=True).eval()
    ids, mask = padded_batch()
    token_types = (torch.arange(ids.shape[1]) >= 3).long().expand_as(ids) * mask
    kwargs = dict(output_hidden_states=True, output_attentions=True)
    with speed_path(model):
        padded = model(ids, mask, token_types)
        unpadded = model(ids, mask, token_types, unpad=True)
        # every layer's states and attention: from rows, the padded path's
        both = (
            model(ids, mask, token_types, **kwargs),
            model(ids, mask, token_types, unpad=True, **kwargs),
        )
    real = mask.bool()
    assert torch.allclose(
        padded.last_hidden_state[real], unpadded.last_hidden_state[real], atol=1e-5
    )
    assert not unpadded.last_hidden_state[~real].any()  # padding: zeros, never computed
    assert torch.allclose(padded.pooler_output, unpadded.pooler_output, atol=1e-5)
    for a, b in zip(
        both[0].hidden_states + both[0].attentions,
        both[1].hidden_states + both[1].attentions,
        strict=True,
    ):
        assert torch.equal(a, b)


def classes(model: torch.nn.Module) -> list[type]:
    return [type(m) for m in model.modules()]


def test_the_speed_path_is_the_same_module_and_weights_for_the_block_only():
    model = BertForMaskedLM(tiny_encoder_config())
    encoder, weights, before = model.bert, dict(model.state_dict()), classes(model)
    with speed_path(model) as fast:
        assert fast is model and model.bert is encoder
        assert isinstance(model.bert, SpeedBertModel)
        assert all(torch.equal(w, weights[n]) for n, w in model.state_dict().items())
        assert model.state_dict().keys() == weights.keys()
        assert has_speed_path(model)
    assert classes(model) == before and type(model.bert) is BertModel
    assert has_speed_path(model) and has_speed_path(BertModel(tiny_encoder_config()))


def test_the_speed_path_gives_the_classes_back_when_its_block_raises():
    model = BertForTokenClassification(tiny_encoder_config(), num_labels=3)
    before = classes(model)
    with pytest.raises(RuntimeError, match="in the block"), speed_path(model):
        assert classes(model) != before
        raise RuntimeError("in the block")
    assert classes(model) == before


def test_a_nested_speed_path_changes_nothing_and_the_outer_one_restores():
    model = BertForTokenClassification(tiny_encoder_config(), num_labels=3)
    before = classes(model)
    with speed_path(model):
        inside = classes(model)
        with speed_path(model) as again:
            assert again is model and classes(model) == inside
        assert classes(model) == inside  # the inner block gave back only what it swapped
        with pytest.raises(ValueError), speed_path(model):
            raise ValueError
        assert classes(model) == inside
    assert classes(model) == before


def test_the_speed_path_draws_every_dropout_with_fewer_random_bits():
    model = BertForTokenClassification(tiny_encoder_config(), num_labels=3)
    dropouts = sum(type(m) is torch.nn.Dropout for m in model.modules())
    with speed_path(model):
        assert sum(type(m) is FastDropout for m in model.modules()) == dropouts  # the head's too
        assert not any(type(m) is torch.nn.Dropout for m in model.modules())
        attentions = [layer.attention.self for layer in model.bert.encoder.layer]
        assert all(type(a) is SpeedSelfAttention for a in attentions)
    assert sum(type(m) is torch.nn.Dropout for m in model.modules()) == dropouts


def test_in_eval_mode_the_speed_path_predicts_what_the_plain_path_does():
    """Dropout is off in eval mode, so the cheaper draws change nothing a prediction gives."""
    torch.manual_seed(0)
    model = BertForTokenClassification(tiny_encoder_config(), num_labels=3).eval()
    ids, mask = padded_batch()
    plain = model(ids, mask).logits
    with speed_path(model):
        assert torch.equal(model(ids, mask).logits, plain)


def test_training_attention_drops_the_probabilities_with_the_cheaper_mask():
    """The speed path's attention in training is softmax(QK^T/sqrt(d) + bias), dropped by
    keep_mask's draws and rescaled, times V: computed by hand with the same seed."""
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config(attention_probs_dropout_prob=0.3)).train()
    attention = model.encoder.layer[0].attention.self
    q, k, v = torch.randn(3, 2, attention.num_attention_heads, 5, attention.attention_head_size)
    bias = torch.zeros(2, 1, 5, 5).masked_fill_(torch.rand(2, 1, 5, 5) < 0.3, -1e9)
    with speed_path(model):
        torch.manual_seed(7)
        context, probs = attention.attend(q, k, v, bias)
        torch.manual_seed(7)
        weights = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias).softmax(-1)
        keep = keep_mask(weights.shape, 0.3, weights.device)
        assert probs is None
        assert torch.allclose(context, (weights * keep / keep_probability(0.3)) @ v, atol=1e-6)
        model.eval()  # evaluation: no dropout, torch's fused kernel, equal to the formula
        context, _ = attention.attend(q, k, v, bias)
        assert torch.allclose(context, weights @ v, atol=1e-5)


def test_the_modern_encoder_has_no_speed_path_and_says_so():
    modern = ModernBertModel(ModernConfig(**tiny_encoder_config().to_dict(), pre_layer_norm=True))
    assert not has_speed_path(modern)
    before = classes(modern)
    with pytest.raises(TypeError, match="unpadding and packing run on BERT's encoder"):
        with speed_path(modern):
            pass
    assert classes(modern) == before  # refused before anything was swapped


def test_unpadding_keeps_packed_rows_apart():
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config()).eval()
    ids = torch.randint(1, 60, (2, 10))
    mask = torch.tensor([[1] * 10, [1] * 6 + [0] * 4])
    positions = torch.tensor([[0, 1, 2, 3, 0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2, 0, 0, 0, 0]])
    with speed_path(model):
        padded = model(ids, mask, position_ids=positions).last_hidden_state
        unpadded = model(ids, mask, position_ids=positions, unpad=True).last_hidden_state
    assert torch.allclose(padded[mask.bool()], unpadded[mask.bool()], atol=1e-5)


def test_every_forward_ends_in_berts_one_encode(monkeypatch):
    """Plain, packed and unpadded: mask -> bias -> layers -> pooler is BertModel.encode; only
    the stack it runs differs (the unpadded one computes on the real tokens)."""
    stacks, encode = [], BertModel.encode

    def recorded(self, *args, **kwargs):
        stacks.append(kwargs.get("stack") is not None)
        return encode(self, *args, **kwargs)

    monkeypatch.setattr(BertModel, "encode", recorded)
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config(), add_pooling_layer=True).eval()
    ids, mask = padded_batch()
    one_text_a_row = torch.arange(ids.shape[1]).expand_as(ids)
    with torch.no_grad():
        plain = model(ids, mask)
        with speed_path(model):
            unpadded = model(ids, mask, unpad=True)
            packed = model(ids, mask, position_ids=one_text_a_row)
    assert stacks == [False, True, False]
    for out in (unpadded, packed):
        torch.testing.assert_close(out.pooler_output, plain.pooler_output, atol=1e-5, rtol=0)


def test_unpad_without_padding_or_mask_is_the_plain_path():
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config()).eval()
    ids = torch.randint(1, 60, (3, 8))
    plain = model(ids).last_hidden_state
    with speed_path(model):
        assert torch.equal(model(ids, unpad=True).last_hidden_state, plain)
        full = model(ids, torch.ones_like(ids), unpad=True).last_hidden_state
    assert torch.allclose(full, plain, atol=1e-6)


def test_unpadded_equals_transformers_padded_on_real_tokens():
    torch.manual_seed(0)
    ours = BertModel(tiny_encoder_config()).eval()
    theirs = transformers_twin(ours)
    ids, mask = padded_batch()
    with speed_path(ours):
        a = ours(ids, mask, unpad=True).last_hidden_state
    b = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.allclose(a[mask.bool()], b[mask.bool()], atol=1e-5)


def _head_outputs(model, ids, mask, **labels):
    """Loss, the outputs at real positions, and every parameter's gradient, padded or not."""
    results = []
    for unpad in (False, True):
        model.zero_grad()
        with speed_path(model):
            out = model(ids, mask, unpad=unpad, **labels)
        out.loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        results.append((out, grads))
    return results


def _assert_same_gradients(padded, unpadded):
    assert padded.keys() == unpadded.keys()
    for name in padded:
        assert torch.allclose(padded[name], unpadded[name], atol=1e-5), name


def test_token_classification_logits_loss_and_gradients_are_the_same():
    torch.manual_seed(0)
    model = BertForTokenClassification(tiny_encoder_config(), num_labels=5).eval()
    ids, mask = padded_batch()
    labels = torch.randint(0, 5, ids.shape).masked_fill(mask == 0, -100)
    (a, grads_a), (b, grads_b) = _head_outputs(model, ids, mask, labels=labels)
    assert torch.allclose(a.logits[mask.bool()], b.logits[mask.bool()], atol=1e-5)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    _assert_same_gradients(grads_a, grads_b)


def test_sequence_classification_logits_loss_and_gradients_are_the_same():
    torch.manual_seed(0)
    config = tiny_encoder_config()
    ids, mask = padded_batch()
    classifier = BertForSequenceClassification(config, num_labels=3).eval()
    (a, grads_a), (b, grads_b) = _head_outputs(
        classifier, ids, mask, labels=torch.tensor([0, 2, 1, 1, 0])
    )
    assert torch.allclose(a.logits, b.logits, atol=1e-5)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    _assert_same_gradients(grads_a, grads_b)


def test_qa_logits_are_the_same_and_the_unpadded_loss_leaves_padding_out():
    torch.manual_seed(0)
    qa = BertForQuestionAnswering(tiny_encoder_config()).eval()
    ids, mask = padded_batch()
    spans = dict(start_positions=torch.tensor([1, 0, 5, 0, 2]),
                 end_positions=torch.tensor([3, 2, 9, 0, 6]))  # fmt: skip
    (a, _), (b, _) = _head_outputs(qa, ids, mask, **spans)
    real = mask.bool()
    assert torch.allclose(a.start_logits[real], b.start_logits[real], atol=1e-5)
    assert torch.allclose(a.end_logits[real], b.end_logits[real], atol=1e-5)
    # transformers' loss (the padded path) counts padding as a possible answer; unpadded, the
    # softmax is over the real tokens: the padded loss with padding's logits hidden.
    hide = torch.finfo(a.start_logits.dtype).min
    expected = span_loss(a.start_logits.masked_fill(~real, hide),
                         a.end_logits.masked_fill(~real, hide), **spans)  # fmt: skip
    assert torch.allclose(b.loss, expected, atol=1e-6)
    assert (b.start_logits[~real] == hide).all()


def test_masked_lm_logits_loss_and_gradients_are_the_same():
    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config()).eval()
    ids, mask = padded_batch()
    chosen = (torch.rand(ids.shape, generator=torch.Generator().manual_seed(1)) < 0.3) & mask.bool()
    labels = ids.masked_fill(~chosen, -100)
    at_labels = {"labels": labels, "logits_at_labels": True}
    (a, grads_a), (b, grads_b) = _head_outputs(model, ids, mask, **at_labels)
    assert torch.allclose(a.logits, b.logits, atol=1e-5)  # (N, V) at the masked positions
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    _assert_same_gradients(grads_a, grads_b)


def test_training_with_unpad_gives_the_same_losses():
    """TrainingConfig(unpad=True) changes the arithmetic's layout, not the run (dropout off)."""
    from mlmcourse.training import train

    ids, mask = padded_batch()
    labels = torch.randint(0, 5, ids.shape, generator=torch.Generator().manual_seed(2))
    batch = {
        "input_ids": ids,
        "attention_mask": mask,
        "labels": labels.masked_fill(mask == 0, -100),
    }
    losses = []
    for unpad in (False, True):
        torch.manual_seed(0)
        config = tiny_encoder_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        model = BertForTokenClassification(config, num_labels=5, classifier_dropout=0.0)
        run = TrainingConfig(max_steps=4, learning_rate=1e-3, logging_steps=1, unpad=unpad,
                             final_evaluation=False)  # fmt: skip
        result = train(model, lambda step: batch, run, progress=False, log=None)
        losses.append([row["loss"] for row in result.history["train"]])
    assert len(losses[0]) == 4
    assert losses[0] == pytest.approx(losses[1], abs=1e-5)


def test_unpad_must_be_a_bool_where_it_is_set():
    with pytest.raises((TypeError, ValueError), match="unpad"):
        TrainingConfig(max_steps=1, unpad="yes")
