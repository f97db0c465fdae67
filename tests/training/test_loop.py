"""The training loop's parts: param groups, schedules, evaluation, accumulation, divergence."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from mlmcourse.training import (
    MLMBatches,
    TrainingConfig,
    TrainingDivergedError,
    autocast_context,
    build_optimizer,
    evaluate,
    fixed_eval_batches,
    get_scheduler,
    lr_multiplier,
    param_groups,
    train,
)
from tests.tiny_mlm import TinyConfig, TinyMLM, tiny_batch


def _quiet(**kwargs) -> TrainingConfig:
    defaults = dict(max_steps=5, warmup_steps=1, logging_steps=1, learning_rate=1e-2)
    return TrainingConfig(**{**defaults, **kwargs})


# ---- optimiser and schedule -------------------------------------------------------------------


def test_param_groups_exclude_biases_and_layernorm_from_weight_decay():
    model = TinyMLM(TinyConfig())
    decay, no_decay = param_groups(model, 0.01)
    names = {id(p): n for n, p in model.named_parameters()}
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0
    assert {names[id(p)] for p in decay["params"]} == {"embeddings.weight", "mix.weight"}
    assert {names[id(p)] for p in no_decay["params"]} == {
        "mix.bias",
        "LayerNorm.weight",
        "LayerNorm.bias",
        "decoder.bias",
    }
    # The tied decoder weight is the embedding matrix: it is optimised once, not twice.
    assert sum(len(g["params"]) for g in (decay, no_decay)) == len(list(model.parameters()))


def test_warmup_then_cosine_and_linear_decay():
    kw = dict(warmup_steps=4, total_steps=14)
    assert [lr_multiplier(s, schedule="cosine", **kw) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_multiplier(9, schedule="cosine", **kw) == pytest.approx(0.5)  # halfway down
    assert lr_multiplier(14, schedule="cosine", **kw) == pytest.approx(0.0)
    assert lr_multiplier(9, schedule="linear", **kw) == pytest.approx(0.5)
    assert lr_multiplier(6, schedule="linear", **kw) == pytest.approx(0.8)
    assert lr_multiplier(13, schedule="constant", **kw) == 1.0
    assert lr_multiplier(14, schedule="cosine", min_lr_ratio=0.1, **kw) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="cosine"):
        lr_multiplier(0, schedule="exponential", **kw)


def test_scheduler_drives_the_optimizer_learning_rate():
    model = TinyMLM(TinyConfig())
    opt = build_optimizer(model, _quiet(learning_rate=1.0))
    sched = get_scheduler(opt, "linear", warmup_steps=2, total_steps=6)
    seen = []
    for _ in range(6):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == pytest.approx([0.5, 1.0, 1.0, 0.75, 0.5, 0.25])


def test_training_config_rejects_bad_values_with_clear_messages():
    with pytest.raises(ValueError, match="max_steps must be an int >= 1, got 0"):
        TrainingConfig(max_steps=0)
    with pytest.raises(ValueError, match="lr_scheduler_type must be one of"):
        TrainingConfig(lr_scheduler_type="step")
    with pytest.raises(ValueError, match="learning_rate"):
        TrainingConfig(learning_rate=-1.0)
    with pytest.raises(ValueError, match="precision"):
        TrainingConfig(precision="fp16")
    assert TrainingConfig.from_dict({"max_steps": 3, "not_a_key": 1}).max_steps == 3


def test_autocast_is_fp32_on_cpu_unless_bf16_is_asked_for():
    cpu = torch.device("cpu")
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    with autocast_context(cpu, "auto"):
        assert (a @ b).dtype == torch.float32
    with autocast_context(cpu, "bf16"):
        assert (a @ b).dtype == torch.bfloat16


# ---- evaluation -------------------------------------------------------------------------------


class _Oracle(nn.Module):
    """Predicts token 2 everywhere, so its accuracy is the fraction of labels equal to 2."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(()))
        self.dropout = nn.Dropout(0.5)
        self.saw_training = []

    def forward(self, input_ids, labels, **_):
        self.saw_training.append(self.training)
        logits = torch.zeros(*input_ids.shape, 5) + self.w
        logits[..., 2] = 1.0
        loss = nn.functional.cross_entropy(logits.view(-1, 5), labels.view(-1), ignore_index=-100)
        return SimpleNamespace(loss=loss, logits=logits)


