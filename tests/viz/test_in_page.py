"""The in-page boxes' HTML and the metadata their script reads (the script runs in
tests/book/test_browser.py, in Chromium, against the Python models)."""

from __future__ import annotations

import json
import re

import pytest

from mlmcourse.data import WORLD_LABELS
from mlmcourse.data.english import PLAIN_TEXT_RULES
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.viz.in_page import (
    FILE_MESSAGE,
    PAGE_FILES,
    InPage,
    english_page_metadata,
    in_page_explorer,
    page_metadata,
)
from tests.tiny import tiny_encoder_config


def test_the_metadata_holds_the_vocabulary_in_id_order_and_what_fill_mask_never_proposes(
    shipped_world, world_tagger
):
    meta = page_metadata(shipped_world.tokenizer, shipped_world.model, world_tagger)
    vocab = shipped_world.tokenizer.get_vocab()
    assert [vocab[w] for w in meta["vocab"]] == list(range(len(vocab)))
    assert meta["special"] == {
        "pad": shipped_world.tokenizer.pad_token_id,
        "unk": shipped_world.tokenizer.unk_token_id,
        "cls": shipped_world.tokenizer.cls_token_id,
        "sep": shipped_world.tokenizer.sep_token_id,
        "mask": shipped_world.tokenizer.mask_token_id,
    }
    s = meta["special"]
    assert meta["never"] == [s["pad"], s["cls"], s["sep"], s["mask"]]  # as fill_mask: not [UNK]
    assert meta["labels"] == WORLD_LABELS
    assert meta["max_length"] == shipped_world.model.config.max_position_embeddings
    assert meta["lowercase"] is False
    json.dumps(meta)  # the page reads it as JSON


def test_the_metadata_refuses_a_tokenizer_the_script_cannot_run(
    shipped_world, world_tagger, minilm_tokenizer
):
    with pytest.raises(TypeError, match="word-level vocabulary only .* got WordPieceTokenizer"):
        page_metadata(minilm_tokenizer, shipped_world.model, world_tagger)


def test_the_metadata_refuses_models_of_another_vocabulary(shipped_world, world_tagger):
    other = BertForMaskedLM(tiny_encoder_config())
    with pytest.raises(ValueError, match=r"has 60 embedding rows but the tokenizer \d+ words"):
        page_metadata(shipped_world.tokenizer, other, world_tagger)


def test_the_english_metadata_holds_the_wordpiece_pipeline_and_the_corpus_rules(
    minilm_tokenizer,
):
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=minilm_tokenizer.vocab_size))
    meta = english_page_metadata(minilm_tokenizer, model)
    vocab = minilm_tokenizer.get_vocab()
    assert [vocab[w] for w in meta["vocab"]] == list(range(len(vocab)))
    assert (meta["tokenizer"], meta["lowercase"], meta["prefix"]) == ("wordpiece", True, "##")
    assert meta["max_chars_per_word"] == 100
    assert meta["rules"] == [list(rule) for rule in PLAIN_TEXT_RULES]
    s = meta["special"]
    assert (s["pad"], s["unk"], s["cls"], s["sep"], s["mask"]) == (0, 100, 101, 102, 103)
    assert meta["never"] == [0, 101, 102, 103]
    json.dumps(meta)


def test_the_english_metadata_refuses_a_word_level_tokenizer_or_another_vocabulary(
    shipped_world, minilm_tokenizer
):
    with pytest.raises(TypeError, match="expected the English model's WordPieceTokenizer"):
        english_page_metadata(shipped_world.tokenizer, shipped_world.model)
    with pytest.raises(ValueError, match=r"has 738 embedding rows but the tokenizer 30522 pieces"):
        english_page_metadata(minilm_tokenizer, shipped_world.model)


@pytest.mark.parametrize("task", ["fill-mask", "ner", "english"])
def test_the_box_is_labelled_and_carries_its_task_text_and_script(task):
    text = 'He said "<b>hi</b>" & left [MASK] .'
    markup = InPage(task, text, title="A box").to_html()
    uid = re.search(r'id="(mlmlive-[^"]+)"', markup).group(1)
    assert f'data-task="{task}"' in markup and 'data-state="loading"' in markup
    assert f'<label for="{uid}-text"' in markup and f'id="{uid}-text"' in markup
    assert 'value="He said &quot;&lt;b&gt;hi&lt;/b&gt;&quot; &amp; left [MASK] ."' in markup
    config = json.loads(re.search(r'class="mlm-live-config">(.*?)</script>', markup).group(1))
    metadata = PAGE_FILES["english-metadata" if task == "english" else "metadata"]
    assert config == {
        "task": task,
        "runtime": PAGE_FILES["runtime"],
        "model": PAGE_FILES[task],
        "metadata": metadata,
        "file_message": FILE_MESSAGE,
    }
    assert f'getElementById("{uid}")' in markup  # the script is bound to this box
    assert "UID" not in markup


def test_the_page_loads_nothing_from_outside_the_book():
    markup = InPage("fill-mask", "[MASK] .", title="t").to_html()
    code = markup.replace(FILE_MESSAGE, "")
    assert not re.search(r"https?://", code), re.findall(r"https?://\S+", code)
    assert "file:" in markup and "python -m http.server" in FILE_MESSAGE


def test_each_box_on_a_page_has_its_own_id():
    ids = {
        re.search(r'id="(mlmlive-[^"]+)"', InPage(t, x, title="t").to_html()).group(1)
        for t in ("fill-mask", "ner")
        for x in ("a [MASK] .", "b [MASK] .")
    }
    assert len(ids) == 4


@pytest.mark.parametrize(
    ("task", "text", "message"),
    [
        ("tag", "a", r"task must be one of \('fill-mask', 'ner', 'english'\), got 'tag'"),
        ("ner", "  ", "text must be a non-empty sentence"),
        ("ner", None, "text must be a non-empty sentence"),
    ],
)
def test_a_wrong_task_or_an_empty_start_is_refused(task, text, message):
    with pytest.raises(ValueError, match=message):
        InPage(task, text, title="t")


def test_the_explorer_is_live_in_a_notebook_and_the_box_in_the_book(shipped_world, world_tagger):
    for task, model in (("fill-mask", shipped_world.model), ("ner", world_tagger)):
        explorer = in_page_explorer(
            task, model, shipped_world.tokenizer, "Kepaix lives in [MASK] ."
        )
        assert explorer.children  # the ipywidgets explorer of the same model
        bundle = explorer._repr_mimebundle_()
        assert 'class="mlm-live"' in bundle["text/html"]
        assert f'data-task="{task}"' in bundle["text/html"]
