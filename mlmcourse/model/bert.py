"""The BERT encoder, written to be read top to bottom: embeddings, attention, layers, the stack.

Module and parameter names follow ``transformers.BertModel`` (``embeddings.word_embeddings``,
``encoder.layer.0.attention.self.query``, ...), so real BERT checkpoints load with a
near-identity mapping (see :mod:`mlmcourse.interop.bert`) and every number can be checked against the
reference implementation.

Attention runs through ``torch.nn.functional.scaled_dot_product_attention`` (one fused kernel)
by default. :func:`eager_attention` is the same computation written out,
``softmax(Q K^T / sqrt(d)) V``; it is used for teaching and whenever the attention
probabilities are asked for (``output_attentions=True``), since the fused kernel never
materialises them. The configuration and output dataclasses live in
:mod:`mlmcourse.model` and are re-exported here.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.model.config import ACTIVATIONS, EncoderConfig, EncoderOutput
from mlmcourse.model.modern import (
    RMSNorm,
    apply_rotary,
    gated_activation,
    rotary_cos_sin,
    sliding_window_allowed,
)
from mlmcourse.model.unpadding import Unpadding
from mlmcourse.utils.checks import check_bool
from mlmcourse.utils.runtime import is_compiling

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
    "attention_allowed",
    "attention_bias",
    "document_ids",
    "eager_attention",
    "is_packed",
    "make_norm",
    "reads_back",
    "mean_pooling",
]


# ----------------------------------------------------------------------------------- masks
def attention_allowed(
    attention_mask: torch.Tensor,
    *,
    is_causal: bool,
    document_ids: torch.Tensor | None = None,
    window: int = 0,
) -> torch.Tensor:
    """Which key each query may attend to, as a boolean matrix (True = allowed).

    ``attention_mask`` is the tokenizer's (B, T) 1-for-token / 0-for-padding mask. Padding
    hides *keys* (columns); causality hides later positions; ``document_ids`` (B, T), for a
    packed row that holds several documents, hides every key of another document (a
    block-diagonal matrix); a ``window`` (local attention, :mod:`mlmcourse.model.modern`) hides keys
    more than ``window // 2`` positions away. Returns (B, 1, T, T) when causal, packed or
    local, else (B, 1, 1, T), which broadcasts over heads and queries.
    """
    allowed = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T)
    if document_ids is not None:  # query i sees key j only within its own document
        allowed = allowed & (document_ids[:, None, :, None] == document_ids[:, None, None, :])
    if not is_causal and document_ids is None and not window:
        return allowed
    seq_len = attention_mask.shape[-1]
    if window:
        allowed = allowed & sliding_window_allowed(seq_len, window, attention_mask.device)
    if is_causal:
        causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=attention_mask.device)
        allowed = allowed & causal.tril()
    # A padded query with every key hidden would get softmax(all -inf) = NaN; letting every
    # position see itself avoids that and changes nothing for real tokens, which always may.
    diagonal = torch.eye(seq_len, dtype=torch.bool, device=attention_mask.device)
    return allowed | diagonal  # (B, 1, T, T)


def document_ids(position_ids: torch.Tensor) -> torch.Tensor:
    """Number the documents of packed rows: a new one starts wherever a position is 0.

    This is the convention of ``transformers``' ``DataCollatorWithFlattening``: positions
    restart at 0 with each document. ``[[0, 1, 2, 0, 1, 0]]`` -> ``[[1, 1, 1, 2, 2, 3]]``.
    """
    return (position_ids == 0).long().cumsum(dim=-1)  # (B, T)


def is_packed(position_ids: torch.Tensor | None) -> bool:
    """Whether some row restarts its positions, i.e. holds more than one document."""
    return position_ids is not None and bool((position_ids[:, 1:] == 0).any())


def reads_back(tensor: torch.Tensor) -> bool:
    """Whether looking at a tensor's values is free: on CPU, outside ``torch.compile``. On a GPU
    every read-back waits for the queued kernels (a sync per step); a compiled graph breaks."""
    return tensor.device.type == "cpu" and not is_compiling()


def attention_bias(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Turn an allowed-matrix into the additive bias that goes into the softmax.

    Blocked entries get the most negative finite number rather than ``-inf``, so a row with
    nothing allowed still gives finite (uniform) probabilities instead of NaN.
    """
    bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return bias.masked_fill_(~allowed, torch.finfo(dtype).min)


