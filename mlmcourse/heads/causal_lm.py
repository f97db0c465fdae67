"""The causal-LM head: the masked-LM model with causal attention and next-token targets.

A causal LM (GPT's objective) predicts every token from the tokens *before* it. On our
encoder that takes two changes and no new layer: ``EncoderConfig(is_causal=True)`` lets
position ``t`` attend to ``<= t`` only, and every position's target is the *next* token
(:func:`shift_labels`). The head is the same transform and tied decoder as
:class:`~mlmcourse.heads.masked_lm.BertForMaskedLM` (Hugging Face's ``BertLMHeadModel`` uses the
very same ``cls.predictions`` module), which is what makes the CLM-vs-MLM comparison fair.
"""

from __future__ import annotations

import torch

from mlmcourse.heads.masked_lm import BertForMaskedLM, MaskedLMOutput
from mlmcourse.model import EncoderConfig
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = ["BertForCausalLM", "CausalLMOutput", "shift_labels"]


def shift_labels(labels: torch.Tensor) -> torch.Tensor:
    """The target of each position: the *next* token's label, ``-100`` after the last one.

    ``labels`` (B, T) -> (B, T): ``out[:, t] = labels[:, t + 1]`` and ``out[:, -1] = -100``. So
    the first token (``[CLS]``, our beginning-of-sequence) is never a target and the last real
    token (``[SEP]``, our end-of-sequence) is: the model learns where a sentence ends.
    """
    ignore = torch.full_like(labels[:, :1], IGNORE_INDEX)  # (B, 1)
    return torch.cat([labels[:, 1:], ignore], dim=1)


class CausalLMOutput(MaskedLMOutput):
    """What :class:`BertForCausalLM` returns: the masked LM's fields, under Hugging Face's name.

    ``logits``: ``(B, T, V)``, where row ``t`` is the distribution of the token at ``t + 1``;
    with ``logits_at_labels=True``, only the positions that have a next-token target, ``(N, V)``
    in row-major order (the order of ``shift_labels(labels) != -100``).
    """


class BertForCausalLM(BertForMaskedLM):
    """The encoder with causal attention plus the tied LM head; next-token loss.

    :class:`~mlmcourse.heads.masked_lm.BertForMaskedLM` with one method overridden,
    :meth:`targets`: only the attention mask and the targets differ, which is what makes the
    chapter's comparison fair. ``config.is_causal`` must be True: a bidirectional encoder trained on
    next-token targets would simply copy the next token, which it can see.
    """

    def __init__(self, config: EncoderConfig) -> None:
        if isinstance(config, EncoderConfig) and not config.is_causal:
            raise ValueError(
                "BertForCausalLM needs EncoderConfig(is_causal=True): with bidirectional "
                "attention each position sees the token it must predict. Use "
                "dataclasses.replace(config, is_causal=True)"
            )
        super().__init__(config)

    output_type = CausalLMOutput

    def targets(self, labels: torch.Tensor) -> torch.Tensor:
        """Position ``t`` predicts token ``t + 1``: the labels shifted left."""
        return shift_labels(labels)
