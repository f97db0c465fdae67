"""Export the course's shipped models for the book's pages, where they run in the browser.

The book's "type your own sentence" boxes (``mlmcourse/viz/in_page.py``) run the shipped world
model (fill-mask), the shipped NER tagger (``world_ner``, chapter 6's recipe) and the shipped
English model (fill-mask, its weights stored in 16 bits) with ONNX Runtime Web. This writes
what they fetch, into ``<folder>/live/`` (served as ``_static/live/``): each model's logits as
one ONNX file (``mlmcourse.interop.onnx``), ``world.json`` (the word-level tokenizer's
vocabulary, its special-token ids, the tagger's labels and the longest input) and
``english.json`` (the English corpus's normalisation and the WordPiece vocabulary): everything
the page's script needs besides the runtime (which ``scripts/fetch_book_js.py`` fetches).
Usage: ``python scripts/export_page_models.py [folder]`` (default ``_widgets_js``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.heads import load_checkpoint
from mlmcourse.interop.onnx import export_onnx
from mlmcourse.viz.in_page import PAGE_FILES, english_page_metadata, page_metadata

EXAMPLE = "Kepaix Pouend lives in [MASK] ."  # any sentence: the traced length is left free
ENGLISH_EXAMPLE = "the film received positive [MASK] from critics."


def export(folder: Path) -> None:
    live = folder / "live"
    world = load_checkpoint(shipped_checkpoint("world"))
    tagger = load_checkpoint(shipped_checkpoint("world_ner"))
    example = list(world.tokenizer.encode(EXAMPLE).ids)
    for name, model in (("fill-mask", world.model), ("ner", tagger.model)):
        path = export_onnx(model, live / PAGE_FILES[name], example_ids=example)
        print(f"{path} ({path.stat().st_size:,} bytes)")
    meta = page_metadata(world.tokenizer, world.model, tagger.model)
    (live / PAGE_FILES["metadata"]).write_text(json.dumps(meta, ensure_ascii=False) + "\n")
    print(f"{live / PAGE_FILES['metadata']}: {len(meta['vocab'])} words, labels {meta['labels']}")
    english = load_checkpoint(shipped_checkpoint("english"))
    example = list(english.tokenizer.encode(ENGLISH_EXAMPLE).ids)
    path = export_onnx(
        english.model, live / PAGE_FILES["english"], example_ids=example, float16_weights=True
    )
    print(f"{path} ({path.stat().st_size:,} bytes)")
    meta = english_page_metadata(english.tokenizer, english.model)
    (live / PAGE_FILES["english-metadata"]).write_text(json.dumps(meta, ensure_ascii=False) + "\n")
    print(f"{live / PAGE_FILES['english-metadata']}: {len(meta['vocab'])} pieces")


if __name__ == "__main__":
    export(Path(sys.argv[1] if len(sys.argv) > 1 else "_widgets_js"))
