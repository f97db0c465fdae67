"""What every task head shares: it starts from a pretrained encoder.

A head (token classification, sentence classification, question answering) is a
:class:`~mlmcourse.model.BertModel` called ``bert`` plus a few new layers. Fine-tuning starts
from pretrained encoder weights and only the new layers start at random. :func:`encoder_state`
takes the encoder from whatever the learner has (a ``BertModel``, an MLM model, a state dict),
and :func:`load_encoder_state` copies it strictly into a new head.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from mlmcourse.model import BertModel, EncoderConfig, EncoderOutput
from mlmcourse.weights import BENIGN_KEYS, load_state_strict, split_encoder_state

__all__ = ["EncoderHead", "encoder_state", "load_encoder_state"]


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
        if not isinstance(encoder, BertModel):
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
    """A task head on ``self.bert``: what token classification, sentence classification and
    question answering share. Subclasses build ``self.bert`` and their layers, and define
    ``from_encoder``; :meth:`from_pretrained` and :meth:`encode` are the same for all."""

    bert: BertModel

    @property
    def config(self) -> EncoderConfig:
        return self.bert.config

    @classmethod
    def from_pretrained(cls, directory: Any, *args: Any, **kwargs: Any) -> Any:
        """Start from the encoder of a checkpoint directory (an MLM model's or an encoder's);
        ``args`` and ``kwargs`` go to ``from_encoder`` (``num_labels``, ``id2label``, ...)."""
        from mlmcourse.checkpoint import load_encoder

        return cls.from_encoder(load_encoder(directory), *args, **kwargs)

    def encode(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        token_type_ids: torch.Tensor | None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        unpad: bool = False,
    ) -> EncoderOutput:
        """The encoder's output for a batch: what every head's ``forward`` reads first."""
        return self.bert(
            input_ids,
            attention_mask,
            token_type_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            unpad=unpad,
        )