def eager_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    is_causal: bool = False,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(Q K^T / sqrt(d) + bias) V``, written out; returns (context, probabilities).

    Shapes: query/key/value (B, heads, T, d); bias broadcastable to (B, heads, T, T).
    ``is_causal`` adds the lower-triangular mask itself (used when there is no bias).
    """
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (B, h, T, T)
    if bias is not None:
        scores = scores + bias
    if is_causal:
        seq_len = scores.shape[-1]
        future = torch.ones(seq_len, seq_len, dtype=torch.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
    probs = scores.softmax(dim=-1)
    context = F.dropout(probs, p=dropout_p) @ value if dropout_p > 0 else probs @ value
    return context, probs  # (B, h, T, d), (B, h, T, T)


def make_norm(config: EncoderConfig) -> nn.Module:
    """The config's normalisation: BERT's LayerNorm, one without bias, or RMSNorm.

    Whatever it is, the module keeps BERT's attribute name ``LayerNorm`` (checkpoint names)."""
    if config.norm_type == "rmsnorm":
        return RMSNorm(config.hidden_size, eps=config.layer_norm_eps)
    return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, bias=config.bias)


# ------------------------------------------------------------------------------ embeddings
class BertEmbeddings(nn.Module):
    """Token + learned position + segment embeddings, then LayerNorm and dropout.

    With rotary positions there are no position vectors (attention rotates queries and keys
    instead), and with ``type_vocab_size=0`` no segment vectors: the token's vector alone."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(
            config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id
        )
        learned = config.position_embedding_type == "absolute"
        self.position_embeddings = (
            nn.Embedding(config.max_position_embeddings, config.hidden_size) if learned else None
        )
        self.token_type_embeddings = (
            nn.Embedding(config.type_vocab_size, config.hidden_size)
            if config.type_vocab_size
            else None
        )
        self.LayerNorm = make_norm(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``position_ids`` (B, T) defaults to 0, 1, 2, ...; a packed row restarts them per
        document, so each document gets the positions it would have alone."""
        embeddings = self.word_embeddings(input_ids)
        if self.position_embeddings is not None:
            if position_ids is None:
                position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)  # (T,)
            embeddings = embeddings + self.position_embeddings(position_ids)
        if self.token_type_embeddings is not None:  # (ModernBERT has no segments)
            if token_type_ids is None:  # every token in segment 0
                embeddings = embeddings + self.token_type_embeddings.weight[0]
            else:
                embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))  # (B, T, H)


