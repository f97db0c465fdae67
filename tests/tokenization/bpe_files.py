"""Tiny tokenizers shaped like real checkpoints' (ModernBERT's, RoBERTa's), written as the Hub
holds them: ``tokenizer.json`` plus the ``tokenizer_config.json`` that ``transformers`` reads.

Both are byte-level BPEs trained in milliseconds on a few sentences. The ModernBERT-like one has
its special tokens as added tokens at the end of the vocabulary (``[MASK]`` with ``lstrip``, so
it takes the space before it), the template ``[CLS] $A [SEP]`` and no prefix space; the
RoBERTa-like one puts ``<s> <pad> </s> <unk>`` first, ``<mask>`` last, adds a prefix space and
uses ``RobertaProcessing``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

SENTENCES = [
    "The capital of France is Paris.",
    "Paris is a city in France, on the river Seine.",
    "Rome is the capital of Italy; Berlin is the capital of Germany.",
    "A cat sat on the mat. The dog sat on the log!",
    "The war ended in 1945, and the city was rebuilt.",
    "He played football for the national team.",
] * 3

TEXTS = [
    "The capital of France is [MASK].",
    "Paris is a [MASK] in France, and Rome is in Italy.",
    "Zürich's café serves crème brûlée every day (unseen words!)",
    "  odd   spacing\tand\nnew lines [MASK]  ",
    "[MASK] is the capital of [MASK].",
]


def _byte_level(special: list[str], *, add_prefix_space: bool, vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
        add_prefix_space=add_prefix_space, trim_offsets=True, use_regex=True
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte: no unknown text
        show_progress=False,
    )
    tokenizer.train_from_iterator(SENTENCES, trainer)
    return tokenizer


def modernbert_like(vocab_size: int = 320) -> Tokenizer:
    """Byte-level BPE with ModernBERT's special tokens, added after the learned vocabulary."""
    tokenizer = _byte_level(
        ["<|padding|>", "<|endoftext|>"], add_prefix_space=False, vocab_size=vocab_size
    )
    tokenizer.add_special_tokens(
        ["[UNK]", "[CLS]", "[SEP]", "[PAD]", AddedToken("[MASK]", lstrip=True, normalized=False)]
    )
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tokenizer


def roberta_like(vocab_size: int = 320) -> Tokenizer:
    """Byte-level BPE as RoBERTa's: ``<s> <pad> </s> <unk>`` are ids 0-3, ``<mask>`` is last."""
    tokenizer = _byte_level(
        ["<s>", "<pad>", "</s>", "<unk>"], add_prefix_space=True, vocab_size=vocab_size
    )
    tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False)])
    tokenizer.post_processor = processors.RobertaProcessing(
        ("</s>", tokenizer.token_to_id("</s>")), ("<s>", tokenizer.token_to_id("<s>"))
    )
    return tokenizer


MODERNBERT_CONFIG = {  # the keys of ModernBERT-base's tokenizer_config.json that matter here
    "tokenizer_class": "PreTrainedTokenizerFast",
    "clean_up_tokenization_spaces": True,
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
    "model_input_names": ["input_ids", "attention_mask"],
}
ROBERTA_CONFIG = {
    "tokenizer_class": "PreTrainedTokenizerFast",
    "bos_token": "<s>",
    "eos_token": "</s>",
    "cls_token": "<s>",
    "sep_token": "</s>",
    "pad_token": "<pad>",
    "unk_token": "<unk>",
    "mask_token": {
        "__type": "AddedToken",
        "content": "<mask>",
        "lstrip": True,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
        "special": True,
    },
}


def save_tokenizer(tokenizer: Tokenizer, folder: Path, config: dict | None = None) -> Path:
    """``tokenizer.json`` (and ``tokenizer_config.json`` when given) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    return folder
