"""Sentence embeddings: one vector per text, compared by cosine similarity, searched by meaning.

An encoder gives one vector per token. all-MiniLM-L6-v2 was trained (on a billion sentence
pairs) so that the *average* of its token vectors, scaled to length 1, is close for texts that
mean the same. That recipe is sentence-transformers' three modules, ``Transformer`` ->
``Pooling(mean)`` -> ``Normalize``, and here it is three lines: the encoder,
:func:`mean_pooling`, ``F.normalize``. With unit vectors, cosine similarity
is a dot product, and semantic search is a matrix product followed by ``topk``.

- :func:`mean_pooling`: token vectors -> one vector per text, padding left out;
- :func:`encode_sentences`: texts -> (N, H) embeddings, the core recipe;
- :func:`embed`: the pipeline a reader calls (one text or many, truncation on or off);
- :func:`cosine_similarity` and :func:`semantic_search`: comparing embeddings, the latter in
  ``sentence_transformers.util.semantic_search``'s output format;
- :func:`sentence_max_length`: the length sentence-transformers truncates to (256 for MiniLM).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.tokenization.base import as_text_list
from mlmcourse.utils.batching import LengthOrder
from mlmcourse.utils.checks import check_bool, check_positive_int, read_json
from mlmcourse.utils.runtime import evaluating

__all__ = [
    "cosine_similarity",
    "embed",
    "encode_sentences",
    "mean_pooling",
    "semantic_search",
    "sentence_max_length",
]


def sentence_max_length(directory: str | Path | None = None) -> int:
    """The number of pieces (``[CLS]`` and ``[SEP]`` included) a sentence model reads.

    sentence-transformers keeps it in ``sentence_bert_config.json`` (``max_seq_length``: 256
    for all-MiniLM-L6-v2, although its position table has 512 rows: the model was trained on
    texts of at most 256 pieces). Without that file, the model's ``max_position_embeddings``.
    ``directory`` defaults to the bundled MiniLM (:func:`mlmcourse.interop.bert.minilm_directory`).
    """
    if directory is None:
        from mlmcourse.interop.bert import minilm_directory

        directory = minilm_directory()
    directory = Path(directory)
    settings = directory / "sentence_bert_config.json"
    if settings.is_file():
        return int(read_json(settings, "a sentence-transformers config")["max_seq_length"])
    return int(read_json(directory / "config.json", "a BERT config")["max_position_embeddings"])


def _check_max_length(model: nn.Module, max_length: int | None) -> int:
    """``max_length``, or the model's whole position table when ``None``; never more."""
    limit = model.config.max_position_embeddings
    if max_length is None:
        return limit
    check_positive_int(max_length, "max_length")
    if max_length > limit:
        raise ValueError(
            f"max_length={max_length} is more than the model's max_position_embeddings={limit}"
        )
    return max_length


def _checked_encode_args(
    encoder: nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    batch_size: int,
    normalize: bool,
    max_length: int | None,
) -> tuple[list[str], int]:
    """:func:`encode_sentences`' arguments, checked where they come in: the texts as a list and
    the length to cut them to."""  # fmt: skip
    texts = as_text_list(texts, "texts")
    check_positive_int(batch_size, "batch_size")
    check_bool(normalize, "normalize")
    check_vocab_fits(tokenizer, encoder.config.vocab_size, "encode_sentences")
    return texts, _check_max_length(encoder, max_length)


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


@torch.no_grad()
def encode_sentences(
    model: nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    normalize: bool = True,
    max_length: int | None = None,
) -> torch.Tensor:
    """One embedding per text, (N, H) float32 on the CPU, in input order: the mean of the last
    layer over the real tokens, scaled to length 1 (``normalize``), as sentence-transformers
    does for all-MiniLM-L6-v2. Texts are cut to ``max_length`` pieces (default: the model's
    positions; sentence-transformers' 256 is ``sentence_max_length()``)."""
    encoder = getattr(model, "bert", model)
    texts, max_length = _checked_encode_args(
        encoder, tokenizer, texts, batch_size, normalize, max_length
    )
    device = next(encoder.parameters()).device
    by_length = LengthOrder(texts, longest_first=True)  # little padding in a batch
    chunks = []
    with evaluating(encoder):
        for batch_rows in by_length.batches(batch_size):
            rows = [texts[i] for i in batch_rows]
            batch = tokenizer(rows, max_length=max_length)
            mask = batch["attention_mask"].to(device)  # (B, T)
            hidden = encoder(batch["input_ids"].to(device), mask).last_hidden_state  # (B, T, H)
            chunks.append(mean_pooling(hidden, mask).float().cpu())  # (B, H)
    embeddings = by_length.restore(torch.cat(chunks))  # back to input order
    return F.normalize(embeddings, p=2, dim=-1) if normalize else embeddings


