"""Issue 21's battery: each bad input or fault gives a clear error (what, where, what to do).

One test per case of the issue, asserting the message a learner reads; the random versions
of these checks are the property tests (``test_properties_*.py``) and the crash test
(``test_crash.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mlmcourse.checkpoint import WeightsMismatchError, load_training_state, save_checkpoint
from mlmcourse.checkpoint.atomic import recover_checkpoint_dir
from mlmcourse.data import world_texts
from mlmcourse.data.real import read_conll
from mlmcourse.data.sentence import Sentence
from mlmcourse.heads import load_checkpoint
from mlmcourse.masking import MLMCollator
from mlmcourse.pretraining import load_config
from mlmcourse.tasks.ner import LabelVocab, tokenize_and_align_labels
from mlmcourse.tokenization import WordLevelTokenizer
from mlmcourse.utils.checks import (
    ConfigError,
    FileFormatError,
    TextEncodingError,
    check_integer_values,
    check_path_exists,
    check_positive_int,
    check_probability,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def copy(tiny_checkpoint, tmp_path) -> Path:
    return Path(shutil.copytree(tiny_checkpoint, tmp_path / "copy"))


def _edit_config(directory: Path, **changes) -> None:
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **changes}))


# --- checkpoints --------------------------------------------------------------------------------


def test_a_tokenizer_that_does_not_belong_to_the_weights_is_refused(copy, world_tokenizer):
    smaller = WordLevelTokenizer.train(world_texts("train")[:20])
    assert smaller.vocab_size < world_tokenizer.vocab_size
    smaller.save(copy / "tokenizer.json")
    with pytest.raises(WeightsMismatchError, match="not the tokenizer these weights"):
        load_checkpoint(copy)
    # Same size, two ids swapped: the fingerprint, not the size, catches it.
    data = json.loads(world_tokenizer.to_json())
    data["vocab"][-1], data["vocab"][-2] = data["vocab"][-2], data["vocab"][-1]
    (copy / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(WeightsMismatchError, match="token ids would mean other words"):
        load_checkpoint(copy)


def test_vocab_size_mismatch_between_config_and_weights_names_file_and_sizes(copy, world_tokenizer):
    _edit_config(copy, vocab_size=world_tokenizer.vocab_size + 5)
    with pytest.raises(WeightsMismatchError) as info:
        load_checkpoint(copy)
    message = str(info.value)
    assert str(copy / "model.safetensors") in message
    assert f"vocab_size {world_tokenizer.vocab_size + 5}" in message
    assert f"has {world_tokenizer.vocab_size} word embeddings" in message


def test_unknown_config_json_keys_are_an_error_listing_the_valid_ones(copy):
    _edit_config(copy, hidden_sise=32)
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['hidden_sise'\].*hidden_size"):
        load_checkpoint(copy)


def test_truncated_weights_and_corrupt_tokenizer_name_their_path(copy, tiny_checkpoint):
    weights = copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(FileFormatError, match=f"cannot read {weights}.*damaged or truncated"):
        load_checkpoint(copy)
    shutil.copy(tiny_checkpoint / "model.safetensors", weights)
    (copy / "tokenizer.json").write_text('{"model": {"type": "WordPiece"}}')
    with pytest.raises(ValueError, match=str(copy / "tokenizer.json")):
        load_checkpoint(copy)
    (copy / "tokenizer.json").write_text('{"vocab": ')
    with pytest.raises(ValueError, match=f"{copy / 'tokenizer.json'} is not valid JSON"):
        load_checkpoint(copy)


def test_a_missing_resume_directory_is_called_missing(tmp_path, tiny_checkpoint):
    model = load_checkpoint(tiny_checkpoint).model
    with pytest.raises(FileNotFoundError, match="no checkpoint to resume from at .*nothing exists"):
        load_training_state(tmp_path / "nope", model=model)


def test_leftovers_of_a_killed_save_are_cleaned_and_an_old_copy_is_recovered(copy):
    dead = 2**22 + 12345  # above the default pid_max: no such process
    tmp = copy.parent / f".copy.tmp-{dead}-abcd1234"
    tmp.mkdir()
    (tmp / "model.safetensors").write_bytes(b"half")
    recover_checkpoint_dir(copy)
    assert not tmp.exists()
    # Killed between its two renames: only the previous checkpoint's .old-* copy exists.
    old = copy.parent / f".copy.old-{dead}-abcd1234"
    copy.rename(old)
    with pytest.warns(UserWarning, match="restored the previous checkpoint"):
        loaded = load_checkpoint(copy)
    assert loaded.step == 3 and copy.is_dir() and not old.exists()


def test_a_save_cleans_up_and_a_live_writer_is_left_alone(copy, world_tokenizer):
    dead, alive = 2**22 + 12345, os.getppid()
    stale = copy.parent / f".copy.old-{dead}-00000000"
    busy = copy.parent / f".copy.tmp-{alive}-00000000"
    stale.mkdir()
    busy.mkdir()
    save_checkpoint(copy, load_checkpoint(copy).model, tokenizer=world_tokenizer)
    assert not stale.exists() and busy.exists()


# --- data files ---------------------------------------------------------------------------------


def test_a_byte_order_mark_is_not_part_of_the_first_token(tmp_path):
    path = tmp_path / "bom.conll"
    path.write_bytes("\ufeff-DOCSTART- O\n\nEU B-ORG\nrejects O\n".encode())
    assert read_conll(path) == [Sentence(("EU", "rejects"), ("B-ORG", "O"))]
    path.write_bytes("\ufeffEU B-ORG\n".encode())
    assert read_conll(path)[0].tokens == ("EU",)


def test_a_latin1_file_names_path_and_line_and_says_how_to_fix_it(tmp_path):
    path = tmp_path / "latin1.conll"
    path.write_bytes("EU B-ORG\n\nr\xe9jects O\n".encode("latin-1"))
    with pytest.raises(TextEncodingError, match=f"{path}, line 3: not UTF-8.*iconv"):
        read_conll(path)


def test_an_empty_sentence_error_says_which_sentence(world_tokenizer):
    sentences = [Sentence(("Tival",), ("O",)), Sentence((), ())]
    with pytest.raises(ValueError, match="sentence 1 has no words"):
        tokenize_and_align_labels(sentences, world_tokenizer, LabelVocab(["O"]))


# --- collator -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ids",
    [[2, 7.9, 3], [2, 7.0, 3], torch.tensor([2.0, 7.5, 3.0]), [2, None, 3], [2, "7", 3]],
)
def test_collator_refuses_ids_that_are_not_integers(world_tokenizer, ids):
    collator = MLMCollator(world_tokenizer)
    with pytest.raises(TypeError, match="input_ids must hold integer ids, found"):
        collator([{"input_ids": [2, 5, 3]}, {"input_ids": ids}])


def test_collator_still_takes_int_lists_numpy_and_tensors(world_tokenizer):
    import numpy as np

    collator = MLMCollator(world_tokenizer)
    rows = [[2, 5, 6, 3], np.array([2, 7, 3]), torch.tensor([2, 8, 3], dtype=torch.int32)]
    batch = collator([{"input_ids": r} for r in rows])
    assert batch["input_ids"].dtype == torch.long and batch["input_ids"].shape == (3, 4)


# --- configs and the CLI ------------------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mlmcourse", "pretrain", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


@pytest.mark.slow  # runs the command line in a process
def test_a_yaml_syntax_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("max_steps: 10\nlearning_rate 1e-3\nbatch_size: 8\n")
    with pytest.raises(
        ConfigError, match=r"bad.yaml, line 3, column \d+: YAML syntax error.*line 2"
    ):
        load_config(path)
    done = _cli("--config", str(path), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("mlmcourse pretrain: error: ") and done.stderr.count("\n") == 1


def test_yaml_1e_minus_3_is_a_number(tmp_path):
    path = tmp_path / "lr.yaml"
    path.write_text("learning_rate: 1e-3\nmin_lr_ratio: '.5'\n")
    config = load_config(path)
    assert config.learning_rate == 1e-3 and config.min_lr_ratio == 0.5
    with pytest.raises(ValueError, match="'learning_rate' must be a number, got 'fast'"):
        load_config({"learning_rate": "fast"})


def test_an_empty_yaml_file_is_an_error_that_says_how_to_train_on_defaults(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# only a comment\n")
    with pytest.raises(ConfigError, match="empty.yaml is empty .*write `{}`"):
        load_config(path)
    path.write_text("{}\n")
    assert load_config(path) == load_config({})


def test_model_keys_are_checked_before_any_data_loads(tmp_path):
    with pytest.raises(ValueError, match=r"hidden_size \(16\) must be divisible"):
        load_config({"hidden_size": 16, "num_attention_heads": 3})


@pytest.mark.slow  # runs the command line in a process
def test_a_config_error_found_after_the_data_loads_is_one_line_exit_2(tmp_path):
    # A causal checkpoint cannot continue as an MLM: known only once the checkpoint is read.
    done = _cli(
        "--config", "world", "--no-progress",
        "--set", "init_from=world", "--set", "training_mode=clm", "--set", "max_steps=1",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "holds a masked LM but training_mode is 'clm'" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow  # runs the command line in a process
def test_a_missing_resume_directory_fails_before_loading_data(tmp_path):
    done = _cli(
        "--config", "world", "--set", f"resume_from_checkpoint={tmp_path}/gone", cwd=tmp_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"no checkpoint to resume from at {tmp_path}/gone" in done.stderr


# --- the checks module --------------------------------------------------------------------------


def test_checks_name_what_they_check(tmp_path):
    assert check_positive_int(3, "batch_size") == 3
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        check_positive_int(0, "batch_size")
    with pytest.raises(TypeError, match="batch_size must be an int, got float"):
        check_positive_int(2.0, "batch_size")
    with pytest.raises(TypeError, match="batch_size must be an int, got bool"):
        check_positive_int(True, "batch_size")
    assert check_probability(0.15, "mlm_probability") == 0.15
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="mlm_probability must be in"):
            check_probability(bad, "mlm_probability")
    with pytest.raises(FileNotFoundError, match="no vocab file at"):
        check_path_exists(tmp_path / "v.txt", "vocab file")
    with pytest.raises(NotADirectoryError, match="must be a directory"):
        (tmp_path / "f").write_text("x")
        check_path_exists(tmp_path / "f", "checkpoint", kind="dir")
    check_integer_values([1, 2, 3], "ids")
    with pytest.raises(TypeError, match=r"ids must hold integer ids, found 2.5 \(float\)"):
        check_integer_values([1, 2.5], "ids")


# --- found by the property tests ----------------------------------------------------------------


@pytest.mark.parametrize("rate", [5e-324, 1e-300, 1e-12])
def test_span_masking_at_a_vanishing_rate_masks_nothing_instead_of_crashing(rate):
    from mlmcourse.masking import mask_spans

    ids = torch.tensor([[2, 7, 8, 9, 3]])
    inputs, labels = mask_spans(
        ids, mask_token_id=4, special_ids=[0, 1, 2, 3, 4], vocab_size=20, mlm_probability=rate
    )
    assert torch.equal(inputs, ids) and (labels == -100).all()


def test_docstart_is_skipped_whatever_the_column_separator(tmp_path):
    path = tmp_path / "tabs.conll"
    path.write_text("-DOCSTART- -X- -X- O\n\nEU\tB-ORG\n")
    assert read_conll(path, sep="\t") == [Sentence(("EU",), ("B-ORG",))]


# --- beyond the list: what a new user tried next ---------------------------------------


def test_saving_never_replaces_a_folder_that_is_not_a_checkpoint(tmp_path, tiny_checkpoint):
    model = load_checkpoint(tiny_checkpoint).model
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("my thesis")
    with pytest.raises(FileExistsError, match=r"is not a checkpoint and holds \['notes.md'\]"):
        save_checkpoint(project, model)
    assert (project / "notes.md").read_text() == "my thesis"
    (tmp_path / "weights.bin").write_text("x")
    with pytest.raises(FileExistsError, match="it is a file"):
        save_checkpoint(tmp_path / "weights.bin", model)
    (tmp_path / "empty").mkdir()
    save_checkpoint(tmp_path / "empty", model)  # an empty folder is fine


def test_training_refuses_a_bad_output_dir_before_the_first_step(tmp_path):
    from mlmcourse.pretraining import pretrain

    (tmp_path / "notes.md").write_text("keep me")
    config = load_config(
        "world",
        {"output_dir": str(tmp_path), "max_steps": 10**6, "hidden_size": 16,
         "num_attention_heads": 2, "intermediate_size": 16, "num_hidden_layers": 1},
    )  # fmt: skip
    with pytest.raises(FileExistsError, match="refusing to write a checkpoint"):
        pretrain(config, progress=False, log=None)  # a million steps: it must fail first
    assert (tmp_path / "notes.md").read_text() == "keep me"


def test_a_latin1_vocab_or_binary_tokenizer_file_is_named(tmp_path):
    from mlmcourse.tokenization import load_tokenizer

    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(TextEncodingError, match=f"{vocab}, line 6: not UTF-8"):
        load_tokenizer(vocab)
    binary = tmp_path / "tokenizer.json"
    binary.write_bytes(b"\x00\xff\xfe")
    with pytest.raises(TextEncodingError, match=str(binary)):
        load_tokenizer(binary)


def test_pretrain_inputs_that_do_not_exist_are_named_before_data_loads(tmp_path):
    from mlmcourse.pretraining import check_input_paths

    with pytest.raises(FileNotFoundError, match="init_from='/no/such' is neither a checkpoint"):
        check_input_paths(load_config({"init_from": "/no/such"}))
    with pytest.raises(FileNotFoundError, match="no tokenizer file .* at /no/tok.json"):
        check_input_paths(load_config({"tokenizer": "/no/tok.json"}))


def test_an_unknown_device_name_is_a_value_error_and_still_a_runtime_error():
    from mlmcourse.utils.runtime import get_device

    with pytest.raises(ValueError, match="device .tpu. is not a device name; use cpu, cuda"):
        get_device("tpu")
    with pytest.raises(RuntimeError):  # what callers caught before (benchmarks/train_mlm.py)
        get_device("tpu")


def test_load_config_says_what_it_takes():
    with pytest.raises(TypeError, match="load_config takes a YAML path"):
        load_config(None)
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        load_config("world", ["max_steps=3"])


@pytest.mark.parametrize("with_output_dir", [True, False])
def test_ctrl_c_inside_train_stops_between_steps_and_says_what_was_saved(tmp_path, with_output_dir):
    import signal

    from mlmcourse.training import CheckpointPlan, TrainingConfig, TrainingInterrupted, train
    from tests.tiny_mlm import TinyConfig, TinyMLM, tiny_batch

    def batch(i):
        if i == 3:  # Ctrl-C while the data of step 4 is being fetched
            os.kill(os.getpid(), signal.SIGINT)
        return tiny_batch(i)

    out = tmp_path / "run" if with_output_dir else None
    config = TrainingConfig(max_steps=50, warmup_steps=1, logging_steps=1)
    before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN in a background job
    with pytest.raises(TrainingInterrupted, match="interrupted after step 4 of 50") as info:
        train(TinyMLM(TinyConfig()), batch, config, checkpoints=CheckpointPlan(out), progress=False,
              log=None)  # fmt: skip
    assert info.value.step == 4 and info.value.checkpoint == out
    assert isinstance(info.value, KeyboardInterrupt)  # code that does not know it still stops
    if with_output_dir:
        assert json.loads((out / "trainer_state.json").read_text())["step"] == 4
    else:
        assert "nothing saved (set output_dir" in str(info.value)
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler is restored


def test_optimiser_settings_torch_would_refuse_late_are_refused_by_the_config():
    from mlmcourse.training import TrainingConfig

    with pytest.raises(ValueError, match=r"adam_beta1 must be in \[0, 1\), got 1.5"):
        load_config({"adam_beta1": 1.5})
    with pytest.raises(ValueError, match=r"adam_epsilon must be in \(0, inf\), got -1.0"):
        load_config({"adam_epsilon": -1.0})
    with pytest.raises(ValueError, match=r"learning_rate must be in \(0, inf\) \(a finite"):
        TrainingConfig(learning_rate=float("inf"))
    with pytest.raises(TypeError, match="min_lr_ratio must be a number in"):
        TrainingConfig(min_lr_ratio="0.1")
    with pytest.raises(ValueError, match="max_length must be an int >= 3, got 2"):
        load_config({"max_length": 2})
    with pytest.raises(ValueError, match="eval_seed must be an int >= 0, got -1"):
        load_config({"eval_seed": -1})


def test_ctrl_c_outside_the_steps_points_at_the_last_checkpoint(tmp_path, monkeypatch, capsys):
    import mlmcourse.pretraining
    from mlmcourse.cli import main

    def interrupted(config, progress):
        raise KeyboardInterrupt  # e.g. during the final evaluation

    monkeypatch.setattr(mlmcourse.pretraining, "pretrain", interrupted)
    out = tmp_path / "run"
    assert main(["pretrain", "--config", "world", "--set", f"output_dir={out}"]) == 130
    assert capsys.readouterr().err == "mlmcourse pretrain: interrupted; no checkpoint was saved\n"
    out.mkdir()
    (out / "trainer_state.json").write_text('{"step": 7}')
    assert main(["pretrain", "--config", "world", "--set", f"output_dir={out}"]) == 130
    err = capsys.readouterr().err
    assert f"the last checkpoint (step 7) is in {out}" in err
    assert f"--set resume_from_checkpoint={out}" in err