def _batch(labels: list[list[int]]) -> dict:
    labels = torch.tensor(labels)
    return {"input_ids": torch.zeros_like(labels), "labels": labels}


def test_evaluate_weights_accuracy_by_token_not_by_batch():
    # Batch 1: one labelled token, right. Batch 2: four labelled tokens, all wrong.
    batches = [_batch([[2, -100, -100, -100]]), _batch([[3, 3, 3, 3]])]
    model = _Oracle()
    metrics = evaluate(model, batches)
    assert metrics["accuracy"] == pytest.approx(1 / 5)  # the batch mean would say 0.5
    assert metrics["tokens"] == 5
    assert metrics["perplexity"] == pytest.approx(math.exp(metrics["loss"]))
    assert model.saw_training == [False, False] and model.training  # eval mode, then restored


def test_evaluate_skips_batches_without_targets_and_refuses_an_empty_set():
    model = _Oracle()
    ok = evaluate(model, [_batch([[-100, -100]]), _batch([[2, -100]])])
    assert ok["tokens"] == 1 and ok["accuracy"] == 1.0
    with pytest.raises(ValueError, match="no labelled"):
        evaluate(model, [_batch([[-100, -100]])])


# ---- the loop ---------------------------------------------------------------------------------


def test_training_lowers_the_loss_and_records_history():
    torch.manual_seed(0)
    model = TinyMLM(TinyConfig())
    evals = [tiny_batch(10_000 + i) for i in range(4)]
    before = evaluate(model, evals)
    config = _quiet(max_steps=60, warmup_steps=5, logging_steps=10, eval_steps=30)
    result = train(model, tiny_batch, config, eval_batches=evals, progress=False, log=None)
    assert [h["step"] for h in result.history["train"]] == [10, 20, 30, 40, 50, 60]
    assert [h["step"] for h in result.history["eval"]] == [30, 60]
    assert result.final_eval["loss"] < 0.5 * before["loss"]
    assert result.final_eval["accuracy"] > 0.9
    assert result.tokens_seen == 60 * 8 * 10
    assert result.step == 60
    # every row says how far the run was: tokens seen and seconds of training steps so far
    rows = result.history["train"] + result.history["eval"]
    assert [r["tokens"] for r in result.history["train"]] == [s * 80 for s in range(10, 61, 10)]
    assert all(r["tokens"] == r["step"] * 80 for r in rows)
    seconds = [r["seconds"] for r in result.history["train"]]
    assert seconds == sorted(seconds) and 0 < seconds[-1] <= result.train_seconds + 1e-3


def test_gradient_accumulation_matches_one_big_batch():
    def big(i):  # one batch of 16 = micro-batches 2i and 2i+1 concatenated
        a, b = tiny_batch(2 * i), tiny_batch(2 * i + 1)
        return {k: torch.cat([a[k], b[k]]) for k in a}

    config = TinyConfig(hidden_dropout_prob=0.0)
    torch.manual_seed(0)
    m1 = TinyMLM(config)
    m2 = TinyMLM(config)
    m2.load_state_dict(m1.state_dict())
    train(m1, big, _quiet(max_steps=3), progress=False, log=None)
    train(
        m2, tiny_batch, _quiet(max_steps=3, gradient_accumulation_steps=2), progress=False, log=None
    )
    for (name, p1), p2 in zip(m1.named_parameters(), m2.parameters(), strict=True):
        torch.testing.assert_close(p1, p2, atol=1e-5, rtol=1e-4, msg=name)


