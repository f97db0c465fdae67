"""Every key of every checkpoint file, removed and retyped in turn.

The files are real: the shipped world checkpoint's ``config.json``, ``trainer_state.json`` and
``tokenizer.json``, a classifier's ``config.json`` (its label keys) and the
``training_state.pt`` of a tiny resumable checkpoint. For each key the reader either accepts
the change (the key is in the file's table of optional keys below, with the default it takes)
or raises one of the package's errors naming the file and the key.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mlmcourse.checkpoint import (
    TrainingState,
    load_training_state,
    save_checkpoint,
    shipped_checkpoint,
)
from mlmcourse.checkpoint.files import ARCHITECTURE_KEYS, read_trainer_state
from mlmcourse.heads import BertForMaskedLM, BertForTokenClassification
from mlmcourse.heads.auto import load_checkpoint
from mlmcourse.model import ModernConfig
from mlmcourse.tokenization import load_tokenizer
from mlmcourse.training import TrainingConfig
from mlmcourse.training.optim import build_optimizer, build_scheduler
from tests.clear_errors import clear_error
from tests.file_keys import (
    TOP_LEVEL,
    accepted_or_named,
    assert_names,
    get,
    key_paths,
    kind,
    removed,
    replaced,
    wrong_values,
)
from tests.tiny import tiny_encoder_config

WORLD = shipped_checkpoint()
TRAINER_STATE = json.loads((WORLD / "trainer_state.json").read_text())

# config.json: EncoderConfig's fields besides the architecture's take their defaults (the
# modern switches too: checkpoints older than them lack them); a classifier's dropout is its
# head's default, and label2id is rebuilt from id2label.
CONFIG_OPTIONAL = {
    **{
        name: getattr(ModernConfig(), name)
        for name in ModernConfig.__dataclass_fields__
        if name not in ARCHITECTURE_KEYS
    },
    "classifier_dropout": None,
    "id2label": None,  # labels without names
    "label2id": "rebuilt from id2label",
}
CONFIG_NULLABLE = {"classifier_dropout"}
# trainer_state.json: a run saved before its first log has no rows; an evaluation records
# the metrics of its task (eval_loss, eval_f1, ...), so none of them is required.
TRAINER_OPTIONAL = {
    "train": [],
    "eval": [],
    "eval_loss": None,
    "eval_accuracy": None,
    "eval_perplexity": None,
    "eval_tokens": None,
}
# training_state.pt: tokens_seen is 0 in checkpoints from before it was recorded; the flags
# of a torch optimizer or scheduler take torch's defaults when missing (torch fills them in
# for a state an older version saved); "cuda" only exists where a GPU did.
STATE_OPTIONAL = {
    "tokens_seen": 0,
    "cuda": "not restored",
    **dict.fromkeys(
        ["amsgrad", "foreach", "maximize", "capturable", "differentiable", "fused"],
        "torch's default",
    ),
    **dict.fromkeys(["decoupled_weight_decay", "verbose"], "torch's default"),
    **dict.fromkeys(["_is_initial", "_get_lr_called_within_step"], "torch's default"),
}
# May be null (saved without an optimizer or scheduler; a flag torch decides, which may also
# be true or false; a scheduler's lambda without state).
STATE_NULLABLE = {"optimizer", "scheduler", "foreach", "fused", 0}


def _last_name(path: tuple) -> str:
    return str(path[-1])


def _cases(data, optional, nullable=frozenset(), skip=lambda p: False):
    """(path, corrupted data, whether the reader may accept it) for every key of ``data``."""
    for path in key_paths(data, skip=skip):
        yield path, removed(data, path), _last_name(path) in optional
        value = data
        for key in path:
            value = value[key]
        for wrong in wrong_values(value):
            null_or_flag = wrong is None or (value is None and isinstance(wrong, bool))
            ok = null_or_flag and (_last_name(path) in nullable or path[-1] in nullable)
            yield path, replaced(data, path, wrong), ok


def _copy(tmp_path: Path, source: Path = WORLD) -> Path:
    target = tmp_path / "ckpt"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    return target


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data))


# --- config.json -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tagger(tmp_path_factory) -> Path:
    """A token classifier's checkpoint: config.json with num_labels, id2label, label2id."""
    model = BertForTokenClassification(
        tiny_encoder_config(), num_labels=3, id2label={0: "O", 1: "B-PER", 2: "I-PER"}
    )
    return save_checkpoint(tmp_path_factory.mktemp("tagger") / "run", model)


