"""Stand-ins for the real checkpoints the chapters load from the Hugging Face Hub.

No machine of ours reaches the Hub, so every checkpoint of
:data:`mlmcourse.interop.hub.CHECKPOINTS` has a tiny random model of the right kind here, saved
as the Hub holds it (``config.json``, ``model.safetensors``, ``tokenizer.json``), for two
tests: the chapters' Hub cells against an offline cache (``tests/book/test_hub_cells.py``) and
whole chapters against a Hub on 127.0.0.1 (``tests/book/test_hub_chapters.py``).

What the stand-ins cannot be by chance, the facts the chapters' checks assert of the real
models, is built in: the BERT's first guess for the model card's "Hello I'm a [MASK] model."
is "fashion"; the CoNLL-2003 tagger has the card's four types; with ``real_shapes`` the SST-2
classifier is as deep and as wide as ``bert-base`` (12 layers, hidden size 768), which the
using chapter compares with MiniLM (narrow feed-forward layers keep it small).
"""

from __future__ import annotations

from pathlib import Path

import torch

from mlmcourse.interop.hub import CHECKPOINTS
from mlmcourse.tasks.qa import world_questions
from mlmcourse.tokenization import WordPieceTokenizer
from tests.hub_cache import random_model
from tests.tokenization.bpe_files import MODERNBERT_CONFIG, modernbert_like, save_tokenizer

CONLL = ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
# Hub name: (transformers class, config overrides)
BERTS = {
    "google-bert/bert-base-uncased": ("BertForMaskedLM", {}),
    "dslim/bert-base-NER": ("BertForTokenClassification", {"id2label": dict(enumerate(CONLL))}),
    "textattack/bert-base-uncased-SST-2": ("BertForSequenceClassification", {"num_labels": 2}),
    "deepset/bert-base-cased-squad2": ("BertForQuestionAnswering", {}),
}
MODERNBERT = "answerdotai/ModernBERT-base"
# The real models' depth and width, for the stand-ins whose size a chapter compares.
BERT_BASE_SHAPE = dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12)
SIZE_CHECKED = {"textattack/bert-base-uncased-SST-2"}


def wordpiece() -> WordPieceTokenizer:
    """A WordPiece vocabulary of the chapters' example texts (and the card's ``fashion``)."""
    texts = [
        "Hello I'm a fashion model . The capital of France is Paris . fashion fashion fashion",
        "She poured hot tea into her cup . Apple CEO Tim Cook announced the new iPhone in "
        "California . a gripping , beautifully acted film , two hours i will never get back",
        "The Eiffel Tower was built for the 1889 World's Fair in Paris . It was designed by the "
        "engineering company of Gustave Eiffel , whose engineers Maurice Koechlin and Emile "
        "Nouguier drew its first sketch . Who drew the first sketch of the tower ?",
        *(f"{q.question} {q.context}" for q in world_questions("unseen")[:20]),
    ]
    return WordPieceTokenizer.train(texts, vocab_size=600)


def _bert(name: str, tokenizer: WordPieceTokenizer, real_shapes: bool):
    class_name, overrides = BERTS[name]
    if real_shapes and name in SIZE_CHECKED:
        overrides = {**overrides, **BERT_BASE_SHAPE}
    model = random_model(
        class_name, vocab_size=tokenizer.vocab_size, max_position_embeddings=512, **overrides
    )
    if class_name == "BertForMaskedLM":  # the model card's first guess, for every blank
        fashion = tokenizer.convert_tokens_to_ids("fashion")
        assert fashion != tokenizer.unk_token_id
        with torch.no_grad():
            model.cls.predictions.bias[fashion] = 30.0
    return model


def _modernbert(folder: Path) -> None:
    bpe = modernbert_like()
    ids = {
        role: bpe.token_to_id(MODERNBERT_CONFIG[f"{role}_token"]) for role in ("pad", "cls", "sep")
    }
    model = random_model(
        "ModernBertForMaskedLM", vocab_size=bpe.get_vocab_size(), max_position_embeddings=64,
        pad_token_id=ids["pad"], cls_token_id=ids["cls"], sep_token_id=ids["sep"],
        bos_token_id=ids["cls"], eos_token_id=ids["sep"],
    )  # fmt: skip
    model.save_pretrained(folder, safe_serialization=True)
    save_tokenizer(bpe, folder, MODERNBERT_CONFIG)


def stand_in_checkpoints(root: Path, *, real_shapes: bool = False) -> dict[str, Path]:
    """A folder of files, as the Hub holds them, for every checkpoint the chapters name."""
    assert set(CHECKPOINTS) == {*BERTS, MODERNBERT}, "a new Hub checkpoint needs a stand-in here"
    tokenizer, folders = wordpiece(), {}
    for name in BERTS:
        folder = folders[name] = root / name.replace("/", "--")
        _bert(name, tokenizer, real_shapes).save_pretrained(folder, safe_serialization=True)
        tokenizer.save(folder / "tokenizer.json")
    folders[MODERNBERT] = root / "modernbert"
    _modernbert(folders[MODERNBERT])
    return folders
