"""A course model as one ONNX file, for the published book's page, where no Python runs.

ONNX is a file format for a computation graph and its weights that runtimes other than PyTorch
execute: ONNX Runtime Web runs it in a browser (WebAssembly), so a reader of the book types a
sentence and the world model answers in the page itself. :func:`export_onnx` writes the
*logits* of any of the course's heads for one sequence of token ids, with the sequence length
left free; the page does the rest (tokenizer, softmax, ranking, decoding) in a few lines of
script, as the Python pipelines do.

The exporter is PyTorch's own (``torch.onnx.export``, which traces the model with
``torch.export``); it needs the ``onnx`` and ``onnxscript`` packages
(``pip install 'mlmcourse[onnx]'``), and ``onnxruntime`` runs the file in Python.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch
from torch import nn

from mlmcourse.utils.runtime import evaluating

__all__ = ["export_onnx", "store_float16"]


class _Logits(nn.Module):
    """The head's logits for ``input_ids`` (1, T): what the page needs from the model.

    A head returns an output dataclass, which the exporter cannot trace; every token is real
    (one sentence, no padding), so the attention mask is all ones."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, torch.ones_like(input_ids)).logits  # (1, T, V or L)


def export_onnx(
    model: nn.Module, path: str | Path, *, example_ids: list[int], float16_weights: bool = False
) -> Path:
    """Write ``model``'s logits for ``input_ids`` of shape (1, T) to one ``.onnx`` file.

    ``T`` may be anything from 2 (``[CLS] [SEP]``) to ``max_position_embeddings``;
    ``example_ids`` (one tokenised sentence) is what the graph is traced with. The weights are
    stored inside the file (no ``.onnx.data`` beside it), so the page fetches one file. With
    ``float16_weights`` the large weights are stored in 16 bits and cast to 32 when the runtime
    loads them (:func:`store_float16`): half the bytes to download, and the same logits for a
    model whose weights are 16-bit values already (the shipped English model).
    """
    _check_export_packages()
    limit = model.config.max_position_embeddings
    if not 2 <= len(example_ids) <= limit:
        raise ValueError(
            f"example_ids must hold 2 to {limit} ids (the model's max_position_embeddings), "
            f"got {len(example_ids)}"
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sequence = torch.export.Dim("sequence", min=2, max=limit)
    inputs = (torch.tensor([example_ids], device=next(model.parameters()).device),)
    # dropout off while tracing (the caller's mode is restored after); the exporter's progress
    # lines and its internal deprecation warnings are not the caller's business
    with evaluating(model), torch.no_grad(), warnings.catch_warnings(), _quiet("torch.onnx"):
        warnings.simplefilter("ignore", FutureWarning)
        with contextlib.redirect_stdout(io.StringIO()):
            program = torch.onnx.export(
                _Logits(model).eval(),
                inputs,
                input_names=["input_ids"],
                output_names=["logits"],
                dynamic_shapes={"input_ids": {1: sequence}},
                dynamo=True,
            )
    program.save(str(path), external_data=False)
    if float16_weights:
        store_float16(path)
    return path


def store_float16(path: str | Path, *, min_size: int = 1024) -> Path:
    """Rewrite the ONNX file at ``path`` with every float32 weight of at least ``min_size``
    values stored as float16, and a ``Cast`` back to float32 in front of the graph: the graph
    computes in float32 as before, on weights rounded to 16 bits."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    proto = onnx.load(str(path))
    graph, casts = proto.graph, []
    for weight in graph.initializer:
        if weight.data_type != TensorProto.FLOAT or int(np.prod(weight.dims)) < min_size:
            continue
        name = weight.name
        half = numpy_helper.from_array(numpy_helper.to_array(weight).astype(np.float16))
        half.name = f"{name}__float16"
        weight.CopyFrom(half)
        casts.append(helper.make_node("Cast", [half.name], [name], to=TensorProto.FLOAT))
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([*casts, *nodes])  # the casts before every node that reads the weights
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    return Path(path)


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Logger ``name`` at ERROR while exporting (it lists the torchvision ops it skips)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _check_export_packages() -> None:
    """One line that says what to install, instead of an import error from inside torch."""
    import importlib.util

    missing = [name for name in ("onnx", "onnxscript") if importlib.util.find_spec(name) is None]
    if missing:
        raise ModuleNotFoundError(
            f"exporting to ONNX needs {' and '.join(missing)}: pip install 'mlmcourse[onnx]'"
        )
