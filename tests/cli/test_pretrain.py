"""The pretraining CLI: documented keys, clear config errors, a tiny end-to-end run and resume."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mlmcourse.cli import main
from mlmcourse.cli.pretrain import KEY_GROUPS
from mlmcourse.heads import load_checkpoint
from mlmcourse.pretraining import HELP, config_keys, load_config
from mlmcourse.tasks.fill_mask import fill_mask

TINY = [
    "--set", "max_steps=6",
    "--set", "warmup_steps=1",
    "--set", "logging_steps=2",
    "--set", "hidden_size=16",
    "--set", "num_hidden_layers=1",
    "--set", "num_attention_heads=2",
    "--set", "intermediate_size=32",
    "--set", "batch_size=8",
    "--set", "eval_batch_size=500",
]  # fmt: skip


def test_help_documents_every_key(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["pretrain", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    grouped = [key for keys in KEY_GROUPS.values() for key in keys]
    assert sorted(grouped) == sorted(config_keys())  # every key in exactly one group
    assert set(HELP) == set(config_keys())
    for key in config_keys():
        assert f"    {key} [" in text, key


def test_unknown_key_lists_the_valid_ones(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("max_step: 10\nlearning_rate: 1e-3\n")
    assert main(["pretrain", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown config key(s) 'max_step' (did you mean 'max_steps'?)" in err
    assert "valid keys are: max_steps, learning_rate" in err


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"training_mode": "gpt"}, "training_mode must be one of"),
        ({"batch_size": "32"}, "'batch_size' must be an integer, got '32'"),
        ({"mask_replace_prob": 0.9, "random_replace_prob": 0.2}, "must be at most 1.*lower one"),
        ({"lr_scheduler_type": "step"}, "lr_scheduler_type must be one of"),
    ],
)
def test_bad_values_are_explained(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config("world", overrides)


def test_config_files_and_names(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="shipped configs: .*world"):
        load_config("no-such-config")
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="YAML mapping"):
        load_config(path)
    assert load_config("world").dataset == "world"
    assert load_config({"learning_rate": 1}).learning_rate == 1.0  # ints are fine for floats
    assert main(["pretrain", "--config", "world", "--set", "max_steps"]) == 2
    assert "--set expects KEY=VALUE, got 'max_steps'" in capsys.readouterr().err


def test_a_tiny_run_prints_progress_writes_a_checkpoint_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["pretrain", "--config", "world", "--no-progress", *TINY]
    assert main([*args, "--set", f"output_dir={out}"]) == 0
    printed = capsys.readouterr().out
    assert "pretraining (mlm) on world" in printed and "final evaluation" in printed
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["step"] == 6 and state["training_config"]["hidden_size"] == 16
    loaded = load_checkpoint(out)
    assert len(fill_mask(loaded.model, loaded.tokenizer, "Tival is in [MASK] .", top_k=2)) == 2

    # Resume the same run to more steps: it starts at step 6, not 0.
    more = [
        *(a if a != "max_steps=6" else "max_steps=8" for a in args),
        "--set",
        f"output_dir={out}",
    ]
    assert main([*more, "--set", f"resume_from_checkpoint={out}"]) == 0
    assert "resumed from" in capsys.readouterr().out
    history = json.loads((out / "trainer_state.json").read_text())["history"]["train"]
    assert [h["step"] for h in history] == [2, 4, 6, 8]


@pytest.mark.slow
def test_python_dash_m_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "mlmcourse", "pretrain", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "mlm_probability" in result.stdout and "--config" in result.stdout
