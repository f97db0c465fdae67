"""The ONNX export the book's pages run: the same logits as our models, under onnxruntime.

The page (mlmcourse/viz/in_page.py) runs these files with ONNX Runtime Web; here the Python
runtime checks the graph itself, at lengths other than the one it was traced with.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from mlmcourse.interop.onnx import export_onnx

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")

TEXTS = [
    "Kepaix Pouend lives in [MASK] .",
    "[MASK]",
    "The capital of [MASK] is [MASK] , and Zorbel Quintax works for Drafer Museum as a pilot .",
]


def run(path, ids: list[int]) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"input_ids": np.array([ids], dtype=np.int64)})[0]


@pytest.mark.parametrize("head", ["mlm", "tagger"])
def test_the_exported_logits_equal_ours_at_every_length(
    head, shipped_world, world_tagger, tmp_path
):
    model = shipped_world.model if head == "mlm" else world_tagger
    path = export_onnx(model, tmp_path / "model.onnx", example_ids=[2, 5, 3])
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]  # one file, weights inside
    lengths = set()
    for text in TEXTS:
        ids = list(shipped_world.tokenizer.encode(text).ids)
        lengths.add(len(ids))
        with torch.no_grad():
            ours = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)).logits
        theirs = run(path, ids)
        assert theirs.shape == tuple(ours.shape)
        np.testing.assert_allclose(theirs, ours.numpy(), atol=1e-4, rtol=0)
        np.testing.assert_allclose(  # and so the probabilities the page shows
            torch.tensor(theirs).softmax(-1).numpy(), ours.softmax(-1).numpy(), atol=1e-5, rtol=0
        )
    assert len(lengths) == len(TEXTS)


def test_the_longest_input_the_model_takes_runs(shipped_world, tmp_path):
    path = export_onnx(shipped_world.model, tmp_path / "world.onnx", example_ids=[2, 5, 3])
    limit = shipped_world.model.config.max_position_embeddings
    ids = [2] + [5] * (limit - 2) + [3]
    with torch.no_grad():
        ours = shipped_world.model(
            torch.tensor([ids]), torch.ones(1, limit, dtype=torch.long)
        ).logits
    np.testing.assert_allclose(run(path, ids), ours.numpy(), atol=1e-4, rtol=0)


def test_exporting_leaves_the_model_in_its_mode(shipped_world, tmp_path):
    shipped_world.model.train()
    try:
        export_onnx(shipped_world.model, tmp_path / "m.onnx", example_ids=[2, 4, 3])
        assert shipped_world.model.training
    finally:
        shipped_world.model.eval()


@pytest.mark.parametrize("length", [1, 33])
def test_an_example_outside_the_models_lengths_is_refused_before_tracing(
    shipped_world, tmp_path, length
):
    with pytest.raises(
        ValueError, match=r"example_ids must hold 2 to 32 ids .* got " + str(length)
    ):
        export_onnx(shipped_world.model, tmp_path / "m.onnx", example_ids=[5] * length)
    assert not (tmp_path / "m.onnx").exists()


def test_without_the_exporter_packages_it_says_what_to_install(
    shipped_world, tmp_path, monkeypatch
):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxscript" else real(name, *a),
    )
    with pytest.raises(
        ModuleNotFoundError, match=r"needs onnxscript: pip install 'mlmcourse\[onnx\]'"
    ):
        export_onnx(shipped_world.model, tmp_path / "m.onnx", example_ids=[2, 4, 3])


def test_float16_weights_halve_the_file_and_keep_the_logits_of_16_bit_weights(
    shipped_world, tmp_path
):
    import copy

    model = copy.deepcopy(shipped_world.model).half().float()  # weights that are 16-bit values
    ids = list(shipped_world.tokenizer.encode(TEXTS[0]).ids)
    full = export_onnx(model, tmp_path / "full.onnx", example_ids=[2, 5, 3])
    half = export_onnx(model, tmp_path / "half.onnx", example_ids=[2, 5, 3], float16_weights=True)
    assert half.stat().st_size < 0.6 * full.stat().st_size
    with torch.no_grad():
        ours = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)).logits
    np.testing.assert_allclose(run(half, ids), ours.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_array_equal(run(half, ids), run(full, ids))  # the same graph, weights cast