def test_a_nan_loss_stops_training_and_names_the_step():
    model = TinyMLM(TinyConfig())
    original_forward = model.forward
    calls = []

    def forward(**batch):  # the 4th forward pass (step 4) produces NaN
        out = original_forward(**batch)
        calls.append(1)
        if len(calls) == 4:
            out.loss = out.loss * float("nan")
        return out

    model.forward = forward
    with pytest.raises(TrainingDivergedError, match="at step 4") as info:
        train(model, tiny_batch, _quiet(max_steps=10), progress=False, log=None)
    assert info.value.step == 4
    assert len(info.value.history["train"]) == 3


def test_mlm_batches_are_a_pure_function_of_the_index():
    calls = []

    def collator(texts, generator):
        calls.append(texts)
        return {"texts": texts, "draw": torch.rand(3, generator=generator)}

    texts = [f"s{i}" for i in range(10)]
    batches = MLMBatches(texts, collator, batch_size=4, seed=7)
    first = [batches(i) for i in range(5)]
    again = MLMBatches(texts, collator, batch_size=4, seed=7)
    assert again(3)["texts"] == first[3]["texts"]
    assert torch.equal(again(3)["draw"], first[3]["draw"])
    # Batches 0-1 and the first half of 2 cover one epoch: every text once.
    epoch = first[0]["texts"] + first[1]["texts"] + first[2]["texts"][:2]
    assert sorted(epoch) == sorted(texts)
    # Different masks for different batches (dynamic masking).
    assert not torch.equal(first[0]["draw"], first[1]["draw"])
    # Two ranks split the global batch without overlap.
    r0 = MLMBatches(texts, collator, batch_size=2, seed=7, rank=0, world_size=2)(0)["texts"]
    r1 = MLMBatches(texts, collator, batch_size=2, seed=7, rank=1, world_size=2)(0)["texts"]
    assert sorted(r0 + r1) == sorted(first[0]["texts"]) and not set(r0) & set(r1)
    assert r0 == first[0]["texts"][0::2] and r1 == first[0]["texts"][1::2]
    with pytest.raises(ValueError, match="at least one text"):
        MLMBatches([], collator, batch_size=2)


def test_fixed_eval_batches_mask_once_with_a_fixed_seed():
    def collator(texts, generator):
        return {"n": len(texts), "draw": torch.rand(1, generator=generator)}

    a = fixed_eval_batches([f"t{i}" for i in range(5)], collator, batch_size=2, seed=3)
    b = fixed_eval_batches([f"t{i}" for i in range(5)], collator, batch_size=2, seed=3)
    assert [x["n"] for x in a] == [2, 2, 1]
    assert all(torch.equal(x["draw"], y["draw"]) for x, y in zip(a, b, strict=True))


