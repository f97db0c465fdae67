"""Numbers, one rule: every numeric setting takes a Python number, a NumPy scalar
and a 0-d torch tensor alike, and refuses NaN, infinity, bools, strings and tensors of several
numbers with the package's own error, naming the setting.

:data:`SETTINGS` is one row per setting: a new setting is one line.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mlmcourse.heads import (
    BertForCausalLM,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from mlmcourse.masking import (
    MLMCollator,
    mask_spans,
    mask_tokens,
    mask_whole_words,
    span_length_probs,
)
from mlmcourse.masking.causal import CLMCollator
from mlmcourse.model import EncoderConfig, ModernConfig
from mlmcourse.pretraining import load_config
from mlmcourse.tasks.fill_mask import fill_mask
from mlmcourse.tasks.generation import generate, mask_predict, next_word
from mlmcourse.tokenization import WordLevelTokenizer
from mlmcourse.training import FineTuneRecipe, MLMBatches, TrainingConfig, fine_tune
from mlmcourse.training.packing import pack, padding_shares
from mlmcourse.utils.checks import (
    ConfigError,
    WrongTypeError,
    as_scalar,
    check_int,
    check_number,
    check_probability,
)
from mlmcourse.utils.runtime import set_seed
from mlmcourse.viz.explainer import trace_mlm_step
from tests.clear_errors import clear_error
from tests.tiny import TINY_ENCODER, tiny_encoder_config

TEXTS = ["the cat sat on the mat .", "a dog ran in the park .", "the sun is hot ."]


@functools.cache
def _tokenizer() -> WordLevelTokenizer:
    return WordLevelTokenizer.train(TEXTS)


@functools.cache
def _model(kind: type = BertForMaskedLM, **switches: Any) -> torch.nn.Module:
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=_tokenizer().vocab_size, **switches)
    return kind(config).eval()


def _ids() -> torch.Tensor:
    return _tokenizer()(TEXTS)["input_ids"]


def _masked(function: Callable[..., Any], *args: Any, **settings: Any) -> list:
    """``function``'s masked inputs and labels, as lists, with a fixed generator."""
    t = _tokenizer()
    inputs, labels = function(
        *args, mask_token_id=t.mask_token_id, special_ids=t.all_special_ids,
        vocab_size=t.vocab_size, generator=torch.Generator().manual_seed(0), **settings,
    )  # fmt: skip
    return [inputs.tolist(), labels.tolist()]


def _tiny_batch(rows: list[Any], generator: torch.Generator) -> dict[str, torch.Tensor]:
    return MLMCollator(_tokenizer())(rows, generator=generator)


def _fine_tune(seed: Any = 0, **settings: Any) -> tuple[int, list[float]]:
    """The steps and losses of a fine-tuning run of the tiny MLM on three sentences."""
    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=_tokenizer().vocab_size))
    recipe = FineTuneRecipe(**{"steps": 1, "learning_rate": 0.5, **settings})
    run = fine_tune(model, TEXTS, _tiny_batch, recipe=recipe, seed=seed)
    return run.step, [round(row["loss"], 4) for row in run.history["train"]]


INT, FLOAT = "int", "float"


def _each(build: Callable[[str, Any], Any], *rows: tuple[str, Any, str]) -> list[tuple]:
    """One row of :data:`SETTINGS` per ``(setting, valid value, kind)``, built by
    ``build(setting, value)``."""
    return [(name, functools.partial(build, name), valid, kind) for name, valid, kind in rows]


