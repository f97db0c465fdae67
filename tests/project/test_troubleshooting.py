"""The troubleshooting page quotes the package's errors: each quote is reproduced here.

Every line of a ```text block in ``book/troubleshooting.md`` is an error message. A reproducer
below runs the bad input and returns the real message, with the temporary folder it worked in
removed from paths (so ``runs/world/config.json`` on the page is ``<tmp>/runs/world/...``
here). ``...`` on the page stands for any text (a long list of keys). The page cannot drift
from the code: a changed message fails here, and so does a quote no reproducer produces,
unless it is one of the few listed in :data:`NOT_REPRODUCED` (messages of a run, a download
or a device, which need more than a bad file).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from tests.clear_errors import clear_error

PAGE = Path(__file__).resolve().parents[2] / "book" / "troubleshooting.md"
REPRODUCERS: dict[str, Callable[[Path], str]] = {}

# Quotes that need a run, a download, a GPU or an interrupted save (their first words).
NOT_REPRODUCED = (
    "Ctrl-C: stopping",
    "mlmcourse pretrain: interrupted",
    "resume with:",
    "  python -m mlmcourse pretrain",
    "the training loss became nan",
    "refusing to write a checkpoint",
    "load_checkpoint(runs/world): tokenizer.json is not",
    "runs/world/config.json has unknown key(s)",
    "cannot read runs/world/model.safetensors",
    "runs/world: a save was interrupted",
    "sentence 1 has no words",
    "input_ids must be in",
    "sequence length 103",
    "input_ids must hold integer ids",
    "fill_mask needs text",
    "device 'cuda' was requested",
    "device 'tpu' is not",
    "no checkpoint to resume from",
    "cannot resume from runs/world",
)


def quotes() -> list[str]:
    """Every line of every ```text block of the page."""
    blocks = re.findall(r"```text\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def reproduces(name: str):
    def register(function):
        REPRODUCERS[name] = function
        return function

    return register


def _world(tmp: Path) -> Path:
    from mlmcourse.checkpoint import shipped_checkpoint

    target = tmp / "runs" / "world"
    shutil.copytree(shipped_checkpoint(), target)
    return target


def _message(tmp: Path, function, *args, **kwargs) -> str:
    return str(clear_error(function, *args, **kwargs)).replace(f"{tmp}/", "")


@reproduces("a number that is not finite")
def _nan(tmp):
    from mlmcourse.training import TrainingConfig

    return _message(tmp, TrainingConfig, learning_rate=float("nan"))


@reproduces("several numbers where one belongs")
def _array(tmp):
    from mlmcourse.training import TrainingConfig

    return _message(tmp, TrainingConfig, learning_rate=torch.tensor([1e-3, 1e-4]))


@reproduces("a key given twice in a YAML config")
def _repeated_yaml_key(tmp):
    from mlmcourse.pretraining import load_config

    path = tmp / "my.yaml"
    path.write_text("max_steps: 200\nlearning_rate: 1e-3\nbatch_size: 32\nlearning_rate: 5e-4\n")
    return _message(tmp, load_config, path)


@reproduces("--set given twice for one key")
def _repeated_set(tmp):
    from mlmcourse.cli.pretrain import parse_overrides

    return _message(tmp, parse_overrides, ["max_steps=200", "max_steps=400"])


@reproduces("a seed too large")
def _seed(tmp):
    from mlmcourse.utils.runtime import set_seed

    return _message(tmp, set_seed, 2**64)


def _changed_world(tmp: Path, name: str, change: Callable[[dict], object]) -> str:
    """The message of load_checkpoint on the world checkpoint after ``change`` to a file."""
    from mlmcourse.heads.auto import load_checkpoint

    world = _world(tmp)
    data = json.loads((world / name).read_text())
    change(data)
    (world / name).write_text(json.dumps(data))
    return _message(tmp, load_checkpoint, world)


@reproduces("a checkpoint file missing a key")
def _missing(tmp):
    return _changed_world(tmp, "trainer_state.json", lambda state: state.pop("step"))


@reproduces("a key of the wrong type")
def _wrong_type(tmp):
    return _changed_world(tmp, "config.json", lambda config: config.update(hidden_size="128"))


@reproduces("a row of the history of the wrong type")
def _history(tmp):
    return _changed_world(
        tmp, "trainer_state.json", lambda s: s["history"]["eval"][0].update(eval_loss=None)
    )


