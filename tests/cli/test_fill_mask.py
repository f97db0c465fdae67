"""``fill-mask`` on the command line: the world model, a course checkpoint and a Hugging Face
folder, from files and standard input, as text and as JSON lines; a user's mistake is one line
on stderr and exit code 2. No test reaches a network: a Hub name is looked up offline, in an
empty cache.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys

import pytest
import torch

from mlmcourse.checkpoint import save_checkpoint, shipped_checkpoint
from mlmcourse.cli import main
from mlmcourse.cli.fill_mask import EXAMPLE, candidates_text
from mlmcourse.data import load_probes
from mlmcourse.heads import BertForCausalLM, BertForTokenClassification, load_checkpoint
from mlmcourse.interop import from_pretrained
from mlmcourse.tasks.fill_mask import fill_mask
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TWO_MASKS = "The capital of [MASK] is [MASK] ."

hf_tokenizer = tokenizer_fixture(
    ["Alice lives in Paris .", "Bob works in Rome .", "a cat sat on the mat"],
    kind="wordpiece",
    vocab_size=64,
)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Refuse every connection: a Hub name must be looked up in the cache only."""

    def refuse(self, address, *args, **kwargs):
        raise AssertionError(f"test tried to connect to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture(scope="module")
def world():
    loaded = load_checkpoint(shipped_checkpoint("world"))
    return loaded.model, loaded.tokenizer


@pytest.fixture(scope="module")
def facts(world):
    """Two fact probes whose answer the shipped world model ranks first (checked, not assumed)."""
    right = []
    for probe in load_probes("fact"):
        if fill_mask(*world, probe.text, top_k=1)[0]["token_str"] == probe.answer:
            right.append(probe)
        if len(right) == 2:
            return right
    pytest.fail("the shipped world model gets fewer than two fact probes right")


def _fill(args: list[str], capsys, stdin: str | None = None, monkeypatch=None):
    """``main(["fill-mask", *args])``: its exit code, stdout lines and stderr lines."""
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    try:
        code = main(["fill-mask", *args])
    except SystemExit as exit_info:  # argparse's own checks
        code = exit_info.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out.splitlines(), err.splitlines()


def _json_lines(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_world_model_fills_each_line_of_a_file_and_of_stdin(facts, tmp_path, monkeypatch, capsys):
    path = tmp_path / "facts.txt"
    blanks = "\n   \n"  # skipped
    path.write_text(f"{facts[0].text}\n{blanks}{facts[1].text}\n", encoding="utf-8")
    code, lines, err = _fill([str(path)], capsys)
    assert code == 0 and err == []
    assert lines[0::2] == [facts[0].text, facts[1].text]
    for line, probe in zip(lines[1::2], facts, strict=True):
        assert line.startswith(f"  [MASK]: {probe.answer} 0.")
        assert line.count(" | ") == 4  # five candidates by default
    assert _fill([], capsys, path.read_text(), monkeypatch)[:2] == (0, lines)
    assert _fill(["-", str(path)], capsys, path.read_text(), monkeypatch)[:2] == (0, lines * 2)


def test_several_masks_are_numbered(world, monkeypatch, capsys):
    code, lines, _ = _fill(["--top-k", "2"], capsys, TWO_MASKS, monkeypatch)
    expected = fill_mask(*world, TWO_MASKS, top_k=2)
    assert code == 0 and lines == [TWO_MASKS, *candidates_text(expected).splitlines()]
    for number, (line, candidates) in enumerate(zip(lines[1:], expected, strict=True), start=1):
        first, second = candidates
        assert line == (
            f"  [MASK] {number}: {first['token_str']} {first['score']:.2f} | "
            f"{second['token_str']} {second['score']:.2f}"
        )


def test_json_is_fill_masks_output(world, facts, monkeypatch, capsys):
    texts = [facts[0].text, TWO_MASKS]
    code, lines, _ = _fill(["--json", "--top-k", "3"], capsys, "\n".join(texts), monkeypatch)
    assert code == 0
    assert _json_lines(lines) == [
        {"text": text, "predictions": fill_mask(*world, text, top_k=3)} for text in texts
    ]


def test_the_help_example_is_what_the_world_model_prints(monkeypatch, capsys):
    text = "The capital of Shaplath Isles is [MASK] ."
    _, lines, _ = _fill([], capsys, text, monkeypatch)
    assert f"  {lines[0]}\n  {lines[1]}\n" in EXAMPLE


def test_a_checkpoint_folder_of_the_course(tiny_checkpoint, monkeypatch, capsys):
    loaded = load_checkpoint(tiny_checkpoint)

    def not_this_loader(*args, **kwargs):  # it would read ours too; load_checkpoint is ours
        raise AssertionError("a course checkpoint went to from_pretrained")

    monkeypatch.setattr("mlmcourse.cli.fill_mask.from_pretrained", not_this_loader)
    text = "The capital of [MASK] is Tival ."
    code, lines, _ = _fill(
        ["--model", str(tiny_checkpoint), "--json"], capsys, text + "\n", monkeypatch
    )
    assert code == 0
    assert _json_lines(lines) == [
        {"text": text, "predictions": fill_mask(loaded.model, loaded.tokenizer, text)}
    ]


def test_a_hugging_face_folder(hf_tokenizer, tmp_path, monkeypatch, capsys):
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=hf_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=48, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    folder = tmp_path / "bert-mlm"
    transformers.BertForMaskedLM(config).save_pretrained(folder, safe_serialization=True)
    hf_tokenizer.save(folder / "tokenizer.json")
    text = "Alice lives in [MASK] ."
    code, lines, _ = _fill(["--model", str(folder), "--json"], capsys, text, monkeypatch)
    loaded = from_pretrained(folder)
    assert code == 0
    assert _json_lines(lines) == [
        {"text": text, "predictions": fill_mask(loaded.model, loaded.tokenizer, text)}
    ]


def test_a_hugging_face_folder_without_a_tokenizer_is_one_line(tmp_path, monkeypatch, capsys):
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=32,
    )  # fmt: skip
    folder = tmp_path / "weights-only"
    transformers.BertForMaskedLM(config).save_pretrained(folder, safe_serialization=True)
    capsys.readouterr()  # transformers' progress bar
    code, lines, err = _fill(["--model", str(folder)], capsys, "a [MASK] .", monkeypatch)
    assert code == 2 and lines == []
    assert err == [
        f"mlmcourse fill-mask: error: --model {folder} has no tokenizer (a tokenizer.json or a "
        "vocab.txt beside the weights); the text must be read with the model's own one"
    ]


def test_a_line_without_mask_is_reported_and_the_others_are_filled(facts, tmp_path, capsys):
    path = tmp_path / "lines.txt"
    path.write_text(f"{facts[0].text}\nno mask here\n{facts[1].text}\n", encoding="utf-8")
    code, lines, err = _fill(["--json", str(path)], capsys)
    assert code == 2
    assert [row["text"] for row in _json_lines(lines)] == [facts[0].text, facts[1].text]
    assert err == [
        f"mlmcourse fill-mask: error: {path}, line 2: no [MASK] to fill; write [MASK] (in "
        f"capitals) where a word should be predicted, e.g. 'The capital of France is [MASK] .'"
    ]


def test_a_line_longer_than_the_model_reads_is_reported(monkeypatch, capsys):
    code, lines, err = _fill([], capsys, "the " * 40 + "[MASK] .", monkeypatch)
    assert code == 2 and lines == [] and len(err) == 1
    assert err[0].startswith("mlmcourse fill-mask: error: standard input, line 1: sequence ")
    assert "longer than max_position_embeddings=32" in err[0]


def test_an_unknown_word_is_a_note_not_an_error(monkeypatch, capsys):
    text = "The capital of Zorblax is [MASK] ."
    code, lines, err = _fill([], capsys, text, monkeypatch)
    assert code == 0 and lines[0] == text and lines[1].startswith("  [MASK]: ")
    assert err == [
        "mlmcourse fill-mask: note: standard input, line 1: the world model knows only the "
        "small world's words, so it read 'Zorblax' as [UNK] (an unknown word)"
    ]


@pytest.mark.parametrize("top_k", ["0", "-1", "two", "1.5"])
def test_a_bad_top_k_is_one_line(top_k, capsys):
    code, _, err = _fill(["--top-k", top_k], capsys)
    assert code == 2
    assert err == [
        f"mlmcourse fill-mask: error: argument --top-k: expected a positive integer, got "
        f"'{top_k}' (see mlmcourse fill-mask --help)"
    ]


@pytest.fixture(scope="module")
def not_masked_lms(tmp_path_factory):
    """Course checkpoints of a tagger and of a causal LM: models fill-mask must refuse."""
    root = tmp_path_factory.mktemp("not_mlm")
    tagger = BertForTokenClassification(tiny_encoder_config(), num_labels=2)
    causal = BertForCausalLM(tiny_encoder_config(is_causal=True))
    return {
        "tagger": save_checkpoint(root / "tagger", tagger),
        "causal": save_checkpoint(root / "causal", causal),
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "{tmp}/no/such/model"], "no checkpoint folder at {tmp}/no/such/model: give a folder holding config.json, or a Hugging Face Hub name"),
        (["--model", "{tmp}"], "has no config.json, so it is not a model folder"),
        (["--model", "{tagger}"], "holds a BertForTokenClassification, not a masked language model"),
        (["--model", "{causal}"], "holds a BertForCausalLM, not a masked language model"),
        (["{tmp}/missing.txt"], "no text file at {tmp}/missing.txt"),
        (["The [MASK] is red ."], "FILE arguments are files, and there is no file 'The [MASK] is red .'; to fill a text, give it on standard input"),
        (["{tmp}/blank.txt"], "{tmp}/blank.txt held no text to fill (only blank lines)"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_and_exit_2(args, message, not_masked_lms, tmp_path, capsys):
    (tmp_path / "blank.txt").write_text("\n  \n", encoding="utf-8")
    where = {"tmp": str(tmp_path), **{k: str(v) for k, v in not_masked_lms.items()}}
    code, lines, err = _fill([a.format(**where) for a in args], capsys)
    assert code == 2 and lines == []
    assert len(err) == 1 and err[0].startswith("mlmcourse fill-mask: error: "), err
    assert message.format(**where) in err[0]


def test_an_uncached_hub_name_offline_is_one_line(tmp_path, monkeypatch, capsys):
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    args = ["--model", "course-tests/not-cached"]
    code, lines, err = _fill(args, capsys, "a [MASK]", monkeypatch)
    assert code == 2 and lines == []
    assert err == [
        f"mlmcourse fill-mask: error: 'course-tests/not-cached' (revision main) is not in the "
        f"Hugging Face cache ({tmp_path / 'hub'}) and HF_HUB_OFFLINE is set: connect and run "
        f"this again (it downloads once, into the cache), or pass a local folder"
    ]


def test_help_shows_every_option_and_an_example():
    done = subprocess.run(
        [sys.executable, "-m", "mlmcourse", "fill-mask", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # undo the wrapping
    for option in ("--model", "--top-k", "--json", "(default: world)", "(default: 5)"):
        assert option in text, option
    assert "examples: echo" in text and "| python -m mlmcourse fill-mask" in text


def test_a_reader_that_stops_early_ends_it_quietly(tmp_path):
    """``fill-mask FILE | head -2``: no error line when head closes the pipe."""
    path = tmp_path / "many.txt"
    path.write_text("The capital of Shaplath Isles is [MASK] .\n" * 2000, encoding="utf-8")
    command = [sys.executable, "-m", "mlmcourse", "fill-mask", str(path)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        first = process.stdout.readline()
        process.stdout.close()  # far more output than a pipe buffers is still to come
        err = process.stderr.read().decode()
        code = process.wait(timeout=120)
    assert first.startswith(b"The capital of Shaplath Isles") and code == 0 and err == ""
