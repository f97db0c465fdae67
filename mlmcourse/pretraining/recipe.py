"""The pretraining recipe: data, tokenizer, masking, model, then :func:`~mlmcourse.training.train`.

This is what ``python -m mlmcourse pretrain --config <yaml>`` runs. Each ingredient is a small
function of the config (:func:`load_texts`, :func:`build_tokenizer`, :func:`build_model`,
:func:`build_collator`), and :func:`pretrain` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.checkpoint.atomic import recover_checkpoint_dir
from mlmcourse.data import load_wikitext2, world_texts
from mlmcourse.data.english import english_texts
from mlmcourse.heads import BertForCausalLM, BertForMaskedLM, load_checkpoint
from mlmcourse.masking import MLMCollator
from mlmcourse.masking.causal import CLMCollator
from mlmcourse.model.speed import speed_path
from mlmcourse.pretraining.config import PretrainConfig
from mlmcourse.pretraining.loading import load_config
from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer, load_tokenizer
from mlmcourse.training import (
    CheckpointPlan,
    MLMBatches,
    TrainingConfig,
    TrainResult,
    distributed,
    fixed_eval_batches,
    on_main_process,
    train,
)
from mlmcourse.training.packing import PackedMLMBatches, PackedMLMCollator
from mlmcourse.utils.checks import ConfigError, check_path_exists, read_text
from mlmcourse.utils.runtime import get_device, set_seed

SHIPPED_DATASETS = ("world", "english", "wikitext2")


@dataclass
class PretrainRun:
    """What :func:`pretrain` gives back: the trained model, its tokenizer, the data it used."""

    model: nn.Module
    tokenizer: Any
    result: TrainResult
    config: PretrainConfig
    train_texts: list[str]
    eval_batches: list[dict[str, torch.Tensor]]
    collator: Any


def _training_batches(
    config: PretrainConfig,
    collator: MLMCollator | CLMCollator,
    texts: Sequence[str],
    job: distributed.DistributedInfo,
) -> MLMBatches | PackedMLMBatches:
    """Batch ``i`` of the run, on this rank (packed rows, with ``packing``)."""
    return (PackedMLMBatches if config.packing else MLMBatches)(
        texts,
        PackedMLMCollator(collator) if config.packing else collator,
        batch_size=config.batch_size,
        seed=config.seed,
        rank=job.rank,
        world_size=job.world_size,
    )


def pretrain(
    config: PretrainConfig | Mapping[str, Any],
    *,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> PretrainRun:
    """The whole recipe: data, tokenizer, masking, model, :func:`~mlmcourse.training.train`,
    checkpoint; ``init_from`` continues from a checkpoint's model and vocabulary."""
    config = checked_config(config)
    set_seed(config.seed)  # the same seed on every rank: identical initial weights
    job = distributed.init_distributed(get_device(config.device or None))  # under torchrun
    say = on_main_process(log)
    train_texts, validation_texts = load_texts(config.dataset)
    model, tokenizer = _model_and_tokenizer(config, train_texts, say)
    collator = build_collator(config, tokenizer, model.config.max_position_embeddings)
    batches = _training_batches(config, collator, train_texts, job)
    validation_texts = validation_texts[: config.eval_texts or None]
    eval_batches = fixed_eval_batches(
        validation_texts, collator, batch_size=config.eval_batch_size, seed=config.eval_seed
    )
    say(_summary(config, model, tokenizer, (len(train_texts), len(validation_texts)), job))
    # packed rows need the encoder's speed path, which keeps their texts apart, for the run
    with speed_path(model) if config.packing else nullcontext():
        checkpoints = CheckpointPlan(
            config.output_dir or None, tokenizer=tokenizer, extra_config=config.to_dict(),
            resume_from=config.resume_from_checkpoint or None,
        )  # fmt: skip
        result = train(
            model, batches, _scaled_training_config(config, job.world_size, say),
            eval_batches=eval_batches, device=job.device, checkpoints=checkpoints,
            progress=progress, log=log,
        )  # fmt: skip
    if config.output_dir:
        say(f"checkpoint written to {config.output_dir}")
    return PretrainRun(model, tokenizer, result, config, list(train_texts), eval_batches, collator)


