"""What every task head shares: it starts from a pretrained encoder.

A head (masked LM, causal LM, token classification, sentence classification, question
answering) is a :class:`~mlmcourse.model.BertModel` called ``bert`` plus a few new layers. Fine-tuning starts
from pretrained encoder weights and only the new layers start at random. :func:`encoder_state`
takes the encoder from whatever the learner has (a ``BertModel``, an MLM model, a state dict),
and :func:`load_encoder_state` copies it strictly into a new head.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import torch
from torch import nn

from mlmcourse.checkpoint import load_encoder
from mlmcourse.checkpoint.weights import BENIGN_KEYS, load_state_strict, split_encoder_state
from mlmcourse.model import BertModel, EncoderConfig, EncoderOutput, ModernBertModel
from mlmcourse.utils.checks import ConfigError, check_int

__all__ = [
    "ClassifierHead",
    "EncoderHead",
    "Labels",
    "encoder_state",
    "label_arguments",
    "label_names",
    "refuse_head_keys",
    "load_encoder_state",
]

Head = TypeVar("Head", bound="EncoderHead")

Labels = Mapping[int, str] | Sequence[str]
"""Label names: an ``id2label`` dict, a list in id order, or a ``LabelVocab`` (iterable)."""


def encoder_state(
    encoder: nn.Module | Mapping[str, torch.Tensor], config: EncoderConfig | None = None
) -> tuple[EncoderConfig, dict[str, torch.Tensor]]:
    """``(config, bare encoder state dict)`` of a pretrained encoder.

    ``encoder`` is a :class:`BertModel` (or a model holding one as ``.bert``, such as an MLM
    model), or a state dict with ``transformers`` names, either bare (``embeddings.…``) or
    prefixed ``bert.`` as in a whole MLM checkpoint (its ``cls.*`` head is then left out). A
    state dict needs ``config``.
    """
    if isinstance(encoder, nn.Module):
        encoder = getattr(encoder, "bert", encoder)
        if not isinstance(encoder, BertModel | ModernBertModel):
            raise TypeError(
                f"expected a BertModel (or a model with .bert), got {type(encoder).__name__}"
            )
        config = copy.deepcopy(encoder.config) if config is None else config
        state = encoder.state_dict()
    elif isinstance(encoder, Mapping):
        if config is None:
            raise ValueError(
                "loading from a state dict needs the encoder's config=EncoderConfig(...)"
            )
        state = dict(encoder)
    else:
        raise TypeError(
            f"encoder must be a BertModel or a state dict, got {type(encoder).__name__}"
        )
    return config, split_encoder_state(state)[0]  # an MLM checkpoint's head is left out


def load_encoder_state(bert: BertModel, state: Mapping[str, torch.Tensor]) -> BertModel:
    """Copy a pretrained encoder's weights into a head's ``bert``, strictly.

    A head without a pooler ignores the one that comes along. A head with one (sentence
    classification) takes the encoder's; an encoder pretrained with MLM alone has none, and
    then the pooler starts at random, like the head's own layers.
    """
    state = dict(state)
    ignore: tuple[str, ...] = BENIGN_KEYS
    if bert.pooler is None:
        ignore += ("pooler.",)
    elif not any(key.startswith("pooler.") for key in state):
        state |= {f"pooler.{k}": v for k, v in bert.pooler.state_dict().items()}
    hint = "does config= describe this encoder?"
    return load_state_strict(bert, state, source="the encoder", ignore=ignore, hint=hint)


class EncoderHead(nn.Module):
    """A task head on ``self.bert``: what the masked LM, token classification, sentence
    classification and question answering share. Subclasses build ``self.bert`` and their
    layers in ``__init__(config, ...)``; :meth:`from_encoder`, :meth:`from_checkpoint` and
    :meth:`encode` are the same for all.

    A head whose ``config.json`` needs keys of its own (a classifier's labels) returns them
    from ``head_config()`` and takes them back as keyword arguments of ``__init__``, so every
    head is saved and reloaded through :mod:`mlmcourse.checkpoint` and :mod:`mlmcourse.heads.auto`.
    """

    def head_config(self) -> dict[str, Any]:
        """The keys this head adds to ``config.json`` (none by default)."""
        return {}

    @classmethod
    def from_head_config(
        cls, config: EncoderConfig, keys: Mapping[str, Any], source: str
    ) -> EncoderHead:
        """A new head from ``config.json``: the encoder's config and :meth:`head_config`'s keys."""
        refuse_head_keys(keys, source)
        return cls(config)

    bert: BertModel

    @property
    def config(self) -> EncoderConfig:
        return self.bert.config

    @property
    def label_classes(self) -> int | None:
        """How many classes a ``labels`` id may name (None: the head takes no class ids);
        :func:`mlmcourse.model.inputs.check_model_inputs` checks them against it."""
        return None

    num_parameters = BertModel.num_parameters  # the same count: each parameter once

    @classmethod
    def from_encoder(
        cls: type[Head],
        encoder: nn.Module | Mapping[str, torch.Tensor],
        *head_args: Any,
        config: EncoderConfig | None = None,
        **head_options: Any,
    ) -> Head:
        """A new head on pretrained encoder weights; only the head's own layers start at random.

        ``encoder`` is a :class:`BertModel` (or a model holding one as ``.bert``, such as an
        MLM model), whose weights are copied, or a state dict with ``transformers`` names,
        either bare (``embeddings.…``) or prefixed ``bert.`` as in a whole MLM checkpoint (its
        ``cls.*`` head is then left out); a state dict needs ``config``
        (:func:`encoder_state`). A head with a pooler takes the encoder's, or starts one at
        random when the encoder has none (:func:`load_encoder_state`). ``head_args`` and
        ``head_options`` are the head's own, as its ``__init__`` takes them after the config
        (``num_labels``, ``id2label``, ``classifier_dropout``, ``class_weights``).
        """
        config, state = encoder_state(encoder, config)
        model = cls(config, *head_args, **head_options)
        load_encoder_state(model.bert, state)
        return model

    @classmethod
    def from_checkpoint(cls, directory: Any, *args: Any, **kwargs: Any) -> Any:
        """Start from the encoder of one of our checkpoint directories (any head's, or an
        encoder's); ``args`` and ``kwargs`` go to ``from_encoder`` (``num_labels``, ...). A
        Hugging Face checkpoint is :func:`mlmcourse.from_pretrained`'s."""
        return cls.from_encoder(load_encoder(directory), *args, **kwargs)

    def encode(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        token_type_ids: torch.Tensor | None,
        **encoder_options: Any,
    ) -> EncoderOutput:
        """The encoder's output for a batch: what every head's ``forward`` reads first.

        ``encoder_options`` go to the encoder: ``output_attentions``, ``output_hidden_states``,
        and on the speed path ``position_ids`` and ``unpad`` (:mod:`mlmcourse.model.speed`).
        """
        return self.bert(input_ids, attention_mask, token_type_ids, **encoder_options)


def label_names(labels: Labels) -> list[str]:
    """Label names in id order, from an ``id2label`` dict, a list or a ``LabelVocab``."""
    if isinstance(labels, Mapping):
        if sorted(labels) != list(range(len(labels))):
            raise ValueError(
                f"id2label must have the keys 0..{len(labels) - 1}, got {sorted(labels)}"
            )
        return [labels[i] for i in range(len(labels))]
    return list(labels)


class ClassifierHead(EncoderHead):
    """A head that scores labels (tokens or whole sequences): its ``config.json`` names them.

    The keys are ``transformers``' (``num_labels``, ``id2label``, ``label2id``,
    ``classifier_dropout``), so its ``from_pretrained`` opens our folder too. JSON keys are
    strings, so ``id2label`` is ``{"0": "O", ...}`` as in any Hub model.
    """

    num_labels: int
    id2label: dict[int, str] | None
    dropout: nn.Dropout

    @property
    def label_classes(self) -> int | None:
        return self.num_labels if self.num_labels > 1 else None  # 1: regression, a number

    def head_config(self) -> dict[str, Any]:
        keys: dict[str, Any] = {"num_labels": self.num_labels, "classifier_dropout": self.dropout.p}
        if self.id2label is not None:
            keys["id2label"] = {str(i): name for i, name in self.id2label.items()}
            keys["label2id"] = {name: i for i, name in self.id2label.items()}
        return keys

    @classmethod
    def from_head_config(
        cls, config: EncoderConfig, keys: Mapping[str, Any], source: str
    ) -> EncoderHead:
        return cls(config, **label_arguments(keys, source))


def refuse_head_keys(keys: Mapping[str, Any], source: str) -> None:
    """A model without labels refuses label keys: they would be silently dropped."""
    if keys:
        raise ConfigError(
            f"{source} has unknown key(s) {sorted(keys)} for this architecture; were the "
            f"architectures of config.json edited by hand?"
        )


def label_arguments(keys: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A classifier's ``__init__`` arguments back from the keys :meth:`ClassifierHead.head_config` wrote."""
    if "num_labels" not in keys:
        raise ConfigError(
            f"{source}: key num_labels is missing; a classifier needs num_labels >= 1"
        )
    num_labels = check_int(keys["num_labels"], f"{source}: a classifier's num_labels", minimum=1)
    arguments: dict[str, Any] = {
        "num_labels": num_labels,
        "classifier_dropout": keys.get("classifier_dropout"),
    }
    id2label = keys.get("id2label")
    if id2label is None:
        return arguments
    expected = [str(i) for i in range(num_labels)]
    if not isinstance(id2label, Mapping) or set(id2label) != set(expected):
        raise ConfigError(
            f"{source}: id2label must name each of the {num_labels} labels once, with the keys "
            f"'0'..'{num_labels - 1}'; got {id2label!r:.200}"
        )
    names = [id2label[key] for key in expected]
    label2id = {name: i for i, name in enumerate(names)}
    if keys.get("label2id", label2id) != label2id:
        raise ConfigError(f"{source}: label2id contradicts id2label; was it edited by hand?")
    arguments["id2label"] = dict(enumerate(names))
    return arguments