def test_length_grouped_batches_cover_each_example_once_and_cut_padding():
    from mlmcourse.training import length_grouped_batches

    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(5, 60, (500,), generator=g).tolist()
    batches = length_grouped_batches(lengths, 16, seed=3, epoch=1, group_size=10)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert sorted(len(b) for b in batches)[1:] == [16] * 31  # groups of 160: one short batch
    assert batches == length_grouped_batches(lengths, 16, seed=3, epoch=1, group_size=10)
    assert batches != length_grouped_batches(lengths, 16, seed=3, epoch=2, group_size=10)

    def padded(bs):  # positions a padded batch computes
        return sum(len(b) * max(lengths[i] for i in b) for b in bs)

    order = torch.randperm(500, generator=g).tolist()
    shuffled = [order[i : i + 16] for i in range(0, 500, 16)]
    assert padded(batches) < 0.8 * padded(shuffled)
    with pytest.raises(ValueError, match="at least one example"):
        length_grouped_batches([], 4, seed=0, epoch=0)


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_the_chapters_plain_training_loop_is_train(dropout):
    """book/pretraining.md's teaching loop, executed from the chapter, ends where train ends."""
    from mlmcourse.heads import BertForMaskedLM
    from mlmcourse.training import TrainingConfig, train
    from tests.teaching import teaching_namespace
    from tests.tiny import tiny_encoder_config

    namespace = teaching_namespace("pretraining")
    config = tiny_encoder_config(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)

    def batch(step):
        g = torch.Generator().manual_seed(step)
        ids = torch.randint(5, config.vocab_size, (4, 10), generator=g)
        labels = torch.where(torch.rand(4, 10, generator=g) < 0.3, ids, torch.full_like(ids, -100))
        return {"input_ids": ids, "labels": labels}

    states = []
    for plain in (True, False):
        torch.manual_seed(0)
        model = BertForMaskedLM(config)
        if plain:
            namespace["train_plainly"](model, batch, steps=12, lr=2e-3, warmup=3)
        else:
            recipe = TrainingConfig(max_steps=12, learning_rate=2e-3, warmup_steps=3)
            train(model, batch, recipe, progress=False, log=None)
        states.append(model.state_dict())
    for name, value in states[1].items():
        torch.testing.assert_close(states[0][name], value, atol=1e-6, rtol=1e-5, msg=name)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda b: {**b, "labels": b["labels"][:, :-1]}, "labels must have the shape of input_ids"),
        (lambda b: {**b, "labels": b["labels"].float()}, "labels must hold integer ids"),
        (lambda b: {**b, "input_ids": b["input_ids"].float()}, "input_ids must hold integer ids"),
        (lambda b: {**b, "input_ids": b["input_ids"] + 10_000}, r"vocab_size=\d+\), found id"),
    ],
)
def test_a_bad_batch_is_named_before_the_first_step(change, message):
    """The forward checks only the shape and length; the batch's kinds and values are checked
    on the run's first batch, before a step changes the weights."""
    from mlmcourse.heads import BertForMaskedLM
    from tests.tiny import tiny_encoder_config

    config = tiny_encoder_config()
    model = BertForMaskedLM(config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.randint(5, config.vocab_size, (2, 6), generator=torch.Generator().manual_seed(0))
    batch = {"input_ids": ids, "labels": ids.clone()}
    with pytest.raises(ValueError, match=message):
        train(model, lambda step: change(batch), _quiet(max_steps=2), progress=False, log=None)
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name


def test_the_chapters_plain_assembly_lands_where_pretrain_lands_at_the_same_seed():
    """pretraining.md's cell tagged ``assembly`` (tokenizer, collator, model, the plain loop,
    evaluation), run from the chapter's own source for fewer steps, scores the held-out masks
    exactly as ``pretrain`` at the same seed and steps does."""
    import re
    import time

    from mlmcourse import set_seed
    from mlmcourse.data import world_texts
    from mlmcourse.heads import BertForMaskedLM
    from mlmcourse.masking import MLMCollator
    from mlmcourse.model import EncoderConfig
    from mlmcourse.pretraining import load_config, pretrain
    from mlmcourse.tokenization import WordLevelTokenizer
    from mlmcourse.training import MLMBatches, evaluate, fixed_eval_batches
    from tests.teaching import teaching_cells, teaching_namespace

    (source,) = teaching_cells("pretraining", tag="assembly")
    source, changed = re.subn(r"^steps = 600$", "steps = 60", source, flags=re.M)
    assert changed == 1, "the assembly cell no longer starts with steps = 600"
    namespace = teaching_namespace("pretraining")
    namespace.update(time=time, set_seed=set_seed, world_texts=world_texts, MLMBatches=MLMBatches,
                     WordLevelTokenizer=WordLevelTokenizer, MLMCollator=MLMCollator,
                     EncoderConfig=EncoderConfig, BertForMaskedLM=BertForMaskedLM,
                     evaluate=evaluate, fixed_eval_batches=fixed_eval_batches)  # fmt: skip
    exec(compile(source, "book/pretraining.md (assembly cell)", "exec"), namespace)
    run = pretrain(load_config("world", {"max_steps": 60, "device": "cpu"}), progress=False,
                   log=None)  # fmt: skip
    assert namespace["plain"] == run.result.final_eval
    assert namespace["plain"]["accuracy"] > 0.1  # it learned: the unigram guess scores under 0.1
