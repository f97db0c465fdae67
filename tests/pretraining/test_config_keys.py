"""Every key of the shipped YAML configs, removed and retyped in turn.

Every key of a pretraining config is optional (it takes PretrainConfig's default, listed by
``python -m mlmcourse pretrain --help``); a value of another type is refused with the file and
the key named. Whole files: empty, another top-level type, not UTF-8, not YAML.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
import yaml

from mlmcourse.pretraining import load_config
from tests.clear_errors import clear_error
from tests.file_keys import accepted_or_named, key_paths, removed, replaced, wrong_values

SHIPPED = Path(str(importlib.resources.files("mlmcourse") / "assets" / "configs"))
CONFIGS = sorted(SHIPPED.glob("*.yaml"))


@pytest.mark.parametrize("source", CONFIGS, ids=lambda p: p.stem)
def test_every_key_of_a_shipped_config(source, tmp_path):
    config = yaml.safe_load(source.read_text())
    path = tmp_path / source.name
    keys = list(key_paths(config))
    assert keys
    for key in keys:
        path.write_text(yaml.safe_dump(removed(config, key)))
        load_config(path)  # optional: PretrainConfig's default
        for wrong in wrong_values(config[key[0]]):
            if isinstance(config[key[0]], str) and wrong is None:
                continue  # an empty value (``key:``) of a text setting means "none"
            path.write_text(yaml.safe_dump(replaced(config, key, wrong)))
            accepted_or_named(lambda: load_config(path), source.name, key, optional=False)


@pytest.mark.parametrize(
    "data", [b"", b"# only a comment\n", b"- a\n- list\n", b"just text\n", b"3\n", b"\xff\xfe"]
)
def test_a_whole_config_file_of_the_wrong_kind_is_named(data, tmp_path):
    path = tmp_path / "my.yaml"
    path.write_bytes(data)
    error = clear_error(load_config, path)
    assert str(path) in str(error)