@reproduces("an empty file")
def _empty(tmp):
    from mlmcourse.heads.auto import load_checkpoint

    world = _world(tmp)
    (world / "trainer_state.json").write_text("")
    return _message(tmp, load_checkpoint, world)


@reproduces("a file of the wrong top-level type")
def _top_level(tmp):
    from mlmcourse.heads.auto import load_checkpoint

    world = _world(tmp)
    (world / "config.json").write_text("[]")
    return _message(tmp, load_checkpoint, world)


@reproduces("a results file that lost a key")
def _results(tmp):
    from mlmcourse.course.results import read_results

    source = PAGE.parents[1] / "mlmcourse" / "course" / "results" / "mask_rate.json"
    data = json.loads(source.read_text())
    del data["runs"][0]["fact_probe_accuracy"]
    path = tmp / "site-packages" / "mlmcourse" / "course" / "results" / "mask_rate.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return _message(tmp, read_results, path)


def _conll(tmp, text: bytes) -> str:
    from mlmcourse.data.real import read_conll

    path = tmp / "my_data.conll"
    path.write_bytes(text)
    return _message(tmp, read_conll, path)


@reproduces("a CoNLL tag that is not BIO")
def _tag(tmp):
    return _conll(tmp, b"EU B-ORG\nrejects O\nGerman B_MISC\n")


@reproduces("a CoNLL line with a column too many")
def _columns(tmp):
    return _conll(tmp, b"EU NNP B-ORG\nrejects VBZ O\nGerman JJ NNP B-MISC\n")


@reproduces("an empty CoNLL file")
def _empty_conll(tmp):
    return _conll(tmp, b"\n")


@reproduces("bytes that are not UTF-8")
def _latin1(tmp):
    return _conll(tmp, "EU B-ORG\nZürich B-LOC\n".encode("latin-1"))


def _yaml(tmp, text: str) -> str:
    from mlmcourse.pretraining import load_config

    (tmp / "my.yaml").write_text(text)
    return _message(tmp, load_config, tmp / "my.yaml")


@reproduces("an empty config file")
def _empty_yaml(tmp):
    return _yaml(tmp, "")


@reproduces("a YAML syntax error")
def _yaml_syntax(tmp):
    return _yaml(tmp, "max_steps: 10\nlearning_rate 0.1\nbatch_size: 2\n")


@reproduces("a misspelt key")
def _misspelt(tmp):
    from mlmcourse.pretraining import load_config

    (tmp / "my.yaml").write_text("max_step: 10\n")
    return _message(tmp, load_config, str(tmp / "my.yaml"))


@reproduces("a config.json that does not match the weights")
def _config_mismatch(tmp):
    from mlmcourse.heads import load_checkpoint

    world = _world(tmp)
    config = json.loads((world / "config.json").read_text())
    (world / "config.json").write_text(json.dumps({**config, "vocab_size": 743}))
    return _message(tmp, load_checkpoint, world)


@reproduces("a value of the wrong kind")
def _yaml_type(tmp):
    return _yaml(tmp, 'batch_size: "32"\n')


@reproduces("a model that cannot be built")
def _heads(tmp):
    from mlmcourse.model import EncoderConfig

    return _message(tmp, EncoderConfig, hidden_size=16, num_attention_heads=3)


def _matches(quote: str, message: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in quote.split("..."))
    return re.fullmatch(pattern, message) is not None


def _quoted(message: str, page: list[str]) -> bool:
    """Every line of ``message`` is a line the page quotes (``...`` standing for the rest)."""
    return all(any(_matches(q, line) for q in page) for line in message.splitlines())


@pytest.mark.parametrize("name", REPRODUCERS)
def test_the_page_quotes_the_message_as_the_package_words_it(name, tmp_path):
    message = REPRODUCERS[name](tmp_path)
    page = quotes()
    assert _quoted(message, page), (
        f"{name}: the page does not quote this message (update book/troubleshooting.md):\n{message}"
    )


def test_every_quote_on_the_page_is_reproduced(tmp_path):
    messages = []
    for index, reproduce in enumerate(REPRODUCERS.values()):
        (tmp_path / str(index)).mkdir()
        message = reproduce(tmp_path / str(index)).replace(f"{index}/", "")
        messages += message.splitlines()
    for quote in quotes():
        if quote.startswith(NOT_REPRODUCED):
            continue
        assert any(_matches(quote, m) for m in messages), f"no reproducer for: {quote}"
