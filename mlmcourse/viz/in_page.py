"""Your own sentence in the published book: the course's models run in the page, no kernel.

A precomputed :class:`~mlmcourse.viz.static.View` can only offer sentences drawn in advance. The
world model is small (2 MB) and the English model not much larger (11 MB in 16-bit weights),
so the book runs them in the reader's browser instead: the shipped fill-mask models and NER
tagger, exported to ONNX (``scripts/export_page_models.py``), run with ONNX Runtime Web
(fetched and sha256-checked when the book is built, served with it, never from a CDN, and
loaded only by pages that show such a box). ``in_page.js`` is the rest of the pipeline: the
world's word-level tokenizer, or the English corpus's normalisation and BERT's WordPiece
tokenizer, the softmax, the top-k ranking and, for NER, the same Viterbi decoding and entity
grouping as :mod:`mlmcourse.tasks.ner.decoding`. The browser tests type sentences generated at test time and
check the page's answers against :func:`~mlmcourse.tasks.fill_mask.fill_mask` and
:func:`~mlmcourse.tasks.ner.predict_entities` (tests/book/test_browser.py).

In Jupyter and Colab, :func:`in_page_explorer` is the live ipywidgets explorer of the same
model; the page's box is what the book draws in its place.
"""

from __future__ import annotations

import hashlib
import html
import importlib.resources
import json
from typing import Any

from mlmcourse.heads.base import label_names
from mlmcourse.tokenization.encoding import CLS, MASK, PAD, SEP, UNK

__all__ = [
    "PAGE_FILES",
    "TASKS",
    "InPage",
    "english_page_metadata",
    "in_page_explorer",
    "page_metadata",
]

# What the page fetches from ``_static/``: the runtime (scripts/fetch_book_js.py) and the
# models (scripts/export_page_models.py).
PAGE_FILES = {
    "runtime": "ort/ort.wasm.min.js",
    "fill-mask": "world_mlm.onnx",
    "ner": "world_ner.onnx",
    "metadata": "world.json",
    "english": "english_mlm.onnx",
    "english-metadata": "english.json",
}
TASKS = ("fill-mask", "ner", "english")  # "english": fill-mask with the English model
_METADATA = {"fill-mask": "metadata", "ner": "metadata", "english": "english-metadata"}
TOP_K = 5
FILE_MESSAGE = (
    "This box runs the model in your browser, which does not load its files into a page opened "
    "from your disk (file://). Serve the book instead: python -m http.server --directory "
    "_build/html, then open http://localhost:8000/."
)


def page_metadata(tokenizer: Any, mlm: Any, tagger: Any) -> dict[str, Any]:
    """What the page's script needs besides the two ONNX files: the word-level tokenizer (its
    vocabulary in id order and casing), the special ids, the ids fill-mask never proposes (as
    :func:`~mlmcourse.tasks.fill_mask.fill_mask`), the tagger's labels and the longest input."""
    from mlmcourse.tokenization.word_level import WordLevelTokenizer

    if not isinstance(tokenizer, WordLevelTokenizer):
        raise TypeError(
            "the page's script reads a word-level vocabulary only (the world model's), got "
            f"{type(tokenizer).__name__}"
        )
    vocab = tokenizer.get_vocab()
    for model in (mlm, tagger):
        if model.config.vocab_size != len(vocab):
            raise ValueError(
                f"{type(model).__name__} has {model.config.vocab_size} embedding rows but the "
                f"tokenizer {len(vocab)} words: export models of the same vocabulary"
            )
    special = {
        name: vocab[token]
        for name, token in (("pad", PAD), ("unk", UNK), ("cls", CLS), ("sep", SEP), ("mask", MASK))
    }
    return {
        "vocab": sorted(vocab, key=vocab.get),
        "lowercase": tokenizer.lowercase,
        "special": special,
        "never": [special[k] for k in ("pad", "cls", "sep", "mask")],
        "labels": label_names(tagger.id2label),
        "max_length": min(
            mlm.config.max_position_embeddings, tagger.config.max_position_embeddings
        ),
        "top_k": TOP_K,
        "name": "world model",
        "unit": "words",
    }