# (setting, build(value) -> what it gives, a valid value, kind). Valid floats are exact in
# bfloat16, so every form of one value is the same number.
SETTINGS: list[tuple[str, Callable[[Any], Any], Any, str]] = [
    *[
        (name, lambda v, n=name: getattr(EncoderConfig(**{**TINY_ENCODER, n: v}), n), valid, INT)
        for name, valid in TINY_ENCODER.items()
    ],
    ("type_vocab_size", lambda v: EncoderConfig(type_vocab_size=v).type_vocab_size, 2, INT),
    ("pad_token_id", lambda v: EncoderConfig(pad_token_id=v).pad_token_id, 3, INT),
    ("local_attention", lambda v: ModernConfig(local_attention=v).local_attention, 4, INT),
    (
        "global_attn_every_n_layers",
        lambda v: ModernConfig(global_attn_every_n_layers=v).global_attn_every_n_layers,
        2,
        INT,
    ),
    *_each(
        lambda name, v: getattr(EncoderConfig(**{name: v}), name),
        *[(name, 0.25, FLOAT) for name in ("hidden_dropout_prob", "attention_probs_dropout_prob")],
        *[(name, 0.25, FLOAT) for name in ("layer_norm_eps", "initializer_range")],
    ),
    *_each(
        lambda name, v: getattr(ModernConfig(**{name: v}), name),
        *[(name, 0.25, FLOAT) for name in ("rope_theta", "local_rope_theta")],
    ),
    *_each(
        lambda name, v: getattr(TrainingConfig(**{name: v}), name),
        *[(name, 2, INT) for name in ("max_steps", "warmup_steps", "gradient_accumulation_steps")],
        *[(name, 2, INT) for name in ("seed", "logging_steps", "eval_steps", "save_steps")],
        *[(name, 0.5, FLOAT) for name in ("learning_rate", "weight_decay", "adam_beta1")],
        *[(name, 0.5, FLOAT) for name in ("adam_beta2", "adam_epsilon", "min_lr_ratio")],
        ("max_grad_norm", 0.5, FLOAT),
    ),
    *_each(
        lambda name, v: getattr(load_config({name: v}), name),
        ("vocab_size", 100, INT),
        ("max_length", 16, INT),
        ("mlm_probability", 0.25, FLOAT),
        ("mask_replace_prob", 0.5, FLOAT),
        ("random_replace_prob", 0.125, FLOAT),
        ("hidden_size", 64, INT),
        ("num_hidden_layers", 1, INT),
        ("num_attention_heads", 2, INT),
        ("intermediate_size", 64, INT),
        ("hidden_dropout_prob", 0.25, FLOAT),
        ("attention_probs_dropout_prob", 0.25, FLOAT),
        ("local_attention", 8, INT),
        ("global_attn_every_n_layers", 2, INT),
        ("batch_size", 2, INT),
        ("eval_batch_size", 2, INT),
        ("eval_seed", 2, INT),
        ("eval_texts", 2, INT),
        ("learning_rate", 0.5, FLOAT),
    ),
    *_each(
        lambda name, v: getattr(MLMCollator(_tokenizer(), **{name: v}), name),
        ("mlm_probability", 0.25, FLOAT),
        ("mask_replace_prob", 0.5, FLOAT),
        ("random_replace_prob", 0.125, FLOAT),
        ("max_length", 16, INT),
        ("min_masked", 2, INT),
        ("seed", 2, INT),
        ("geometric_p", 0.5, FLOAT),
        ("max_span_length", 2, INT),
    ),
    ("max_length", lambda v: CLMCollator(_tokenizer(), max_length=v).max_length, 16, INT),
    *_each(
        lambda name, v: _masked(mask_tokens, _ids(), **{name: v}),
        ("mlm_probability", 0.25, FLOAT),
        ("mask_replace_prob", 0.5, FLOAT),
        ("random_replace_prob", 0.125, FLOAT),
        ("min_masked", 2, INT),
    ),
    (
        "vocab_size",
        lambda v: mask_tokens(_ids(), mask_token_id=1, special_ids=[0], vocab_size=v)[0].shape,
        100,
        INT,
    ),
    (
        "mask_token_id",
        lambda v: mask_tokens(_ids(), mask_token_id=v, special_ids=[0], vocab_size=100)[0].shape,
        2,
        INT,
    ),
    (
        "mlm_probability",
        lambda v: _masked(mask_whole_words, _ids(), _ids(), mlm_probability=v),
        0.5,
        FLOAT,
    ),
    ("geometric_p", lambda v: _masked(mask_spans, _ids(), geometric_p=v), 0.5, FLOAT),
    ("max_span_length", lambda v: _masked(mask_spans, _ids(), max_span_length=v), 2, INT),
    ("geometric_p", lambda v: span_length_probs(v, 4).tolist(), 0.5, FLOAT),
    ("max_span_length", lambda v: span_length_probs(0.5, v).tolist(), 3, INT),
    ("top_k", lambda v: fill_mask(_model(), _tokenizer(), "the [MASK] sat .", top_k=v), 2, INT),
    *[
        (
            name,
            lambda v, n=name: generate(
                _model(BertForCausalLM, is_causal=True),
                _tokenizer(),
                "the",
                do_sample=True,
                generator=torch.Generator().manual_seed(0),
                **{n: v},
            ),
            valid,
            kind,
        )  # fmt: skip
        for name, valid, kind in (
            ("max_new_tokens", 3, INT),
            ("temperature", 0.5, FLOAT),
            ("top_k", 2, INT),
        )
    ],
    (
        "top_k",
        lambda v: next_word(_model(BertForCausalLM, is_causal=True), _tokenizer(), "the", top_k=v),
        2,
        INT,
    ),
    ("num_tokens", lambda v: mask_predict(_model(), _tokenizer(), "the", num_tokens=v), 2, INT),
    ("iterations", lambda v: mask_predict(_model(), _tokenizer(), "the", iterations=v), 2, INT),
    *[
        (
            name,
            lambda v, n=name: (
                trace_mlm_step(_model(), _tokenizer(), "the cat sat .", **{n: v}).loss_after
            ),
            valid,
            kind,
        )  # noqa: E501
        for name, valid, kind in (
            ("seed", 2, INT),
            ("top_k", 2, INT),
            ("learning_rate", 0.5, FLOAT),
        )
    ],
    ("max_length", lambda v: pack([3, 4, 5], v), 8, INT),
    ("window", lambda v: pack([3, 4, 5], 8, window=v), 2, INT),
    ("batches", lambda v: padding_shares(TEXTS, MLMCollator(_tokenizer()), 2, v), 2, INT),
    ("batch_size", lambda v: padding_shares(TEXTS, MLMCollator(_tokenizer()), v, 1), 2, INT),
    *[
        (
            name,
            lambda v, n=name: getattr(MLMBatches(TEXTS, None, **{"batch_size": 2, n: v}), n),
            valid,
            INT,
        )  # noqa: E501
        for name, valid in (("batch_size", 2), ("seed", 2), ("world_size", 2))
    ],
    *[
        (name, lambda v, n=name: _fine_tune(**{n: v}), valid, kind)
        for name, valid, kind in (
            ("steps", 2, INT),
            ("batch_size", 2, INT),
            ("seed", 2, INT),
        )
    ],
    *_each(
        lambda name, v: getattr(FineTuneRecipe(**{"learning_rate": 1.0, name: v}), name),
        ("epochs", 2, INT),
        ("max_length", 8, INT),
        ("doc_stride", 2, INT),
        ("learning_rate", 0.5, FLOAT),
        ("warmup_ratio", 0.25, FLOAT),
        ("weight_decay", 0.25, FLOAT),
        ("unk_rate", 0.25, FLOAT),
    ),
    *[
        (
            name,
            lambda v, n=name, h=head: (
                h(tiny_encoder_config(), **{"num_labels": 2, n: v}).num_labels
            ),
            valid,
            kind,
        )  # noqa: E501
        for head in (BertForSequenceClassification, BertForTokenClassification)
        for name, valid, kind in (("num_labels", 3, INT), ("classifier_dropout", 0.25, FLOAT))
    ],
    ("seed", set_seed, 2, INT),
]

