"""Tiny random ``transformers`` checkpoints in the Hugging Face Hub's cache layout, offline.

Shared by the loader's tests (tests/interop/test_pretrained.py) and the test that runs the
chapters' Hub cells against stand-ins under the real names (tests/book/test_hub_cells.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

REVISION = "0123456789abcdef0123456789abcdef01234567"  # a commit, as the cache names snapshots
VOCAB = 64
BERT = dict(
    vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=48, max_position_embeddings=32,
)  # fmt: skip
MODERNBERT = dict(
    vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
    num_attention_heads=4, max_position_embeddings=32, local_attention=4,
    global_attn_every_n_layers=3, pad_token_id=0, bos_token_id=2, eos_token_id=3,
    cls_token_id=2, sep_token_id=3,
)  # fmt: skip


def random_model(class_name: str, **overrides):
    """A seeded ``transformers`` model with wide random weights, so every weight matters."""
    modern = class_name.startswith("ModernBert")
    config_class = transformers.ModernBertConfig if modern else transformers.BertConfig
    config = config_class(**{**(MODERNBERT if modern else BERT), **overrides})
    torch.manual_seed(0)
    model = getattr(transformers, class_name)(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name.lower() and name.endswith("weight"):
                parameter.uniform_(0.5, 1.5)
            else:
                parameter.normal_(0, 0.2)
    return model


def put_in_cache(cache: Path, repo_id: str, files: Path, revision: str = REVISION) -> Path:
    """``files`` as ``huggingface_hub`` caches a download: blobs named by their hash, a
    snapshot folder of links to them, and ``refs/main`` naming the snapshot's commit."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for file in sorted(files.iterdir()):
        blob = repo / "blobs" / hashlib.sha256(file.read_bytes()).hexdigest()
        shutil.copyfile(file, blob)
        (snapshot / file.name).symlink_to(os.path.relpath(blob, snapshot))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    return snapshot
