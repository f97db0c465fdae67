"""What encoders changed after BERT, one small function per idea (the modern encoder chapter).

ModernBERT, NeoBERT, MosaicBERT and the cramming study keep BERT's masked-LM objective and
change the architecture. Each change here is a switch of :class:`~mlmcourse.model.EncoderConfig`,
off by default, so that BERT stays exactly BERT:

- ``position_embedding_type="rotary"``: no learned position vectors; queries and keys are
  rotated by an angle proportional to their position (:func:`apply_rotary`), so attention
  scores depend on the *distance* between tokens.
- ``ffn_type="geglu"`` / ``"swiglu"``: a gated feed-forward block (:func:`gated_activation`),
  ``act(x W_a) * (x W_b)``, with GELU or SiLU as ``act``.
- ``norm_type="rmsnorm"``: :class:`RMSNorm`, LayerNorm without the mean and the bias; with
  ``pre_layer_norm=True`` each norm goes before its block.
- ``bias=False``: no bias in any projection or norm.
- ``local_attention=W`` with ``global_attn_every_n_layers=n``: every ``n``-th layer attends
  to the whole text, the others only to tokens within ``W // 2`` positions
  (:func:`sliding_window_allowed`).

The model in :mod:`mlmcourse.model` calls these;
:func:`mlmcourse.interop.modernbert.load_modernbert` loads a ``transformers`` ModernBERT
checkpoint into it with the matching switches.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "GATED_ACTIVATIONS",
    "RMSNorm",
    "apply_rotary",
    "gated_activation",
    "rotary_cos_sin",
    "rotate_half",
    "sliding_window_allowed",
]

# The gated feed-forward blocks and the activation each puts on its gate.
GATED_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "geglu": F.gelu,
    "swiglu": F.silu,
}


# ---------------------------------------------------------------------------------- rotary
def rotary_cos_sin(
    position_ids: torch.Tensor, head_dim: int, theta: float = 10_000.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotation of each position: (cos, sin), each (B, 1, T, d) from (B, T) positions.

    Dimension pair ``i`` turns by ``position * theta ** (-2i / d)``: fast for the first pairs,
    slow for the last, so near and far distances both stay visible. The two halves of the
    head repeat the same angles (the ``rotate_half`` layout of GPT-NeoX, Llama and ModernBERT).
    """
    exponents = torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim
    inv_freq = 1.0 / (theta**exponents)  # (d/2,)
    angles = position_ids[..., None].float() * inv_freq  # (B, T, d/2)
    angles = torch.cat([angles, angles], dim=-1)[:, None]  # (B, 1, T, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension: a 90-degree turn."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rotary(
    query: torch.Tensor, key: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate queries and keys (B, heads, T, d) by their positions' angles.

    A rotation keeps lengths, and ``q_m . k_n`` after rotating by ``m`` and ``n`` depends only
    on ``m - n``: the score sees how far apart two tokens are, not where they are. Values are
    not rotated. Computed in float32, as ``transformers`` does, then cast back.
    """
    dtype = query.dtype
    query, key = query.float(), key.float()
    rotated_query = query * cos + rotate_half(query) * sin
    rotated_key = key * cos + rotate_half(key) * sin
    return rotated_query.to(dtype), rotated_key.to(dtype)


# ------------------------------------------------------------------------------ gated FFN
def gated_activation(x: torch.Tensor, ffn_type: str) -> torch.Tensor:
    """(..., 2I) -> (..., I): ``act(first half) * second half`` (GeGLU or SwiGLU).

    The up-projection is twice as wide and its second half gates the first, token by token;
    ModernBERT, Llama and PaLM use it. (ModernBERT's names: ``input, gate = Wi(x).chunk(2)``.)
    """
    value, gate = x.chunk(2, dim=-1)
    return GATED_ACTIVATIONS[ffn_type](value) * gate


# -------------------------------------------------------------------------------- RMSNorm
class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight``: LayerNorm without subtracting the mean, no bias.

    Cheaper, and in practice as good; the same as ``torch.nn.RMSNorm`` (a test pins it).
    """

    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (x.float() * scale).to(x.dtype) * self.weight


# ------------------------------------------------------------------------ local attention
def sliding_window_allowed(seq_len: int, window: int, device: torch.device | None = None):
    """(T, T) booleans: query ``i`` may see key ``j`` when ``|i - j| <= window // 2``.

    ``window`` is the whole span a token sees (ModernBERT's ``local_attention``, 128), half
    on each side. Local layers cost O(T x window) instead of O(T^2) with a kernel that skips
    the hidden blocks; every few layers a global one lets information cross the whole text.
    """
    positions = torch.arange(seq_len, device=device)
    return (positions[:, None] - positions[None, :]).abs() <= window // 2