@pytest.mark.parametrize("which", ["world", "tagger"])
def test_every_key_of_config_json(which, tagger, tmp_path):
    source = WORLD if which == "world" else tagger
    config = json.loads((source / "config.json").read_text())
    outcomes = []
    directory = _copy(tmp_path, source)
    for path, data, optional in _cases(
        config, CONFIG_OPTIONAL, CONFIG_NULLABLE, skip=lambda p: p[0] in ("id2label", "label2id")
    ):
        _write_json(directory / "config.json", data)
        outcomes.append(
            accepted_or_named(
                lambda: load_checkpoint(directory), "config.json", path, optional=optional
            )
        )
    assert outcomes.count("refused") > len(config)  # every key was corrupted more than once


# --- trainer_state.json and training_state.pt ---------------------------------------------


@pytest.fixture(scope="module")
def resumable(tmp_path_factory) -> Path:
    """A tiny resumable checkpoint after one optimiser step, with the world's trainer state."""
    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config())
    optimizer, scheduler = _optimizer(model)
    ids = torch.tensor([[2, 3, 4, 5]])
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    scheduler.step()
    state = TrainingState(
        step=1,
        optimizer=optimizer,
        scheduler=scheduler,
        training_config=TRAINER_STATE["training_config"],
        history=TRAINER_STATE["history"],
        tokens_seen=4,
    )
    return save_checkpoint(tmp_path_factory.mktemp("resumable") / "run", model, state=state)


def _optimizer(model):
    config = TrainingConfig(max_steps=5, warmup_steps=1)
    optimizer = build_optimizer(model, config)
    return optimizer, build_scheduler(optimizer, config)


def _resume(directory: Path):
    model = BertForMaskedLM(tiny_encoder_config())
    optimizer, scheduler = _optimizer(model)
    return load_training_state(directory, model=model, optimizer=optimizer, scheduler=scheduler)


def test_a_trainer_state_that_lost_a_key_names_it_when_resuming(resumable, tmp_path):
    # The known failure of the issue: a raw KeyError from deep in the loader.
    directory = _copy(tmp_path, resumable)
    _write_json(directory / "trainer_state.json", removed(TRAINER_STATE, ("history",)))
    error = clear_error(_resume, directory)
    assert "trainer_state.json: key history is missing" in str(error)


def test_every_key_of_trainer_state_json(resumable, tmp_path):
    directory = _copy(tmp_path, resumable)
    for path, data, optional in _cases(
        TRAINER_STATE, TRAINER_OPTIONAL, skip=lambda p: p[0] == "training_config"
    ):
        _write_json(directory / "trainer_state.json", data)

        def read():
            state = _resume(directory)
            state["history"]["train"].append({})  # what the loop does next
            state["history"]["eval"].append({})
            read_trainer_state(directory)

        accepted_or_named(read, "trainer_state.json", path, optional=optional)


def test_every_key_of_training_state_pt(resumable, tmp_path):
    directory = _copy(tmp_path, resumable)
    state = torch.load(resumable / "training_state.pt", weights_only=True)
    # The optimizer's per-parameter entries are data (one per parameter): the first stands
    # for all. The RNG states' insides are torch's and NumPy's formats, not keys.
    state["optimizer"]["state"] = {0: state["optimizer"]["state"][0]}

    def skip(path):
        return path[0] == "rng" and len(path) > 1

    for path, data, optional in _cases(state, STATE_OPTIONAL, STATE_NULLABLE, skip=skip):
        if path[:2] == ("optimizer", "state") and len(path) == 3:
            continue  # a parameter without state starts its moments at zero, as in torch
        if path[:2] == ("optimizer", "state") and len(path) > 3:  # the others' states kept
            moment = get(data, path) if path[-1] in get(data, path[:-1]) else None
            optional = optional or kind(moment) == "number"  # AdamW's step may be a number
            full = torch.load(resumable / "training_state.pt", weights_only=True)
            full["optimizer"]["state"][0] = data["optimizer"]["state"][0]
            data = full
        torch.save(data, directory / "training_state.pt")
        accepted_or_named(lambda: _resume(directory), "training_state.pt", path, optional=optional)


def test_a_moment_lost_from_one_parameter_is_named(resumable, tmp_path):
    directory = _copy(tmp_path, resumable)
    state = torch.load(resumable / "training_state.pt", weights_only=True)
    del state["optimizer"]["state"][3]["exp_avg"]
    torch.save(state, directory / "training_state.pt")
    error = clear_error(_resume, directory)
    assert "optimizer.state[3].exp_avg is missing" in str(error)


