"""The BERT encoder, read top to bottom: masks, attention, the feed-forward block, the stack.

Module and parameter names follow ``transformers.BertModel``, so real BERT checkpoints load with
a near-identity mapping (:mod:`mlmcourse.interop.bert`) and every number can be checked against
the reference implementation. What each name is (layer ``i``'s names start ``encoder.layer.i.``):

====================================  =========================================================
``transformers`` name                 role
====================================  =========================================================
``embeddings.word_embeddings``        the token vectors (the MLM head's decoder shares them)
``embeddings.position_embeddings``    a learned vector for each position
``embeddings.token_type_embeddings``  a learned vector for each segment (sentence A or B)
``embeddings.LayerNorm``              the LayerNorm of their sum
``attention.self.query``              W_Q, (H, H): the queries
``attention.self.key``                W_K, (H, H): the keys
``attention.self.value``              W_V, (H, H): the values
``attention.output.dense``            W_O, (H, H): mixes the heads, side by side, back to H
``attention.output.LayerNorm``        LN1, after the attention block's residual sum
``intermediate.dense``                W1, (I, H): the feed-forward expansion, before GELU
``output.dense``                      W2, (H, I): the feed-forward projection back to H
``output.LayerNorm``                  LN2, after the feed-forward block's residual sum
``pooler.dense``                      the pooler's ``tanh(Dense(h_[CLS]))``
====================================  =========================================================

Shapes: B sequences of T tokens, hidden size H, h heads of d = H / h dimensions each, I the
feed-forward width (``intermediate_size``). Causality is part of the attention mask
(:func:`attention_allowed`), so the layers take one additive bias and nothing else.

This file is BERT and nothing else. Later chapters build on its pieces without switching
anything on inside it: the modern encoder (:mod:`mlmcourse.model.modern`) and the speed path
that computes on the real tokens only (:mod:`mlmcourse.model.speed`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.model.config import ACTIVATIONS, EncoderConfig, EncoderOutput

__all__ = [
    "BertAttention",
    "BertEmbeddings",
    "BertEncoder",
    "BertIntermediate",
    "BertLayer",
    "BertModel",
    "BertOutput",
    "BertPooler",
    "BertSelfAttention",
    "BertSelfOutput",
    "attention",
    "attention_allowed",
    "attention_bias",
    "check_input_shape",
    "eager_attention",
    "init_weights",
    "merge_heads",
    "split_heads",
]


# ----------------------------------------------------------------------------------- masks
def attention_allowed(attention_mask: torch.Tensor, *, is_causal: bool) -> torch.Tensor:
    """Which key each query may attend to, as booleans (True = allowed).

    ``attention_mask`` is the tokenizer's (B, T) 1-for-token, 0-for-padding mask. Padding hides
    *keys* (columns); causality also hides every later position. Returns (B, 1, 1, T), which
    broadcasts over heads and queries, or (B, 1, T, T) when causal.
    """
    allowed = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T)
    if not is_causal:
        return allowed
    seq_len = attention_mask.shape[-1]
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=attention_mask.device).tril()
    # A padded query with every key hidden would get softmax(all -inf) = NaN; letting every
    # position see itself avoids that and changes nothing for real tokens, which always may.
    diagonal = torch.eye(seq_len, dtype=torch.bool, device=attention_mask.device)
    return (allowed & causal) | diagonal  # (B, 1, T, T)


def attention_bias(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The additive bias that goes into the softmax: 0 where allowed, very negative elsewhere.

    The most negative finite number rather than ``-inf``, so a row with nothing allowed still
    gives finite (uniform) probabilities instead of NaN.
    """
    bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return bias.masked_fill_(~allowed, torch.finfo(dtype).min)


def eager_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(Q K^T / sqrt(d) + bias) V``, written out; returns (context, probabilities).

    query/key/value are (B, h, T, d); ``bias`` (:func:`attention_bias`) broadcasts to
    (B, h, T, T): 0 where a query may see a key, very negative where it may not.
    """
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (B, h, T, T)
    if bias is not None:
        scores = scores + bias
    probs = scores.softmax(dim=-1)  # (B, h, T, T)
    context = F.dropout(probs, p=dropout_p) @ value if dropout_p > 0 else probs @ value
    return context, probs  # (B, h, T, d), (B, h, T, T)


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    output_attentions: bool = False,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``softmax(Q K^T / sqrt(d) + bias) V`` in every head: one fused kernel (SDPA), or
    :func:`eager_attention` when the probabilities are asked for (SDPA never forms them)."""
    if output_attentions:
        return eager_attention(query, key, value, bias, dropout_p=dropout_p)
    context = F.scaled_dot_product_attention(query, key, value, attn_mask=bias, dropout_p=dropout_p)
    return context, None


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, H) -> (B, T, h, d) -> (B, h, T, d): a view, no copy."""
    batch, seq_len, hidden = x.shape
    return x.view(batch, seq_len, num_heads, hidden // num_heads).transpose(1, 2)


def merge_heads(context: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d) -> (B, T, h, d) -> (B, T, H): the heads side by side again."""
    batch, _, seq_len, _ = context.shape
    return context.transpose(1, 2).reshape(batch, seq_len, -1)