# Refused before the model or data is touched (what a valid value does is their own tests').
REFUSED_ONLY: list[tuple[str, Callable[[Any], Any], str]] = [
    (
        "mlm_probability",
        lambda v: trace_mlm_step(_model(), _tokenizer(), "a", mlm_probability=v),
        FLOAT,
    ),
]


def _forms(valid: Any, kind: str) -> list[Any]:
    """``valid`` as Python, NumPy and torch give it (bfloat16 too for a float)."""
    if kind == INT:
        return [valid, np.int64(valid), np.array(valid, dtype=np.int32), torch.tensor(valid)]
    return [
        valid,
        np.float32(valid),
        np.array(valid),
        torch.tensor(valid),
        torch.tensor(valid, dtype=torch.bfloat16),
    ]


def _bad(valid: Any, kind: str) -> list[Any]:
    """What no numeric setting takes: NaN, infinity, a bool, a string, several numbers (and
    for a count, a float, even a whole one)."""
    bad = [math.nan, math.inf, -math.inf, np.float64("nan"), torch.tensor(math.inf), True]
    bad += [np.bool_(False), torch.tensor(True), "x", torch.tensor([valid, valid]), [valid]]
    if kind == INT:
        bad += [float(valid), torch.tensor(float(valid)), np.float64(valid)]
    return bad