def english_page_metadata(tokenizer: Any, mlm: Any) -> dict[str, Any]:
    """What the page's script needs to run the English model: the corpus's normalisation
    (:data:`~mlmcourse.data.english.PLAIN_TEXT_RULES`), and BERT's WordPiece tokenizer as the
    library runs it (the vocabulary in id order, lowercasing, the ``##`` prefix, the longest
    word it spells), the special ids, the ids fill-mask never proposes and the longest input."""
    from mlmcourse.data.english import PLAIN_TEXT_RULES
    from mlmcourse.tokenization import WordPieceTokenizer

    if not isinstance(tokenizer, WordPieceTokenizer):
        raise TypeError(f"expected the English model's WordPieceTokenizer, got {type(tokenizer)}")
    backend = json.loads(tokenizer.backend_tokenizer.to_str())
    kinds = (backend["normalizer"]["type"], backend["pre_tokenizer"]["type"])
    if kinds != ("BertNormalizer", "BertPreTokenizer"):
        raise ValueError(f"the page's script runs BERT's pipeline only, not {kinds}")
    vocab = tokenizer.get_vocab()
    if mlm.config.vocab_size != len(vocab):
        raise ValueError(
            f"the model has {mlm.config.vocab_size} embedding rows but the tokenizer "
            f"{len(vocab)} pieces: export a model with its own tokenizer"
        )
    special = {
        name: vocab[token]
        for name, token in (("pad", PAD), ("unk", UNK), ("cls", CLS), ("sep", SEP), ("mask", MASK))
    }
    return {
        "tokenizer": "wordpiece",
        "vocab": sorted(vocab, key=vocab.get),
        "lowercase": tokenizer.lowercase,
        "prefix": backend["model"]["continuing_subword_prefix"],
        "max_chars_per_word": backend["model"]["max_input_chars_per_word"],
        "rules": [list(rule) for rule in PLAIN_TEXT_RULES],
        "special": special,
        "never": [special[k] for k in ("pad", "cls", "sep", "mask")],
        "max_length": mlm.config.max_position_embeddings,
        "top_k": TOP_K,
        "name": "English model",
        "unit": "pieces",
    }


class InPage:
    """The box a page draws for ``task`` (``fill-mask`` or ``ner``), ``text`` typed in first.

    Drawn as a labelled text box, a status line and an output area, and the script that fills
    them (``in_page.js``); it has a :meth:`to_html` like a precomputed view, so an
    :class:`~mlmcourse.viz.static.Explorer` shows it in the book.
    """

    def __init__(self, task: str, text: str, *, title: str) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"text must be a non-empty sentence to start from, got {text!r}")
        self.task, self.text, self.title = task, text, title

    def to_html(self) -> str:
        digest = hashlib.sha1(f"{self.task}\n{self.text}".encode()).hexdigest()[:10]
        uid = f"mlmlive-{self.task}-{digest}"
        config = json.dumps({
            "task": self.task,
            "runtime": PAGE_FILES["runtime"],
            "model": PAGE_FILES[self.task],
            "metadata": PAGE_FILES[_METADATA[self.task]],
            "file_message": FILE_MESSAGE,
        })  # fmt: skip
        config = config.replace("</", "<\\/")  # cannot end the script element early
        script = _script().replace("UID", uid)
        return (
            f'<div class="mlm-live" id="{uid}" data-task="{self.task}" data-state="loading" '
            f'role="group" aria-label="{html.escape(self.title, quote=True)}" '
            'style="border:1px solid #ccc;border-radius:6px;padding:8px;margin:6px 0">'
            f'<div style="font-size:13px;margin-bottom:6px"><b>{html.escape(self.title)}</b></div>'
            f'<label for="{uid}-text" style="font-size:13px">Your sentence</label> '
            f'<input type="text" id="{uid}-text" class="mlm-live-text" spellcheck="false" '
            f'value="{html.escape(self.text, quote=True)}" style="width:min(640px,95%);'
            'font-family:monospace;font-size:13px">'
            '<div class="mlm-live-status" role="status" style="font-size:12px;color:#555;'
            'margin:4px 0">Loading the model into this page\u2026</div>'
            '<div class="mlm-live-out" aria-live="polite"></div>'
            f'<script type="application/json" class="mlm-live-config">'
            f"{config}</script>"
            f"<script>{script}</script></div>"
        )


def _script() -> str:
    return (importlib.resources.files("mlmcourse.viz") / "in_page.js").read_text(encoding="utf-8")


def in_page_explorer(task: str, model: Any, tokenizer: Any, text: str) -> Any:
    """Type your own sentence: the live explorer in Jupyter and Colab, the in-page model in the
    book. ``model`` is the shipped world model (fill-mask), the shipped tagger (``ner``) or the
    shipped English model (``english``), the models the page runs, so both places answer the
    same."""
    from mlmcourse.viz.fill_mask import fill_mask_explorer
    from mlmcourse.viz.ner import ner_explorer
    from mlmcourse.viz.static import Explorer

    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    live = (ner_explorer if task == "ner" else fill_mask_explorer)(model, tokenizer, text)
    title = {
        "fill-mask": "Type a sentence with [MASK]: the world model fills it in, in this page",
        "ner": "Type a sentence: the world tagger finds its entities, in this page",
        "english": "Type English with [MASK]: the course's English model fills it in, in this page",
    }[task]
    return Explorer(list(live.children), InPage(task, text, title=title))