# ------------------------------------------------------------------------------- attention
class BertSelfAttention(nn.Module):
    """Multi-head self-attention: project to queries, keys and values, attend per head, concat."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.attention_head_size
        self.query = nn.Linear(config.hidden_size, config.hidden_size, bias=config.bias)
        self.key = nn.Linear(config.hidden_size, config.hidden_size, bias=config.bias)
        self.value = nn.Linear(config.hidden_size, config.hidden_size, bias=config.bias)
        self.dropout_prob = config.attention_probs_dropout_prob

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        is_causal: bool = False,
        output_attentions: bool = False,
        unpadding: Unpadding | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, H) in and out; with ``unpadding``, (N, H) real tokens in and out, and rows
        of T (with their padding) only for the attention itself. ``rotary`` is the (cos, sin)
        of each position (:func:`mlmcourse.model.modern.rotary_cos_sin`) when positions rotate."""
        # One matmul for the three projections (a wider one runs closer to the CPU's peak);
        # the weights stay three Linear layers, named as in every BERT checkpoint.
        weight = torch.cat([self.query.weight, self.key.weight, self.value.weight])  # (3H, H)
        qkv_bias = None  # (3H,), unless the config has no biases
        if self.query.bias is not None:
            qkv_bias = torch.cat([self.query.bias, self.key.bias, self.value.bias])
        query, key, value = F.linear(hidden_states, weight, qkv_bias).chunk(3, dim=-1)
        if unpadding is not None:  # (N, H) -> (B, T, H): rows again, for attention only
            query, key, value = (unpadding.pad(x) for x in (query, key, value))
        batch, seq_len, hidden = query.shape
        heads = (batch, seq_len, self.num_attention_heads, self.attention_head_size)
        # (B, T, H) -> (B, T, h, d) -> (B, h, T, d): views, no copies
        query, key, value = (x.view(heads).transpose(1, 2) for x in (query, key, value))
        if rotary is not None:  # turn queries and keys by their positions' angles
            query, key = apply_rotary(query, key, *rotary)
        dropout_p = self.dropout_prob if self.training else 0.0
        if output_attentions:
            context, probs = eager_attention(
                query, key, value, bias, is_causal=is_causal, dropout_p=dropout_p
            )
        else:
            context = F.scaled_dot_product_attention(
                query, key, value, attn_mask=bias, dropout_p=dropout_p, is_causal=is_causal
            )
            probs = None
        # (B, h, T, d) -> (B, T, h, d) -> (B, T, H): the heads side by side again
        context = context.transpose(1, 2).reshape(batch, seq_len, hidden)
        return (context if unpadding is None else unpadding.unpad(context)), probs


