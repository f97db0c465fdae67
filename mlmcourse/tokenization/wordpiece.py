"""BERT's WordPiece tokenizer, run by the Rust 🤗 ``tokenizers`` library behind our interface.

The library does the work (normalizer, pre-tokenizer, greedy longest-match WordPiece model,
``[CLS]``/``[SEP]`` template, decoder); we choose the vocabulary. :meth:`WordPieceTokenizer.train`
learns it with :func:`~mlmcourse.tokenization.wordpiece_training.learn_wordpiece_vocab`, whose
result never depends on hash order, from words split exactly as the library splits them
(:func:`count_bert_words`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from mlmcourse.tokenization.base import check_text, check_training_texts
from mlmcourse.tokenization.encoding import CLS, SEP, SPECIAL_TOKENS, UNK
from mlmcourse.tokenization.files import (
    FIX_TOKENIZER,
    HF_TOKENIZER_KEYS,
    existing_file,
    guess_lowercase,
    read_vocab_txt,
)
from mlmcourse.tokenization.library import LibraryTokenizer
from mlmcourse.tokenization.wordpiece_training import learn_wordpiece_vocab
from mlmcourse.utils.checks import check_int, read_json, reading
from mlmcourse.utils.schema import check_keys

_SPECIAL_RE = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))


def _bert_pipeline(vocab: Mapping[str, int] | None, *, lowercase: bool) -> Tokenizer:
    """A 🤗 ``Tokenizer`` with BERT's normalizer, pre-tokenizer and a WordPiece model.

    ``vocab=None`` gives an empty model, for the library's trainer to fill.
    """
    if vocab is None:
        model = models.WordPiece(unk_token=UNK, continuing_subword_prefix="##")
    else:
        model = models.WordPiece(vocab=dict(vocab), unk_token=UNK, continuing_subword_prefix="##")
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()  # whitespace and punctuation
    return tokenizer


def count_bert_words(texts: Iterable[str], *, lowercase: bool = False) -> Counter[str]:
    """How often each word occurs in ``texts``, words as BERT's normalizer and pre-tokenizer see them.

    Special tokens written in a text are not words. Both steps work character by character and
    never join across a space, so each distinct space-separated chunk is split once and its
    words weighted by how often it occurs: the same counts, much faster on a real corpus.
    """
    texts = [check_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
    splitter = _bert_pipeline(None, lowercase=lowercase)
    chunks = Counter(c for t in texts for part in _SPECIAL_RE.split(t) for c in part.split(" "))
    counts: Counter[str] = Counter()
    for chunk, n in chunks.items():
        normalized = splitter.normalizer.normalize_str(chunk)
        for word, _ in splitter.pre_tokenizer.pre_tokenize_str(normalized):
            counts[word] += n
    return counts


def _train_with_library(
    texts: list[str], *, vocab_size: int, lowercase: bool, min_frequency: int, limit_alphabet: int
) -> Tokenizer:
    """🤗 ``WordPieceTrainer``: fast, but its ties (and so its vocabulary) follow hash order."""
    tokenizer = _bert_pipeline(None, lowercase=lowercase)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),  # ids 0..4, in this order
        limit_alphabet=limit_alphabet,
        continuing_subword_prefix="##",
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


class WordPieceTokenizer(LibraryTokenizer):
    """BERT's subword tokenizer, run by the Rust 🤗 ``tokenizers`` library.

    The pipeline is the library's: normalizer (clean, optionally lowercase and strip accents)
    -> pre-tokenizer (split on whitespace and punctuation) -> WordPiece model (longest-match
    pieces, ``##`` marks a piece that continues a word) -> ``TemplateProcessing`` (``[CLS]``,
    ``[SEP]``, token types) -> decoder. Make one with :meth:`train`, :meth:`from_file` (a
    ``tokenizer.json``) or :meth:`from_vocab_file` (a BERT ``vocab.txt``).
    """

    def __init__(self, tokenizer: Tokenizer):
        super().__init__()
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"expected a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        missing = [t for t in SPECIAL_TOKENS if tokenizer.token_to_id(t) is None]
        if missing:
            raise ValueError(
                f"the vocabulary is missing the special tokens {missing}; a tokenizer needs all "
                f"of {list(SPECIAL_TOKENS)}"
            )
        tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a copy: the caller's stays as it was
        tokenizer.no_padding()  # we pad ourselves, into tensors
        tokenizer.no_truncation()  # and truncate per call, with the caller's max_length
        tokenizer.add_special_tokens(list(SPECIAL_TOKENS))  # "[MASK]" in a text stays whole
        self._finish_pipeline(tokenizer)
        self.backend_tokenizer = tokenizer

    def _finish_pipeline(self, tokenizer: Tokenizer) -> None:
        """Set BERT's template and decoder (a loaded BERT file already has the same ones)."""
        cls_id, sep_id = tokenizer.token_to_id(CLS), tokenizer.token_to_id(SEP)
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}",
            pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
            special_tokens=[(CLS, cls_id), (SEP, sep_id)],
        )
        if tokenizer.decoder is None:
            tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        *,
        vocab_size: int = 8000,
        lowercase: bool = False,
        min_frequency: int = 2,
        limit_alphabet: int = 1000,
        deterministic: bool = True,
    ) -> WordPieceTokenizer:
        """Learn a WordPiece vocabulary of at most ``vocab_size`` tokens (specials included).

        Every character seen (up to ``limit_alphabet`` of them) enters the vocabulary, so a new
        word can always be spelled in pieces and ``[UNK]`` becomes rare. With
        ``deterministic=True`` (the default) the pieces are learned by
        :func:`learn_wordpiece_vocab`, whose ties never depend on hash order; ``False`` uses the
        library's ``WordPieceTrainer``, whose vocabulary can change from run to run because it
        breaks ties in hash-map order (huggingface/tokenizers issue #1794).
        """
        texts = check_training_texts(texts)
        check_int(vocab_size, "vocab_size", minimum=len(SPECIAL_TOKENS) + 1)
        if not deterministic:
            return cls(
                _train_with_library(
                    texts,
                    vocab_size=vocab_size,
                    lowercase=lowercase,
                    min_frequency=min_frequency,
                    limit_alphabet=limit_alphabet,
                )
            )
        tokens = learn_wordpiece_vocab(
            count_bert_words(texts, lowercase=lowercase),
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            limit_alphabet=limit_alphabet,
        )
        return cls(_bert_pipeline({t: i for i, t in enumerate(tokens)}, lowercase=lowercase))

    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        """Load a ``tokenizer.json`` (BERT's, or one :meth:`save` wrote); ids are kept."""
        path = existing_file(path)
        data = read_json(path, "a tokenizer file")
        check_keys(data, {"model": {"type": "string"}}, str(path), fix=FIX_TOKENIZER)
        kind = data["model"]["type"]
        if kind != "WordPiece":
            raise ValueError(
                f"{path} holds a {kind!r} model; expected a WordPiece (BERT) tokenizer"
            )
        check_keys(data, HF_TOKENIZER_KEYS, str(path), fix=FIX_TOKENIZER)
        with reading(path, "a 🤗 tokenizers tokenizer.json"):  # its other keys: the library's
            return cls(Tokenizer.from_file(str(path)))

    @classmethod
    def from_vocab_file(
        cls, path: str | Path, *, lowercase: bool | None = None
    ) -> WordPieceTokenizer:
        """Build BERT's tokenizer around a ``vocab.txt`` (one token per line; line number = id).

        ``lowercase=None`` reads ``do_lower_case`` from a ``tokenizer_config.json`` beside the
        file, else lowercases when the vocabulary has no upper-case letters (an uncased model).
        """
        path = existing_file(path)
        vocab = read_vocab_txt(path)
        if lowercase is None:
            lowercase = guess_lowercase(path, vocab)
        return cls(_bert_pipeline(vocab, lowercase=lowercase))

    def _sequence_ids(self, encoding: Any) -> list[int | None]:
        # post_process of separately encoded texts loses the library's own sequence ids
        return [
            None if s else t
            for s, t in zip(encoding.special_tokens_mask, encoding.type_ids, strict=True)
        ]

    def _decode_tokens(self, tokens: list[str]) -> str:
        return self.backend_tokenizer.decoder.decode(tokens)

    @property
    def vocab_size(self) -> int:
        return self.backend_tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def lowercase(self) -> bool:
        """Whether the normalizer lowercases (``False`` for a pipeline without BERT's normalizer)."""
        return bool(getattr(self.backend_tokenizer.normalizer, "lowercase", False))
