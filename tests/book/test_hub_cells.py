"""The chapters' cells that need the Hugging Face Hub, run against stand-in checkpoints.

No machine of ours reaches the Hub, so the book and CI only ever take these cells' offline
path (one "Skipped ..." line each). Here every checkpoint the chapters name is a tiny random
model of the right kind, put in a Hub cache under the chapter's name (and revision), so
``pretrained_or_skip`` loads it offline through the real code path, and the cells that use it
run: the chapter's first code cell (its imports), then each cell that loads or uses a Hub model,
its collapsed checks included, in order. What the stand-ins cannot be, the model cards'
published facts that the checks assert, is built in (``fashion`` is the stand-in BERT's first
guess; the CoNLL tagger has the card's four types). Explorers are drawn as the book draws them.
The cells' other inputs (data the offline machine lacks, models trained earlier in the chapter)
are given as ``None`` or small stand-ins, as each chapter's guards allow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from mlmcourse.tasks.qa import world_questions
from mlmcourse.tokenization import WordPieceTokenizer
from tests.hub_cache import put_in_cache, random_model
from tests.tokenization.bpe_files import MODERNBERT_CONFIG, modernbert_like, save_tokenizer

jupytext = pytest.importorskip("jupytext")

ROOT = Path(__file__).resolve().parents[2]
CONLL = ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
# Hub name: (transformers class, config overrides); the revision a chapter pins, if any
BERTS = {
    "google-bert/bert-base-uncased": ("BertForMaskedLM", {}),
    "dslim/bert-base-NER": ("BertForTokenClassification", {"id2label": dict(enumerate(CONLL))}),
    "textattack/bert-base-uncased-SST-2": ("BertForSequenceClassification", {"num_labels": 2}),
    "deepset/bert-base-cased-squad2": ("BertForQuestionAnswering", {}),
}
REVISIONS = {"textattack/bert-base-uncased-SST-2": "refs/pr/2"}
# the names the Hub cells bind, and what else each chapter's cells need from earlier cells
LOADED = {"real", "modern", "real_ner", "real_sst2", "real_qa"}
STAND_INS = {
    "intro": {},
    "pretraining_practice": {
        "REAL_SENTENCES": ["paris is the [MASK] of france .", "the war ended in [MASK] ."],
        "minilm_files": None,
    },
    "ner": {"wnut_train": None, "wnut_test": None, "scratch_predictions": None},
    "using": {
        "classifier": None, "tokenizer": None, "sst2_dev": None, "encoder": None,
        "minilm_package": None, "reader": None, "qa_unseen": world_questions("unseen")[:20],
    },
}  # fmt: skip


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


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory) -> Path:
    """Every checkpoint the chapters name, as tiny random models in one offline Hub cache."""
    root = tmp_path_factory.mktemp("hub_cells")
    cache, tokenizer = root / "hub", wordpiece()
    for name, (class_name, overrides) in BERTS.items():
        model = random_model(
            class_name, vocab_size=tokenizer.vocab_size, max_position_embeddings=512, **overrides
        )
        if class_name == "BertForMaskedLM":  # the model card's first guess, for every blank
            fashion = tokenizer.convert_tokens_to_ids("fashion")
            assert fashion != tokenizer.unk_token_id
            with torch.no_grad():
                model.cls.predictions.bias[fashion] = 30.0
        files = root / name.replace("/", "--")
        model.save_pretrained(files, safe_serialization=True)
        tokenizer.save(files / "tokenizer.json")
        snapshot = put_in_cache(cache, name, files)
        if name in REVISIONS:  # the cache names a pinned ref's commit under refs/<ref>
            ref = snapshot.parents[1] / "refs" / REVISIONS[name]
            ref.parent.mkdir(parents=True, exist_ok=True)
            ref.write_text(snapshot.name)
    bpe = modernbert_like()
    ids = {
        role: bpe.token_to_id(MODERNBERT_CONFIG[f"{role}_token"]) for role in ("pad", "cls", "sep")
    }
    model = random_model(
        "ModernBertForMaskedLM", vocab_size=bpe.get_vocab_size(), max_position_embeddings=64,
        pad_token_id=ids["pad"], cls_token_id=ids["cls"], sep_token_id=ids["sep"],
        bos_token_id=ids["cls"], eos_token_id=ids["sep"],
    )  # fmt: skip
    files = root / "modernbert"
    model.save_pretrained(files, safe_serialization=True)
    save_tokenizer(bpe, files, MODERNBERT_CONFIG)
    put_in_cache(cache, "answerdotai/ModernBERT-base", files)
    return cache


def names(source: str) -> set[str]:
    """The variables a cell's code reads or binds (not module paths, strings or comments)."""
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def hub_cells(chapter: str) -> list[str]:
    """The chapter's first code cell, then, from its first Hub cell on, every cell that calls
    ``pretrained_or_skip`` or uses a model such a cell loaded."""
    notebook = jupytext.read(ROOT / "book" / f"{chapter}.md")
    code = [c.source for c in notebook.cells if c.cell_type == "code" and "%pip" not in c.source]
    hub = [k for k, source in enumerate(code) if "pretrained_or_skip" in names(source)]
    loaded = set().union(*(names(code[k]) for k in hub)) & LOADED
    return [
        code[0],
        *(source for source in code[hub[0] :] if names(source) & (loaded | {"pretrained_or_skip"})),
    ]


def drawn(obj: object) -> None:
    """``display`` as the book does it: the HTML an explorer puts in the page."""
    bundle = getattr(obj, "_repr_mimebundle_", None)
    if bundle is not None:
        assert "text/html" in bundle()


@pytest.mark.parametrize("chapter", list(STAND_INS))
def test_the_hub_cells_run_with_the_checkpoints_loaded(chapter, hub_cache, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr(
        "IPython.display.display", lambda *objects, **_: [drawn(o) for o in objects]
    )
    monkeypatch.chdir(ROOT / "book")  # where the chapter runs
    cells = hub_cells(chapter)
    assert len(cells) >= 2, f"{chapter} has no Hub cell left: update STAND_INS"
    namespace = {"__name__": "__main__", **STAND_INS[chapter]}
    exec(compile(cells[0], f"{chapter}: first cell", "exec"), namespace)
    namespace.update(STAND_INS[chapter])  # over what the first cell set to its real value
    for k, source in enumerate(cells[1:], 1):
        exec(compile(source, f"{chapter}: Hub cell {k}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Skipped" not in out, out  # every checkpoint loaded
    loaded = [
        name for name in ("real", "modern", "real_ner", "real_sst2", "real_qa") if name in namespace
    ]
    assert loaded and all(namespace[name] is not None for name in loaded), loaded