# ------------------------------------------------------------------------------ embeddings
class BertEmbeddings(nn.Module):
    """Token + learned position + segment embeddings, summed; then LayerNorm and dropout."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        hidden = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, hidden, config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, hidden)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``position_ids`` (B, T) default to 0, 1, 2, ...; ``token_type_ids`` to segment 0."""
        if position_ids is None:
            position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)  # (T,)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        if token_type_ids is None:  # every token in segment 0: add that one vector
            embeddings = embeddings + self.token_type_embeddings.weight[0]
        else:
            embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))  # (B, T, H)


# ------------------------------------------------------------------------------- attention
def project_qkv(hidden_states: torch.Tensor, attention: BertSelfAttention) -> torch.Tensor:
    """The query, key and value projections as one matmul, (..., H) -> (..., 3H).

    One wide matmul runs closer to the CPU's peak than three narrow ones, and the course's
    models were trained with it (three matmuls give the same outputs, but their gradients are
    summed in another order); the weights stay three ``Linear`` layers, named as in every
    BERT checkpoint.
    """
    layers = (attention.query, attention.key, attention.value)
    weight = torch.cat([layer.weight for layer in layers])  # (3H, H)
    bias = None if attention.query.bias is None else torch.cat([layer.bias for layer in layers])
    return F.linear(hidden_states, weight, bias)


class BertSelfAttention(nn.Module):
    """Multi-head self-attention: project to queries, keys and values, attend in every head at
    once, and put the heads side by side again."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.attention_head_size
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout_prob = config.attention_probs_dropout_prob

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        query, key, value = project_qkv(hidden_states, self).chunk(3, dim=-1)  # (B, T, H)
        heads = self.num_attention_heads
        query, key, value = (split_heads(x, heads) for x in (query, key, value))  # (B, h, T, d)
        context, probs = self.attend(query, key, value, bias, output_attentions=output_attentions)
        return merge_heads(context), probs  # (B, T, H), (B, h, T, T) or None

    def attend(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """:func:`attention` with this layer's dropout on the probabilities while training."""
        dropout_p = self.dropout_prob if self.training else 0.0
        return attention(
            query, key, value, bias, output_attentions=output_attentions, dropout_p=dropout_p
        )


class BertSelfOutput(nn.Module):
    """Project back to H; dropout, add the residual, LayerNorm (BERT normalises after the sum).

    After attention the input is already H wide (the heads side by side); :class:`BertOutput`
    is the same block after the feed-forward expansion, from ``intermediate_size``.
    """

    def __init__(self, config: EncoderConfig, in_features: int | None = None) -> None:
        super().__init__()
        self.dense = nn.Linear(in_features or config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)  # (B, T, H)


class BertAttention(nn.Module):
    """Self-attention plus its output block: ``LayerNorm(x + Dropout(Dense(Attention(x))))``."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        context, probs = self.self(hidden_states, bias, output_attentions=output_attentions)
        return self.output(context, hidden_states), probs


# ---------------------------------------------------------------------------- feed-forward
class BertIntermediate(nn.Module):
    """The feed-forward block's expansion, applied to each token alone: H -> I, then GELU."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.intermediate_act_fn(self.dense(hidden_states))  # (B, T, I)


class BertOutput(BertSelfOutput):
    """The feed-forward block's projection back to H; dropout, residual and LayerNorm."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__(config, in_features=config.intermediate_size)


# ---------------------------------------------------------------------------- layer, stack
class BertLayer(nn.Module):
    """One Transformer encoder layer: the attention block, then the feed-forward block."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attention_output, probs = self.attention(
            hidden_states, bias, output_attentions=output_attentions
        )  # (B, T, H): every token has looked at the others
        layer_output = self.output(self.intermediate(attention_output), attention_output)
        return layer_output, probs  # (B, T, H), (B, h, T, T) or None


