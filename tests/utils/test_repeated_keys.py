"""A key given twice, in every file a user writes or edits, is refused with the file and key.

JSON and YAML readers keep the last value of a repeated key without a word, so a config with
``learning_rate: 1e-3`` and, further down, ``learning_rate: 5e-4`` would train at 5e-4. Each
test below takes a real file (the shipped checkpoint's files, the shipped YAML configs, every
committed results file), writes every one of its keys a second time in turn, and expects the
package's reader to refuse it with a message naming the file and the key.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.checkpoint.files import read_trainer_state
from mlmcourse.cli import main
from mlmcourse.cli.pretrain import parse_overrides
from mlmcourse.course.results import available_results, read_results
from mlmcourse.heads import load_checkpoint
from mlmcourse.pretraining import load_config
from mlmcourse.tokenization import load_tokenizer
from mlmcourse.utils.checks import read_json
from tests.clear_errors import clear_error
from tests.file_keys import json_with_key_twice, key_paths, yaml_with_key_twice
from tests.pretraining.test_config_keys import CONFIGS

WORLD = shipped_checkpoint()
RESULTS = Path(__file__).resolve().parents[2] / "mlmcourse" / "course" / "results"


def assert_refused(read, file: str, key) -> None:
    message = str(clear_error(read))
    assert file in message and repr(str(key)) in message and "given twice" in message, message


def refuses_every_key_twice(data, path: Path, read, *, skip=lambda p: False) -> int:
    """Write each key of ``data`` twice into ``path`` in turn; ``read`` must refuse each."""
    count = 0
    for keys in key_paths(data, skip=skip):
        path.write_text(json_with_key_twice(data, keys), encoding="utf-8")
        assert_refused(read, path.name, keys[-1])
        count += 1
    return count


@pytest.fixture
def world(tmp_path) -> Path:
    target = tmp_path / "world"
    shutil.copytree(WORLD, target)
    return target


@pytest.mark.parametrize("name", ["config.json", "trainer_state.json", "tokenizer.json"])
def test_every_key_of_the_shipped_checkpoint_s_json_files(name, world):
    data = json.loads((WORLD / name).read_text())
    read = {
        "config.json": lambda: load_checkpoint(world),
        "trainer_state.json": lambda: read_trainer_state(world),
        "tokenizer.json": lambda: load_tokenizer(world / name),
    }[name]
    # A vocabulary's words are data: one of them stands for all.
    skip = lambda p: len(p) > 1 and p[0] in ("vocab", "id2label", "label2id")  # noqa: E731
    assert refuses_every_key_twice(data, world / name, read, skip=skip) >= 3
    vocab = data.get("vocab")
    if isinstance(vocab, dict):  # the same word at two ids: which one does the model use?
        word = next(iter(vocab))
        (world / name).write_text(json_with_key_twice(data, ("vocab", word)), encoding="utf-8")
        assert_refused(read, name, word)


@pytest.mark.parametrize("name", available_results())
def test_every_key_of_a_results_file(name, tmp_path):
    data = json.loads((RESULTS / f"{name}.json").read_text())
    path = tmp_path / f"{name}.json"
    assert refuses_every_key_twice(data, path, lambda: read_results(path)) > 0


@pytest.mark.parametrize("source", CONFIGS, ids=lambda p: p.stem)
def test_every_key_of_a_shipped_yaml_config(source, tmp_path):
    config = yaml.safe_load(source.read_text())
    path = tmp_path / source.name
    for key in config:
        path.write_text(yaml_with_key_twice(config, key))
        assert_refused(lambda: load_config(path), source.name, key)


def test_the_lines_of_both_are_named(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("max_steps: 10\nlearning_rate: 1e-3\nbatch_size: 8\nlearning_rate: 5e-4\n")
    assert "(lines 2 and 4)" in str(clear_error(load_config, path))
    path = tmp_path / "config.json"
    path.write_text('{\n "hidden_size": 32,\n "hidden_size": 64\n}\n')
    assert "'hidden_size' is given twice (lines 2 and 3)" in str(clear_error(read_json, path))


def test_a_nested_yaml_mapping_and_a_merge(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("max_steps: 10\nextra:\n  a: 1\n  a: 2\n")
    assert_refused(lambda: load_config(path), "my.yaml", "a")
    # a << merge brings keys that the mapping may override: that is what a merge is for
    from mlmcourse.pretraining.loading import load_yaml

    merged = load_yaml("base: &b {max_steps: 1, batch_size: 2}\nrun:\n  <<: *b\n  max_steps: 3\n")
    assert merged["run"] == {"max_steps": 3, "batch_size": 2}


def test_the_same_key_in_two_objects_is_not_repeated(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a": {"name": 1}, "b": {"name": 2}}')
    assert read_json(path) == {"a": {"name": 1}, "b": {"name": 2}}


def test_set_given_twice(capsys):
    error = clear_error(
        parse_overrides, ["learning_rate=1e-3", "max_steps=3", "learning_rate=5e-4"]
    )
    assert str(error).startswith(
        "--set learning_rate=1e-3 and --set learning_rate=5e-4: the key 'learning_rate' is "
        "given twice"
    )
    # YAML reads 1e-3 as text; the config turns it into the number
    assert parse_overrides(["learning_rate=1e-3", "max_steps=3"]) == {
        "learning_rate": "1e-3",
        "max_steps": 3,
    }
    code = main(["pretrain", "--config", "world", "--set", "max_steps=2", "--set", "max_steps=3"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'max_steps' is given twice" in err, err
