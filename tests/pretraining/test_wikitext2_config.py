"""The shipped ``wikitext2`` config runs end to end (on a small file in WikiText's raw format).

The book only shows the command (hours on a CPU); this checks the path it takes: the local
data folder, heading removal, a trained WordPiece vocabulary, masking, the loop, a checkpoint.
"""

from __future__ import annotations

import json

from mlmcourse.pretraining import load_config, pretrain

WORDS = "the river city bridge museum painter harbour winter market poet railway garden".split()


def _article(i: int) -> str:
    body = []
    for p in range(3):
        words = [WORDS[(i * 7 + p * 3 + k * k) % len(WORDS)] for k in range(14)]
        body.append(" " + " ".join(words) + " , founded in 18" + f"{(i + p) % 90:02d} . \n")
    return f" = Article {i} = \n \n" + " \n".join(body) + " \n"


def test_the_wikitext2_config_trains_from_a_local_raw_copy(tmp_path, monkeypatch):
    raw = tmp_path / "data" / "wikitext-2-raw"
    raw.mkdir(parents=True)
    (raw / "wiki.train.raw").write_text("".join(_article(i) for i in range(40)), encoding="utf-8")
    (raw / "wiki.valid.raw").write_text("".join(_article(i) for i in range(40, 48)), "utf-8")
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(tmp_path / "data"))
    tiny = {
        "vocab_size": 120,
        "max_length": 32,
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_steps": 3,
        "warmup_steps": 1,
        "batch_size": 4,
        "eval_steps": 0,
        "save_steps": 0,
        "output_dir": str(tmp_path / "run"),
    }
    config = load_config("wikitext2", tiny)
    assert (config.dataset, config.tokenizer) == ("wikitext2", "wordpiece")
    run = pretrain(config, progress=False, log=None)
    assert run.result.step == 3
    assert run.result.final_eval["tokens"] > 0
    assert not any(t.startswith("=") for t in run.train_texts)  # headings dropped
    state = json.loads((tmp_path / "run" / "trainer_state.json").read_text())
    assert state["step"] == 3