# --- the ingredients --------------------------------------------------------------------------


def checked_config(config: PretrainConfig | Mapping[str, Any]) -> PretrainConfig:
    """``config`` as a :class:`PretrainConfig` (a mapping is read by :func:`load_config`,
    which checks every value) whose input files exist."""
    if not isinstance(config, PretrainConfig):
        config = load_config(config)
    check_input_paths(config)
    return config


def check_input_paths(config: PretrainConfig) -> None:
    """Every file or directory the config reads must exist: checked before any data loads."""
    for path in _dataset_files(config.dataset):
        check_path_exists(path, "dataset file (or 'world', 'wikitext2')", kind="file")
    if config.tokenizer not in ("word", "wordpiece") and not config.init_from:
        check_path_exists(config.tokenizer, "tokenizer file (or 'word', 'wordpiece')")
    if config.resume_from_checkpoint:
        # A run killed between the two renames of a save left only the `.old-*` copy.
        recover_checkpoint_dir(config.resume_from_checkpoint)
        check_path_exists(config.resume_from_checkpoint, "checkpoint to resume from", kind="dir")
    if config.init_from:
        _init_from_path(config.init_from)


def _init_from_path(init_from: str) -> Path:
    """The checkpoint directory ``init_from`` names: a path, ``minilm`` (the real encoder with
    its fitted MLM head, saved as a checkpoint once) or a shipped checkpoint's name."""
    if (Path(init_from) / "config.json").is_file():
        return Path(init_from)
    if init_from == "minilm":
        from mlmcourse.interop.minilm import minilm_checkpoint

        return minilm_checkpoint()
    try:
        return shipped_checkpoint(init_from)
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"init_from={init_from!r} is neither a checkpoint directory, minilm, nor the name "
            f"of a shipped checkpoint ({exc})"
        ) from None


def _dataset_files(dataset: str | Sequence[str]) -> list[str]:
    """The text files ``dataset`` names: none for a shipped corpus, else one or more paths."""
    if isinstance(dataset, str):
        return [] if dataset in SHIPPED_DATASETS else [dataset]
    return list(dataset)