class BertSelfOutput(nn.Module):
    """Project back to the hidden size; dropout, add the residual, LayerNorm (post-LN).

    After attention the input is already H wide (the heads side by side); :class:`BertOutput`
    is the same block after the feed-forward expansion, from ``intermediate_size``.
    """

    def __init__(self, config: EncoderConfig, in_features: int | None = None) -> None:
        super().__init__()
        self.dense = nn.Linear(
            in_features or config.hidden_size, config.hidden_size, bias=config.bias
        )
        self.LayerNorm = make_norm(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.pre_layer_norm = config.pre_layer_norm

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        hidden_states = self.dropout(self.dense(hidden_states)) + input_tensor
        return hidden_states if self.pre_layer_norm else self.LayerNorm(hidden_states)


class BertAttention(nn.Module):
    """Self-attention plus its output block: ``LayerNorm(x + Dropout(Dense(Attention(x))))``."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)
        self.pre_layer_norm = config.pre_layer_norm

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        is_causal: bool = False,
        output_attentions: bool = False,
        unpadding: Unpadding | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        # pre-LN normalises the sublayer's input with the same LayerNorm module
        normed = self.output.LayerNorm(hidden_states) if self.pre_layer_norm else hidden_states
        context, probs = self.self(
            normed, bias, is_causal=is_causal, output_attentions=output_attentions,
            unpadding=unpadding, rotary=rotary,
        )  # fmt: skip
        return self.output(context, hidden_states), probs


# ---------------------------------------------------------------------------- feed-forward
class BertIntermediate(nn.Module):
    """The feed-forward block's expansion: H -> intermediate_size, then GELU.

    A gated block (``ffn_type`` ``"geglu"`` or ``"swiglu"``) projects to twice the width and
    lets one half gate the other (:func:`mlmcourse.model.modern.gated_activation`)."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.ffn_type = config.ffn_type
        width = config.intermediate_size * (1 if config.ffn_type == "mlp" else 2)
        self.dense = nn.Linear(config.hidden_size, width, bias=config.bias)
        self.intermediate_act_fn = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.ffn_type == "mlp":
            return self.intermediate_act_fn(self.dense(hidden_states))  # (B, T, I)
        return gated_activation(self.dense(hidden_states), self.ffn_type)  # (B, T, I)


class BertOutput(BertSelfOutput):
    """The feed-forward block's projection back to H; dropout, residual and LayerNorm."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__(config, in_features=config.intermediate_size)


# ---------------------------------------------------------------------------- layer, stack
class BertLayer(nn.Module):
    """One Transformer encoder layer: attention block, then feed-forward block.

    ``index`` is the layer's place in the stack: with pre-LN the first layer's input is the
    embeddings' output, already normalised, so it is not normalised again (as in ModernBERT);
    with local attention, :meth:`EncoderConfig.is_local_layer` says which layers are local.
    """

    def __init__(self, config: EncoderConfig, index: int = 0) -> None:
        super().__init__()
        self.attention = BertAttention(config)
        if config.pre_layer_norm and index == 0:
            self.attention.output.LayerNorm = nn.Identity()
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)
        self.pre_layer_norm = config.pre_layer_norm
        self.is_local = config.is_local_layer(index)

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        is_causal: bool = False,
        output_attentions: bool = False,
        unpadding: Unpadding | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attention_output, probs = self.attention(
            hidden_states, bias, is_causal=is_causal, output_attentions=output_attentions,
            unpadding=unpadding, rotary=rotary,
        )  # fmt: skip
        normed = (
            self.output.LayerNorm(attention_output) if self.pre_layer_norm else attention_output
        )
        layer_output = self.output(self.intermediate(normed), attention_output)
        return layer_output, probs  # (B, T, H), (B, h, T, T) or None


class LocalAttention(NamedTuple):
    """What the local-attention layers use instead of the global ones' bias and rotation."""

    bias: torch.Tensor  # (B, 1, T, T): the window (and padding, documents, causality)
    rotary: tuple[torch.Tensor, torch.Tensor] | None  # (cos, sin) at local_rope_theta


class BertEncoder(nn.Module):
    """The stack of ``num_hidden_layers`` layers (plus a final LayerNorm when pre-LN)."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config, i) for i in range(config.num_hidden_layers))
        if config.pre_layer_norm:  # pre-LN leaves the residual stream unnormalised: fix the end
            self.LayerNorm = make_norm(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        is_causal: bool = False,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        unpadding: Unpadding | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
        local: LocalAttention | None = None,
    ) -> EncoderOutput:
        """(B, T, H) hidden states through every layer; (N, H) real tokens with ``unpadding``.

        Local layers take ``local``'s bias and rotation instead of ``bias`` and ``rotary``."""
        all_hidden = [hidden_states] if output_hidden_states else None
        all_attentions = [] if output_attentions else None
        for layer in self.layer:
            layer_bias, layer_rotary = (
                (local.bias, local.rotary) if layer.is_local else (bias, rotary)
            )
            hidden_states, probs = layer(
                hidden_states, layer_bias, is_causal=is_causal,
                output_attentions=output_attentions, unpadding=unpadding, rotary=layer_rotary,
            )  # fmt: skip
            if all_hidden is not None:
                all_hidden.append(hidden_states)
            if all_attentions is not None:
                all_attentions.append(probs)
        if hasattr(self, "LayerNorm"):
            hidden_states = self.LayerNorm(hidden_states)
            if all_hidden is not None:
                all_hidden[-1] = hidden_states
        return EncoderOutput(
            last_hidden_state=hidden_states,
            hidden_states=tuple(all_hidden) if all_hidden is not None else None,
            attentions=tuple(all_attentions) if all_attentions is not None else None,
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
class BertModel(nn.Module):
    """The BERT encoder: embeddings, then the layer stack.

    ``add_pooling_layer=True`` adds BERT's pooler (needed to load or export checkpoints that
    carry ``pooler.*`` weights exactly); pretraining with MLM alone does not use it.
    """

    def __init__(self, config: EncoderConfig, *, add_pooling_layer: bool = False) -> None:
        super().__init__()
        if not isinstance(config, EncoderConfig):
            raise TypeError(f"BertModel needs an EncoderConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        """BERT's initialisation: N(0, initializer_range) weights, zero biases, unit LayerNorms."""
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:  # the [PAD] vector starts (and stays) at zero
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm | RMSNorm):
            nn.init.ones_(module.weight)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        *,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        unpad: bool = False,
    ) -> EncoderOutput:
        """Encode a batch. ``input_ids`` (B, T); ``attention_mask`` 1 for tokens, 0 for padding.

        ``position_ids`` (B, T) that restart at 0 mark a *packed* row, several documents one
        after the other (:mod:`mlmcourse.training.packing`): each document then attends only to itself,
        and its hidden states are those it would get alone.

        ``unpad=True`` computes on the real tokens only (:mod:`mlmcourse.model.unpadding`), padding
        them into rows only around attention: faster when the batch has much padding. The real
        tokens' outputs are the same; padded positions come out as zeros. (Ignored under
        ``torch.compile``, whose graphs need fixed shapes.)
        """
        self._check_inputs(input_ids, attention_mask, token_type_ids, position_ids)
        check_bool(unpad, "unpad")
        unpadding = self._unpadding(attention_mask) if unpad else None
        hidden_states = self._embed(input_ids, token_type_ids, position_ids, unpadding)
        bias, is_causal, local = self._attention_bias(
            input_ids, attention_mask, position_ids, hidden_states.dtype
        )
        output = self.encoder(
            hidden_states,
            bias,
            is_causal=is_causal,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            unpadding=unpadding,
            rotary=self._rotary(input_ids, position_ids),
            local=local,
        )
        if unpadding is not None:  # (N, H) -> (B, T, H), zeros at the padding
            output.last_hidden_state = unpadding.pad(output.last_hidden_state)
            if output.hidden_states is not None:
                output.hidden_states = tuple(unpadding.pad(h) for h in output.hidden_states)
        if self.pooler is not None:
            output.pooler_output = self.pooler(output.last_hidden_state)
        return output

    def _unpadding(self, attention_mask: torch.Tensor | None) -> Unpadding | None:
        """Where the real tokens are, when there is padding to take out (never under compile,
        whose graphs need fixed shapes)."""
        if attention_mask is None or is_compiling():
            return None
        if reads_back(attention_mask) and bool(attention_mask.all()):
            return None  # no padding, nothing to take out
        return Unpadding.from_mask(attention_mask)

    def _attention_bias(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        position_ids: torch.Tensor | None,
        dtype: torch.dtype,
    ) -> tuple[torch.Tensor | None, bool, LocalAttention | None]:
        """``(bias, is_causal, local)``: what each query may attend to, for every layer.

        Padding, causality, packed documents and the local layers' window become one additive
        bias, shared by every layer and head; ``is_causal`` is then False (already inside it).
        With no padding there is no bias at all, so SDPA picks its fastest kernel and applies
        causality itself. Whether there is padding (or packing) is read from the tensors only
        on CPU; on a GPU or under ``torch.compile`` the given mask and positions are always
        applied, so the forward never waits for a read-back.
        """
        config, is_causal = self.config, self.config.is_causal
        if position_ids is None:
            packed = False
        else:
            packed = is_packed(position_ids) if reads_back(position_ids) else True
        if (packed or config.local_attention) and attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if attention_mask is None:
            return None, is_causal, None
        padded = not bool(attention_mask.all()) if reads_back(attention_mask) else True
        if not (packed or config.local_attention or padded):
            return None, is_causal, None
        documents = document_ids(position_ids) if packed else None
        masks = partial(
            attention_allowed, attention_mask, is_causal=is_causal, document_ids=documents
        )
        bias = attention_bias(masks(), dtype)
        local = None
        if config.local_attention:  # the local layers' window, and their rotation
            local_bias = attention_bias(masks(window=config.local_attention), dtype)
            local = LocalAttention(local_bias, self._rotary(input_ids, position_ids, local=True))
        return bias, False, local

    def _rotary(
        self, input_ids: torch.Tensor, position_ids: torch.Tensor | None, *, local: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Each position's (cos, sin) with rotary positions (``local``: local layers' theta)."""
        config = self.config
        if config.position_embedding_type != "rotary":
            return None
        if position_ids is None:
            position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)[None]
        theta = config.local_rope_theta if local else config.rope_theta
        return rotary_cos_sin(position_ids, config.attention_head_size, theta)

    def _embed(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None,
        position_ids: torch.Tensor | None,
        unpadding: Unpadding | None,
    ) -> torch.Tensor:
        """The embeddings, (B, T, H); with ``unpadding``, of the real tokens only, (N, H)."""
        if unpadding is None:
            return self.embeddings(input_ids, token_type_ids, position_ids)
        if position_ids is None:  # each real token keeps the position it has in its row
            position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)
            position_ids = position_ids.expand_as(input_ids)

        def tokens(ids: torch.Tensor | None) -> torch.Tensor | None:
            return None if ids is None else unpadding.unpad(ids)[None]  # (1, N)

        embedded = self.embeddings(tokens(input_ids), tokens(token_type_ids), tokens(position_ids))
        return embedded[0]  # (N, H)

    def _check_inputs(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        token_type_ids: torch.Tensor | None,
        position_ids: torch.Tensor | None = None,
    ) -> None:
        """Catch a user's mistakes here, with a message, rather than deep inside torch."""
        config = self.config
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            got = tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else input_ids
            raise ValueError(
                f"input_ids must be a (batch, seq_len) tensor of token ids, got {got!r}; "
                f"for one sequence use input_ids.unsqueeze(0)"
            )
        if input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
            raise ValueError(f"input_ids must hold integer ids, got dtype {input_ids.dtype}")
        if input_ids.shape[1] > config.max_position_embeddings:
            raise ValueError(
                f"sequence length {input_ids.shape[1]} is longer than max_position_embeddings="
                f"{config.max_position_embeddings}; truncate the input (tokenizer max_length)"
            )
        for name, tensor in (
            ("attention_mask", attention_mask),
            ("token_type_ids", token_type_ids),
            ("position_ids", position_ids),
        ):
            if tensor is not None and (
                not isinstance(tensor, torch.Tensor) or tensor.shape != input_ids.shape
            ):
                got = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else tensor
                raise ValueError(
                    f"{name} must have the shape of input_ids {tuple(input_ids.shape)}, got {got!r}"
                )
        if not reads_back(input_ids):
            return  # the value checks below read tensors back: on CPU only (free there)
        if input_ids.numel():
            low, high = int(input_ids.min()), int(input_ids.max())
            if low < 0 or high >= config.vocab_size:
                bad = low if low < 0 else high
                raise ValueError(
                    f"input_ids must be in [0, vocab_size={config.vocab_size}), found id {bad}; "
                    f"was the tokenizer built with a different vocabulary?"
                )
        if position_ids is not None and position_ids.numel():
            low, high = int(position_ids.min()), int(position_ids.max())
            if low < 0 or high >= config.max_position_embeddings:
                raise ValueError(
                    f"position_ids must be in [0, max_position_embeddings="
                    f"{config.max_position_embeddings}), got values from {low} to {high}"
                )
        if attention_mask is not None and ((attention_mask != 0) & (attention_mask != 1)).any():
            raise ValueError("attention_mask must hold only 0 (padding) and 1 (token)")
        if token_type_ids is not None and token_type_ids.numel():
            low, high = int(token_type_ids.min()), int(token_type_ids.max())
            if config.type_vocab_size == 0 and (low, high) != (0, 0):
                raise ValueError(
                    "this encoder has no segment embeddings (type_vocab_size=0): pass "
                    f"token_type_ids=None or all zeros, got values from {low} to {high}"
                )
            if low < 0 or high >= max(1, config.type_vocab_size):
                raise ValueError(
                    f"token_type_ids must be in [0, type_vocab_size={config.type_vocab_size}), "
                    f"got values from {low} to {high}"
                )

    def num_parameters(self) -> int:
        """How many numbers the model learns (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())


def mean_pooling(last_hidden_state: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """One vector per sequence: the average of its real tokens' vectors, padding left out.

    This is how sentence-transformers turns MiniLM's token vectors into a sentence embedding
    (it then L2-normalises them). (B, T, H), (B, T) -> (B, H).
    """
    if attention_mask.shape != last_hidden_state.shape[:2]:
        raise ValueError(
            f"attention_mask must be (B, T) = {tuple(last_hidden_state.shape[:2])}, "
            f"got {tuple(attention_mask.shape)}"
        )
    weights = attention_mask.to(last_hidden_state.dtype).unsqueeze(-1)  # (B, T, 1)
    return (last_hidden_state * weights).sum(1) / weights.sum(1).clamp(min=1.0)
