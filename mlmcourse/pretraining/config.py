"""The keys of a pretraining run: :class:`PretrainConfig`, one flat set of YAML keys.

Every key is a field that carries its help line, its ``--help`` group and its check
(:func:`mlmcourse.utils.options.option`): ``python -m mlmcourse pretrain --help``, the validation and
the list of valid keys all come from the fields below, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import partial
from typing import Any

from mlmcourse.masking.core import check_ratios
from mlmcourse.model import EncoderConfig, ModernConfig, config_from_dict
from mlmcourse.model.modern import MODERN_FIELDS
from mlmcourse.training.config import EVALUATION, OPTIMISATION, SPEED, TrainingConfig
from mlmcourse.utils.checks import (
    ConfigError,
    check_choice,
    check_int,
    check_non_negative_int,
    check_positive_int,
    check_probability,
    check_seed,
)
from mlmcourse.utils.options import help_texts, option, read_kinds

__all__ = ["PretrainConfig", "HELP", "GROUPS", "config_keys", "TRAINING_MODES"]

TRAINING_MODES = ("mlm", "clm")
MASKING_STRATEGIES = ("token", "whole_word", "span")

# The `--help` groups, in the order it shows them (TrainingConfig brings the last three).
DATA = "objective and data"
MASKING = "masking"
MODEL = "model size"
GROUPS = (DATA, MASKING, MODEL, OPTIMISATION, SPEED, EVALUATION)

_data = partial(option, group=DATA)
_masking = partial(option, group=MASKING)
_model = partial(option, group=MODEL)
_optimisation = partial(option, group=OPTIMISATION)
_evaluation = partial(option, group=EVALUATION)
_speed = partial(option, group=SPEED)


def _switch(name: str, help: str) -> Any:
    """A key for the modern encoder's switch ``name``, with :class:`ModernConfig`'s default
    (BERT's); EncoderConfig checks its value (see ``__post_init__``)."""
    if name not in MODERN_FIELDS:
        raise AssertionError(f"{name!r} is not one of ModernConfig's switches {MODERN_FIELDS}")
    return _model(ModernConfig.__dataclass_fields__[name].default, help)


_training_mode = partial(check_choice, choices=TRAINING_MODES)
_strategy = partial(check_choice, choices=MASKING_STRATEGIES)
_at_least_3 = partial(check_int, minimum=3)  # [CLS], one token, [SEP]


@dataclass
class PretrainConfig(TrainingConfig):
    """Everything a pretraining run needs, as one flat set of YAML keys (see :data:`HELP`)."""

    training_mode: str = _data(
        "mlm", "mlm (masked LM) or clm (causal LM: the CLM vs MLM chapter)", _training_mode
    )
    dataset: str | list[str] = _data(
        "world",
        "world (the course's generated corpus), english (WikiText-2's articles we can reach, "
        "split by article: mlmcourse.data.english), wikitext2, or a path to a UTF-8 text file with "
        "one text per line, or a YAML list of such paths, read in order as one text (the last "
        "5% of lines are the validation split)",
    )
    tokenizer: str = _data(
        "word",
        "word (word-level, trained on the training split), wordpiece (trained), or a path to a "
        "tokenizer.json / vocab.txt",
    )
    vocab_size: int = _data(
        8000,
        "vocabulary size when the tokenizer is trained here (upper bound for word)",
        check_positive_int,
    )
    lowercase: bool = _data(
        False,
        "with tokenizer: wordpiece, lowercase (and strip accents) before splitting, as "
        "bert-base-uncased does: fewer pieces to learn from little text",
    )
    max_length: int = _data(
        64,
        "longest sequence in tokens, [CLS] and [SEP] included (longer is truncated); also the "
        "model's max_position_embeddings",
        _at_least_3,
    )
    mlm_probability: float = _masking(
        0.15, "share of tokens selected for prediction", check_probability
    )
    mask_replace_prob: float = _masking(
        0.8, "of the selected tokens, share replaced by [MASK]", check_probability
    )
    random_replace_prob: float = _masking(
        0.1,
        "of the selected tokens, share replaced by a random token (the rest stay unchanged)",
        check_probability,
    )
    masking_strategy: str = _masking(
        "token", "token, whole_word (all pieces of a word together) or span", _strategy
    )
    # The model's keys are checked by EncoderConfig (see __post_init__).
    hidden_size: int = _model(128, "width of every token vector")
    num_hidden_layers: int = _model(2, "number of Transformer layers")
    num_attention_heads: int = _model(4, "attention heads per layer (must divide hidden_size)")
    intermediate_size: int = _model(512, "width of the feed-forward layer")
    hidden_dropout_prob: float = _model(
        0.1, "dropout on embeddings and layer outputs during training"
    )
    attention_probs_dropout_prob: float = _model(
        0.1, "dropout on attention probabilities during training"
    )
    # The modern encoder's switches (all but the rotary thetas): names and defaults are
    # ModernConfig's, BERT's architecture when all are at their defaults.
    pre_layer_norm: bool = _switch(
        "pre_layer_norm", "true for a pre-LayerNorm Transformer (easier to train deep)"
    )
    position_embedding_type: str = _switch(
        "position_embedding_type",
        "absolute (BERT's learned position vectors) or rotary (the modern-encoder chapter)",
    )
    ffn_type: str = _switch(
        "ffn_type", "mlp (BERT's), or the gated geglu or swiglu (the modern-encoder chapter)"
    )
    norm_type: str = _switch(
        "norm_type", "layernorm (BERT's) or rmsnorm (the modern-encoder chapter)"
    )
    bias: bool = _switch(
        "bias", "false: no bias in any projection or norm (the modern-encoder chapter)"
    )
    local_attention: int = _switch(
        "local_attention",
        "a window of tokens for local-attention layers, 0 for none (the modern-encoder chapter)",
    )
    global_attn_every_n_layers: int = _switch(
        "global_attn_every_n_layers",
        "with local_attention, every n-th layer (the first included) stays global",
    )
    init_from: str = _model(
        "",
        "continue pretraining from this checkpoint's weights and tokenizer (a path, the name "
        "of a shipped checkpoint such as world, or minilm: the real MiniLM encoder with its "
        "fitted MLM head); the model keys are then taken from it",
    )
    batch_size: int = _optimisation(
        32, "sequences per micro-batch (per process)", check_positive_int
    )
    eval_batch_size: int = _evaluation(64, "sequences per validation batch", check_positive_int)
    eval_seed: int = _evaluation(
        1234,
        "seed of the fixed validation masks (the same for every evaluation)",
        check_seed,
    )
    eval_texts: int = _evaluation(
        0,
        "score the first N validation texts only (0: all of them); a quick look at a run whose "
        "validation set is large",
        check_non_negative_int,
    )
    output_dir: str = _evaluation("", "where checkpoints are written (empty: nowhere)")
    resume_from_checkpoint: str = _evaluation(
        "", "a training checkpoint to continue exactly where it stopped"
    )
    device: str = _optimisation("", "cpu, cuda, mps, or empty for the best available")
    packing: bool = _speed(
        False,
        "pack several texts into each row of max_length tokens, each attending only to itself "
        "(less padding, the same per-text computation); masked LM only",
    )
    scale_lr_with_world_size: bool = _speed(
        False,
        "under torchrun, multiply learning_rate by the number of processes (the linear scaling "
        "rule for a global batch that grows with them)",
    )

    def __post_init__(self) -> None:
        read_kinds(self)  # first: it also reads `1e-3` (a string to PyYAML) as a number
        super().__post_init__()  # every field's own check
        check_ratios(self.mlm_probability, self.mask_replace_prob, self.random_replace_prob)
        if self.packing and self.training_mode != "mlm":
            raise ConfigError(
                "packing: true is for training_mode: mlm; a causal LM would also need its "
                "shifted targets cut at each text's end (set packing: false)"
            )
        if not self.init_from:  # the model's keys, checked now rather than after the data loads
            encoder = self.encoder_config(vocab_size=self.vocab_size, pad_token_id=0)
            if (self.packing or self.unpad) and type(encoder) is not EncoderConfig:
                raise ConfigError(
                    "packing and unpad run on BERT's encoder (the speed path); the modern "
                    "encoder's switches train padded: set packing: false and unpad: false"
                )

    def encoder_config(self, *, vocab_size: int, pad_token_id: int) -> EncoderConfig:
        """The config of a fresh model for this config: BERT's :class:`~mlmcourse.model.EncoderConfig`,
        or a :class:`~mlmcourse.model.ModernConfig` when a modern switch is on."""
        return config_from_dict(
            dict(
                vocab_size=vocab_size,
                hidden_size=self.hidden_size,
                num_hidden_layers=self.num_hidden_layers,
                num_attention_heads=self.num_attention_heads,
                intermediate_size=self.intermediate_size,
                max_position_embeddings=self.max_length,
                hidden_dropout_prob=self.hidden_dropout_prob,
                attention_probs_dropout_prob=self.attention_probs_dropout_prob,
                pad_token_id=pad_token_id,
                is_causal=self.training_mode == "clm",
                # the modern encoder's switches that a pretraining config has
                **{key: getattr(self, key) for key in MODERN_FIELDS if hasattr(self, key)},
            )
        )

    def training_config(self) -> TrainingConfig:
        """The subset :func:`~mlmcourse.training.train` uses."""
        return TrainingConfig.from_dict(self.to_dict())


# One line per key: `python -m mlmcourse pretrain --help` prints these.
HELP: dict[str, str] = help_texts(PretrainConfig)


def config_keys() -> list[str]:
    """Every valid YAML key of a pretraining config, in documentation order."""
    return [f.name for f in fields(PretrainConfig)]