def _same(result: Any) -> Any:
    """A result in a form that compares across runs (JSON-ready: plain Python numbers)."""
    return json.loads(
        json.dumps(result, default=lambda x: x.tolist() if hasattr(x, "tolist") else str(x))
    )  # noqa: E501


@pytest.mark.parametrize(
    ("name", "build", "valid", "kind"),
    SETTINGS,
    ids=lambda x: x if isinstance(x, str) and x not in (INT, FLOAT) else None,
)  # noqa: E501
def test_each_setting_takes_python_numpy_and_torch_numbers_alike(name, build, valid, kind):
    results = [_same(build(value)) for value in _forms(valid, kind)]
    assert all(r == results[0] for r in results), (name, results)


@pytest.mark.parametrize(
    ("name", "build", "valid", "kind"),
    SETTINGS + [(name, build, 1, kind) for name, build, kind in REFUSED_ONLY],
)
def test_each_setting_refuses_nan_infinity_and_non_numbers_by_name(name, build, valid, kind):
    for bad in _bad(valid, kind):
        error = clear_error(build, bad)
        assert isinstance(error, ConfigError | WrongTypeError), (name, bad, error)
        assert name in str(error), (name, bad, error)


# --- the helper itself ------------------------------------------------------------------------


def test_a_stored_number_is_a_plain_python_number():
    config = EncoderConfig(layer_norm_eps=torch.tensor(1e-5), hidden_size=np.int64(768))
    assert type(config.layer_norm_eps) is float and type(config.hidden_size) is int
    json.dumps(config.to_dict())
    training = TrainingConfig(learning_rate=np.float32(0.5), max_steps=torch.tensor(3))
    assert (training.learning_rate, training.max_steps) == (0.5, 3)
    json.dumps(training.to_dict())


def test_as_scalar_unwraps_one_number_and_leaves_the_rest():
    assert as_scalar(torch.tensor(0.5, dtype=torch.bfloat16)) == 0.5
    assert as_scalar(np.array(3)) == 3 and type(as_scalar(np.int8(3))) is int
    assert as_scalar(torch.tensor(True)) is True
    several = torch.tensor([1, 2])
    assert as_scalar(several) is several and as_scalar("0.5") == "0.5"
    meta = torch.tensor(1.0, device="meta")
    assert as_scalar(meta) is meta


def test_a_whole_float_is_no_count_and_several_numbers_say_what_to_do():
    with pytest.raises(WrongTypeError, match="top_k must be an int, got Tensor: tensor"):
        check_int(torch.tensor(3.0), "top_k")
    with pytest.raises(WrongTypeError, match=r"shape \(2,\).*pass one number"):
        check_probability(torch.tensor([0.1, 0.2]), "mlm_probability")
    with pytest.raises(ConfigError, match=r"must be in \[0, 1\] \(a finite number\), got inf"):
        check_probability(10**400, "mlm_probability")  # past any float


_FLOATS = st.floats(allow_nan=True, allow_infinity=True)


def _outcome(check: Callable[..., Any], value: Any, **bounds: Any) -> tuple[str, Any]:
    try:
        return "ok", check(value, "x", **bounds)
    except (ConfigError, WrongTypeError) as error:
        return type(error).__name__, str(error)


@given(_FLOATS, st.sampled_from([{}, {"low": 0.0, "low_open": True}, {"low": 0.0, "high": 1.0}]))
def test_a_float_is_judged_the_same_from_python_numpy_and_torch(x, bounds):
    expected = _outcome(check_number, x, **bounds)
    for form in (np.float64(x), np.array(x), torch.tensor(x, dtype=torch.float64)):
        assert _outcome(check_number, form, **bounds) == expected


@given(st.integers(-(2**63), 2**63 - 1), st.sampled_from([None, 0, 1]))
def test_an_int_is_judged_the_same_from_python_numpy_and_torch(n, minimum):
    expected = _outcome(check_int, n, minimum=minimum)
    for form in (np.int64(n), np.array(n), torch.tensor(n)):
        assert _outcome(check_int, form, minimum=minimum) == expected