# --- tokenizer.json -------------------------------------------------------------------------


def test_every_key_of_a_word_level_tokenizer_json(tmp_path):
    data = json.loads((WORLD / "tokenizer.json").read_text())
    path = tmp_path / "tokenizer.json"
    for keys, corrupted, optional in _cases(data, {"lowercase": False}):
        _write_json(path, corrupted)
        accepted_or_named(lambda: load_tokenizer(path), "tokenizer.json", keys, optional=optional)


def test_every_top_level_key_of_a_wordpiece_tokenizer_json(tmp_path):
    """🤗 tokenizers reads a tokenizer.json without "normalizer" or "post_processor" as one
    that has no such step (no lowercasing, no [CLS] and [SEP]): a lost key must be refused."""
    from mlmcourse.tokenization import WordPieceTokenizer
    from mlmcourse.tokenization.files import HF_TOKENIZER_KEYS

    trained = WordPieceTokenizer.train(["the cat sat", "a dog ran"] * 20, vocab_size=60)
    trained.save(tmp_path / "good.json")
    data = json.loads((tmp_path / "good.json").read_text())
    assert set(data) == set(HF_TOKENIZER_KEYS)  # the schema lists what the library writes
    path = tmp_path / "tokenizer.json"
    for key in data:
        _write_json(path, {k: v for k, v in data.items() if k != key})
        accepted_or_named(lambda: load_tokenizer(path), "tokenizer.json", (key,), optional=False)
        for wrong in ("text", 7, True) if key != "version" else (7, [1]):
            _write_json(path, {**data, key: wrong})
            error = clear_error(load_tokenizer, path)
            assert "tokenizer.json" in str(error) and key in str(error), (key, str(error))


# --- whole files: empty, another top-level type, truncated, garbage ---------------------------

JSON_FILES = ["config.json", "trainer_state.json", "tokenizer.json"]


def _bad_files(good: bytes, top_level=TOP_LEVEL):
    yield "empty", b""
    yield "blank", b"  \n"
    yield "truncated", good[: len(good) // 2]
    yield "garbage", b"\xff\xfe\x00garbage"
    for value in top_level:
        yield f"a JSON {type(value).__name__}", json.dumps(value).encode()


@pytest.mark.parametrize("name", JSON_FILES)
def test_a_damaged_json_file_of_a_checkpoint_is_named(name, resumable, tmp_path):
    source = WORLD if name != "trainer_state.json" else resumable
    for label, data in _bad_files((source / name).read_bytes()):
        directory = _copy(tmp_path, source)
        (directory / name).write_bytes(data)
        if name == "trainer_state.json":
            error = clear_error(_resume, directory)
        else:
            error = clear_error(load_checkpoint, directory)
        assert f"{directory / name}" in str(error), (label, str(error))


@pytest.mark.parametrize("name", ["training_state.pt", "model.safetensors"])
def test_a_damaged_binary_file_of_a_checkpoint_is_named(name, resumable, tmp_path):
    good = (resumable / name).read_bytes()
    cases = [b"", good[: len(good) // 2], b"garbage" * 10]
    if name == "training_state.pt":
        for value in ([1, 2], "text", 3, None):
            torch.save(value, tmp_path / "top.pt")
            cases.append((tmp_path / "top.pt").read_bytes())
    for data in cases:
        directory = _copy(tmp_path, resumable)
        (directory / name).write_bytes(data)
        error = clear_error(_resume, directory)
        assert f"{directory / name}" in str(error), str(error)


# --- any value at any key (Hypothesis) --------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
TRAINER_KEYS = list(key_paths(TRAINER_STATE, skip=lambda p: p[0] == "training_config"))


@settings(max_examples=60)
@given(key=st.sampled_from(TRAINER_KEYS), value=JSON_VALUES)
def test_any_value_at_any_key_of_trainer_state_json_is_read_or_named(key, value, tmp_path_factory):
    directory = tmp_path_factory.mktemp("any")
    (directory / "trainer_state.json").write_text(json.dumps(replaced(TRAINER_STATE, key, value)))
    try:
        state = read_trainer_state(directory)
    except Exception:  # noqa: BLE001 - judged by clear_error
        assert_names(clear_error(read_trainer_state, directory), "trainer_state.json", key)
        return
    for row in state["history"].get("train", []):  # what was accepted has the right types
        assert all(isinstance(row[k], int | float) for k in ("step", "loss", "lr", "grad_norm"))
