"""A checkpoint's files on this machine: a local folder as it is, or a Hub name through the cache.

``huggingface_hub`` keeps what it downloads in one cache, a folder per model
(``models--{org}--{name}``) holding ``snapshots/{commit}/`` and ``refs/{branch}`` (the commit a
branch pointed to when it was downloaded). :func:`checkpoint_folder` looks there first, so a
model downloaded once loads again without a network; only what is not cached is downloaded, and
only the files the course reads (:data:`HUB_FILES`: the config, the safetensors weights and the
tokenizer, never a pickle and never code). ``huggingface_hub`` is optional: without it, offline
with nothing cached, or with the Hub out of reach, the error is one :class:`HubUnavailableError`
line that says what to do.

:data:`CHECKPOINTS` lists the real checkpoints the chapters use, each with the revision it is
read at: ``None`` is the ``main`` branch, which its owner may change; pin a commit when a
chapter relies on an output.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

__all__ = [
    "CHECKPOINTS",
    "HUB_FILES",
    "HubCheckpoint",
    "HubUnavailableError",
    "card_example",
    "checkpoint_folder",
    "hub_cache_dir",
]

# What is downloaded of a model: its config, safetensors weights and tokenizer files.
HUB_FILES = (
    "config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


class HubCheckpoint(NamedTuple):
    """A real checkpoint a chapter loads: its Hub name, revision (``None``: main) and task, and
    where its model card publishes one, the card's own example input and the output it shows
    (what a page built without the Hub shows instead of a run, labelled as the card's)."""

    repo_id: str
    revision: str | None
    task: str
    card_example: tuple[str, str] | None = None


CHECKPOINTS: dict[str, HubCheckpoint] = {
    c.repo_id: c
    for c in (
        HubCheckpoint(
            "google-bert/bert-base-uncased",
            None,
            "fill-mask",
            card_example=(
                "Hello I'm a [MASK] model.",
                "fashion 0.107, role 0.088, new 0.053, super 0.047",
            ),
        ),
        HubCheckpoint(
            "answerdotai/ModernBERT-base",
            None,
            "fill-mask",
            card_example=("The capital of France is [MASK].", "Paris"),
        ),
        HubCheckpoint("dslim/bert-base-NER", None, "token-classification"),
        # main holds only pytorch_model.bin; the Hub's safetensors conversion is pull request 2
        HubCheckpoint("textattack/bert-base-uncased-SST-2", "refs/pr/2", "text-classification"),
        HubCheckpoint("deepset/bert-base-cased-squad2", None, "question-answering"),
    )
}


def card_example(repo_id: str) -> str | None:
    """One line: the example the model card of ``repo_id`` publishes, with its link, labelled
    as the card's (never as a run of ours); ``None`` for a model whose card shows none."""
    checkpoint = CHECKPOINTS.get(repo_id)
    if checkpoint is None or checkpoint.card_example is None:
        return None
    text, shown = checkpoint.card_example
    return (
        f"The model card (https://huggingface.co/{repo_id}) shows, for its example {text!r}: "
        f"{shown} (the card's published output, not a run here)"
    )


class HubUnavailableError(FileNotFoundError):
    """A checkpoint's files cannot be had here: offline with nothing cached, the Hub out of
    reach, or ``huggingface_hub`` not installed. The message says in one line what to do; a
    chapter cell catches it and says what it skipped."""


def hub_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The Hugging Face cache: ``cache_dir``, else ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``huggingface_hub``'s default. Read at each call, so a notebook may set them after import."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path(_huggingface_hub("").constants.HF_HUB_CACHE)


def checkpoint_folder(
    name_or_path: str | os.PathLike,
    *,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """The folder holding a checkpoint's files: a local folder, or a Hub snapshot in the cache.

    A Hub name (``"org/name"``) is read from the cache when it is there (no network at all),
    else downloaded into it. ``revision`` is a branch, tag or commit (``None``: the one
    :data:`CHECKPOINTS` pins, else ``main``).
    """
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    name = str(name_or_path)
    if path.exists() or not _is_hub_name(name):
        raise FileNotFoundError(
            f"no checkpoint folder at {path}: give a folder holding config.json, or a Hugging "
            f"Face Hub name such as 'google-bert/bert-base-uncased'"
        )
    if revision is None and name in CHECKPOINTS:
        revision = CHECKPOINTS[name].revision
    return _hub_snapshot(name, revision, cache_dir)


def _is_hub_name(name: str) -> bool:
    """``org/name`` or ``name``: no other slashes, no leading ``.``, ``/`` or ``~``."""
    return bool(name) and name.count("/") <= 1 and not name.startswith((".", "/", "~", "\\"))


def _huggingface_hub(name: str) -> ModuleType:
    """``huggingface_hub``, or one line that says how to install it."""
    try:
        import huggingface_hub
        import huggingface_hub.constants  # a lazy submodule: not loaded by the import above
    except ImportError:
        raise HubUnavailableError(
            f"loading {name or 'a checkpoint'} from the Hugging Face Hub needs huggingface_hub: "
            f"pip install huggingface_hub (or pip install 'mlmcourse[course]'), or pass a local "
            f"folder"
        ) from None
    return huggingface_hub


def _offline(hub: ModuleType) -> bool:
    """``HF_HUB_OFFLINE`` as set now, or when ``huggingface_hub`` was imported (it reads it once)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"} or bool(hub.constants.HF_HUB_OFFLINE)


def _is_complete(folder: Path) -> bool:
    """Whether a cached snapshot has a config and safetensors weights (another tool may have
    cached a few files of the same model)."""
    return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))


def _hub_snapshot(repo_id: str, revision: str | None, cache_dir: str | os.PathLike | None) -> Path:
    """The cached snapshot of ``repo_id`` at ``revision``, downloaded first if need be."""
    hub = _huggingface_hub(repo_id)
    from huggingface_hub.utils import LocalEntryNotFoundError

    cache = hub_cache_dir(cache_dir)
    at = f"{repo_id!r} (revision {revision or 'main'})"
    cached = None
    try:
        cached = Path(_download(hub, repo_id, revision, cache, local_files_only=True))
    except LocalEntryNotFoundError:
        pass
    except ValueError as error:  # an invalid name or revision
        raise ValueError(f"{at} is not a valid Hub name and revision: {error}") from None
    if cached is not None and (_is_complete(cached) or _offline(hub)):
        return cached
    if _offline(hub):
        raise HubUnavailableError(
            f"{at} is not in the Hugging Face cache ({cache}) and HF_HUB_OFFLINE is set: "
            f"connect and run this again (it downloads once, into the cache), or pass a local "
            f"folder"
        )
    return Path(_download_online(hub, repo_id, revision, cache, at))


def _download(
    hub: ModuleType, repo_id: str, revision: str | None, cache: Path, *, local_files_only: bool
) -> str:
    return hub.snapshot_download(
        repo_id,
        revision=revision,
        cache_dir=cache,
        allow_patterns=list(HUB_FILES),
        local_files_only=local_files_only,
    )


def _download_online(hub: ModuleType, repo_id: str, revision: str | None, cache: Path, at: str):
    """Download, with each of the Hub's failures said in one line of what to do."""
    from huggingface_hub.utils import (
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return _download(hub, repo_id, revision, cache, local_files_only=False)
    except GatedRepoError:
        raise HubUnavailableError(
            f"{at} is gated: accept its terms on huggingface.co and log in (hf auth login)"
        ) from None
    except RepositoryNotFoundError:
        raise FileNotFoundError(
            f"no model {repo_id!r} on the Hugging Face Hub (nor a local folder of that name): "
            f"check the spelling, e.g. 'google-bert/bert-base-uncased'"
        ) from None
    except RevisionNotFoundError:
        raise FileNotFoundError(
            f"{at}: the model has no such revision; give a branch, a tag or a commit it has"
        ) from None
    except OSError as error:  # no connection (LocalEntryNotFoundError), the Hub down
        raise HubUnavailableError(
            f"could not download {at} ({type(error).__name__}) and it is not in the cache "
            f"({cache}): check the connection and run this again, or pass a local folder"
        ) from None