def load_texts(dataset: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """Training and validation texts of ``dataset`` (see ``HELP["dataset"]``)."""
    if dataset == "world":
        return world_texts("train"), world_texts("validation")
    if dataset == "english":
        return english_texts("train"), english_texts("dev")
    if dataset == "wikitext2":

        def clean(lines: list[str]) -> list[str]:  # drop blank lines and "= Heading =" lines
            return [s.strip() for s in lines if s.strip() and not s.strip().startswith("=")]

        return clean(load_wikitext2("train")), clean(load_wikitext2("validation"))
    return _split_lines(_dataset_files(dataset))


def _split_lines(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """The non-empty lines of ``paths``, read in order as one text; the last 5% held out."""
    lines = []
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"dataset {path!r} is neither 'world', 'wikitext2' nor an existing text file"
            )
        lines += [s.strip() for s in read_text(path, "dataset file").splitlines() if s.strip()]
    if len(lines) < 20:
        where = paths[0] if len(paths) == 1 else " + ".join(paths)
        raise ConfigError(f"{where} has {len(lines)} non-empty lines; at least 20 are needed")
    cut = len(lines) - max(1, len(lines) // 20)
    return lines[:cut], lines[cut:]


def build_tokenizer(config: PretrainConfig, train_texts: Sequence[str]) -> Any:
    """Train the word-level or WordPiece tokenizer the config asks for, or load one."""
    if config.tokenizer == "word":
        return WordLevelTokenizer.train(train_texts, max_size=config.vocab_size)
    if config.tokenizer == "wordpiece":
        return WordPieceTokenizer.train(
            train_texts, vocab_size=config.vocab_size, lowercase=config.lowercase
        )
    return load_tokenizer(config.tokenizer)


def build_model(config: PretrainConfig, tokenizer: Any) -> nn.Module:
    """A fresh model sized by the config and the tokenizer: :class:`~mlmcourse.heads.BertForMaskedLM`
    for ``training_mode: mlm``, :class:`~mlmcourse.heads.BertForCausalLM` (causal attention) for
    ``clm``."""
    causal = config.training_mode == "clm"
    return (BertForCausalLM if causal else BertForMaskedLM)(
        config.encoder_config(vocab_size=tokenizer.vocab_size, pad_token_id=tokenizer.pad_token_id)
    )


def build_collator(config: PretrainConfig, tokenizer: Any, max_positions: int) -> Any:
    """The collator of the objective: MLM masking, or for CLM padding only (every token is a
    target); sequences no longer than the config and the model's positions allow."""
    max_length = min(config.max_length, max_positions)
    if config.training_mode == "clm":
        return CLMCollator(tokenizer, max_length=max_length)
    return MLMCollator(
        tokenizer,
        mlm_probability=config.mlm_probability,
        mask_replace_prob=config.mask_replace_prob,
        random_replace_prob=config.random_replace_prob,
        strategy=config.masking_strategy,
        max_length=max_length,
        seed=config.seed,
    )


def _model_and_tokenizer(
    config: PretrainConfig, train_texts: Sequence[str], say: Callable[[str], None]
) -> tuple[nn.Module, Any]:
    """A fresh model and tokenizer, or with ``init_from`` those of a checkpoint."""
    if not config.init_from:
        tokenizer = build_tokenizer(config, train_texts)
        return build_model(config, tokenizer), tokenizer
    source = _init_from_path(config.init_from)
    loaded = load_checkpoint(source)
    if loaded.tokenizer is None:
        raise FileNotFoundError(f"init_from={config.init_from!r} has no tokenizer.json")
    if not isinstance(loaded.model, BertForMaskedLM | BertForCausalLM):
        raise ConfigError(
            f"init_from={config.init_from!r} holds a {type(loaded.model).__name__}, not a "
            f"language model; continue from a checkpoint written by pretraining (a masked or "
            f"causal LM)"
        )
    if loaded.model.config.is_causal != (config.training_mode == "clm"):
        raise ValueError(
            f"init_from={config.init_from!r} holds a "
            f"{'causal' if loaded.model.config.is_causal else 'masked'} LM but training_mode is "
            f"{config.training_mode!r}; continue a model with the objective it was trained on"
        )
    say(f"continuing from {source} (its model sizes and tokenizer are used)")
    return loaded.model.train(), loaded.tokenizer


def _summary(
    config: PretrainConfig,
    model: nn.Module,
    tokenizer: Any,
    n_texts: tuple[int, int],
    job: distributed.DistributedInfo,
) -> str:
    """The first line of a run: data, vocabulary, model size, device and effective batch."""
    n_params = sum(p.numel() for p in model.parameters())
    accum = config.gradient_accumulation_steps
    return (
        f"pretraining ({config.training_mode}) on {_dataset_name(config.dataset)}: {n_texts[0]} "
        f"train / {n_texts[1]} validation texts, vocab {tokenizer.vocab_size}, "
        f"{n_params / 1e6:.2f}M parameters, device {job.device}, effective batch "
        f"{job.world_size} x {config.batch_size} x {accum} = "
        f"{job.world_size * config.batch_size * accum} sequences"
    )


def _dataset_name(dataset: str | Sequence[str]) -> str:
    """A shipped corpus's name, or the files, for the first line of a run."""
    return dataset if isinstance(dataset, str) else ", ".join(dataset)


def _scaled_training_config(
    config: PretrainConfig, world_size: int, say: Callable[[str], None]
) -> TrainingConfig:
    """The loop's config; with ``scale_lr_with_world_size``, the learning rate times the number
    of processes (the linear scaling rule: the global batch grows with them)."""
    training_config = config.training_config()
    if config.scale_lr_with_world_size and world_size > 1:
        training_config.learning_rate *= world_size
        say(f"learning rate x {world_size} processes = {training_config.learning_rate:.3g}")
    return training_config