def _check_lengths(tokenizer: Any, texts: list[str], max_length: int) -> None:
    """Refuse a text longer than ``max_length`` pieces, naming it and both lengths."""
    for i, text in enumerate(texts):
        length = len(tokenizer.encode(text))
        if length > max_length:
            raise ValueError(
                f"texts[{i}] = {text[:60]!r}... is {length} pieces long ([CLS] and [SEP] "
                f"included) but max_length is {max_length}; shorten or split it, or pass "
                f"truncation=True to embed only its first {max_length - 2} pieces"
            )


def embed(
    model: nn.Module,
    tokenizer: Any,
    texts: str | Sequence[str],
    *,
    batch_size: int = 32,
    normalize: bool = True,
    max_length: int | None = None,
    truncation: bool = True,
) -> torch.Tensor:
    """Sentence embeddings of ``texts``: (H,) for one string, (N, H) for a list.

    This follows sentence-transformers' ``SentenceTransformer.encode``, one vector per text,
    not ``transformers``' ``"feature-extraction"`` pipeline, which returns one vector per
    *token* and leaves the pooling to you. The vectors are :func:`encode_sentences`'s (mean
    pooling, unit length). ``truncation=False`` refuses a text longer than ``max_length``
    (default: the model's position table) instead of embedding only its beginning, so a long
    document is never silently represented by its first paragraph.
    """
    single = isinstance(texts, str)
    texts = as_text_list(texts, "texts")
    check_bool(truncation, "truncation")
    if not truncation:
        _check_lengths(
            tokenizer, texts, _check_max_length(getattr(model, "bert", model), max_length)
        )
    embeddings = encode_sentences(
        model, tokenizer, texts, batch_size=batch_size, normalize=normalize, max_length=max_length
    )
    return embeddings[0] if single else embeddings


def _as_matrix(embeddings: Any, name: str) -> torch.Tensor:
    """Embeddings as a float (N, H) tensor: one (H,) vector becomes one row."""
    if not isinstance(embeddings, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch tensor of embeddings, got {type(embeddings).__name__}"
        )
    if embeddings.dim() == 1:
        embeddings = embeddings.unsqueeze(0)
    if embeddings.dim() != 2 or embeddings.shape[0] == 0:
        raise ValueError(
            f"{name} must be (N, H) with N >= 1 (or one (H,) vector), got {tuple(embeddings.shape)}"
        )
    return embeddings.float()


def cosine_similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``S[i, j] = cos(a[i], b[j])``, (N, M), like ``sentence_transformers.util.cos_sim``.

    Both sides are scaled to length 1 first, so embeddings that are already unit vectors give
    their plain dot products. One (H,) vector is taken as one row.
    """
    a, b = _as_matrix(a, "a"), _as_matrix(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"a and b must have the same embedding size, got {a.shape[1]} and {b.shape[1]}"
        )
    return F.normalize(a, p=2, dim=-1) @ F.normalize(b, p=2, dim=-1).T  # (N, M)


def semantic_search(
    query_embeddings: torch.Tensor, corpus_embeddings: torch.Tensor, top_k: int = 5
) -> list[list[dict[str, Any]]]:
    """For each query, the ``top_k`` most similar corpus entries, best first.

    ``[[{"corpus_id": int, "score": float}, ...], ...]``: one list per query, scores are cosine
    similarities, the format of ``sentence_transformers.util.semantic_search``. Fewer than
    ``top_k`` entries come back when the corpus is smaller.
    """
    check_positive_int(top_k, "top_k")
    scores = cosine_similarity(query_embeddings, corpus_embeddings)  # (Q, C)
    best = scores.topk(min(top_k, scores.shape[1]), dim=1)  # sorted, largest first
    return [
        [{"corpus_id": c, "score": s} for c, s in zip(ids, values, strict=True)]
        for ids, values in zip(best.indices.tolist(), best.values.tolist(), strict=True)
    ]