class BertEncoder(nn.Module):
    """The stack of ``num_hidden_layers`` layers, each taking the one before's output."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> EncoderOutput:
        all_hidden, all_attentions = [hidden_states], []
        for layer in self.layer:
            hidden_states, probs = layer(hidden_states, bias, output_attentions=output_attentions)
            all_hidden.append(hidden_states)
            all_attentions.append(probs)
        return EncoderOutput(
            last_hidden_state=hidden_states,
            hidden_states=tuple(all_hidden) if output_hidden_states else None,
            attentions=tuple(all_attentions) if output_attentions else None,
        )


class BertPooler(nn.Module):
    """BERT's sentence vector for next-sentence prediction: ``tanh(Dense(h_[CLS]))``."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(hidden_states[:, 0]))  # (B, H)


# ----------------------------------------------------------------------------------- model
def check_input_shape(input_ids: torch.Tensor, config: EncoderConfig) -> None:
    """A (batch, seq_len) tensor no longer than the model reads: the one check of a forward.

    Both are known without reading a value back from the device, and a too-long input would
    otherwise fail deep inside the position embedding. Everything else (integer ids inside the
    vocabulary, a mask of 0 and 1) is checked where a batch comes in:
    :func:`mlmcourse.model.inputs.check_model_inputs`.
    """
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        got = tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else input_ids
        raise ValueError(
            f"input_ids must be a (batch, seq_len) tensor of token ids, got {got!r:.80}; "
            f"for one sequence use input_ids.unsqueeze(0)"
        )
    if input_ids.shape[1] > config.max_position_embeddings:
        raise ValueError(
            f"sequence length {input_ids.shape[1]} is longer than max_position_embeddings="
            f"{config.max_position_embeddings}; truncate the input (tokenizer max_length)"
        )


class BertModel(nn.Module):
    """The BERT encoder: embeddings, then the layer stack (then BERT's pooler, if asked).

    ``add_pooling_layer=True`` adds the pooler, needed to load or export checkpoints that carry
    ``pooler.*`` weights exactly; pretraining with MLM alone does not use it.
    """

    def __init__(self, config: EncoderConfig, *, add_pooling_layer: bool = False) -> None:
        super().__init__()
        if not isinstance(config, EncoderConfig):
            raise TypeError(
                f"{type(self).__name__} needs an EncoderConfig, got {type(config).__name__}"
            )
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        init_weights(module, std=self.config.initializer_range)

    def get_input_embeddings(self) -> nn.Embedding:
        """The token vectors (an MLM head's decoder shares them)."""
        return self.embeddings.word_embeddings

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> EncoderOutput:
        """Encode a batch: ``input_ids`` (B, T); ``attention_mask`` 1 for tokens, 0 for padding."""
        check_input_shape(input_ids, self.config)
        hidden_states = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        if attention_mask is None and self.config.is_causal:  # no padding, but a future to hide
            attention_mask = torch.ones_like(input_ids)
        allowed = None  # no mask: every token sees every other
        if attention_mask is not None:
            allowed = attention_allowed(attention_mask, is_causal=self.config.is_causal)
        return self.encode(
            hidden_states, allowed, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )  # fmt: skip

    def encode(
        self,
        hidden_states: torch.Tensor,
        allowed: torch.Tensor | None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        stack: Callable[..., EncoderOutput] | None = None,
    ) -> EncoderOutput:
        """Embedded tokens through the layers, then the pooler; ``allowed`` becomes one bias for
        every layer. ``stack`` runs the layers: :attr:`encoder` unless given (the speed path
        gives one that computes on the real tokens only)."""
        bias = None if allowed is None else attention_bias(allowed, hidden_states.dtype)
        stack = self.encoder if stack is None else stack
        output = stack(
            hidden_states, bias, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )  # fmt: skip
        if self.pooler is not None:
            output.pooler_output = self.pooler(output.last_hidden_state)  # (B, H)
        return output

    def num_parameters(self) -> int:
        """How many numbers the model learns (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())


def init_weights(module: nn.Module, *, std: float) -> None:
    """BERT's initialisation of one module: N(0, std) weights, zero biases, unit norms."""
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=std)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, nn.Embedding) and module.padding_idx is not None:
        with torch.no_grad():  # the [PAD] vector starts (and stays) at zero
            module.weight[module.padding_idx].zero_()
    if isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
