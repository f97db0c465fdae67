"""The MLM explainer: one training step traced, drawn in stages, live and static."""

from __future__ import annotations

import math

import pytest
import torch

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.viz.explainer import STAGES, explainer_html, mlm_explainer, trace_mlm_step
from tests.tiny import tiny_encoder_config

SENTENCE = "the cat sat on the mat ."


@pytest.fixture
def model(world_tokenizer):
    torch.manual_seed(0)
    return BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size)).train()


def test_the_trace_records_the_step_and_leaves_the_model_alone(model, world_tokenizer):
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trace = trace_mlm_step(model, world_tokenizer, SENTENCE, mlm_probability=0.4, seed=3)
    assert model.training and all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    n = len(trace.tokens)
    assert len(trace.ids) == len(trace.shown) == len(trace.outcomes) == n
    assert trace.tokens[0] == "[CLS]" and trace.outcomes[0] == "special"
    assert trace.targets and all(
        trace.outcomes[p] in ("mask", "random", "kept") for p in trace.targets
    )
    others = set(range(n)) - set(trace.targets)
    assert all(trace.outcomes[p] in ("unselected", "special") for p in others)
    assert len(trace.top) == len(trace.target_probability) == len(trace.targets)
    assert all(len(top) == 3 for top in trace.top)
    mean = -sum(math.log(p) for p in trace.target_probability) / len(trace.targets)
    assert trace.loss == pytest.approx(mean, rel=1e-4)  # the loss is over the targets only
    assert trace.loss_after < trace.loss  # one small gradient step on it lowers it
    again = trace_mlm_step(model, world_tokenizer, SENTENCE, mlm_probability=0.4, seed=3)
    assert again == trace  # seeded: the same mask, the same numbers


def test_the_loss_is_the_models_own(model, world_tokenizer):
    trace = trace_mlm_step(model, world_tokenizer, SENTENCE, mlm_probability=0.4, seed=1)
    shown = torch.tensor([world_tokenizer.convert_tokens_to_ids(trace.shown)])
    labels = torch.full_like(shown, -100)
    labels[0, trace.targets] = torch.tensor([trace.ids[p] for p in trace.targets])
    with torch.no_grad():
        loss = model.eval()(shown, labels=labels).loss
    assert trace.loss == pytest.approx(float(loss), abs=1e-5)


def test_stages_add_up_and_bad_input_is_refused(model, world_tokenizer):
    trace = trace_mlm_step(model, world_tokenizer, SENTENCE, seed=0)
    pages = [explainer_html(trace, stage) for stage in range(1, 6)]
    for k, page in enumerate(pages):
        assert STAGES[k] in page and all(s not in page for s in STAGES[k + 1 :])
    assert "[MASK]" not in pages[0] and "label -100" not in pages[0]
    assert f"{trace.loss:.3f}" in pages[3] and "add nothing to the loss" in pages[3]
    assert f"{trace.loss_after:.3f}" in pages[4]
    with pytest.raises(ValueError, match=r"stage must be in \[1, 5\], got 6"):
        explainer_html(trace, 6)
    with pytest.raises(ValueError, match="non-empty sentence"):
        trace_mlm_step(model, world_tokenizer, "   ")


def test_the_explainer_view_is_the_same_drawing_live_and_static(model, world_tokenizer):
    torch.manual_seed(1)
    other = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size))
    view = mlm_explainer({"a": model, "b": other}, world_tokenizer, [SENTENCE, "a dog ."], draws=2)
    assert [len(c.options) for c in view.controls] == [2, 2, 2, 5]
    states = view.states()
    assert len(states) == 2 * 2 * 2 * 5
    trace = trace_mlm_step(other, world_tokenizer, "a dog .", seed=1)
    assert states[-1] == explainer_html(trace, 5)  # sentence 2, checkpoint b, mask 2, stage 5
    live = view.widget()
    assert live.children[1].value == states[0]
    with pytest.raises(ValueError, match="at least one checkpoint and one sentence"):
        mlm_explainer({}, world_tokenizer, [SENTENCE])
    with pytest.raises(ValueError, match="draws must be at least 1"):
        mlm_explainer({"a": model}, world_tokenizer, [SENTENCE], draws=0)
